//! CPU time of the calling thread: what a run's decisions cost, unlike wall time, which
//! also counts the time the process was paused (`SIGSTOP`) or waiting for a core on a
//! crowded machine.

cfg_if::cfg_if! {
    // The systems where nix offers the thread CPU clock (Linux, Android, macOS, the BSDs),
    // listed once: the other branch is simply "everything else".
    if #[cfg(any(
        target_os = "linux",
        target_os = "android",
        target_vendor = "apple",
        target_os = "freebsd",
        target_os = "dragonfly",
        target_os = "netbsd",
        target_os = "openbsd"
    ))] {
        /// Seconds of CPU the calling thread has used, or `None` where the platform does not
        /// say.
        pub fn thread_cpu_seconds() -> Option<f64> {
            use nix::time::{ClockId, clock_gettime};
            // An error (none expected: the clock exists on these systems) reads as "the
            // platform does not say".
            let t = clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).ok()?;
            Some(t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
        }

        /// Seconds of CPU every thread of the process has used, or `None` where the platform
        /// does not say: what a benchmark of work split between threads compares with a
        /// paper's "CPU time".
        pub fn process_cpu_seconds() -> Option<f64> {
            use nix::time::{ClockId, clock_gettime};
            let t = clock_gettime(ClockId::CLOCK_PROCESS_CPUTIME_ID).ok()?;
            Some(t.tv_sec() as f64 + t.tv_nsec() as f64 * 1e-9)
        }
    } else {
        /// Seconds of CPU the calling thread has used, or `None` where the platform does not
        /// say (as here).
        pub fn thread_cpu_seconds() -> Option<f64> {
            None
        }

        /// Seconds of CPU every thread of the process has used, or `None` where the platform
        /// does not say (as here).
        pub fn process_cpu_seconds() -> Option<f64> {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_work_and_not_sleep() {
        let Some(start) = thread_cpu_seconds() else {
            return;
        };
        std::thread::sleep(std::time::Duration::from_millis(200));
        let slept = thread_cpu_seconds().unwrap() - start;
        assert!(slept < 0.05, "sleeping 0.2 s used {slept} s of CPU");
        // A fixed amount of work (a chain of 5·10⁷ dependent multiplies, tens of ms): its CPU
        // time is positive and, however crowded the machine, at most the wall time it took.
        let (wall, cpu) = (std::time::Instant::now(), thread_cpu_seconds().unwrap());
        let mut x = 1.0f64;
        for _ in 0..50_000_000 {
            x = std::hint::black_box(x * 1.000_000_1);
        }
        let busy = thread_cpu_seconds().unwrap() - cpu;
        let elapsed = wall.elapsed().as_secs_f64();
        assert!(busy > 0.01, "the work used {busy} s of CPU");
        assert!(busy <= elapsed + 0.01, "{busy} s of CPU in {elapsed} s");
    }

    #[test]
    fn the_process_clock_counts_the_work_of_other_threads() {
        let Some(start) = process_cpu_seconds() else {
            return;
        };
        let mine = thread_cpu_seconds().unwrap();
        // The same chain of multiplies on another thread: the process clock sees it, the
        // calling thread's clock does not.
        let busy = std::thread::spawn(|| {
            let t = thread_cpu_seconds().unwrap();
            let mut x = 1.0f64;
            for _ in 0..50_000_000 {
                x = std::hint::black_box(x * 1.000_000_1);
            }
            thread_cpu_seconds().unwrap() - t
        })
        .join()
        .unwrap();
        let process = process_cpu_seconds().unwrap() - start;
        let own = thread_cpu_seconds().unwrap() - mine;
        assert!(busy > 0.01, "the work used {busy} s of CPU");
        assert!(
            process >= busy - 1e-3,
            "process {process} s, thread {busy} s"
        );
        assert!(
            own < busy,
            "the calling thread used {own} s, the worker {busy} s"
        );
    }
}

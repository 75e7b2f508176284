//! The objective program's process: started on the first request, in its own process group
//! (so a Ctrl-C meant for cabo reaches cabo, which ends the run cleanly, and a hung program
//! is killed with everything it started), asked one request at a time, and ended when the
//! run ends: its standard input is closed, it gets [`GRACE`] to exit, then it is killed.
//!
//! Its standard output is read on a thread of its own, a line of at most
//! [`protocol::MAX_LINE`] bytes at a time, so that a silent program can time out and a waiting
//! evaluation notices a request to stop ([`cabo_core::interrupt`]); its standard error is
//! copied to the run's log (or cabo's standard error when there is none) on another, which
//! also keeps the last lines for error messages.
//!
//! Every running program's process group is in a registry that [`kill_all`] empties: a
//! command that exits at once (a second Ctrl-C) leaves no program behind.

use crate::protocol::{self, Answer, Evaluation, MAX_LINE, Request};
use std::collections::{BTreeSet, VecDeque};
use std::fmt;
use std::fs::OpenOptions;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a program may take to exit after its standard input is closed.
pub const GRACE: Duration = Duration::from_secs(10);

/// Lines of standard error kept for error messages.
const TAIL_LINES: usize = 5;

/// How often a waiting evaluation looks whether a stop was requested.
pub const POLL: Duration = Duration::from_millis(50);

/// The process groups of the programs running now (their leaders' ids).
static LIVE: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// Kills the process group of every program running now, for a command that is about to
/// exit without ending its runs (a second Ctrl-C): nothing it started outlives it.
pub fn kill_all() {
    let live = LIVE.lock().unwrap_or_else(PoisonError::into_inner);
    for &group in live.iter() {
        kill_group(group);
    }
}

/// Sends SIGKILL to process group `group` (best effort: it may be gone already).
fn kill_group(group: u32) {
    #[cfg(unix)]
    {
        use nix::sys::signal::{Signal, killpg};
        use nix::unistd::Pid;
        if let Ok(id) = i32::try_from(group) {
            let _ = killpg(Pid::from_raw(id), Signal::SIGKILL);
        }
    }
    #[cfg(not(unix))]
    let _ = group;
}

/// Why one request got no evaluation.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// The program could not be started.
    NotStarted(String),
    /// The program ended (or closed its standard output) before answering: how, and the
    /// last lines of its standard error.
    Exited(String, Vec<String>),
    /// No answer within the time limit.
    TimedOut(Duration),
    /// A stop was requested while the evaluation waited (the program was killed).
    Interrupted,
    /// The program printed a line no request was waiting for (out of step).
    Unasked(String),
    /// The answer was not what the protocol allows.
    Malformed(String),
    /// The program answered `{"error": …}`.
    Reported(String),
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NotStarted(why) => write!(f, "the program could not be started: {why}"),
            Failure::Exited(how, tail) if tail.is_empty() => {
                write!(f, "the program {how} before answering")
            }
            Failure::Exited(how, tail) => write!(
                f,
                "the program {how} before answering; the end of its standard error:\n    {}",
                tail.join("\n    ")
            ),
            Failure::TimedOut(limit) => write!(
                f,
                "no answer within timeout_s = {} s (the program was killed)",
                limit.as_secs_f64()
            ),
            Failure::Interrupted => write!(f, "interrupted while waiting for the answer"),
            Failure::Unasked(line) => write!(
                f,
                "the program printed `{line}` before it was asked (an answer without a \
                 request: the program is out of step; it must print exactly one answer per \
                 request, after reading it, and print logs to standard error)"
            ),
            Failure::Malformed(what) => write!(f, "the program's answer {what}"),
            Failure::Reported(why) => write!(f, "the program reported an error: {why}"),
        }
    }
}

/// An objective program, started when first asked.
pub struct Program {
    argv: Vec<String>,
    dir: PathBuf,
    timeout: Duration,
    log: Option<PathBuf>,
    running: Mutex<Option<Running>>,
}

/// What the reader thread passes on: a non-blank line, or why it stopped reading.
enum Line {
    /// A line of text (without its newline).
    Text(String),
    /// More than [`MAX_LINE`] bytes without a newline.
    TooLong,
    /// A line that is not UTF-8 text.
    NotText,
}

/// A started program.
struct Running {
    child: Child,
    /// Killed and reaped already.
    ended: bool,
    stdin: Option<ChildStdin>,
    answers: Receiver<Line>,
    stderr: Option<JoinHandle<()>>,
    tail: Arc<Mutex<VecDeque<String>>>,
}

impl Program {
    /// The program `argv` (its first element already resolved), started in `dir`, allowed
    /// `timeout` per answer.
    pub fn new(argv: Vec<String>, dir: PathBuf, timeout: Duration) -> Self {
        Program {
            argv,
            dir,
            timeout,
            log: None,
            running: Mutex::new(None),
        }
    }

    /// Sends the program's standard error, and cabo's notes on its failures, to `path`.
    pub fn set_log(&mut self, path: &Path) {
        self.log = Some(path.to_path_buf());
    }

    /// Where the program's standard error goes, for messages.
    pub fn log_description(&self) -> String {
        match &self.log {
            Some(p) => format!("its standard error is in {}", p.display()),
            None => "its standard error went to cabo's".to_string(),
        }
    }

    /// Appends a note of cabo's to the run's log (best effort: a note that cannot be
    /// written must not hide the failure it reports, which the caller returns anyway).
    pub fn note(&self, text: &str) {
        if let Some(path) = &self.log
            && let Ok(mut f) = OpenOptions::new().create(true).append(true).open(path)
        {
            let _ = writeln!(f, "[cabo] {text}");
        }
    }

    /// Sends `request` and waits for the answer; also how long the answer took.
    pub fn ask(
        &self,
        request: &Request<'_>,
        declared_metrics: &[String],
    ) -> Result<(Evaluation, Duration), Failure> {
        let mut slot = self.running.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(self.start()?);
        }
        let running = slot.as_mut().expect("started above");
        let line = serde_json::to_string(request).expect("a request serialises") + "\n";
        let started = Instant::now();
        let answer = running
            .nothing_waiting()
            .and_then(|()| running.send(&line))
            .and_then(|()| running.receive(self.timeout));
        let elapsed = started.elapsed();
        let answer = answer.and_then(|line| {
            protocol::parse(&line, request.eval, declared_metrics).map_err(Failure::Malformed)
        });
        match answer {
            Ok(Answer::Evaluated(e)) => Ok((e, elapsed)),
            // The program is in step and alive: it may answer the next request.
            Ok(Answer::Failed(why)) => Err(Failure::Reported(why)),
            Err(Failure::Interrupted) => {
                // Stopping: no grace for a program whose answer nobody will read.
                slot.take().expect("started above").kill();
                Err(Failure::Interrupted)
            }
            Err(failure) => {
                // Out of step, hung or gone: ended now, started afresh for the next request.
                let running = slot.take().expect("started above");
                Err(running.end_after(failure))
            }
        }
    }

    fn start(&self) -> Result<Running, Failure> {
        let mut command = Command::new(&self.argv[0]);
        command
            .args(&self.argv[1..])
            .current_dir(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut command, 0);
        let mut child = command.spawn().map_err(|e| {
            Failure::NotStarted(format!(
                "`{}` in {}: {e}",
                self.argv.join(" "),
                self.dir.display()
            ))
        })?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("piped above");
        let stderr = child.stderr.take().expect("piped above");
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(child.id());
        let (send, answers) = mpsc::channel();
        std::thread::spawn(move || read_lines(stdout, &send));
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr = Some(copy_stderr(stderr, self.log.clone(), tail.clone()));
        Ok(Running {
            child,
            ended: false,
            stdin,
            answers,
            stderr,
            tail,
        })
    }
}

/// Passes the program's non-blank lines of standard output to `send` until it ends, a line
/// is longer than [`MAX_LINE`] or is not text (then the program is out of the protocol and
/// is ended, so the rest is not read).
fn read_lines(stdout: impl Read, send: &mpsc::Sender<Line>) {
    let mut reader = BufReader::new(stdout);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        // At most one byte past the cap: enough to know the line is too long.
        let limit = MAX_LINE as u64 + 1;
        match (&mut reader).take(limit).read_until(b'\n', &mut buf) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.last() == Some(&b'\n') {
            buf.pop();
        } else if buf.len() > MAX_LINE {
            let _ = send.send(Line::TooLong);
            return;
        }
        let line = match String::from_utf8(std::mem::take(&mut buf)) {
            Ok(line) => line,
            Err(_) => {
                let _ = send.send(Line::NotText);
                return;
            }
        };
        if !line.trim().is_empty() && send.send(Line::Text(line)).is_err() {
            return;
        }
    }
}

/// Copies the program's standard error to `log` (cabo's own standard error without one),
/// keeping its last lines in `tail`.
fn copy_stderr(
    stderr: impl Read + Send + 'static,
    log: Option<PathBuf>,
    tail: Arc<Mutex<VecDeque<String>>>,
) -> JoinHandle<()> {
    std::thread::spawn(move || {
        let mut out: Box<dyn Write> = match log
            .as_ref()
            .and_then(|p| OpenOptions::new().create(true).append(true).open(p).ok())
        {
            Some(f) => Box::new(f),
            None => Box::new(std::io::stderr()),
        };
        for line in BufReader::new(stderr).split(b'\n') {
            let Ok(line) = line else { break };
            let _ = out.write_all(&line).and_then(|()| out.write_all(b"\n"));
            let _ = out.flush();
            let mut tail = tail.lock().unwrap_or_else(PoisonError::into_inner);
            if tail.len() == TAIL_LINES {
                tail.pop_front();
            }
            tail.push_back(String::from_utf8_lossy(&line).into_owned());
        }
    })
}

impl Running {
    fn send(&mut self, line: &str) -> Result<(), Failure> {
        let stdin = self.stdin.as_mut().expect("open while running");
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|_| Failure::Exited("closed its standard input".into(), Vec::new()))
    }

    /// Nothing the program printed is waiting before a request is sent: a line there
    /// answers no request (an extra answer, output before the first request).
    fn nothing_waiting(&mut self) -> Result<(), Failure> {
        match self.answers.try_recv() {
            Ok(line) => Err(unasked(line)),
            // Empty, or the program is gone: sending or receiving says so.
            Err(_) => Ok(()),
        }
    }

    /// The next non-blank line of standard output within `timeout`, unless a stop is
    /// requested first (looked at every [`POLL`]).
    fn receive(&mut self, timeout: Duration) -> Result<String, Failure> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.answers.recv_timeout(left.min(POLL)) {
                Ok(Line::Text(line)) => return Ok(line),
                Ok(other) => return Err(malformed(&other)),
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Failure::Exited(
                        "closed its standard output".into(),
                        Vec::new(),
                    ));
                }
                Err(RecvTimeoutError::Timeout) if cabo_core::interrupt::requested() => {
                    return Err(Failure::Interrupted);
                }
                Err(RecvTimeoutError::Timeout) if left <= POLL => {
                    return Err(Failure::TimedOut(timeout));
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Ends a program that failed, and says how, with the end of its standard error.
    fn end_after(mut self, failure: Failure) -> Failure {
        let exited = match &failure {
            Failure::Exited(..) => Some(match self.wait_for(Duration::from_secs(1)) {
                Some(status) => format!("exited ({status})"),
                None => "closed its standard output".to_string(),
            }),
            _ => None,
        };
        self.kill();
        match exited {
            Some(how) => Failure::Exited(how, self.tail()),
            None => failure,
        }
    }

    /// The program's exit status if it exits within `limit`.
    fn wait_for(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + limit;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                _ => return None,
            }
        }
    }

    /// Kills the program's process group and reaps it (once: a reaped id may be reused).
    fn kill(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        kill_group(self.child.id());
        let _ = self.child.kill();
        let _ = self.child.wait();
        LIVE.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.child.id());
        if let Some(handle) = self.stderr.take() {
            let _ = handle.join();
        }
    }

    fn tail(&self) -> Vec<String> {
        self.tail
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }
}

/// The failure a line printed before its request stands for.
fn unasked(line: Line) -> Failure {
    match line {
        Line::Text(text) => Failure::Unasked(protocol::shorten(&text)),
        other => malformed(&other),
    }
}

/// The failure of a line the reader could not pass on as text.
fn malformed(line: &Line) -> Failure {
    Failure::Malformed(match line {
        Line::TooLong => format!(
            "is longer than {} MiB without a newline (a program must print its answers on \
             standard output, one JSON line each; print logs to standard error)",
            MAX_LINE >> 20
        ),
        Line::NotText => "is not UTF-8 text".to_string(),
        Line::Text(text) => format!("is `{}`", protocol::shorten(text)),
    })
}

impl Drop for Running {
    /// The run is over: standard input closed, [`GRACE`] to exit, then killed.
    fn drop(&mut self) {
        drop(self.stdin.take());
        self.wait_for(GRACE);
        // Whatever the program started and left behind goes with it.
        self.kill();
    }
}

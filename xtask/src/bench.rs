//! `cargo xtask bench`: runs each package's divan benchmarks (`cargo bench -p PKG --bench
//! NAME`), parses divan's tree output and reports the medians as a table and as JSON.

use serde::Serialize;
use std::fmt::Write;
use std::path::Path;
use std::process::Command;

/// One benchmark's numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchResult {
    /// Package.
    pub package: String,
    /// Bench target.
    pub bench: String,
    /// Path inside the target (`group/name/argument`).
    pub name: String,
    /// Median time per iteration, in nanoseconds.
    pub median_ns: f64,
    /// The median as divan printed it.
    pub median: String,
    /// Fastest iteration, in nanoseconds.
    pub fastest_ns: f64,
    /// Samples taken.
    pub samples: Option<u64>,
}

/// Parses a divan duration such as `1.234 µs` into nanoseconds.
pub fn parse_duration(s: &str) -> Option<f64> {
    let s = s.trim();
    let (num, unit) = s.split_once(' ')?;
    let v: f64 = num.trim().parse().ok()?;
    let scale = match unit.trim() {
        "ps" => 1e-3,
        "ns" => 1.0,
        "µs" | "us" | "μs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        // Divan writes durations of a minute or more in minutes.
        "m" => 60e9,
        _ => return None,
    };
    Some(v * scale)
}

const TREE: &[char] = &['│', '├', '╰', '─', ' '];

/// Parses divan's output of one bench target: the header line names the target, then each
/// tree line is a group (empty columns) or a benchmark (fastest │ slowest │ median │ mean │
/// samples │ iters).
pub fn parse_divan(package: &str, bench: &str, output: &str) -> Vec<BenchResult> {
    let mut out = Vec::new();
    let mut path: Vec<String> = Vec::new();
    let mut in_table = false;
    for line in output.lines() {
        if line.contains("fastest") && line.contains("median") {
            in_table = true;
            path.clear();
            continue;
        }
        if !in_table {
            continue;
        }
        let chars: Vec<char> = line.chars().collect();
        let Some(start) = chars.iter().position(|c| !TREE.contains(c)) else {
            continue;
        };
        if start == 0 {
            // Not a tree line: the table ended.
            in_table = false;
            continue;
        }
        let depth = start.div_ceil(3);
        let rest: String = chars[start..].iter().collect();
        let cols: Vec<&str> = rest.split('│').collect();
        // The first column holds the name and, for a benchmark, its fastest time.
        let first: Vec<&str> = cols[0].split_whitespace().collect();
        let timed = cols.len() >= 5 && parse_duration(cols[2]).is_some();
        let name_words = if timed && first.len() >= 3 {
            &first[..first.len() - 2]
        } else {
            &first[..]
        };
        let name = name_words.join(" ");
        path.truncate(depth.saturating_sub(1));
        path.push(name);
        if timed {
            let fastest = first[first.len().saturating_sub(2)..].join(" ");
            out.push(BenchResult {
                package: package.to_string(),
                bench: bench.to_string(),
                name: path.join("/"),
                median_ns: parse_duration(cols[2]).unwrap_or(f64::NAN),
                median: cols[2].trim().to_string(),
                fastest_ns: parse_duration(&fastest).unwrap_or(f64::NAN),
                samples: cols.get(4).and_then(|s| s.trim().parse().ok()),
            });
        }
    }
    out
}

/// The bench targets of the workspace, as (package, target), from `cargo metadata`.
pub fn bench_targets(only: &[String]) -> Result<Vec<(String, String)>, String> {
    let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["metadata", "--no-deps", "--format-version", "1"])
        .output()
        .map_err(|e| format!("cannot run cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("cargo metadata printed invalid JSON: {e}"))?;
    let mut targets = Vec::new();
    let mut names = Vec::new();
    for p in v["packages"].as_array().into_iter().flatten() {
        let pkg = p["name"].as_str().unwrap_or_default().to_string();
        names.push(pkg.clone());
        if !only.is_empty() && !only.contains(&pkg) {
            continue;
        }
        for t in p["targets"].as_array().into_iter().flatten() {
            let is_bench = t["kind"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k == "bench"));
            if is_bench {
                targets.push((pkg.clone(), t["name"].as_str().unwrap_or_default().into()));
            }
        }
    }
    for want in only {
        if !names.contains(want) {
            let refs: Vec<&str> = names.iter().map(String::as_str).collect();
            let hint = cabo::core::registry::closest_of(want, &refs)
                .map(|c| format!(" (did you mean {c}?)"))
                .unwrap_or_default();
            return Err(format!("--package {want}: no such package{hint}"));
        }
    }
    targets.sort();
    if targets.is_empty() {
        return Err("no package with benchmarks was selected".into());
    }
    Ok(targets)
}

/// A table of medians.
pub fn render(results: &[BenchResult]) -> String {
    let w = results
        .iter()
        .map(|r| r.package.len() + r.bench.len() + r.name.len() + 2)
        .max()
        .unwrap_or(9)
        .max(9);
    let mut s = format!("{:<w$}  {:>14}  {:>14}\n", "benchmark", "median", "fastest");
    for r in results {
        let id = format!("{}/{}/{}", r.package, r.bench, r.name);
        let _ = writeln!(
            s,
            "{id:<w$}  {:>14}  {:>14}",
            r.median,
            human_duration(r.fastest_ns)
        );
    }
    s
}

/// A duration in the unit divan would print it in (ns, µs, ms or s, four significant digits).
fn human_duration(ns: f64) -> String {
    let (value, unit) = match ns {
        v if v < 1e3 => (v, "ns"),
        v if v < 1e6 => (v / 1e3, "µs"),
        v if v < 1e9 => (v / 1e6, "ms"),
        v => (v / 1e9, "s"),
    };
    let decimals = if value >= 100.0 {
        1
    } else if value >= 10.0 {
        2
    } else {
        3
    };
    format!("{value:.decimals$} {unit}")
}

/// Runs the benchmarks, writes the JSON file and returns the table.
pub fn run(only: &[String], json: &Path, divan_args: &[String]) -> Result<String, String> {
    let mut all = Vec::new();
    for (pkg, bench) in bench_targets(only)? {
        eprintln!("benchmarking {pkg} / {bench} …");
        let out = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
            .args(["bench", "-p", &pkg, "--bench", &bench, "--"])
            .args(divan_args)
            .output()
            .map_err(|e| format!("cannot run cargo bench: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "cargo bench -p {pkg} --bench {bench} failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let parsed = parse_divan(&pkg, &bench, &text);
        if parsed.is_empty() && divan_args.is_empty() {
            return Err(format!(
                "cargo bench -p {pkg} --bench {bench}: no divan table in its output"
            ));
        }
        all.extend(parsed);
    }
    if let Some(d) = json.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let text = serde_json::to_string_pretty(&all).map_err(|e| e.to_string())?;
    cabo_engine::store::write_atomic(json, text.as_bytes())
        .map_err(|e| format!("{}: {e}", json.display()))?;
    Ok(format!(
        "{}medians written to {}\n",
        render(&all),
        json.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "\
Timer precision: 20 ns
gp                  fastest       │ slowest       │ median        │ mean          │ samples │ iters
├─ fit                            │               │               │               │         │
│  ├─ 10            1.5 ms        │ 2.1 ms        │ 1.62 ms       │ 1.7 ms        │ 100     │ 100
│  ╰─ 20            3 ms          │ 4 ms          │ 3.25 ms       │ 3.3 ms        │ 100     │ 100
╰─ predict          812 ns        │ 1.1 µs        │ 845.5 ns      │ 850 ns        │ 100     │ 3200
";

    #[test]
    fn divan_tables_are_parsed_into_paths_and_nanoseconds() {
        let r = parse_divan("cabo-gp", "gp", OUTPUT);
        let names: Vec<&str> = r.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["fit/10", "fit/20", "predict"]);
        assert_eq!(r[0].median_ns, 1.62e6);
        assert_eq!(r[0].fastest_ns, 1.5e6);
        assert_eq!(r[2].median_ns, 845.5);
        assert_eq!(r[2].samples, Some(100));
        assert!(render(&r).contains("cabo-gp/gp/predict"));
    }

    #[test]
    fn durations_in_every_unit() {
        assert_eq!(parse_duration("2 s"), Some(2e9));
        assert_eq!(parse_duration("1.5 µs"), Some(1500.0));
        assert_eq!(parse_duration("3 ms"), Some(3e6));
        assert_eq!(parse_duration("1.5 m"), Some(90e9));
        assert_eq!(parse_duration("nonsense"), None);
    }
}

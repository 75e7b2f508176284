//! Helpers shared by the workspace tests.

use std::collections::BTreeMap;
use std::path::Path;

/// Every result file under `dir` except wall times (`*.times.jsonl`, the only files that may
/// differ between equal runs), by path relative to `dir`.
pub fn result_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if !p.to_string_lossy().ends_with(".times.jsonl") {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                files.insert(rel, std::fs::read(&p).expect("readable"));
            }
        }
    }
    files
}

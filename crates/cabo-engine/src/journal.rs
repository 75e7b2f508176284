//! The evaluation journal of a run whose problem must never evaluate a recorded query again
//! ([`cabo_core::ExternalEvaluation`]: an external program, expensive or
//! timed by the wall clock).
//!
//! `rep-<r>.evaluations.jsonl` holds, after a header line naming the run, one line per
//! evaluation the problem answered: its index in the run, the query and the outcome exactly
//! as the problem returned it. Each line is on disk (`sync_data`) before the run goes on,
//! so it is there before the next request is sent.
//!
//! A run started again — resumed from a checkpoint, or from the beginning when it was
//! killed before its first one — makes the same decisions on the same data (runs are
//! deterministic), so it asks for the same queries again: evaluation `i` is then taken from
//! the journal instead of the problem when the journal's query `i` is the same, bit for bit.
//! The replayed outcome carries the recorded cost, so even wall-clock costs replay exactly
//! and the run writes the bytes it would have written uninterrupted. At the first query
//! that differs (the code deciding changed), the journal is cut there with a warning and the
//! problem answers from then on. A journal of another run or of an earlier version of the
//! spec is moved aside to `superseded/<its fingerprint>/<its policy>/`
//! ([`crate::lifecycle::set_aside_journal`]), never deleted.

use crate::checkpoint::RunIdentity;
use crate::store::io_error;
use cabo_core::{Error, Outcome, Query, Result};
use serde::{Deserialize, Serialize};
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

/// The journal's first line.
#[derive(Debug, Serialize, Deserialize)]
struct Header {
    run: RunIdentity,
}

/// One answered evaluation.
#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    /// The evaluation's index in the run (the initial design included).
    eval: usize,
    /// The query as the run asked it (unit cube, control set).
    query: Query,
    /// What the problem answered.
    outcome: Outcome,
}

/// A run's evaluation journal, open for appending.
pub(crate) struct Journal {
    path: PathBuf,
    file: File,
    /// Entries of an earlier attempt not yet replayed, with the byte offset each starts at.
    recorded: Vec<(u64, Entry)>,
}

impl Journal {
    /// Opens the journal at `path` for run `run`, keeping what an earlier attempt of the same
    /// run recorded (a torn last line, from a process killed while writing it, is dropped).
    pub fn open(path: &Path, run: &RunIdentity) -> Result<Journal> {
        let (recorded, keep) = match read(path)? {
            Some(Read {
                header,
                entries,
                end,
            }) if &header.run == run => (entries, end),
            Some(Read { header, .. }) => {
                crate::lifecycle::set_aside_journal(path, &header.run)?;
                (Vec::new(), 0)
            }
            None => (Vec::new(), 0),
        };
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .map_err(io_error(path))?;
        if keep == 0 {
            file.set_len(0).map_err(io_error(path))?;
            let header = serde_json::to_string(&Header { run: run.clone() })
                .map_err(|e| Error::invalid(e.to_string()))?;
            writeln!(file, "{header}").map_err(io_error(path))?;
            file.sync_data().map_err(io_error(path))?;
        } else {
            file.set_len(keep).map_err(io_error(path))?;
        }
        Ok(Journal {
            path: path.to_path_buf(),
            file,
            recorded,
        })
    }

    /// The outcome recorded for evaluation `eval` if an earlier attempt asked the same
    /// query there; otherwise `None`, and a journal that disagrees is cut at `eval`.
    pub fn replay(&mut self, eval: usize, query: &Query) -> Result<Option<Outcome>> {
        self.pass(eval);
        match self.recorded.first() {
            Some((_, e)) if e.eval == eval && same_query(&e.query, query) => {
                Ok(Some(self.recorded.remove(0).1.outcome))
            }
            Some((_, e)) if e.eval == eval => {
                tracing::warn!(
                    path = %self.path.display(),
                    eval,
                    "the run asked another query than its journal recorded for this \
                     evaluation (the deciding code changed?): the journal is cut here and the \
                     problem evaluates again from here on"
                );
                self.cut()?;
                Ok(None)
            }
            _ => Ok(None),
        }
    }

    /// Records evaluation `eval`'s outcome and makes it durable before returning.
    pub fn append(&mut self, eval: usize, query: &Query, outcome: &Outcome) -> Result<()> {
        // A query answered now supersedes whatever an earlier attempt recorded from here on.
        self.pass(eval);
        self.append_arrival(eval, query, outcome)
    }

    /// For a run whose answers arrive in any order (several workers running programs): the
    /// outcome an earlier attempt recorded for evaluation `eval` at the same query, with its
    /// place in the journal, the order the answers arrived in and are replayed in; `None`
    /// where none is recorded. A recorded entry for `eval` at another query (the deciding
    /// code changed) cuts the journal there.
    pub fn recorded(&mut self, eval: usize, query: &Query) -> Result<Option<(u64, Outcome)>> {
        let Some(i) = self.recorded.iter().position(|(_, e)| e.eval == eval) else {
            return Ok(None);
        };
        if same_query(&self.recorded[i].1.query, query) {
            let (at, entry) = self.recorded.remove(i);
            return Ok(Some((at, entry.outcome)));
        }
        tracing::warn!(
            path = %self.path.display(),
            eval,
            "the run asked another query than its journal recorded for this evaluation (the \
             deciding code changed?): the journal is cut here and the program evaluates again \
             from here on"
        );
        self.recorded.drain(..i);
        self.cut()?;
        Ok(None)
    }

    /// Forgets the entries of the evaluations `told` says the run has from its checkpoint:
    /// they stay in the file, and are not replayed.
    pub fn forget(&mut self, told: impl Fn(usize) -> bool) {
        self.recorded.retain(|(_, e)| !told(e.eval));
    }

    /// Records an answer that arrived now, from one of several workers: entries of an
    /// earlier attempt not replayed by now belong to another history and are cut first.
    pub fn append_arrival(&mut self, eval: usize, query: &Query, outcome: &Outcome) -> Result<()> {
        self.cut()?;
        let entry = Entry {
            eval,
            query: query.clone(),
            outcome: outcome.clone(),
        };
        self.file
            .write_all(line_of(&entry)?.as_bytes())
            .and_then(|()| self.file.sync_data())
            .map_err(io_error(&self.path))
    }

    /// Forgets the entries before evaluation `eval`: the run has them already (from its
    /// checkpoint, or replayed), and they stay in the file.
    fn pass(&mut self, eval: usize) {
        let before = self.recorded.partition_point(|(_, e)| e.eval < eval);
        self.recorded.drain(..before);
    }

    /// Cuts the file where the entries not replayed begin.
    fn cut(&mut self) -> Result<()> {
        if let Some(&(at, _)) = self.recorded.first() {
            self.recorded.clear();
            self.file.set_len(at).map_err(io_error(&self.path))?;
        }
        Ok(())
    }
}

/// Bitwise equality of two queries (replay must never take a nearby point for the same).
fn same_query(a: &Query, b: &Query) -> bool {
    a.control_set == b.control_set
        && a.x.len() == b.x.len()
        && a.x
            .iter()
            .zip(&b.x)
            .all(|(p, q)| p.to_bits() == q.to_bits())
}

fn line_of(entry: &Entry) -> Result<String> {
    serde_json::to_string(entry)
        .map(|s| s + "\n")
        .map_err(|e| Error::invalid(e.to_string()))
}

/// A journal as read back.
struct Read {
    header: Header,
    /// The complete entries with the offsets they start at.
    entries: Vec<(u64, Entry)>,
    /// Where the last complete line ends.
    end: u64,
}

/// The journal at `path`; `None` when there is none or its header is unreadable.
fn read(path: &Path) -> Result<Option<Read>> {
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(path)(e)),
    };
    let mut lines = BufReader::new(file).split(b'\n');
    let header = match lines.next() {
        Some(Ok(line)) => match serde_json::from_slice::<Header>(&line) {
            Ok(h) => (h, line.len() as u64 + 1),
            Err(_) => return Ok(None),
        },
        _ => return Ok(None),
    };
    let (header, mut offset) = header;
    let mut entries = Vec::new();
    for line in lines {
        let line = line.map_err(io_error(path))?;
        // serde_json rejects a line cut short, so a torn last write ends the journal.
        let Ok(entry) = serde_json::from_slice::<Entry>(&line) else {
            break;
        };
        entries.push((offset, entry));
        offset += line.len() as u64 + 1;
    }
    Ok(Some(Read {
        header,
        entries,
        end: offset,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(fingerprint: &str) -> RunIdentity {
        RunIdentity {
            fingerprint: fingerprint.into(),
            policy: "EI".into(),
            replication: 0,
        }
    }

    fn outcome(y: f64) -> Outcome {
        Outcome::new(y, 1.5, vec![y], None)
    }

    #[test]
    fn replays_the_same_queries_and_cuts_at_the_first_other_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rep-0.evaluations.jsonl");
        let mut j = Journal::open(&path, &run("a")).unwrap();
        for i in 0..3 {
            j.append(i, &Query::at(vec![i as f64 / 4.0]), &outcome(i as f64))
                .unwrap();
        }
        drop(j);
        let mut j = Journal::open(&path, &run("a")).unwrap();
        let o = j.replay(0, &Query::at(vec![0.0])).unwrap().unwrap();
        assert_eq!((o.y, o.cost), (0.0, 1.5));
        // Another query at evaluation 1: not replayed, and 1 and 2 are forgotten.
        assert!(j.replay(1, &Query::at(vec![0.3])).unwrap().is_none());
        assert!(j.replay(2, &Query::at(vec![0.5])).unwrap().is_none());
        j.append(1, &Query::at(vec![0.3]), &outcome(9.0)).unwrap();
        drop(j);
        let mut j = Journal::open(&path, &run("a")).unwrap();
        assert_eq!(j.replay(0, &Query::at(vec![0.0])).unwrap().unwrap().y, 0.0);
        assert_eq!(j.replay(1, &Query::at(vec![0.3])).unwrap().unwrap().y, 9.0);
        assert!(j.replay(2, &Query::at(vec![0.5])).unwrap().is_none());
    }

    /// A run resumed from a checkpoint has the journal's first entries already and asks
    /// for later evaluations only: those entries stay.
    #[test]
    fn entries_a_resumed_run_has_already_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rep-0.evaluations.jsonl");
        let mut j = Journal::open(&path, &run("a")).unwrap();
        for i in 0..3 {
            j.append(i, &Query::at(vec![i as f64]), &outcome(i as f64))
                .unwrap();
        }
        drop(j);
        let mut j = Journal::open(&path, &run("a")).unwrap();
        assert!(j.replay(2, &Query::at(vec![2.0])).unwrap().is_some());
        j.append(3, &Query::at(vec![3.0]), &outcome(3.0)).unwrap();
        drop(j);
        let mut j = Journal::open(&path, &run("a")).unwrap();
        for i in 0..4 {
            let o = j.replay(i, &Query::at(vec![i as f64])).unwrap();
            assert_eq!(o.map(|o| o.y), Some(i as f64));
        }
    }

    #[test]
    fn a_torn_last_line_is_dropped_and_another_runs_journal_kept_aside() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("EI")).unwrap();
        let path = dir.path().join("EI/rep-0.evaluations.jsonl");
        let mut j = Journal::open(&path, &run("a")).unwrap();
        j.append(0, &Query::at(vec![0.5]), &outcome(1.0)).unwrap();
        j.append(1, &Query::at(vec![0.25]), &outcome(2.0)).unwrap();
        drop(j);
        let len = std::fs::metadata(&path).unwrap().len();
        let f = OpenOptions::new().write(true).open(&path).unwrap();
        f.set_len(len - 7).unwrap();
        let mut j = Journal::open(&path, &run("a")).unwrap();
        assert!(j.replay(0, &Query::at(vec![0.5])).unwrap().is_some());
        assert!(j.replay(1, &Query::at(vec![0.25])).unwrap().is_none());
        drop(j);
        let mut j = Journal::open(&path, &run("b")).unwrap();
        assert!(j.replay(0, &Query::at(vec![0.5])).unwrap().is_none());
        j.append(0, &Query::at(vec![0.75]), &outcome(3.0)).unwrap();
        drop(j);
        // Beside the other version's files, under the spec directory's `superseded/`.
        let aside = dir.path().join("superseded/a/EI/rep-0.evaluations.jsonl");
        let kept = std::fs::read_to_string(&aside).unwrap();
        assert!(kept.contains("\"y\":1.0"), "{kept}");
        // A second journal of the same version set aside keeps the first one.
        Journal::open(&path, &run("a")).unwrap();
        Journal::open(&path, &run("b")).unwrap();
        assert_eq!(std::fs::read_to_string(&aside).unwrap(), kept);
        let second = dir.path().join("superseded/b/EI/rep-0.evaluations.jsonl");
        assert!(second.exists());
        Journal::open(&path, &run("a")).unwrap();
        let third = dir.path().join("superseded/b/EI/rep-0.evaluations.1.jsonl");
        assert!(
            third.exists(),
            "the second journal of b is kept beside the first"
        );
    }
}

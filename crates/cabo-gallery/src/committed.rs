//! What a page already publishes, so that writing it again from fewer results never takes
//! a finished result off it.
//!
//! A page is often rewritten from a results directory that holds only some of its specs'
//! runs (`reproduce --pages-only --out DIR` after a sweep of one spec, on a machine that no
//! longer has the others' records). For each spec whose fingerprint is the one the page
//! records and for which the page counts more complete runs than the results at hand, the
//! page's own rows (claims, runtimes, figures, how-to-run) are kept as they are, and the
//! page says so. A spec that changed since is never kept: its old numbers belong to another
//! spec, and the staleness check covers them.

use super::SPEC_LINE;

/// A page as committed, read for what it publishes per spec.
#[derive(Debug, Clone, Default)]
pub(super) struct CommittedPage {
    lines: Vec<String>,
}

/// What the committed page publishes for one spec, kept in place of fewer results.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KeptSpec {
    /// The spec's row of the how-to-run table.
    pub how_row: String,
    /// The spec's block of the figures section, heading included.
    pub figure_block: String,
    /// Complete runs the page counts for the spec.
    pub runs: usize,
    /// CPU seconds the page counts for the spec.
    pub cpu_seconds: f64,
    /// Wall seconds the page counts for the spec.
    pub wall_seconds: f64,
    /// The commit the spec's rows came from: the one the page names for it among the rows
    /// it already kept, else the commit the page says it was made at.
    pub commit: String,
    /// Every table row of the page, where the spec's claim and runtime rows are looked up.
    rows: Vec<String>,
}

impl CommittedPage {
    /// Reads a page's text.
    pub fn parse(text: &str) -> Self {
        Self {
            lines: text.lines().map(str::to_string).collect(),
        }
    }

    /// What the page publishes for the spec at `path`, if the page was made from the same
    /// spec (`fingerprint`) and counts more complete runs than `runs_complete`.
    pub fn keep(&self, path: &str, fingerprint: &str, runs_complete: usize) -> Option<KeptSpec> {
        let marker = self.marker(path)?;
        if marker.fingerprint != fingerprint {
            return None;
        }
        let how_row = self.row_starting(&format!("| `{path}` | `{fingerprint}` |"))?;
        let cells = cells(how_row);
        let committed_runs: usize = cells.get(2)?.split('/').next()?.trim().parse().ok()?;
        if committed_runs <= runs_complete {
            return None;
        }
        Some(KeptSpec {
            how_row: how_row.to_string(),
            figure_block: self.figure_block(path)?,
            runs: committed_runs,
            cpu_seconds: marker
                .cpu_seconds
                .or_else(|| cells.get(3).and_then(|c| seconds(c)))?,
            wall_seconds: marker
                .wall_seconds
                .or_else(|| cells.get(4).and_then(|c| seconds(c)))?,
            commit: self
                .kept_commit(path)
                .or_else(|| self.commit())
                .unwrap_or_else(|| "unknown".into()),
            rows: self
                .lines
                .iter()
                .filter(|l| l.starts_with("| "))
                .cloned()
                .collect(),
        })
    }

    /// The first line that starts with `prefix`.
    fn row_starting(&self, prefix: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|l| l.starts_with(prefix))
            .map(String::as_str)
    }

    /// The figures-section block of `path`: its heading up to the next heading.
    fn figure_block(&self, path: &str) -> Option<String> {
        let heading = format!("### `{path}`");
        let start = self.lines.iter().position(|l| *l == heading)?;
        let end = self.lines[start + 1..]
            .iter()
            .position(|l| l.starts_with("### ") || l.starts_with("## "))
            .map_or(self.lines.len(), |i| start + 1 + i);
        let mut block = self.lines[start..end].join("\n");
        block.push('\n');
        Some(block)
    }

    /// The spec marker of `path`.
    fn marker(&self, path: &str) -> Option<Marker> {
        self.lines
            .iter()
            .filter_map(|l| Marker::parse(l))
            .find(|m| m.path == path)
    }

    /// The commit the page's "Kept as the page had them" line names for `path`: rows kept
    /// once keep their origin however often the page is written again.
    fn kept_commit(&self, path: &str) -> Option<String> {
        let line = self
            .lines
            .iter()
            .find(|l| l.starts_with("Kept as the page had them"))?;
        let rest = line.split_once(&format!("`{path}` (commit `"))?.1;
        Some(rest.split('`').next()?.to_string())
    }

    /// The commit of "Made at commit `…`".
    fn commit(&self) -> Option<String> {
        self.lines.iter().find_map(|l| {
            let rest = l.strip_prefix("Made at commit `")?;
            Some(rest.split('`').next()?.to_string())
        })
    }
}

impl KeptSpec {
    /// The committed row that starts with `prefix` (a claim's or a runtime's first cells).
    pub fn row(&self, prefix: &str) -> Option<&str> {
        self.rows
            .iter()
            .find(|l| l.starts_with(prefix))
            .map(String::as_str)
    }
}

/// One `<!-- gallery-spec PATH FINGERPRINT [cpu=S wall=S] -->` line.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Marker {
    /// The spec's path from the repository root.
    pub path: String,
    /// The spec's fingerprint.
    pub fingerprint: String,
    /// CPU seconds counted for the spec (pages written before these were recorded have none).
    pub cpu_seconds: Option<f64>,
    /// Wall seconds counted for the spec.
    pub wall_seconds: Option<f64>,
}

impl Marker {
    /// Parses a marker line; anything else is `None`.
    pub fn parse(line: &str) -> Option<Self> {
        let rest = line.strip_prefix(SPEC_LINE)?.trim_end_matches("-->");
        let mut parts = rest.split_whitespace();
        let (path, fingerprint) = (parts.next()?, parts.next()?);
        let (mut cpu_seconds, mut wall_seconds) = (None, None);
        for part in parts {
            if let Some(v) = part.strip_prefix("cpu=") {
                cpu_seconds = v.parse().ok();
            } else if let Some(v) = part.strip_prefix("wall=") {
                wall_seconds = v.parse().ok();
            }
        }
        Some(Self {
            path: path.to_string(),
            fingerprint: fingerprint.to_string(),
            cpu_seconds,
            wall_seconds,
        })
    }

    /// The line, as a page records it.
    pub fn line(&self) -> String {
        let mut line = format!("{SPEC_LINE}{} {}", self.path, self.fingerprint);
        if let (Some(cpu), Some(wall)) = (self.cpu_seconds, self.wall_seconds) {
            line.push_str(&format!(" cpu={cpu:.1} wall={wall:.1}"));
        }
        line.push_str(" -->");
        line
    }
}

/// The cells of a Markdown table row, trimmed.
fn cells(row: &str) -> Vec<&str> {
    row.trim()
        .trim_matches('|')
        .split('|')
        .map(str::trim)
        .collect()
}

/// Reads back a duration written by [`cabo_runner::status::duration`] (to its one decimal), for
/// pages written before the markers recorded seconds.
fn seconds(text: &str) -> Option<f64> {
    let (value, unit) = text.trim().split_once(' ')?;
    let value: f64 = value.parse().ok()?;
    let scale = match unit {
        "s" => 1.0,
        "min" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return None,
    };
    Some(value * scale)
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "# 004 — a paper

Made at commit `0f5677e2d5b2` from:

| claim | where | cabo measured | replications (cabo / paper) | verdict |
|---|---|---|---|---|
| A beats B on X | Fig. 1 | A 1.0, B 2.0 | 5 / 5 | holds |
| A beats B on Y | Fig. 1 | — | 0 / 5 | not run yet |

## Figures and summaries

### `specs/x.yaml`

![x](004/x.svg)

### `specs/y.yaml`

No results yet.

## How to run

| spec | fingerprint | runs complete | CPU time (run threads) | wall time |
|---|---|---:|---:|---:|
| `specs/x.yaml` | `aaaa` | 20 / 25 | 1.1 h | 2.8 h |
| `specs/y.yaml` | `bbbb` | 0 / 25 | 0.0 s | 0.0 s |

<!-- gallery-spec specs/x.yaml aaaa -->
<!-- gallery-spec specs/y.yaml bbbb cpu=0.0 wall=0.0 -->
";

    #[test]
    fn a_spec_with_more_runs_on_the_page_is_kept_with_its_rows() {
        let page = CommittedPage::parse(PAGE);
        let kept = page.keep("specs/x.yaml", "aaaa", 3).expect("kept");
        assert_eq!(
            kept.figure_block,
            "### `specs/x.yaml`\n\n![x](004/x.svg)\n\n"
        );
        assert_eq!(kept.cpu_seconds, 1.1 * 3600.0);
        assert_eq!(kept.wall_seconds, 2.8 * 3600.0);
        assert_eq!(kept.commit, "0f5677e2d5b2");
        assert_eq!(
            kept.row("| A beats B on X | Fig. 1 |"),
            Some("| A beats B on X | Fig. 1 | A 1.0, B 2.0 | 5 / 5 | holds |")
        );
    }

    #[test]
    fn rows_kept_before_keep_the_commit_they_came_from() {
        let page = PAGE.replace(
            "<!-- gallery-spec specs/x.yaml",
            "Kept as the page had them, because the results this page was written from hold \
             fewer complete runs of the same spec: `specs/w.yaml` (commit `111111111111`), \
             `specs/x.yaml` (commit `37a7460e12d5`).\n\n<!-- gallery-spec specs/x.yaml",
        );
        let kept = CommittedPage::parse(&page).keep("specs/x.yaml", "aaaa", 3);
        assert_eq!(kept.expect("kept").commit, "37a7460e12d5");
    }

    #[test]
    fn a_spec_is_not_kept_when_the_results_have_as_many_runs_or_the_spec_changed() {
        let page = CommittedPage::parse(PAGE);
        assert_eq!(page.keep("specs/x.yaml", "aaaa", 20), None);
        assert_eq!(page.keep("specs/x.yaml", "cccc", 0), None);
        assert_eq!(page.keep("specs/y.yaml", "bbbb", 0), None);
        assert_eq!(page.keep("specs/z.yaml", "aaaa", 0), None);
    }

    #[test]
    fn markers_round_trip_with_their_seconds() {
        let m = Marker {
            path: "specs/x.yaml".into(),
            fingerprint: "aaaa".into(),
            cpu_seconds: Some(3960.26),
            wall_seconds: Some(10.0),
        };
        let back = Marker::parse(&m.line()).expect("a marker");
        assert_eq!(back.cpu_seconds, Some(3960.3));
        assert_eq!(back.wall_seconds, Some(10.0));
        assert_eq!(back.fingerprint, "aaaa");
        assert_eq!(Marker::parse("<!-- other -->"), None);
    }
}

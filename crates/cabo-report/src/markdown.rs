//! `report.md`: what was compared, the figure, and tables of the aggregated metric at the
//! budget and along it, and the runs that count nowhere.

use super::{Report, Y};
use cabo_spec::XAxis;
use std::fmt::Write;

/// Four significant digits in a fixed form, so tables are stable and readable; `—` for no
/// value.
pub fn sig(v: f64) -> String {
    if v.is_nan() {
        return "—".into();
    }
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if (1e-3..1e5).contains(&a) {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{v:.3e}")
    }
}

/// Per policy, where its curve's diamond sits: "`policy`: x (k of n runs)", or "never".
pub fn diamonds(report: &Report) -> Vec<String> {
    report
        .curves
        .iter()
        .filter_map(|c| {
            let k = c.marker?;
            Some(if k.settled == 0 {
                format!("{}: never ({} runs)", c.policy, c.runs)
            } else {
                format!(
                    "{}: {} ({} of {} runs)",
                    c.policy,
                    sig(k.x_mean),
                    k.settled,
                    c.runs
                )
            })
        })
        .collect()
}

pub(crate) fn x_name(report: &Report) -> &'static str {
    match report.input.report.x {
        XAxis::CumulativeCost => "cumulative cost",
        XAxis::Iteration => "iteration",
        XAxis::WallTime => "wall time",
    }
}

/// Renders the report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let inp = &report.input;
    let _ = writeln!(out, "# {}\n", inp.name);
    if !inp.description.is_empty() {
        let _ = writeln!(out, "{}\n", inp.description);
    }
    let metric = report.y.label(report.log10);
    let quartiles = super::quartile_bands(report);
    let budget = match (inp.cost_limit, inp.iteration_limit) {
        (Some(c), Some(n)) => format!("cost {} or {n} iterations", sig(c)),
        (Some(c), None) => format!("cost {}", sig(c)),
        (None, Some(n)) => format!("{n} iterations"),
        (None, None) => "none".into(),
    };
    let _ = writeln!(out, "- metric: {metric}");
    let _ = writeln!(out, "- x-axis: {} (budget: {budget})", x_name(report));
    let _ = writeln!(
        out,
        "- figure: {} (best so far as a step function)",
        if quartiles {
            "median with a band from the 25% to the 75% quantile"
        } else {
            "mean with a band of ± one standard error"
        }
    );
    out.push_str(&replications_line(report));
    if inp.cost_limit.is_some() {
        let _ = writeln!(
            out,
            "- at the budget: a run's result is its best among the evaluations paid for within \
             the budget (cumulative cost ≤ {}); a last evaluation that overshoots it is \
             recorded but counts nowhere (figure, tables, `run.json`)",
            sig(inp.cost_limit.unwrap_or(f64::NAN))
        );
    }
    if report.y == Y::SimpleRegret && !report.log10 {
        let _ = writeln!(out, "- the regret axis is logarithmic");
    }
    if report.y == Y::SimpleRegret {
        out.push_str(&reference_line(report));
    }
    if let Some(m) = &inp.report.marker {
        let _ = writeln!(
            out,
            "- diamonds: mean {} after which `{m}` stays {} for the rest of a run (over the \
             runs where it does): {}",
            x_name(report),
            inp.report.marker_equals.unwrap_or(1),
            diamonds(report).join("; ")
        );
    }
    let _ = writeln!(out, "\n![{}](report.svg)\n", inp.name);

    out.push_str(&end_table(report));
    out.push_str(&left_out_table(report));

    out.push_str(&along_the_way(report, &metric, quartiles));
    let _ = writeln!(
        out,
        "\nEvery grid point of every policy is in `summary.csv` (columns policy, x, n, median, \
         q25, q75, mean, stderr); the figure is also in `report.png`."
    );
    out
}

/// The "Along the way" table: each policy's median (or mean) at a quarter, half, three
/// quarters and all of the x range; empty for curves of two points or fewer.
fn along_the_way(report: &Report, metric: &str, quartiles: bool) -> String {
    let mut out = String::new();
    // Medians at a quarter, half, three quarters and all of the x range show how fast each
    // policy gets there, which the final numbers alone hide.
    let len = report.curves.first().map_or(0, |c| c.points.len());
    if len > 2 {
        let picks: Vec<usize> = [1, 2, 3, 4].iter().map(|q| q * (len - 1) / 4).collect();
        let _ = writeln!(
            out,
            "\n## Along the way ({} of {metric})\n",
            if quartiles { "median" } else { "mean" }
        );
        let mut head = String::from("| policy |");
        let mut rule = String::from("|---|");
        for &i in &picks {
            let x = report.curves[0].points[i].x;
            let _ = write!(head, " {} = {} |", x_name(report), sig(x));
            rule.push_str("---:|");
        }
        let _ = writeln!(out, "{head}\n{rule}");
        for c in &report.curves {
            let _ = write!(out, "| {} |", c.policy);
            for &i in &picks {
                let p = c.points.get(i);
                let v = p.map_or(f64::NAN, |p| if quartiles { p.median } else { p.mean });
                let _ = write!(out, " {} |", sig(v));
            }
            let _ = writeln!(out);
        }
    }
    out
}

/// Where regret is measured against more than the problem's optimum search, as a list
/// item (empty where it is not).
pub fn reference_line(report: &Report) -> String {
    if let Some(why) = &report.references.unchecked {
        return format!(
            "- regret reference: the problem's optimum as the runs recorded it; whether a run \
             or an ascent from its best point passes it was not checked ({why})\n"
        );
    }
    let raised = &report.references.raised;
    if raised.is_empty() {
        return String::new();
    }
    let each: Vec<String> = raised
        .iter()
        .map(|r| {
            let search = r.search.map_or("reached by every run".into(), sig);
            format!(
                "replication {}: search {search}, reference {}",
                r.replication,
                sig(r.reference)
            )
        })
        .collect();
    format!(
        "- regret reference: the problem's optimum search is beaten on some instances (by a \
         run, or by a local ascent from a run's best point), so regret there is measured, for \
         every policy, against the best of these: {}\n",
        each.join("; ")
    )
}

/// The replications line: how many each policy has, and which runs count nowhere.
fn replications_line(report: &Report) -> String {
    let inp = &report.input;
    let total = inp.replications * inp.policies.len();
    if report.left_out.is_empty() {
        format!(
            "- replications: {} per policy, all {total} runs complete\n",
            inp.replications
        )
    } else {
        format!(
            "- replications: {} per policy; **incomplete**: {} of {total} runs are not in this \
             report{} (listed at the end)\n",
            inp.replications,
            report.left_out.len(),
            super::describe_left_out(&report.left_out)
        )
    }
}

/// The runs that count nowhere, one row each.
fn left_out_table(report: &Report) -> String {
    if report.left_out.is_empty() {
        return String::new();
    }
    let mut out = String::from(
        "\n## Runs not in this report\n\n| policy | replication | why |\n|---|---:|---|\n",
    );
    for l in &report.left_out {
        let why = match &l.why {
            super::Absence::Missing => "not complete".to_string(),
            super::Absence::OtherVersion => {
                "complete for an earlier version of the spec (rerun it)".to_string()
            }
            super::Absence::Damaged(w) => format!("damaged: {w} (rerun it)"),
        };
        let _ = writeln!(out, "| {} | {} | {why} |", l.policy, l.replication);
    }
    out
}

/// The "at the end" table: each policy's statistics at the last grid point.
fn end_table(report: &Report) -> String {
    let mut out = String::new();
    let end = report
        .curves
        .iter()
        .find_map(|c| c.points.last())
        .map_or(f64::NAN, |p| p.x);
    let _ = writeln!(
        out,
        "## At the budget ({} = {})\n",
        x_name(report),
        sig(end)
    );
    let _ = writeln!(
        out,
        "| policy | runs | median | q25 | q75 | mean | s.e. | evaluations (median) |"
    );
    let _ = writeln!(out, "|---|---:|---:|---:|---:|---:|---:|---:|");
    for c in &report.curves {
        match c.points.last() {
            Some(p) => {
                let _ = writeln!(
                    out,
                    "| {} | {} | {} | {} | {} | {} | {} | {} |",
                    c.policy,
                    p.n,
                    sig(p.median),
                    sig(p.q25),
                    sig(p.q75),
                    sig(p.mean),
                    sig(p.stderr),
                    sig(c.evaluations_median)
                );
            }
            None => {
                let _ = writeln!(out, "| {} | 0 | — | — | — | — | — | — |", c.policy);
            }
        }
    }

    out
}

/// The section of `report.md` for an extra metric (`report.also`): its figure and its
/// values at the end.
pub fn render_extra(report: &Report, figure: &str) -> String {
    let label = report.y.label(report.log10);
    format!(
        "\n## {label}\n\n![{label}]({figure})\n\n{}",
        end_table(report)
    )
}

#[cfg(test)]
mod tests {
    use super::sig;

    #[test]
    fn numbers_have_four_significant_digits_in_a_fixed_form() {
        assert_eq!(sig(0.0), "0");
        assert_eq!(sig(1.23456), "1.235");
        assert_eq!(sig(-42.0), "-42.00");
        assert_eq!(sig(12345.6), "12346");
        assert_eq!(sig(2.5e-7), "2.500e-7");
        assert_eq!(sig(f64::NAN), "—");
    }
}

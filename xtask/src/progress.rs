//! Progress and logs on stderr: indicatif bars (through tracing-indicatif) when stderr is a
//! terminal, plain lines otherwise. Warnings (a discarded checkpoint, a damaged record file,
//! a file system without locks) always show; `-v` adds the other tracing logs.

use std::io::IsTerminal;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// Installs the tracing subscriber; returns whether progress bars are shown.
pub fn install(verbose: u8) -> bool {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    // The cabo crates' spans must stay enabled for the bars even when logs are off, so the
    // filter applies to the log layer only.
    let logs = EnvFilter::new(format!("cabo={level},cabo_runner={level},xtask={level}"));
    if std::io::stderr().is_terminal() {
        let bars = tracing_indicatif::IndicatifLayer::new();
        let writer = bars.get_stderr_writer();
        tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(writer)
                    .with_target(false)
                    .with_filter(logs),
            )
            .with(bars.with_filter(tracing_subscriber::filter::filter_fn(|m| {
                m.is_span() && (m.name() == "sweep" || m.name() == "run")
            })))
            .init();
        true
    } else {
        tracing_subscriber::registry()
            .with(
                tracing_subscriber::fmt::layer()
                    .with_writer(std::io::stderr)
                    .with_target(false)
                    .with_ansi(false)
                    .with_filter(logs),
            )
            .init();
        false
    }
}

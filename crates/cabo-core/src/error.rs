//! The one error type of cabo's plugin surface.

use std::ops::RangeInclusive;

/// What went wrong, phrased for the researcher who wrote the spec or the plugin.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A spec or argument is invalid: the message says which key and what was expected.
    #[error("{0}")]
    Invalid(String),
    /// A numerical procedure failed (e.g. a covariance matrix that stayed indefinite).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// A plugin was asked for a capability it does not have.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The work was stopped by a request to stop ([`crate::interrupt`]) while it waited,
    /// e.g. for an external program's answer: not a failure, the run resumes later.
    #[error("interrupted: {0}")]
    Interrupted(String),
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: String,
        /// The underlying I/O error.
        source: std::io::Error,
    },
}

impl Error {
    /// An [`Error::Invalid`] from anything printable.
    pub fn invalid(msg: impl Into<String>) -> Self {
        Error::Invalid(msg.into())
    }
    /// An [`Error::Numerical`] from anything printable.
    pub fn numerical(msg: impl Into<String>) -> Self {
        Error::Numerical(msg.into())
    }
    /// An [`Error::Unsupported`] from anything printable.
    pub fn unsupported(msg: impl Into<String>) -> Self {
        Error::Unsupported(msg.into())
    }
    /// Prefixes the message with a key path such as `policies[2].acquisition`.
    pub fn at(self, key: &str) -> Self {
        match self {
            Error::Invalid(m) => Error::Invalid(format!("{key}: {m}")),
            Error::Numerical(m) => Error::Numerical(format!("{key}: {m}")),
            Error::Unsupported(m) => Error::Unsupported(format!("{key}: {m}")),
            other => other,
        }
    }
}

/// `Result` with cabo's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Checks a count from a spec (samples, features, dimensions, …) against its stated range,
/// so that a typo such as `mc_samples: 4000000000` is refused at `validate` with the range
/// instead of aborting on an allocation or running for hours. `key` names the field as the
/// researcher wrote it (e.g. `ts_psq.features`).
pub fn check_count(key: &str, value: usize, range: RangeInclusive<usize>) -> Result<()> {
    if range.contains(&value) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{key}: must be a whole number from {} to {}, got {value}",
        range.start(),
        range.end()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_count_accepts_both_ends_and_names_the_range_outside() {
        assert!(check_count("p.n", 1, 1..=10).is_ok());
        assert!(check_count("p.n", 10, 1..=10).is_ok());
        let over = check_count("p.n", 4_000_000_000, 1..=10).unwrap_err();
        assert_eq!(
            over.to_string(),
            "p.n: must be a whole number from 1 to 10, got 4000000000"
        );
        let under = check_count("p.n", 0, 1..=10).unwrap_err();
        assert_eq!(
            under.to_string(),
            "p.n: must be a whole number from 1 to 10, got 0"
        );
    }
}

//! What a stateful plugin carries from one decision to the next, encoded so that an
//! interrupted run can resume exactly where it stopped.
//!
//! A policy, model or cost model that keeps state beyond the dataset (PBGI-D's λ, a MAP fit's
//! warm start, α-ETC's bounds, a scenario tree's previous solution) returns it from its
//! `checkpoint` method as a [`PluginState`] and takes it back in `restore`. The encoding is
//! CBOR: every `f64` — including ±∞ and NaN, which JSON cannot carry — comes back bit for bit,
//! so a resumed run writes the same bytes as one that was never interrupted.

use crate::{Error, Result};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// An encoded plugin state (opaque; build it with [`PluginState::encode`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct PluginState(Vec<u8>);

impl PluginState {
    /// The state of a plugin that keeps none: its decisions follow from the dataset alone.
    pub fn stateless() -> Self {
        PluginState(Vec::new())
    }

    /// Encodes `value` (any serde-serialisable state).
    pub fn encode<T: Serialize>(value: &T) -> Result<Self> {
        let mut bytes = Vec::new();
        ciborium::into_writer(value, &mut bytes)
            .map_err(|e| Error::invalid(format!("checkpoint: cannot encode a state: {e}")))?;
        Ok(PluginState(bytes))
    }

    /// Decodes a state written by [`PluginState::encode`]; `who` names the plugin in the
    /// error when the bytes do not match its state type (a checkpoint from other code).
    pub fn decode<T: DeserializeOwned>(&self, who: &str) -> Result<T> {
        ciborium::from_reader(self.0.as_slice()).map_err(|e| {
            Error::invalid(format!(
                "checkpoint: the saved state of {who} does not fit its current state type: {e}"
            ))
        })
    }

    /// Whether this is [`PluginState::stateless`].
    pub fn is_stateless(&self) -> bool {
        self.0.is_empty()
    }

    /// Encodes a whole checkpoint file (any serde-serialisable value) the same way.
    pub fn to_bytes<T: Serialize>(value: &T) -> Result<Vec<u8>> {
        Ok(Self::encode(value)?.0)
    }

    /// Decodes what [`PluginState::to_bytes`] wrote.
    pub fn from_bytes<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
        PluginState(bytes.to_vec()).decode(what)
    }
}

/// Restores a plugin that keeps no state: accepts only [`PluginState::stateless`].
pub fn restore_stateless(state: &PluginState, who: &str) -> Result<()> {
    if state.is_stateless() {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "checkpoint: {who} keeps no state, but the checkpoint holds one"
        )))
    }
}

/// The `checkpoint` and `restore` methods of a policy, model or cost model that keeps no
/// state beyond the dataset (its decisions follow from the data and the decision's seed), so
/// that runs of it resume from checkpoints. Use inside the trait `impl`, naming the plugin:
/// `cabo_core::stateless_checkpoint!("ucb_psq");`.
#[macro_export]
macro_rules! stateless_checkpoint {
    ($who:expr) => {
        fn checkpoint(&self) -> $crate::Result<Option<$crate::PluginState>> {
            Ok(Some($crate::PluginState::stateless()))
        }

        fn restore(&mut self, state: &$crate::PluginState) -> $crate::Result<()> {
            $crate::state::restore_stateless(state, $who)
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct S {
        bounds: Vec<f64>,
        lambda: f64,
        warm: Option<(usize, Vec<f64>)>,
    }

    #[test]
    fn every_float_comes_back_bit_for_bit() {
        let s = S {
            bounds: vec![
                f64::INFINITY,
                f64::NEG_INFINITY,
                -0.0,
                0.1 + 0.2,
                f64::MIN_POSITIVE / 3.0,
            ],
            lambda: std::f64::consts::PI * 1e-300,
            warm: Some((3, vec![1.0 / 3.0, -2.5e17])),
        };
        let back: S = PluginState::encode(&s).unwrap().decode("S").unwrap();
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&back.bounds), bits(&s.bounds));
        assert_eq!(back.lambda.to_bits(), s.lambda.to_bits());
        assert_eq!(back.warm, s.warm);
        let nan: f64 = PluginState::encode(&f64::NAN)
            .unwrap()
            .decode("nan")
            .unwrap();
        assert!(nan.is_nan());
    }

    #[test]
    fn a_state_of_another_type_is_an_error_naming_the_plugin() {
        let e = PluginState::encode(&"text")
            .unwrap()
            .decode::<S>("pbgi_decay")
            .unwrap_err()
            .to_string();
        assert!(e.contains("pbgi_decay"), "{e}");
        assert!(restore_stateless(&PluginState::encode(&1).unwrap(), "ei").is_err());
        assert!(restore_stateless(&PluginState::stateless(), "ei").is_ok());
    }
}

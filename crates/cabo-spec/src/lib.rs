//! # cabo-spec
//!
//! cabo's experiment files: a comparison spec (problem, budget, policies, report options)
//! parsed and validated before anything runs, every error naming the file, line and key
//! with the closest valid name ([`SpecError`], located through [`locate`]); the resource
//! limits a spec is checked against ([`limits`]); and the names of a results directory's
//! parts that the spec refuses as policy names and the store lays out ([`layout`]).
//!
//! It reads files and knows no plugin by name: plugins are found through
//! [`cabo_core::registry`].

#![forbid(unsafe_code)]

pub mod error;
pub mod layout;
pub mod locate;
pub mod spec;

pub use error::{SpecError, parse_yaml, parse_yaml_with};
pub use spec::*;

//! Spec snapshot tests (filled in below).

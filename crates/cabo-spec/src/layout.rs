//! The names of a results directory's parts that both the spec (which refuses policy names
//! that would collide with them) and the result store (which lays the files out) need: a
//! level below both, so neither imports the other for them.

/// Turns a policy name into a directory name (keeps letters, digits and `._-()+=,`).
pub fn dir_name(policy: &str) -> String {
    policy
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-()+=,".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The folder of a spec directory that keeps runs of earlier spec versions.
pub const SUPERSEDED: &str = "superseded";

/// The folder of a spec's results directory that holds its `--smoke` variant's results.
pub const SMOKE: &str = "smoke";

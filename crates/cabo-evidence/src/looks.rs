//! The planned looks of a sequential comparison: the replication counts at which the data are
//! examined.

/// The replication counts at which a claim is examined, fixed before any run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Looks {
    sizes: Vec<usize>,
}

/// No interval is computed from fewer replications: with one degree of freedom a t interval
/// spans nearly everything, and an early look would only spend level.
pub const FEWEST: usize = 3;

impl Looks {
    /// `looks` planned looks at n_k = round(k·N / K), k = 1 … K, for N = `paper_replications`;
    /// counts below [`FEWEST`] and repeats are dropped, and the last look is always N.
    pub fn planned(paper_replications: usize, looks: usize) -> Looks {
        let n = paper_replications;
        let k = looks.max(1);
        let mut sizes: Vec<usize> = (1..=k)
            .map(|i| ((i * n) as f64 / k as f64).round() as usize)
            .filter(|&s| s >= FEWEST.min(n))
            .collect();
        sizes.dedup();
        if sizes.last() != Some(&n) {
            sizes.push(n);
        }
        Looks { sizes }
    }

    /// The replication counts, increasing.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }

    /// The smallest planned count above `n` (None once `n` reaches the last).
    pub fn next(&self, n: usize) -> Option<usize> {
        self.sizes.iter().copied().find(|&s| s > n)
    }

    /// The last planned count: the paper's replications.
    pub fn max(&self) -> usize {
        self.sizes.last().copied().unwrap_or(0)
    }

    /// The information fraction of each look (n_k / N).
    pub fn fractions(&self) -> Vec<f64> {
        let max = self.max() as f64;
        self.sizes.iter().map(|&s| s as f64 / max).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_looks_at_sixteen_are_quarters() {
        let l = Looks::planned(16, 4);
        assert_eq!(l.sizes(), &[4, 8, 12, 16]);
        assert_eq!(l.next(0), Some(4));
        assert_eq!(l.next(9), Some(12));
        assert_eq!(l.next(16), None);
    }

    #[test]
    fn small_counts_drop_early_looks() {
        assert_eq!(Looks::planned(10, 4).sizes(), &[3, 5, 8, 10]);
        assert_eq!(Looks::planned(4, 4).sizes(), &[3, 4]);
        assert_eq!(Looks::planned(2, 4).sizes(), &[2]);
    }
}

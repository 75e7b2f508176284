//! The two discretisations every computation shares: an x-grid on `[0, ℓ]` and a y-grid of
//! levels the observations take.

use cabo_core::{Error, Result};
use serde::{Deserialize, Serialize};

/// Uniform grids: `x_levels` points `0, h, …, ℓ` and `y_levels` values `y_min, …, y_max`.
///
/// The x-grid must be uniform so that an interval is described by its integer length `d`
/// (in steps of `h`) — that is what makes the translation-invariant state 3-dimensional.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grid {
    /// Length ℓ of the domain `[0, ℓ]`.
    pub length: f64,
    /// Number of x-points, endpoints included (≥ 2).
    pub x_levels: usize,
    /// Lowest y-level.
    pub y_min: f64,
    /// Highest y-level.
    pub y_max: f64,
    /// Number of y-levels (≥ 2).
    pub y_levels: usize,
}

impl Grid {
    /// Rejects grids the dynamic program cannot use.
    pub fn validate(&self) -> Result<()> {
        if !(self.length.is_finite() && self.length > 0.0) {
            return Err(Error::invalid(format!(
                "grid `length` must be positive and finite, got {}",
                self.length
            )));
        }
        if self.x_levels < 2 || self.x_levels > u16::MAX as usize {
            return Err(Error::invalid(format!(
                "grid `x_levels` must be in 2..=65535, got {}",
                self.x_levels
            )));
        }
        if self.y_levels < 2 || self.y_levels > 100_000 {
            return Err(Error::invalid(format!(
                "grid `y_levels` must be in 2..=100000, got {}",
                self.y_levels
            )));
        }
        if !(self.y_min.is_finite() && self.y_max.is_finite() && self.y_max > self.y_min) {
            return Err(Error::invalid(format!(
                "grid needs finite `y_min` < `y_max`, got {} and {}",
                self.y_min, self.y_max
            )));
        }
        Ok(())
    }

    /// Spacing of the x-grid.
    pub fn dx(&self) -> f64 {
        self.length / (self.x_levels - 1) as f64
    }

    /// Spacing of the y-grid.
    pub fn dy(&self) -> f64 {
        (self.y_max - self.y_min) / (self.y_levels - 1) as f64
    }

    /// The `i`-th x-point.
    pub fn x(&self, i: usize) -> f64 {
        self.dx() * i as f64
    }

    /// The `i`-th y-level.
    pub fn y(&self, i: usize) -> f64 {
        self.y_min + self.dy() * i as f64
    }

    /// The index of the y-level nearest to `y` (clamped to the grid).
    pub fn nearest_y(&self, y: f64) -> usize {
        let r = ((y - self.y_min) / self.dy()).round();
        r.clamp(0.0, (self.y_levels - 1) as f64) as usize
    }

    /// The index of `y` when it is a grid level (to within 1e-9 of a spacing), else an error.
    pub fn level_of(&self, y: f64) -> Result<usize> {
        let r = (y - self.y_min) / self.dy();
        let i = r.round();
        if !(0.0..=(self.y_levels - 1) as f64).contains(&i) || (r - i).abs() > 1e-9 {
            return Err(Error::invalid(format!(
                "value {y} is not a level of the y-grid [{}, {}] with {} levels",
                self.y_min, self.y_max, self.y_levels
            )));
        }
        Ok(i as usize)
    }
}

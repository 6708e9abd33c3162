//! The scale factor: how people write it, and the ones tpchgen can generate.

use crate::error::TpchError;

/// The scale factor as text, the way people write it (`1`, `0.01`, `10`).
pub fn format_scale_factor(scale_factor: f64) -> String {
    format!("{scale_factor}")
}

/// Reject scale factors tpchgen cannot generate.
pub fn check_scale_factor(scale_factor: f64) -> Result<(), TpchError> {
    if scale_factor.is_finite() && scale_factor > 0.0 && scale_factor <= 100_000.0 {
        Ok(())
    } else {
        Err(TpchError::BadScaleFactor(scale_factor))
    }
}

//! A chart's value axis: its scale (linear, or logarithmic in decades or powers of two), its extent and nice ticks
//! covering the data, and where a value falls along it.

/// A value axis: maps values to positions and lists tick values.
#[derive(Clone, Debug, PartialEq)]
pub struct Axis {
    pub min: f64,
    pub max: f64,
    pub log: bool,
    pub ticks: Vec<f64>,
}

impl Axis {
    /// A linear axis from `min` (0 for bars) to at least `max`, with about `count` nice ticks (1, 2, 2.5, 5 x 10^n).
    pub fn linear(min: f64, max: f64, count: usize) -> Axis {
        // All values equal (or none): still draw a sensible axis.
        let (min, max) = if max > min {
            (min, max)
        } else if max > 0.0 {
            (min.min(0.0), max * 1.1)
        } else {
            (min.min(0.0), min.min(0.0) + 1.0)
        };
        let step = nice_step((max - min) / count.max(2) as f64);
        let low = (min / step).floor() * step;
        let high = (max / step).ceil() * step;
        let steps = ((high - low) / step).round() as usize;
        let ticks = (0..=steps).map(|i| low + i as f64 * step).collect();
        Axis { min: low, max: high, log: false, ticks }
    }

    /// A logarithmic axis over whole decades covering `min..max` (both positive); ticks at 1, 2, 5 x 10^n when the
    /// range is short, at powers of ten otherwise.
    pub fn logarithmic(min: f64, max: f64) -> Axis {
        let min = if min > 0.0 { min } else { max.max(1e-9) / 10.0 };
        let max = max.max(min * 1.0001);
        let low = min.log10().floor() as i32;
        let high = max.log10().ceil().max(f64::from(low) + 1.0) as i32;
        let mut ticks = Vec::new();
        for exponent in low..=high {
            let decade = 10f64.powi(exponent);
            let multiples: &[f64] = if high - low <= 2 { &[1.0, 2.0, 5.0] } else { &[1.0] };
            for m in multiples {
                let tick = m * decade;
                if tick <= 10f64.powi(high) * 1.0001 {
                    ticks.push(tick);
                }
            }
        }
        Axis { min: 10f64.powi(low), max: 10f64.powi(high), log: true, ticks }
    }

    /// A base-2 logarithmic axis from the power of two at or below `min` to the one at or above `max`, a tick at
    /// every power of two (for job and thread counts: 1, 2, 4, 8...).
    pub fn binary_logarithmic(min: f64, max: f64) -> Axis {
        let min = if min > 0.0 { min } else { 1.0 };
        let low = min.log2().floor() as i32;
        let high = max.max(min).log2().ceil().max(f64::from(low) + 1.0) as i32;
        let ticks = (low..=high).map(|e| 2f64.powi(e)).collect();
        Axis { min: 2f64.powi(low), max: 2f64.powi(high), log: true, ticks }
    }

    /// An axis of a scale covering `min..max` (linear axes start at zero or below).
    pub fn of_scale(scale: Scale, min: f64, max: f64, count: usize) -> Axis {
        match scale {
            Scale::Log10 if min > 0.0 => Axis::logarithmic(min, max),
            Scale::Log2 if min > 0.0 => Axis::binary_logarithmic(min, max),
            _ => Axis::linear(min.min(0.0), max, count),
        }
    }

    /// Where `value` lies, 0 at `min` to 1 at `max`.
    pub fn fraction(&self, value: f64) -> f64 {
        if self.log {
            let value = value.max(self.min);
            (value.ln() - self.min.ln()) / (self.max.ln() - self.min.ln())
        } else {
            (value - self.min) / (self.max - self.min)
        }
    }
}

/// The nice step (1, 2, 2.5 or 5 times a power of ten) nearest above `raw`.
pub fn nice_step(raw: f64) -> f64 {
    if raw <= 0.0 || !raw.is_finite() {
        return 1.0;
    }
    let power = 10f64.powf(raw.log10().floor());
    let fraction = raw / power;
    let nice = if fraction <= 1.0 {
        1.0
    } else if fraction <= 2.0 {
        2.0
    } else if fraction <= 2.5 {
        2.5
    } else if fraction <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * power
}

/// How an axis maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Decades (latencies spanning orders of magnitude).
    Log10,
    /// Powers of two (jobs, threads).
    Log2,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(23.0), 25.0);
        assert_eq!(nice_step(420.0), 500.0);
        assert_eq!(nice_step(7000.0), 10000.0);
    }

    #[test]
    fn linear_axis_covers_the_data_with_nice_ticks() {
        let axis = Axis::linear(0.0, 3210.0, 5);
        assert_eq!(axis.ticks, vec![0.0, 1000.0, 2000.0, 3000.0, 4000.0]);
        assert_eq!(axis.fraction(2000.0), 0.5);
        let flat = Axis::linear(0.0, 0.0, 5);
        assert_eq!((flat.min, flat.max), (0.0, 1.0));
    }

    #[test]
    fn log_axis_spans_whole_decades() {
        let axis = Axis::logarithmic(35.0, 4200.0);
        assert_eq!((axis.min, axis.max), (10.0, 10000.0));
        assert_eq!(axis.ticks, vec![10.0, 100.0, 1000.0, 10000.0]);
        assert!((axis.fraction(100.0) - 1.0 / 3.0).abs() < 1e-12);
        let short = Axis::logarithmic(1.0, 8.0);
        assert_eq!(short.ticks, vec![1.0, 2.0, 5.0, 10.0]);
        let jobs = Axis::binary_logarithmic(1.0, 12.0);
        assert_eq!(jobs.ticks, vec![1.0, 2.0, 4.0, 8.0, 16.0]);
        assert!((jobs.fraction(4.0) - 0.5).abs() < 1e-12);
    }
}

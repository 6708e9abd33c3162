//! A small seeded pseudo-random generator (SplitMix64) and a stateless mixer.
//!
//! The data must be identical on every machine for a given seed, so the generator is written out here rather than
//! taken from a crate whose stream might change between versions.

/// SplitMix64: fast, statistically good enough for synthetic data, and fully specified by its seed.
#[derive(Clone, Debug)]
pub struct Rng {
    state: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng { state: seed }
    }

    /// A generator for one named stream derived from a seed (e.g. seed and pair number), so that streams do not
    /// depend on the order in which they are consumed.
    pub fn for_stream(seed: u64, stream: u64) -> Rng {
        Rng::new(mix(seed ^ mix(stream.wrapping_add(0x5851_F42D_4C95_7F2D))))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.state)
    }

    /// Uniform in `0..n` (`n > 0`), by multiply-shift (bias below 2^-32 for the sizes used here).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() >> 32) * n) >> 32
    }

    /// Uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo + 1)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }

    /// Shuffle a slice in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// The SplitMix64 finalizer: a bijective 64-bit mix.
pub fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A table for drawing indices with given weights in O(log n).
#[derive(Clone, Debug)]
pub struct WeightedTable {
    cumulative: Vec<f64>,
}

impl WeightedTable {
    pub fn new(weights: impl IntoIterator<Item = f64>) -> WeightedTable {
        let mut total = 0.0;
        let cumulative = weights
            .into_iter()
            .map(|w| {
                total += w;
                total
            })
            .collect();
        WeightedTable { cumulative }
    }

    /// Zipf-like weights `1 / (rank + 1)^exponent` for `n` items.
    pub fn zipf(n: usize, exponent: f64) -> WeightedTable {
        WeightedTable::new((0..n).map(|rank| 1.0 / ((rank + 1) as f64).powf(exponent)))
    }

    /// Draw an index; the table must not be empty.
    pub fn draw(&self, rng: &mut Rng) -> usize {
        let total = *self.cumulative.last().expect("weighted table is not empty");
        let target = rng.unit() * total;
        self.cumulative.partition_point(|&c| c <= target).min(self.cumulative.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let a: Vec<u64> = (0..4).map(|_| Rng::for_stream(7, 1).next_u64()).collect();
        assert!(a.windows(2).all(|w| w[0] == w[1]));
        assert_ne!(Rng::for_stream(7, 1).next_u64(), Rng::for_stream(7, 2).next_u64());
        assert_ne!(Rng::for_stream(7, 1).next_u64(), Rng::for_stream(8, 1).next_u64());
    }

    #[test]
    fn below_stays_in_range_and_zipf_prefers_low_ranks() {
        let mut rng = Rng::new(1);
        assert!((0..10_000).all(|_| rng.below(7) < 7));
        let table = WeightedTable::zipf(100, 1.0);
        let mut counts = [0usize; 100];
        for _ in 0..20_000 {
            counts[table.draw(&mut rng)] += 1;
        }
        assert!(counts[0] > counts[10] && counts[10] > counts[99]);
    }
}

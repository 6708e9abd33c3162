//! A small, fast pseudo-random generator for offsets, read/write choices and fill data.
//!
//! wyrand: one multiply and one xor per 64 bits, statistically good enough for choosing blocks and making data that
//! does not compress. It is not cryptographic and need not be.

/// The wyrand generator. Deterministic for a given seed, so runs can be repeated.
#[derive(Clone, Debug)]
pub struct FastRng {
    state: u64,
}

impl FastRng {
    /// A generator started from `seed` (any value, zero included).
    pub fn new(seed: u64) -> FastRng {
        FastRng { state: seed ^ 0x2d35_8dcc_aa6c_78a5 }
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0xa076_1d64_78bd_642f);
        let product = u128::from(self.state) * u128::from(self.state ^ 0xe703_7ed1_a0b4_28db);
        ((product >> 64) as u64) ^ (product as u64)
    }

    /// A value in `0..bound` (`bound` > 0), by Lemire's multiply-shift; the bias is below 2^-64 per draw for the
    /// bounds used here (block counts), far under anything a benchmark can see.
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(bound)) >> 64) as u64
    }

    /// Fill `bytes` with random data.
    pub fn fill(&mut self, bytes: &mut [u8]) {
        let mut chunks = bytes.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let tail = chunks.into_remainder();
        let last = self.next_u64().to_le_bytes();
        tail.copy_from_slice(&last[..tail.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut rng = FastRng::new(7);
        let mut seen = [0u32; 10];
        for _ in 0..100_000 {
            let value = rng.below(10);
            assert!(value < 10);
            seen[value as usize] += 1;
        }
        // Each bucket expects 10 000; allow a generous 5%.
        assert!(seen.iter().all(|&count| (9_500..=10_500).contains(&count)), "{seen:?}");
    }

    #[test]
    fn fill_data_does_not_repeat() {
        let mut rng = FastRng::new(1);
        let mut data = vec![0u8; 4096 + 3];
        rng.fill(&mut data);
        let (first, second) = data.split_at(2048);
        assert_ne!(first, &second[..2048]);
        assert!(data.iter().filter(|&&b| b == 0).count() < 64);
    }

    #[test]
    fn same_seed_same_sequence() {
        let mut a = FastRng::new(42);
        let mut b = FastRng::new(42);
        assert!((0..100).all(|_| a.next_u64() == b.next_u64()));
    }
}

//! The random values of the TPC-C specification (clause 4.3.2): uniform ranges, NURand, a-strings and n-strings, the
//! customer last names built from syllables, and the run-time constants C that NURand adds.

use envbench_io::rng::FastRng;

const ALPHANUMERIC: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const SYLLABLES: [&str; 10] = ["BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"];

/// The constants C of NURand for customer last names, customer ids and item ids (clause 2.1.6). The run-time C for
/// last names differs from the load-time one by 65..119, never 96 or 112 (clause 2.1.6.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NuRandConstants {
    pub c_last: u64,
    pub c_id: u64,
    pub ol_i_id: u64,
}

impl NuRandConstants {
    /// The constants used while loading.
    pub fn load(seed: u64) -> NuRandConstants {
        let mut rng = FastRng::new(seed);
        NuRandConstants { c_last: rng.below(256), c_id: rng.below(1024), ol_i_id: rng.below(8192) }
    }

    /// Constants for a run, derived from the load's so the last-name delta rule holds.
    pub fn run(load: NuRandConstants, seed: u64) -> NuRandConstants {
        let mut rng = FastRng::new(seed);
        let delta = loop {
            let delta = 65 + rng.below(55);
            if delta != 96 && delta != 112 {
                break delta;
            }
        };
        NuRandConstants { c_last: (load.c_last + delta) % 256, c_id: rng.below(1024), ol_i_id: rng.below(8192) }
    }
}

/// The specification's random functions over a fast generator.
pub struct Random {
    rng: FastRng,
    constants: NuRandConstants,
}

impl Random {
    pub fn new(seed: u64, constants: NuRandConstants) -> Random {
        Random { rng: FastRng::new(seed), constants }
    }

    /// Uniform in `low..=high`.
    pub fn range(&mut self, low: i64, high: i64) -> i64 {
        debug_assert!(low <= high);
        low + self.rng.below((high - low + 1) as u64) as i64
    }

    /// A percentage draw: true with `percent` % probability.
    pub fn chance(&mut self, percent: i64) -> bool {
        self.range(1, 100) <= percent
    }

    /// Uniform in `low..=high` with `decimals` places (`1.00..=5000.00`).
    pub fn decimal(&mut self, low: f64, high: f64, decimals: i32) -> f64 {
        let scale = 10f64.powi(decimals);
        self.range((low * scale).round() as i64, (high * scale).round() as i64) as f64 / scale
    }

    /// NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
    pub fn nurand(&mut self, a: i64, x: i64, y: i64) -> i64 {
        let c = match a {
            255 => self.constants.c_last,
            1023 => self.constants.c_id,
            8191 => self.constants.ol_i_id,
            _ => 0,
        } as i64;
        (((self.range(0, a) | self.range(x, y)) + c) % (y - x + 1)) + x
    }

    /// A customer id: NURand(1023, 1, 3000).
    pub fn customer_id(&mut self) -> i64 {
        self.nurand(1023, 1, 3000)
    }

    /// An item id: NURand(8191, 1, 100000).
    pub fn item_id(&mut self) -> i64 {
        self.nurand(8191, 1, 100_000)
    }

    /// A customer last name for a run: the syllables of NURand(255, 0, 999).
    pub fn last_name(&mut self) -> String {
        let number = self.nurand(255, 0, 999);
        last_name(number)
    }

    /// A random a-string: alphanumeric, length in `low..=high`.
    pub fn astring(&mut self, low: i64, high: i64) -> String {
        let length = self.range(low, high) as usize;
        (0..length).map(|_| ALPHANUMERIC[self.rng.below(ALPHANUMERIC.len() as u64) as usize] as char).collect()
    }

    /// A random n-string: digits, length in `low..=high`.
    pub fn nstring(&mut self, low: i64, high: i64) -> String {
        let length = self.range(low, high) as usize;
        (0..length).map(|_| (b'0' + self.rng.below(10) as u8) as char).collect()
    }

    /// A zip code: four random digits and `11111`.
    pub fn zip(&mut self) -> String {
        format!("{}11111", self.nstring(4, 4))
    }

    /// Item and stock data: an a-string of 26..50, in 10% of rows holding `ORIGINAL` at a random place.
    pub fn data_with_original(&mut self) -> String {
        let mut data = self.astring(26, 50);
        if self.chance(10) {
            let at = self.range(0, (data.len() - 8) as i64) as usize;
            data.replace_range(at..at + 8, "ORIGINAL");
        }
        data
    }

    /// A random permutation of `1..=n` (the customer of each loaded order).
    pub fn permutation(&mut self, n: usize) -> Vec<i64> {
        let mut values: Vec<i64> = (1..=n as i64).collect();
        for i in (1..n).rev() {
            let j = self.rng.below(i as u64 + 1) as usize;
            values.swap(i, j);
        }
        values
    }

    /// A negative-exponential think time with this mean, capped at ten times the mean (clause 5.2.5.4).
    pub fn think_seconds(&mut self, mean: f64) -> f64 {
        let uniform = (self.rng.below(1 << 53) as f64 + 1.0) / (1u64 << 53) as f64;
        (-uniform.ln() * mean).min(10.0 * mean)
    }
}

/// The last name of a number 0..=999: the syllables of its three digits.
pub fn last_name(number: i64) -> String {
    let n = number as usize;
    format!("{}{}{}", SYLLABLES[n / 100], SYLLABLES[(n / 10) % 10], SYLLABLES[n % 10])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_names_are_built_from_syllables() {
        assert_eq!(last_name(0), "BARBARBAR");
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(999), "EINGEINGEING");
    }

    #[test]
    fn nurand_stays_in_range_and_favours_some_values() {
        let mut random = Random::new(7, NuRandConstants::load(1));
        let mut counts = vec![0u32; 3001];
        for _ in 0..300_000 {
            let id = random.customer_id();
            assert!((1..=3000).contains(&id));
            counts[id as usize] += 1;
        }
        // Non-uniform: the most drawn id comes up far more often than the uniform 100 times.
        assert!(*counts.iter().max().unwrap() > 250);
        for _ in 0..10_000 {
            assert!((1..=100_000).contains(&random.item_id()));
            let name = random.last_name();
            assert!(name.len() >= 9 && name.chars().all(|c| c.is_ascii_uppercase()));
        }
    }

    #[test]
    fn run_constants_keep_the_last_name_delta_rule() {
        for seed in 0..200 {
            let load = NuRandConstants::load(seed);
            let run = NuRandConstants::run(load, seed + 1000);
            let delta = (run.c_last + 256 - load.c_last) % 256;
            assert!((65..=119).contains(&delta) && delta != 96 && delta != 112, "{delta}");
        }
    }

    #[test]
    fn strings_have_their_lengths_and_alphabets() {
        let mut random = Random::new(3, NuRandConstants::load(3));
        for _ in 0..1000 {
            let a = random.astring(6, 10);
            assert!((6..=10).contains(&a.len()) && a.chars().all(|c| c.is_ascii_alphanumeric()));
            let zip = random.zip();
            assert!(zip.len() == 9 && zip.ends_with("11111"));
            let data = random.data_with_original();
            assert!((26..=50).contains(&data.len()));
            let amount = random.decimal(1.0, 5000.0, 2);
            assert!((1.0..=5000.0).contains(&amount) && ((amount * 100.0).round() - amount * 100.0).abs() < 1e-6);
        }
        let permutation = random.permutation(3000);
        let mut sorted = permutation.clone();
        sorted.sort();
        assert_eq!(sorted, (1..=3000).collect::<Vec<_>>());
        assert_ne!(permutation, sorted);
        let originals = (0..10_000).filter(|_| random.data_with_original().contains("ORIGINAL")).count();
        assert!((700..1300).contains(&originals), "{originals}");
    }
}

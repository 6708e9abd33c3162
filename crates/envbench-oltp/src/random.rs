//! The random values of the TPC-C specification (clause 4.3.2): uniform ranges, NURand, a-strings and n-strings, the
//! customer last names built from syllables, and the run-time constants C that NURand adds.

use envbench_base::rng::FastRng;

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

    /// Uniform in (0, 1].
    pub fn unit(&mut self) -> f64 {
        (self.rng.below(1 << 53) as f64 + 1.0) / (1u64 << 53) as f64
    }

    /// A negative-exponential think time with this mean, capped at ten times the mean (clause 5.2.5.4).
    pub fn think_seconds(&mut self, mean: f64) -> f64 {
        (-self.unit().ln() * mean).min(10.0 * mean)
    }
}

/// Keys 1..=n drawn with a Zipfian skew of exponent `theta` (`--skew zipf:THETA`), as pgbench's `random_zipfian`
/// offers: key k is drawn in proportion to 1/k^theta, so a few hot keys take most draws. Below 1, Gray et al.'s
/// method ("Quickly generating billion-record synthetic databases", 1994) over the generalized harmonic number of n;
/// above 1, Devroye's rejection method ("Non-Uniform Random Variate Generation", 1986, X.6.1), which needs none.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Zipf {
    pub n: i64,
    pub theta: f64,
    /// Below 1: zeta(n), 1 + 0.5^theta, 1/(1-theta) and Gray's eta.
    zeta_n: f64,
    two: f64,
    alpha: f64,
    eta: f64,
}

impl Zipf {
    /// The largest exponent: beyond it nearly every draw is key 1.
    pub const MAX_THETA: f64 = 5.0;
    /// The smallest exponent above 1, as pgbench's: the rejection method accepts a draw with a probability of about
    /// (theta - 1) ln n, so closer to 1 it would spin.
    pub const MIN_THETA_ABOVE_ONE: f64 = 1.001;

    /// Keys 1..=n with exponent `theta` (above 0 and below 1, or from [`Zipf::MIN_THETA_ABOVE_ONE`] to
    /// [`Zipf::MAX_THETA`]).
    pub fn new(n: i64, theta: f64) -> Zipf {
        debug_assert!(
            n >= 1 && ((theta > 0.0 && theta < 1.0) || (Zipf::MIN_THETA_ABOVE_ONE..=Zipf::MAX_THETA).contains(&theta))
        );
        let (mut zeta_n, mut two, mut alpha, mut eta) = (0.0, 0.0, 0.0, 0.0);
        if theta < 1.0 {
            zeta_n = zeta(n, theta);
            let zeta_2 = zeta(2.min(n), theta);
            two = 1.0 + 0.5f64.powf(theta);
            alpha = 1.0 / (1.0 - theta);
            eta = (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta_2 / zeta_n);
        }
        Zipf { n, theta, zeta_n, two, alpha, eta }
    }

    /// A key in 1..=n.
    pub fn draw(&self, random: &mut Random) -> i64 {
        if self.theta < 1.0 {
            let u = random.unit();
            let uz = u * self.zeta_n;
            let key = if uz < 1.0 {
                1
            } else if uz < self.two {
                2
            } else {
                1 + (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as i64
            };
            return key.clamp(1, self.n);
        }
        let b = 2f64.powf(self.theta - 1.0);
        loop {
            let (u, v) = (random.unit(), random.unit());
            let x = u.powf(-1.0 / (self.theta - 1.0)).floor();
            let t = (1.0 + 1.0 / x).powf(self.theta - 1.0);
            if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= self.n as f64 {
                return x as i64;
            }
        }
    }
}

/// The generalized harmonic number sum(1/i^theta, i = 1..=n): the first terms summed, the rest by Euler-Maclaurin
/// (exact to far below a draw's resolution), so a billion keys cost no more than a thousand.
fn zeta(n: i64, theta: f64) -> f64 {
    const EXACT: i64 = 10_000;
    let head: f64 = (1..=n.min(EXACT)).map(|i| (i as f64).powf(-theta)).sum();
    if n <= EXACT {
        return head;
    }
    let (m, n) = (EXACT as f64, n as f64);
    let integral = (n.powf(1.0 - theta) - m.powf(1.0 - theta)) / (1.0 - theta);
    head + integral
        + (n.powf(-theta) - m.powf(-theta)) / 2.0
        + theta / 12.0 * (m.powf(-theta - 1.0) - n.powf(-theta - 1.0))
}

/// The last name of a number 0..=999: the syllables of its three digits.
pub fn last_name(number: i64) -> String {
    let n = number as usize;
    format!("{}{}{}", SYLLABLES[n / 100], SYLLABLES[(n / 10) % 10], SYLLABLES[n % 10])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Key k is drawn in proportion to 1/k^theta on both sides of 1: the hottest keys take their share, every key
    /// stays in range, and the harmonic number of a billion keys costs no more than of ten thousand and agrees with
    /// the exact sum.
    #[test]
    fn zipfian_keys_follow_their_exponent() {
        let exact = |n: i64, theta: f64| (1..=n).map(|i| (i as f64).powf(-theta)).sum::<f64>();
        for theta in [0.5, 0.99, 1.5] {
            assert!((zeta(200_000, theta) / exact(200_000, theta) - 1.0).abs() < 1e-9, "theta {theta}");
        }
        let mut random = Random::new(11, NuRandConstants::load(1));
        let draws = 400_000;
        for theta in [0.8, 0.99, 1.5] {
            let n = 1000;
            let zipf = Zipf::new(n, theta);
            let mut counts = vec![0u32; n as usize + 1];
            for _ in 0..draws {
                let key = zipf.draw(&mut random);
                assert!((1..=n).contains(&key), "{key}");
                counts[key as usize] += 1;
            }
            let share = |k: usize| f64::from(counts[k]) / f64::from(draws);
            for k in [1usize, 2, 10] {
                let expected = (k as f64).powf(-theta) / exact(n, theta);
                assert!((share(k) / expected - 1.0).abs() < 0.1, "theta {theta}, key {k}: {} vs {expected}", share(k));
            }
        }
        let big = Zipf::new(1_000_000_000, 0.99);
        assert!(big.zeta_n > 20.0 && big.zeta_n.is_finite());
    }

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

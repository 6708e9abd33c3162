//! Statistics rules of the specification: keep raw samples, summarize with mean and median, show spread
//! (min..max and coefficient of variation), flag a coefficient of variation over 5% as noisy.

use serde::{Deserialize, Serialize};

/// Above this coefficient of variation a test is flagged as noisy.
pub const NOISY_CV: f64 = 0.05;

/// A summary of raw samples. `cv` is the sample standard deviation over the mean (0 for fewer than two samples).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub count: usize,
    pub mean: f64,
    pub median: f64,
    pub min: f64,
    pub max: f64,
    pub stddev: f64,
    pub cv: f64,
}

impl Summary {
    /// Summarize samples; `None` when there are none (or any is not a number).
    pub fn of(samples: &[f64]) -> Option<Summary> {
        if samples.is_empty() || samples.iter().any(|v| v.is_nan()) {
            return None;
        }
        let count = samples.len();
        let mean = samples.iter().sum::<f64>() / count as f64;
        let mut sorted = samples.to_vec();
        sorted.sort_by(f64::total_cmp);
        let median = if count % 2 == 1 { sorted[count / 2] } else { (sorted[count / 2 - 1] + sorted[count / 2]) / 2.0 };
        let stddev = if count > 1 {
            (samples.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (count - 1) as f64).sqrt()
        } else {
            0.0
        };
        let cv = if mean != 0.0 { stddev / mean.abs() } else { 0.0 };
        Some(Summary { count, mean, median, min: sorted[0], max: sorted[count - 1], stddev, cv })
    }

    /// True when the coefficient of variation exceeds 5%.
    pub fn is_noisy(&self) -> bool {
        self.cv > NOISY_CV
    }
}

/// The geometric mean of positive values; `None` when empty or when any value is not positive.
pub fn geometric_mean(values: &[f64]) -> Option<f64> {
    if values.is_empty() || values.iter().any(|v| v.is_nan() || *v <= 0.0) {
        return None;
    }
    Some((values.iter().map(|v| v.ln()).sum::<f64>() / values.len() as f64).exp())
}

/// The significance level of comparisons: a difference is reported only when its two-sided p-value is below this.
pub const SIGNIFICANCE_ALPHA: f64 = 0.05;

/// Exact p-values (no ties) are computed up to this many samples in total; the normal approximation serves above.
pub const EXACT_MAX_SAMPLES: usize = 60;

/// Exact p-values with ties enumerate every split of the pooled samples; above this many splits the normal
/// approximation (with tie correction) serves instead.
pub const EXACT_MAX_SPLITS_WITH_TIES: f64 = 200_000.0;

/// How a p-value was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PValueMethod {
    /// The exact permutation distribution of U (conditional on the ties, when there are any).
    Exact,
    /// The normal approximation with tie correction and continuity correction.
    Normal,
    /// Welch's t-test on the logarithms of the samples (a ratio test), for sample counts too small for Mann-Whitney
    /// to decide.
    WelchLog,
}

/// The outcome of a two-sided Mann-Whitney U (Wilcoxon rank-sum) test of two independent samples.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MannWhitney {
    /// U of the first sample: how many (first, second) pairs have the first value larger, ties counting one half.
    pub u_first: f64,
    /// U of the second sample; `u_first + u_second = n1 * n2`.
    pub u_second: f64,
    /// The two-sided p-value.
    pub p_value: f64,
    pub method: PValueMethod,
    /// True when some values occur more than once in the pooled samples.
    pub ties: bool,
}

impl MannWhitney {
    /// True when the difference is significant at `alpha`.
    pub fn is_significant(&self, alpha: f64) -> bool {
        self.p_value < alpha
    }
}

/// The two-sided Mann-Whitney U test. `None` when either sample is empty or holds a value that is not a number.
///
/// Exact p-values are used when there are no ties and at most [`EXACT_MAX_SAMPLES`] samples in all, or when there are
/// ties and at most [`EXACT_MAX_SPLITS_WITH_TIES`] ways to split the pooled samples; otherwise the normal
/// approximation with tie correction and continuity correction (as in most statistics packages).
pub fn mann_whitney_u(first: &[f64], second: &[f64]) -> Option<MannWhitney> {
    let (n1, n2) = (first.len(), second.len());
    if n1 == 0 || n2 == 0 || first.iter().chain(second).any(|v| v.is_nan()) {
        return None;
    }
    let ranks = mid_ranks(first.iter().chain(second).copied());
    let rank_sum_first: f64 = ranks.ranks[..n1].iter().sum();
    let u_first = rank_sum_first - (n1 * (n1 + 1)) as f64 / 2.0;
    let u_second = (n1 * n2) as f64 - u_first;
    let ties = ranks.tie_sizes.iter().any(|&t| t > 1);
    let splits = binomial(n1 + n2, n1);
    let (p_value, method) = if !ties && n1 + n2 <= EXACT_MAX_SAMPLES {
        (exact_p_without_ties(n1, n2, u_first.min(u_second)), PValueMethod::Exact)
    } else if ties && splits <= EXACT_MAX_SPLITS_WITH_TIES {
        (exact_p_with_ties(&ranks.ranks, n1, u_first), PValueMethod::Exact)
    } else {
        (normal_p(n1, n2, u_first, &ranks.tie_sizes), PValueMethod::Normal)
    };
    Some(MannWhitney { u_first, u_second, p_value: p_value.min(1.0), method, ties })
}

/// The smallest two-sided p-value a Mann-Whitney U test can give for these sample sizes (the most extreme
/// arrangement, no ties): `2 / C(n1 + n2, n1)`, at most 1.
pub fn smallest_possible_p(first_count: usize, second_count: usize) -> f64 {
    if first_count == 0 || second_count == 0 {
        return 1.0;
    }
    (2.0 / binomial(first_count + second_count, first_count)).min(1.0)
}

/// True when samples of these sizes can show a significant difference at `alpha` at all. With 3 samples a side the
/// most extreme arrangement gives p = 0.1, so 3 against 3 can never be significant at 0.05; 4 against 4 (p = 0.029),
/// 3 against 5 (0.036) and 2 against 8 (0.044) are the smallest that can.
pub fn can_reach_significance(first_count: usize, second_count: usize, alpha: f64) -> bool {
    smallest_possible_p(first_count, second_count) < alpha
}

/// Fewest samples a side for the Mann-Whitney U test; below it Welch's t-test on logarithms decides. With 4 a side
/// Mann-Whitney reaches p < 0.05 only when the samples do not overlap at all (its smallest p is 0.029); with 5 a side
/// two overlapping pairs still can (p = 0.032), so a single stray sample no longer hides a real change.
pub const MANN_WHITNEY_MIN_SAMPLES: usize = 5;

/// A change smaller than this fraction is "about the same" whatever its p-value. Two runs of the same environment
/// differ by more than their own samples' spread (another file placement, another cache state, another moment on a
/// shared host), and no test of the samples of one run per side can see that: this margin, measured by
/// `bench/verdict-calibration.sh` as what A/A pairs differ by, is what keeps false alarms below 5%.
pub const NOISE_MARGIN: f64 = 0.05;

/// The noise margin of storage workloads. Two quick disk runs of one 2-vCPU VM's virtio disk, one after the other,
/// differed by up to 15% (QD1 4K IOPS, `bench/verdict-calibration.sh`: A/A speed factors 0.847 to 1.029 over 5 pairs),
/// so at 5% two of five A/A pairs were false alarms. A 2x throttle is still found every time.
pub const STORAGE_NOISE_MARGIN: f64 = 0.20;

/// The noise margin of the OLAP cube. Its A/A pairs on a 2-vCPU VM (release build, scale 0.02, five repetitions a
/// side) differed by up to 12% (speed factors 0.880 to 1.097 over 6 pairs, 2 of them false alarms at 5%), while
/// each run's repetitions agreed within a few percent. Half the CPUs still slows it 1.3x to 1.4x, found every time.
pub const CUBE_NOISE_MARGIN: f64 = 0.15;

/// The noise margin of the analytic queries. At the quick suite's size (SF 0.1, a few seconds a run) on a 2-vCPU VM,
/// A/A pairs differed by up to 1.20x even with three runs a side taken in turn (speed factors 0.830 to 1.121 over 6
/// pairs; 0.852 to 1.057 over 8 pairs of single runs one after the other), and at 5% four of six pairs were false
/// alarms. Half the CPUs slows them 1.4x to 2.7x, found every time (`bench/verdict-calibration.sh`).
pub const TPCH_NOISE_MARGIN: f64 = 0.20;

/// The outcome of the test [`compare_samples`] chose.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct SampleTest {
    pub p_value: f64,
    pub method: PValueMethod,
}

/// The two-sided test of two independent samples that their sizes allow: Mann-Whitney U with at least
/// [`MANN_WHITNEY_MIN_SAMPLES`] a side, Welch's t-test on logarithms with 2 to 4 (positive samples only), and `None`
/// with a single sample on either side (nothing can be tested).
pub fn compare_samples(first: &[f64], second: &[f64]) -> Option<SampleTest> {
    if first.len().min(second.len()) >= MANN_WHITNEY_MIN_SAMPLES {
        return mann_whitney_u(first, second).map(|t| SampleTest { p_value: t.p_value, method: t.method });
    }
    welch_log(first, second).map(|p_value| SampleTest { p_value, method: PValueMethod::WelchLog })
}

/// Welch's two-sided t-test of the means of the samples' natural logarithms: `None` with fewer than 2 samples on
/// either side or any sample that is not positive. Samples alike on both sides give p = 1; samples without spread
/// that differ give p = 0.
pub fn welch_log(first: &[f64], second: &[f64]) -> Option<f64> {
    if first.len() < 2
        || second.len() < 2
        || first.iter().chain(second).any(|v| v.is_nan() || *v <= 0.0 || v.is_infinite())
    {
        return None;
    }
    let moments = |values: &[f64]| {
        let logs: Vec<f64> = values.iter().map(|v| v.ln()).collect();
        let n = logs.len() as f64;
        let mean = logs.iter().sum::<f64>() / n;
        let variance = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, variance / n, n)
    };
    let ((m1, v1, n1), (m2, v2, n2)) = (moments(first), moments(second));
    let standard_error = (v1 + v2).sqrt();
    if standard_error == 0.0 {
        return Some(if (m1 - m2).abs() < 1e-12 { 1.0 } else { 0.0 });
    }
    let t = (m1 - m2) / standard_error;
    Some(student_t_two_sided(t, welch_satterthwaite((v1, n1), (v2, n2))))
}

/// The Welch-Satterthwaite degrees of freedom of a difference of two means, each given as (the variance of the mean,
/// the sample count; at least 2). With no spread on either side: the pooled count less 2.
pub fn welch_satterthwaite((v1, n1): (f64, f64), (v2, n2): (f64, f64)) -> f64 {
    if v1 + v2 > 0.0 { (v1 + v2).powi(2) / (v1.powi(2) / (n1 - 1.0) + v2.powi(2) / (n2 - 1.0)) } else { n1 + n2 - 2.0 }
}

/// P(|T| > |t|) for Student's t with `df` degrees of freedom: the regularized incomplete beta I_x(df/2, 1/2) at
/// x = df / (df + t^2).
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return if t.is_nan() { f64::NAN } else { 0.0 };
    }
    regularized_incomplete_beta(df / (df + t * t), df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// The t with P(|T| > t) = `p_two_sided` for Student's t with `df` degrees of freedom (the critical value of a
/// two-sided test, and the half-width of a confidence interval in standard errors), by bisection on
/// [`student_t_two_sided`]: 12.706 for p 0.05 at df 1, 2.776 at df 4, 1.960 as df grows. `None` for a p outside
/// (0, 1) or a df that is not positive.
pub fn student_t_critical(p_two_sided: f64, df: f64) -> Option<f64> {
    if !(p_two_sided > 0.0 && p_two_sided < 1.0 && df > 0.0 && df.is_finite()) {
        return None;
    }
    // The tail only shrinks as t grows; double the upper end until it holds the answer, then halve the range.
    let (mut low, mut high) = (0.0_f64, 1.0_f64);
    while student_t_two_sided(high, df) > p_two_sided {
        high *= 2.0;
        if high > 1e12 {
            return None;
        }
    }
    for _ in 0..200 {
        let middle = (low + high) / 2.0;
        if student_t_two_sided(middle, df) > p_two_sided {
            low = middle;
        } else {
            high = middle;
        }
        if high - low < 1e-12 * high {
            break;
        }
    }
    Some((low + high) / 2.0)
}

/// I_x(a, b), by the continued fraction (modified Lentz), using the symmetry I_x(a, b) = 1 - I_{1-x}(b, a) where
/// the fraction converges slowly.
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(x, a, b) / a
    } else {
        1.0 - front * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    let tiny = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    d = if d.abs() < tiny { tiny } else { d };
    d = 1.0 / d;
    let mut f = d;
    for m in 1..1000 {
        let m = m as f64;
        for numerator in [
            m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0)),
        ] {
            d = 1.0 + numerator * d;
            d = if d.abs() < tiny { tiny } else { d };
            c = 1.0 + numerator / c;
            c = if c.abs() < tiny { tiny } else { c };
            d = 1.0 / d;
            f *= c * d;
        }
        if (c * d - 1.0).abs() < 1e-15 {
            break;
        }
    }
    f
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, 9 terms: about 1e-15 relative).
fn ln_gamma(x: f64) -> f64 {
    const COEFFICIENTS: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection: Γ(x) Γ(1 - x) = π / sin(πx).
        return (std::f64::consts::PI / (std::f64::consts::PI * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = COEFFICIENTS[0];
    for (i, c) in COEFFICIENTS.iter().enumerate().skip(1) {
        sum += c / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

/// The standard normal distribution's upper tail, P(Z > z).
pub fn normal_upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// The complementary error function, to about 1e-14 relative: the Maclaurin series of erf for small arguments, a
/// continued fraction (modified Lentz) for large ones.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.5 {
        // erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) / (n! (2n+1))
        let mut term = x;
        let mut sum = x;
        let x2 = x * x;
        for n in 1..200 {
            term *= -x2 / n as f64;
            let add = term / (2 * n + 1) as f64;
            sum += add;
            if add.abs() < 1e-17 * sum.abs() {
                break;
            }
        }
        return 1.0 - sum * 2.0 / std::f64::consts::PI.sqrt();
    }
    // erfc(x) = exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
    let tiny = 1e-300;
    let mut f = x;
    let mut c = x;
    let mut d = 0.0;
    for k in 1..500 {
        let a = k as f64 / 2.0;
        d = x + a * d;
        d = if d.abs() < tiny { tiny } else { d };
        c = x + a / c;
        c = if c.abs() < tiny { tiny } else { c };
        d = 1.0 / d;
        let delta = c * d;
        f *= delta;
        if (delta - 1.0).abs() < 1e-16 {
            break;
        }
    }
    (-x * x).exp() / std::f64::consts::PI.sqrt() / f
}

struct Ranks {
    /// The mid-rank (1-based) of each value, in input order.
    ranks: Vec<f64>,
    /// The size of every group of equal values.
    tie_sizes: Vec<usize>,
}

fn mid_ranks(values: impl Iterator<Item = f64>) -> Ranks {
    let values: Vec<f64> = values.collect();
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut tie_sizes = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && values[order[end]] == values[order[start]] {
            end += 1;
        }
        let mid_rank = (start + 1 + end) as f64 / 2.0;
        for &index in &order[start..end] {
            ranks[index] = mid_rank;
        }
        tie_sizes.push(end - start);
        start = end;
    }
    Ranks { ranks, tie_sizes }
}

/// C(n, k) as a float (exact while it fits in 53 bits, which covers every use here).
fn binomial(n: usize, k: usize) -> f64 {
    let k = k.min(n - k);
    (0..k).fold(1.0, |acc, i| acc * (n - i) as f64 / (i + 1) as f64).round()
}

/// Two-sided exact p without ties: 2 P(U <= u_min). The counts of U are the coefficients of the Gaussian binomial
/// coefficient [n1+n2 choose n1]_q = prod_{i=1..n1} (1 - q^(n2+i)) / (1 - q^i), computed in exact integers.
fn exact_p_without_ties(n1: usize, n2: usize, u_min: f64) -> f64 {
    let degree = n1 * n2;
    let mut counts = vec![0i128; degree + 1];
    counts[0] = 1;
    for i in 1..=n1 {
        let up = n2 + i;
        for k in (up..=degree).rev() {
            counts[k] -= counts[k - up];
        }
        for k in i..=degree {
            counts[k] += counts[k - i];
        }
    }
    let total: i128 = counts.iter().sum();
    let at_most = u_min.floor() as usize;
    let tail: i128 = counts[..=at_most.min(degree)].iter().sum();
    2.0 * tail as f64 / total as f64
}

/// Two-sided exact p with ties: the share of all splits of the pooled mid-ranks into groups of n1 and n2 whose U is
/// at least as far from its mean as the observed one.
fn exact_p_with_ties(ranks: &[f64], n1: usize, u_observed: f64) -> f64 {
    // Doubled mid-ranks are integers, so sums compare exactly.
    let doubled: Vec<i64> = ranks.iter().map(|r| (r * 2.0).round() as i64).collect();
    let n2 = ranks.len() - n1;
    let mean_u2 = (n1 * n2) as i64; // 2 * n1 * n2 / 2
    let offset = (n1 * (n1 + 1)) as i64; // 2 * n1 (n1 + 1) / 2
    let observed = ((2.0 * u_observed).round() as i64 - mean_u2).abs();
    let mut extreme = 0u64;
    let mut total = 0u64;
    fn walk(doubled: &[i64], start: usize, left: usize, sum: i64, check: &mut dyn FnMut(i64)) {
        if left == 0 {
            check(sum);
            return;
        }
        for i in start..=doubled.len() - left {
            walk(doubled, i + 1, left - 1, sum + doubled[i], check);
        }
    }
    walk(&doubled, 0, n1, 0, &mut |rank_sum2| {
        total += 1;
        if (rank_sum2 - offset - mean_u2).abs() >= observed {
            extreme += 1;
        }
    });
    extreme as f64 / total as f64
}

/// Two-sided p from the normal approximation, with tie correction of the variance and continuity correction.
fn normal_p(n1: usize, n2: usize, u_first: f64, tie_sizes: &[usize]) -> f64 {
    let (n1f, n2f) = (n1 as f64, n2 as f64);
    let n = n1f + n2f;
    let tie_term: f64 = tie_sizes.iter().map(|&t| (t as f64).powi(3) - t as f64).sum();
    let variance = n1f * n2f / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    if variance <= 0.0 {
        return 1.0;
    }
    let mean = n1f * n2f / 2.0;
    let u_max = u_first.max(n1f * n2f - u_first);
    let z = (u_max - mean - 0.5) / variance.sqrt();
    (2.0 * normal_upper_tail(z)).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_samples() {
        let s = Summary::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.count, 8);
        assert_eq!(s.mean, 5.0);
        assert_eq!(s.median, 4.5);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        assert!((s.stddev - 2.138089935299395).abs() < 1e-12);
        assert!((s.cv - 0.427617987059879).abs() < 1e-12);
        assert!(s.is_noisy());
    }

    #[test]
    fn single_sample_has_no_spread() {
        let s = Summary::of(&[3.0]).unwrap();
        assert_eq!((s.median, s.stddev, s.cv), (3.0, 0.0, 0.0));
        assert!(!s.is_noisy());
        assert!(Summary::of(&[]).is_none());
    }

    #[test]
    fn geometric_mean_of_known_values() {
        assert!((geometric_mean(&[1.0, 10.0, 100.0]).unwrap() - 10.0).abs() < 1e-12);
        assert!(geometric_mean(&[1.0, 0.0]).is_none());
        assert!(geometric_mean(&[]).is_none());
    }

    fn close(actual: f64, expected: f64, relative: f64) -> bool {
        ((actual - expected) / expected).abs() < relative
    }

    #[test]
    fn mann_whitney_exact_textbook_values() {
        // Reference p-values from scipy.stats.mannwhitneyu(method="exact", alternative="two-sided").
        let cases: [(&[f64], &[f64], f64, f64); 4] = [
            (&[19.0, 22.0, 16.0, 29.0, 24.0], &[20.0, 11.0, 17.0, 12.0], 17.0, 0.1111111111111111),
            (&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0], 0.0, 0.007936507936507936),
            (&[1.0, 2.0, 3.0, 4.0], &[5.0, 6.0, 7.0, 8.0], 0.0, 0.02857142857142857),
            (&[3.1, 3.4, 2.9, 3.8, 3.6, 3.3], &[2.7, 2.8, 3.0, 2.6, 3.2, 2.5], 33.0, 0.015151515151515152),
        ];
        for (first, second, u_first, p) in cases {
            let test = mann_whitney_u(first, second).unwrap();
            assert_eq!(test.u_first, u_first);
            assert_eq!(test.u_first + test.u_second, (first.len() * second.len()) as f64);
            assert_eq!(test.method, PValueMethod::Exact);
            assert!(close(test.p_value, p, 1e-12), "{} vs {p}", test.p_value);
            // The test is symmetric in its samples.
            assert!(close(mann_whitney_u(second, first).unwrap().p_value, p, 1e-12));
        }
    }

    #[test]
    fn mann_whitney_exact_with_ties_is_the_permutation_distribution() {
        // Enumerating all 252 splits of the pooled mid-ranks: 30 are at least as extreme as U = 4.5.
        let test = mann_whitney_u(&[1.0, 2.0, 2.0, 3.0, 4.0], &[2.0, 3.0, 5.0, 6.0, 6.0]).unwrap();
        assert!(test.ties);
        assert_eq!(test.u_first, 4.5);
        assert_eq!(test.method, PValueMethod::Exact);
        assert!(close(test.p_value, 30.0 / 252.0, 1e-12), "{}", test.p_value);
    }

    #[test]
    fn mann_whitney_normal_approximation_with_tie_correction() {
        // scipy.stats.mannwhitneyu(method="asymptotic"), continuity correction on; its statistic is U of the first sample.
        let first: Vec<f64> = (1..=40).map(f64::from).collect();
        let second: Vec<f64> = (1..=40).map(|x| f64::from(x) + 10.5).collect();
        let test = mann_whitney_u(&first, &second).unwrap();
        assert_eq!(test.method, PValueMethod::Normal);
        assert_eq!(test.u_first, 435.0);
        assert!(close(test.p_value, 0.00045250348643015396, 1e-9), "{}", test.p_value);

        let first = [
            5, 5, 5, 6, 6, 7, 7, 7, 8, 9, 10, 10, 11, 12, 12, 12, 13, 14, 15, 15, 15, 16, 17, 18, 19, 20, 20, 21, 22,
            23, 24, 25, 26, 27, 28, 29,
        ]
        .map(f64::from);
        let second = [
            7, 8, 9, 9, 10, 11, 11, 12, 13, 13, 14, 15, 16, 17, 17, 18, 19, 20, 21, 22, 22, 23, 24, 25, 26, 27, 28, 29,
            30, 31, 32, 33, 34, 35, 36, 37,
        ]
        .map(f64::from);
        let test = mann_whitney_u(&first, &second).unwrap();
        assert!(test.ties);
        assert_eq!(test.method, PValueMethod::Normal);
        assert_eq!(test.u_first, 401.0);
        assert!(close(test.p_value, 0.005471951815817562, 1e-9), "{}", test.p_value);
    }

    #[test]
    fn identical_samples_are_never_significant() {
        let test = mann_whitney_u(&[5.0; 6], &[5.0; 6]).unwrap();
        assert_eq!(test.p_value, 1.0);
        assert!(!test.is_significant(SIGNIFICANCE_ALPHA));
        assert!(mann_whitney_u(&[], &[1.0]).is_none());
        assert!(mann_whitney_u(&[f64::NAN], &[1.0]).is_none());
    }

    #[test]
    fn minimum_sample_sizes_for_significance() {
        assert!(close(smallest_possible_p(3, 3), 0.1, 1e-12));
        assert!(!can_reach_significance(3, 3, SIGNIFICANCE_ALPHA));
        assert!(!can_reach_significance(3, 4, SIGNIFICANCE_ALPHA));
        assert!(can_reach_significance(4, 4, SIGNIFICANCE_ALPHA));
        assert!(can_reach_significance(3, 5, SIGNIFICANCE_ALPHA));
        assert!(!can_reach_significance(2, 7, SIGNIFICANCE_ALPHA));
        assert!(can_reach_significance(2, 8, SIGNIFICANCE_ALPHA));
        assert!(!can_reach_significance(1, 30, SIGNIFICANCE_ALPHA));
    }

    #[test]
    fn error_function_and_normal_tail_known_values() {
        assert!(close(erfc(0.5), 0.4795001221869535, 1e-13));
        assert!(close(erfc(3.0), 2.2090496998585445e-05, 1e-12));
        assert!(close(erfc(-1.0), 1.8427007929497148, 1e-13));
        assert!(close(normal_upper_tail(1.96), 0.024997895148220435, 1e-12));
        assert!(close(normal_upper_tail(5.0), 2.866515718791933e-07, 1e-11));
        assert!(close(normal_upper_tail(0.0), 0.5, 1e-15));
    }

    #[test]
    fn student_t_matches_tables() {
        // Two-sided 5% critical values: df 1 -> 12.706, 4 -> 2.776, 30 -> 2.042; df 2, t 4.303 -> 0.05.
        for (t, df, p) in [(12.706_2, 1.0, 0.05), (2.776_4, 4.0, 0.05), (2.042_3, 30.0, 0.05), (4.302_7, 2.0, 0.05)] {
            assert!(close(student_t_two_sided(t, df), p, 1e-3), "t {t} df {df}: {}", student_t_two_sided(t, df));
        }
        assert!(close(student_t_two_sided(1.0, 10.0), 0.340_893_13, 1e-6));
        assert_eq!(student_t_two_sided(0.0, 5.0), 1.0);
        assert!(
            close(ln_gamma(5.0), 24f64.ln(), 1e-13) && close(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12)
        );
    }

    #[test]
    fn student_t_critical_values_match_tables() {
        for (df, t) in [(1.0, 12.706_2), (2.0, 4.302_7), (4.0, 2.776_4), (30.0, 2.042_3), (1e6, 1.960_0)] {
            let found = student_t_critical(0.05, df).unwrap();
            assert!(close(found, t, 1e-4), "df {df}: {found}");
        }
        assert!(close(student_t_critical(0.01, 5.0).unwrap(), 4.032_1, 1e-4));
        assert_eq!(student_t_critical(0.0, 5.0), None);
        assert_eq!(student_t_critical(0.05, 0.0), None);
    }

    #[test]
    fn welch_on_logarithms_decides_three_against_three() {
        // SciPy: ttest_ind(log([10, 10.2, 9.9]), log([20, 20.5, 19.7]), equal_var=False) gives p = 2.5208e-6
        // (df 3.72).
        let p = welch_log(&[10.0, 10.2, 9.9], &[20.0, 20.5, 19.7]).unwrap();
        assert!(close(p, 2.520_755_6e-6, 1e-4), "{p}");
        // The same spread and no shift: far from significant.
        let p = welch_log(&[10.0, 10.2, 9.9], &[10.1, 9.95, 10.15]).unwrap();
        assert!(p > 0.5, "{p}");
        // A ratio test: scaling both sides changes nothing.
        let scaled = welch_log(&[1000.0, 1020.0, 990.0], &[2000.0, 2050.0, 1970.0]).unwrap();
        assert!(close(scaled, welch_log(&[10.0, 10.2, 9.9], &[20.0, 20.5, 19.7]).unwrap(), 1e-9));
        assert_eq!(welch_log(&[1.0], &[2.0, 3.0]), None);
        assert_eq!(welch_log(&[1.0, 0.0], &[2.0, 3.0]), None);
        assert_eq!(welch_log(&[2.0, 2.0], &[2.0, 2.0]), Some(1.0));
        assert_eq!(welch_log(&[2.0, 2.0], &[3.0, 3.0]), Some(0.0));
    }

    #[test]
    fn the_test_follows_the_sample_count() {
        let few = compare_samples(&[10.0, 10.2, 9.9], &[20.0, 20.5, 19.7]).unwrap();
        assert_eq!(few.method, PValueMethod::WelchLog);
        assert!(few.p_value < SIGNIFICANCE_ALPHA);
        let many = compare_samples(&[1.0, 2.0, 3.0, 4.0, 5.0], &[6.0, 7.0, 8.0, 9.0, 10.0]).unwrap();
        assert_eq!(many.method, PValueMethod::Exact);
        assert!(close(many.p_value, 2.0 / 252.0, 1e-12));
        assert_eq!(compare_samples(&[1.0], &[2.0, 3.0, 4.0]), None);
    }
}

//! How numbers, factors and names read for people: a number to about four significant digits, an amount of money, a
//! speed factor or any change in its metric's own words, an interval of speed factors, a side's letter, an ordinal, and
//! the natural order of names (`Q2` before `Q10`). Every renderer and the verdict say things in these words, so this
//! module imports none of them.

use envbench_core::model::MetricKind;
use std::cmp::Ordering;

/// A number for people: about four significant digits, no exponent for everyday sizes, no trailing zeros.
pub fn number(value: f64) -> String {
    let text = fixed_number(value);
    if text.contains('.') && !text.contains('e') {
        text.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        text
    }
}

fn fixed_number(value: f64) -> String {
    let magnitude = value.abs();
    if !value.is_finite() {
        return value.to_string();
    }
    if magnitude >= 1000.0 || magnitude == 0.0 {
        format!("{value:.0}")
    } else if magnitude >= 100.0 {
        format!("{value:.1}")
    } else if magnitude >= 10.0 {
        format!("{value:.2}")
    } else if magnitude >= 1.0 {
        format!("{value:.3}")
    } else if magnitude >= 0.001 {
        format!("{value:.4}")
    } else {
        format!("{value:.2e}")
    }
}

/// A change within this factor of 1 is "about the same" in sentences.
pub(crate) const SAME_WITHIN: f64 = 0.02;

/// An amount of money for people: three significant digits, at least two decimals, never an exponent (`0.00025`,
/// `0.02`, `12.35`).
pub fn cost_number(value: f64) -> String {
    if !value.is_finite() || value <= 0.0 {
        return number(value);
    }
    let decimals = (2 - value.log10().floor() as i32).max(2) as usize;
    let text = format!("{value:.decimals$}");
    let (whole, fraction) = text.split_once('.').unwrap_or((&text, ""));
    let fraction = fraction.trim_end_matches('0');
    format!("{whole}.{fraction:0<2}")
}

/// `1.50x faster`, `1.08x slower`, `about the same` (within 2%): a speed factor in words.
pub fn speed_words(ratio: f64) -> String {
    change_words(ratio, MetricKind::Speed)
}

/// A directed ratio (above 1 is better) as a factor in the metric's words, however small: `1.18x slower`, `2.50x
/// less variable`, `1.12x better`; `same` when it rounds to 1.00x. One vocabulary for every table: never a bare
/// ratio, never a signed percent.
pub fn factor_words(ratio: f64, kind: MetricKind) -> String {
    if !ratio.is_finite() || ratio <= 0.0 {
        return "-".to_string();
    }
    let (up, down) = match kind {
        MetricKind::Speed => ("faster", "slower"),
        MetricKind::Dispersion => ("less variable", "more variable"),
        MetricKind::Other => ("better", "worse"),
    };
    let factor = if ratio >= 1.0 { ratio } else { 1.0 / ratio };
    if factor < 1.005 { "same".to_string() } else { format!("{factor:.2}x {}", if ratio >= 1.0 { up } else { down }) }
}

/// An interval of speed factors in the words of the headline: `95% interval 1.16x to 1.59x slower`, `95% interval
/// 1.05x slower to 1.12x faster`.
pub fn interval_words(interval: Option<(f64, f64)>) -> String {
    match interval {
        Some((low, high)) if low >= 1.0 => format!("95% interval {low:.2}x to {high:.2}x faster"),
        Some((low, high)) if high <= 1.0 => format!("95% interval {:.2}x to {:.2}x slower", 1.0 / high, 1.0 / low),
        Some((low, high)) => format!("95% interval {:.2}x slower to {high:.2}x faster", 1.0 / low),
        None => "no interval (one sample a side)".to_string(),
    }
}

/// The change of a metric in its own words: a speed factor for times and rates (`1.18x slower`), `2.10x less
/// variable` for a spread, `1.12x better` for anything else; `about the same` within 2%. `ratio` is directed: above 1
/// is better.
pub fn change_words(ratio: f64, kind: MetricKind) -> String {
    if !ratio.is_finite() || ratio <= 0.0 {
        return "-".to_string();
    }
    if (ratio - 1.0).abs() < SAME_WITHIN && (1.0 / ratio - 1.0).abs() < SAME_WITHIN {
        "about the same".to_string()
    } else {
        factor_words(ratio, kind)
    }
}

/// The letter naming side `index` in column headings: A..Z, then A2, B2...
pub fn side_letter(index: usize) -> String {
    let letter = char::from(b'A' + (index % 26) as u8);
    if index < 26 { letter.to_string() } else { format!("{letter}{}", index / 26 + 1) }
}

/// Compare text with runs of digits compared as numbers: `Q2` < `Q10`, `J=8` < `J=16`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (a.peek().copied(), b.peek().copied()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let take = |it: &mut std::iter::Peekable<std::str::Chars>| {
                    let mut digits = String::new();
                    while let Some(c) = it.peek().copied().filter(char::is_ascii_digit) {
                        digits.push(c);
                        it.next();
                    }
                    digits
                };
                let (da, db) = (take(&mut a), take(&mut b));
                let (ta, tb) = (da.trim_start_matches('0'), db.trim_start_matches('0'));
                let order = ta.len().cmp(&tb.len()).then_with(|| ta.cmp(tb)).then_with(|| da.len().cmp(&db.len()));
                if order != Ordering::Equal {
                    return order;
                }
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(&y);
                }
                a.next();
                b.next();
            }
        }
    }
}

/// `1st`, `2nd`, `3rd`, `11th`.
pub fn ordinal(n: usize) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_for_people() {
        assert_eq!(number(3212.8), "3213");
        assert_eq!(number(10.0), "10");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(0.1234567), "0.1235");
        assert_eq!(number(0.0), "0");
        assert_eq!(number(0.00012), "1.20e-4");
    }

    #[test]
    fn speed_in_words() {
        assert_eq!(speed_words(1.0), "about the same");
        assert_eq!(speed_words(1.015), "about the same");
        assert_eq!(speed_words(1.08), "1.08x faster");
        assert_eq!(speed_words(2.5), "2.50x faster");
        assert_eq!(speed_words(0.5), "2.00x slower");
        assert_eq!(speed_words(1.0 / 1.1), "1.10x slower");
    }

    #[test]
    fn costs_read_as_money() {
        let shown: Vec<String> = [0.0005, 0.00025, 0.02, 0.0215, 12.346, 1234.5, 2.0].map(cost_number).to_vec();
        assert_eq!(shown, ["0.0005", "0.00025", "0.02", "0.0215", "12.35", "1234.50", "2.00"]);
    }

    #[test]
    fn natural_order_of_test_names() {
        let mut names = vec!["Q10", "Q2", "Q1", "J=16", "J=2", "4 aggregation", "10 x", "Q02"];
        names.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(names, vec!["4 aggregation", "10 x", "J=2", "J=16", "Q1", "Q2", "Q02", "Q10"]);
    }

    #[test]
    fn side_letters() {
        assert_eq!(side_letter(0), "A");
        assert_eq!(side_letter(25), "Z");
        assert_eq!(side_letter(26), "A2");
    }

    #[test]
    fn ordinals() {
        assert_eq!(
            [1, 2, 3, 4, 11, 12, 13, 21, 22, 101].map(ordinal).join(" "),
            "1st 2nd 3rd 4th 11th 12th 13th 21st 22nd 101st"
        );
    }
}

//! Exchange rates for the currency conversion step: one average and one ending rate per currency, year and period,
//! in US dollars per unit of the local currency.
//!
//! Rates are derived from fixed base rates and a hashed drift using only exact arithmetic, so every machine computes
//! the same rates bit for bit.

use crate::outline::RateType;
use crate::outline::{BEG_BALANCE, STORED_PERIODS, YEAR_TOTAL};
use crate::rng::mix;

/// Local currencies of the entities, with an approximate base rate in USD per unit.
pub const CURRENCIES: [(&str, f64); 32] = [
    ("USD", 1.0),
    ("CAD", 0.75),
    ("MXN", 0.05),
    ("BRL", 0.2),
    ("ARS", 0.01),
    ("CLP", 0.0012),
    ("COP", 0.00025),
    ("PEN", 0.27),
    ("EUR", 1.1),
    ("GBP", 1.27),
    ("CHF", 1.1),
    ("SEK", 0.095),
    ("NOK", 0.095),
    ("DKK", 0.145),
    ("PLN", 0.25),
    ("CZK", 0.044),
    ("HUF", 0.0028),
    ("RON", 0.22),
    ("JPY", 0.0075),
    ("CNY", 0.14),
    ("INR", 0.012),
    ("AUD", 0.66),
    ("KRW", 0.00075),
    ("SGD", 0.74),
    ("NZD", 0.6),
    ("THB", 0.028),
    ("MYR", 0.21),
    ("AED", 0.27),
    ("ZAR", 0.054),
    ("SAR", 0.27),
    ("EGP", 0.02),
    ("TRY", 0.03),
];

/// The index of US dollars in [`CURRENCIES`].
pub const USD: u8 = 0;

/// The currency index for a code such as `EUR`.
pub fn currency_index(code: &str) -> Option<u8> {
    CURRENCIES.iter().position(|(c, _)| *c == code).map(|i| i as u8)
}

/// The ending rate of month `month` (1..=12) of year `year` (0 = FY15); month 0 of year 0 is the base rate.
fn ending_rate(currency: u8, year: usize, month: usize) -> f64 {
    let base = CURRENCIES[currency as usize].1;
    if currency == USD || (year == 0 && month == 0) {
        return base;
    }
    if month == 0 {
        return ending_rate(currency, year - 1, 12);
    }
    // A drift of at most +-4%, from a hash: exact integer arithmetic, then one division and one multiplication.
    let h = mix((currency as u64) << 32 | (year as u64) << 8 | month as u64) % 2001;
    base * (1.0 + (h as f64 - 1000.0) / 25_000.0)
}

/// The rates of one currency and year for every stored period: `[average, ending]` per stored period index.
/// BegBalance uses the opening rate (the previous year's December ending rate) for both; YearTotal is never
/// converted (it is recomputed from the converted months) and carries the December rates for completeness.
pub fn year_rates(currency: u8, year: usize) -> [[f64; 2]; STORED_PERIODS] {
    let mut rates = [[1.0; 2]; STORED_PERIODS];
    let opening = ending_rate(currency, year, 0);
    rates[BEG_BALANCE] = [opening, opening];
    for (month, rate) in rates.iter_mut().enumerate().take(13).skip(1) {
        let end = ending_rate(currency, year, month);
        let previous = ending_rate(currency, year, month - 1);
        *rate = [(previous + end) / 2.0, end];
    }
    rates[YEAR_TOTAL] = rates[12];
    rates
}

/// The rate for one cell.
pub fn rate(currency: u8, year: usize, period: usize, rate_type: RateType) -> f64 {
    match rate_type {
        RateType::Average => year_rates(currency, year)[period][0],
        RateType::Ending => year_rates(currency, year)[period][1],
        RateType::NotConverted => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usd_is_one_and_others_drift_a_little() {
        assert_eq!(rate(USD, 3, 5, RateType::Average), 1.0);
        let eur = currency_index("EUR").unwrap();
        for month in 1..=12 {
            let r = rate(eur, 2, month, RateType::Ending);
            assert!((r / 1.1 - 1.0).abs() <= 0.04 + 1e-12);
        }
        assert_eq!(rate(eur, 2, BEG_BALANCE, RateType::Ending), rate(eur, 1, 12, RateType::Ending));
        assert_eq!(rate(eur, 2, 3, RateType::NotConverted), 1.0);
    }
}

//! The share of each TPC-C transaction in a run (`--mix`), TPC-C's minimum mix by default (clause 5.2.3), and the draw
//! of each next transaction by it.

use crate::profile::Profile;
use crate::random::Random;
use crate::transactions::Kind;
use serde::{Deserialize, Serialize};

/// The share of each TPC-C transaction in a run, in percent, summing to 100 (`--mix`): TPC-C's minimum mix by default.
/// Any mix keeps the consistency conditions: they hold after any sequence of the five transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mix {
    pub new_order: u32,
    pub payment: u32,
    pub order_status: u32,
    pub delivery: u32,
    pub stock_level: u32,
}

impl Default for Mix {
    fn default() -> Mix {
        Mix::TPCC
    }
}

impl Mix {
    /// TPC-C's minimum mix (clause 5.2.3): 45% New-Order, 43% Payment, 4% each of the rest.
    pub const TPCC: Mix = Mix { new_order: 45, payment: 43, order_status: 4, delivery: 4, stock_level: 4 };

    /// `--mix` as users write it, each kind's name and share, e.g. `new-order=45,payment=43,order-status=4,delivery=4,
    /// stock-level=4`; a kind left out has no share. The shares must sum to 100, and New-Order, whose latency and
    /// rate the run is judged by, must have one.
    pub fn parse(text: &str) -> Result<Mix, String> {
        const NAMES: [&str; 5] = ["new-order", "payment", "order-status", "delivery", "stock-level"];
        let example = "e.g. --mix new-order=45,payment=43,order-status=4,delivery=4,stock-level=4";
        let mut shares: [Option<u32>; 5] = [None; 5];
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let Some((name, share)) = part.split_once('=') else {
                return Err(format!("--mix '{part}': give each transaction as NAME=PERCENT, {example}"));
            };
            let name = name.trim().to_ascii_lowercase();
            let Some(index) = NAMES.iter().position(|n| *n == name) else {
                let hint = envbench_core::text::did_you_mean(&envbench_core::text::suggestions(&name, NAMES));
                return Err(format!("--mix: '{name}' is not a TPC-C transaction; give {}{hint}", NAMES.join(", ")));
            };
            let share: u32 = share
                .trim()
                .parse()
                .ok()
                .filter(|s| *s <= 100)
                .ok_or_else(|| format!("--mix {name}={}: give a whole percent from 0 to 100", share.trim()))?;
            if shares[index].replace(share).is_some() {
                return Err(format!("--mix names {name} twice; give each transaction once"));
            }
        }
        let [new_order, payment, order_status, delivery, stock_level] = shares.map(|s| s.unwrap_or(0));
        let mix = Mix { new_order, payment, order_status, delivery, stock_level };
        let total = mix.total();
        if total != 100 {
            return Err(format!("--mix '{text}' sums to {total}%; the shares must sum to 100, {example}"));
        }
        if mix.new_order == 0 {
            return Err(format!(
                "--mix '{text}' has no New-Order, which the run's rate (NOPM) and judged latency are of; give it a share"
            ));
        }
        Ok(mix)
    }

    /// The kinds of transaction a run of `profile` with this mix runs: tpcc's that the mix gives a share (a kind it
    /// leaves out has no figures at all, rather than latencies of nothing), tpcb's one.
    pub fn kinds(&self, profile: Profile) -> Vec<Kind> {
        profile.kinds().iter().copied().filter(|&kind| profile != Profile::Tpcc || self.share(kind) > 0).collect()
    }

    /// The share of `kind`, in percent (none for a kind that is not TPC-C's).
    pub fn share(&self, kind: Kind) -> u32 {
        match kind {
            Kind::NewOrder => self.new_order,
            Kind::Payment => self.payment,
            Kind::OrderStatus => self.order_status,
            Kind::Delivery => self.delivery,
            Kind::StockLevel => self.stock_level,
            Kind::TpcB => 0,
        }
    }

    fn total(&self) -> u32 {
        self.new_order + self.payment + self.order_status + self.delivery + self.stock_level
    }

    /// The mix as `--mix` takes it.
    pub fn text(&self) -> String {
        format!(
            "new-order={},payment={},order-status={},delivery={},stock-level={}",
            self.new_order, self.payment, self.order_status, self.delivery, self.stock_level
        )
    }

    /// The next transaction: a draw from 1 to 100 falls in Order-Status, Delivery, Stock-Level, Payment and New-Order's
    /// shares in that order (so TPC-C's mix draws as it always has).
    pub fn pick(&self, random: &mut Random) -> Kind {
        let draw = random.range(1, 100) as u32;
        let mut upto = 0;
        for (share, kind) in [
            (self.order_status, Kind::OrderStatus),
            (self.delivery, Kind::Delivery),
            (self.stock_level, Kind::StockLevel),
            (self.payment, Kind::Payment),
        ] {
            upto += share;
            if draw <= upto {
                return kind;
            }
        }
        Kind::NewOrder
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::NuRandConstants;

    #[test]
    fn a_mix_is_parsed_checked_and_drawn_as_tpccs_was() {
        assert_eq!(Mix::parse(&Mix::TPCC.text()), Ok(Mix::TPCC));
        let mix = Mix::parse("New-Order=50, payment=50").unwrap();
        assert_eq!((mix.new_order, mix.payment, mix.delivery), (50, 50, 0));
        for (bad, says) in [
            ("new-order=50,payment=40", "sums to 90%"),
            ("new-order=45,paymnt=55", "did you mean payment?"),
            ("new-order=50,new-order=50", "twice"),
            ("payment=100", "no New-Order"),
            ("new-order=lots", "whole percent"),
            ("new-order", "NAME=PERCENT"),
        ] {
            let error = Mix::parse(bad).unwrap_err();
            assert!(error.contains(says), "{bad}: {error}");
        }
        // TPC-C's mix draws the same transactions as the fixed draw before --mix.
        let (mut a, mut b) = (Random::new(7, NuRandConstants::load(7)), Random::new(7, NuRandConstants::load(7)));
        for _ in 0..2_000 {
            let kind = match a.range(1, 100) {
                1..=4 => Kind::OrderStatus,
                5..=8 => Kind::Delivery,
                9..=12 => Kind::StockLevel,
                13..=55 => Kind::Payment,
                _ => Kind::NewOrder,
            };
            assert_eq!(Mix::TPCC.pick(&mut b), kind);
        }
        let only = Mix::parse("new-order=50,payment=50").unwrap();
        assert!((0..500).all(|_| matches!(only.pick(&mut b), Kind::NewOrder | Kind::Payment)));
    }
}

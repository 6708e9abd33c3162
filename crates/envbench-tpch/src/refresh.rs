//! The rows of the refresh functions: RF1 inserts SF * 1500 new orders with their lineitems, RF2 deletes them.
//!
//! New rows are made deterministically from tpchgen's rows of one 1/1000 slice of the orders (so about SF * 1500
//! orders and four times as many lineitems), moved to order keys the base data never uses: tpchgen, like dbgen,
//! keeps only keys whose low five bits are 0..7, and the update set moves each key up by 8, 16 or 24. RF2 deletes
//! the orders RF1 inserted (the specification deletes older orders instead; the work — the same number of orders and
//! their lineitems deleted by key — is the same), so the loaded data is unchanged after a power test and can be
//! reused by the next run.

use std::fmt::Write as _;
use tpchgen::csv::{LineItemCsv, OrderCsv};
use tpchgen::generators::{LineItemGenerator, OrderGenerator};

/// The order slices the base data is cut into; one slice is SF * 1500 orders.
const SLICES: i32 = 1000;

/// The rows of one update set.
#[derive(Clone, Debug, PartialEq)]
pub struct UpdateSet {
    /// 1-based, as in the specification.
    pub number: u32,
    pub scale_factor: f64,
    /// The keys of the new orders.
    pub order_keys: Vec<i64>,
}

impl UpdateSet {
    /// Update set `number` (1-based) at a scale factor.
    pub fn new(scale_factor: f64, number: u32) -> UpdateSet {
        let (slice, shift) = Self::slice_and_shift(number);
        let order_keys =
            OrderGenerator::new(scale_factor, slice, SLICES).iter().map(|o| o.o_orderkey + shift).collect();
        UpdateSet { number, scale_factor, order_keys }
    }

    fn slice_and_shift(number: u32) -> (i32, i64) {
        let index = number.max(1) - 1;
        ((index % SLICES as u32) as i32 + 1, 8 * (1 + i64::from(index / SLICES as u32 % 3)))
    }

    /// The new orders as CSV lines (the column order of the orders table).
    pub fn orders_csv(&self) -> String {
        let (slice, shift) = Self::slice_and_shift(self.number);
        let mut text = String::new();
        for mut order in OrderGenerator::new(self.scale_factor, slice, SLICES).iter() {
            order.o_orderkey += shift;
            let _ = writeln!(text, "{}", OrderCsv::new(order));
        }
        text
    }

    /// The new orders' lineitems as CSV lines.
    pub fn lineitems_csv(&self) -> String {
        let (slice, shift) = Self::slice_and_shift(self.number);
        let mut text = String::new();
        for mut line in LineItemGenerator::new(self.scale_factor, slice, SLICES).iter() {
            line.l_orderkey += shift;
            let _ = writeln!(text, "{}", LineItemCsv::new(line));
        }
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_sets_use_keys_the_base_data_never_has() {
        let set = UpdateSet::new(1.0, 1);
        assert_eq!(set.order_keys.len(), 1500);
        assert!(set.order_keys.iter().all(|k| (8..16).contains(&(k & 31))));
        let base: Vec<i64> = OrderGenerator::new(1.0, 1, 1).iter().take(100_000).map(|o| o.o_orderkey).collect();
        assert!(base.iter().all(|k| (k & 31) < 8));
        assert_eq!(set.orders_csv().lines().count(), 1500);
        let lines = set.lineitems_csv();
        assert!(lines.lines().count() > 1500 * 3);
        let first_key: i64 = lines.split(',').next().unwrap().parse().unwrap();
        assert_eq!(first_key, set.order_keys[0]);
        assert_eq!(UpdateSet::new(1.0, 1), set);
        assert_ne!(UpdateSet::new(1.0, 2).order_keys, set.order_keys);
    }
}

//! Calculations: aggregation of the sparse hierarchies, the allocation, and currency conversion.
//!
//! Aggregation builds every stored upper-level block as the sum of its children, bottom-up, in two passes: first
//! Product (for each level-0 entity: SKU blocks into family blocks, families into lines, lines and NoProduct into
//! Product), then Entity (for each product member at any level: entities into divisions, into countries, regions
//! and TotalEntity). Each pass splits into independent groups (one per sparse combination of the other
//! dimensions), spread over `calc_threads` threads, largest first.
//!
//! Allocation rounding rule: the pool of a slice and month is taken in whole cents `P`; each level-0 block's driver
//! (GrossSales, whole cents, only when above zero) is `w_i` with total `W`. Block `i` receives
//! `floor(P * w_i / W)` cents, and the `P - sum(floor)` cents left over go one each to the blocks with the largest
//! remainders `P * w_i mod W` (ties to the lower block key). The shares therefore add up to the pool exactly. A
//! negative pool is allocated by the same rule on its magnitude.

use crate::block::{Cells, MISSING, add_block, add_missing_aware, empty_cells, is_missing, present_cells};
use crate::cube::Cube;
use crate::error::CubeError;
use crate::outline::RateType;
use crate::outline::{Dim, MemberId, Outline, STORED_PERIODS, SparseKey, TimeBalance, YEAR_TOTAL};
use crate::parallel::{check_cancel, for_each_unit};
use crate::rates;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// The FIXPARALLEL limit: allocation uses at most this many threads.
pub const MAX_FIX_THREADS: usize = 8;
const KEYS_PER_UNIT: usize = 128;

/// What a calculation wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalcReport {
    pub blocks_written: u64,
    /// Present cells in the blocks written.
    pub cells_written: u64,
}

/// What the allocation did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AllocationReport {
    /// Slices with a pool and at least one positive driver.
    pub slices: u64,
    /// The pools of those slices, in cents.
    pub pool_cents: i128,
    /// What was written, in cents (always equal to `pool_cents`).
    pub allocated_cents: i128,
    /// Level-0 blocks that received a share.
    pub blocks_written: u64,
    pub cells_written: u64,
}

/// Recompute YearTotal of one account row from its months.
fn recompute_year_total_row(outline: &Outline, cells: &mut [f64], row: usize) {
    let base = row * STORED_PERIODS;
    cells[base + YEAR_TOTAL] = match outline.account_info(row).time_balance {
        TimeBalance::Flow => cells[base + 1..base + 13].iter().fold(MISSING, |t, &v| add_missing_aware(t, v)),
        TimeBalance::Last => cells[base + 12],
    };
}

/// Split `pool` cents over `weights` by the largest-remainder rule of the module documentation.
pub(crate) fn largest_remainder(pool: i128, weights: &[i64]) -> Vec<i64> {
    let total: i128 = weights.iter().map(|&w| i128::from(w.max(0))).sum();
    if total == 0 {
        return vec![0; weights.len()];
    }
    let magnitude = pool.abs();
    let mut shares = Vec::with_capacity(weights.len());
    let mut remainders = Vec::with_capacity(weights.len());
    let mut given: i128 = 0;
    for (i, &w) in weights.iter().enumerate() {
        let product = magnitude * i128::from(w.max(0));
        let share = product / total;
        given += share;
        shares.push(share);
        remainders.push((product % total, i));
    }
    let leftover = (magnitude - given) as usize;
    remainders.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in remainders.iter().take(leftover) {
        shares[i] += 1;
    }
    let sign = if pool < 0 { -1 } else { 1 };
    shares.into_iter().map(|s| (s * sign) as i64).collect()
}

/// Cents of a stored value.
fn to_cents(value: f64) -> i64 {
    (value * 100.0).round() as i64
}

impl Cube {
    /// Aggregate Product, then Entity (steps 4 and 6).
    pub fn aggregate(&self, calc_threads: usize, cancel: &AtomicBool) -> Result<CalcReport, CubeError> {
        let products = self.aggregate_dimension(Dim::Product, calc_threads, cancel)?;
        let entities = self.aggregate_dimension(Dim::Entity, calc_threads, cancel)?;
        Ok(CalcReport {
            blocks_written: products.blocks_written + entities.blocks_written,
            cells_written: products.cells_written + entities.cells_written,
        })
    }

    fn aggregate_dimension(&self, dim: Dim, threads: usize, cancel: &AtomicBool) -> Result<CalcReport, CubeError> {
        const STEP: &str = "aggregation";
        let outline = self.outline_arc();
        let members = outline.dim(dim);
        let entities = outline.dim(Dim::Entity);
        let store = self.store();
        // Children: level-0 members of `dim`; the Product pass works on level-0 entities only (Entity parents are
        // built afterwards from every product member).
        let mut children: Vec<(u64, u64)> = store
            .keys()
            .into_iter()
            .map(SparseKey)
            .filter(|k| members.member(k.member(dim)).level == 0 && members.member(k.member(dim)).parent.is_some())
            .filter(|k| dim != Dim::Product || entities.member(k.member(Dim::Entity)).level == 0)
            .map(|k| (k.with(dim, 0).0, k.0))
            .collect();
        children.sort_unstable();
        let mut groups: Vec<&[(u64, u64)]> = children.chunk_by(|a, b| a.0 == b.0).collect();
        groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
        let blocks_written = AtomicU64::new(0);
        let cells_written = AtomicU64::new(0);
        // Blocks of the Product pass are read again by the Entity pass, so keep them cached.
        let keep_in_cache = dim == Dim::Product;
        let cells_per_block = outline.cells_per_block();
        for_each_unit(
            threads,
            groups.len(),
            cancel,
            STEP,
            || (),
            |_, unit| {
                let group = groups[unit];
                let base = SparseKey(group[0].0);
                let mut totals: BTreeMap<(u8, MemberId), Cells> = BTreeMap::new();
                for (n, &(_, child)) in group.iter().enumerate() {
                    if n % 64 == 63 {
                        check_cancel(cancel, STEP)?;
                    }
                    let member = SparseKey(child).member(dim);
                    let Some(parent) = members.member(member).parent.filter(|&p| members.member(p).is_stored()) else {
                        continue;
                    };
                    let total = totals
                        .entry((members.member(parent).level, parent))
                        .or_insert_with(|| empty_cells(cells_per_block));
                    store.add_into(child, total)?;
                }
                while let Some(((_, member), cells)) = totals.pop_first() {
                    check_cancel(cancel, STEP)?;
                    if let Some(parent) = members.member(member).parent.filter(|&p| members.member(p).is_stored()) {
                        let total = totals
                            .entry((members.member(parent).level, parent))
                            .or_insert_with(|| empty_cells(cells_per_block));
                        add_block(total, &cells);
                    }
                    cells_written.fetch_add(u64::from(present_cells(&cells)), Ordering::Relaxed);
                    blocks_written.fetch_add(1, Ordering::Relaxed);
                    store.write(base.with(dim, member).0, cells, keep_in_cache)?;
                }
                Ok(())
            },
        )?;
        Ok(CalcReport { blocks_written: blocks_written.into_inner(), cells_written: cells_written.into_inner() })
    }

    /// Distribute the OverheadPool held at TotalEntity / Product to the level-0 blocks of each slice in proportion
    /// to GrossSales, into AllocatedOverhead (step 5), with at most [`MAX_FIX_THREADS`] threads.
    pub fn allocate(&self, fix_threads: usize, cancel: &AtomicBool) -> Result<AllocationReport, CubeError> {
        const STEP: &str = "allocation";
        let outline = self.outline_arc();
        let store = self.store();
        let threads = fix_threads.clamp(1, MAX_FIX_THREADS);
        let key_members = outline.key_members();
        let entities = outline.dim(Dim::Entity);
        let products = outline.dim(Dim::Product);
        let driver_row = outline.account_row(key_members.gross_sales).expect("stored");
        let pool_row = outline.account_row(key_members.overhead_pool).expect("stored");
        let target_row = outline.account_row(key_members.allocated_overhead).expect("stored");
        let targets: Vec<SparseKey> = store
            .keys()
            .into_iter()
            .map(SparseKey)
            .filter(|k| {
                k.member(Dim::Currency) == key_members.local
                    && entities.member(k.member(Dim::Entity)).level == 0
                    && products.member(k.member(Dim::Product)).level == 0
            })
            .collect();

        // 1. Every target's driver, in cents (0 when missing or not positive).
        let units = targets.len().div_ceil(KEYS_PER_UNIT);
        let drivers: Vec<Mutex<Vec<[i64; 12]>>> = (0..units).map(|_| Mutex::new(Vec::new())).collect();
        let cells_per_block = outline.cells_per_block();
        for_each_unit(
            threads,
            units,
            cancel,
            STEP,
            || empty_cells(cells_per_block),
            |scratch, unit| {
                let keys = &targets[unit * KEYS_PER_UNIT..((unit + 1) * KEYS_PER_UNIT).min(targets.len())];
                let mut out = Vec::with_capacity(keys.len());
                for key in keys {
                    store.read_into(key.0, scratch)?;
                    out.push(std::array::from_fn(|m| {
                        let v = scratch[driver_row * STORED_PERIODS + m + 1];
                        if is_missing(v) { 0 } else { to_cents(v).max(0) }
                    }));
                }
                *drivers[unit].lock().expect("driver slot") = out;
                Ok(())
            },
        )?;
        let drivers: Vec<[i64; 12]> = drivers.into_iter().flat_map(|d| d.into_inner().expect("driver slot")).collect();

        // 2. Shares per slice and month, by the largest-remainder rule.
        let mut shares: Vec<[Option<i64>; 12]> = vec![[None; 12]; targets.len()];
        let mut report = AllocationReport::default();
        let mut start = 0;
        while start < targets.len() {
            let slice = targets[start].slice();
            let end = start + targets[start..].iter().take_while(|k| k.slice() == slice).count();
            let pool_key =
                targets[start].with(Dim::Entity, key_members.total_entity).with(Dim::Product, key_members.product_root);
            let mut allocated_here = false;
            if let Some(pool_block) = store.read(pool_key.0)? {
                for month in 0..12 {
                    let pool = pool_block[pool_row * STORED_PERIODS + month + 1];
                    let weights: Vec<i64> = drivers[start..end].iter().map(|d| d[month]).collect();
                    if is_missing(pool) || weights.iter().all(|&w| w == 0) {
                        continue;
                    }
                    let pool_cents = i128::from(to_cents(pool));
                    let split = largest_remainder(pool_cents, &weights);
                    for (i, share) in split.into_iter().enumerate() {
                        if weights[i] > 0 {
                            shares[start + i][month] = Some(share);
                            report.allocated_cents += i128::from(share);
                        }
                    }
                    report.pool_cents += pool_cents;
                    allocated_here = true;
                }
            }
            report.slices += u64::from(allocated_here);
            start = end;
        }

        // 3. Write the shares into the targets.
        let blocks_written = AtomicU64::new(0);
        let cells_written = AtomicU64::new(0);
        for_each_unit(
            threads,
            units,
            cancel,
            STEP,
            || (),
            |_, unit| {
                let range = unit * KEYS_PER_UNIT..((unit + 1) * KEYS_PER_UNIT).min(targets.len());
                for i in range {
                    if shares[i].iter().all(Option::is_none) {
                        continue;
                    }
                    store.update(targets[i].0, false, |cells| {
                        for (month, share) in shares[i].iter().enumerate() {
                            if let Some(cents) = share {
                                cells[target_row * STORED_PERIODS + month + 1] = *cents as f64 / 100.0;
                            }
                        }
                        recompute_year_total_row(&outline, cells, target_row);
                    })?;
                    blocks_written.fetch_add(1, Ordering::Relaxed);
                    cells_written.fetch_add(shares[i].iter().flatten().count() as u64, Ordering::Relaxed);
                }
                Ok(())
            },
        )?;
        report.blocks_written = blocks_written.into_inner();
        report.cells_written = cells_written.into_inner();
        Ok(report)
    }

    /// Write the USD block of every Local block (step 7): each cell times the rate of the entity's currency, year
    /// and period (average for flows, ending for balances, statistics copied), YearTotal recomputed.
    pub fn convert_currency(&self, calc_threads: usize, cancel: &AtomicBool) -> Result<CalcReport, CubeError> {
        const STEP: &str = "currency conversion";
        let outline = self.outline_arc();
        let store = self.store();
        let key_members = outline.key_members();
        let sources: Vec<SparseKey> =
            store.keys().into_iter().map(SparseKey).filter(|k| k.member(Dim::Currency) == key_members.local).collect();
        let years = outline.dim(Dim::Years).len();
        let table: Vec<Vec<[[f64; 2]; STORED_PERIODS]>> =
            (0..rates::CURRENCIES.len()).map(|c| (0..years).map(|y| rates::year_rates(c as u8, y)).collect()).collect();
        let row_rates: Vec<RateType> = (0..outline.stored_accounts()).map(|r| outline.account_info(r).rate).collect();
        let cells_per_block = outline.cells_per_block();
        let units = sources.len().div_ceil(KEYS_PER_UNIT / 2);
        let per_unit = KEYS_PER_UNIT / 2;
        let cells_written = AtomicU64::new(0);
        for_each_unit(
            calc_threads,
            units,
            cancel,
            STEP,
            || empty_cells(cells_per_block),
            |local, unit| {
                for key in &sources[unit * per_unit..((unit + 1) * per_unit).min(sources.len())] {
                    store.read_into(key.0, local)?;
                    let entity = key.member(Dim::Entity);
                    let currency = outline.entity_currency(entity).unwrap_or(rates::USD);
                    let year_rates = &table[usize::from(currency)][key.member(Dim::Years) as usize];
                    let usd = convert_block(local, &row_rates, year_rates);
                    let mut usd = usd;
                    crate::block::recompute_year_totals(&outline, &mut usd);
                    cells_written.fetch_add(u64::from(present_cells(&usd)), Ordering::Relaxed);
                    store.write(key.with(Dim::Currency, key_members.usd).0, usd, false)?;
                }
                Ok(())
            },
        )?;
        Ok(CalcReport { blocks_written: sources.len() as u64, cells_written: cells_written.into_inner() })
    }
}

/// Convert one block's BegBalance..Dec cells; YearTotal is left missing for the caller to recompute.
fn convert_block(local: &[f64], row_rates: &[RateType], year_rates: &[[f64; 2]; STORED_PERIODS]) -> Cells {
    let mut usd = empty_cells(local.len());
    for (row, rate_type) in row_rates.iter().enumerate() {
        let base = row * STORED_PERIODS;
        for period in 0..YEAR_TOTAL {
            let value = local[base + period];
            if is_missing(value) {
                continue;
            }
            usd[base + period] = match rate_type {
                RateType::Average => value * year_rates[period][0],
                RateType::Ending => value * year_rates[period][1],
                RateType::NotConverted => value,
            };
        }
    }
    usd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn largest_remainder_conserves_the_pool_exactly() {
        let weights = [3, 3, 3, 0, 7, 1];
        for pool in [0i128, 1, 10, 100, 12_345_678, -999] {
            let shares = largest_remainder(pool, &weights);
            assert_eq!(shares.iter().map(|&s| i128::from(s)).sum::<i128>(), pool, "pool {pool}");
            assert_eq!(shares[3], 0, "a zero driver gets nothing");
        }
        assert_eq!(largest_remainder(10, &[1, 1, 1]), vec![4, 3, 3], "ties go to the first");
        assert_eq!(largest_remainder(5, &[0, 0]), vec![0, 0]);
    }
}

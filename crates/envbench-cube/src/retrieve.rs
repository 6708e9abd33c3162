//! Retrieval: one cell (`get`) or a small grid, as users check their data.
//!
//! A cell names one member of every dimension. Stored members read stored cells; dynamic members are computed on
//! the fly: dense parents from their children (with their consolidation signs), ratio members from their
//! operands (after every sparse sum, so a ratio of a dynamic sparse member is still the ratio of sums), quarters by
//! time balance (flows sum their months, balances take the last month), the Period root as its YearTotal, and
//! dynamic sparse members (Entity, Segments, SEG_nn) as the sum of the stored members they roll up or reference.
//! Upper-level stored sparse members hold data only after aggregation.

use crate::block::{Cells, MISSING, add_missing_aware, is_missing, present};
use crate::cube::Cube;
use crate::error::CubeError;
use crate::outline::{Dim, Formula, MemberId, Outline, SparseKey, Storage, TimeBalance};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

const MAX_GRID_SIDE: usize = 200;
const SMALL_DIMENSION: usize = 40;

/// Parse `Dim=Member, Dim=Member, ...` into member ids (each dimension at most once).
fn parse_assignments(outline: &Outline, text: &str) -> Result<[Option<MemberId>; 8], CubeError> {
    let mut members = [None; 8];
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (dim, member) = part
            .split_once('=')
            .ok_or_else(|| CubeError::Query(format!("'{part}' is not Dimension=Member (e.g. Entity=TotalEntity)")))?;
        let dim = Dim::parse(dim)?;
        let id = outline.dim(dim).lookup(member.trim().trim_matches('"'))?;
        if members[dim.index()].replace(id).is_some() {
            return Err(CubeError::Query(format!("{} is given twice", dim.name())));
        }
    }
    Ok(members)
}

/// The stored members a sparse member stands for, with the sign each contributes.
fn expand_sparse(outline: &Outline, dim: Dim, member: MemberId, sign: f64, out: &mut Vec<(MemberId, f64)>) {
    let dimension = outline.dim(dim);
    let m = dimension.member(member);
    if m.storage == Storage::Stored {
        out.push((member, sign));
    } else if let Some(Formula::Sum(references)) = &m.formula {
        for &r in references {
            expand_sparse(outline, dim, r, sign, out);
        }
    } else {
        for &child in &m.children {
            if let Some(s) = dimension.member(child).consolidation.sign() {
                expand_sparse(outline, dim, child, sign * s, out);
            }
        }
    }
}

/// The blocks of one cell's sparse combination and the dense arithmetic over them.
struct Evaluator<'a> {
    outline: &'a Outline,
    blocks: Vec<(Arc<Cells>, f64)>,
}

impl Evaluator<'_> {
    /// A stored cell summed over the sparse combination.
    fn stored(&self, row: usize, period: usize) -> f64 {
        let cell = Outline::cell(row, period);
        self.blocks.iter().fold(MISSING, |total, (block, sign)| {
            let v = block[cell];
            if is_missing(v) { total } else { add_missing_aware(total, sign * v) }
        })
    }

    fn value(&self, account: MemberId, period: MemberId) -> f64 {
        let accounts = self.outline.dim(Dim::Account);
        let a = accounts.member(account);
        if let Some(row) = a.stored_index {
            let time_balance = a.account.map_or(TimeBalance::Flow, |i| i.time_balance);
            return self.period_value(row as usize, time_balance, period);
        }
        match &a.formula {
            Some(Formula::Ratio { numerator, denominator, scale }) => {
                let (n, d) = (self.value(*numerator, period), self.value(*denominator, period));
                if is_missing(n) || is_missing(d) || d == 0.0 { MISSING } else { n / d * scale }
            }
            Some(Formula::Sum(references)) => {
                references.iter().fold(MISSING, |t, &r| add_missing_aware(t, self.value(r, period)))
            }
            None => {
                a.children.iter().fold(MISSING, |total, &child| match accounts.member(child).consolidation.sign() {
                    Some(sign) => {
                        let v = self.value(child, period);
                        if is_missing(v) { total } else { add_missing_aware(total, sign * v) }
                    }
                    None => total,
                })
            }
        }
    }

    fn period_value(&self, row: usize, time_balance: TimeBalance, period: MemberId) -> f64 {
        let periods = self.outline.dim(Dim::Period);
        let p = periods.member(period);
        if let Some(stored) = p.stored_index {
            return self.stored(row, stored as usize);
        }
        let months_only = p.children.iter().all(|&c| periods.member(c).level == 0);
        if months_only {
            return match time_balance {
                TimeBalance::Flow => p
                    .children
                    .iter()
                    .fold(MISSING, |t, &c| add_missing_aware(t, self.period_value(row, time_balance, c))),
                TimeBalance::Last => {
                    self.period_value(row, time_balance, *p.children.last().expect("a quarter has months"))
                }
            };
        }
        p.children.iter().fold(MISSING, |total, &child| match periods.member(child).consolidation.sign() {
            Some(sign) => {
                let v = self.period_value(row, time_balance, child);
                if is_missing(v) { total } else { add_missing_aware(total, sign * v) }
            }
            None => total,
        })
    }
}

/// What a retrieval returned.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retrieved {
    /// Every cell; `None` is #Missing.
    pub values: Vec<Option<f64>>,
    /// Blocks read (from the data cache or the page files) to compute them.
    pub blocks_read: u64,
}

/// A small grid of values: one member per row and column, every other dimension fixed by the point of view.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    /// `(dimension, member)` of the point of view.
    pub pov: Vec<(String, String)>,
    pub row_dimension: String,
    pub column_dimension: String,
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    /// `values[row][column]`; `None` is #Missing.
    pub values: Vec<Vec<Option<f64>>>,
}

impl std::fmt::Display for Grid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pov: Vec<String> = self.pov.iter().map(|(d, m)| format!("{d}={m}")).collect();
        writeln!(f, "{}", pov.join(", "))?;
        let first = self.rows.iter().map(String::len).chain([self.row_dimension.len()]).max().unwrap_or(0);
        let cells: Vec<Vec<String>> = self
            .values
            .iter()
            .map(|row| row.iter().map(|v| v.map_or("#Missing".to_string(), |v| format!("{v:.2}"))).collect())
            .collect();
        let widths: Vec<usize> = (0..self.columns.len())
            .map(|c| cells.iter().map(|r| r[c].len()).chain([self.columns[c].len()]).max().unwrap_or(0))
            .collect();
        write!(f, "{:<first$}", self.row_dimension)?;
        for (name, width) in self.columns.iter().zip(&widths) {
            write!(f, "  {name:>width$}")?;
        }
        writeln!(f)?;
        for (name, row) in self.rows.iter().zip(&cells) {
            write!(f, "{name:<first$}")?;
            for (value, width) in row.iter().zip(&widths) {
                write!(f, "  {value:>width$}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl Cube {
    /// The value of one cell, e.g. `get("Years=FY19, Scenario=Actual, Version=Final, Currency=USD,
    /// Entity=TotalEntity, Product=Product, Account=NetIncome, Period=Q1")`. `None` is #Missing.
    pub fn get(&self, query: &str) -> Result<Option<f64>, CubeError> {
        let members = parse_assignments(self.outline(), query)?;
        let missing: Vec<&str> = Dim::ALL.iter().filter(|d| members[d.index()].is_none()).map(|d| d.name()).collect();
        if !missing.is_empty() {
            return Err(CubeError::Query(format!(
                "no member given for {}: name one member of every dimension, e.g. Years=FY19, Scenario=Actual, \
                 Version=Final, Currency=USD, Entity=TotalEntity, Product=Product, Account=NetIncome, Period=YearTotal",
                missing.join(", ")
            )));
        }
        self.value(members.map(|m| m.expect("checked")))
    }

    /// The value of the cell with these members (indexed by [`Dim::index`]).
    pub fn value(&self, members: [MemberId; 8]) -> Result<Option<f64>, CubeError> {
        let evaluator = self.evaluator(&members)?;
        Ok(present(evaluator.value(members[Dim::Account.index()], members[Dim::Period.index()])))
    }

    /// Every cell of a grid given as one member list per dimension (indexed by [`Dim::index`]), as a front end
    /// retrieves it: each sparse combination's blocks are read once and every dense cell computed from them. Values
    /// come in the order of the sparse dimensions' combinations (the last sparse dimension fastest), then account,
    /// then period.
    pub fn retrieve(&self, members: &[Vec<MemberId>; 8]) -> Result<Retrieved, CubeError> {
        let sparse: Vec<&[MemberId]> = Dim::SPARSE.iter().map(|d| members[d.index()].as_slice()).collect();
        let (accounts, periods) = (&members[Dim::Account.index()], &members[Dim::Period.index()]);
        let mut retrieved = Retrieved::default();
        if sparse.iter().chain([&accounts.as_slice(), &periods.as_slice()]).any(|list| list.is_empty()) {
            return Ok(retrieved);
        }
        let mut position = vec![0usize; sparse.len()];
        loop {
            let mut cell = [0; 8];
            for (slot, dim) in Dim::SPARSE.iter().enumerate() {
                cell[dim.index()] = sparse[slot][position[slot]];
            }
            let evaluator = self.evaluator(&cell)?;
            retrieved.blocks_read += evaluator.blocks.len() as u64;
            for &account in accounts {
                for &period in periods {
                    retrieved.values.push(present(evaluator.value(account, period)));
                }
            }
            // The next combination, the last sparse dimension fastest.
            let mut slot = sparse.len();
            loop {
                if slot == 0 {
                    return Ok(retrieved);
                }
                slot -= 1;
                position[slot] += 1;
                if position[slot] < sparse[slot].len() {
                    break;
                }
                position[slot] = 0;
            }
        }
    }

    /// The blocks of the sparse combination of `members`, ready to compute any dense cell.
    fn evaluator(&self, members: &[MemberId; 8]) -> Result<Evaluator<'_>, CubeError> {
        let outline = self.outline();
        let mut combinations: Vec<([MemberId; 6], f64)> = vec![([0; 6], 1.0)];
        for dim in Dim::SPARSE {
            let mut expanded = Vec::new();
            expand_sparse(outline, dim, members[dim.index()], 1.0, &mut expanded);
            combinations = combinations
                .iter()
                .flat_map(|(key, sign)| {
                    expanded.iter().map(move |&(member, s)| {
                        let mut key = *key;
                        key[dim.sparse_slot()] = member;
                        (key, sign * s)
                    })
                })
                .collect();
        }
        let mut blocks = Vec::new();
        for (key, sign) in combinations {
            if let Some(block) = self.store().read(SparseKey::new(key).0)? {
                blocks.push((block, sign));
            }
        }
        Ok(Evaluator { outline, blocks })
    }

    /// A grid: `pov` fixes every dimension but the row and column ones; `rows` and `columns` are a dimension
    /// (all its members when it is small, else its top members and their children) or `Dim=Member` (the member's
    /// children, then the member).
    pub fn grid(&self, pov: &str, rows: &str, columns: &str) -> Result<Grid, CubeError> {
        let outline = self.outline();
        let (row_dim, row_members) = self.selection(rows)?;
        let (column_dim, column_members) = self.selection(columns)?;
        if row_dim == column_dim {
            return Err(CubeError::Query(format!("{} cannot be on both rows and columns", row_dim.name())));
        }
        let fixed = parse_assignments(outline, pov)?;
        for dim in [row_dim, column_dim] {
            if fixed[dim.index()].is_some() {
                return Err(CubeError::Query(format!(
                    "{} is on the grid and in the point of view: leave it out of the point of view",
                    dim.name()
                )));
            }
        }
        let missing: Vec<&str> = Dim::ALL
            .iter()
            .filter(|d| **d != row_dim && **d != column_dim && fixed[d.index()].is_none())
            .map(|d| d.name())
            .collect();
        if !missing.is_empty() {
            return Err(CubeError::Query(format!(
                "the point of view needs a member of {} (every dimension not on the grid)",
                missing.join(", ")
            )));
        }
        let mut values = Vec::with_capacity(row_members.len());
        for &r in &row_members {
            let mut line = Vec::with_capacity(column_members.len());
            for &c in &column_members {
                let mut members = fixed;
                members[row_dim.index()] = Some(r);
                members[column_dim.index()] = Some(c);
                line.push(self.value(members.map(|m| m.expect("every dimension is set")))?);
            }
            values.push(line);
        }
        let names = |dim: Dim, ids: &[MemberId]| -> Vec<String> {
            ids.iter().map(|&id| outline.dim(dim).member(id).name.clone()).collect()
        };
        Ok(Grid {
            pov: Dim::ALL
                .iter()
                .filter_map(|d| {
                    fixed[d.index()].map(|m| (d.name().to_string(), outline.dim(*d).member(m).name.clone()))
                })
                .collect(),
            row_dimension: row_dim.name().to_string(),
            column_dimension: column_dim.name().to_string(),
            rows: names(row_dim, &row_members),
            columns: names(column_dim, &column_members),
            values,
        })
    }

    /// The members of one grid axis.
    fn selection(&self, text: &str) -> Result<(Dim, Vec<MemberId>), CubeError> {
        let outline = self.outline();
        let (dim, members) = match text.split_once('=') {
            None => {
                let dim = Dim::parse(text)?;
                let dimension = outline.dim(dim);
                let members: Vec<MemberId> = if dimension.len() <= SMALL_DIMENSION {
                    (0..dimension.len() as MemberId).collect()
                } else {
                    dimension
                        .tops
                        .iter()
                        .flat_map(|&top| std::iter::once(top).chain(dimension.member(top).children.iter().copied()))
                        .collect()
                };
                (dim, members)
            }
            Some((dim, member)) => {
                let dim = Dim::parse(dim)?;
                let id = outline.dim(dim).lookup(member.trim().trim_matches('"'))?;
                let mut members = outline.dim(dim).member(id).children.clone();
                members.push(id);
                (dim, members)
            }
        };
        if members.len() > MAX_GRID_SIDE {
            return Err(CubeError::Query(format!(
                "{} members on one side of the grid is too many (at most {MAX_GRID_SIDE}): pick a member lower in \
                 the hierarchy, as {}=Member",
                members.len(),
                dim.name()
            )));
        }
        Ok((dim, members))
    }
}

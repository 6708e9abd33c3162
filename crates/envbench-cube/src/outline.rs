//! The EssBench-shaped outline: eight dimensions with the member counts of specification section 5, built
//! deterministically (the shape never depends on the data seed, so cubes built from different seeds compare).
//!
//! | dimension | members | stored | kind |
//! | --- | --- | --- | --- |
//! | Account | 1025 | 838 | dense; level-0 accounts stored, parents and ratios dynamic |
//! | Period | 19 | 14 | dense; BegBalance, Jan..Dec, YearTotal stored; Q1..Q4 and the root dynamic |
//! | Years | 6 | 6 | sparse, flat FY15..FY20 |
//! | Scenario | 3 | 3 | sparse, flat |
//! | Version | 4 | 4 | sparse, flat |
//! | Currency | 3 | 3 | sparse; Local and USD under the root (ignored in consolidation) |
//! | Entity | 8767 | 8709 | sparse; TotalEntity > region > country > division > entity, plus 58 dynamic segment members |
//! | Product | 8639 | 8639 | sparse; Product > line > family > SKU, and NoProduct |

use crate::error::CubeError;
use envbench_core::text::{did_you_mean, suggestions};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};

/// The index of a member within its dimension.
pub type MemberId = u32;

/// Stored periods per account in a block: BegBalance, Jan..Dec, YearTotal.
pub const STORED_PERIODS: usize = 14;
/// Stored index of BegBalance.
pub const BEG_BALANCE: usize = 0;
/// Stored index of YearTotal.
pub const YEAR_TOTAL: usize = 13;
/// Month names; month `m` (0-based) has stored index `m + 1`.
pub const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
/// The member the dense restructure step adds.
pub const ADDED_ACCOUNT: &str = "AddedAccount";

/// The dimensions, in outline order. Account and Period are dense; the others sparse.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Dim {
    Account,
    Period,
    Years,
    Scenario,
    Version,
    Currency,
    Entity,
    Product,
}

impl Dim {
    pub const ALL: [Dim; 8] =
        [Dim::Account, Dim::Period, Dim::Years, Dim::Scenario, Dim::Version, Dim::Currency, Dim::Entity, Dim::Product];
    /// The sparse dimensions in sparse-key order.
    pub const SPARSE: [Dim; 6] = [Dim::Years, Dim::Scenario, Dim::Version, Dim::Currency, Dim::Entity, Dim::Product];

    pub fn index(self) -> usize {
        self as usize
    }

    pub fn name(self) -> &'static str {
        match self {
            Dim::Account => "Account",
            Dim::Period => "Period",
            Dim::Years => "Years",
            Dim::Scenario => "Scenario",
            Dim::Version => "Version",
            Dim::Currency => "Currency",
            Dim::Entity => "Entity",
            Dim::Product => "Product",
        }
    }

    pub fn is_dense(self) -> bool {
        matches!(self, Dim::Account | Dim::Period)
    }

    /// Position among the sparse dimensions (panics for a dense one).
    pub fn sparse_slot(self) -> usize {
        assert!(!self.is_dense(), "{} is dense", self.name());
        self.index() - 2
    }

    /// Find a dimension by name, case-insensitively.
    pub fn parse(name: &str) -> Result<Dim, CubeError> {
        let trimmed = name.trim();
        Dim::ALL.into_iter().find(|d| d.name().eq_ignore_ascii_case(trimmed)).ok_or_else(|| {
            let close = suggestions(trimmed, Dim::ALL.iter().map(|d| d.name()));
            CubeError::UnknownDimension {
                name: trimmed.to_string(),
                hint: did_you_mean(&close),
                known: Dim::ALL.map(|d| d.name()).join(", "),
            }
        })
    }
}

/// Whether a member has cells of its own or is computed when retrieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Storage {
    Stored,
    Dynamic,
}

/// How a member rolls into its parent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Consolidation {
    Add,
    Subtract,
    Ignore,
}

impl Consolidation {
    /// The factor applied to the member's value in its parent (`None` when ignored).
    pub fn sign(self) -> Option<f64> {
        match self {
            Consolidation::Add => Some(1.0),
            Consolidation::Subtract => Some(-1.0),
            Consolidation::Ignore => None,
        }
    }
}

/// A dynamic member's formula.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Formula {
    /// The sum of other members (an alternate rollup).
    Sum(Vec<MemberId>),
    /// `numerator / denominator * scale`, missing when either is missing or the denominator is zero.
    Ratio { numerator: MemberId, denominator: MemberId, scale: f64 },
}

/// What kind of money (or not) a stored account holds, which decides where its data comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AccountKind {
    /// Loaded from the CSV.
    Revenue,
    /// Loaded from the CSV.
    CostOfGoods,
    /// Loaded from the native files (and the allocation's target).
    Expense,
    /// Loaded from the native files.
    Balance,
    /// Loaded from the CSV.
    Statistic,
}

/// How the year and quarter totals of an account are formed from the months.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeBalance {
    /// Sum of the months (revenue, costs, expenses, units).
    Flow,
    /// The last month's value (balances, headcount).
    Last,
}

/// Which rate converts an account's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateType {
    /// Flows (revenue, costs, expenses): the period's average rate.
    Average,
    /// Balances: the rate at the end of the period.
    Ending,
    /// Statistics (headcount, units) are not money and are copied unchanged.
    NotConverted,
}

/// Properties of a stored account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AccountInfo {
    pub kind: AccountKind,
    pub time_balance: TimeBalance,
    pub rate: RateType,
}

/// One member of a dimension.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Member {
    pub name: String,
    pub parent: Option<MemberId>,
    pub children: Vec<MemberId>,
    /// 0 for members without children.
    pub level: u8,
    /// 1 for the top members.
    pub generation: u8,
    pub storage: Storage,
    pub consolidation: Consolidation,
    pub formula: Option<Formula>,
    /// Dense dimensions: the member's position in the block layout.
    pub stored_index: Option<u32>,
    /// Stored accounts only.
    pub account: Option<AccountInfo>,
    /// Stored entities only: index into the rates module's `CURRENCIES`.
    pub currency: Option<u8>,
}

impl Member {
    pub fn is_stored(&self) -> bool {
        self.storage == Storage::Stored
    }
}

/// One dimension: its members in outline order (depth first) and a name index.
#[derive(Clone, Debug)]
pub struct Dimension {
    pub dim: Dim,
    pub members: Vec<Member>,
    /// Members without a parent.
    pub tops: Vec<MemberId>,
    by_name: FxHashMap<String, MemberId>,
}

impl Dimension {
    /// A dimension of `members` in outline order (parents before their children), with its tops and name index.
    /// Panics on a duplicate name (names are unique across a dimension, case-insensitively).
    pub(crate) fn new(dim: Dim, members: Vec<Member>) -> Dimension {
        let mut by_name = FxHashMap::default();
        for (id, m) in members.iter().enumerate() {
            let previous = by_name.insert(m.name.to_lowercase(), id as MemberId);
            assert!(previous.is_none(), "duplicate member name {}", m.name);
        }
        let tops = (0..members.len() as MemberId).filter(|&id| members[id as usize].parent.is_none()).collect();
        Dimension { dim, members, tops, by_name }
    }

    pub fn member(&self, id: MemberId) -> &Member {
        &self.members[id as usize]
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    pub fn stored_count(&self) -> usize {
        self.members.iter().filter(|m| m.is_stored()).count()
    }

    /// Find a member by name, case-insensitively (as Essbase does).
    pub fn find(&self, name: &str) -> Option<MemberId> {
        self.by_name.get(&name.trim().to_lowercase()).copied()
    }

    /// Find a member, or an error naming the dimension and suggesting close names.
    pub fn lookup(&self, name: &str) -> Result<MemberId, CubeError> {
        self.find(name).ok_or_else(|| {
            let close = suggestions(name.trim(), self.members.iter().map(|m| m.name.as_str()));
            CubeError::UnknownMember {
                dimension: self.dim.name().to_string(),
                name: name.trim().to_string(),
                hint: did_you_mean(&close),
            }
        })
    }

    /// Stored members with the given level, in outline order.
    pub fn stored_at_level(&self, level: u8) -> Vec<MemberId> {
        (0..self.members.len() as MemberId)
            .filter(|&id| self.member(id).is_stored() && self.member(id).level == level)
            .collect()
    }
}

/// Members the workload refers to by role.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyMembers {
    /// The allocation driver (a revenue account, loaded from the CSV).
    pub gross_sales: MemberId,
    /// The pool the allocation distributes (an expense account loaded at `corporate_hq`/`no_product`).
    pub overhead_pool: MemberId,
    /// The account the allocation writes.
    pub allocated_overhead: MemberId,
    /// The stored top of the Entity hierarchy.
    pub total_entity: MemberId,
    pub corporate_hq: MemberId,
    pub product_root: MemberId,
    pub no_product: MemberId,
    pub currency_root: MemberId,
    pub local: MemberId,
    pub usd: MemberId,
    /// Present once the dense restructure has added its member.
    pub added_account: Option<MemberId>,
}

/// The whole outline.
#[derive(Clone, Debug)]
pub struct Outline {
    dims: Vec<Dimension>,
    stored_accounts: Vec<MemberId>,
    account_info: Vec<AccountInfo>,
    key: KeyMembers,
}

/// Packed sparse coordinates of a block: Years, Scenario, Version, Currency (4 bits each), Entity, Product (14 bits
/// each), most significant first, so that sorting keys groups a slice's blocks by entity, then product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SparseKey(pub u64);

const KEY_SHIFTS: [u32; 6] = [40, 36, 32, 28, 14, 0];
const KEY_MASKS: [u64; 6] = [0xF, 0xF, 0xF, 0xF, 0x3FFF, 0x3FFF];

impl SparseKey {
    /// Members in [`Dim::SPARSE`] order.
    pub fn new(members: [MemberId; 6]) -> SparseKey {
        let mut key = 0u64;
        for (slot, member) in members.into_iter().enumerate() {
            debug_assert!(u64::from(member) <= KEY_MASKS[slot]);
            key |= (u64::from(member) & KEY_MASKS[slot]) << KEY_SHIFTS[slot];
        }
        SparseKey(key)
    }

    pub fn member(self, dim: Dim) -> MemberId {
        let slot = dim.sparse_slot();
        ((self.0 >> KEY_SHIFTS[slot]) & KEY_MASKS[slot]) as MemberId
    }

    pub fn members(self) -> [MemberId; 6] {
        std::array::from_fn(|slot| ((self.0 >> KEY_SHIFTS[slot]) & KEY_MASKS[slot]) as MemberId)
    }

    /// The same key with one sparse member replaced.
    pub fn with(self, dim: Dim, member: MemberId) -> SparseKey {
        let slot = dim.sparse_slot();
        SparseKey(
            (self.0 & !(KEY_MASKS[slot] << KEY_SHIFTS[slot]))
                | ((u64::from(member) & KEY_MASKS[slot]) << KEY_SHIFTS[slot]),
        )
    }

    /// The (Years, Scenario, Version) part: blocks of one slice share it.
    pub fn slice(self) -> u64 {
        self.0 >> KEY_SHIFTS[2]
    }
}

impl Outline {
    /// An outline of eight dimensions in [`Dim`] order; the EssBench one is built by [`Outline::essbench`].
    pub(crate) fn from_parts(
        dims: Vec<Dimension>,
        stored_accounts: Vec<MemberId>,
        account_info: Vec<AccountInfo>,
        key: KeyMembers,
    ) -> Outline {
        Outline { dims, stored_accounts, account_info, key }
    }

    pub fn dim(&self, dim: Dim) -> &Dimension {
        &self.dims[dim.index()]
    }

    pub fn key_members(&self) -> &KeyMembers {
        &self.key
    }

    pub fn is_restructured(&self) -> bool {
        self.key.added_account.is_some()
    }

    /// Stored accounts: rows of a block.
    pub fn stored_accounts(&self) -> usize {
        self.stored_accounts.len()
    }

    /// Cells in one expanded block (stored accounts x stored periods).
    pub fn cells_per_block(&self) -> usize {
        self.stored_accounts.len() * STORED_PERIODS
    }

    /// The account member at a stored index.
    pub fn stored_account(&self, stored_index: usize) -> MemberId {
        self.stored_accounts[stored_index]
    }

    /// Properties of the account at a stored index.
    pub fn account_info(&self, stored_index: usize) -> &AccountInfo {
        &self.account_info[stored_index]
    }

    /// The block row of a stored account member.
    pub fn account_row(&self, account: MemberId) -> Option<usize> {
        self.dim(Dim::Account).member(account).stored_index.map(|i| i as usize)
    }

    /// The cell of (stored account index, stored period index) in a block.
    pub fn cell(account_row: usize, period: usize) -> usize {
        account_row * STORED_PERIODS + period
    }

    /// The local currency of a stored entity.
    pub fn entity_currency(&self, entity: MemberId) -> Option<u8> {
        self.dim(Dim::Entity).member(entity).currency
    }

    /// Whether a sparse member is stored (blocks exist only for combinations of stored members).
    pub fn is_stored(&self, dim: Dim, member: MemberId) -> bool {
        self.dim(dim).member(member).is_stored()
    }

    /// `(dimension, members, stored members)` for every dimension.
    pub fn member_counts(&self) -> Vec<(Dim, usize, usize)> {
        self.dims.iter().map(|d| (d.dim, d.len(), d.stored_count())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_keys_round_trip() {
        let key = SparseKey::new([5, 2, 3, 2, 8766, 8638]);
        assert_eq!(key.members(), [5, 2, 3, 2, 8766, 8638]);
        assert_eq!(key.member(Dim::Entity), 8766);
        assert_eq!(key.with(Dim::Currency, 1).member(Dim::Currency), 1);
        assert_eq!(key.with(Dim::Currency, 1).member(Dim::Product), 8638);
    }

    #[test]
    fn names_resolve_case_insensitively_with_suggestions() {
        let outline = Outline::essbench();
        let scenario = outline.dim(Dim::Scenario);
        assert_eq!(scenario.lookup("actual").unwrap(), 0);
        let error = scenario.lookup("Actaul").unwrap_err().to_string();
        assert!(error.contains("did you mean Actual"), "{error}");
        assert!(Dim::parse("Entty").unwrap_err().to_string().contains("Entity"));
    }
}

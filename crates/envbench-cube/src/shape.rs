//! The shape of the EssBench outline: every member of the eight dimensions, built deterministically from a fixed
//! seed (the member counts are in [`crate::outline`]'s table), and the [`Outline::essbench`] constructors.

use crate::outline::RateType;
use crate::outline::{
    ADDED_ACCOUNT, AccountInfo, AccountKind, BEG_BALANCE, Consolidation, Dim, Dimension, Formula, KeyMembers, MONTHS,
    Member, MemberId, Outline, Storage, TimeBalance, YEAR_TOTAL,
};
use crate::rates;
use crate::rng::{Rng, WeightedTable};

impl Outline {
    /// The EssBench outline as loaded before the restructure step.
    pub fn essbench() -> Outline {
        build(false)
    }

    /// The outline after the dense restructure step added [`ADDED_ACCOUNT`].
    pub fn essbench_restructured() -> Outline {
        build(true)
    }
}

/// Builds one dimension member by member; levels, generations and the name index are computed at the end.
struct DimBuilder {
    dim: Dim,
    members: Vec<Member>,
}

impl DimBuilder {
    fn new(dim: Dim) -> DimBuilder {
        DimBuilder { dim, members: Vec::new() }
    }

    fn add(
        &mut self,
        name: &str,
        parent: Option<MemberId>,
        storage: Storage,
        consolidation: Consolidation,
    ) -> MemberId {
        let id = self.members.len() as MemberId;
        self.members.push(Member {
            name: name.to_string(),
            parent,
            children: Vec::new(),
            level: 0,
            generation: 1,
            storage,
            consolidation,
            formula: None,
            stored_index: None,
            account: None,
            currency: None,
        });
        if let Some(p) = parent {
            self.members[p as usize].children.push(id);
        }
        id
    }

    fn stored(&mut self, name: &str, parent: Option<MemberId>) -> MemberId {
        self.add(name, parent, Storage::Stored, Consolidation::Add)
    }

    fn dynamic(&mut self, name: &str, parent: Option<MemberId>, consolidation: Consolidation) -> MemberId {
        self.add(name, parent, Storage::Dynamic, consolidation)
    }

    fn finish(mut self) -> Dimension {
        // Parents are always created before their children, so one backward pass sets levels.
        for id in (0..self.members.len()).rev() {
            if let Some(p) = self.members[id].parent {
                let level = self.members[id].level + 1;
                let parent = &mut self.members[p as usize];
                parent.level = parent.level.max(level);
            }
        }
        for id in 0..self.members.len() {
            if let Some(p) = self.members[id].parent {
                self.members[id].generation = self.members[p as usize].generation + 1;
            }
        }
        Dimension::new(self.dim, self.members)
    }
}

/// Split `total` items into `parts` groups of at least `minimum`, with skewed (Zipf-like) sizes in a shuffled order.
fn skewed_split(total: usize, parts: usize, minimum: usize, exponent: f64, rng: &mut Rng) -> Vec<usize> {
    assert!(total >= parts * minimum);
    let mut sizes = vec![minimum; parts];
    let table = WeightedTable::zipf(parts, exponent);
    let mut order: Vec<usize> = (0..parts).collect();
    rng.shuffle(&mut order);
    for _ in 0..total - parts * minimum {
        sizes[order[table.draw(rng)]] += 1;
    }
    sizes
}

/// The seed of the outline's shape; fixed so that every data seed uses the same outline.
const OUTLINE_SEED: u64 = 0xE55B_E7C4;

fn build(with_added_account: bool) -> Outline {
    let mut rng = Rng::new(OUTLINE_SEED);
    let (account, stored_accounts, account_info, accounts) = build_accounts(with_added_account);
    let period = build_periods();
    let mut years = DimBuilder::new(Dim::Years);
    for year in 15..=20 {
        years.stored(&format!("FY{year}"), None);
    }
    let mut scenario = DimBuilder::new(Dim::Scenario);
    for name in ["Actual", "Budget", "Forecast"] {
        scenario.stored(name, None);
    }
    let mut version = DimBuilder::new(Dim::Version);
    for name in ["Working", "Submitted", "Approved", "Final"] {
        version.stored(name, None);
    }
    let mut currency = DimBuilder::new(Dim::Currency);
    let currency_root = currency.stored("Currency", None);
    let local = currency.add("Local", Some(currency_root), Storage::Stored, Consolidation::Ignore);
    let usd = currency.add("USD", Some(currency_root), Storage::Stored, Consolidation::Ignore);
    let (entity, total_entity, corporate_hq) = build_entities(&mut rng);
    let (product, product_root, no_product) = build_products(&mut rng);

    let key = KeyMembers {
        gross_sales: accounts.gross_sales,
        overhead_pool: accounts.overhead_pool,
        allocated_overhead: accounts.allocated_overhead,
        total_entity,
        corporate_hq,
        product_root,
        no_product,
        currency_root,
        local,
        usd,
        added_account: accounts.added_account,
    };
    let dims =
        vec![account, period, years.finish(), scenario.finish(), version.finish(), currency.finish(), entity, product];
    Outline::from_parts(dims, stored_accounts, account_info, key)
}

struct AccountRoles {
    gross_sales: MemberId,
    overhead_pool: MemberId,
    allocated_overhead: MemberId,
    added_account: Option<MemberId>,
}

/// Account: 838 stored level-0 accounts (60 revenue, 60 COGS, 480 expense, 216 balance, 20 statistics, the pool and
/// its allocation target) under 105 dynamic parents, plus 82 dynamic ratio members: 1025 members.
fn build_accounts(with_added_account: bool) -> (Dimension, Vec<MemberId>, Vec<AccountInfo>, AccountRoles) {
    use AccountKind::*;
    use Consolidation::*;
    let mut b = DimBuilder::new(Dim::Account);
    let mut stored: Vec<(MemberId, AccountInfo)> = Vec::new();
    let flow = |kind, rate| AccountInfo { kind, time_balance: TimeBalance::Flow, rate };
    let mut leaf = |b: &mut DimBuilder, name: &str, parent: MemberId, consolidation, info: AccountInfo| {
        let id = b.add(name, Some(parent), Storage::Stored, consolidation);
        b.members[id as usize].account = Some(info);
        stored.push((id, info));
        id
    };
    let root = b.dynamic("Account", None, Add);
    let net_income = b.dynamic("NetIncome", Some(root), Add);
    let gross_margin = b.dynamic("GrossMargin", Some(net_income), Add);
    let total_revenue = b.dynamic("TotalRevenue", Some(gross_margin), Add);
    let mut gross_sales = 0;
    let mut revenue_groups = Vec::new();
    for g in 1..=6 {
        let group = b.dynamic(&format!("REV_G{g:02}"), Some(total_revenue), Add);
        revenue_groups.push(group);
        for i in 1..=10 {
            let info = flow(Revenue, RateType::Average);
            if g == 1 && i == 1 {
                gross_sales = leaf(&mut b, "GrossSales", group, Add, info);
            } else {
                leaf(&mut b, &format!("A4{g}{i:02}"), group, Add, info);
            }
        }
    }
    let total_cogs = b.dynamic("TotalCOGS", Some(gross_margin), Subtract);
    let mut cogs_groups = Vec::new();
    for g in 1..=6 {
        let group = b.dynamic(&format!("COGS_G{g:02}"), Some(total_cogs), Add);
        cogs_groups.push(group);
        for i in 1..=10 {
            leaf(&mut b, &format!("A5{g}{i:02}"), group, Add, flow(CostOfGoods, RateType::Average));
        }
    }
    let operating = b.dynamic("OperatingExpenses", Some(net_income), Subtract);
    let mut expense_sections = Vec::new();
    let mut expense_groups = Vec::new();
    let mut added_account = None;
    for s in 1..=6 {
        let section = b.dynamic(&format!("OPEX_S{s:02}"), Some(operating), Add);
        expense_sections.push(section);
        for g in 1..=8 {
            let number = (s - 1) * 8 + g;
            let group = b.dynamic(&format!("EXP_G{number:02}"), Some(section), Add);
            expense_groups.push(group);
            for i in 1..=10 {
                leaf(&mut b, &format!("A6{number:02}{i}"), group, Add, flow(Expense, RateType::Average));
            }
            if number == 1 && with_added_account {
                // Inserted in the middle of the block layout, so the restructure really moves every later row.
                added_account = Some(leaf(&mut b, ADDED_ACCOUNT, group, Add, flow(Expense, RateType::Average)));
            }
        }
    }
    let allocations = b.dynamic("Allocations", Some(net_income), Subtract);
    let overhead_pool = leaf(&mut b, "OverheadPool", allocations, Ignore, flow(Expense, RateType::Average));
    let allocated_overhead = leaf(&mut b, "AllocatedOverhead", allocations, Add, flow(Expense, RateType::Average));

    let balance_sheet = b.dynamic("BalanceSheet", Some(root), Ignore);
    let mut balance_groups = Vec::new();
    for (section, prefix, groups, sign) in
        [("TotalAssets", "AST", 12, Add), ("TotalLiabilities", "LIA", 8, Add), ("TotalEquity", "EQ", 4, Add)]
    {
        let parent = b.dynamic(section, Some(balance_sheet), sign);
        for g in 1..=groups {
            let group = b.dynamic(&format!("{prefix}_G{g:02}"), Some(parent), Add);
            if prefix == "AST" {
                balance_groups.push(group);
            }
            for i in 1..=9 {
                let info = AccountInfo { kind: Balance, time_balance: TimeBalance::Last, rate: RateType::Ending };
                leaf(&mut b, &format!("A{}{g:02}{i}", &prefix[..1]), group, Add, info);
            }
        }
    }
    let statistics = b.dynamic("Statistics", Some(root), Ignore);
    let mut headcount = 0;
    let mut units = 0;
    for g in 1..=2 {
        let group = b.dynamic(&format!("STAT_G{g:02}"), Some(statistics), Add);
        for i in 1..=10 {
            let time_balance = if i % 2 == 1 { TimeBalance::Last } else { TimeBalance::Flow };
            let info = AccountInfo { kind: Statistic, time_balance, rate: RateType::NotConverted };
            let name = match (g, i) {
                (1, 1) => "Headcount".to_string(),
                (1, 2) => "Units".to_string(),
                _ => format!("A9{g}{i:02}"),
            };
            let id = leaf(&mut b, &name, group, Add, info);
            match (g, i) {
                (1, 1) => headcount = id,
                (1, 2) => units = id,
                _ => {}
            }
        }
    }
    let ratios = b.dynamic("Ratios", Some(root), Ignore);
    let ratio = |b: &mut DimBuilder, name: &str, numerator, denominator, scale| {
        let id = b.dynamic(name, Some(ratios), Ignore);
        b.members[id as usize].formula = Some(Formula::Ratio { numerator, denominator, scale });
    };
    ratio(&mut b, "GM_Pct", gross_margin, total_revenue, 100.0);
    ratio(&mut b, "NI_Pct", net_income, total_revenue, 100.0);
    ratio(&mut b, "OPEX_Pct", operating, total_revenue, 100.0);
    ratio(&mut b, "Revenue_per_Head", total_revenue, headcount, 1.0);
    ratio(&mut b, "Price_per_Unit", gross_sales, units, 1.0);
    for group in revenue_groups.iter().chain(&cogs_groups).chain(&expense_sections).chain(&expense_groups) {
        let name = format!("{}_Pct", b.members[*group as usize].name);
        ratio(&mut b, &name, *group, total_revenue, 100.0);
    }
    let total_assets = b.find_name("TotalAssets");
    for group in &balance_groups[..11] {
        let name = format!("{}_Share", b.members[*group as usize].name);
        ratio(&mut b, &name, *group, total_assets, 100.0);
    }

    let mut info = Vec::with_capacity(stored.len());
    let mut rows = Vec::with_capacity(stored.len());
    for (row, (id, account_info)) in stored.into_iter().enumerate() {
        b.members[id as usize].stored_index = Some(row as u32);
        rows.push(id);
        info.push(account_info);
    }
    let roles = AccountRoles { gross_sales, overhead_pool, allocated_overhead, added_account };
    (b.finish(), rows, info, roles)
}

impl DimBuilder {
    fn find_name(&self, name: &str) -> MemberId {
        self.members.iter().position(|m| m.name == name).expect("member exists") as MemberId
    }
}

/// Period: the root, BegBalance, YearTotal over four dynamic quarters over the stored months.
fn build_periods() -> Dimension {
    let mut b = DimBuilder::new(Dim::Period);
    let root = b.dynamic("Period", None, Consolidation::Add);
    let beg = b.add("BegBalance", Some(root), Storage::Stored, Consolidation::Ignore);
    b.members[beg as usize].stored_index = Some(BEG_BALANCE as u32);
    let year_total = b.stored("YearTotal", Some(root));
    b.members[year_total as usize].stored_index = Some(YEAR_TOTAL as u32);
    for q in 0..4 {
        let quarter = b.dynamic(&format!("Q{}", q + 1), Some(year_total), Consolidation::Add);
        for m in 0..3 {
            let month = q * 3 + m;
            let id = b.stored(MONTHS[month], Some(quarter));
            b.members[id as usize].stored_index = Some(month as u32 + 1);
        }
    }
    b.finish()
}

/// Regions, their countries and each country's currency.
const REGIONS: [(&str, &[(&str, &str)]); 6] = [
    ("NorthAmerica", &[("US", "USD"), ("CA", "CAD"), ("MX", "MXN")]),
    ("LatinAmerica", &[("BR", "BRL"), ("AR", "ARS"), ("CL", "CLP"), ("CO", "COP"), ("PE", "PEN")]),
    (
        "WesternEurope",
        &[
            ("DE", "EUR"),
            ("FR", "EUR"),
            ("GB", "GBP"),
            ("IT", "EUR"),
            ("ES", "EUR"),
            ("NL", "EUR"),
            ("BE", "EUR"),
            ("CH", "CHF"),
            ("AT", "EUR"),
            ("IE", "EUR"),
            ("PT", "EUR"),
            ("SE", "SEK"),
            ("NO", "NOK"),
            ("DK", "DKK"),
            ("FI", "EUR"),
        ],
    ),
    ("EasternEurope", &[("PL", "PLN"), ("CZ", "CZK"), ("HU", "HUF"), ("RO", "RON"), ("GR", "EUR")]),
    (
        "AsiaPacific",
        &[
            ("JP", "JPY"),
            ("CN", "CNY"),
            ("IN", "INR"),
            ("AU", "AUD"),
            ("KR", "KRW"),
            ("SG", "SGD"),
            ("NZ", "NZD"),
            ("TH", "THB"),
            ("MY", "MYR"),
        ],
    ),
    ("MiddleEastAfrica", &[("AE", "AED"), ("ZA", "ZAR"), ("SA", "SAR"), ("EG", "EGP"), ("TR", "TRY")]),
];

const DIVISIONS: usize = 500;
const LEAF_ENTITIES: usize = 8160;
const SEGMENTS: usize = 56;

/// Entity: a dynamic root over the stored TotalEntity tree (TotalEntity, 6 regions, 42 countries, 500 divisions,
/// 8160 entities: 8709 stored) and 57 dynamic segment members (alternate rollups by formula): 8767 members.
fn build_entities(rng: &mut Rng) -> (Dimension, MemberId, MemberId) {
    let mut b = DimBuilder::new(Dim::Entity);
    let root = b.dynamic("Entity", None, Consolidation::Add);
    let total = b.stored("TotalEntity", Some(root));
    let usd = rates::USD;
    b.members[total as usize].currency = Some(usd);
    let countries: usize = REGIONS.iter().map(|(_, c)| c.len()).sum();
    let divisions_per_country = skewed_split(DIVISIONS, countries, 1, 0.9, rng);
    let divisions_total: usize = divisions_per_country.iter().sum();
    let leaves_per_division = skewed_split(LEAF_ENTITIES, divisions_total, 2, 0.6, rng);
    let mut country_index = 0;
    let mut division_index = 0;
    let mut leaf_number = 10_000;
    let mut corporate_hq = None;
    let mut countries_and_divisions = Vec::new();
    for (region_name, region_countries) in REGIONS {
        let region = b.stored(region_name, Some(total));
        b.members[region as usize].currency = Some(usd);
        for (code, currency_code) in region_countries {
            let currency = rates::currency_index(currency_code).expect("known currency");
            let country = b.stored(&format!("C_{code}"), Some(region));
            b.members[country as usize].currency = Some(currency);
            countries_and_divisions.push(country);
            for d in 0..divisions_per_country[country_index] {
                let division = b.stored(&format!("DIV_{code}_{:02}", d + 1), Some(country));
                b.members[division as usize].currency = Some(currency);
                countries_and_divisions.push(division);
                for _ in 0..leaves_per_division[division_index] {
                    let name = if corporate_hq.is_none() {
                        "Corporate_HQ".to_string()
                    } else {
                        leaf_number += 1;
                        format!("E{leaf_number}")
                    };
                    let leaf = b.stored(&name, Some(division));
                    b.members[leaf as usize].currency = Some(currency);
                    corporate_hq.get_or_insert(leaf);
                }
                division_index += 1;
            }
            country_index += 1;
        }
    }
    let segments = b.dynamic("Segments", Some(root), Consolidation::Ignore);
    for s in 0..SEGMENTS {
        let id = b.dynamic(&format!("SEG_{:02}", s + 1), Some(segments), Consolidation::Add);
        let count = rng.range(3, 8) as usize;
        let mut refs: Vec<MemberId> = (0..count)
            .map(|_| countries_and_divisions[rng.below(countries_and_divisions.len() as u64) as usize])
            .collect();
        refs.sort_unstable();
        refs.dedup();
        b.members[id as usize].formula = Some(Formula::Sum(refs));
    }
    (b.finish(), total, corporate_hq.expect("at least one entity"))
}

const PRODUCT_LINES: [&str; 10] = [
    "Beverages",
    "Snacks",
    "Dairy",
    "Frozen",
    "Bakery",
    "HomeCare",
    "PersonalCare",
    "Electronics",
    "Apparel",
    "Outdoor",
];
const FAMILIES: usize = 120;
const SKUS: usize = 8507;

/// Product: the stored root over 10 lines, 120 families and 8507 SKUs, plus NoProduct: 8639 members, all stored.
fn build_products(rng: &mut Rng) -> (Dimension, MemberId, MemberId) {
    let mut b = DimBuilder::new(Dim::Product);
    let root = b.stored("Product", None);
    let families_per_line = skewed_split(FAMILIES, PRODUCT_LINES.len(), 4, 0.5, rng);
    let skus_per_family = skewed_split(SKUS, FAMILIES, 5, 0.7, rng);
    let mut family_index = 0;
    let mut sku_number = 10_000;
    for (line_index, line_name) in PRODUCT_LINES.iter().enumerate() {
        let line = b.stored(line_name, Some(root));
        for f in 0..families_per_line[line_index] {
            let family = b.stored(&format!("{line_name}_F{:02}", f + 1), Some(line));
            for _ in 0..skus_per_family[family_index] {
                sku_number += 1;
                b.stored(&format!("P{sku_number}"), Some(family));
            }
            family_index += 1;
        }
    }
    let no_product = b.stored("NoProduct", Some(root));
    (b.finish(), root, no_product)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn member_counts_match_essbench() {
        let outline = Outline::essbench();
        let counts = outline.member_counts();
        let expected = [
            (Dim::Account, 1025, 838),
            (Dim::Period, 19, 14),
            (Dim::Years, 6, 6),
            (Dim::Scenario, 3, 3),
            (Dim::Version, 4, 4),
            (Dim::Currency, 3, 3),
            (Dim::Entity, 8767, 8709),
            (Dim::Product, 8639, 8639),
        ];
        assert_eq!(counts, expected.to_vec());
        assert_eq!(outline.cells_per_block(), 11_732);
        assert_eq!(Outline::essbench_restructured().cells_per_block(), 11_746);
    }

    #[test]
    fn hierarchies_have_realistic_depth() {
        let outline = Outline::essbench();
        let entity = outline.dim(Dim::Entity);
        assert_eq!(entity.member(outline.key_members().total_entity).level, 4);
        assert_eq!(entity.member(entity.find("Entity").unwrap()).level, 5);
        let product = outline.dim(Dim::Product);
        assert_eq!(product.member(outline.key_members().product_root).level, 3);
        for id in entity.stored_at_level(0) {
            assert!(outline.entity_currency(id).is_some());
        }
        assert_eq!(entity.stored_at_level(0).len(), LEAF_ENTITIES);
    }

    #[test]
    fn restructured_outline_only_inserts_one_row() {
        let before = Outline::essbench();
        let after = Outline::essbench_restructured();
        let added = after.key_members().added_account.unwrap();
        let added_row = after.account_row(added).unwrap();
        assert!(added_row > 0 && added_row < before.stored_accounts() - 1);
        for row in 0..before.stored_accounts() {
            let name = &before.dim(Dim::Account).member(before.stored_account(row)).name;
            let new_row = after.account_row(after.dim(Dim::Account).find(name).unwrap()).unwrap();
            assert_eq!(new_row, if row < added_row { row } else { row + 1 });
        }
    }
}

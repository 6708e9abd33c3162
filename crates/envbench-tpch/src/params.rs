//! Substitution parameters (TPC-H 2.x clause 2.4, "Substitution Parameters" of each query) and query order.
//!
//! Random parameters come from a seeded generator, so a stream's queries are the same for the same seed and stream,
//! and every value is inside the range the specification gives. The validation values (clause 2.4.x.3, "Query
//! Validation") are what the reference answers were computed with.

use serde::{Deserialize, Serialize};
use tpchgen::distribution::Distributions;

/// A small, seedable generator (SplitMix64): deterministic across platforms and releases, unlike `rand`'s.
#[derive(Clone, Debug)]
pub struct SeededRandom {
    state: u64,
}

impl SeededRandom {
    pub fn new(seed: u64) -> Self {
        SeededRandom { state: seed }
    }

    /// A generator for one query set of one stream, independent of the others.
    pub fn for_stream(seed: u64, stream: usize, set: usize) -> Self {
        let mut mixer = SeededRandom::new(seed ^ 0x7470_6368_0000_0000);
        let a = mixer.next_u64();
        SeededRandom::new(a ^ (stream as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (set as u64).rotate_left(32))
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `low..=high`.
    pub fn between(&mut self, low: i64, high: i64) -> i64 {
        let span = (high - low + 1) as u64;
        low + (self.next_u64() % span) as i64
    }

    /// One of the items, uniformly.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.between(0, items.len() as i64 - 1) as usize]
    }

    /// `count` distinct values from `low..=high`.
    pub fn distinct(&mut self, count: usize, low: i64, high: i64) -> Vec<i64> {
        let mut chosen = Vec::with_capacity(count);
        while chosen.len() < count {
            let value = self.between(low, high);
            if !chosen.contains(&value) {
                chosen.push(value);
            }
        }
        chosen
    }

    /// A random permutation of the items (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.between(0, i as i64) as usize;
            items.swap(i, j);
        }
    }
}

/// A calendar date, for the date parameters (the queries get literals, so no interval arithmetic is needed in SQL).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Date {
    pub year: i32,
    pub month: u32,
    pub day: u32,
}

impl Date {
    pub const fn new(year: i32, month: u32, day: u32) -> Date {
        Date { year, month, day }
    }

    /// Days since 1970-01-01 (Howard Hinnant's days_from_civil).
    pub fn days_since_epoch(self) -> i64 {
        let year = i64::from(self.year) - i64::from(self.month <= 2);
        let era = year.div_euclid(400);
        let yoe = year.rem_euclid(400);
        let month = i64::from(self.month);
        let doy = (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(self.day) - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The date that many days since 1970-01-01.
    pub fn from_days_since_epoch(days: i64) -> Date {
        let (year, month, day) = envbench_core::model::civil_from_days(days);
        Date { year: year as i32, month, day }
    }

    pub fn plus_days(self, days: i64) -> Date {
        Date::from_days_since_epoch(self.days_since_epoch() + days)
    }

    /// The same day `months` later (the parameters are always first days of months, so no clamping is needed).
    pub fn plus_months(self, months: i32) -> Date {
        let index = self.year * 12 + self.month as i32 - 1 + months;
        Date { year: index.div_euclid(12), month: index.rem_euclid(12) as u32 + 1, day: self.day }
    }

    /// A SQL date literal.
    pub fn sql(self) -> String {
        format!("date '{self}'")
    }
}

impl std::fmt::Display for Date {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

/// The substitution parameters of one query, named as in the specification.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "query")]
pub enum QueryParameters {
    Q1 { delta_days: i64 },
    Q2 { size: i64, type_suffix: String, region: String },
    Q3 { segment: String, date: Date },
    Q4 { date: Date },
    Q5 { region: String, date: Date },
    Q6 { date: Date, discount_percent: i64, quantity: i64 },
    Q7 { nation1: String, nation2: String },
    Q8 { nation: String, region: String, part_type: String },
    Q9 { color: String },
    Q10 { date: Date },
    Q11 { nation: String, fraction: f64 },
    Q12 { shipmode1: String, shipmode2: String, date: Date },
    Q13 { word1: String, word2: String },
    Q14 { date: Date },
    Q15 { date: Date },
    Q16 { brand: String, type_prefix: String, sizes: Vec<i64> },
    Q17 { brand: String, container: String },
    Q18 { quantity: i64 },
    Q19 { quantity1: i64, quantity2: i64, quantity3: i64, brand1: String, brand2: String, brand3: String },
    Q20 { color: String, date: Date, nation: String },
    Q21 { nation: String },
    Q22 { country_codes: Vec<i64> },
}

impl QueryParameters {
    /// The query number, 1 to 22.
    pub fn query(&self) -> u8 {
        match self {
            QueryParameters::Q1 { .. } => 1,
            QueryParameters::Q2 { .. } => 2,
            QueryParameters::Q3 { .. } => 3,
            QueryParameters::Q4 { .. } => 4,
            QueryParameters::Q5 { .. } => 5,
            QueryParameters::Q6 { .. } => 6,
            QueryParameters::Q7 { .. } => 7,
            QueryParameters::Q8 { .. } => 8,
            QueryParameters::Q9 { .. } => 9,
            QueryParameters::Q10 { .. } => 10,
            QueryParameters::Q11 { .. } => 11,
            QueryParameters::Q12 { .. } => 12,
            QueryParameters::Q13 { .. } => 13,
            QueryParameters::Q14 { .. } => 14,
            QueryParameters::Q15 { .. } => 15,
            QueryParameters::Q16 { .. } => 16,
            QueryParameters::Q17 { .. } => 17,
            QueryParameters::Q18 { .. } => 18,
            QueryParameters::Q19 { .. } => 19,
            QueryParameters::Q20 { .. } => 20,
            QueryParameters::Q21 { .. } => 21,
            QueryParameters::Q22 { .. } => 22,
        }
    }

    /// The specification's validation parameters for a query (clause 2.4.x.3).
    pub fn validation(query: u8, scale_factor: f64) -> QueryParameters {
        let s = |text: &str| text.to_string();
        match query {
            1 => QueryParameters::Q1 { delta_days: 90 },
            2 => QueryParameters::Q2 { size: 15, type_suffix: s("BRASS"), region: s("EUROPE") },
            3 => QueryParameters::Q3 { segment: s("BUILDING"), date: Date::new(1995, 3, 15) },
            4 => QueryParameters::Q4 { date: Date::new(1993, 7, 1) },
            5 => QueryParameters::Q5 { region: s("ASIA"), date: Date::new(1994, 1, 1) },
            6 => QueryParameters::Q6 { date: Date::new(1994, 1, 1), discount_percent: 6, quantity: 24 },
            7 => QueryParameters::Q7 { nation1: s("FRANCE"), nation2: s("GERMANY") },
            8 => QueryParameters::Q8 {
                nation: s("BRAZIL"),
                region: s("AMERICA"),
                part_type: s("ECONOMY ANODIZED STEEL"),
            },
            9 => QueryParameters::Q9 { color: s("green") },
            10 => QueryParameters::Q10 { date: Date::new(1993, 10, 1) },
            11 => QueryParameters::Q11 { nation: s("GERMANY"), fraction: 0.0001 / scale_factor },
            12 => QueryParameters::Q12 { shipmode1: s("MAIL"), shipmode2: s("SHIP"), date: Date::new(1994, 1, 1) },
            13 => QueryParameters::Q13 { word1: s("special"), word2: s("requests") },
            14 => QueryParameters::Q14 { date: Date::new(1995, 9, 1) },
            15 => QueryParameters::Q15 { date: Date::new(1996, 1, 1) },
            16 => QueryParameters::Q16 {
                brand: s("Brand#45"),
                type_prefix: s("MEDIUM POLISHED"),
                sizes: vec![49, 14, 23, 45, 19, 3, 36, 9],
            },
            17 => QueryParameters::Q17 { brand: s("Brand#23"), container: s("MED BOX") },
            18 => QueryParameters::Q18 { quantity: 300 },
            19 => QueryParameters::Q19 {
                quantity1: 1,
                quantity2: 10,
                quantity3: 20,
                brand1: s("Brand#12"),
                brand2: s("Brand#23"),
                brand3: s("Brand#34"),
            },
            20 => QueryParameters::Q20 { color: s("forest"), date: Date::new(1994, 1, 1), nation: s("CANADA") },
            21 => QueryParameters::Q21 { nation: s("SAUDI ARABIA") },
            22 => QueryParameters::Q22 { country_codes: vec![13, 31, 23, 29, 30, 18, 17] },
            _ => panic!("TPC-H has queries 1 to 22, not {query}"),
        }
    }

    /// Random parameters for a query, drawn from the specification's ranges (clause 2.4.x.3).
    pub fn random(query: u8, scale_factor: f64, random: &mut SeededRandom) -> QueryParameters {
        let lists = Lists::get();
        let year_start = |random: &mut SeededRandom| Date::new(random.between(1993, 1997) as i32, 1, 1);
        // The first day of a month counted from `first` (inclusive) for `months` months.
        let month_start = |random: &mut SeededRandom, first: Date, months: i64| {
            first.plus_months(random.between(0, months - 1) as i32)
        };
        let brand = |random: &mut SeededRandom| format!("Brand#{}{}", random.between(1, 5), random.between(1, 5));
        let nation = |random: &mut SeededRandom| random.pick(&lists.nations).0.clone();
        match query {
            1 => QueryParameters::Q1 { delta_days: random.between(60, 120) },
            2 => QueryParameters::Q2 {
                size: random.between(1, 50),
                type_suffix: random.pick(&lists.type_syllables[2]).clone(),
                region: random.pick(&lists.regions).clone(),
            },
            3 => QueryParameters::Q3 {
                segment: random.pick(&lists.segments).clone(),
                date: Date::new(1995, 3, random.between(1, 31) as u32),
            },
            // January 1993 to October 1997.
            4 => QueryParameters::Q4 { date: month_start(random, Date::new(1993, 1, 1), 58) },
            5 => QueryParameters::Q5 { region: random.pick(&lists.regions).clone(), date: year_start(random) },
            6 => QueryParameters::Q6 {
                date: year_start(random),
                discount_percent: random.between(2, 9),
                quantity: random.between(24, 25),
            },
            7 => {
                let nation1 = nation(random);
                let mut nation2 = nation(random);
                while nation2 == nation1 {
                    nation2 = nation(random);
                }
                QueryParameters::Q7 { nation1, nation2 }
            }
            8 => {
                let (nation, region_index) = random.pick(&lists.nations).clone();
                QueryParameters::Q8 {
                    nation,
                    region: lists.regions[region_index].clone(),
                    part_type: lists
                        .type_syllables
                        .iter()
                        .map(|s| random.pick(s).as_str())
                        .collect::<Vec<_>>()
                        .join(" "),
                }
            }
            9 => QueryParameters::Q9 { color: random.pick(&lists.colors).clone() },
            // February 1993 to January 1995.
            10 => QueryParameters::Q10 { date: month_start(random, Date::new(1993, 2, 1), 24) },
            11 => QueryParameters::Q11 { nation: nation(random), fraction: 0.0001 / scale_factor },
            12 => {
                let shipmode1 = random.pick(&lists.ship_modes).clone();
                let mut shipmode2 = random.pick(&lists.ship_modes).clone();
                while shipmode2 == shipmode1 {
                    shipmode2 = random.pick(&lists.ship_modes).clone();
                }
                QueryParameters::Q12 { shipmode1, shipmode2, date: year_start(random) }
            }
            13 => QueryParameters::Q13 {
                word1: random.pick(&["special", "pending", "unusual", "express"]).to_string(),
                word2: random.pick(&["packages", "requests", "accounts", "deposits"]).to_string(),
            },
            // January 1993 to December 1997.
            14 => QueryParameters::Q14 { date: month_start(random, Date::new(1993, 1, 1), 60) },
            // January 1993 to October 1997.
            15 => QueryParameters::Q15 { date: month_start(random, Date::new(1993, 1, 1), 58) },
            16 => QueryParameters::Q16 {
                brand: brand(random),
                type_prefix: format!(
                    "{} {}",
                    random.pick(&lists.type_syllables[0]),
                    random.pick(&lists.type_syllables[1])
                ),
                sizes: random.distinct(8, 1, 50),
            },
            17 => QueryParameters::Q17 {
                brand: brand(random),
                container: format!(
                    "{} {}",
                    random.pick(&lists.container_syllables[0]),
                    random.pick(&lists.container_syllables[1])
                ),
            },
            18 => QueryParameters::Q18 { quantity: random.between(312, 315) },
            19 => QueryParameters::Q19 {
                quantity1: random.between(1, 10),
                quantity2: random.between(10, 20),
                quantity3: random.between(20, 30),
                brand1: brand(random),
                brand2: brand(random),
                brand3: brand(random),
            },
            20 => QueryParameters::Q20 {
                color: random.pick(&lists.colors).clone(),
                date: year_start(random),
                nation: nation(random),
            },
            21 => QueryParameters::Q21 { nation: nation(random) },
            // Country codes are the first two digits of phone numbers: nation key + 10.
            22 => QueryParameters::Q22 { country_codes: random.distinct(7, 10, 34) },
            _ => panic!("TPC-H has queries 1 to 22, not {query}"),
        }
    }
}

/// The value lists of the specification (clause 4.2.2.13 and 4.2.3), taken from tpchgen's copy of dists.dss.
pub struct Lists {
    /// Nation names with their region index.
    pub nations: Vec<(String, usize)>,
    pub regions: Vec<String>,
    pub segments: Vec<String>,
    pub ship_modes: Vec<String>,
    pub colors: Vec<String>,
    /// The three syllable lists of P_TYPE.
    pub type_syllables: [Vec<String>; 3],
    /// The two syllable lists of P_CONTAINER.
    pub container_syllables: [Vec<String>; 2],
}

impl Lists {
    pub fn get() -> &'static Lists {
        static LISTS: std::sync::OnceLock<Lists> = std::sync::OnceLock::new();
        LISTS.get_or_init(|| {
            let d = Distributions::static_default();
            let values = |dist: &tpchgen::distribution::Distribution| {
                dist.get_values().iter().map(|v| v.to_string()).collect::<Vec<_>>()
            };
            let nations = d
                .nations()
                .get_values()
                .iter()
                .enumerate()
                .map(|(i, name)| (name.to_string(), d.nations().get_weight(i) as usize))
                .collect();
            // Part types and containers are sets of whole strings in dists.dss; split them into their syllables.
            let syllables = |dist: &tpchgen::distribution::Distribution, words: usize, position: usize| {
                let mut list: Vec<String> = Vec::new();
                for value in dist.get_values() {
                    let parts: Vec<&str> = value.split(' ').collect();
                    let syllable = if parts.len() == words {
                        parts[position].to_string()
                    } else {
                        // Two-word first syllables do not occur; keep the shape check explicit.
                        panic!("unexpected value '{value}' in {}", dist.name())
                    };
                    if !list.contains(&syllable) {
                        list.push(syllable);
                    }
                }
                list
            };
            Lists {
                nations,
                regions: values(d.regions()),
                segments: values(d.market_segments()),
                ship_modes: values(d.ship_modes()),
                colors: values(d.part_colors()),
                type_syllables: [
                    syllables(d.part_types(), 3, 0),
                    syllables(d.part_types(), 3, 1),
                    syllables(d.part_types(), 3, 2),
                ],
                container_syllables: [syllables(d.part_containers(), 2, 0), syllables(d.part_containers(), 2, 1)],
            }
        })
    }
}

/// How each query set orders its 22 queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QueryOrder {
    /// The specification's permutation table (Appendix A): row 0 for the power test, rows 1.. for throughput streams;
    /// query sets beyond the table's rows use a seeded permutation.
    #[default]
    Specification,
    /// A permutation drawn from the seed for every query set.
    Seeded,
}

/// Appendix A of TPC-H 2.x: the query order of streams 0 to 11.
pub const PERMUTATIONS: [[u8; 22]; 12] = [
    [14, 2, 9, 20, 6, 17, 18, 8, 21, 13, 3, 22, 16, 4, 11, 15, 1, 10, 19, 5, 7, 12],
    [21, 3, 18, 5, 11, 7, 6, 20, 17, 12, 16, 15, 13, 10, 2, 8, 14, 19, 9, 22, 1, 4],
    [6, 17, 14, 16, 19, 10, 9, 2, 15, 8, 5, 22, 12, 7, 13, 18, 1, 4, 20, 3, 11, 21],
    [8, 5, 4, 6, 17, 7, 1, 18, 22, 14, 9, 10, 15, 11, 20, 2, 21, 19, 13, 16, 12, 3],
    [5, 21, 14, 19, 15, 17, 12, 6, 4, 9, 8, 16, 11, 2, 10, 18, 1, 13, 7, 22, 3, 20],
    [21, 15, 4, 6, 7, 16, 19, 18, 14, 22, 11, 13, 3, 1, 2, 5, 8, 20, 12, 17, 10, 9],
    [10, 3, 15, 13, 6, 8, 9, 7, 4, 11, 22, 18, 12, 1, 5, 16, 2, 14, 19, 20, 17, 21],
    [18, 8, 20, 21, 2, 4, 22, 17, 1, 11, 9, 19, 3, 13, 5, 7, 10, 16, 6, 14, 15, 12],
    [19, 1, 15, 17, 5, 8, 9, 12, 14, 7, 4, 3, 20, 16, 6, 22, 10, 13, 2, 21, 18, 11],
    [8, 13, 2, 20, 17, 3, 6, 21, 18, 11, 19, 10, 15, 4, 22, 1, 7, 12, 9, 14, 5, 16],
    [6, 15, 18, 17, 12, 1, 7, 2, 22, 13, 21, 10, 14, 9, 3, 16, 20, 19, 11, 4, 8, 5],
    [15, 14, 18, 17, 10, 20, 16, 11, 1, 8, 4, 22, 5, 12, 3, 9, 21, 2, 13, 6, 19, 7],
];

/// Where a query set's order came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "source")]
pub enum OrderSource {
    /// A row of the specification's permutation table.
    SpecificationRow {
        row: usize,
    },
    Seeded,
}

/// The query order of one query set. `table_row` is the row the specification would use (0 for the power test,
/// the stream number for throughput streams).
pub fn query_order(order: QueryOrder, table_row: usize, random: &mut SeededRandom) -> (Vec<u8>, OrderSource) {
    match order {
        QueryOrder::Specification if table_row < PERMUTATIONS.len() => {
            (PERMUTATIONS[table_row].to_vec(), OrderSource::SpecificationRow { row: table_row })
        }
        _ => {
            let mut queries: Vec<u8> = (1..=22).collect();
            random.shuffle(&mut queries);
            (queries, OrderSource::Seeded)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_round_trip_and_step() {
        assert_eq!(Date::new(1970, 1, 1).days_since_epoch(), 0);
        for days in -1000..20_000 {
            assert_eq!(Date::from_days_since_epoch(days).days_since_epoch(), days);
        }
        assert_eq!(Date::new(1998, 12, 1).plus_days(-90), Date::new(1998, 9, 2));
        assert_eq!(Date::new(1993, 11, 1).plus_months(3), Date::new(1994, 2, 1));
        assert_eq!(Date::new(1996, 2, 1).plus_days(29), Date::new(1996, 3, 1));
    }

    #[test]
    fn value_lists_match_the_specification() {
        let lists = Lists::get();
        assert_eq!(lists.nations.len(), 25);
        assert_eq!(lists.nations[2], ("BRAZIL".to_string(), 1));
        assert_eq!(lists.nations[20], ("SAUDI ARABIA".to_string(), 4));
        assert_eq!(lists.regions, ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]);
        assert_eq!(lists.segments.len(), 5);
        assert_eq!(lists.ship_modes.len(), 7);
        assert_eq!(lists.colors.len(), 92);
        assert_eq!(lists.type_syllables.each_ref().map(|s| s.len()), [6, 5, 5]);
        assert_eq!(lists.container_syllables.each_ref().map(|s| s.len()), [5, 8]);
    }

    #[test]
    fn permutation_rows_are_permutations() {
        for row in PERMUTATIONS {
            let mut sorted = row.to_vec();
            sorted.sort();
            assert_eq!(sorted, (1..=22).collect::<Vec<u8>>());
        }
        let mut random = SeededRandom::new(1);
        let (seeded, source) = query_order(QueryOrder::Seeded, 0, &mut random);
        assert_eq!(source, OrderSource::Seeded);
        let mut sorted = seeded.clone();
        sorted.sort();
        assert_eq!(sorted, (1..=22).collect::<Vec<u8>>());
        assert_eq!(query_order(QueryOrder::Specification, 12, &mut random).1, OrderSource::Seeded);
    }

    #[test]
    fn random_parameters_are_deterministic_and_in_range() {
        let lists = Lists::get();
        for seed in 0..200u64 {
            let draw = |seed| {
                let mut random = SeededRandom::for_stream(seed, 1, 0);
                (1..=22).map(|q| QueryParameters::random(q, 10.0, &mut random)).collect::<Vec<_>>()
            };
            let params = draw(seed);
            assert_eq!(params, draw(seed));
            for (i, p) in params.iter().enumerate() {
                assert_eq!(p.query() as usize, i + 1);
                let brand_ok = |b: &str| {
                    let digits: Vec<u32> =
                        b.strip_prefix("Brand#").unwrap().chars().map(|c| c.to_digit(10).unwrap()).collect();
                    digits.len() == 2 && digits.iter().all(|d| (1..=5).contains(d))
                };
                let year_start = |d: &Date| (1993..=1997).contains(&d.year) && d.month == 1 && d.day == 1;
                match p {
                    QueryParameters::Q1 { delta_days } => assert!((60..=120).contains(delta_days)),
                    QueryParameters::Q2 { size, type_suffix, region } => {
                        assert!((1..=50).contains(size));
                        assert!(["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"].contains(&type_suffix.as_str()));
                        assert!(lists.regions.contains(region));
                    }
                    QueryParameters::Q3 { segment, date } => {
                        assert!(lists.segments.contains(segment));
                        assert!(*date >= Date::new(1995, 3, 1) && *date <= Date::new(1995, 3, 31));
                    }
                    QueryParameters::Q4 { date } | QueryParameters::Q15 { date } => {
                        assert!(*date >= Date::new(1993, 1, 1) && *date <= Date::new(1997, 10, 1) && date.day == 1)
                    }
                    QueryParameters::Q5 { region, date } => {
                        assert!(lists.regions.contains(region) && year_start(date))
                    }
                    QueryParameters::Q6 { date, discount_percent, quantity } => {
                        assert!(year_start(date));
                        assert!((2..=9).contains(discount_percent) && (24..=25).contains(quantity));
                    }
                    QueryParameters::Q7 { nation1, nation2 } => assert_ne!(nation1, nation2),
                    QueryParameters::Q8 { nation, region, part_type } => {
                        let (_, r) = lists.nations.iter().find(|(n, _)| n == nation).unwrap();
                        assert_eq!(&lists.regions[*r], region);
                        assert_eq!(part_type.split(' ').count(), 3);
                    }
                    QueryParameters::Q9 { color } => assert!(lists.colors.contains(color)),
                    QueryParameters::Q10 { date } => {
                        assert!(*date >= Date::new(1993, 2, 1) && *date <= Date::new(1995, 1, 1) && date.day == 1)
                    }
                    QueryParameters::Q11 { fraction, .. } => assert!((fraction - 0.00001).abs() < 1e-12),
                    QueryParameters::Q12 { shipmode1, shipmode2, date } => {
                        assert!(shipmode1 != shipmode2 && year_start(date))
                    }
                    QueryParameters::Q13 { .. } => {}
                    QueryParameters::Q14 { date } => {
                        assert!(*date >= Date::new(1993, 1, 1) && *date <= Date::new(1997, 12, 1) && date.day == 1)
                    }
                    QueryParameters::Q16 { brand, type_prefix, sizes } => {
                        assert!(brand_ok(brand));
                        assert_eq!(type_prefix.split(' ').count(), 2);
                        let mut distinct = sizes.clone();
                        distinct.sort();
                        distinct.dedup();
                        assert!(distinct.len() == 8 && sizes.iter().all(|s| (1..=50).contains(s)));
                    }
                    QueryParameters::Q17 { brand, container } => {
                        assert!(brand_ok(brand) && container.split(' ').count() == 2)
                    }
                    QueryParameters::Q18 { quantity } => assert!((312..=315).contains(quantity)),
                    QueryParameters::Q19 { quantity1, quantity2, quantity3, brand1, brand2, brand3 } => {
                        assert!((1..=10).contains(quantity1) && (10..=20).contains(quantity2));
                        assert!((20..=30).contains(quantity3));
                        assert!(brand_ok(brand1) && brand_ok(brand2) && brand_ok(brand3));
                    }
                    QueryParameters::Q20 { color, date, nation } => {
                        assert!(lists.colors.contains(color) && year_start(date));
                        assert!(lists.nations.iter().any(|(n, _)| n == nation));
                    }
                    QueryParameters::Q21 { nation } => assert!(lists.nations.iter().any(|(n, _)| n == nation)),
                    QueryParameters::Q22 { country_codes } => {
                        assert_eq!(country_codes.len(), 7);
                        assert!(country_codes.iter().all(|c| (10..=34).contains(c)));
                    }
                }
            }
        }
        let mut a = SeededRandom::for_stream(7, 1, 0);
        let mut b = SeededRandom::for_stream(7, 2, 0);
        assert_ne!(a.next_u64(), b.next_u64());
    }
}

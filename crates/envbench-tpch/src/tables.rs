//! The eight TPC-H tables as tpchgen generates them ([`TableName`]): their SQL names and row counts at a scale factor,
//! how each is cut into parts (files, parallel jobs) and Parquet row groups for parallel scans, and their rows as Arrow
//! batches or CSV lines.

use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator,
    RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RecordBatchIterator, RegionArrow,
    SupplierArrow,
};

/// The most rows in a row group (DuckDB's own row groups are 122,880 rows; 128 Ki keeps scans long).
pub const ROW_GROUP_ROWS: u64 = 128 * 1024;
/// The fewest row groups a scaled table is written in on any machine: 4 per core of a 16-core host, so every machine of
/// up to 16 cores writes the same files and their results compare (lineitem and orders have many more from SF 10 up).
/// A table too small for its floor gets row groups of [`SMALLEST_ROW_GROUP`] rows (supplier at SF 1: 40).
pub const MIN_ROW_GROUPS: u64 = 64;
/// A parallel scan splits a table by row groups, so a machine with more cores than [`MIN_ROW_GROUPS`] / 4 gets this many
/// row groups per core in every table (see [`min_row_groups`]), ...
pub const ROW_GROUPS_PER_CORE: u64 = 4;
/// ... up to this many cores.
pub const MAX_LAYOUT_CORES: usize = 256;
/// The smallest row group, so the small tables of tiny scale factors are not cut into crumbs.
pub const SMALLEST_ROW_GROUP: u64 = 256;
/// Rows per generated file (and so per parallel generation job); lineitem at SF 1 gives 6 files.
const ROWS_PER_FILE: f64 = 1_000_000.0;
const BATCH_ROWS: usize = 64 * 1024;

/// The eight TPC-H tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableName {
    Region,
    Nation,
    Supplier,
    Customer,
    Part,
    PartSupp,
    Orders,
    LineItem,
}

impl TableName {
    /// Every table, small ones first.
    pub const ALL: [TableName; 8] = [
        TableName::Region,
        TableName::Nation,
        TableName::Supplier,
        TableName::Customer,
        TableName::Part,
        TableName::PartSupp,
        TableName::Orders,
        TableName::LineItem,
    ];

    /// The SQL table name.
    pub fn as_str(self) -> &'static str {
        match self {
            TableName::Region => "region",
            TableName::Nation => "nation",
            TableName::Supplier => "supplier",
            TableName::Customer => "customer",
            TableName::Part => "part",
            TableName::PartSupp => "partsupp",
            TableName::Orders => "orders",
            TableName::LineItem => "lineitem",
        }
    }

    /// The row count the specification gives for a scale factor; lineitem's is approximate (about 6,000,000 * SF,
    /// the exact figure depends on the random line counts per order), so it returns `None`.
    pub fn expected_rows(self, scale_factor: f64) -> Option<u64> {
        let rows = match self {
            TableName::Region => 5,
            TableName::Nation => 25,
            TableName::Supplier => SupplierGenerator::calculate_row_count(scale_factor, 1, 1),
            TableName::Customer => CustomerGenerator::calculate_row_count(scale_factor, 1, 1),
            TableName::Part => PartGenerator::calculate_row_count(scale_factor, 1, 1),
            // tpchgen counts partsupp in parts; each part has four suppliers.
            TableName::PartSupp => 4 * PartSuppGenerator::calculate_row_count(scale_factor, 1, 1),
            TableName::Orders => OrderGenerator::calculate_row_count(scale_factor, 1, 1),
            TableName::LineItem => return None,
        };
        Some(rows as u64)
    }

    /// Roughly how many rows the table has at a scale factor, for splitting work and showing progress.
    pub fn approximate_rows(self, scale_factor: f64) -> u64 {
        self.expected_rows(scale_factor).unwrap_or((6_000_000.0 * scale_factor) as u64)
    }

    /// The rows of each of the table's row groups: at most [`ROW_GROUP_ROWS`], and small enough for `min_row_groups`
    /// row groups (see [`min_row_groups`]). Nation and region (25 and 5 rows at every scale) can never have that many,
    /// so each of their rows is a row group: as many as they can offer (nation more than 16, region 5), at the cost
    /// of a footer of a few KiB.
    pub fn row_group_rows(self, scale_factor: f64, min_row_groups: u64) -> u64 {
        match self {
            TableName::Region | TableName::Nation => 1,
            table => table
                .approximate_rows(scale_factor)
                .div_ceil(min_row_groups.max(1))
                .clamp(SMALLEST_ROW_GROUP, ROW_GROUP_ROWS),
        }
    }

    /// How many parts (files, parallel jobs) the table is generated in.
    pub fn parts(self, scale_factor: f64) -> i32 {
        ((self.approximate_rows(scale_factor) as f64 / ROWS_PER_FILE).ceil() as i32).max(1)
    }

    /// Roughly how many rows all the tables have at a scale factor, for progress.
    pub fn approximate_total_rows(scale_factor: f64) -> u64 {
        TableName::ALL.iter().map(|t| t.approximate_rows(scale_factor)).sum()
    }

    /// The jobs of a server load: every part of every table as (table, part, parts), the tables in reverse order so
    /// the big fact tables (lineitem, orders) start first on the parallel connections.
    pub fn load_jobs(scale_factor: f64) -> Vec<(TableName, i32, i32)> {
        TableName::ALL
            .iter()
            .rev()
            .flat_map(|&table| {
                let parts = table.parts(scale_factor);
                (1..=parts).map(move |part| (table, part, parts))
            })
            .collect()
    }

    /// Arrow batches of one part of the table.
    pub fn arrow_batches(self, scale_factor: f64, part: i32, parts: i32) -> Box<dyn RecordBatchIterator> {
        let (sf, p, n) = (scale_factor, part, parts);
        match self {
            TableName::Region => Box::new(RegionArrow::new(RegionGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS)),
            TableName::Nation => Box::new(NationArrow::new(NationGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS)),
            TableName::Supplier => {
                Box::new(SupplierArrow::new(SupplierGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS))
            }
            TableName::Customer => {
                Box::new(CustomerArrow::new(CustomerGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS))
            }
            TableName::Part => Box::new(PartArrow::new(PartGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS)),
            TableName::PartSupp => {
                Box::new(PartSuppArrow::new(PartSuppGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS))
            }
            TableName::Orders => Box::new(OrderArrow::new(OrderGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS)),
            TableName::LineItem => {
                Box::new(LineItemArrow::new(LineItemGenerator::new(sf, p, n)).with_batch_size(BATCH_ROWS))
            }
        }
    }

    /// One part of the table as CSV lines (no header), handed over in chunks of about `chunk_rows` rows; the
    /// callback returns false to stop early. Returns the rows produced.
    pub fn csv_chunks(
        self,
        scale_factor: f64,
        part: i32,
        parts: i32,
        chunk_rows: usize,
        consume: &mut dyn FnMut(&str, u64) -> bool,
    ) -> u64 {
        use tpchgen::csv::{
            CustomerCsv, LineItemCsv, NationCsv, OrderCsv, PartCsv, PartSuppCsv, RegionCsv, SupplierCsv,
        };
        let (sf, p, n) = (scale_factor, part, parts);
        fn drain<T>(
            rows: impl Iterator<Item = T>,
            chunk_rows: usize,
            consume: &mut dyn FnMut(&str, u64) -> bool,
            format: impl Fn(T, &mut String),
        ) -> u64 {
            let mut buffer = String::with_capacity(chunk_rows * 160);
            let (mut in_chunk, mut total) = (0u64, 0u64);
            for row in rows {
                format(row, &mut buffer);
                buffer.push('\n');
                in_chunk += 1;
                if in_chunk as usize >= chunk_rows {
                    total += in_chunk;
                    if !consume(&buffer, in_chunk) {
                        return total;
                    }
                    buffer.clear();
                    in_chunk = 0;
                }
            }
            if in_chunk > 0 {
                total += in_chunk;
                consume(&buffer, in_chunk);
            }
            total
        }
        macro_rules! csv {
            ($generator:expr, $csv:ident) => {
                drain($generator.iter(), chunk_rows, consume, |row, out| {
                    let _ = write!(out, "{}", $csv::new(row));
                })
            };
        }
        match self {
            TableName::Region => csv!(RegionGenerator::new(sf, p, n), RegionCsv),
            TableName::Nation => csv!(NationGenerator::new(sf, p, n), NationCsv),
            TableName::Supplier => csv!(SupplierGenerator::new(sf, p, n), SupplierCsv),
            TableName::Customer => csv!(CustomerGenerator::new(sf, p, n), CustomerCsv),
            TableName::Part => csv!(PartGenerator::new(sf, p, n), PartCsv),
            TableName::PartSupp => csv!(PartSuppGenerator::new(sf, p, n), PartSuppCsv),
            TableName::Orders => csv!(OrderGenerator::new(sf, p, n), OrderCsv),
            TableName::LineItem => csv!(LineItemGenerator::new(sf, p, n), LineItemCsv),
        }
    }
}

impl std::fmt::Display for TableName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The fewest row groups every scaled table needs for a parallel scan on a machine of `cores` cores:
/// [`ROW_GROUPS_PER_CORE`] per core up to [`MAX_LAYOUT_CORES`] cores, and never fewer than [`MIN_ROW_GROUPS`].
pub fn min_row_groups(cores: usize) -> u64 {
    (ROW_GROUPS_PER_CORE * cores.clamp(1, MAX_LAYOUT_CORES) as u64).max(MIN_ROW_GROUPS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_scaled_table_is_cut_into_row_groups_for_parallel_scans() {
        // Every machine of up to 16 cores writes the same files; above that, 4 row groups per core up to 256 cores.
        assert_eq!(min_row_groups(1), MIN_ROW_GROUPS);
        assert_eq!(min_row_groups(16), MIN_ROW_GROUPS);
        assert_eq!(min_row_groups(48), 192);
        assert_eq!(min_row_groups(256), 1024);
        assert_eq!(min_row_groups(1000), 1024);
        for cores in [2, 16, 48, 256, 1000] {
            for sf in [1.0, 10.0, 100.0] {
                for table in TableName::ALL {
                    let rows = table.row_group_rows(sf, min_row_groups(cores));
                    assert!(rows <= ROW_GROUP_ROWS, "{table} at SF {sf}");
                    let groups = table.approximate_rows(sf).div_ceil(rows);
                    match table {
                        // A row group per row: nation's 25 are more than 16; region has only 5 rows.
                        TableName::Region => assert_eq!(groups, 5),
                        TableName::Nation => assert_eq!(groups, 25),
                        _ => {
                            // 4 per core where the table has rows enough for row groups of SMALLEST_ROW_GROUP.
                            let wanted = 4 * cores.min(256) as u64;
                            let floor =
                                wanted.max(MIN_ROW_GROUPS).min(table.approximate_rows(sf).div_ceil(SMALLEST_ROW_GROUP));
                            assert!(
                                groups >= floor && groups >= 16,
                                "{table} at SF {sf} for {cores} cores: {groups} row groups"
                            );
                        }
                    }
                }
            }
        }
        assert_eq!(TableName::LineItem.row_group_rows(10.0, MIN_ROW_GROUPS), ROW_GROUP_ROWS);
        assert_eq!(TableName::Orders.row_group_rows(1.0, MIN_ROW_GROUPS), 23_438);
        assert_eq!(TableName::Orders.row_group_rows(1.0, min_row_groups(256)), 1_465);
    }

    #[test]
    fn tables_are_generated_in_parts_of_about_a_million_rows() {
        assert_eq!(TableName::LineItem.parts(1.0), 6);
        assert_eq!(TableName::Region.parts(1.0), 1);
    }
}

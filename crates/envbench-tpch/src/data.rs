//! The TPC-H tables: what tpchgen generates, written once as Parquet under a data directory with a manifest.
//!
//! Layout: `<data dir>/sf<SF>/<table>/part-<k>.parquet` plus `<data dir>/sf<SF>/manifest.json`, written last, so a
//! directory without a manifest is an interrupted generation and is regenerated, and `<data dir>/sf<SF>.lock`, the
//! lock a run holds on the scale factor's data ([`lock`]). envbench only ever deletes files it recognizes as its own;
//! a directory holding anything else is refused. Before generating, the free space the files need is checked
//! ([`check_space`]).

use crate::{TpchError, check_scale_factor, format_scale_factor};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::Compression;
use datafusion::parquet::file::properties::{EnabledStatistics, WriterProperties};
use envbench_core::ByteSize;
use envbench_io::lock::{FileLock, LockMode, LockRefused};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;
use tpchgen::generators::{
    CustomerGenerator, LineItemGenerator, NationGenerator, OrderGenerator, PartGenerator, PartSuppGenerator,
    RegionGenerator, SupplierGenerator,
};
use tpchgen_arrow::{
    CustomerArrow, LineItemArrow, NationArrow, OrderArrow, PartArrow, PartSuppArrow, RecordBatchIterator, RegionArrow,
    SupplierArrow,
};

/// The generator that makes the data; recorded in the manifest so data from another generator is not reused.
pub const GENERATOR: &str = "tpchgen 3.0";
/// Bumped when the file layout or manifest changes (4: nation and region in a row group per row; 3: LZ4_RAW instead of
/// Snappy; 2: row groups of at most 128 Ki rows, at least 64 per scaled table, with page statistics; 1 wrote one row
/// group per file).
pub const MANIFEST_FORMAT: u32 = 4;
/// How every file is compressed (see [`writer_properties`]); the manifest records its name.
const COMPRESSION: Compression = Compression::LZ4_RAW;
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
const MANIFEST_FILE: &str = "manifest.json";
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

/// One generated table in the manifest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableFiles {
    pub rows: u64,
    pub bytes: u64,
    /// Row groups over all the files, and the most rows in one.
    #[serde(default)]
    pub row_groups: u64,
    #[serde(default)]
    pub row_group_rows: u64,
    /// Paths relative to the scale factor's directory.
    pub files: Vec<String>,
}

/// What a complete generation wrote; its presence marks the data as complete and reusable.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: u32,
    pub scale_factor: f64,
    pub generator: String,
    pub compression: String,
    /// The fewest row groups each scaled table was cut into (see [`min_row_groups`]); manifests written before it was
    /// recorded used [`MIN_ROW_GROUPS`].
    #[serde(default = "min_row_groups_before_recorded")]
    pub min_row_groups: u64,
    pub tables: BTreeMap<TableName, TableFiles>,
    pub generation_ms: u64,
}

/// Generated data ready to query.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct DataSet {
    /// The scale factor's directory (`<data dir>/sf<SF>`).
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// True when existing data was reused rather than generated by this call.
    pub reused: bool,
    /// The manifest format of complete data this call replaced because its layout is older (it is regenerated once).
    pub replaced_format: Option<u32>,
    /// The cores of this machine when this call replaced complete data whose tables had too few row groups to scan
    /// on all of them (data generated on a machine with fewer cores).
    pub replaced_for_cores: Option<usize>,
}

/// How a data set was made, kept with the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenerationInfo {
    /// True when a complete earlier generation was used.
    pub reused: bool,
    pub dir: PathBuf,
    pub rows: u64,
    pub bytes: u64,
    /// Seconds the generation took (when it was made, for reused data).
    pub seconds: f64,
    pub rows_per_second: f64,
}

impl GenerationInfo {
    pub fn of(data: &DataSet) -> GenerationInfo {
        let seconds = data.manifest.generation_ms as f64 / 1e3;
        GenerationInfo {
            reused: data.reused,
            dir: data.dir.clone(),
            rows: data.total_rows(),
            bytes: data.total_bytes(),
            seconds,
            rows_per_second: data.total_rows() as f64 / seconds.max(1e-9),
        }
    }
}

impl DataSet {
    pub fn scale_factor(&self) -> f64 {
        self.manifest.scale_factor
    }

    /// The directory holding a table's Parquet files.
    pub fn table_dir(&self, table: TableName) -> PathBuf {
        self.dir.join(table.as_str())
    }

    /// Total rows over all tables.
    pub fn total_rows(&self) -> u64 {
        self.manifest.tables.values().map(|t| t.rows).sum()
    }

    /// Total bytes over all files.
    pub fn total_bytes(&self) -> u64 {
        self.manifest.tables.values().map(|t| t.bytes).sum()
    }
}

/// How to generate.
#[derive(Clone, Debug)]
pub struct GenerationOptions {
    /// Where scale factor directories live.
    pub data_dir: PathBuf,
    pub scale_factor: f64,
    /// Regenerate even when complete data exists.
    pub fresh: bool,
    /// Parallel generation jobs; `None` uses every CPU.
    pub threads: Option<usize>,
}

/// Progress of a generation, for a rows/s display.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GenerationProgress {
    pub rows_generated: u64,
    /// About how many rows there will be (lineitem's count is estimated).
    pub rows_expected: u64,
    pub elapsed_seconds: f64,
}

/// The directory of one scale factor under the data directory.
pub fn scale_factor_dir(data_dir: &Path, scale_factor: f64) -> PathBuf {
    data_dir.join(format!("sf{}", format_scale_factor(scale_factor)))
}

fn io_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> TpchError {
    let path = path.to_path_buf();
    move |source| TpchError::Io { path, action, source }
}

/// The lock file of a scale factor's data: beside its directory, so removing an interrupted generation's directory
/// leaves the lock alone.
pub fn lock_path(data_dir: &Path, scale_factor: f64) -> PathBuf {
    data_dir.join(format!("sf{}.lock", format_scale_factor(scale_factor)))
}

/// Whether `name`, in the data directory, is a scale factor's directory (`sf0.01`) or lock file (`sf0.01.lock`).
fn is_scale_factor_entry(name: &str, is_dir: bool) -> bool {
    let scale_factor = |text: &str| text.strip_prefix("sf").is_some_and(|n| n.parse::<f64>().is_ok_and(|sf| sf > 0.0));
    match name.strip_suffix(".lock") {
        Some(stem) => !is_dir && scale_factor(stem),
        None => is_dir && scale_factor(name),
    }
}

/// Hold the lock on the data of `scale_factor` under `data_dir` (created when missing): exclusive to generate, shared
/// to read complete data. Refused at once, naming the holder, while another run holds it in a mode that conflicts.
pub fn lock(data_dir: &Path, scale_factor: f64, exclusive: bool) -> Result<FileLock, TpchError> {
    std::fs::create_dir_all(data_dir).map_err(io_error(data_dir, "creating"))?;
    let path = lock_path(data_dir, scale_factor);
    let mode = if exclusive { LockMode::Exclusive } else { LockMode::Shared };
    let command = envbench_io::lock::this_command_line();
    FileLock::take(&path, mode, &command).map_err(|refused| match refused {
        LockRefused::Io { path, source } => TpchError::Io { path, action: "locking", source },
        busy => TpchError::Busy(format!(
            "{}: the TPC-H data of SF {} is in use by {}; wait for it to end, or give another --dir",
            data_dir.display(),
            format_scale_factor(scale_factor),
            busy.holder_text()
        )),
    })
}

/// Bytes the Parquet files of a scale factor take, with a margin. Measured (manifest format 4, a 2-core machine):
/// 4.93 MB at SF 0.01, 40.8 MB at SF 0.1, 382 MB at SF 1, so about 382 MB per unit of scale and a fixed 1 MB (nation
/// and region in a row group per row, every file's footer); a quarter more for machines of more cores (more row
/// groups, more footers and statistics) and for the scale factors between.
pub fn space_needed(scale_factor: f64) -> u64 {
    const BYTES_PER_SCALE_FACTOR: f64 = 400e6;
    const FIXED_BYTES: f64 = 1e6;
    ((BYTES_PER_SCALE_FACTOR * scale_factor + FIXED_BYTES) * 1.25) as u64
}

/// Refuse a generation whose files cannot fit under `data_dir` (measured on its nearest existing directory, since
/// it may not exist yet), counting the space the files it replaces will give back. Nothing is created.
pub fn check_space(data_dir: &Path, scale_factor: f64) -> Result<(), TpchError> {
    let existing = data_dir.ancestors().find(|d| d.is_dir()).unwrap_or(Path::new("."));
    let Some(available) = envbench_io::testfile::available_bytes(existing).ok().flatten() else { return Ok(()) };
    let replaced = read_manifest(&scale_factor_dir(data_dir, scale_factor))
        .ok()
        .flatten()
        .map(|manifest| manifest.tables.values().map(|t| t.bytes).sum::<u64>())
        .unwrap_or(0);
    let needed = space_needed(scale_factor);
    if needed > available.saturating_add(replaced) {
        return Err(TpchError::NotEnoughSpace {
            dir: data_dir.to_path_buf(),
            scale_factor: format_scale_factor(scale_factor),
            needed: ByteSize(needed),
            available: ByteSize(available.saturating_add(replaced)),
        });
    }
    Ok(())
}

/// Load the manifest of a scale factor directory, if a complete generation left one.
pub fn read_manifest(dir: &Path) -> Result<Option<Manifest>, TpchError> {
    let path = dir.join(MANIFEST_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&path, "reading")(e)),
    };
    serde_json::from_str(&text).map(Some).map_err(|e| TpchError::BadManifest { path, reason: e.to_string() })
}

/// Refuse directories holding anything envbench would not have written there.
pub fn check_only_ours(data_dir: &Path, sf_dir: &Path) -> Result<(), TpchError> {
    let foreign = |dir: &Path, example: String| TpchError::ForeignFiles { dir: dir.to_path_buf(), example };
    if data_dir.exists() {
        for entry in std::fs::read_dir(data_dir).map_err(io_error(data_dir, "listing"))? {
            let entry = entry.map_err(io_error(data_dir, "listing"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !is_scale_factor_entry(&name, entry.path().is_dir()) {
                return Err(foreign(data_dir, name));
            }
        }
    }
    if sf_dir.exists() {
        for entry in std::fs::read_dir(sf_dir).map_err(io_error(sf_dir, "listing"))? {
            let entry = entry.map_err(io_error(sf_dir, "listing"))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == MANIFEST_FILE {
                continue;
            }
            if !TableName::ALL.iter().any(|t| t.as_str() == name) || !entry.path().is_dir() {
                return Err(foreign(sf_dir, name));
            }
            for file in std::fs::read_dir(entry.path()).map_err(io_error(&entry.path(), "listing"))? {
                let file = file.map_err(io_error(&entry.path(), "listing"))?;
                let file_name = file.file_name().to_string_lossy().into_owned();
                if !(file_name.starts_with("part-")
                    && (file_name.ends_with(".parquet") || file_name.ends_with(".parquet.partial")))
                {
                    return Err(foreign(&entry.path(), file_name));
                }
            }
        }
    }
    Ok(())
}

/// The fewest row groups every scaled table needs for a parallel scan on a machine of `cores` cores:
/// [`ROW_GROUPS_PER_CORE`] per core up to [`MAX_LAYOUT_CORES`] cores, and never fewer than [`MIN_ROW_GROUPS`].
pub fn min_row_groups(cores: usize) -> u64 {
    (ROW_GROUPS_PER_CORE * cores.clamp(1, MAX_LAYOUT_CORES) as u64).max(MIN_ROW_GROUPS)
}

fn min_row_groups_before_recorded() -> u64 {
    MIN_ROW_GROUPS
}

/// Whether a complete generation's manifest is of this layout and generator, and of `scale_factor`.
fn current_layout(manifest: &Manifest, scale_factor: f64) -> bool {
    manifest.format == MANIFEST_FORMAT && manifest.generator == GENERATOR && manifest.scale_factor == scale_factor
}

/// Whether a complete generation is one a machine of `cores` cores uses as it is: of this layout, generator and
/// scale factor, with row groups enough for every core.
fn reuses(manifest: &Manifest, scale_factor: f64, cores: usize) -> bool {
    current_layout(manifest, scale_factor) && manifest.min_row_groups >= min_row_groups(cores)
}

/// Whether complete data of `scale_factor` that this machine can use as it is lies under `data_dir`: what
/// [`ensure_data`] reuses rather than generating, unless told to regenerate.
pub fn reusable(data_dir: &Path, scale_factor: f64) -> Result<bool, TpchError> {
    let manifest = read_manifest(&scale_factor_dir(data_dir, scale_factor))?;
    Ok(manifest.is_some_and(|manifest| reuses(&manifest, scale_factor, machine_cores())))
}

/// This machine's cores, as the data's layout counts them.
fn machine_cores() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// Make sure complete data for the scale factor exists, generating it (in parallel) unless a complete generation by
/// the same generator, with row groups enough for this machine's cores, is already there. `progress` is called from
/// the generation threads as rows are written.
pub fn ensure_data(
    options: &GenerationOptions,
    interrupt: &AtomicBool,
    progress: &(dyn Fn(GenerationProgress) + Sync),
) -> Result<DataSet, TpchError> {
    ensure_data_for_cores(options, machine_cores(), interrupt, progress)
}

/// [`ensure_data`] on a machine of `cores` cores.
fn ensure_data_for_cores(
    options: &GenerationOptions,
    cores: usize,
    interrupt: &AtomicBool,
    progress: &(dyn Fn(GenerationProgress) + Sync),
) -> Result<DataSet, TpchError> {
    check_scale_factor(options.scale_factor)?;
    let dir = scale_factor_dir(&options.data_dir, options.scale_factor);
    check_only_ours(&options.data_dir, &dir)?;
    let existing = read_manifest(&dir)?;
    let needed = min_row_groups(cores);
    let current = existing.as_ref().filter(|manifest| current_layout(manifest, options.scale_factor));
    if !options.fresh
        && let Some(manifest) = existing.as_ref().filter(|manifest| reuses(manifest, options.scale_factor, cores))
    {
        return Ok(DataSet {
            dir,
            manifest: manifest.clone(),
            reused: true,
            replaced_format: None,
            replaced_for_cores: None,
        });
    }
    let replaced_format = existing.as_ref().map(|m| m.format).filter(|format| *format < MANIFEST_FORMAT);
    let replaced_for_cores = current.filter(|m| !options.fresh && m.min_row_groups < needed).map(|_| cores);
    let manifest = generate(&dir, options, needed, interrupt, progress)?;
    Ok(DataSet { dir, manifest, reused: false, replaced_format, replaced_for_cores })
}

fn remove_ours(dir: &Path) -> Result<(), TpchError> {
    let manifest = dir.join(MANIFEST_FILE);
    if manifest.exists() {
        std::fs::remove_file(&manifest).map_err(io_error(&manifest, "removing"))?;
    }
    for table in TableName::ALL {
        let table_dir = dir.join(table.as_str());
        if table_dir.exists() {
            // check_only_ours has verified every file in here is a part file of ours.
            std::fs::remove_dir_all(&table_dir).map_err(io_error(&table_dir, "removing"))?;
        }
    }
    Ok(())
}

struct Job {
    table: TableName,
    part: i32,
    parts: i32,
    row_group_rows: u64,
}

fn generate(
    dir: &Path,
    options: &GenerationOptions,
    min_row_groups: u64,
    interrupt: &AtomicBool,
    progress: &(dyn Fn(GenerationProgress) + Sync),
) -> Result<Manifest, TpchError> {
    let started = Instant::now();
    let sf = options.scale_factor;
    remove_ours(dir)?;
    for table in TableName::ALL {
        let table_dir = dir.join(table.as_str());
        std::fs::create_dir_all(&table_dir).map_err(io_error(&table_dir, "creating"))?;
    }
    // Big tables first so the long jobs start early and the small ones fill the gaps.
    let mut jobs: Vec<Job> = TableName::ALL
        .iter()
        .flat_map(|&table| {
            let parts = table.parts(sf);
            let row_group_rows = table.row_group_rows(sf, min_row_groups);
            (1..=parts).map(move |part| Job { table, part, parts, row_group_rows })
        })
        .collect();
    jobs.sort_by_key(|job| std::cmp::Reverse(job.table.approximate_rows(sf) / job.parts as u64));
    let rows_expected = TableName::approximate_total_rows(sf);
    let threads = options
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
        .clamp(1, jobs.len());
    let next_job = Mutex::new(jobs.into_iter());
    let rows_generated = AtomicU64::new(0);
    let written: Mutex<Vec<(TableName, String, PartWritten)>> = Mutex::new(Vec::new());
    let first_error: Mutex<Option<TpchError>> = Mutex::new(None);

    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    if interrupt.load(Ordering::SeqCst) || first_error.lock().expect("no panics").is_some() {
                        return;
                    }
                    let Some(job) = next_job.lock().expect("no panics").next() else { return };
                    let relative = format!("{}/part-{:05}.parquet", job.table.as_str(), job.part);
                    let on_rows = |rows: u64| {
                        let total = rows_generated.fetch_add(rows, Ordering::Relaxed) + rows;
                        progress(GenerationProgress {
                            rows_generated: total,
                            rows_expected,
                            elapsed_seconds: started.elapsed().as_secs_f64(),
                        });
                    };
                    match write_part(dir, &relative, &job, sf, interrupt, &on_rows) {
                        Ok(part) => written.lock().expect("no panics").push((job.table, relative, part)),
                        Err(e) => {
                            first_error.lock().expect("no panics").get_or_insert(e);
                        }
                    }
                }
            });
        }
    });
    let failure = match first_error.into_inner().expect("no panics") {
        Some(error) => Some(error),
        None if interrupt.load(Ordering::SeqCst) => Some(TpchError::Interrupted),
        None => None,
    };
    if let Some(error) = failure {
        // An incomplete generation is of no use to anyone: take back what was written (best effort, the error
        // that stopped generation is the one to report).
        let _ = remove_ours(dir);
        let _ = std::fs::remove_dir(dir);
        return Err(error);
    }
    let mut tables: BTreeMap<TableName, TableFiles> = BTreeMap::new();
    let mut written = written.into_inner().expect("no panics");
    written.sort_by(|a, b| a.1.cmp(&b.1));
    for (table, file, part) in written {
        let entry = tables.entry(table).or_insert(TableFiles {
            rows: 0,
            bytes: 0,
            row_groups: 0,
            row_group_rows: table.row_group_rows(sf, min_row_groups),
            files: Vec::new(),
        });
        entry.rows += part.rows;
        entry.bytes += part.bytes;
        entry.row_groups += part.row_groups;
        entry.files.push(file);
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        scale_factor: sf,
        generator: GENERATOR.to_string(),
        compression: COMPRESSION.to_string().to_lowercase(),
        min_row_groups,
        tables,
        generation_ms: started.elapsed().as_millis() as u64,
    };
    let path = dir.join(MANIFEST_FILE);
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest always serializes");
    std::fs::write(&path, text).map_err(io_error(&path, "writing"))?;
    Ok(manifest)
}

/// What writing one part wrote.
struct PartWritten {
    rows: u64,
    bytes: u64,
    row_groups: u64,
}

/// How a table's files are written: LZ4_RAW, row groups of at most `row_group_rows` ([`TableName::row_group_rows`]), and
/// statistics per page, so the page index (column and offset indexes) lets a reader skip pages as well as row groups.
/// LZ4_RAW files are as small as Snappy ones (365 against 356 MiB at SF 1), and decompressing Snappy was a fifth of
/// DataFusion's CPU time in the power test: on the same machine in one run, the power test's geometric mean was 1.22x
/// faster on LZ4_RAW files than on Snappy ones (DuckDB's 1.19x). Uncompressed files were faster still but 1.8x larger,
/// so more I/O on a network store; zstd decompresses slower than Snappy. Plain instead of dictionary encoding for the
/// near-unique columns (1.05x for DataFusion, 1.08x for DuckDB, inside the run-to-run spread) and Arrow dictionary
/// types for the short strings (no gain) were measured too, and left out.
fn writer_properties(row_group_rows: u64) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(COMPRESSION)
        .set_max_row_group_row_count(Some(row_group_rows as usize))
        .set_statistics_enabled(EnabledStatistics::Page)
        .build()
}

/// Write one part to `<relative>.partial`, then rename it, so a crash never leaves a plausible-looking file.
fn write_part(
    dir: &Path,
    relative: &str,
    job: &Job,
    scale_factor: f64,
    interrupt: &AtomicBool,
    on_rows: &dyn Fn(u64),
) -> Result<PartWritten, TpchError> {
    let path = dir.join(relative);
    let partial = dir.join(format!("{relative}.partial"));
    let parquet_error = |e: &dyn std::fmt::Display| TpchError::Parquet { path: path.clone(), reason: e.to_string() };
    let file = std::fs::File::create(&partial).map_err(io_error(&partial, "creating"))?;
    let batches = job.table.arrow_batches(scale_factor, job.part, job.parts);
    let properties = writer_properties(job.row_group_rows);
    let mut writer =
        ArrowWriter::try_new(file, batches.schema().clone(), Some(properties)).map_err(|e| parquet_error(&e))?;
    let mut rows = 0u64;
    for batch in batches {
        if interrupt.load(Ordering::SeqCst) {
            return Err(TpchError::Interrupted);
        }
        let batch: RecordBatch = batch;
        let batch_rows = batch.num_rows() as u64;
        writer.write(&batch).map_err(|e| parquet_error(&e))?;
        rows += batch_rows;
        on_rows(batch_rows);
    }
    let metadata = writer.close().map_err(|e| parquet_error(&e))?;
    std::fs::rename(&partial, &path).map_err(io_error(&path, "renaming"))?;
    let bytes = std::fs::metadata(&path).map_err(io_error(&path, "reading size of"))?.len();
    Ok(PartWritten { rows, bytes, row_groups: metadata.num_row_groups() as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_once_then_reuses_and_refuses_foreign_files() {
        let root = std::env::temp_dir().join(format!("envbench-tpch-data-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let options = GenerationOptions { data_dir: root.clone(), scale_factor: 0.01, fresh: false, threads: None };
        let calls = AtomicU64::new(0);
        let progress = |p: GenerationProgress| {
            assert!(p.rows_generated > 0);
            calls.fetch_add(1, Ordering::Relaxed);
        };
        let first = ensure_data(&options, &AtomicBool::new(false), &progress).unwrap();
        assert!(!first.reused);
        assert!(calls.load(Ordering::Relaxed) > 0);
        for table in TableName::ALL {
            let rows = first.manifest.tables[&table].rows;
            match table.expected_rows(0.01) {
                Some(expected) => assert_eq!(rows, expected, "{table}"),
                None => assert!((55_000..=65_000).contains(&rows), "lineitem has {rows} rows"),
            }
        }
        assert_eq!(first.manifest.tables[&TableName::Orders].rows, 15_000);
        assert_eq!(first.manifest.tables[&TableName::Customer].rows, 1_500);
        assert_eq!(first.manifest.tables[&TableName::Part].rows, 2_000);
        assert_eq!(first.manifest.tables[&TableName::PartSupp].rows, 8_000);
        assert_eq!(first.manifest.tables[&TableName::Supplier].rows, 100);
        assert_eq!(first.manifest.tables[&TableName::Nation].rows, 25);
        assert_eq!(first.manifest.tables[&TableName::Region].rows, 5);
        // Written as a row group per row: nation's scan can be split 25 ways, region's 5.
        assert_eq!(first.manifest.tables[&TableName::Nation].row_groups, 25);
        assert_eq!(first.manifest.tables[&TableName::Region].row_groups, 5);

        // The space check asks for what the files take, with a margin, and not absurdly more.
        let needed = space_needed(0.01);
        assert!(
            first.total_bytes() < needed && needed < 2 * first.total_bytes(),
            "{} of {needed}",
            first.total_bytes()
        );

        let second = ensure_data(&options, &AtomicBool::new(false), &|_| {}).unwrap();
        assert!(second.reused);
        assert_eq!(second.manifest, first.manifest);

        std::fs::write(root.join("notes.txt"), "mine").unwrap();
        let error = ensure_data(&options, &AtomicBool::new(false), &|_| {}).unwrap_err();
        assert!(matches!(error, TpchError::ForeignFiles { .. }), "{error}");
        assert!(error.to_string().contains("notes.txt"));
        std::fs::remove_dir_all(&root).unwrap();
    }

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
    fn data_laid_out_for_fewer_cores_is_regenerated_once_on_a_machine_with_more() {
        let root = std::env::temp_dir().join(format!("envbench-tpch-cores-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let options = GenerationOptions { data_dir: root.clone(), scale_factor: 0.01, fresh: false, threads: None };
        let none = &AtomicBool::new(false);
        let small = ensure_data_for_cores(&options, 2, none, &|_| {}).unwrap();
        assert_eq!(small.manifest.min_row_groups, MIN_ROW_GROUPS);
        // A 16-core machine finds enough row groups; a 32-core one needs 128 and regenerates, saying why, once.
        let same = ensure_data_for_cores(&options, 16, none, &|_| {}).unwrap();
        assert!(same.reused && same.replaced_for_cores.is_none(), "{same:?}");
        let big = ensure_data_for_cores(&options, 32, none, &|_| {}).unwrap();
        assert!(!big.reused && big.replaced_for_cores == Some(32), "{big:?}");
        let lineitem = &big.manifest.tables[&TableName::LineItem];
        assert!(big.manifest.min_row_groups == 128 && lineitem.row_groups >= 128, "{:?}", big.manifest);
        let again = ensure_data_for_cores(&options, 32, none, &|_| {}).unwrap();
        assert!(again.reused && again.replaced_for_cores.is_none());
        // Data laid out for more cores serves a machine with fewer as it is.
        let fewer = ensure_data_for_cores(&options, 2, none, &|_| {}).unwrap();
        assert!(fewer.reused && fewer.manifest.min_row_groups == 128);
        // A manifest from before the floor was recorded was written with 64 row groups.
        let manifest_path = big.dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&manifest_path).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        value.as_object_mut().unwrap().remove("min_row_groups");
        std::fs::write(&manifest_path, value.to_string()).unwrap();
        assert_eq!(read_manifest(&big.dir).unwrap().unwrap().min_row_groups, MIN_ROW_GROUPS);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn data_of_an_older_layout_is_regenerated_once_and_says_so() {
        let root = std::env::temp_dir().join(format!("envbench-tpch-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let options = GenerationOptions { data_dir: root.clone(), scale_factor: 0.01, fresh: false, threads: None };
        let first = ensure_data(&options, &AtomicBool::new(false), &|_| {}).unwrap();
        // The files say what they hold: lineitem in 64 or more row groups of at most 940 rows, with page statistics.
        let lineitem = &first.manifest.tables[&TableName::LineItem];
        assert!(lineitem.row_groups >= 64 && lineitem.row_group_rows == 938, "{lineitem:?}");
        use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
        use datafusion::parquet::file::serialized_reader::ReadOptionsBuilder;
        let file = std::fs::File::open(first.dir.join(&lineitem.files[0])).unwrap();
        let reader =
            SerializedFileReader::new_with_options(file, ReadOptionsBuilder::new().with_page_index().build()).unwrap();
        let metadata = reader.metadata();
        assert_eq!(metadata.num_row_groups() as u64, lineitem.row_groups);
        assert!(metadata.column_index().is_some() && metadata.offset_index().is_some(), "the page index is written");
        // An older manifest format is replaced, once.
        let manifest_path = first.dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&manifest_path).unwrap();
        std::fs::write(&manifest_path, text.replace(&format!("\"format\": {MANIFEST_FORMAT}"), "\"format\": 1"))
            .unwrap();
        let second = ensure_data(&options, &AtomicBool::new(false), &|_| {}).unwrap();
        assert!(!second.reused && second.replaced_format == Some(1), "{second:?}");
        let third = ensure_data(&options, &AtomicBool::new(false), &|_| {}).unwrap();
        assert!(third.reused && third.replaced_format.is_none());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn an_interrupted_generation_leaves_nothing_behind() {
        let root = std::env::temp_dir().join(format!("envbench-tpch-interrupt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let options = GenerationOptions { data_dir: root.clone(), scale_factor: 0.05, fresh: false, threads: Some(1) };
        let interrupt = AtomicBool::new(false);
        // Ctrl-C arrives once some rows are written.
        let error = ensure_data(&options, &interrupt, &|p| {
            if p.rows_generated > 10_000 {
                interrupt.store(true, Ordering::SeqCst);
            }
        })
        .unwrap_err();
        assert!(matches!(error, TpchError::Interrupted), "{error}");
        let sf_dir = scale_factor_dir(&root, 0.05);
        assert!(!sf_dir.exists(), "the incomplete generation was removed: {:?}", std::fs::read_dir(&sf_dir).ok());
        // The next run generates from scratch and succeeds.
        let data = ensure_data(&options, &AtomicBool::new(false), &|_| {}).unwrap();
        assert!(!data.reused);
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn scale_factor_directories_are_named_as_people_write_them() {
        assert_eq!(scale_factor_dir(Path::new("/d"), 1.0), Path::new("/d/sf1"));
        assert_eq!(scale_factor_dir(Path::new("/d"), 0.01), Path::new("/d/sf0.01"));
        assert_eq!(TableName::LineItem.parts(1.0), 6);
        assert_eq!(TableName::Region.parts(1.0), 1);
    }
}

//! The data generator: input files for the load steps, from a seed and a scale.
//!
//! The model: leaf entities trade products. Entity activity is skewed (a few large subsidiaries trade hundreds of
//! products, most entities a handful), and each entity trades mostly within one product line. Each
//! (entity, product) pair has a stable set of expense and balance accounts (the native files) and of revenue,
//! cost-of-goods and statistics accounts (the CSV), and is populated in some (year, scenario, version) slices only:
//! Actual/Final from the year it started trading to FY19 (the first year possibly from a later month), the FY20
//! budget for most pairs, budget working copies and forecasts for fewer. The allocation pool is loaded at
//! Corporate_HQ / NoProduct in every slice. Values are whole cents, so loads and allocations can be checked exactly.
//!
//! At scale 1.0: about 12,000 pairs, 73,000 input blocks, 10 million native cells in 8 files and 10 million CSV rows.
//! Scale multiplies the number of pairs; the outline never changes.

use crate::error::{CubeError, IoContext};
use crate::outline::{AccountKind, Dim, MemberId, Outline, SparseKey, TimeBalance};
use crate::parallel::for_each_unit;
use crate::places::{CSV_FILE, RULES_FILE};
use crate::rng::{Rng, WeightedTable, mix};
use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// Bumped whenever the generated data changes for a given seed and scale.
pub const GENERATOR_VERSION: u32 = 1;
/// Native files, as an 8-thread parallel export writes them.
pub const NATIVE_FILE_COUNT: usize = 8;
const MANIFEST_FILE: &str = "manifest.json";
const PAIRS_AT_SCALE_ONE: f64 = 12_000.0;
/// Marks a cell the generator leaves missing.
pub(crate) const NO_VALUE: i64 = i64::MIN;

/// The rules file written next to the CSV.
pub const RULES_TEXT: &str = "\
# envbench cube load rules: how the columns of revenue_cogs_stats.csv map to the outline
delimiter = ,
header_lines = 1
column 1 = Entity
column 2 = Product
column 3 = Account
column 4 = Years
column 5 = Scenario
column 6 = Version
column 7 = Period
column 8 = data
fixed Currency = Local
";

/// One generated file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataFile {
    pub name: String,
    pub bytes: u64,
    /// Data lines.
    pub rows: u64,
    /// Values that are not missing.
    pub cells: u64,
}

/// What was generated, written as `manifest.json` next to the files.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub generator_version: u32,
    pub seed: u64,
    pub scale: f64,
    pub pairs: u64,
    pub level0_blocks: u64,
    pub native_files: Vec<DataFile>,
    pub csv_file: DataFile,
    pub rules_file: String,
    pub native_cells: u64,
    pub csv_rows: u64,
    pub generation_seconds: f64,
}

/// A generated data set ready to load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DataSet {
    pub dir: PathBuf,
    pub manifest: Manifest,
    /// False when an existing data set with the same seed and scale was reused.
    pub generated_now: bool,
}

impl DataSet {
    pub fn native_paths(&self) -> Vec<PathBuf> {
        self.manifest.native_files.iter().map(|f| self.dir.join(&f.name)).collect()
    }

    pub fn csv_path(&self) -> PathBuf {
        self.dir.join(&self.manifest.csv_file.name)
    }

    pub fn rules_path(&self) -> PathBuf {
        self.dir.join(&self.manifest.rules_file)
    }
}

/// Reuse the data set in `dir` when its manifest matches `seed` and `scale` and every file has its recorded size;
/// otherwise generate it (replacing what envbench generated there before). The directory must be one envbench cube
/// made, or empty (see [`crate::places`]).
pub fn prepare_data(dir: &Path, seed: u64, scale: f64, cancel: &AtomicBool) -> Result<DataSet, CubeError> {
    if !(scale > 0.0 && scale <= 100.0) {
        return Err(CubeError::Config(format!("scale {scale} is out of range: use a number above 0 and at most 100")));
    }
    crate::places::claim(dir, crate::places::Place::Data)?;
    if let Some(manifest) = reusable(dir, seed, scale)? {
        return Ok(DataSet { dir: dir.to_path_buf(), manifest, generated_now: false });
    }
    let manifest = generate(dir, seed, scale, cancel)?;
    Ok(DataSet { dir: dir.to_path_buf(), manifest, generated_now: true })
}

/// The manifest of a complete data set in `dir` generated with `seed` and `scale` by this generator, every file
/// of its recorded size; `None` when the data must be generated.
pub fn reusable(dir: &Path, seed: u64, scale: f64) -> Result<Option<Manifest>, CubeError> {
    let Some(manifest) = read_manifest(dir)? else { return Ok(None) };
    if manifest.generator_version != GENERATOR_VERSION || manifest.seed != seed || manifest.scale != scale {
        return Ok(None);
    }
    let files = manifest.native_files.iter().chain([&manifest.csv_file]);
    let intact = files.into_iter().all(|f| std::fs::metadata(dir.join(&f.name)).is_ok_and(|m| m.len() == f.bytes));
    Ok(intact.then_some(manifest))
}

fn read_manifest(dir: &Path) -> Result<Option<Manifest>, CubeError> {
    let path = dir.join(MANIFEST_FILE);
    match std::fs::read(&path) {
        // An unreadable manifest (older format, damaged) means: generate again.
        Ok(bytes) => Ok(serde_json::from_slice(&bytes).ok()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(CubeError::Io { path, source: e }),
    }
}

/// One (entity, product) pair and what it trades.
pub(crate) struct Pair {
    pub entity: MemberId,
    pub product: MemberId,
    /// Account rows in the native files, sorted.
    pub native: Vec<u16>,
    /// Account rows in the CSV, sorted.
    pub csv: Vec<u16>,
    /// First Actual year (0 = FY15) and its first month (0 = Jan).
    pub start_year: u8,
    pub start_month: u8,
    /// Magnitude of this pair's business, in cents.
    pub size_cents: f64,
    pub is_pool: bool,
}

/// Every input block: its key and its pair.
pub(crate) struct Plan {
    pub pairs: Vec<Pair>,
    /// Sorted by key.
    pub blocks: Vec<(SparseKey, u32)>,
}

/// The values of one input block: native rows (13 values: BegBalance, Jan..Dec) and CSV rows (12 months), in
/// cents, [`NO_VALUE`] when missing.
pub(crate) struct BlockData {
    pub native: Vec<(u16, [i64; 13])>,
    pub csv: Vec<(u16, [i64; 12])>,
}

/// (Years, Scenario, Version) of the populated slices: Actual/Final FY15..FY19, Budget/Final FY20,
/// Budget/Working FY20, Forecast/Working FY19 and FY20.
const SLICES: [(u32, u32, u32); 9] =
    [(0, 0, 3), (1, 0, 3), (2, 0, 3), (3, 0, 3), (4, 0, 3), (5, 1, 3), (5, 1, 0), (4, 2, 0), (5, 2, 0)];
const SEASON: [f64; 12] = [0.9, 0.85, 1.0, 1.0, 1.05, 1.1, 1.0, 0.95, 1.05, 1.1, 1.05, 1.3];

/// Plan the blocks of a data set.
pub(crate) fn plan(outline: &Outline, seed: u64, scale: f64) -> Plan {
    let mut rng = Rng::for_stream(seed, 0);
    let entity_dim = outline.dim(Dim::Entity);
    let product_dim = outline.dim(Dim::Product);
    let key_members = outline.key_members();
    let mut entities = entity_dim.stored_at_level(0);
    rng.shuffle(&mut entities);
    let entity_table = WeightedTable::zipf(entities.len(), 0.8);
    let lines: Vec<MemberId> = product_dim
        .member(key_members.product_root)
        .children
        .iter()
        .copied()
        .filter(|&c| c != key_members.no_product)
        .collect();
    let line_products: Vec<Vec<MemberId>> = lines
        .iter()
        .map(|&line| {
            let mut skus: Vec<MemberId> = product_dim
                .member(line)
                .children
                .iter()
                .flat_map(|&family| product_dim.member(family).children.iter().copied())
                .collect();
            rng.shuffle(&mut skus);
            skus
        })
        .collect();
    let line_tables: Vec<WeightedTable> = line_products.iter().map(|p| WeightedTable::zipf(p.len(), 1.0)).collect();
    let rows_of = |kinds: &[AccountKind]| -> Vec<u16> {
        (0..outline.stored_accounts())
            .filter(|&row| {
                let member = outline.stored_account(row);
                kinds.contains(&outline.account_info(row).kind)
                    && member != key_members.overhead_pool
                    && member != key_members.allocated_overhead
                    && member != key_members.gross_sales
            })
            .map(|row| row as u16)
            .collect()
    };
    let mut expense_rows = rows_of(&[AccountKind::Expense]);
    let mut balance_rows = rows_of(&[AccountKind::Balance]);
    let mut revenue_cogs_rows = rows_of(&[AccountKind::Revenue, AccountKind::CostOfGoods]);
    let mut statistic_rows = rows_of(&[AccountKind::Statistic]);
    for rows in [&mut expense_rows, &mut balance_rows, &mut revenue_cogs_rows, &mut statistic_rows] {
        rng.shuffle(rows);
    }
    let tables =
        [&expense_rows, &balance_rows, &revenue_cogs_rows, &statistic_rows].map(|r| WeightedTable::zipf(r.len(), 0.7));
    let gross_sales_row = outline.account_row(key_members.gross_sales).expect("stored") as u16;
    let pool_row = outline.account_row(key_members.overhead_pool).expect("stored") as u16;

    let target = ((PAIRS_AT_SCALE_ONE * scale).round() as usize).max(1);
    let mut seen = FxHashSet::default();
    let mut pairs = vec![Pair {
        entity: key_members.corporate_hq,
        product: key_members.no_product,
        native: vec![pool_row],
        csv: Vec::new(),
        start_year: 0,
        start_month: 0,
        size_cents: 500_000_000.0 * scale.max(0.01),
        is_pool: true,
    }];
    let mut attempts = 0;
    while pairs.len() <= target && attempts < target * 50 {
        attempts += 1;
        let entity = entities[entity_table.draw(&mut rng)];
        let affinity = mix(seed ^ u64::from(entity));
        let primary = (affinity % lines.len() as u64) as usize;
        let line = if rng.chance(0.8) { primary } else { (primary + 1 + (affinity >> 8) as usize % 9) % lines.len() };
        let product = line_products[line][line_tables[line].draw(&mut rng)];
        if !seen.insert((entity, product)) {
            continue;
        }
        let mut pair_rng = Rng::for_stream(seed, 1 + pairs.len() as u64);
        let mut pick = |table: usize, rows: &[u16], count: u64, into: &mut Vec<u16>| {
            for _ in 0..count {
                into.push(rows[tables[table].draw(&mut pair_rng)]);
            }
        };
        let mut native = Vec::new();
        let native_count = 3 + rng.below(10) + rng.below(10);
        let expense_count = (native_count as f64 * 0.7).round() as u64;
        pick(0, &expense_rows, expense_count, &mut native);
        pick(1, &balance_rows, native_count - expense_count, &mut native);
        let mut csv = vec![gross_sales_row];
        let csv_count = 2 + rng.below(10) + rng.below(10);
        let statistic_count = csv_count / 5;
        pick(2, &revenue_cogs_rows, csv_count - statistic_count, &mut csv);
        pick(3, &statistic_rows, statistic_count, &mut csv);
        for rows in [&mut native, &mut csv] {
            rows.sort_unstable();
            rows.dedup();
        }
        let start_year = [0u8, 0, 0, 0, 0, 1, 1, 2, 2, 3, 4][rng.below(11) as usize];
        let start_month = if rng.chance(0.7) { 0 } else { rng.below(12) as u8 };
        let size_cents = 10f64.powf(4.0 + 3.0 * rng.unit()).round();
        pairs.push(Pair { entity, product, native, csv, start_year, start_month, size_cents, is_pool: false });
    }

    let local = key_members.local;
    let mut blocks = Vec::new();
    for (index, pair) in pairs.iter().enumerate() {
        let mut slice_rng = Rng::for_stream(seed ^ 0x51CE, index as u64);
        for (slice, &(year, scenario, version)) in SLICES.iter().enumerate() {
            let wanted = pair.is_pool
                || match slice {
                    0..=4 => year >= u32::from(pair.start_year),
                    5 => slice_rng.chance(0.85),
                    6 => slice_rng.chance(0.25),
                    7 => slice_rng.chance(0.4),
                    _ => slice_rng.chance(0.5),
                };
            if wanted {
                blocks
                    .push((SparseKey::new([year, scenario, version, local, pair.entity, pair.product]), index as u32));
            }
        }
    }
    blocks.sort_unstable();
    Plan { pairs, blocks }
}

/// The values of one block.
pub(crate) fn block_data(outline: &Outline, seed: u64, pair: &Pair, key: SparseKey) -> BlockData {
    let year = key.member(Dim::Years) as usize;
    let scenario_factor = match key.member(Dim::Scenario) {
        0 => 1.0,
        1 => 1.04,
        _ => 1.01,
    };
    let growth = (1.0 + 0.05 * year as f64) * scenario_factor;
    let first_month = if year == usize::from(pair.start_year) && key.member(Dim::Scenario) == 0 {
        usize::from(pair.start_month)
    } else {
        0
    };
    let block_seed = mix(seed ^ key.0);
    let values = |row: u16, with_beg_balance: bool| -> [i64; 13] {
        let mut rng = Rng::for_stream(block_seed, u64::from(row));
        let mut size_rng =
            Rng::for_stream(seed ^ u64::from(pair.entity) << 20 ^ u64::from(pair.product), u64::from(row));
        let info = outline.account_info(usize::from(row));
        let base = if pair.is_pool {
            pair.size_cents
        } else {
            match info.kind {
                AccountKind::Statistic => 100.0 * (1.0 + (size_rng.unit() * 500.0).round()),
                _ => (pair.size_cents * (0.05 + size_rng.unit())).round(),
            }
        } * growth;
        let mut out = [NO_VALUE; 13];
        let balance_like = info.time_balance == TimeBalance::Last && info.kind != AccountKind::Statistic;
        let mut level = base * 10.0 * (0.5 + rng.unit());
        if with_beg_balance && balance_like && first_month == 0 {
            out[0] = level.round() as i64;
        }
        for month in first_month..12 {
            let cents = if balance_like {
                level += base * (rng.unit() - 0.45);
                level
            } else if info.kind == AccountKind::Statistic {
                // Counts are whole numbers.
                (base * (0.9 + 0.2 * rng.unit()) / 100.0).round() * 100.0
            } else {
                base * SEASON[month] * (0.85 + 0.3 * rng.unit())
            };
            out[month + 1] = if rng.chance(0.005) { 0 } else { cents.round() as i64 };
        }
        out
    };
    BlockData {
        native: pair.native.iter().map(|&row| (row, values(row, true))).collect(),
        csv: pair
            .csv
            .iter()
            .map(|&row| {
                let all = values(row, false);
                (row, std::array::from_fn(|m| all[m + 1]))
            })
            .collect(),
    }
}

/// Append cents as a decimal with two places (`-1234.05`).
pub(crate) fn write_cents(out: &mut Vec<u8>, cents: i64) {
    if cents < 0 {
        out.push(b'-');
    }
    let magnitude = cents.unsigned_abs();
    let whole = magnitude / 100;
    let mut digits = [0u8; 20];
    let mut n = 0;
    let mut rest = whole;
    loop {
        digits[n] = b'0' + (rest % 10) as u8;
        n += 1;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend(digits[..n].iter().rev());
    let fraction = (magnitude % 100) as u8;
    out.extend_from_slice(&[b'.', b'0' + fraction / 10, b'0' + fraction % 10]);
}

/// Quoted member names of one dimension, ready to write.
fn quoted_names(outline: &Outline, dim: Dim, quote: bool) -> Vec<Vec<u8>> {
    outline
        .dim(dim)
        .members
        .iter()
        .map(|m| if quote { format!("\"{}\"", m.name).into_bytes() } else { m.name.clone().into_bytes() })
        .collect()
}

/// Native header line: the period of each value column.
pub(crate) const NATIVE_HEADER: &[u8] =
    b"\"BegBalance\" \"Jan\" \"Feb\" \"Mar\" \"Apr\" \"May\" \"Jun\" \"Jul\" \"Aug\" \"Sep\" \"Oct\" \"Nov\" \"Dec\"\n";
/// CSV header line.
pub(crate) const CSV_HEADER: &[u8] = b"Entity,Product,Account,Years,Scenario,Version,Period,Amount\n";

/// Writes blocks as native rows or CSV rows.
pub(crate) struct Writer {
    names: Vec<Vec<Vec<u8>>>,
    csv_names: Vec<Vec<Vec<u8>>>,
}

impl Writer {
    pub fn new(outline: &Outline) -> Writer {
        Writer {
            names: Dim::ALL.iter().map(|&d| quoted_names(outline, d, true)).collect(),
            csv_names: Dim::ALL.iter().map(|&d| quoted_names(outline, d, false)).collect(),
        }
    }

    /// Native rows of one block; returns (rows, cells that are not missing).
    pub fn native(&self, outline: &Outline, key: SparseKey, data: &BlockData, out: &mut Vec<u8>) -> (u64, u64) {
        let mut cells = 0;
        for (row, values) in &data.native {
            for dim in Dim::SPARSE {
                out.extend_from_slice(&self.names[dim.index()][key.member(dim) as usize]);
                out.push(b' ');
            }
            out.extend_from_slice(
                &self.names[Dim::Account.index()][outline.stored_account(usize::from(*row)) as usize],
            );
            for &v in values {
                out.push(b' ');
                if v == NO_VALUE {
                    out.extend_from_slice(b"#Mi");
                } else {
                    write_cents(out, v);
                    cells += 1;
                }
            }
            out.push(b'\n');
        }
        (data.native.len() as u64, cells)
    }

    /// CSV rows of one block (one per present month); returns the rows written.
    pub fn csv(&self, outline: &Outline, key: SparseKey, data: &BlockData, out: &mut Vec<u8>) -> u64 {
        let name = |dim: Dim, member: MemberId| &self.csv_names[dim.index()][member as usize];
        let period = outline.dim(Dim::Period);
        let mut rows = 0;
        for (row, values) in &data.csv {
            let account = name(Dim::Account, outline.stored_account(usize::from(*row)));
            for (month, &v) in values.iter().enumerate() {
                if v == NO_VALUE {
                    continue;
                }
                out.extend_from_slice(name(Dim::Entity, key.member(Dim::Entity)));
                out.push(b',');
                out.extend_from_slice(name(Dim::Product, key.member(Dim::Product)));
                out.push(b',');
                out.extend_from_slice(account);
                for dim in [Dim::Years, Dim::Scenario, Dim::Version] {
                    out.push(b',');
                    out.extend_from_slice(name(dim, key.member(dim)));
                }
                out.push(b',');
                out.extend_from_slice(
                    period.members[period.find(crate::outline::MONTHS[month]).expect("month") as usize].name.as_bytes(),
                );
                out.push(b',');
                write_cents(out, v);
                out.push(b'\n');
                rows += 1;
            }
        }
        rows
    }
}

fn generate(dir: &Path, seed: u64, scale: f64, cancel: &AtomicBool) -> Result<Manifest, CubeError> {
    let started = Instant::now();
    std::fs::create_dir_all(dir).at(dir)?;
    let manifest_path = dir.join(MANIFEST_FILE);
    if manifest_path.exists() {
        std::fs::remove_file(&manifest_path).at(&manifest_path)?;
    }
    let outline = Outline::essbench();
    let plan = plan(&outline, seed, scale);
    let writer = Writer::new(&outline);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(NATIVE_FILE_COUNT);

    // Native files: contiguous ranges of blocks in key order, one file per export thread.
    let per_file = plan.blocks.len().div_ceil(NATIVE_FILE_COUNT);
    let native_files: Vec<Mutex<Option<DataFile>>> = (0..NATIVE_FILE_COUNT).map(|_| Mutex::new(None)).collect();
    for_each_unit(
        threads,
        NATIVE_FILE_COUNT,
        cancel,
        "generate",
        || Vec::with_capacity(2 << 20),
        |buffer, n| {
            let name = format!("native_{:02}.txt", n + 1);
            let path = dir.join(&name);
            let mut file = File::create(&path).at(&path)?;
            buffer.clear();
            buffer.extend_from_slice(NATIVE_HEADER);
            let (mut rows, mut cells, mut bytes) = (0, 0, 0u64);
            let blocks = plan.blocks.iter().skip(n * per_file).take(per_file);
            for &(key, pair) in blocks {
                let data = block_data(&outline, seed, &plan.pairs[pair as usize], key);
                let (r, c) = writer.native(&outline, key, &data, buffer);
                rows += r;
                cells += c;
                if buffer.len() >= 1 << 20 {
                    file.write_all(buffer).at(&path)?;
                    bytes += buffer.len() as u64;
                    buffer.clear();
                }
            }
            file.write_all(buffer).at(&path)?;
            bytes += buffer.len() as u64;
            file.sync_all().at(&path)?;
            *native_files[n].lock().expect("file slot") = Some(DataFile { name, bytes, rows, cells });
            Ok(())
        },
    )?;
    let native_files: Vec<DataFile> =
        native_files.into_iter().map(|f| f.into_inner().expect("file slot").expect("generated")).collect();

    // The CSV, in the order a SQL export sorted by entity and product would give, built in parallel chunks.
    let mut csv_order: Vec<(u64, SparseKey, u32)> = plan
        .blocks
        .iter()
        .map(|&(key, pair)| {
            let [y, s, v, _, e, p] = key.members();
            (
                (u64::from(e) << 14 | u64::from(p)) << 12 | u64::from(y) << 8 | u64::from(s) << 4 | u64::from(v),
                key,
                pair,
            )
        })
        .collect();
    csv_order.sort_unstable_by_key(|&(order, _, _)| order);
    let csv_path = dir.join(CSV_FILE);
    let mut csv = File::create(&csv_path).at(&csv_path)?;
    csv.write_all(CSV_HEADER).at(&csv_path)?;
    let mut csv_bytes = CSV_HEADER.len() as u64;
    let mut csv_rows = 0u64;
    const CHUNK_BLOCKS: usize = 512;
    let chunks: Vec<&[(u64, SparseKey, u32)]> = csv_order.chunks(CHUNK_BLOCKS).collect();
    for wave in chunks.chunks(threads * 4) {
        let outputs: Vec<Mutex<(Vec<u8>, u64)>> = wave.iter().map(|_| Mutex::new((Vec::new(), 0))).collect();
        for_each_unit(
            threads,
            wave.len(),
            cancel,
            "generate",
            || (),
            |_, i| {
                let mut out = Vec::with_capacity(1 << 20);
                let mut rows = 0;
                for &(_, key, pair) in wave[i] {
                    let data = block_data(&outline, seed, &plan.pairs[pair as usize], key);
                    rows += writer.csv(&outline, key, &data, &mut out);
                }
                *outputs[i].lock().expect("chunk slot") = (out, rows);
                Ok(())
            },
        )?;
        for output in outputs {
            let (bytes, rows) = output.into_inner().expect("chunk slot");
            csv.write_all(&bytes).at(&csv_path)?;
            csv_bytes += bytes.len() as u64;
            csv_rows += rows;
        }
    }
    csv.sync_all().at(&csv_path)?;
    let rules_path = dir.join(RULES_FILE);
    std::fs::write(&rules_path, RULES_TEXT).at(&rules_path)?;

    let manifest = Manifest {
        generator_version: GENERATOR_VERSION,
        seed,
        scale,
        pairs: plan.pairs.len() as u64,
        level0_blocks: plan.blocks.len() as u64,
        native_cells: native_files.iter().map(|f| f.cells).sum(),
        native_files,
        csv_file: DataFile { name: CSV_FILE.into(), bytes: csv_bytes, rows: csv_rows, cells: csv_rows },
        rules_file: RULES_FILE.into(),
        csv_rows,
        generation_seconds: started.elapsed().as_secs_f64(),
    };
    let text = serde_json::to_vec_pretty(&manifest).expect("manifest serializes");
    crate::durable::write_atomically(&manifest_path, &text)?;
    Ok(manifest)
}

/// The sum of every generated input cell per (slice, account row, stored period), in cents: what the top block of
/// each slice must hold after aggregation.
#[cfg(test)]
pub(crate) fn input_totals(
    outline: &Outline,
    seed: u64,
    scale: f64,
) -> rustc_hash::FxHashMap<(u64, usize, usize), i128> {
    let plan = plan(outline, seed, scale);
    let mut totals = rustc_hash::FxHashMap::default();
    for &(key, pair) in &plan.blocks {
        let data = block_data(outline, seed, &plan.pairs[pair as usize], key);
        for (row, values) in &data.native {
            for (period, &v) in values.iter().enumerate() {
                if v != NO_VALUE {
                    *totals.entry((key.slice(), usize::from(*row), period)).or_default() += i128::from(v);
                }
            }
        }
        for (row, values) in &data.csv {
            for (month, &v) in values.iter().enumerate() {
                if v != NO_VALUE {
                    *totals.entry((key.slice(), usize::from(*row), month + 1)).or_default() += i128::from(v);
                }
            }
        }
    }
    totals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cents_are_written_with_two_places() {
        let mut out = Vec::new();
        for cents in [0, 5, 123456, -7, -100, 99_999_999_999] {
            out.clear();
            write_cents(&mut out, cents);
            let text = String::from_utf8(out.clone()).unwrap();
            assert_eq!((text.parse::<f64>().unwrap() * 100.0).round() as i64, cents, "{text}");
        }
    }

    #[test]
    fn plans_are_deterministic_skewed_and_scale_with_data() {
        let outline = Outline::essbench();
        let a = plan(&outline, 42, 0.05);
        let b = plan(&outline, 42, 0.05);
        assert_eq!(a.blocks, b.blocks);
        let c = plan(&outline, 43, 0.05);
        assert_ne!(a.blocks, c.blocks);
        let bigger = plan(&outline, 42, 0.1);
        assert!(bigger.blocks.len() > a.blocks.len() * 3 / 2);
        let mut per_entity = rustc_hash::FxHashMap::<MemberId, usize>::default();
        for pair in &bigger.pairs {
            *per_entity.entry(pair.entity).or_default() += 1;
        }
        let busiest = per_entity.values().max().unwrap();
        assert!(*busiest > 10, "some entities trade many products: {busiest}");
    }

    #[test]
    fn data_is_reused_when_seed_and_scale_match() {
        let dir = crate::testdir::tempdir("generate-reuse");
        let never = AtomicBool::new(false);
        let first = prepare_data(&dir, 7, 0.002, &never).unwrap();
        assert!(first.generated_now);
        assert_eq!(first.manifest.native_files.len(), NATIVE_FILE_COUNT);
        assert!(first.manifest.csv_rows > 0 && first.manifest.native_cells > 0);
        let second = prepare_data(&dir, 7, 0.002, &never).unwrap();
        assert!(!second.generated_now);
        let third = prepare_data(&dir, 8, 0.002, &never).unwrap();
        assert!(third.generated_now);
        assert!(prepare_data(&dir, 8, 0.0, &never).is_err());
    }
}

//! Whole-workload properties at small scales: the invariants of specification section 5, crash safety, retrieval.

use crate::bench::{CubeConfig, Step, ThreadKnob};
use crate::block::{Cells, Compression, is_missing};
use crate::cube::{Cube, CubeOptions};
use crate::error::CubeError;
use crate::generate::{
    BlockData, CSV_HEADER, NATIVE_HEADER, NO_VALUE, RULES_TEXT, Writer, block_data, input_totals, plan, prepare_data,
};
use crate::outline::RateType;
use crate::outline::{Dim, Outline, STORED_PERIODS, SparseKey, TimeBalance, YEAR_TOTAL};
use crate::rates;
use crate::recommend::recommend;
use crate::records::result_records;
use crate::sweep::{ThreadSweep, run_sequence, run_sweep};
use crate::testdir::tempdir;
use envbench_core::sampler::{NoSteps, StepObserver};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

const SEED: u64 = 11;
const SCALE: f64 = 0.002;
static NEVER: AtomicBool = AtomicBool::new(false);

fn options() -> CubeOptions {
    CubeOptions { page_file_max: envbench_core::ByteSize(4 << 20), ..CubeOptions::default() }
}

/// A cube in `dir/cube` loaded from data in `dir/data`.
fn loaded_cube(dir: &Path, options: CubeOptions) -> Cube {
    let data = prepare_data(&dir.join("data"), SEED, SCALE, &NEVER).unwrap();
    let cube = Cube::open(dir.join("cube"), options).unwrap();
    cube.load_native(&data.native_paths(), 3, &NEVER).unwrap();
    cube.load_csv(&data.csv_path(), &data.rules_path(), &NEVER).unwrap();
    cube
}

fn all_blocks(cube: &Cube) -> BTreeMap<SparseKey, Cells> {
    cube.block_keys().into_iter().map(|k| (k, Cells::clone(&cube.block(k).unwrap().unwrap()))).collect()
}

fn same(a: f64, b: f64) -> bool {
    (is_missing(a) && is_missing(b)) || a.to_bits() == b.to_bits()
}

fn close(a: f64, b: f64) -> bool {
    (is_missing(a) && is_missing(b)) || (a - b).abs() <= 1e-6 * (1.0 + a.abs().max(b.abs()))
}

fn cents(v: f64) -> i128 {
    (v * 100.0).round() as i128
}

/// Every stored parent block equals the sum of its children's blocks, along the given dimension.
fn assert_parents_are_sums(cube: &Cube, dim: Dim) {
    let outline = cube.outline();
    let members = outline.dim(dim);
    let blocks = all_blocks(cube);
    let mut checked = 0;
    for (key, cells) in &blocks {
        let member = members.member(key.member(dim));
        if member.level == 0 || !member.is_stored() {
            continue;
        }
        if dim == Dim::Product && outline.dim(Dim::Entity).member(key.member(Dim::Entity)).level != 0 {
            continue;
        }
        let mut sum = crate::block::empty_cells(outline.cells_per_block());
        for &child in &member.children {
            if let Some(child_cells) = blocks.get(&key.with(dim, child)) {
                crate::block::add_block(&mut sum, child_cells);
            }
        }
        for (cell, (&expected, &actual)) in sum.iter().zip(cells.iter()).enumerate() {
            assert!(close(expected, actual), "{key:?} cell {cell}: {actual} is not the sum {expected}");
        }
        checked += 1;
    }
    assert!(checked > 10, "only {checked} parent blocks along {}", dim.name());
}

#[test]
fn aggregation_makes_parents_the_sum_of_children_and_keeps_the_grand_total() {
    let dir = tempdir("agg");
    let cube = loaded_cube(&dir, options());
    let level0 = cube.block_keys().len();
    let report = cube.aggregate(3, &NEVER).unwrap();
    assert!(report.blocks_written > level0 as u64 / 2);
    assert_parents_are_sums(&cube, Dim::Product);
    assert_parents_are_sums(&cube, Dim::Entity);

    // The top block of each slice holds the sum of every input cell.
    let outline = cube.outline();
    let key_members = outline.key_members();
    let totals = input_totals(outline, SEED, SCALE);
    let mut slices: Vec<SparseKey> = cube.block_keys();
    slices.dedup_by_key(|k| k.slice());
    let mut checked = 0;
    for slice_key in slices {
        let top = slice_key.with(Dim::Entity, key_members.total_entity).with(Dim::Product, key_members.product_root);
        let block = cube.block(top).unwrap().expect("every slice has a top block");
        for row in 0..outline.stored_accounts() {
            for period in 0..YEAR_TOTAL {
                let expected = totals.get(&(top.slice(), row, period)).copied();
                let actual = block[Outline::cell(row, period)];
                match expected {
                    Some(total) => {
                        assert_eq!(cents(actual), total, "slice {:#x} row {row} period {period}", top.slice())
                    }
                    None => assert!(is_missing(actual)),
                }
                checked += usize::from(expected.is_some());
            }
        }
    }
    assert!(checked > 100);
}

#[test]
fn allocation_conserves_the_pool_to_the_cent() {
    let dir = tempdir("alloc");
    let cube = loaded_cube(&dir, options());
    cube.aggregate(2, &NEVER).unwrap();
    let report = cube.allocate(4, &NEVER).unwrap();
    assert!(report.slices >= 5, "{report:?}");
    assert_eq!(report.pool_cents, report.allocated_cents);
    let outline = cube.outline();
    let key_members = outline.key_members();
    let pool_row = outline.account_row(key_members.overhead_pool).unwrap();
    let target_row = outline.account_row(key_members.allocated_overhead).unwrap();
    let entities = outline.dim(Dim::Entity);
    let products = outline.dim(Dim::Product);
    let mut allocated: BTreeMap<(u64, usize), i128> = BTreeMap::new();
    for key in cube.block_keys() {
        if entities.member(key.member(Dim::Entity)).level == 0 && products.member(key.member(Dim::Product)).level == 0 {
            let block = cube.block(key).unwrap().unwrap();
            for month in 1..=12 {
                let v = block[Outline::cell(target_row, month)];
                if !is_missing(v) {
                    *allocated.entry((key.slice(), month)).or_default() += cents(v);
                }
            }
        }
    }
    let top = |slice_key: SparseKey| {
        slice_key.with(Dim::Entity, key_members.total_entity).with(Dim::Product, key_members.product_root)
    };
    let mut checked = 0;
    for key in cube.block_keys() {
        if key.member(Dim::Entity) != key_members.total_entity || key.member(Dim::Product) != key_members.product_root {
            continue;
        }
        let pool = cube.block(key).unwrap().unwrap();
        for month in 1..=12 {
            let pool_cents = cents(pool[Outline::cell(pool_row, month)]);
            assert_eq!(allocated.get(&(key.slice(), month)).copied().unwrap_or(0), pool_cents);
            checked += 1;
        }
    }
    assert!(checked >= 60);
    // Aggregating the allocated data brings the pool back to the top, to the cent.
    cube.aggregate(2, &NEVER).unwrap();
    for key in cube.block_keys() {
        if key == top(key) {
            let block = cube.block(key).unwrap().unwrap();
            for month in 1..=12 {
                assert_eq!(
                    cents(block[Outline::cell(target_row, month)]),
                    cents(block[Outline::cell(pool_row, month)])
                );
            }
        }
    }
}

#[test]
fn usd_is_local_times_the_rate_of_each_account_type() {
    let dir = tempdir("currency");
    let cube = loaded_cube(&dir, options());
    cube.aggregate(2, &NEVER).unwrap();
    let local_blocks = cube.block_keys().len();
    cube.convert_currency(3, &NEVER).unwrap();
    assert_eq!(cube.block_keys().len(), 2 * local_blocks);
    let outline = cube.outline();
    let key_members = outline.key_members();
    let mut seen = [0usize; 3];
    let mut foreign = 0;
    for key in cube.block_keys() {
        if key.member(Dim::Currency) != key_members.local {
            continue;
        }
        let local = cube.block(key).unwrap().unwrap();
        let usd = cube.block(key.with(Dim::Currency, key_members.usd)).unwrap().expect("a USD block per Local block");
        let currency = outline.entity_currency(key.member(Dim::Entity)).unwrap();
        foreign += usize::from(currency != rates::USD);
        let year = key.member(Dim::Years) as usize;
        for row in 0..outline.stored_accounts() {
            let info = outline.account_info(row);
            for period in 0..YEAR_TOTAL {
                let cell = Outline::cell(row, period);
                if is_missing(local[cell]) {
                    assert!(is_missing(usd[cell]));
                    continue;
                }
                let expected = local[cell] * rates::rate(currency, year, period, info.rate);
                assert_eq!(usd[cell], expected, "{key:?} row {row} period {period}");
                seen[match info.rate {
                    RateType::Average => 0,
                    RateType::Ending => 1,
                    RateType::NotConverted => 2,
                }] += 1;
            }
            // YearTotal follows the account's time balance over the converted months.
            let year_total = usd[Outline::cell(row, YEAR_TOTAL)];
            match info.time_balance {
                TimeBalance::Last => assert!(same(year_total, usd[Outline::cell(row, 12)])),
                TimeBalance::Flow => {
                    let sum = (1..=12)
                        .map(|m| usd[Outline::cell(row, m)])
                        .fold(crate::block::MISSING, crate::block::add_missing_aware);
                    assert!(close(year_total, sum));
                }
            }
        }
    }
    assert!(seen.iter().all(|&n| n > 100), "every rate type is exercised: {seen:?}");
    assert!(foreign > 0);
}

#[test]
fn dense_restructure_changes_no_value_and_adds_a_missing_member() {
    for compression in [Compression::Bitmap, Compression::Zlib, Compression::None] {
        let dir = tempdir(&format!("restructure-{compression}"));
        let mut cube = loaded_cube(&dir, CubeOptions { compression, ..options() });
        cube.aggregate(2, &NEVER).unwrap();
        cube.finish_step().unwrap();
        let before = all_blocks(&cube);
        let old_outline = Outline::essbench();
        cube.durable_step("8 dense restructure", |cube| cube.restructure_add_account(3, &NEVER)).unwrap();
        let check = |cube: &Cube| {
            let outline = cube.outline();
            let added_row = outline.account_row(outline.key_members().added_account.unwrap()).unwrap();
            assert_eq!(cube.block_keys().len(), before.len());
            for (key, old) in &before {
                let new = cube.block(*key).unwrap().unwrap();
                assert_eq!(new.len(), outline.cells_per_block());
                for row in 0..old_outline.stored_accounts() {
                    let new_row = if row < added_row { row } else { row + 1 };
                    for p in 0..STORED_PERIODS {
                        assert!(same(old[Outline::cell(row, p)], new[Outline::cell(new_row, p)]));
                    }
                }
                assert!((0..STORED_PERIODS).all(|p| is_missing(new[Outline::cell(added_row, p)])));
            }
        };
        check(&cube);
        assert!(cube.restructure_add_account(1, &NEVER).is_err(), "a second restructure is refused");
        let page_files: Vec<String> = std::fs::read_dir(dir.join("cube"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".pag"))
            .collect();
        assert!(page_files.iter().all(|n| n.starts_with("g0002")), "old page files are removed: {page_files:?}");
        drop(cube);
        let reopened = Cube::open(dir.join("cube"), options()).unwrap();
        assert!(reopened.outline().is_restructured());
        check(&reopened);
    }
}

/// Write the same cells as native rows and as CSV rows; both loads must give identical cubes.
#[test]
fn csv_and_native_loads_of_the_same_data_give_identical_cubes() {
    let dir = tempdir("same-data");
    let outline = Outline::essbench();
    let plan = plan(&outline, SEED, SCALE);
    let writer = Writer::new(&outline);
    let mut native = NATIVE_HEADER.to_vec();
    let mut csv = CSV_HEADER.to_vec();
    for &(key, pair) in &plan.blocks {
        let data = block_data(&outline, SEED, &plan.pairs[pair as usize], key);
        // The CSV carries months only, so BegBalance is left out of both.
        let months: Vec<(u16, [i64; 12])> = data
            .native
            .iter()
            .map(|(row, v)| (*row, std::array::from_fn(|m| v[m + 1])))
            .chain(data.csv.iter().copied())
            .collect();
        let as_native = BlockData {
            native: months
                .iter()
                .map(|(row, v)| (*row, std::array::from_fn(|p| if p == 0 { NO_VALUE } else { v[p - 1] })))
                .collect(),
            csv: Vec::new(),
        };
        let as_csv = BlockData { native: Vec::new(), csv: months };
        writer.native(&outline, key, &as_native, &mut native);
        writer.csv(&outline, key, &as_csv, &mut csv);
    }
    std::fs::write(dir.join("all.txt"), native).unwrap();
    std::fs::write(dir.join("all.csv"), csv).unwrap();
    std::fs::write(dir.join("all.rules"), RULES_TEXT).unwrap();
    let from_native = Cube::open(dir.join("native"), options()).unwrap();
    from_native.load_native(&[dir.join("all.txt")], 1, &NEVER).unwrap();
    let from_csv = Cube::open(dir.join("csv"), options()).unwrap();
    from_csv.load_csv(&dir.join("all.csv"), &dir.join("all.rules"), &NEVER).unwrap();
    let (a, b) = (all_blocks(&from_native), all_blocks(&from_csv));
    assert_eq!(a.len(), plan.blocks.len());
    assert_eq!(a.keys().collect::<Vec<_>>(), b.keys().collect::<Vec<_>>());
    for (key, cells) in &a {
        assert!(cells.iter().zip(&b[key]).all(|(x, y)| same(*x, *y)), "block {key:?} differs");
    }
}

#[test]
fn retrieval_computes_dynamic_members_and_explains_bad_names() {
    let dir = tempdir("retrieve");
    let cube = loaded_cube(&dir, options());
    cube.aggregate(2, &NEVER).unwrap();
    cube.convert_currency(2, &NEVER).unwrap();
    let pov = "Years=FY19, Scenario=Actual, Version=Final, Currency=Local, Entity=TotalEntity, Product=Product";
    let get = |rest: &str| cube.get(&format!("{pov}, {rest}")).unwrap();
    let jan = get("Account=GrossSales, Period=Jan").expect("revenue at the top");
    let feb = get("Account=GrossSales, Period=Feb").unwrap();
    let mar = get("Account=GrossSales, Period=Mar").unwrap();
    let q1 = get("Account=GrossSales, Period=Q1").unwrap();
    assert!((q1 - (jan + feb + mar)).abs() < 1e-6 * q1.abs());
    assert_eq!(get("Account=GrossSales, Period=Period"), get("Account=GrossSales, Period=YearTotal"));
    // A balance account's quarter is its last month.
    let outline = cube.outline();
    let balance = (0..outline.stored_accounts())
        .find(|&r| {
            outline.account_info(r).time_balance == TimeBalance::Last
                && get(&format!(
                    "Account={}, Period=Jun",
                    outline.dim(Dim::Account).member(outline.stored_account(r)).name
                ))
                .is_some()
        })
        .expect("some balance account has data");
    let name = &outline.dim(Dim::Account).member(outline.stored_account(balance)).name;
    assert_eq!(get(&format!("Account={name}, Period=Q2")), get(&format!("Account={name}, Period=Jun")));
    // Dynamic parents and ratios.
    let revenue = get("Account=TotalRevenue, Period=Q1").unwrap();
    let cogs = get("Account=TotalCOGS, Period=Q1").unwrap_or(0.0);
    let margin = get("Account=GrossMargin, Period=Q1").unwrap();
    assert!((margin - (revenue - cogs)).abs() < 1e-6 * revenue.abs());
    let pct = get("Account=GM_Pct, Period=Q1").unwrap();
    assert!((pct - 100.0 * margin / revenue).abs() < 1e-9 * pct.abs().max(1.0));
    // The dynamic Entity root is TotalEntity (Segments are an ignored alternate rollup).
    let root = cube
        .get(
            &pov.replace("Entity=TotalEntity", "Entity=Entity")
                .replace(", Product", ", Account=GrossSales, Period=Jan, Product"),
        )
        .unwrap();
    assert_eq!(root, Some(jan));
    let segment = cube
        .get(
            "Years=FY19, Scenario=Actual, Version=Final, Currency=USD, Entity=SEG_01, Product=Product, \
              Account=NetIncome, Period=Q4",
        )
        .unwrap();
    let _ = segment; // May be missing when no referenced entity trades at this scale; it must not fail.
    // A flow account has no opening balance: missing, not zero.
    assert!(cube.get(&format!("{pov}, Account=A6011, Period=BegBalance")).unwrap().is_none());
}

#[test]
fn retrieval_errors_say_what_was_wrong() {
    let dir = tempdir("retrieve-errors");
    let cube = Cube::open(dir.join("cube"), options()).unwrap();
    let full = "Years=FY19, Scenario=Actual, Version=Final, Currency=USD, Entity=TotalEntity, Product=Product, \
                Account=NetIncome, Period=Q1";
    assert_eq!(cube.get(full).unwrap(), None);
    let error = cube.get(&full.replace("Scenario=Actual", "Scenario=Actaul")).unwrap_err().to_string();
    assert!(error.contains("not a member of Scenario") && error.contains("did you mean Actual"), "{error}");
    let error = cube.get(&full.replace("Years=", "Yeers=")).unwrap_err().to_string();
    assert!(error.contains("unknown dimension 'Yeers'") && error.contains("Years"), "{error}");
    let error = cube.get("Years=FY19, Scenario=Actual").unwrap_err().to_string();
    assert!(error.contains("Version") && error.contains("Product"), "{error}");
    let error = cube.get(&format!("{full}, Years=FY18")).unwrap_err().to_string();
    assert!(error.contains("twice"), "{error}");
    let grid = cube
        .grid(
            "Years=FY19, Scenario=Actual, Version=Final, Currency=Local, Product=Product, Account=GrossSales",
            "Entity=NorthAmerica",
            "Period=Q1",
        )
        .unwrap();
    assert_eq!(grid.rows.last().unwrap(), "NorthAmerica");
    assert_eq!(grid.columns, vec!["Jan", "Feb", "Mar", "Q1"]);
    assert!(grid.to_string().contains("#Missing"));
    assert!(cube.grid("Years=FY19", "Entity=TotalEntity", "Period").is_err(), "an incomplete point of view");
    let products = cube.outline().dim(Dim::Product);
    let widest = products.members.iter().max_by_key(|m| m.children.len()).unwrap();
    assert!(widest.children.len() > 200);
    let pov = "Years=FY19, Scenario=Actual, Version=Final, Currency=Local, Entity=TotalEntity, Account=GrossSales";
    let error = cube.grid(pov, &format!("Product={}", widest.name), "Period").unwrap_err().to_string();
    assert!(error.contains("too many"), "{error}");
}

#[test]
fn the_sequence_runs_repeats_and_reports() {
    let dir = tempdir("sequence");
    let mut config = CubeConfig::new(&dir);
    config.scale = SCALE;
    config.seed = SEED;
    config.repeat = 2;
    config.options = options();
    config.threads.calc_threads = 2;
    let outcome = run_sequence(&config, &NoSteps, &NEVER).unwrap();
    assert_eq!(outcome.repetitions.len(), 2);
    assert_eq!(outcome.summary.len(), 9);
    for repetition in &outcome.repetitions {
        let load = &repetition.steps[1];
        assert!(load.cells > 0 && load.blocks_written > 0 && load.bytes_written > 0);
        let restructure = &repetition.steps[7];
        assert_eq!(restructure.blocks_read, restructure.blocks_written);
    }
    assert!(outcome.statistics.restructured && outcome.statistics.usd_blocks == outcome.statistics.local_blocks);
    assert!(outcome.statistics.average_density > 0.0 && outcome.statistics.compression_ratio > 1.0);
    let shares: f64 = outcome.summary[..8].iter().map(|s| s.share_of_total).sum();
    assert!((shares - 1.0).abs() < 1e-9);
    let records = result_records(std::slice::from_ref(&outcome));
    assert_eq!(records.len(), 9);
    assert!(records.iter().all(|r| r.samples.len() == 2 && r.unit == "s" && r.workload == "cube"));
    assert_eq!(records[3].test_id, "4 aggregation");
    assert_eq!(records[3].parameters["calc_threads"], 2);
    assert!(records[3].parameters.get("restructure_threads").is_none());
    assert_eq!(records[8].parameters["fix_threads"], 8);
}

/// Notes the bytes in the cube directory as each step starts.
struct ResetWatcher {
    cube_dir: std::path::PathBuf,
    seen: Mutex<Vec<(String, u64)>>,
}

impl StepObserver for ResetWatcher {
    fn step_started(&self, step: &str) {
        let bytes = std::fs::read_dir(&self.cube_dir)
            .map(|entries| entries.filter_map(|e| e.ok()?.metadata().ok()).map(|m| m.len()).sum())
            .unwrap_or(0);
        self.seen.lock().unwrap().push((step.to_string(), bytes));
    }

    fn step_finished(&self, _step: &str) {}
}

#[test]
fn differences_are_judged_only_with_enough_repetitions() {
    use crate::Difference;
    assert_eq!(Difference::of(&[1.0, 1.1], &[2.0, 2.1]), Difference::CannotJudge);
    assert_eq!(Difference::of(&[1.0, 1.1, 1.2], &[1.3, 1.4, 1.5]), Difference::Clear);
    assert_eq!(Difference::of(&[1.0, 1.1, 1.4], &[1.3, 1.4, 1.5]), Difference::WithinNoise);
}

#[test]
fn a_sweep_recommends_a_setting_per_step() {
    let dir = tempdir("sweep");
    let mut config = CubeConfig::new(&dir);
    config.scale = SCALE / 2.0;
    config.repeat = 1;
    config.options = options();
    let sweep = ThreadSweep { calc_threads: vec![1, 2], ..Default::default() };
    // Every reset, the first included, finds a loaded cube; the settings take turns.
    let watcher = ResetWatcher { cube_dir: config.cube_dir.clone(), seen: Mutex::new(Vec::new()) };
    let swept = run_sweep(&config, &sweep, &watcher, &NEVER).unwrap();
    let seen = watcher.seen.into_inner().unwrap();
    assert_eq!(seen[1].0, crate::PRIME_STEP, "after the data, an empty cube is primed: {seen:?}");
    let resets: Vec<u64> =
        seen.iter().filter(|(step, _)| step == Step::Reset.name()).map(|(_, bytes)| *bytes).collect();
    assert_eq!(resets.len(), 2);
    assert!(resets.iter().all(|&bytes| bytes > 1 << 20), "every measured reset clears a loaded cube: {resets:?}");
    assert_eq!(swept.outcomes.len(), 2);
    let recommendation = swept.recommendation.unwrap();
    assert!(recommendation.sentence.starts_with("Use calc_threads="), "{}", recommendation.sentence);
    assert!(recommendation.sentence.contains("cannot be judged"), "one repetition: {}", recommendation.sentence);
    assert_eq!(recommendation.per_step.len(), 8);
    // Every step names its measured fastest setting; only steps calc_threads governs can be advice.
    for choice in &recommendation.per_step {
        let means: Vec<f64> = swept.outcomes.iter().map(|o| o.step(choice.step).unwrap().mean_seconds).collect();
        assert_eq!(choice.best_mean_seconds, means.iter().copied().fold(f64::INFINITY, f64::min), "{}", choice.name);
        assert_eq!(choice.difference, crate::Difference::CannotJudge);
        assert_eq!(choice.governed, choice.step.knob() == Some(ThreadKnob::CalcThreads), "{}", choice.name);
    }
    assert!(recommendation.exceptions.iter().all(|step| step.knob() == Some(ThreadKnob::CalcThreads)));
    assert!(recommendation.best_combined_total_seconds <= recommendation.overall_best_total_seconds + 1e-9);
    let words = crate::cpu_sentence(&recommendation, Some(2), Some(false));
    assert!(words.contains("logical CPUs") && words.contains("SMT (Hyper-Threading) was off"), "{words}");
    assert!(recommend(&swept.outcomes[..1]).is_none());
    assert_eq!(result_records(&swept.outcomes).len(), 18);
}

#[test]
fn a_cancelled_step_leaves_the_cube_marked_and_resettable() {
    let dir = tempdir("cancel");
    let data = prepare_data(&dir.join("data"), SEED, SCALE, &NEVER).unwrap();
    let mut cube = Cube::open(dir.join("cube"), options()).unwrap();
    let cancel = AtomicBool::new(true);
    let result = cube.durable_step(Step::NativeLoad.name(), |cube| cube.load_native(&data.native_paths(), 2, &cancel));
    assert!(matches!(result, Err(CubeError::Cancelled { .. })), "{result:?}");
    drop(cube);
    assert!(Cube::is_marked_in_progress(dir.join("cube")));
    let cube = Cube::open(dir.join("cube"), options()).unwrap();
    assert_eq!(cube.recovered_from().unwrap().step, "2 native load");
    assert!(cube.block_keys().is_empty());
}

#[test]
fn direct_io_round_trips_or_is_refused_clearly() {
    let dir = tempdir("direct");
    let direct = CubeOptions { direct_io: true, ..options() };
    match Cube::open(dir.join("cube"), direct) {
        Err(CubeError::DirectIoUnsupported { .. }) => {}
        Err(other) => panic!("unexpected error {other}"),
        Ok(mut cube) => {
            let data = prepare_data(&dir.join("data"), SEED, SCALE, &NEVER).unwrap();
            cube.load_native(&data.native_paths(), 2, &NEVER).unwrap();
            cube.aggregate(2, &NEVER).unwrap();
            cube.finish_step().unwrap();
            let before = all_blocks(&cube);
            cube.restructure_add_account(2, &NEVER).unwrap();
            cube.finish_step().unwrap();
            assert_eq!(cube.block_keys().len(), before.len());
            drop(cube);
            let cube = Cube::open(dir.join("cube"), direct).unwrap();
            let buffered = Cube::open(dir.join("cube"), options()).unwrap();
            for key in before.keys().take(50) {
                assert_eq!(
                    crate::block::present_cells(&cube.block(*key).unwrap().unwrap()),
                    crate::block::present_cells(&buffered.block(*key).unwrap().unwrap())
                );
            }
        }
    }
}

/// Helper run in a child process by `a_killed_load_is_detected_and_reset`: loads forever until killed.
#[test]
fn crash_child_process() {
    let Ok(dir) = std::env::var("ENVBENCH_CUBE_CRASH_DIR") else { return };
    let dir = Path::new(&dir);
    let data = prepare_data(&dir.join("data"), SEED, SCALE, &NEVER).unwrap();
    let mut cube = Cube::open(dir.join("cube"), options()).unwrap();
    loop {
        cube.durable_step("2 native load", |cube| cube.load_native(&data.native_paths(), 2, &NEVER)).unwrap();
        cube.durable_step("1 reset", |cube| cube.reset()).unwrap();
    }
}

#[test]
fn a_killed_load_is_detected_and_reset() {
    let dir = tempdir("kill");
    prepare_data(&dir.join("data"), SEED, SCALE, &NEVER).unwrap();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "workload_tests::crash_child_process", "--nocapture", "--test-threads=1"])
        .env("ENVBENCH_CUBE_CRASH_DIR", dir.as_os_str())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let marker = dir.join("cube").join("step-in-progress.json");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !marker.exists() {
        assert!(std::time::Instant::now() < deadline, "the child never started a step");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    std::thread::sleep(std::time::Duration::from_millis(30));
    // SIGKILL: no destructor, no cleanup runs in the child.
    child.kill().unwrap();
    child.wait().unwrap();
    let cube = Cube::open(dir.join("cube"), options()).unwrap();
    if let Some(interrupted) = cube.recovered_from() {
        assert!(interrupted.step == "2 native load" || interrupted.step == "1 reset");
        assert!(cube.block_keys().is_empty(), "an interrupted cube is reset");
    } else {
        // Killed between two steps: the cube is consistent and usable as it is.
        assert!(!Cube::is_marked_in_progress(dir.join("cube")));
    }
}

/// `member` and every member below it.
fn subtree(outline: &Outline, dim: Dim, member: crate::outline::MemberId) -> Vec<crate::outline::MemberId> {
    let mut all = vec![member];
    let mut next = 0;
    while next < all.len() {
        all.extend(outline.dim(dim).member(all[next]).children.iter().copied());
        next += 1;
    }
    all
}

/// The sign with which the level-0 member `leaf` rolls up into `target` (1 for itself), `None` when it does not.
fn roll_up_sign(
    outline: &Outline,
    dim: Dim,
    leaf: crate::outline::MemberId,
    target: crate::outline::MemberId,
) -> Option<f64> {
    let dimension = outline.dim(dim);
    let (mut member, mut sign) = (leaf, 1.0);
    loop {
        if member == target {
            return Some(sign);
        }
        let m = dimension.member(member);
        sign *= m.consolidation.sign()?;
        member = m.parent?;
    }
}

#[test]
fn retrievals_equal_a_brute_force_sum_of_the_level0_blocks() {
    use crate::retrievals::{Pass, RetrievalKind, RetrievalOptions, retrieval_mix, run_retrievals};
    let dir = tempdir("retrievals");
    let cube = loaded_cube(&dir, options());
    cube.aggregate(2, &NEVER).unwrap();
    let outline = cube.outline();
    let blocks = all_blocks(&cube);
    let level0: Vec<(&SparseKey, &Cells)> = blocks
        .iter()
        .filter(|(key, _)| Dim::SPARSE.iter().all(|&d| outline.dim(d).member(key.member(d)).level == 0))
        .collect();
    let mix = retrieval_mix(&cube, 7).unwrap();
    assert_eq!(mix, retrieval_mix(&cube, 7).unwrap(), "the mix is seeded");
    let (mut present, mut upper_checked) = (0, 0);
    let mut checked = 0;
    for kind in RetrievalKind::ALL {
        let sample: Vec<_> = mix.iter().filter(|r| r.kind == kind).take(4).collect();
        assert!(!sample.is_empty(), "{kind:?} is in the mix");
        let cells: Vec<usize> = sample.iter().map(|r| r.cells()).collect();
        match kind {
            RetrievalKind::Summary => assert!(cells.iter().all(|&c| (5..100).contains(&c)), "{cells:?}"),
            RetrievalKind::DrillDown => assert!(cells.iter().all(|&c| (24..=1200).contains(&c)), "{cells:?}"),
            RetrievalKind::Wide => assert!(cells.iter().all(|&c| c >= 500), "{cells:?}"),
        }
        for retrieval in sample {
            let retrieved = cube.retrieve(&retrieval.members).unwrap();
            assert_eq!(retrieved.values.len(), retrieval.cells());
            // Walk the cells in the retrieval's order and check those a level-0 sum defines: stored level-0
            // accounts, months, sparse members in the hierarchy (no formula members).
            let sparse: Vec<&Vec<u32>> = Dim::SPARSE.iter().map(|d| &retrieval.members[d.index()]).collect();
            let (accounts, periods) =
                (&retrieval.members[Dim::Account.index()], &retrieval.members[Dim::Period.index()]);
            let mut combos: Vec<Vec<u32>> = vec![Vec::new()];
            for list in &sparse {
                combos = combos.iter().flat_map(|c| list.iter().map(move |&m| [c.clone(), vec![m]].concat())).collect();
            }
            let mut index = 0;
            for combo in &combos {
                for &account in accounts {
                    for &period in periods {
                        let value = retrieved.values[index];
                        index += 1;
                        let a = outline.dim(Dim::Account).member(account);
                        let p = outline.dim(Dim::Period).member(period);
                        let plain = Dim::SPARSE.iter().zip(combo).all(|(&d, &m)| {
                            outline.dim(d).member(m).formula.is_none()
                                && (outline.dim(d).member(m).is_stored() || d == Dim::Entity)
                        });
                        // The stored level-0 accounts and months the cell rolls up, with their signs: accounts
                        // without formulas below them, months alone or quarters of flow accounts.
                        let leaf_accounts: Vec<(usize, f64)> = (0..outline.stored_accounts())
                            .filter_map(|row| {
                                let leaf = outline.stored_account(row);
                                let sign = roll_up_sign(outline, Dim::Account, leaf, account)?;
                                (outline.dim(Dim::Account).member(leaf).level == 0).then_some((row, sign))
                            })
                            .collect();
                        let formula_below = subtree(outline, Dim::Account, account)
                            .iter()
                            .any(|&m| outline.dim(Dim::Account).member(m).formula.is_some());
                        let flows = leaf_accounts.iter().all(|&(row, _)| {
                            outline
                                .dim(Dim::Account)
                                .member(outline.stored_account(row))
                                .account
                                .is_some_and(|info| info.time_balance == crate::outline::TimeBalance::Flow)
                        });
                        let leaf_periods: Vec<(usize, f64)> = match (p.level, p.stored_index) {
                            (0, Some(stored)) => vec![(stored as usize, 1.0)],
                            (1, _) if flows => p
                                .children
                                .iter()
                                .filter_map(|&m| {
                                    outline.dim(Dim::Period).member(m).stored_index.map(|i| (i as usize, 1.0))
                                })
                                .collect(),
                            _ => Vec::new(),
                        };
                        if !plain || formula_below || leaf_accounts.is_empty() || leaf_periods.is_empty() {
                            continue;
                        }
                        let mut expected: Option<f64> = None;
                        for (key, cells) in &level0 {
                            let signs: Option<f64> = Dim::SPARSE
                                .iter()
                                .zip(combo)
                                .map(|(&d, &m)| roll_up_sign(outline, d, key.member(d), m))
                                .product();
                            let Some(sign) = signs else { continue };
                            for &(row, account_sign) in &leaf_accounts {
                                for &(period, _) in &leaf_periods {
                                    let v = cells[Outline::cell(row, period)];
                                    if !is_missing(v) {
                                        *expected.get_or_insert(0.0) += sign * account_sign * v;
                                    }
                                }
                            }
                        }
                        upper_checked += usize::from(a.level > 0 || p.level > 0);
                        let actual = value.unwrap_or(crate::block::MISSING);
                        let expected = expected.unwrap_or(crate::block::MISSING);
                        assert!(
                            close(actual, expected) || (actual - expected).abs() < 0.01,
                            "{kind:?} {combo:?} account {} period {}: {actual} != brute-force {expected}",
                            a.name,
                            p.name
                        );
                        checked += 1;
                        present += usize::from(value.is_some());
                    }
                }
            }
        }
    }
    assert!(checked > 200 && present > 100, "only {checked} cells checked, {present} with data");
    assert!(upper_checked > 20, "dynamic accounts and quarters checked too: {upper_checked}");

    // Users alone (cold, warm) and during a background aggregation.
    let options = RetrievalOptions {
        users: vec![1, 3],
        duration: std::time::Duration::from_millis(400),
        during_calc: true,
        calc_threads: 2,
        seed: 7,
    };
    let steps = ResetWatcher { cube_dir: dir.join("cube"), seen: Mutex::new(Vec::new()) };
    let outcome = run_retrievals(&cube, &options, &steps, &|| false, &NEVER).unwrap();
    assert_eq!(outcome.passes.len(), 6);
    let names: Vec<String> = steps.seen.into_inner().unwrap().into_iter().map(|(s, _)| s).collect();
    assert_eq!(names[0], "9 retrievals U=1 cold");
    assert_eq!(names[5], "9 retrievals U=3 during calc");
    for pass in &outcome.passes {
        let all = pass.all();
        assert!(all.retrievals > 0 && all.cells > 0 && all.blocks_read > 0, "{pass:?}");
        assert!(all.p50_ms <= all.p95_ms && all.p95_ms <= all.p99_ms && all.p99_ms <= all.max_ms, "{pass:?}");
        assert_eq!(pass.figures.iter().skip(1).map(|k| k.retrievals).sum::<u64>(), all.retrievals);
        assert_eq!(pass.calculations > 0, pass.pass == Pass::DuringCalc, "{pass:?}");
    }
    assert!(!Cube::is_marked_in_progress(dir.join("cube")), "the background aggregation finished whole");
    let records = crate::retrievals::retrieval_records(&outcome, &serde_json::json!({ "scale": SCALE }));
    assert!(records.iter().any(|r| r.test_id == "retrieval all U=3 during calc" && r.metric == "latency_p95"));
    let text = crate::retrievals::render(&outcome);
    assert!(text.contains("during calc") && text.contains("drill-down"), "{text}");
}

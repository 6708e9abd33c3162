//! Concurrent retrievals: what Essbase users feel every day, how fast their grids and reports come back, alone and
//! while a calculation runs.
//!
//! A seeded mix is generated from the outline in a fixed ratio of three kinds:
//! - **summary**: a small grid at upper levels (tens of cells): an upper sparse member of every dimension, an upper
//!   account and its children on the rows, the dynamic quarters and the year on the columns;
//! - **drill-down**: one level-1 Entity or Product member and up to 24 of its level-0 children, a few level-0 accounts, the twelve
//!   months (hundreds of cells);
//! - **wide**: every level-0 member of Entity or Product (one block read each), a few upper accounts, the quarters
//!   (thousands of cells).
//!
//! N users each issue retrievals back to back for a duration. Each user count runs a cold pass (after clearing the
//! data cache and, when permitted, the page cache), a warm pass, and a pass while aggregations run one after another
//! in the background (unless asked not to). Latency per retrieval goes into HDR histograms per kind.

use crate::cube::Cube;
use crate::error::CubeError;
use crate::outline::{Dim, MemberId, Outline, SparseKey};
use crate::rng::Rng;
use envbench_base::latency::LatencyHistogram;
use serde::{Deserialize, Serialize};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The kinds of retrieval, with their share of the mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetrievalKind {
    Summary,
    DrillDown,
    Wide,
}

impl RetrievalKind {
    pub const ALL: [RetrievalKind; 3] = [RetrievalKind::Summary, RetrievalKind::DrillDown, RetrievalKind::Wide];

    pub fn name(self) -> &'static str {
        match self {
            RetrievalKind::Summary => "summary",
            RetrievalKind::DrillDown => "drill-down",
            RetrievalKind::Wide => "wide",
        }
    }

    /// Out of ten retrievals of the mix.
    pub fn weight(self) -> u64 {
        match self {
            RetrievalKind::Summary => 6,
            RetrievalKind::DrillDown => 3,
            RetrievalKind::Wide => 1,
        }
    }
}

/// One retrieval: a member list per dimension (indexed by [`Dim::index`]); its cells are every combination.
#[derive(Clone, Debug, PartialEq)]
pub struct Retrieval {
    pub kind: RetrievalKind,
    pub members: [Vec<MemberId>; 8],
}

impl Retrieval {
    pub fn cells(&self) -> usize {
        self.members.iter().map(Vec::len).product()
    }
}

/// Retrievals in the mix; users start at different places in it.
pub const MIX_LENGTH: usize = 1000;
/// The most children a drill-down shows.
const DRILL_ROWS: usize = 24;
/// The most level-0 members of one dimension a wide retrieval puts on its rows.
const WIDE_ROWS: usize = 400;

/// The ancestor of `member` (or itself) in generation `generation` or above.
fn ancestor(outline: &Outline, dim: Dim, member: MemberId, generation: u8) -> MemberId {
    let d = outline.dim(dim);
    let mut m = member;
    while d.member(m).generation > generation {
        match d.member(m).parent {
            Some(parent) => m = parent,
            None => break,
        }
    }
    m
}

/// `count` distinct members of `from`, in outline order.
fn sample(rng: &mut Rng, from: &[MemberId], count: usize) -> Vec<MemberId> {
    let mut chosen = from.to_vec();
    rng.shuffle(&mut chosen);
    chosen.truncate(count.max(1));
    chosen.sort_unstable();
    chosen
}

/// The seeded retrieval mix of `cube`: [`MIX_LENGTH`] retrievals, the kinds in the ratio of their weights. Users
/// browse where the data is, so each retrieval starts from a level-0 block that holds data (its slice, and the
/// accounts with values in it) and goes up the hierarchies from there: summaries at regions and product categories
/// and above, drill-downs from a level-1 parent, wide grids across the level-0 members under a top member. Empty
/// when the cube holds no level-0 block.
pub fn retrieval_mix(cube: &Cube, seed: u64) -> Result<Vec<Retrieval>, CubeError> {
    let outline = cube.outline();
    let keys: Vec<SparseKey> = cube
        .block_keys()
        .into_iter()
        .filter(|k| [Dim::Entity, Dim::Product].iter().all(|&d| outline.dim(d).member(k.member(d)).level == 0))
        .collect();
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut rng = Rng::for_stream(seed, 0x7e7_12ea1);
    let periods = outline.dim(Dim::Period);
    let quarters: Vec<MemberId> =
        (0..periods.members.len() as MemberId).filter(|&m| periods.member(m).level == 1).collect();
    let year: Vec<MemberId> = (0..periods.members.len() as MemberId)
        .filter(|&m| periods.member(m).stored_index == Some(crate::outline::YEAR_TOTAL as u32))
        .collect();
    let months: Vec<MemberId> = (0..periods.members.len() as MemberId)
        .filter(|&m| periods.member(m).level == 0 && periods.member(m).consolidation.sign().is_some())
        .filter(|&m| periods.member(m).stored_index != Some(crate::outline::YEAR_TOTAL as u32))
        .collect();
    let accounts = outline.dim(Dim::Account);
    let upper_accounts: Vec<MemberId> =
        (0..accounts.members.len() as MemberId).filter(|&m| accounts.member(m).level > 0).collect();
    let total: u64 = RetrievalKind::ALL.iter().map(|k| k.weight()).sum();
    let mut mix = Vec::with_capacity(MIX_LENGTH);
    for _ in 0..MIX_LENGTH {
        let mut draw = rng.below(total);
        let kind = *RetrievalKind::ALL
            .iter()
            .find(|k| {
                let hit = draw < k.weight();
                draw = draw.saturating_sub(k.weight());
                hit
            })
            .expect("the draw is below the total weight");
        let key = keys[rng.below(keys.len() as u64) as usize];
        // The accounts with values in the block the retrieval starts from.
        let with_data: Vec<MemberId> = match cube.block(key)? {
            Some(cells) => (0..outline.stored_accounts())
                .filter(|&row| {
                    (0..crate::outline::STORED_PERIODS)
                        .any(|p| crate::block::present(cells[Outline::cell(row, p)]).is_some())
                })
                .map(|row| outline.stored_account(row))
                .filter(|&m| accounts.member(m).level == 0)
                .collect(),
            None => Vec::new(),
        };
        let with_data = if with_data.is_empty() { outline.dim(Dim::Account).stored_at_level(0) } else { with_data };
        let mut members: [Vec<MemberId>; 8] = Default::default();
        for dim in [Dim::Years, Dim::Scenario, Dim::Version, Dim::Currency] {
            members[dim.index()] = vec![key.member(dim)];
        }
        // Grids open at the top: regions and above, product categories and above.
        let top = |dim: Dim, rng: &mut Rng| {
            let generation = if dim == Dim::Entity { 2 + rng.below(2) as u8 } else { 1 + rng.below(2) as u8 };
            ancestor(outline, dim, key.member(dim), generation)
        };
        let across = if rng.chance(0.5) { Dim::Entity } else { Dim::Product };
        let other = if across == Dim::Entity { Dim::Product } else { Dim::Entity };
        match kind {
            RetrievalKind::Summary => {
                for dim in [Dim::Entity, Dim::Product] {
                    members[dim.index()] = vec![top(dim, &mut rng)];
                }
                let leaf = with_data[rng.below(with_data.len() as u64) as usize];
                let parent = accounts.member(leaf).parent.unwrap_or(upper_accounts[0]);
                let mut rows = accounts.member(parent).children.clone();
                rows.truncate(14);
                rows.push(parent);
                members[Dim::Account.index()] = rows;
                members[Dim::Period.index()] = quarters.iter().chain(&year).copied().collect();
            }
            RetrievalKind::DrillDown => {
                members[other.index()] = vec![top(other, &mut rng)];
                let parent = outline.dim(across).member(key.member(across)).parent.unwrap_or(key.member(across));
                let children = &outline.dim(across).member(parent).children;
                let mut rows = sample(&mut rng, children, DRILL_ROWS);
                if !rows.contains(&key.member(across)) {
                    rows[0] = key.member(across);
                    rows.sort_unstable();
                }
                rows.push(parent);
                members[across.index()] = rows;
                let count = 2 + rng.below(3) as usize;
                members[Dim::Account.index()] = sample(&mut rng, &with_data, count);
                members[Dim::Period.index()] = months.clone();
            }
            RetrievalKind::Wide => {
                members[other.index()] = vec![top(other, &mut rng)];
                members[across.index()] = sample(&mut rng, &outline.dim(across).stored_at_level(0), WIDE_ROWS);
                let count = 2 + rng.below(2) as usize;
                members[Dim::Account.index()] = sample(&mut rng, &upper_accounts, count);
                members[Dim::Period.index()] = quarters.clone();
            }
        }
        mix.push(Retrieval { kind, members });
    }
    Ok(mix)
}

/// How a pass finds the caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Pass {
    /// After clearing the data cache (and the page cache, when permitted).
    Cold,
    /// Right after the cold pass.
    Warm,
    /// While aggregations run one after another in the background.
    DuringCalc,
}

impl Pass {
    pub fn name(self) -> &'static str {
        match self {
            Pass::Cold => "cold",
            Pass::Warm => "warm",
            Pass::DuringCalc => "during calc",
        }
    }
}

/// What the users did in one pass, for one kind or for all (`kind` is `None`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindFigures {
    pub kind: Option<RetrievalKind>,
    pub retrievals: u64,
    pub cells: u64,
    pub blocks_read: u64,
    pub retrievals_per_s: f64,
    pub cells_per_s: f64,
    pub blocks_per_s: f64,
    pub p50_ms: f64,
    pub p95_ms: f64,
    pub p99_ms: f64,
    pub max_ms: f64,
}

/// One pass of one user count.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PassOutcome {
    pub users: usize,
    pub pass: Pass,
    pub seconds: f64,
    /// Every kind, then each kind.
    pub figures: Vec<KindFigures>,
    /// Aggregations completed in the background (during-calc passes).
    pub calculations: u32,
    /// Cold passes: whether the page cache was dropped too (root only).
    pub page_cache_dropped: bool,
}

impl PassOutcome {
    pub fn all(&self) -> &KindFigures {
        &self.figures[0]
    }
}

/// What a retrieval benchmark is asked to do.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetrievalOptions {
    pub users: Vec<usize>,
    pub duration: Duration,
    /// Also run each user count while aggregations run.
    pub during_calc: bool,
    /// Threads of the background aggregation.
    pub calc_threads: usize,
    pub seed: u64,
}

/// Every pass.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetrievalOutcome {
    pub duration_s: f64,
    pub calc_threads: usize,
    /// The mix's ratio, e.g. `summary 6 : drill-down 3 : wide 1`.
    pub mix: String,
    pub passes: Vec<PassOutcome>,
}

/// Per-kind counts of one user.
#[derive(Default)]
struct Tally {
    latency: LatencyHistogram,
    retrievals: u64,
    cells: u64,
    blocks: u64,
}

/// The step name of a pass, for the sampler: `9 retrievals U=4 warm`.
pub fn pass_step(users: usize, pass: Pass) -> String {
    format!("9 retrievals U={users} {}", pass.name())
}

/// Run every pass of `options` on the loaded `cube`; `drop_page_cache` drops the OS page cache (false when not
/// permitted). Each pass is announced to `observer` as a step. The background aggregation of a during-calc pass runs
/// as a durable step, so an interrupted one leaves the cube marked for reset.
pub fn run_retrievals(
    cube: &Cube,
    options: &RetrievalOptions,
    observer: &dyn envbench_core::sampler::StepObserver,
    drop_page_cache: &dyn Fn() -> bool,
    cancel: &AtomicBool,
) -> Result<RetrievalOutcome, CubeError> {
    let mix = retrieval_mix(cube, options.seed)?;
    if mix.is_empty() {
        return Err(CubeError::Config("the cube holds no data to retrieve: run the sequence first".into()));
    }
    let mut passes = Vec::new();
    for &users in &options.users {
        let mut kinds = vec![Pass::Cold, Pass::Warm];
        if options.during_calc {
            kinds.push(Pass::DuringCalc);
        }
        for pass in kinds {
            let mut page_cache_dropped = false;
            if pass == Pass::Cold {
                cube.store().clear_cache();
                page_cache_dropped = drop_page_cache();
            }
            let step = pass_step(users, pass);
            observer.step_started(&step);
            let outcome = run_pass(cube, &mix, users, pass, options, cancel);
            observer.step_finished(&step);
            let mut outcome = outcome?;
            outcome.page_cache_dropped = page_cache_dropped;
            passes.push(outcome);
        }
    }
    let mix = RetrievalKind::ALL.iter().map(|k| format!("{} {}", k.name(), k.weight())).collect::<Vec<_>>();
    Ok(RetrievalOutcome {
        duration_s: options.duration.as_secs_f64(),
        calc_threads: options.calc_threads,
        mix: mix.join(" : "),
        passes,
    })
}

fn run_pass(
    cube: &Cube,
    mix: &[Retrieval],
    users: usize,
    pass: Pass,
    options: &RetrievalOptions,
    cancel: &AtomicBool,
) -> Result<PassOutcome, CubeError> {
    let users_done = AtomicBool::new(false);
    let tallies: Mutex<Vec<Vec<Tally>>> = Mutex::new(Vec::new());
    let started = Instant::now();
    let deadline = started + options.duration;
    let (user_results, calculations, seconds) = std::thread::scope(|scope| {
        let calc = (pass == Pass::DuringCalc).then(|| {
            scope.spawn(|| -> Result<u32, CubeError> {
                cube.begin_step("9 aggregation during retrievals")?;
                let mut done = 0;
                // Whole aggregations only: one still running when the users stop completes, so the cube stays whole.
                // At least one, however late this thread starts on a busy host: the pass is "during calc".
                loop {
                    cube.aggregate(options.calc_threads, cancel)?;
                    done += 1;
                    if users_done.load(Ordering::SeqCst) || cancel.load(Ordering::Relaxed) {
                        break;
                    }
                }
                cube.finish_step()?;
                Ok(done)
            })
        });
        let handles: Vec<_> = (0..users)
            .map(|user| {
                let tallies = &tallies;
                scope.spawn(move || -> Result<(), CubeError> {
                    let mut mine: Vec<Tally> = RetrievalKind::ALL.iter().map(|_| Tally::default()).collect();
                    let mut next = user * MIX_LENGTH / users.max(1);
                    // Each user retrieves at least once, however late its thread starts on a busy host.
                    let mut first = true;
                    while (first || Instant::now() < deadline) && !cancel.load(Ordering::Relaxed) {
                        first = false;
                        let retrieval = &mix[next % mix.len()];
                        next += 1;
                        let began = Instant::now();
                        let retrieved = cube.retrieve(&retrieval.members)?;
                        let tally = &mut mine[retrieval.kind as usize];
                        tally.latency.record_ns(began.elapsed().as_nanos() as u64);
                        tally.retrievals += 1;
                        tally.cells += retrieved.values.len() as u64;
                        tally.blocks += retrieved.blocks_read;
                    }
                    tallies.lock().expect("not poisoned").push(mine);
                    Ok(())
                })
            })
            .collect();
        let user_results: Vec<Result<(), CubeError>> =
            handles.into_iter().map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))).collect();
        // From the start to the last user's last retrieval.
        let seconds = started.elapsed().as_secs_f64().max(1e-9);
        users_done.store(true, Ordering::SeqCst);
        let calculations = calc.map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        (user_results, calculations, seconds)
    });
    let calculations = calculations.transpose()?.unwrap_or(0);
    for result in user_results {
        result?;
    }
    if cancel.load(Ordering::Relaxed) {
        return Err(CubeError::Cancelled { step: pass_step(users, pass) });
    }
    let tallies = tallies.into_inner().expect("not poisoned");
    let merged = |kinds: &[usize]| -> Tally {
        let mut sum = Tally::default();
        for user in &tallies {
            for &k in kinds {
                sum.latency.merge(&user[k].latency);
                sum.retrievals += user[k].retrievals;
                sum.cells += user[k].cells;
                sum.blocks += user[k].blocks;
            }
        }
        sum
    };
    let figures = |kind: Option<RetrievalKind>, tally: Tally| {
        // HDR quantiles are bucket edges: never above the exact maximum.
        let ms = |ns: u64| ns.min(tally.latency.max_ns()) as f64 / 1e6;
        KindFigures {
            kind,
            retrievals: tally.retrievals,
            cells: tally.cells,
            blocks_read: tally.blocks,
            retrievals_per_s: tally.retrievals as f64 / seconds,
            cells_per_s: tally.cells as f64 / seconds,
            blocks_per_s: tally.blocks as f64 / seconds,
            p50_ms: ms(tally.latency.quantile_ns(0.50)),
            p95_ms: ms(tally.latency.quantile_ns(0.95)),
            p99_ms: ms(tally.latency.quantile_ns(0.99)),
            max_ms: ms(tally.latency.max_ns()),
        }
    };
    let mut all = vec![figures(None, merged(&[0, 1, 2]))];
    all.extend(RetrievalKind::ALL.iter().map(|&k| figures(Some(k), merged(&[k as usize]))));
    Ok(PassOutcome { users, pass, seconds, figures: all, calculations, page_cache_dropped: false })
}

/// The test id of one pass and kind: `retrieval all U=4 during calc`.
pub fn test_id(users: usize, pass: Pass, kind: Option<RetrievalKind>) -> String {
    format!("retrieval {} U={users} {}", kind.map_or("all", RetrievalKind::name), pass.name())
}

/// The results of every pass in the core model; `base` holds the cube's own parameters (scale, seed, ...).
pub fn retrieval_records(outcome: &RetrievalOutcome, base: &serde_json::Value) -> Vec<envbench_core::ResultRecord> {
    use envbench_core::Direction::{HigherIsBetter, LowerIsBetter};
    let mut records = Vec::new();
    for pass in &outcome.passes {
        let mut parameters = base.clone();
        parameters["users"] = pass.users.into();
        parameters["pass"] = pass.pass.name().into();
        parameters["duration_s"] = outcome.duration_s.into();
        parameters["mix"] = outcome.mix.clone().into();
        if pass.pass == Pass::DuringCalc {
            parameters["calc_threads"] = outcome.calc_threads.into();
        }
        for figures in &pass.figures {
            let metrics = [
                ("retrievals_per_s", "retrievals/s", HigherIsBetter, figures.retrievals_per_s),
                ("cells_per_s", "cells/s", HigherIsBetter, figures.cells_per_s),
                ("blocks_per_s", "blocks/s", HigherIsBetter, figures.blocks_per_s),
                ("latency_p50", "ms", LowerIsBetter, figures.p50_ms),
                ("latency_p95", "ms", LowerIsBetter, figures.p95_ms),
                ("latency_p99", "ms", LowerIsBetter, figures.p99_ms),
                ("latency_max", "ms", LowerIsBetter, figures.max_ms),
            ];
            for (metric, unit, direction, value) in metrics {
                if figures.retrievals == 0 {
                    continue;
                }
                let test = test_id(pass.users, pass.pass, figures.kind);
                records.push(crate::names::SOURCE.record(test, &parameters, metric, unit, direction, vec![value]));
            }
        }
    }
    records
}

/// The retrieval table: per user count and pass, every kind and each kind.
pub fn render(outcome: &RetrievalOutcome) -> String {
    use envbench_core::text::{Align, Table, heading, number};
    let mut out = heading(&format!(
        "Retrievals: {} per pass, mix {}, background aggregation at calc_threads={}",
        envbench_core::units::format_duration(Duration::from_secs_f64(outcome.duration_s)),
        outcome.mix,
        outcome.calc_threads
    ));
    out.push('\n');
    let headers =
        ["USERS", "PASS", "KIND", "RETRIEVALS/s", "CELLS/s", "BLOCKS/s", "P50 ms", "P95 ms", "P99 ms", "MAX ms"];
    let mut aligns = vec![Align::Right; headers.len()];
    aligns[1] = Align::Left;
    aligns[2] = Align::Left;
    let mut table = Table::new(&headers, &aligns);
    for pass in &outcome.passes {
        for figures in &pass.figures {
            let pass_name = match (pass.pass, pass.calculations) {
                (Pass::DuringCalc, n) => format!("during calc ({n} done)"),
                (Pass::Cold, _) if !pass.page_cache_dropped => "cold (data cache)".to_string(),
                (other, _) => other.name().to_string(),
            };
            table.row(vec![
                pass.users.to_string(),
                if figures.kind.is_none() { pass_name } else { String::new() },
                figures.kind.map_or("all", RetrievalKind::name).to_string(),
                number(figures.retrievals_per_s),
                number(figures.cells_per_s),
                number(figures.blocks_per_s),
                format!("{:.2}", figures.p50_ms),
                format!("{:.2}", figures.p95_ms),
                format!("{:.2}", figures.p99_ms),
                format!("{:.2}", figures.max_ms),
            ]);
        }
    }
    out.push_str(&table.render());
    out.push_str(
        "Blocks are those each retrieval read (from the data cache or the page files). A cold pass follows a cleared \
         data cache and, as root, a dropped page cache ('cold (data cache)' when the page cache could not be \
         dropped).\n",
    );
    out
}

//! The verdict against a store with known better, worse and unchanged tests: its counts, geometric mean, bootstrap
//! interval and explanations, and where the text, JSON and HTML put it.

use crate::common;

use common::{physical, record, scratch, virtual_machine};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::model::{ResultRecord, RunRequest, RunStatus};
use envbench_report::{Format, render, render_report};
use envbench_store::{ReadEnvironments, ReadRuns, RecordRuns, SqliteStore};
use envbench_verdict::{compare, resolve_sides};
use serde_json::json;

/// The workloads of these tests, storage included (its verdict is governed by storage alone).
static WORKLOADS: envbench_core::workload::Registry = envbench_core::workload::Registry::new(&[
    &envbench_io::DISK,
    &envbench_cube::CUBE,
    &envbench_tpch::TPCH,
    &envbench_ranread::RANREAD,
]);

fn store_run(store: &mut SqliteStore, workload: &str, label: &str, fp: &Fingerprint, results: &[ResultRecord]) {
    let request = RunRequest {
        workload: workload.into(),
        label: Some(label.into()),
        tags: Default::default(),
        command_line: format!("envbench {workload}"),
        suite_id: None,
    };
    let uuid = store.begin_run(&request, fp).unwrap();
    store.add_results(&uuid, results).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
}

/// Six samples around `value`, spread by 1% in a fixed pattern.
fn six(value: f64) -> Vec<f64> {
    [1.0, 1.01, 0.99, 1.005, 0.995, 1.0].iter().map(|f| value * f).collect()
}

/// A store where side B ("vm") is, against A ("metal"): on disk, 1.5x better on one test, half as good on another
/// and the same on a third (six samples each); on tpch 2x slower on one query with one sample each; on the cube, its
/// serial CSV load 1.6x slower and its aggregation at 16 threads 2x faster.
fn known_store(name: &str) -> SqliteStore {
    let path = scratch(name);
    let mut store = SqliteStore::open(&path, true).unwrap();
    let disk = |factors: [f64; 3]| -> Vec<ResultRecord> {
        [("SEQ1M Q8T1 read", 3000.0, 8), ("RND4K Q32T1 read", 400.0, 32), ("RND4K Q1T1 read", 60.0, 1)]
            .iter()
            .zip(factors)
            .map(|((test, mbps, qd), factor)| {
                let parameters = json!({"threads": 1, "queue_depth": qd});
                record("disk", test, parameters, "throughput", "MB/s", six(mbps * factor))
            })
            .collect()
    };
    let tpch = |factor: f64| vec![record("tpch", "Q1", json!({"sf": 1}), "elapsed", "s", vec![2.0 * factor])];
    let cube = |load: f64, aggregation: f64| {
        vec![
            record("cube", "3 csv load", json!({"scale": 0.1}), "elapsed", "s", six(10.0 * load)),
            record(
                "cube",
                "4 aggregation",
                json!({"scale": 0.1, "calc_threads": 16}),
                "elapsed",
                "s",
                six(8.0 * aggregation),
            ),
        ]
    };
    let (metal, vm) = (physical(), virtual_machine());
    store_run(&mut store, "disk", "metal", &metal, &disk([1.0, 1.0, 1.0]));
    store_run(&mut store, "disk", "vm", &vm, &disk([1.5, 0.5, 1.0]));
    store_run(&mut store, "tpch", "metal", &metal, &tpch(1.0));
    store_run(&mut store, "tpch", "vm", &vm, &tpch(2.0));
    store_run(&mut store, "cube", "metal", &metal, &cube(1.0, 1.0));
    store_run(&mut store, "cube", "vm", &vm, &cube(1.6, 0.5));
    store
}

#[test]
fn the_verdict_counts_geomeans_and_explains() {
    let store = known_store("verdict");
    let sides = resolve_sides(&store, &["metal".to_string(), "vm".to_string()]).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    assert_eq!(comparison.verdicts.len(), 1, "one verdict per side against the baseline");
    let verdict = &comparison.verdicts[0];
    assert_eq!((verdict.letter.as_str(), verdict.name.as_str()), ("B", "vm"));
    let workload = |name: &str| verdict.workloads.iter().find(|w| w.workload == name).unwrap();

    let disk = workload("disk");
    assert_eq!((disk.better, disk.worse, disk.unchanged, disk.tests), (1, 1, 1, 3));
    let expected = (1.5f64 * 0.5 * 1.0).powf(1.0 / 3.0);
    assert!((disk.ratio - expected).abs() < 1e-9, "{} vs {expected}", disk.ratio);
    let (low, high) = disk.interval.expect("six samples a side give an interval");
    assert!(low <= disk.ratio && disk.ratio <= high && high < 1.2 && low > 0.75, "{low}..{high}");
    assert_eq!(disk.metrics, ["throughput"]);
    // Tight samples leave 1 out of the interval, but 10% is within the 20% two runs of one disk differ by.
    assert_eq!(disk.decision, envbench_verdict::Decision::Same);
    assert!(
        disk.summary.starts_with("storage about the same (1.10x slower, within noise)")
            && disk.summary.ends_with(" on B"),
        "{}",
        disk.summary
    );
    let disk_reasons = disk.explanations.join(" ");
    assert!(disk_reasons.contains("Hypervisor") && disk_reasons.contains("Device chain"), "{disk_reasons}");
    assert!(!disk_reasons.contains("logical CPUs"), "storage is not governed by CPUs: {disk_reasons}");

    let tpch = workload("tpch");
    assert_eq!(tpch.interval, None, "one sample a side: no interval");
    // A single sample a side cannot decide: never counted as unchanged, and the advice names the option.
    assert_eq!((tpch.better, tpch.worse, tpch.unchanged, tpch.cannot_tell), (0, 0, 0, 1));
    assert_eq!(tpch.decision, envbench_verdict::Decision::CannotTell);
    assert!((tpch.ratio - 0.5).abs() < 1e-9);
    assert!(
        tpch.summary.contains("analytic queries cannot tell: 1 sample each; rerun with --users 2 --sets 2")
            && tpch.summary.ends_with(" on B"),
        "{}",
        tpch.summary
    );
    let tpch_reasons = tpch.explanations.join(" ");
    assert!(tpch_reasons.contains("B has 1/5 the logical CPUs of A (16 vs 80)"), "{tpch_reasons}");
    // An explanation names only the workload's own tests: the cube's serial CSV load explains nothing of TPC-H.
    assert!(!tpch_reasons.contains("single-threaded") && !tpch_reasons.contains("csv load"), "{tpch_reasons}");
    assert!(tpch_reasons.contains("SMT"), "{tpch_reasons}");

    let cube = workload("cube");
    assert_eq!((cube.better, cube.worse), (1, 1));
    // The cube's own single-threaded test, named as its table names it.
    let cube_reasons = cube.explanations.join(" ");
    assert!(cube_reasons.contains("single-threaded tests are 1.60x slower (3 csv load)"), "{cube_reasons}");
    assert!((cube.ratio - (2.0f64 / 1.6).sqrt()).abs() < 1e-9);

    // The answer comes first in every format.
    let text = render(&comparison, Format::Text);
    let verdict_at = text.find("VERDICT B: vm against A: metal").expect("the verdict block");
    let details_at = text.find("DETAILS per test").expect("the tables after it");
    assert!(verdict_at < details_at && details_at < text.find("SEQ1M Q8T1 read").unwrap(), "{text}");
    assert!(text.contains("no interval (one sample a side)"), "{text}");
    assert!(text.contains("with one sample a side (cannot tell)"), "{text}");
    assert!(text.contains("1 better, 1 worse, 1 unchanged of 3 tests"), "{text}");
    let markdown = render(&comparison, Format::Markdown);
    assert!(markdown.contains("### Verdict: B: vm against A: metal"), "{markdown}");
    let parsed: serde_json::Value = serde_json::from_str(&render(&comparison, Format::Json)).unwrap();
    assert_eq!(parsed["verdicts"][0]["workloads"][0]["better"], 1);

    // Lower-is-better changes read as time and speed, never "+60% better".
    // Every test row in speed factors with the direction of "better" per metric: never a signed percent.
    assert!(text.contains("1.60x slower"), "{text}");
    assert!(text.contains("2.00x faster"), "{text}");
    assert!(text.contains("1.50x faster") && !text.contains("% better") && !text.contains("% worse"), "{text}");

    let html = render_report(&sides, &WORKLOADS);
    let verdict_html = html.find("id=\"verdict\"").expect("a verdict section");
    assert!(verdict_html < html.find("<details").unwrap(), "the verdict opens the report, before any collapsed detail");
    assert!(html.contains("data-chart=\"verdict\""), "the per-workload change chart");
    // Per workload its change against the baseline: a chart of its tests, or a sentence where there is one change.
    let changes = html.matches("data-chart=\"relative\"").count() + html.matches("class=\"single-change\"").count();
    assert!(changes >= 3, "a change per workload");
    assert!(html.contains("<details class=\"table\"><summary>Table: 3 results of disk</summary>"));
}

#[test]
fn a_single_run_report_opens_with_the_scorecard() {
    let store = known_store("scorecard");
    let sides = resolve_sides(&store, &["vm".to_string()]).unwrap();
    let html = render_report(&sides, &WORKLOADS);
    let cards = html.find("id=\"scorecard\"").expect("a scorecard");
    assert!(cards < html.find("data-chart").unwrap(), "cards before the charts");
    assert_eq!(html.matches("<div class=\"card-title\">").count(), 3, "one card per run");
    assert!(!html.contains("id=\"verdict\""), "one side has nothing to judge against");
}

#[test]
fn environments_are_ranked_and_their_history_shows_a_regression() {
    use envbench_report::{environment_summaries, histories, ranks};
    use envbench_verdict::environment_identity;
    let path = scratch("ranks");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let mut third = virtual_machine();
    third.cpu.threads = Some(4);
    third.memory.total_bytes = Some(8 << 30);
    let disk = |factor: f64| {
        vec![
            record("disk", "SEQ1M Q8T1 read", json!({"queue_depth": 8}), "throughput", "MB/s", six(3000.0 * factor)),
            record("disk", "RND4K Q1T1 read", json!({"queue_depth": 1}), "throughput", "MB/s", six(60.0 * factor)),
        ]
    };
    // The physical machine is fastest; its third run regressed to half speed. The small VM is slowest.
    for factor in [1.0, 1.0, 0.5] {
        store_run(&mut store, "disk", "metal", &physical(), &disk(factor));
    }
    store_run(&mut store, "disk", "vm", &virtual_machine(), &disk(0.4));
    store_run(&mut store, "disk", "small", &third, &disk(0.2));

    let summaries = store.list_runs(&Default::default()).unwrap();
    let environments = store.environments().unwrap();
    let (fingerprints, tallies) = store.fingerprint_tallies().unwrap();
    let listed = environment_summaries(&fingerprints, &tallies);
    assert_eq!(listed.len(), 3, "{listed:?}");
    let metal = environment_identity(&physical()).id;
    assert_eq!(listed.iter().find(|e| e.identity.id == metal).unwrap().runs, 3);
    assert!(environment_identity(&third).name.contains("x4 CPUs"), "{}", environment_identity(&third).name);

    let mut by_environment: std::collections::BTreeMap<String, Vec<_>> = Default::default();
    for summary in summaries.iter().rev() {
        let id = environment_identity(environments.of(&summary.uuid).unwrap()).id;
        by_environment.entry(id).or_default().push(store.load_run(&summary.uuid).unwrap());
    }
    let ranked = ranks(&metal, &by_environment, &WORKLOADS);
    assert_eq!(ranked.len(), 1);
    assert_eq!((ranked[0].position, ranked[0].of, ranked[0].percentile), (1, 3, 100.0), "{ranked:?}");
    let small = environment_identity(&third).id;
    let last = &ranks(&small, &by_environment, &WORKLOADS)[0];
    assert_eq!((last.position, last.percentile), (3, 0.0));
    // A rank names its neighbours and the margin to each: the first has none above, the last none below, and the
    // small VM is half the speed of the VM just above it.
    let vm = environment_identity(&virtual_machine()).id;
    assert!(
        ranked[0].above.is_none() && ranked[0].below.as_ref().is_some_and(|b| b.environment == vm && b.factor > 1.0)
    );
    let above = last.above.as_ref().expect("a neighbour above the last");
    assert!(last.below.is_none() && above.environment == vm, "{last:?}");
    assert!((above.factor - 0.5).abs() < 1e-6, "half the VM's speed: {above:?}");

    let history = histories(&by_environment[&metal], &WORKLOADS);
    assert_eq!(history.len(), 1);
    let overall = &history[0].chart.series[0];
    assert_eq!(overall.points.len(), 3, "one point per run");
    assert!((overall.points[2].1 - 0.5).abs() < 1e-9, "the regression shows: {:?}", overall.points);
    // One run is no history: no chart of one point (issue #70, item 7).
    assert!(histories(&by_environment[&metal][..1], &WORKLOADS).is_empty());
}

#[test]
fn each_side_is_explained_by_its_own_differences_from_the_baseline() {
    let mut store = known_store("three-sides");
    let twin = |factor: f64| {
        vec![record(
            "disk",
            "SEQ1M Q8T1 read",
            json!({"threads": 1, "queue_depth": 8}),
            "throughput",
            "MB/s",
            six(3000.0 * factor),
        )]
    };
    // C runs on the baseline's own machine and is faster: nothing in the fingerprints explains it.
    store_run(&mut store, "disk", "metal-again", &physical(), &twin(1.3));
    let names = ["metal", "vm", "metal-again"].map(String::from);
    let sides = resolve_sides(&store, &names).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    assert_eq!(comparison.verdicts.len(), 2);
    let b = comparison.verdicts[0].workloads.iter().find(|w| w.workload == "disk").unwrap().explanations.join(" ");
    assert!(b.contains("Hypervisor: none (bare metal) on A, kvm on B."), "{b}");
    let c = &comparison.verdicts[1].workloads.iter().find(|w| w.workload == "disk").unwrap();
    assert_eq!(c.better, 1);
    let c = c.explanations.join(" ");
    assert!(!c.contains("Hypervisor") && !c.contains("kvm"), "C shares A's machine: {c}");
    assert!(c.starts_with("Nothing envbench fingerprints differs"), "{c}");
}

/// Five samples a side around `value` with a 1% spread.
fn five(value: f64) -> Vec<f64> {
    [1.0, 1.01, 0.99, 1.005, 0.995].iter().map(|f| value * f).collect()
}

#[test]
fn three_samples_a_side_decide_and_intervals_read_like_the_headline() {
    // The cube: one CPU against two, --repeat 3. Three samples a side used to be "too few samples to test"
    // (Mann-Whitney's smallest p with 3 + 3 is 0.1); Welch's t-test on logarithms decides.
    let path = scratch("three-samples");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let cube = |factor: f64| {
        ["4 aggregation", "5 calc", "6 retrievals"]
            .iter()
            .map(|step| {
                let samples = [1.0, 1.01, 0.99].iter().map(|f| 8.0 * factor * f).collect();
                record("cube", step, json!({"scale": 0.1, "calc_threads": 2}), "elapsed", "s", samples)
            })
            .collect::<Vec<_>>()
    };
    store_run(&mut store, "cube", "two-cpus", &physical(), &cube(1.0));
    store_run(&mut store, "cube", "one-cpu", &physical(), &cube(1.39));
    let sides = resolve_sides(&store, &["two-cpus".to_string(), "one-cpu".to_string()]).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    let cube = &comparison.verdicts[0].workloads[0];
    assert_eq!((cube.worse, cube.cannot_tell, cube.decision), (3, 0, envbench_verdict::Decision::Slower));
    assert!(cube.summary.starts_with("OLAP cube 1.39x slower on B"), "{}", cube.summary);
    let row = &comparison.rows[0];
    let change = row.cells[1].as_ref().unwrap().change.as_ref().unwrap();
    assert_eq!(change.method, Some(envbench_core::stats::PValueMethod::WelchLog));
    // The interval is in the headline's words: slower, as factors above 1.
    let text = render(&comparison, Format::Text);
    let line = text.lines().find(|l| l.contains("OLAP cube") && l.contains("interval")).unwrap();
    let words = line.split("95% interval ").nth(1).unwrap();
    let low: f64 = words.split('x').next().unwrap().parse().unwrap();
    assert!(words.contains("x slower;") && low > 1.3 && low < 1.39, "{line}");
    // One run a side: the verdict says once that its interval cannot show how much two runs differ, and what
    // settles it.
    assert_eq!(cube.runs, [1, 1]);
    let caution = comparison.verdicts[0].caution.as_deref().unwrap_or_default();
    assert!(caution.starts_with("A and B are one run each:") && caution.contains("Run each again"), "{caution}");
    assert_eq!(text.matches("Note: A and B are one run each").count(), 1, "{text}");
}

/// Three runs under each label: `compare` pools them, and the interval resamples whole runs. Runs that agree decide
/// without the one-run caution; a baseline whose runs differ by 30% cannot make a 20% change certain, and says so:
/// "cannot tell", naming the runs that disagree, never "about the same" (issue #55).
#[test]
fn several_runs_a_side_are_weighed_run_by_run() {
    let path = scratch("several-runs");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let cube = |factor: f64| {
        let samples = [1.0, 1.01, 0.99].iter().map(|f| 8.0 * factor * f).collect();
        vec![record("cube", "4 aggregation", json!({"scale": 0.1, "calc_threads": 2}), "elapsed", "s", samples)]
    };
    for (label, factors) in [
        ("steady", [1.0, 1.0, 1.0]),
        ("slower", [1.39, 1.39, 1.39]),
        ("uneven", [1.0, 1.0, 1.3]),
        ("a-fifth-slower", [1.2, 1.2, 1.2]),
    ] {
        for factor in factors {
            store_run(&mut store, "cube", label, &physical(), &cube(factor));
        }
    }
    let verdict = |a: &str, b: &str| {
        let sides = resolve_sides(&store, &[a.to_string(), b.to_string()]).unwrap();
        compare(&sides, &WORKLOADS).verdicts.remove(0)
    };
    let steady = verdict("steady", "slower");
    assert_eq!(steady.caution, None, "three runs a side need no caution");
    let steady = &steady.workloads[0];
    assert_eq!((steady.decision, steady.runs), (envbench_verdict::Decision::Slower, [3, 3]));
    assert_eq!(steady.interval_basis, Some(envbench_verdict::IntervalBasis::Runs), "three runs a side are the samples");
    let uneven = verdict("uneven", "a-fifth-slower").workloads.remove(0);
    assert_eq!(uneven.decision, envbench_verdict::Decision::CannotTell, "{uneven:?}");
    assert!(uneven.reason.as_deref().unwrap().starts_with("the runs of A disagree by 1.30x"), "{uneven:?}");
    assert!(uneven.advice.is_none(), "the advice for noise is the sides', said once: {uneven:?}");
    let (low, high) = uneven.interval.unwrap();
    assert!(low < 1.0 && high > 1.0, "one slow run in three keeps 1 inside: {low}..{high}");
}

#[test]
fn a_change_within_noise_is_not_called_and_spreads_are_not_speeds() {
    // A/A: the same environment twice, 3% apart with tight samples. The test is significant, yet two runs of one
    // environment differ by this much: about the same, never "3% slower".
    let path = scratch("within-noise");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let run = |factor: f64, cv: f64| {
        vec![
            record("disk", "RND4K Q1T1 read", json!({"queue_depth": 1}), "throughput", "MB/s", five(60.0 * factor)),
            record("ranread", "jobs 4", json!({"jobs": 4}), "job_cv", "%", five(cv)),
            record("ranread", "jobs 4", json!({"jobs": 4}), "iops", "IOPS", five(9000.0)),
        ]
    };
    store_run(&mut store, "disk", "first", &physical(), &run(1.0, 20.0));
    store_run(&mut store, "disk", "second", &physical(), &run(0.97, 0.13));
    let sides = resolve_sides(&store, &["first".to_string(), "second".to_string()]).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    let disk = comparison.verdicts[0].workloads.iter().find(|w| w.workload == "disk").unwrap();
    let row = comparison.rows.iter().find(|r| r.metric == "throughput").unwrap();
    let change = row.cells[1].as_ref().unwrap().change.as_ref().unwrap();
    assert!(change.p_value.unwrap() < 0.05, "the samples alone would call it");
    assert_eq!(change.significance, envbench_verdict::Significance::Negligible);
    assert_eq!((disk.better, disk.worse, disk.unchanged, disk.decision), (0, 0, 1, envbench_verdict::Decision::Same));
    assert!(disk.summary.starts_with("storage about the same (1.03x slower, within noise)"), "{}", disk.summary);

    // A coefficient of variation falls from 20% to 0.13%: "less variable", never "155x faster", and it has no
    // geometric mean of its own.
    let text = render(&comparison, Format::Text);
    let line = text.lines().find(|l| l.contains("job_cv")).unwrap();
    assert!(line.contains("x less variable") && !line.contains("faster"), "{line}");
    assert!(comparison.geomeans.iter().all(|g| g.metric != "job_cv"), "{:?}", comparison.geomeans);
    let ranread = comparison.verdicts[0].workloads.iter().find(|w| w.workload == "ranread").unwrap();
    assert_eq!(ranread.metrics, ["iops"], "the verdict is made of speeds, not spreads");
}

/// Two runs of the same machine, B pinned to one CPU and its memory capped: the environments differ (identity,
/// fields, differences), and the verdict of a CPU-governed workload says what held B back, in words.
#[test]
fn a_side_held_below_its_machine_says_so() {
    use envbench_core::fingerprint::{CgroupBytes, CpuQuota};
    let path = scratch("limits");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let mut free = physical();
    free.limits.affinity = Some("0-79".into());
    free.limits.affinity_cpus = Some(80);
    free.limits.cgroup = Some("/user.slice".into());
    free.limits.usable_cpus = Some(80);
    let mut pinned = free.clone();
    pinned.limits.affinity = Some("0".into());
    pinned.limits.affinity_cpus = Some(1);
    pinned.limits.usable_cpus = Some(1);
    pinned.limits.memory_max = Some(CgroupBytes { bytes: 2 << 30, cgroup: "/user.slice".into() });
    let tpch = |factor: f64| vec![record("tpch", "Q1", json!({"sf": 1}), "elapsed", "s", six(2.0 * factor))];
    store_run(&mut store, "tpch", "free", &free, &tpch(1.0));
    store_run(&mut store, "tpch", "pinned", &pinned, &tpch(8.0));

    let a = envbench_verdict::environment_identity(&free);
    let b = envbench_verdict::environment_identity(&pinned);
    assert!(b.name.contains("x80 CPUs (1 usable)") && !a.name.contains("usable"), "{} / {}", a.name, b.name);
    assert_ne!(a.id, b.id, "one CPU of eighty is another environment");

    let sides = resolve_sides(&store, &["free".to_string(), "pinned".to_string()]).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    let field = |name: &str| comparison.environment.iter().find(|f| f.name == name).unwrap();
    assert_eq!(field("Usable CPUs").values, ["80 of 80", "1 of 80 (affinity)"]);
    assert!(field("CPU affinity").differs && field("Memory limit").differs);
    let differences = comparison.differences.join("\n");
    assert!(differences.contains("B may use 1 of 80 CPUs (affinity)"), "{differences}");
    assert!(differences.contains("B's memory is capped at 2 GiB (cgroup memory.max)"), "{differences}");
    let reasons = comparison.verdicts[0].workloads[0].explanations.join(" ");
    assert!(reasons.contains("B may use 1 of 80 CPUs (affinity)."), "{reasons}");
    assert!(reasons.contains("B's memory is capped at 2 GiB"), "{reasons}");
    assert!(!reasons.contains("Nothing envbench fingerprints differs"), "{reasons}");
    let text = render(&comparison, Format::Text);
    assert!(text.contains("B may use 1 of 80 CPUs (affinity)"), "{text}");

    // A quota shows as a share of CPUs.
    let mut quota = free.clone();
    quota.limits.cpu_max = Some(CpuQuota { quota_us: 150_000, period_us: 100_000, cgroup: "/x".into() });
    let sentences: Vec<String> = quota.limits.sentences("C", quota.cpu.threads).into_iter().map(|(_, s)| s).collect();
    assert_eq!(sentences, ["C is held to 1.5 CPUs (cgroup cpu.max)"]);
}

/// Storage figures from RAM: tmpfs environments rank only among each other on the storage workload, real storage
/// only among real storage, and compare says a tmpfs side's figures are not storage.
#[test]
fn memory_backed_environments_rank_apart_and_are_named() {
    use envbench_report::ranks;
    use envbench_verdict::environment_identity;
    let path = scratch("memory-ranks");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let disk = |factor: f64| {
        vec![
            record("disk", "SEQ1M Q8T1 read", json!({"queue_depth": 8}), "throughput", "MB/s", six(3000.0 * factor)),
            record("disk", "RND4K Q1T1 read", json!({"queue_depth": 1}), "throughput", "MB/s", six(60.0 * factor)),
        ]
    };
    let tmpfs = |gib: u64| {
        let mut fp = virtual_machine();
        fp.memory.total_bytes = Some(gib << 30);
        let storage = fp.storage.as_mut().unwrap();
        storage.filesystem = "tmpfs".into();
        storage.source = "tmpfs".into();
        storage.devices.clear();
        storage.memory_backed = Some("tmpfs: the data directory is in RAM".into());
        fp
    };
    let mut small = virtual_machine();
    small.cpu.threads = Some(4);
    store_run(&mut store, "disk", "metal", &physical(), &disk(1.0));
    store_run(&mut store, "disk", "vm", &virtual_machine(), &disk(0.4));
    store_run(&mut store, "disk", "small", &small, &disk(0.2));
    for (gib, factor) in [(24, 10.0), (32, 12.0), (64, 14.0)] {
        store_run(&mut store, "disk", &format!("shm{gib}"), &tmpfs(gib), &disk(factor));
    }
    assert!(environment_identity(&tmpfs(24)).name.ends_with("tmpfs on tmpfs (memory-backed)"));

    let summaries = store.list_runs(&Default::default()).unwrap();
    let environments = store.environments().unwrap();
    let mut by_environment: std::collections::BTreeMap<String, Vec<_>> = Default::default();
    for summary in summaries.iter().rev() {
        let id = environment_identity(environments.of(&summary.uuid).unwrap()).id;
        by_environment.entry(id).or_default().push(store.load_run(&summary.uuid).unwrap());
    }
    assert_eq!(by_environment.len(), 6);
    // The physical machine is the fastest real storage, not 4th behind RAM.
    let metal = &ranks(&environment_identity(&physical()).id, &by_environment, &WORKLOADS)[0];
    assert_eq!((metal.position, metal.of, metal.percentile), (1, 3, 100.0), "{metal:?}");
    assert_eq!(metal.among.as_deref(), Some("real storage only (3 memory-backed left out)"));
    // The slowest tmpfs is last among the tmpfs environments.
    let shm = &ranks(&environment_identity(&tmpfs(24)).id, &by_environment, &WORKLOADS)[0];
    assert_eq!((shm.position, shm.of), (3, 3), "{shm:?}");
    assert_eq!(shm.among.as_deref(), Some("memory-backed storage only"));

    let sides = resolve_sides(&store, &["metal".to_string(), "shm24".to_string()]).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    let sentence = "B's data directory is on tmpfs (RAM): its storage figures are not storage";
    assert!(comparison.differences.iter().any(|d| d == sentence), "{:?}", comparison.differences);
    let field = comparison.environment.iter().find(|f| f.name == "Memory-backed storage").unwrap();
    assert_eq!(field.values, ["no", "tmpfs: the data directory is in RAM"]);
    let reasons = comparison.verdicts[0].workloads[0].explanations.join(" ");
    assert!(reasons.contains(&format!("{sentence}.")), "{reasons}");
}

#[test]
fn the_verdict_says_once_that_a_side_was_disturbed() {
    let path = scratch("disturbed");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let disk = |factor: f64, flags: &[&str]| {
        let mut result =
            record("disk", "RND4K Q1T1 read", json!({"queue_depth": 1}), "throughput", "MB/s", five(60.0 * factor));
        result.flags = flags.iter().map(|f| f.to_string()).collect();
        vec![result]
    };
    store_run(&mut store, "disk", "quiet", &physical(), &disk(1.0, &[]));
    store_run(&mut store, "disk", "busy", &physical(), &disk(0.25, &["disturbed"]));
    let sides = resolve_sides(&store, &["quiet".to_string(), "busy".to_string()]).unwrap();
    let side = &compare(&sides, &WORKLOADS).verdicts[0];
    let verdict = &side.workloads[0];
    assert!(verdict.summary.starts_with("storage 4.00x slower on B"), "{}", verdict.summary);
    // Said once for the side, not under each workload (issue #55).
    assert_eq!(side.disturbance.len(), 1, "{:?}", side.disturbance);
    assert!(
        side.disturbance[0].starts_with("B was disturbed in 1 of 1 run: other work competed"),
        "{:?}",
        side.disturbance
    );
    assert!(!verdict.explanations.iter().any(|e| e.contains("disturbed")), "{:?}", verdict.explanations);
}

/// With a price on both sides, a workload quoted per unit of work says what one unit costs on each: TPC-H per
/// QphH@Size (the price of an hour over the queries an hour does), ranread per 1,000 IOPS.
#[test]
fn a_priced_verdict_says_what_a_unit_of_work_costs_on_each_side() {
    let path = scratch("unit-cost");
    let mut store = SqliteStore::open(&path, true).unwrap();
    for (label, fp, speed, price) in [("metal", physical(), 2.0, "2"), ("vm", virtual_machine(), 1.0, "0.5")] {
        let request = RunRequest {
            workload: "tpch".into(),
            label: Some(label.into()),
            tags: [("price_per_hour".to_string(), price.to_string())].into(),
            command_line: "envbench tpch".into(),
            suite_id: None,
        };
        let uuid = store.begin_run(&request, &fp).unwrap();
        let mut qphh = record("tpch", "qphh", json!({"sf": 1}), "qphh_at_size", "queries/h", vec![2000.0 * speed]);
        qphh.direction = envbench_core::model::Direction::HigherIsBetter;
        let results = vec![record("tpch", "Q1", json!({"sf": 1}), "elapsed", "s", six(2.0 / speed)), qphh];
        store.add_results(&uuid, &results).unwrap();
        store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    }
    let sides = resolve_sides(&store, &["metal".to_string(), "vm".to_string()]).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    let verdict = &comparison.verdicts[0].workloads[0];
    let unit = verdict.unit_cost.as_ref().expect("a unit cost with prices on both sides");
    assert_eq!(unit.per, "QphH@Size");
    assert!((unit.costs[0] - 2.0 / 4000.0).abs() < 1e-12, "{unit:?}");
    assert!((unit.costs[1] - 0.5 / 2000.0).abs() < 1e-12, "{unit:?}");
    let text = render(&comparison, Format::Text);
    assert!(text.contains("Per QphH@Size: 0.0005 on A and 0.00025 on B."), "{text}");
}

/// Runs are counted as the user made them: a suite run is one run of each of its workloads, so two suites of two
/// workloads a side are "2 runs (4 workload runs)", never "4 runs", and a disturbed workload run makes its suite one
/// disturbed run.
#[test]
fn runs_are_counted_as_the_user_made_them() {
    let path = scratch("counting");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let (metal, vm) = (physical(), virtual_machine());
    for (label, fingerprint, suites, speed) in [("metal", &metal, ["s1", "s2"], 1.0), ("vm", &vm, ["s3", "s4"], 0.5)] {
        for (index, suite) in suites.iter().enumerate() {
            for workload in ["cube", "tpch"] {
                let request = RunRequest {
                    workload: workload.into(),
                    label: Some(label.into()),
                    tags: [("suite".to_string(), suite.to_string())].into(),
                    command_line: format!("envbench {workload}"),
                    suite_id: None,
                };
                let uuid = store.begin_run(&request, fingerprint).unwrap();
                let mut results =
                    if workload == "cube" { common::cube_results(speed) } else { common::tpch_results(speed) };
                // One workload run of vm's first suite was disturbed.
                if label == "vm" && index == 0 && workload == "cube" {
                    for result in &mut results {
                        result.flags.push(envbench_core::sampler::DISTURBED_FLAG.into());
                    }
                }
                store.add_results(&uuid, &results).unwrap();
                store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
            }
        }
    }
    let sides = resolve_sides(&store, &["metal".to_string(), "vm".to_string()]).unwrap();
    let comparison = compare(&sides, &WORKLOADS);
    let text = render(&comparison, Format::Text);
    assert!(text.contains("metal — 2 runs (4 workload runs): "), "{text}");
    assert!(text.contains("vm — 2 runs (4 workload runs): "), "{text}");
    assert!(text.contains("B was disturbed in 1 of 2 runs (1 of 4 workload runs)"), "{text}");
    assert!(!text.contains("4 runs"), "{text}");
}

/// Issue #70, item 3: the advice for noise is said once under a side's verdict, however many workloads cannot tell;
/// a side pinned to fewer CPUs is not told to pin; and an interval wholly on one side of "the same" gives the
/// estimate and the direction, "but maybe within noise".
#[test]
fn the_advice_is_said_once_a_pinned_side_is_not_told_to_pin_and_a_one_sided_interval_shows_its_estimate() {
    let path = scratch("advice-once");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let cube = |factor: f64| {
        let samples = [1.0, 1.01, 0.99].iter().map(|f| 8.0 * factor * f).collect();
        vec![record("cube", "4 aggregation", json!({"scale": 0.1, "calc_threads": 2}), "elapsed", "s", samples)]
    };
    let disk = |factor: f64| {
        let samples = [1.0, 1.01, 0.99].iter().map(|f| 400.0 / factor * f).collect();
        vec![record(
            "disk",
            "RND4K Q32T1 read",
            json!({"threads": 1, "queue_depth": 32}),
            "throughput",
            "MB/s",
            samples,
        )]
    };
    let mut pinned = physical();
    pinned.limits.affinity = Some("0".into());
    pinned.limits.affinity_cpus = Some(1);
    // B's cube runs spread from 1.25x to 1.45x slower: the interval of three runs lies on the slower side and reaches
    // inside the cube's 15% margin. Its disk runs straddle A's: an interval across 1.
    let (cube_factors, disk_factors) = ([1.25, 1.3, 1.45], [0.75, 1.0, 1.35]);
    for (label, spread, fp) in [("base", false, physical()), ("spread", true, physical()), ("pinned", true, pinned)] {
        for i in 0..3 {
            let (c, d) = if spread { (cube_factors[i], disk_factors[i]) } else { (1.0, 1.0) };
            store_run(&mut store, "cube", label, &fp, &cube(c));
            store_run(&mut store, "disk", label, &fp, &disk(d));
        }
    }
    let compared = |b: &str| {
        let sides = resolve_sides(&store, &["base".to_string(), b.to_string()]).unwrap();
        compare(&sides, &WORKLOADS)
    };
    let comparison = compared("spread");
    let side = &comparison.verdicts[0];
    let decisions: Vec<_> = side.workloads.iter().map(|w| (w.workload.as_str(), w.decision, w.interval)).collect();
    assert!(
        decisions.len() == 2 && decisions.iter().all(|d| d.1 == envbench_verdict::Decision::CannotTell),
        "{decisions:?}"
    );
    let text = render(&comparison, Format::Text);
    assert_eq!(text.matches("To tell: ").count(), 1, "{text}");
    assert_eq!(text.matches("when the host is quiet").count(), 1, "{text}");
    assert!(text.contains("taskset -c"), "{text}");
    let cube = side.workloads.iter().find(|w| w.workload == "cube").unwrap();
    let (low, high) = cube.interval.unwrap();
    assert!(high < 1.0, "wholly slower: {low}..{high}");
    let words = cube.change_words();
    assert!(words.starts_with("cannot tell, probably 1.3"), "{words}");
    assert!(words.contains("x slower, but maybe within noise: the runs of B disagree by"), "{words}");
    assert!(!words.contains("host is quiet"), "{words}");

    let comparison = compared("pinned");
    let text = render(&comparison, Format::Text);
    assert_eq!(text.matches("To tell: ").count(), 1, "{text}");
    assert!(!text.contains("taskset") && text.contains("B is pinned to fewer CPUs on purpose"), "{text}");
    let html = render(&comparison, Format::Markdown);
    assert_eq!(html.matches("**To tell:**").count(), 1, "{html}");
}

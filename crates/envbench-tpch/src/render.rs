//! A tpch run for people: the per-query table, the stream geomeans, the failures, the TPC-H-derived metrics and the
//! storage under the watched directory during each phase; a thread sweep's per-count times and speedup curve; and how
//! streams and query executions are named in progress lines.

use crate::queries::QUERY_COUNT;
use crate::results::TpchOutcome;
use crate::results::{ExecutionStatus, Phase, StreamOutcome, ThreadPoint, thread_test_id};
use crate::run::QueryEvent;
use crate::scale::format_scale_factor;
use envbench_core::sampler::{DiskFigures, SamplerSeries};
use envbench_core::stats::Summary;
use envbench_core::text::{Align, Table, heading, number, plural};

/// How a stream is named: the power test, a virtual user, or the throughput test's refresh stream (numbered after
/// the users).
pub(crate) fn stream_name(phase: Phase, stream: usize, users: usize) -> String {
    match phase {
        Phase::Power => "power".to_string(),
        Phase::Throughput if stream > users => "refresh".to_string(),
        Phase::Throughput => format!("user {stream}"),
    }
}

pub(crate) fn status_text(status: &ExecutionStatus, event: &QueryEvent) -> String {
    match status {
        ExecutionStatus::Ok => format!("{:.3} s", event.elapsed_seconds),
        other => failure_text(other),
    }
}

fn failure_text(status: &ExecutionStatus) -> String {
    match status {
        ExecutionStatus::Ok => "ok".into(),
        ExecutionStatus::WrongAnswer(why) => format!("WRONG ANSWER: {why}"),
        ExecutionStatus::Failed(failure) => format!("FAILED: {failure}"),
    }
}

/// One stream's executions of a query (`Q7`) or refresh function (`RF1`): seconds, rows, whether it worked.
fn executions(stream: &StreamOutcome, what: &str) -> Vec<(f64, Option<usize>, bool)> {
    if let Some(query) = what.strip_prefix('Q').and_then(|q| q.parse::<u8>().ok()) {
        stream
            .queries
            .iter()
            .filter(|e| e.query == query)
            .map(|e| (e.elapsed_seconds, Some(e.rows), e.status.is_ok()))
            .collect()
    } else {
        stream
            .refreshes
            .iter()
            .filter(|r| r.function == what)
            .map(|r| (r.elapsed_seconds, None, r.status.is_ok()))
            .collect()
    }
}

/// The per-query table, stream geomeans, failures, the metrics and the storage view.
pub(crate) fn render(outcome: &TpchOutcome, series: &SamplerSeries, cache: &str) -> String {
    use Align::{Left, Right};
    let mut out = String::new();
    let power = outcome.streams.iter().find(|s| s.phase == Phase::Power);
    let throughput: Vec<_> = outcome.streams.iter().filter(|s| s.phase == Phase::Throughput).collect();

    let mut headers = vec!["QUERY"];
    if power.is_some() {
        headers.push("POWER s");
    }
    if !throughput.is_empty() {
        headers.extend(["USERS MIN s", "MEDIAN s", "MAX s"]);
    }
    headers.extend(["ROWS", "FAILED"]);
    let mut aligns = vec![Right; headers.len()];
    aligns[0] = Left;
    let mut table = Table::new(&headers, &aligns);
    let mut whats: Vec<String> = (1..=QUERY_COUNT).map(|q| format!("Q{q}")).collect();
    if power.is_some_and(|p| !p.refreshes.is_empty()) {
        whats.extend(["RF1".to_string(), "RF2".to_string()]);
    }
    for what in &whats {
        let mut all = Vec::new();
        let mut row = vec![what.clone()];
        if let Some(power) = power {
            let runs = executions(power, what);
            row.push(match runs.first() {
                Some((seconds, _, true)) => format!("{seconds:.3}"),
                Some((_, _, false)) => "failed".into(),
                None => "-".into(),
            });
            all.extend(runs);
        }
        if !throughput.is_empty() {
            let runs: Vec<_> = throughput.iter().flat_map(|s| executions(s, what)).collect();
            let ok: Vec<f64> = runs.iter().filter(|r| r.2).map(|r| r.0).collect();
            match Summary::of(&ok) {
                Some(s) => row.extend([format!("{:.3}", s.min), format!("{:.3}", s.median), format!("{:.3}", s.max)]),
                None => row.extend(["-".into(), "-".into(), "-".into()]),
            }
            all.extend(runs);
        }
        if all.is_empty() {
            continue;
        }
        row.push(all.iter().find_map(|r| r.1).map(|rows| rows.to_string()).unwrap_or_default());
        let failed = all.iter().filter(|r| !r.2).count();
        row.push(if failed == 0 { String::new() } else { failed.to_string() });
        table.row(row);
    }
    out.push_str(&heading(&format!(
        "TPC-H-derived queries, SF {} on {}",
        format_scale_factor(outcome.scale_factor),
        outcome.target.as_str()
    )));
    out.push('\n');
    out.push_str(&table.render());

    let mut streams = Table::new(&["STREAM", "QUERIES", "GEOMEAN s", "ELAPSED s"], &[Left, Right, Right, Right]);
    for stream in &outcome.streams {
        let (ok, all) = if stream.queries.is_empty() {
            (stream.refreshes.iter().filter(|r| r.status.is_ok()).count(), stream.refreshes.len())
        } else {
            (stream.queries.iter().filter(|q| q.status.is_ok()).count(), stream.queries.len())
        };
        streams.row(vec![
            stream_name(stream.phase, stream.stream, outcome.users),
            format!("{ok}/{all}{}", if stream.queries.is_empty() { " RF" } else { "" }),
            stream.geomean_seconds.map(|g| format!("{g:.3}")).unwrap_or_else(|| "-".into()),
            format!("{:.2}", stream.elapsed_seconds),
        ]);
    }
    out.push('\n');
    out.push_str(&streams.render());

    if !outcome.failures.is_empty() {
        out.push('\n');
        out.push_str(&heading(&format!("{} failed or wrong", outcome.failures.len())));
        out.push('\n');
        for failure in &outcome.failures {
            let stream = match failure.phase {
                Phase::Power => "power test".to_string(),
                Phase::Throughput if failure.stream > outcome.users => "refresh stream".to_string(),
                Phase::Throughput => format!("user {} set {}", failure.stream, failure.set + 1),
            };
            out.push_str(&format!("  {stream}, {}: {}\n", failure.what, failure_text(&failure.status)));
        }
    }

    let metrics = &outcome.metrics;
    out.push('\n');
    out.push_str(&heading("TPC-H-derived metrics (not audited; not comparable with published TPC-H results)"));
    out.push('\n');
    let figure = |value: Option<f64>| value.map(number).unwrap_or_else(|| "not computed".into());
    if power.is_some() {
        out.push_str(&format!(
            "  Power@Size       {:>12}   ({} timed intervals)\n",
            figure(metrics.power_at_size),
            metrics.power_intervals
        ));
    }
    if let Some(ts) = metrics.throughput_seconds {
        out.push_str(&format!(
            "  Throughput@Size  {:>12}   ({} users x {} set{} in {ts:.1} s)\n",
            figure(metrics.throughput_at_size),
            outcome.users,
            outcome.sets,
            plural(outcome.sets)
        ));
    }
    if power.is_some() && metrics.throughput_seconds.is_some() {
        out.push_str(&format!("  QphH@Size        {:>12}\n", figure(metrics.qphh_at_size)));
    }
    for note in metrics.notes.iter().skip(1) {
        out.push_str(&format!("  - {note}\n"));
    }
    if let Some(reason) = &outcome.refresh_skipped
        && !metrics.notes.iter().any(|n| n.contains(reason.as_str()))
    {
        out.push_str(&format!("  - {reason}\n"));
    }

    out.push('\n');
    out.push_str(&storage_view(series, cache));
    if outcome.interrupted {
        out.push_str("\nInterrupted: the queries finished before Ctrl-C are kept.\n");
    }
    out
}

/// What the storage under the watched directory delivered during each phase, from the OS sampler.
fn storage_view(series: &SamplerSeries, cache: &str) -> String {
    use Align::{Left, Right};
    let mut table = Table::new(
        &["PHASE", "WALL s", "READ MB/s", "AVG READ KiB", "READ IOPS", "r_await ms", "WRITE MB/s", "CPU %", "IOWAIT %"],
        &[Left, Right, Right, Right, Right, Right, Right, Right, Right],
    );
    for step in &series.steps {
        let disk = step.disks.first();
        let cell = |f: &dyn Fn(&DiskFigures) -> f64| disk.map(|d| number(f(d))).unwrap_or_else(|| "-".into());
        table.row(vec![
            step.step.clone(),
            format!("{:.1}", (step.end_ms.saturating_sub(step.start_ms)) as f64 / 1e3),
            cell(&|d| d.read_mb_per_s),
            cell(&|d| d.read_request_kib),
            cell(&|d| d.reads_per_s),
            cell(&|d| d.read_await_ms),
            cell(&|d| d.write_mb_per_s),
            format!("{:.0}", step.cpu.user_percent + step.cpu.system_percent + step.cpu.nice_percent),
            format!("{:.1}", step.cpu.iowait_percent),
        ]);
    }
    let device = series.devices.first().map(String::as_str).unwrap_or("no device");
    let mut out = heading(&format!("Storage during each phase ({device}; page cache {cache})"));
    out.push('\n');
    out.push_str(&table.render());
    if cache == "warm" {
        out.push_str(
            "With warm caches the queries read mostly from memory; --cold (as root) drops the page cache so they \
             read from storage.\n",
        );
    }
    out
}

/// A thread sweep for people: each query's time at each count, then the speedup curve and parallel efficiency.
pub(crate) fn render_sweep(points: &[ThreadPoint], series: &SamplerSeries, cache: &str) -> String {
    use Align::{Left, Right};
    let (Some(first), Some(last)) = (points.first(), points.last()) else { return String::new() };
    let mut out = heading(&format!(
        "TPC-H-derived power test at {} threads, SF {} on {}",
        points.iter().map(|p| p.threads.to_string()).collect::<Vec<_>>().join(", "),
        format_scale_factor(first.outcome.scale_factor),
        first.outcome.target.as_str()
    ));
    out.push('\n');
    let mut headers: Vec<String> = vec!["QUERY".into()];
    headers.extend(points.iter().map(|p| format!("{} s", thread_test_id(p.threads))));
    headers.push(format!("SPEEDUP {}->{}", first.threads, last.threads));
    let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
    let mut aligns = vec![Right; headers.len()];
    aligns[0] = Left;
    let mut table = Table::new(&header_refs, &aligns);
    let seconds = |point: &ThreadPoint, query: u8| {
        let power = point.outcome.streams.iter().find(|s| s.phase == Phase::Power)?;
        power.queries.iter().find(|q| q.query == query && q.status.is_ok()).map(|q| q.elapsed_seconds)
    };
    for query in 1..=QUERY_COUNT {
        let mut row = vec![format!("Q{query}")];
        row.extend(points.iter().map(|p| seconds(p, query).map_or("-".into(), |s| format!("{s:.3}"))));
        row.push(match (seconds(first, query), seconds(last, query)) {
            (Some(a), Some(b)) if b > 0.0 => format!("{:.2}x", a / b),
            _ => "-".into(),
        });
        table.row(row);
    }
    out.push_str(&table.render());
    out.push('\n');
    let mut curve = Table::new(
        &["THREADS", "GEOMEAN s", "SPEEDUP", "EFFICIENCY", "POWER@SIZE"],
        &[Right, Right, Right, Right, Right],
    );
    for point in points {
        curve.row(vec![
            point.threads.to_string(),
            point.geomean().map_or("-".into(), |g| format!("{g:.3}")),
            point.speedup_over(first).map_or("-".into(), |s| format!("{s:.2}x")),
            point.efficiency_over(first).map_or("-".into(), |e| format!("{e:.0}%")),
            point.outcome.metrics.power_at_size.map_or("-".into(), number),
        ]);
    }
    out.push_str(&curve.render());
    out.push_str(&format!(
        "Speedup: the {}-thread query geomean over each count's; efficiency: the speedup over the ratio of threads \
         (100%: twice the threads ran the queries twice as fast). Where efficiency falls, more cores help this \
         analytic workload little on this machine and storage.\n",
        first.threads
    ));
    let failures: usize = points.iter().map(|p| p.outcome.failures.len()).sum();
    if failures > 0 {
        out.push_str(&format!("{failures} queries failed or gave a wrong answer over the sweep.\n"));
    }
    out.push('\n');
    out.push_str(&storage_view(series, cache));
    out
}

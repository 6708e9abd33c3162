//! An htap run for people: the interference table and verdict, each query alone and beside the transactions, the
//! server's counters and the consistency checks.

use crate::document::HtapDocument;
use crate::streams;
use envbench_core::text::{Align, Table, heading, number};
use envbench_oltp::{Profile, StepFigures, schema::Shape, server_figures};

fn optional(value: Option<f64>, write: impl Fn(f64) -> String) -> String {
    value.map_or_else(|| "-".to_string(), write)
}

/// The run for people: the interference table, each query alone and beside the transactions, the checks.
pub fn render(d: &HtapDocument) -> String {
    let shape = Shape { scale: d.scale, partitions: d.partitions };
    let mut out = heading(&format!(
        "HTAP on {} ({}), {}, {} transactional users, mode {}",
        d.target,
        d.server_version,
        shape.describe(Profile::Tpcc),
        d.users,
        d.mode.name()
    ));
    out.push('\n');
    let headers =
        ["USERS", "STREAMS", "NOPM", "NOPM COST", "NO p95 ms", "NO p99 ms", "QUERIES/H", "SLOWDOWN", "TIMEOUTS"];
    let mut table = Table::new(&headers, &[Align::Right; 9]);
    let interference = d.interference();
    for step in &d.steps {
        let i = interference.iter().find(|i| step.users > 0 && i.streams == step.streams);
        table.row(vec![
            step.users.to_string(),
            step.streams.to_string(),
            optional(step.nopm(), number),
            optional(i.and_then(|i| i.nopm_cost_percent).filter(|_| step.streams > 0), |c| format!("{c:.1}%")),
            optional(step.new_order(|k| k.p95_ms), |v| format!("{v:.1}")),
            optional(step.new_order(|k| k.p99_ms), |v| format!("{v:.1}")),
            if step.streams > 0 { number(step.analytics.queries_per_hour) } else { "-".into() },
            optional(i.and_then(|i| i.analytics_slowdown), |s| format!("{s:.2}x")),
            if step.streams > 0 { step.analytics.timeouts.to_string() } else { "-".into() },
        ]);
    }
    out.push_str(&table.render());
    out.push_str(
        "NOPM COST: the share of the transactions' baseline (0 streams) the streams took; SLOWDOWN: queries per hour \
         of the streams alone over those beside the transactions.\n",
    );
    if let Some(verdict) = d.verdict() {
        out.push_str(&format!("Verdict: {verdict}\n"));
    }
    for step in d.steps.iter().filter(|s| s.streams > 0 && s.analytics.completed == 0 && s.analytics.unfinished > 0) {
        out.push_str(&format!(
            "No analytic query finished inside the {:.0} s window at {} users and {} streams ({} still running when \
             it closed): the queries take longer than the window; give a longer --duration.\n",
            step.analytics.measured_seconds, step.users, step.streams, step.analytics.unfinished
        ));
    }
    // Each query alone and beside the transactions, at the most streams that ran both ways.
    if let Some((mixed, alone)) = d
        .steps
        .iter()
        .filter(|s| s.users > 0 && s.streams > 0)
        .filter_map(|s| Some((s, d.step(0, s.streams)?)))
        .max_by_key(|(s, _)| s.streams)
    {
        out.push_str(&heading(&format!(
            "Queries at {} streams (median and p95 in ms), alone and beside {} transactional users",
            mixed.streams, mixed.users
        )));
        out.push('\n');
        let headers = ["QUERY", "ALONE", "ALONE p95", "MIXED", "MIXED p95", "SLOWDOWN", "RUNS", "TIMEOUTS"];
        let mut table = Table::new(&headers, &[Align::Right; 8]);
        for (a, m) in alone.analytics.queries.iter().zip(&mixed.analytics.queries) {
            let done = |q: &streams::QueryFigures| q.count > 0;
            table.row(vec![
                format!("Q{}", a.query),
                if done(a) { format!("{:.1}", a.median_ms) } else { "-".into() },
                if done(a) { format!("{:.1}", a.p95_ms) } else { "-".into() },
                if done(m) { format!("{:.1}", m.median_ms) } else { "-".into() },
                if done(m) { format!("{:.1}", m.p95_ms) } else { "-".into() },
                if done(a) && done(m) && a.median_ms > 0.0 {
                    format!("{:.2}x", m.median_ms / a.median_ms)
                } else {
                    "-".into()
                },
                format!("{}/{}", a.count, m.count),
                format!("{}/{}", a.timeouts, m.timeouts),
            ]);
        }
        out.push_str(&table.render());
    }
    let steps: Vec<(Vec<String>, String, &StepFigures)> = d
        .steps
        .iter()
        .filter_map(|s| {
            let oltp = s.oltp.as_ref()?;
            let words = format!("{} users and {} streams", s.users, s.streams);
            Some((vec![s.users.to_string(), s.streams.to_string()], words, oltp))
        })
        .collect();
    out.push_str(&server_figures(&["USERS", "STREAMS"], &steps));
    out.push_str(&envbench_oltp::consistency::render(&d.consistency));
    if d.interrupted {
        out.push_str("Interrupted: the steps above ran; the rest did not.\n");
    }
    out.push_str(
        "CH-benCHmark-derived (TPC-C's transactions, the 22 CH queries over the same live tables): not a TPC result.\n",
    );
    out
}

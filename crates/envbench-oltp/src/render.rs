//! An oltp run for people: the steps with the knee, each transaction's latencies, the server's counters and wait
//! events, the consistency checks and the pgbench cross-check; and a step's line of progress.

use crate::consistency;
use crate::document::{OltpDocument, invalid_steps};
use crate::figures::StepFigures;
use crate::profile::Profile;
use crate::schema::Shape;
use envbench_core::sampler::SamplerSeries;
use envbench_core::text::{Align, Table, heading, number};

/// What a step's clients were and how long they waited for their users' connections: the part of every response
/// time spent in the driver, not the server.
fn clients_line(users: u32, clients: &crate::figures::ClientsFigures) -> String {
    format!(
        "{users} users x {} clients = {} terminals over {users} connections: waited for a connection {:.2} ms on \
         average, p95 {:.2} ms, at most {:.2} ms{}",
        clients.per_user,
        u64::from(users) * u64::from(clients.per_user),
        clients.wait_mean_ms,
        clients.wait_p95_ms,
        clients.wait_max_ms,
        if clients.wait_p95_ms > 10.0 {
            " (the users are busy: raise --users and lower --clients-per-user so the wait measures the server)"
        } else {
            ""
        }
    )
}

/// The server's counters per second of each step's measured window, and the wait events sampled from its users'
/// sessions (PostgreSQL), each step named by its `labels` columns and, in words, for the wait events: empty when no
/// step has any.
pub fn server_figures(labels: &[&str], steps: &[(Vec<String>, String, &StepFigures)]) -> String {
    let mut out = String::new();
    let counters: std::collections::BTreeSet<&String> = steps.iter().flat_map(|(_, _, s)| s.server.keys()).collect();
    if !counters.is_empty() {
        out.push_str(&heading("Server counters per second of the measured window"));
        out.push('\n');
        let mut headers: Vec<String> = labels.iter().map(ToString::to_string).collect();
        headers.extend(counters.iter().map(|c| c.to_uppercase()));
        let header_refs: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut table = Table::new(&header_refs, &vec![Align::Right; headers.len()]);
        for (cells, _, step) in steps {
            let mut row = cells.clone();
            row.extend(
                counters
                    .iter()
                    .map(|c| step.server.get(*c).map_or("-".into(), |v| number(v / step.measured_seconds.max(1e-9)))),
            );
            table.row(row);
        }
        out.push_str(&table.render());
    }
    for (_, words, step) in steps {
        if let Some(note) = &step.server_note {
            out.push_str(&format!("At {words}, {note}\n"));
        }
    }
    for (_, words, step) in steps {
        if step.wait_events.is_empty() {
            continue;
        }
        let total: u64 = step.wait_events.values().sum();
        let mut events: Vec<(&String, &u64)> = step.wait_events.iter().collect();
        events.sort_by(|a, b| b.1.cmp(a.1));
        let top: Vec<String> = events
            .iter()
            .take(5)
            .map(|(event, n)| format!("{event} {:.0}%", **n as f64 * 100.0 / total as f64))
            .collect();
        out.push_str(&format!("Wait events at {words} (sampled): {}\n", top.join(", ")));
    }
    out
}

/// A step's line of progress.
pub fn step_line(profile: Profile, step: &StepFigures) -> String {
    let judged = step.kind(profile.judged_kind());
    let headline = match profile {
        Profile::Tpcc => format!("{:>9} NOPM, ", number(step.nopm.unwrap_or(0.0))),
        Profile::Tpcb => format!("{:>9} TPS, ", number(step.tpm / 60.0)),
    };
    let (at, latency) = match &step.open {
        Some(open) => (
            format!(" at {}/s", number(open.offered_tps)),
            format!(
                "response p95 {:.1} ms (service {:.1} ms), {} late, {} skipped",
                judged.map_or(0.0, |k| k.p95_ms),
                judged.and_then(|k| k.service.as_ref()).map_or(0.0, |s| s.p95_ms),
                open.late,
                open.skipped
            ),
        ),
        None => (String::new(), format!("p95 {:.1} ms", judged.map_or(0.0, |k| k.p95_ms))),
    };
    let mut line = format!(
        "  {:>4} users{at}: {headline}{:>9} TPM, {} {latency}, {} retries, {} failed",
        step.users,
        number(step.tpm),
        profile.judged_kind().name(),
        step.retries,
        step.failures
    );
    if let Some(why) = step.open.as_ref().and_then(|o| o.not_held(step.measured_seconds)) {
        line.push_str(&format!("\n        {why}"));
    }
    if !step.slo.is_empty() {
        line.push_str(&format!("\n        {}", slo_words(step)));
    }
    line + &step.clients.as_ref().map(|c| format!("\n        {}", clients_line(step.users, c))).unwrap_or_default()
}

/// How a step stood against its service level, in words.
fn slo_words(step: &StepFigures) -> String {
    let levels: Vec<String> = step
        .slo
        .iter()
        .map(|j| {
            let measured = j.measured_ms.map_or("none ended".to_string(), |ms| format!("{ms:.1} ms"));
            format!("{} {}{}", j.level.text(), measured, if j.met { "" } else { " MISSED" })
        })
        .collect();
    let held = step.open.as_ref().is_none_or(|o| o.held(step.measured_seconds));
    format!(
        "{} the SLO: {}{}",
        if step.within_slo() { "within" } else { "outside" },
        levels.join(", "),
        if held { "" } else { "; the rate was not held" }
    )
}

/// The open-loop steps: what the schedule sent into each measured window and what became of it.
fn open_loop_table(steps: &[StepFigures]) -> String {
    let open: Vec<&StepFigures> = steps.iter().filter(|s| s.open.is_some()).collect();
    if open.is_empty() {
        return String::new();
    }
    let mut out = heading("Open loop: the arrivals meant for each measured window");
    out.push('\n');
    let headers = [
        "STEP",
        "OFFERED/s",
        "ENDED/s",
        "HELD",
        "SCHEDULED",
        "LATE",
        "SKIPPED",
        "OVER LIMIT",
        "NEVER STARTED",
        "LAG MEAN ms",
        "LAG P99 ms",
        "LAG MAX ms",
        "SLO",
    ];
    let mut aligns = vec![Align::Right; headers.len()];
    aligns[0] = Align::Left;
    let mut table = Table::new(&headers, &aligns);
    for step in open {
        let o = step.open.as_ref().expect("an open-loop step");
        table.row(vec![
            step.test_id(),
            number(o.offered_tps),
            number(o.achieved_tps),
            if o.held(step.measured_seconds) { "yes" } else { "NO" }.into(),
            o.scheduled.to_string(),
            o.late.to_string(),
            o.skipped.to_string(),
            o.latency_limit_ms.map_or("-".into(), |_| o.over_limit.to_string()),
            o.unstarted.to_string(),
            format!("{:.2}", o.lag_mean_ms),
            format!("{:.2}", o.lag_p99_ms),
            format!("{:.2}", o.lag_max_ms),
            match (step.slo.is_empty(), step.within_slo()) {
                (true, _) => "-".into(),
                (false, true) => "within".into(),
                (false, false) => "MISSED".into(),
            },
        ]);
    }
    out.push_str(&table.render());
    out.push_str(
        "Response times run from each transaction's intended start, so the wait behind a stalled one is in them; \
         service times from when its session took it. LATE: started more than 1 ms after its intended time.\n",
    );
    out
}

/// Retries and failures by kind of error, for the steps that had any (as pgbench's --failures-detailed).
fn failures_table(steps: &[StepFigures]) -> String {
    let mut table = Table::new(
        &["STEP", "TRANSACTION", "RETRIED", "FAILED"],
        &[Align::Left, Align::Left, Align::Left, Align::Left],
    );
    let mut any = false;
    let words = |by: &std::collections::BTreeMap<String, u64>| {
        if by.is_empty() {
            "-".to_string()
        } else {
            by.iter().map(|(cause, n)| format!("{n} {cause}")).collect::<Vec<_>>().join(", ")
        }
    };
    for step in steps {
        for kind in step.kinds.iter().filter(|k| !k.retried_by.is_empty() || !k.failed_by.is_empty()) {
            any = true;
            table.row(vec![step.test_id(), kind.kind.name().into(), words(&kind.retried_by), words(&kind.failed_by)]);
        }
    }
    if !any {
        return String::new();
    }
    heading("Retries and failures by kind of error (measured window)") + "\n" + &table.render()
}

/// The run for people: the steps with the knee, every transaction's latencies, the server's counters, the checks
/// and the cross-check.
pub fn render(d: &OltpDocument, series: &SamplerSeries) -> String {
    let profile = d.profile;
    let mut out = heading(&format!(
        "OLTP {} on {} ({}), {}",
        profile.name(),
        d.target,
        d.server_version,
        Shape { scale: d.scale, partitions: d.partitions }.describe(profile)
    ));
    out.push('\n');
    if profile == Profile::Tpcc {
        out.push_str(&format!("Mode: {} — {}\n", d.mode.name(), d.mode.describe()));
        if let Some(mix) = d.mix {
            out.push_str(&format!("Mix: {} (chosen with --mix; TPC-C's is 45/43/4/4/4)\n", mix.text()));
        }
    }
    out.push_str(&d.drive.describe());
    let mut headers = vec!["USERS"];
    if profile == Profile::Tpcc {
        headers.push("NOPM");
    } else {
        headers.push("TPS");
    }
    headers.extend([
        "TPM",
        "SERVER TPM",
        "P95 ms",
        "RETRIES",
        "FAILED",
        "CLIENT CPU",
        "CPU us/tx",
        "DISK w/s",
        "w_await ms",
    ]);
    let mut table = Table::new(&headers, &vec![Align::Right; headers.len()]);
    for (index, step) in d.steps.iter().enumerate() {
        let disk = series.step(&step.test_id()).and_then(|s| s.disks.first());
        let rate = step.open.as_ref().map(|o| format!(" @{}/s", number(o.offered_tps))).unwrap_or_default();
        table.row(vec![
            format!("{}{}{rate}", if Some(index) == d.knee { "* " } else { "" }, step.users),
            number(step.throughput(profile)),
            number(step.tpm),
            step.server_tpm.map_or("-".into(), number),
            format!("{:.1}", step.judged_latency_ms(profile)),
            step.retries.to_string(),
            match step.failures {
                0 => "0".to_string(),
                n => format!("{n} ({:.1}%)", step.failed_share() * 100.0),
            },
            format!("{:.0}%", step.client_cpu_percent),
            format!("{:.0}", step.client_cpu_us_per_transaction),
            disk.map_or("-".into(), |d| number(d.writes_per_s)),
            disk.map_or("-".into(), |d| format!("{:.2}", d.write_await_ms)),
        ]);
    }
    out.push_str(&table.render());
    for reason in invalid_steps(d) {
        out.push_str(&format!("No measurement, left out of the knee: {reason}\n"));
    }
    let judged = format!("{} p95", profile.judged_kind().name());
    // A capacity run is judged by its service level (the line below), not by the closed loop's latency target.
    match d.knee_step().filter(|_| d.capacity.is_none()) {
        None if d.capacity.is_some() => {}
        Some(knee) => out.push_str(&format!(
            "Knee (*): {} users, {} {} at {:.1} ms {judged} — the highest within {} ms\n",
            knee.users,
            number(knee.throughput(profile)),
            profile.throughput_label(),
            knee.judged_latency_ms(profile),
            d.target_latency_ms
        )),
        None => out.push_str(&format!("Knee: no step kept the {judged} within {} ms\n", d.target_latency_ms)),
    }
    out.push_str(&format!("Stopped because {}.\n", d.stop_reason.describe()));
    if let Some(capacity) = &d.capacity {
        out.push_str(&format!("{}.\n", capacity.headline(profile, &d.steps)));
    }
    out.push_str(&open_loop_table(&d.steps));
    for step in &d.steps {
        if let Some(clients) = &step.clients {
            out.push_str(&format!("{}\n", clients_line(step.users, clients)));
        }
    }

    out.push_str(&heading("Transactions (measured window; latency in ms, retries included)"));
    out.push('\n');
    let open = d.steps.iter().any(|s| s.open.is_some());
    let mut headers = vec![
        "STEP",
        "TRANSACTION",
        "COUNT",
        "SHARE",
        "ROLLED BACK",
        "RETRIES",
        "FAILED",
        "MEAN",
        "P50",
        "P90",
        "P95",
        "P99",
        "P99.9",
        "MAX",
    ];
    if open {
        headers.extend(["SERVICE P95", "SERVICE P99"]);
    }
    let mut aligns = vec![Align::Right; headers.len()];
    aligns[1] = Align::Left;
    let mut table = Table::new(&headers, &aligns);
    for step in &d.steps {
        for kind in &step.kinds {
            let mut row = vec![
                step.test_id(),
                kind.kind.name().to_string(),
                kind.count.to_string(),
                format!("{:.1}%", kind.count as f64 * 100.0 / step.transactions.max(1) as f64),
                kind.rolled_back.to_string(),
                kind.retries.to_string(),
                kind.failures.to_string(),
                format!("{:.2}", kind.mean_ms),
                format!("{:.2}", kind.p50_ms),
                format!("{:.2}", kind.p90_ms),
                format!("{:.2}", kind.p95_ms),
                format!("{:.2}", kind.p99_ms),
                format!("{:.2}", kind.p999_ms),
                format!("{:.2}", kind.max_ms),
            ];
            if open {
                let service = |f: fn(&crate::figures::ServiceFigures) -> f64| {
                    kind.service.as_ref().map_or("-".into(), |s| format!("{:.2}", f(s)))
                };
                row.extend([service(|s| s.p95_ms), service(|s| s.p99_ms)]);
            }
            table.row(row);
        }
    }
    out.push_str(&table.render());
    out.push_str(&failures_table(&d.steps));

    let steps: Vec<(Vec<String>, String, &StepFigures)> =
        d.steps.iter().map(|s| (vec![s.test_id()], s.test_id(), s)).collect();
    out.push_str(&server_figures(&["STEP"], &steps));
    out.push_str(&consistency::render(&d.consistency));

    if !d.pgbench.is_empty() {
        out.push_str(&heading("Cross-check: pgbench against the same server and tables"));
        out.push('\n');
        let headers =
            ["CLIENTS", "ENVBENCH TPS", "PGBENCH TPS", "RATIO", "ENVBENCH P95 ms", "PGBENCH P95 ms", "PGBENCH P99 ms"];
        let mut table = Table::new(&headers, &vec![Align::Right; headers.len()]);
        for figures in &d.pgbench {
            let ours = d.steps.iter().find(|s| s.users == figures.clients);
            let our_tps = ours.map_or(0.0, |s| s.tpm / 60.0);
            table.row(vec![
                figures.clients.to_string(),
                number(our_tps),
                number(figures.tps),
                format!("{:.2}", our_tps / figures.tps.max(1e-9)),
                ours.map_or("-".into(), |s| format!("{:.2}", s.judged_latency_ms(profile))),
                format!("{:.2}", figures.p95_ms),
                format!("{:.2}", figures.p99_ms),
            ]);
        }
        out.push_str(&table.render());
        if let Some(version) = d.pgbench.first().map(|f| &f.version) {
            out.push_str(&format!("{version}, -M prepared, builtin tpcb-like, one thread per client\n"));
        }
    }
    if d.dialect == "sqlite" {
        out.push_str(
            "SQLite: embedded, WAL with synchronous=FULL; writers serialize, so more users add waiting, not work.\n",
        );
    }
    out.push_str(
        "NOPM counts new orders from the database over the measured window (as HammerDB does); TPM counts every \
         transaction the users ended. TPC-derived: not a TPC result.\n",
    );
    out
}

//! What a workload does in a fleet run (`envbench fleet`): one workload on many hosts at once, started together and
//! merged into one result.
//!
//! The coordinator plans the steps ([`FleetCoordinator::next_step`]), gives each agent its share of a step, and merges
//! the agents' reports into the fleet's figures; each agent prepares once ([`FleetAgent::prepare`]), runs its share
//! of every step when the coordinator releases it, and keeps its own run. How agents are started, how they meet and
//! how a step is released at one instant is `envbench-fleet`'s; what a step is and how its figures add up is the
//! workload's, here.

use crate::run::{Measured, RunContext, WorkloadError};
use crate::text::{Align, Table, heading, number};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// One step of a fleet run: its name (the merged test id and the sampler's step on every host) and each agent's
/// share of the work, in the agents' order (`Value::Null`: that agent sits the step out).
#[derive(Clone, Debug, PartialEq)]
pub struct FleetStep {
    pub name: String,
    pub assignments: Vec<Value>,
    /// How long the storage rests before the step (the suite's pause between tests); zero for none.
    pub pause: std::time::Duration,
}

/// What an agent measured in one step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepReport {
    /// The agent's throughput in the step, in the workload's unit ([`FleetWorkload::throughput_unit`]).
    pub throughput: f64,
    /// The workload's own figures, which the coordinator merges (exact latency histograms, counts).
    pub figures: Value,
}

/// An agent's report of a step, as the coordinator merges it.
pub struct AgentReport<'a> {
    pub agent: &'a str,
    pub assignment: &'a Value,
    pub report: &'a StepReport,
}

impl AgentReport<'_> {
    /// The workload's figures of the report, read back as the agent wrote them, or an error that names the agent and
    /// the step.
    pub fn figures<T: serde::de::DeserializeOwned>(&self, step: &FleetStep) -> Result<T, WorkloadError> {
        serde_json::from_value(self.report.figures.clone()).map_err(|e| {
            WorkloadError::failure(format!("{}: its report of {} cannot be read ({e})", self.agent, step.name))
        })
    }
}

/// Where an agent works: its name in the fleet and the subdirectory of its own that its files go in.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentPlace {
    pub name: String,
    /// A name unique to this agent of this fleet, for a directory under the workload's `--dir`.
    pub subdirectory: String,
}

/// A workload that runs on a fleet; registered by returning it from `Workload::fleet`.
pub trait FleetWorkload: Sync {
    /// The unit of a step's throughput, e.g. `IOPS`.
    fn throughput_unit(&self) -> &'static str;

    /// Check the workload's arguments and plan the coordinator's side. Nothing is created.
    fn coordinator(&self, matches: &clap::ArgMatches) -> Result<Box<dyn FleetCoordinator>, WorkloadError>;

    /// Check the same arguments and plan one agent's side. Nothing is created before [`FleetAgent::prepare`].
    fn agent(&self, matches: &clap::ArgMatches, place: &AgentPlace) -> Result<Box<dyn FleetAgent>, WorkloadError>;
}

/// The coordinator's side of a fleet run of a workload.
pub trait FleetCoordinator {
    /// The directory the workload's arguments name (on the coordinator's host, what its fingerprint describes).
    fn data_dir(&self) -> &Path;

    /// What the fleet will do, in one line.
    fn announce(&self, agents: usize) -> String;

    /// Build what every agent shares, once, before any agent starts (a database server's tables). Returns what was
    /// prepared, in a line; `None` when the workload shares nothing (each agent prepares its own).
    fn prepare(&mut self, _context: &RunContext<'_>) -> Result<Option<String>, WorkloadError> {
        Ok(None)
    }

    /// The next step for `agents` agents, from the merged steps so far; `None` when the run is done.
    fn next_step(&mut self, agents: usize) -> Option<FleetStep>;

    /// Get what the agents share ready for `step`, before it is released (OLTP settles its database, as it does
    /// before a single host's step). Nothing by default.
    fn before_step(&mut self, _step: &FleetStep, _context: &RunContext<'_>) -> Result<(), WorkloadError> {
        Ok(())
    }

    /// Merge the reports of a step (every agent that had a share). Returns a progress line.
    fn merge_step(&mut self, step: &FleetStep, reports: &[AgentReport<'_>]) -> Result<String, WorkloadError>;

    /// What the fleet measured, from the merged steps (stored as a run of the workload, like any other).
    fn finish(self: Box<Self>, interrupted: bool) -> Result<Box<dyn Measured>, WorkloadError>;
}

/// An agent's side of a fleet run of a workload.
pub trait FleetAgent {
    /// The directory whose storage the agent's fingerprint describes.
    fn data_dir(&self) -> &Path;

    /// Create what the steps need (the agent's own files, its connections). Returns what was prepared, in a line.
    fn prepare(&mut self, context: &RunContext<'_>) -> Result<String, WorkloadError>;

    /// Run the agent's share of a step, now.
    fn run_step(
        &mut self,
        step: &str,
        assignment: &Value,
        context: &RunContext<'_>,
    ) -> Result<StepReport, WorkloadError>;

    /// The agent's own run from the steps it ran. Its files are removed here (and on drop, whatever happened).
    fn finish(self: Box<Self>) -> Result<Box<dyn Measured>, WorkloadError>;
}

/// The name of the [`FleetDocument`] kept with a fleet's merged run.
pub const FLEET_ATTACHMENT: &str = "fleet";

/// A fleet run's hosts and how the work was shared: kept with the merged run as its `fleet` document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetDocument {
    /// The fleet's id (also the `fleet` tag of every run of it).
    pub fleet: String,
    /// How the agents were started: `local`, `ssh` or `external`.
    pub transport: String,
    /// The unit of each share's throughput.
    pub throughput_unit: String,
    pub hosts: Vec<FleetHost>,
    pub steps: Vec<FleetStepRecord>,
}

/// One agent of a fleet.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetHost {
    /// The agent's name in the fleet (`local-1`, or the host as given to `--host`).
    pub name: String,
    /// The host name the agent's fingerprint found.
    pub hostname: Option<String>,
    /// The agent's own run in the store.
    pub run: Option<String>,
    /// Why the agent took no (further) part, when it failed or could not be reached.
    pub error: Option<String>,
    /// The agent's clock minus the database server's, in ms, and how exactly that was measured (half the round
    /// trip of the best of several reads).
    pub clock_offset_ms: Option<f64>,
    pub clock_uncertainty_ms: Option<f64>,
}

/// One step of a fleet run, host by host.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetStepRecord {
    pub name: String,
    /// The step's start instant, UTC, in the database server's clock.
    pub released_at: String,
    /// When the first and the last agent finished, in seconds after the release ("first done" and "last done").
    pub first_done_s: f64,
    pub last_done_s: f64,
    /// The seconds when every agent was running: from the last start to the first end.
    pub all_running_s: f64,
    pub shares: Vec<FleetShare>,
}

/// One agent's part of a step.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FleetShare {
    pub host: String,
    pub assignment: Value,
    pub throughput: f64,
    /// The agent's throughput as a percentage of the fleet's.
    pub share_percent: f64,
    /// How late the agent started after the release instant, in ms (negative: early), in the database's clock.
    pub skew_ms: f64,
    pub elapsed_s: f64,
    /// The agent's own sampler over the step: its busiest device's operations per second, and its CPU.
    pub device_ops_per_s: Option<f64>,
    pub cpu_busy_percent: Option<f64>,
    pub cpu_steal_percent: Option<f64>,
}

/// The per-host table's columns that hold text (step, host, share); the rest are numbers.
pub const SHARE_TEXT_COLUMNS: usize = 3;

impl FleetDocument {
    /// The per-host table's headings and rows, one row per host and step, for the terminal and the report alike.
    pub fn share_table(&self) -> (Vec<String>, Vec<Vec<String>>) {
        let unit = self.throughput_unit.as_str();
        let headers = ["STEP", "HOST", "SHARE", unit, "SHARE %", "SKEW ms", "DEVICE ops/s", "CPU %", "STEAL %"];
        let headers: Vec<String> = headers.map(String::from).to_vec();
        let optional = |value: Option<f64>, digits: usize| value.map_or("-".to_string(), |v| format!("{v:.digits$}"));
        let rows = self
            .steps
            .iter()
            .flat_map(|step| step.shares.iter().map(move |share| (step, share)))
            .map(|(step, share)| {
                vec![
                    step.name.clone(),
                    share.host.clone(),
                    assignment_text(&share.assignment),
                    number(share.throughput),
                    format!("{:.1}", share.share_percent),
                    format!("{:+.1}", share.skew_ms),
                    optional(share.device_ops_per_s, 0),
                    optional(share.cpu_busy_percent, 1),
                    optional(share.cpu_steal_percent, 1),
                ]
            })
            .collect();
        (headers, rows)
    }

    /// The per-host table: each step's shares, skew and each host's own sampler figures.
    pub fn render(&self) -> String {
        let mut out = heading(&format!(
            "Fleet {} ({} agents, {} transport): each host's share",
            short_id(&self.fleet),
            self.hosts.len(),
            self.transport
        ));
        out.push('\n');
        let (headers, rows) = self.share_table();
        let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
        let mut aligns = vec![Align::Right; headers.len()];
        aligns[..SHARE_TEXT_COLUMNS].fill(Align::Left);
        let mut table = Table::new(&headers, &aligns);
        let mut previous_step = None;
        for mut row in rows {
            // A step is named on its first host's row only.
            if previous_step.as_ref() == Some(&row[0]) {
                row[0].clear();
            } else {
                previous_step = Some(row[0].clone());
            }
            table.row(row);
        }
        out.push_str(&table.render());
        if let Some(worst) = self.steps.iter().flat_map(|s| &s.shares).map(|s| s.skew_ms.abs()).max_by(f64::total_cmp) {
            let uncertainty =
                self.hosts.iter().filter_map(|h| h.clock_uncertainty_ms).max_by(f64::total_cmp).unwrap_or(0.0);
            out.push_str(&format!(
                "Start skew: at most {worst:.1} ms after the release instant (clocks read against the database server \
                 to within {uncertainty:.1} ms).\n"
            ));
        }
        for step in &self.steps {
            if step.shares.len() > 1 {
                out.push_str(&format!(
                    "{}: first done {:.3} s, last done {:.3} s after the release; all hosts ran together for {:.3} s\n",
                    step.name, step.first_done_s, step.last_done_s, step.all_running_s
                ));
            }
        }
        let left_out: Vec<String> =
            self.hosts.iter().filter_map(|h| h.error.as_ref().map(|e| format!("  {}: {}", h.name, e))).collect();
        if !left_out.is_empty() {
            out.push_str("Hosts that took no (further) part:\n");
            for line in left_out {
                out.push_str(&line);
                out.push('\n');
            }
        }
        let runs: Vec<String> =
            self.hosts.iter().filter_map(|h| h.run.as_ref().map(|r| format!("{} {}", h.name, short_id(r)))).collect();
        if !runs.is_empty() {
            out.push_str(&format!("Each host's own run: {}\n", runs.join(", ")));
        }
        out
    }
}

/// `total` units of work (jobs, virtual users) spread over `agents` as evenly as they go: the first
/// `total % agents` agents take one more.
pub fn split_evenly(total: u32, agents: usize) -> Vec<u32> {
    let agents = agents.max(1) as u32;
    (0..agents).map(|i| total / agents + u32::from(i < total % agents)).collect()
}

/// The key of an assignment's text for people, when the workload gives one (else its keys and values are shown).
pub const SHOWN_KEY: &str = "shown";

/// An assignment for people: its `shown` text, `jobs=2`, or `-` for none.
pub fn assignment_text(assignment: &Value) -> String {
    if let Some(shown) = assignment.get(SHOWN_KEY).and_then(Value::as_str) {
        return shown.to_string();
    }
    match assignment {
        Value::Null => "-".into(),
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => format!("{k}={s}"),
                other => format!("{k}={other}"),
            })
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    }
}

/// The first 8 characters of an id.
fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn work_is_spread_as_evenly_as_it_goes() {
        assert_eq!(split_evenly(1, 3), vec![1, 0, 0]);
        assert_eq!(split_evenly(4, 3), vec![2, 1, 1]);
        assert_eq!(split_evenly(6, 3), vec![2, 2, 2]);
        assert_eq!(split_evenly(5, 1), vec![5]);
    }

    #[test]
    fn the_host_table_shows_each_share_and_the_skew() {
        let document = FleetDocument {
            fleet: "0123456789abcdef".into(),
            transport: "local".into(),
            throughput_unit: "IOPS".into(),
            hosts: vec![
                FleetHost {
                    name: "local-1".into(),
                    run: Some("feedfacecafe".into()),
                    clock_uncertainty_ms: Some(0.2),
                    ..FleetHost::default()
                },
                FleetHost { name: "local-2".into(), error: Some("died".into()), ..FleetHost::default() },
            ],
            steps: vec![FleetStepRecord {
                name: "J=2".into(),
                released_at: "2026-11-23T10:00:00.000Z".into(),
                first_done_s: 1.0,
                last_done_s: 1.01,
                all_running_s: 0.99,
                shares: vec![
                    FleetShare {
                        host: "local-1".into(),
                        assignment: json!({"jobs": 1}),
                        throughput: 1000.0,
                        share_percent: 50.0,
                        skew_ms: 1.5,
                        ..FleetShare::default()
                    },
                    FleetShare {
                        host: "local-2".into(),
                        assignment: json!({"jobs": 1}),
                        throughput: 1000.0,
                        share_percent: 50.0,
                        skew_ms: -0.5,
                        ..FleetShare::default()
                    },
                ],
            }],
        };
        let text = document.render();
        assert!(text.contains("jobs=1") && text.contains("50.0") && text.contains("+1.5"), "{text}");
        assert!(text.contains("at most 1.5 ms") && text.contains("within 0.2 ms"), "{text}");
        assert!(text.contains("local-2: died") && text.contains("local-1 feedface"), "{text}");
        assert!(text.contains("first done 1.000 s, last done 1.010 s"), "{text}");
        assert_eq!(assignment_text(&json!({"users": 2, "first_user": 0, "shown": "2 users (#1-2)"})), "2 users (#1-2)");
    }
}

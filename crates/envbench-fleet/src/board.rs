//! The fleet's message board in the results store, and the one clock: what the coordinator and its agents post
//! to each other, and how each reads the database server's clock.

use envbench_core::workload::WorkloadError;
use envbench_store::{FleetEvent, ResultStore, StoreLocation, open_store};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The sender name of the coordinator's messages.
pub const COORDINATOR: &str = "coordinator";

/// How far back a poll looks before the newest message it has seen, in seconds of the database clock: a message
/// written (its time taken) just before one already seen, but committed after it, is still read once.
const LOOKBACK_S: f64 = 5.0;

/// Message kinds.
pub mod kind {
    /// The coordinator's description of the fleet (workload, arguments, agents), its first message.
    pub const FLEET: &str = "fleet";
    /// An agent prepared and read its clock offset.
    pub const READY: &str = "ready";
    /// An agent failed, with its error.
    pub const FAILED: &str = "failed";
    /// The coordinator released a step at an instant.
    pub const STEP: &str = "step";
    /// An agent's figures of a step.
    pub const REPORT: &str = "report";
    /// The coordinator ended the fleet (done, or aborted with a reason).
    pub const STOP: &str = "stop";
    /// An agent stored its own run and is leaving.
    pub const FINISHED: &str = "finished";
    /// The coordinator is still there.
    pub const ALIVE: &str = "alive";
}

/// The coordinator's first message: everything an agent needs to take part.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FleetSpec {
    pub workload: String,
    /// The workload's arguments, as given after its name to `envbench fleet`.
    pub arguments: Vec<String>,
    /// The agents' names, in order.
    pub agents: Vec<String>,
    pub transport: String,
    pub label: Option<String>,
    pub tags: BTreeMap<String, String>,
}

/// An agent is ready: what it prepared, and its clock against the database server's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Ready {
    pub hostname: Option<String>,
    pub prepared: String,
    pub offset_s: f64,
    pub uncertainty_s: f64,
}

/// A step released: every agent starts its share at `release_at_s` of the database clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepRelease {
    pub index: usize,
    pub name: String,
    pub release_at_s: f64,
    /// Each agent's share by name (agents without one sit the step out).
    pub assignments: BTreeMap<String, Value>,
}

/// An agent's figures of a step, with when it really started and ended in the database clock.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StepDone {
    pub index: usize,
    pub report: envbench_core::fleet::StepReport,
    pub started_at_s: f64,
    pub ended_at_s: f64,
}

/// An agent failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub error: String,
}

/// The coordinator ended the fleet; `aborted` says why when it did not complete.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stop {
    pub aborted: Option<String>,
}

/// An agent's own run is stored.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Finished {
    pub run: Option<String>,
}

/// One participant's view of a fleet's board.
pub struct Board {
    store: Box<dyn ResultStore>,
    fleet: String,
    sender: String,
    seen: HashSet<i64>,
    newest_s: f64,
}

impl Board {
    /// Open the board of `fleet` in the store at `location`, to post as `sender`.
    pub fn open(location: &StoreLocation, fleet: &str, sender: &str) -> Result<Board, WorkloadError> {
        let store = open_store(location, true)
            .map_err(|e| WorkloadError::failure(format!("the fleet's store {}: {e}", location.display())))?;
        Ok(Board { store, fleet: fleet.to_string(), sender: sender.to_string(), seen: HashSet::new(), newest_s: 0.0 })
    }

    pub fn fleet(&self) -> &str {
        &self.fleet
    }

    /// The store, to read runs from.
    pub fn store(&self) -> &dyn ResultStore {
        self.store.as_ref()
    }

    /// Post a message.
    pub fn post(&mut self, kind: &str, body: &impl Serialize) -> Result<FleetEvent, WorkloadError> {
        let body = serde_json::to_value(body).expect("fleet messages serialize");
        self.store.post_fleet_event(&self.fleet, &self.sender, kind, &body).map_err(store_error)
    }

    /// The messages not read before, oldest first.
    pub fn poll(&mut self) -> Result<Vec<FleetEvent>, WorkloadError> {
        let since = if self.seen.is_empty() { 0.0 } else { self.newest_s - LOOKBACK_S };
        let events = self.store.fleet_events(&self.fleet, since).map_err(store_error)?;
        let mut new = Vec::new();
        for event in events {
            if self.seen.insert(event.id) {
                self.newest_s = self.newest_s.max(event.at_s);
                new.push(event);
            }
        }
        Ok(new)
    }

    /// The database server's clock.
    pub fn clock(&self) -> Result<f64, WorkloadError> {
        self.store.clock_seconds().map_err(store_error)
    }

    /// This host's clock minus the database server's, from the read with the shortest round trip of several, and
    /// its uncertainty (half that round trip).
    pub fn clock_offset(&self) -> Result<(f64, f64), WorkloadError> {
        let mut best: Option<(f64, f64)> = None;
        for _ in 0..7 {
            let before = now_s();
            let server = self.clock()?;
            let after = now_s();
            let round_trip = after - before;
            let offset = (before + after) / 2.0 - server;
            if best.is_none_or(|(_, rt)| round_trip < rt) {
                best = Some((offset, round_trip));
            }
        }
        let (offset, round_trip) = best.expect("seven reads");
        Ok((offset, round_trip / 2.0))
    }
}

/// This host's clock, in seconds since the Unix epoch.
pub fn now_s() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO).as_secs_f64()
}

/// Sleep until `local_s` of this host's clock (a release instant, converted), waking to notice an interrupt; the
/// last millisecond is spun, so a step starts within microseconds of its instant.
pub fn wait_until(local_s: f64, context: &envbench_core::workload::RunContext<'_>) -> Result<(), WorkloadError> {
    loop {
        if context.interrupted() {
            return Err(WorkloadError::interrupted());
        }
        let left = local_s - now_s();
        if left <= 0.0 {
            return Ok(());
        }
        if left > 0.002 {
            std::thread::sleep(Duration::from_secs_f64((left - 0.001).min(0.05)));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// A message's body as `T`, or an error naming the message.
pub fn body<T: serde::de::DeserializeOwned>(event: &FleetEvent) -> Result<T, WorkloadError> {
    serde_json::from_value(event.body.clone()).map_err(|e| {
        WorkloadError::failure(format!(
            "fleet {}: a '{}' message from {} cannot be read ({e})",
            event.fleet, event.kind, event.sender
        ))
    })
}

fn store_error(error: envbench_store::StoreError) -> WorkloadError {
    WorkloadError::failure(format!("the fleet's store: {error}"))
}

/// Seconds of the database clock as UTC text.
pub fn utc(seconds: f64) -> String {
    let whole = seconds.floor();
    envbench_core::model::format_utc(whole as i64, ((seconds - whole) * 1000.0).round().min(999.0) as u32)
}

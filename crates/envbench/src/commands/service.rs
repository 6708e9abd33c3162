//! A results service that a side of `compare` or `report` was named on (`https://host/...`): its leaderboards, each
//! fetched once, and its best environment for a side of the user's own (what a bare `https://host/` side is).

use crate::usage;
use envbench_report::leaderboard::{Leaderboard, options_class};
use envbench_service::remote::ServiceStore;
use envbench_store::ReadRuns;
use envbench_verdict::Side;
use std::cell::RefCell;
use std::collections::BTreeMap;

/// A service some side was named on.
pub(super) struct Service {
    /// `https://host[:port]`, as given.
    pub(super) base: String,
    pub(super) store: ServiceStore,
    /// Leaderboards fetched under `filters`, by workload (`None`: the service has no complete run of it).
    pub(super) boards: RefCell<BTreeMap<String, Option<Leaderboard>>>,
    /// The leaderboard filters the user gave with the bare URL (`transport=nvme`), for its best side and standings.
    pub(super) filters: String,
}

impl Service {
    /// The service's leaderboard of `workload` under the user's filters, fetched once.
    pub(super) fn board(&self, workload: &str) -> anyhow::Result<Option<Leaderboard>> {
        if let Some(board) = self.boards.borrow().get(workload) {
            return Ok(board.clone());
        }
        let board = self.store.client().leaderboard(workload, &self.filters)?;
        self.boards.borrow_mut().insert(workload.to_string(), board.clone());
        Ok(board)
    }
}

/// The service's best environment other than `reference`'s, in the list its options put it on (default or tuned), on
/// each workload `reference` ran: the latest runs that make that environment's figure there.
pub(super) fn best_side(service: &Service, reference: &Side) -> anyhow::Result<Side> {
    // A flagged side is still compared with the best of its options' list: the standing says it is flagged.
    let class = options_class(&reference.runs);
    let own = reference.runs.first().map(|r| envbench_verdict::environment_identity(&r.fingerprint).id);
    let workloads = envbench_verdict::workloads_of(&reference.runs);
    let mut runs = Vec::new();
    let mut flagged = 0;
    for workload in &workloads {
        let Some(board) = service.board(workload)? else { continue };
        flagged += board.flagged.iter().filter(|e| Some(&e.environment.id) != own.as_ref()).count();
        let Some(leader) = board.list(class).iter().find(|e| Some(&e.environment.id) != own.as_ref()) else {
            continue;
        };
        for uuid in &leader.runs {
            runs.push(service.store.load_run(uuid)?);
        }
    }
    if runs.is_empty() {
        return Err(usage(format!(
            "{}{}: no other environment with {} ran {} there{}{}",
            service.base,
            if service.filters.is_empty() { String::new() } else { format!("/?{}", service.filters) },
            class.words(),
            workloads.join(", "),
            if service.filters.is_empty() { "" } else { " with these filters" },
            match flagged {
                0 => String::new(),
                n => format!(
                    " (besides {n} flagged, disturbed or on memory-backed storage, which are never the best); name one \
                     with https://host/label:NAME to compare with it anyway"
                ),
            }
        )));
    }
    // Oldest first, as a side's runs are.
    runs.sort_by(|a, b| a.summary.started_at.cmp(&b.summary.started_at));
    let filters = if service.filters.is_empty() { String::new() } else { format!(" ({})", service.filters) };
    let by = runs.first().and_then(|r| r.summary.submitter.as_ref()).map_or(String::new(), |s| format!(" by {s}"));
    Ok(Side::new(format!("best on {}{by}{filters}", host_of(&service.base)), runs))
}

/// `host[:port]` of a base URL.
pub(super) fn host_of(base: &str) -> &str {
    base.split_once("://").map_or(base, |(_, host)| host)
}

//! The leaderboards of the services a comparison named: a bare `https://host/` side is the service's best other
//! environment there, and compare says where each local side would stand, ranked from the leaderboards' medians
//! (nothing of the local store is sent).

use super::sides::{Resolved, Service, host_of};
use crate::registry::WORKLOADS;
use crate::usage;
use envbench_report::Side;
use envbench_report::leaderboard::{Standing, options_class, standing};
use envbench_store::ResultStore;
use serde::Serialize;

/// Where a local side stands on a service's leaderboards.
#[derive(Serialize)]
pub struct SideStanding {
    pub service: String,
    pub filters: String,
    pub side: String,
    pub workloads: Vec<Standing>,
}

impl Resolved {
    /// Where each local side stands on each service's leaderboards of its workloads.
    pub fn standings(&self) -> anyhow::Result<Vec<SideStanding>> {
        let mut all = Vec::new();
        for service in &self.services {
            for (side, _) in self.sides.iter().zip(&self.origins).filter(|(_, o)| o.is_none()) {
                let mut standings = Vec::new();
                for workload in envbench_report::workloads_of(&side.runs) {
                    let Some(board) = service.board(workload)? else { continue };
                    let runs = side.runs.iter().filter(|r| r.summary.workload == workload).cloned().collect();
                    standings.push(standing(&board, &Side::new(side.name.clone(), runs), &WORKLOADS));
                }
                all.push(SideStanding {
                    service: service.base.clone(),
                    filters: service.filters.clone(),
                    side: side.name.clone(),
                    workloads: standings,
                });
            }
        }
        Ok(all)
    }
}

/// Standings for people, one block per side and service.
pub fn standings_text(standings: &[SideStanding], markdown: bool) -> String {
    let mut text = String::new();
    for block in standings {
        let filters = if block.filters.is_empty() { String::new() } else { format!(", filtered by {}", block.filters) };
        if markdown {
            text.push_str(&format!("\n### {} on {}{filters}\n\n", block.side, block.service));
        } else {
            text.push_str(&format!("\nStanding of {} on {}{filters}:\n", block.side, block.service));
        }
        if block.workloads.is_empty() {
            text.push_str(if markdown { "- " } else { "  " });
            text.push_str("no run of these workloads there yet\n");
        }
        for standing in &block.workloads {
            text.push_str(if markdown { "- " } else { "  " });
            text.push_str(&standing.line());
            text.push('\n');
        }
    }
    text
}

/// The service's best environment other than `reference`'s, in the list its options put it on (default or tuned), on
/// each workload `reference` ran: the latest runs that make that environment's figure there.
pub(super) fn best_side(service: &Service, reference: &Side) -> anyhow::Result<Side> {
    // A flagged side is still compared with the best of its options' list: the standing says it is flagged.
    let class = options_class(&reference.runs);
    let own = reference.runs.first().map(|r| envbench_report::environment_identity(&r.fingerprint).id);
    let workloads = envbench_report::workloads_of(&reference.runs);
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

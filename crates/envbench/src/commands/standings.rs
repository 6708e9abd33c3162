//! The leaderboards of the services a comparison named: a bare `https://host/` side is the service's best other
//! environment there, and compare says where each local side would stand, ranked from the leaderboards' medians
//! (nothing of the local store is sent).

use super::sides::Resolved;
use crate::registry::WORKLOADS;
use envbench_report::leaderboard::{Standing, standing};
use envbench_verdict::Side;
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
                for workload in envbench_verdict::workloads_of(&side.runs) {
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

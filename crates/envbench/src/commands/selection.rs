//! Which stored runs a command takes: sides as `compare` names them, narrowed by `--workload`, `--label` and `--tag`
//! (`results list`, `results export`, `push`).

use crate::cli::RunSelection;
use crate::driver::parse_tags;
use envbench_core::text::printable;
use envbench_store::{ReadRuns, RunFilter};

/// The runs that `sides` name, as `compare` and `report` take them (`run:ID`, `label:NAME`, `tag:K=V`, `suite=ID`, a
/// bare label or run id), each once and newest first, narrowed by `filter`; every run `filter` matches when no side
/// is given. `filter.limit` applies last.
pub fn runs_of(
    store: &dyn ReadRuns,
    sides: &[String],
    filter: &RunFilter,
) -> anyhow::Result<Vec<envbench_store::RunSummary>> {
    if sides.is_empty() {
        // The store applies the limit: a listing of the newest runs reads only those.
        return Ok(store.list_runs(filter)?);
    }
    let mut runs = store.list_runs(&RunFilter { limit: None, ..filter.clone() })?;
    let mut named = std::collections::BTreeSet::new();
    for side in sides {
        if super::sides::is_service_side(side) {
            return Err(crate::usage(format!(
                "{}: this command reads the local store; a results service's runs are on its pages and its API (GET \
                 /api/v1/runs)",
                printable(side)
            )));
        }
        let (_, uuids) = envbench_verdict::side_runs(store, side).map_err(super::classify)?;
        named.extend(uuids);
    }
    runs.retain(|run| named.contains(&run.uuid));
    if runs.is_empty() {
        return Err(crate::usage(format!(
            "{}: no run is both named there and matches the filters given",
            sides.iter().map(|s| printable(s)).collect::<Vec<_>>().join(" ")
        )));
    }
    runs.truncate(filter.limit.unwrap_or(usize::MAX));
    Ok(runs)
}

/// The store filter of a run selection, refusing a workload that does not exist.
pub fn selected(selection: &RunSelection) -> anyhow::Result<RunFilter> {
    if let Some(workload) = &selection.workload
        && crate::registry::WORKLOADS.find(workload).is_none()
    {
        return Err(crate::usage(format!(
            "--workload {}: no such workload; give one of {}{}",
            envbench_core::text::printable(workload),
            crate::registry::WORKLOADS.names().join(", "),
            envbench_core::text::did_you_mean(&envbench_core::text::suggestions(
                workload,
                crate::registry::WORKLOADS.names()
            ))
        )));
    }
    Ok(RunFilter {
        workload: selection.workload.clone(),
        label: selection.label.clone(),
        tags: parse_tags(&selection.tags)?,
        ..Default::default()
    })
}

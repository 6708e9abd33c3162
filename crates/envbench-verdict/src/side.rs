//! The sides of a comparison: what the user names on the command line (a run id, a label, tags) and the runs it
//! stands for.

use crate::error::VerdictError;
use envbench_core::model::{RunStatus, parse_tag};
use envbench_store::{ReadRuns, RunFilter, StoreError, StoredRun};
use std::collections::BTreeMap;

/// The tag every run of a suite carries: the suite id (the store's, which keeps a suite to one submitter).
pub use envbench_store::SUITE_TAG;
/// The tag naming the suite (`quick`, a file name).
pub const SUITE_NAME_TAG: &str = "suite.name";

/// How a side names its runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SideSpec {
    /// One run, by uuid or a unique prefix of one.
    Run(String),
    /// Every complete run with this label.
    Label(String),
    /// Every complete run carrying all these tags.
    Tags(BTreeMap<String, String>),
}

impl SideSpec {
    /// Read a side as the user wrote it. `run:ID`, `label:NAME` and `tag:k=v,k=v` say what they are; otherwise text
    /// with `=` is tags, and anything else is a label or a run id (decided by [`resolve_side`]).
    pub fn parse(text: &str) -> Result<Option<SideSpec>, VerdictError> {
        let text = text.trim();
        if let Some(id) = text.strip_prefix("run:") {
            return Ok(Some(SideSpec::Run(id.trim().to_string())));
        }
        if let Some(label) = text.strip_prefix("label:") {
            return Ok(Some(SideSpec::Label(label.trim().to_string())));
        }
        let tags = text.strip_prefix("tag:").or_else(|| text.strip_prefix("tags:"));
        if tags.is_some() || text.contains('=') {
            let mut parsed = BTreeMap::new();
            for pair in tags.unwrap_or(text).split(',').filter(|p| !p.trim().is_empty()) {
                let (key, value) = parse_tag(pair).map_err(VerdictError::BadSide)?;
                parsed.insert(key, value);
            }
            if parsed.is_empty() {
                return Err(VerdictError::BadSide(format!("'{text}' names no tag: write tag:key=value")));
            }
            return Ok(Some(SideSpec::Tags(parsed)));
        }
        Ok(None)
    }
}

/// One side of a comparison: a name for tables and charts, and its runs (whose samples pool).
#[derive(Clone, Debug, PartialEq)]
pub struct Side {
    /// What the user wrote, or the run's label and short id for a single run.
    pub name: String,
    pub runs: Vec<StoredRun>,
}

impl Side {
    /// A side of runs already loaded.
    pub fn new(name: impl Into<String>, runs: Vec<StoredRun>) -> Side {
        Side { name: name.into(), runs }
    }
}

/// The runs a side names, newest first, and how it named them: what `compare`, `report`, `push`, `results export`
/// and `results list` all take for it.
pub fn side_runs(store: &dyn ReadRuns, text: &str) -> Result<(SideSpec, Vec<String>), VerdictError> {
    let spec = match SideSpec::parse(text)? {
        Some(spec) => spec,
        None => {
            let label = text.trim().to_string();
            let labelled = complete_runs(store, &RunFilter { label: Some(label.clone()), ..Default::default() })?;
            let run = match store.find_run(&label) {
                Ok(uuid) => Some(uuid),
                Err(StoreError::NoSuchRun(_)) => None,
                Err(error) => return Err(error.into()),
            };
            match (run, labelled.is_empty()) {
                (Some(_), false) => return Err(VerdictError::AmbiguousSide(label)),
                (Some(uuid), true) => SideSpec::Run(uuid),
                (None, _) => SideSpec::Label(label),
            }
        }
    };
    let uuids: Vec<String> = match &spec {
        SideSpec::Run(id) => vec![store.find_run(id)?],
        SideSpec::Label(label) => {
            complete_runs(store, &RunFilter { label: Some(label.clone()), ..Default::default() })?
        }
        SideSpec::Tags(tags) => complete_runs(store, &RunFilter { tags: tags.clone(), ..Default::default() })?,
    };
    if uuids.is_empty() {
        let hint = match &spec {
            SideSpec::Label(label) => {
                let labels: std::collections::BTreeSet<String> = store
                    .list_runs(&RunFilter::default())?
                    .into_iter()
                    .filter(|r| r.status == RunStatus::Complete)
                    .filter_map(|r| r.label)
                    .collect();
                let close = envbench_core::text::suggestions(label, labels.iter().map(String::as_str));
                envbench_core::text::did_you_mean(&close.iter().map(|l| format!("label:{l}")).collect::<Vec<_>>())
            }
            _ => String::new(),
        };
        return Err(VerdictError::EmptySide(text.trim().to_string(), hint));
    }
    Ok((spec, uuids))
}

/// Load the runs a side names. A run id may name a run of any status (the user asked for it); labels and tags take
/// complete runs only, since a failed or interrupted run's results may be partial.
pub fn resolve_side(store: &dyn ReadRuns, text: &str) -> Result<Side, VerdictError> {
    let (spec, uuids) = side_runs(store, text)?;
    // Oldest first, so pooled samples keep the order they were measured in.
    let runs = uuids.iter().rev().map(|uuid| store.load_run(uuid)).collect::<Result<Vec<_>, _>>()?;
    let name = match &spec {
        SideSpec::Run(_) => run_name(&runs[0]),
        SideSpec::Tags(tags) if tags.len() == 1 && tags.contains_key(SUITE_TAG) => suite_side_name(&runs),
        _ => text.trim().to_string(),
    };
    Ok(Side { name, runs })
}

/// The name of a side that is one suite (`suite=<id>`, what `envbench run` prints): its labels and when it ran, which
/// people recognise, instead of the id.
fn suite_side_name(runs: &[StoredRun]) -> String {
    let mut labels: Vec<String> = Vec::new();
    for label in runs.iter().filter_map(|r| r.summary.label.as_ref()) {
        if !labels.contains(label) {
            labels.push(label.clone());
        }
    }
    let started = runs.iter().map(|r| r.summary.started_at.as_str()).min().unwrap_or_default();
    let name = runs.iter().find_map(|r| r.summary.tags.get(SUITE_NAME_TAG)).map(String::as_str).unwrap_or_default();
    suite_title(&labels, name, started)
}

/// A suite named by its labels, its suite name and the minute it started (UTC).
pub fn suite_title(labels: &[String], name: &str, started_at: &str) -> String {
    let when = started_at.replace('T', " ");
    let when = when.get(..16).unwrap_or(&when);
    let what = if labels.is_empty() { "unlabelled".to_string() } else { labels.join(" + ") };
    if name.is_empty() { format!("{what} ({when})") } else { format!("{what} ({name}, {when})") }
}

/// Resolve several sides, renaming repeats so every side's name is unique.
pub fn resolve_sides(store: &dyn ReadRuns, texts: &[String]) -> Result<Vec<Side>, VerdictError> {
    let sides: Vec<Side> = texts.iter().map(|text| resolve_side(store, text)).collect::<Result<_, _>>()?;
    distinct_sides(sides)
}

/// Sides resolved (from one store or several) made ready to compare: no two of the very same runs, and every name
/// unique.
pub fn distinct_sides(mut sides: Vec<Side>) -> Result<Vec<Side>, VerdictError> {
    // Two sides of the very same runs compare nothing with anything: a verdict of "unchanged" would be empty.
    let run_set =
        |side: &Side| side.runs.iter().map(|r| r.summary.uuid.clone()).collect::<std::collections::BTreeSet<_>>();
    for (later, side) in sides.iter().enumerate().skip(1) {
        if let Some(earlier) = sides[..later].iter().find(|earlier| run_set(earlier) == run_set(side)) {
            return Err(VerdictError::BadSide(format!(
                "'{}' and '{}' are the same runs; compare runs of different environments or settings",
                earlier.name, side.name
            )));
        }
    }
    unique_names(&mut sides);
    Ok(sides)
}

/// Make side names unique by numbering repeats (`nvme`, `nvme #2`).
pub fn unique_names(sides: &mut [Side]) {
    for i in 1..sides.len() {
        let original = sides[i].name.clone();
        let mut count = 1;
        while sides[..i].iter().any(|earlier| earlier.name == sides[i].name) {
            count += 1;
            sides[i].name = format!("{original} #{count}");
        }
    }
}

/// The workloads of these runs, each once, in the order they first appear.
pub fn workloads_of(runs: &[StoredRun]) -> Vec<&str> {
    let mut workloads: Vec<&str> = Vec::new();
    for run in runs {
        if !workloads.contains(&run.summary.workload.as_str()) {
            workloads.push(&run.summary.workload);
        }
    }
    workloads
}

/// How many runs the user made, keyed by each stored run's id and suite: one suite run is one run, however many
/// workloads it ran (a quick suite stores six).
pub fn runs_made<'a>(runs: impl IntoIterator<Item = (&'a str, Option<&'a str>)>) -> usize {
    let made: std::collections::BTreeSet<(bool, &str)> = runs
        .into_iter()
        .map(|(uuid, suite)| match suite {
            Some(suite) => (true, suite),
            None => (false, uuid),
        })
        .collect();
    made.len()
}

/// A count of runs as the user made them: `3 runs`, or `3 runs (18 workload runs)` when they were suites.
pub fn run_count_words(made: usize, stored: usize) -> String {
    let runs = if made == 1 { "1 run".to_string() } else { format!("{made} runs") };
    if made == stored { runs } else { format!("{runs} ({stored} workload runs)") }
}

/// The suite a stored run belongs to, if any.
pub fn suite_of(run: &StoredRun) -> Option<&str> {
    run.summary.tags.get(SUITE_TAG).map(String::as_str)
}

/// A run's name for tables: its label and short id, or the short id alone.
pub fn run_name(run: &StoredRun) -> String {
    let short = run.summary.uuid.get(..8).unwrap_or(&run.summary.uuid);
    match &run.summary.label {
        Some(label) => format!("{label} ({short})"),
        None => short.to_string(),
    }
}

fn complete_runs(store: &dyn ReadRuns, filter: &RunFilter) -> Result<Vec<String>, VerdictError> {
    Ok(store.list_runs(filter)?.into_iter().filter(|r| r.status == RunStatus::Complete).map(|r| r.uuid).collect())
}

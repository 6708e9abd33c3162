//! The one driver every workload runs through, from a command, a suite item, a fleet or a fleet agent: the options
//! all workloads share, then plan (nothing is created or stored for bad input), fingerprint, session and sampler,
//! the run with Ctrl-C watched, JSON or the table, the stored end, and the exit status.

use crate::output::{self, TerminalProgress};
use crate::session::{Session, interrupt_flag};
use clap::parser::ValueSource;
use clap::{Args, FromArgMatches};
use envbench_core::fingerprint::{Fingerprint, MEMORY_BACKED_FLAG};
use envbench_core::model::{RunRequest, RunStatus, parse_tag, redact_secrets};
use envbench_core::provenance::{Options, PROVENANCE_ATTACHMENT, RunProvenance};
use envbench_core::sampler::DISTURBED_FLAG;
use envbench_core::workload::{
    Ending, Envelope, Plan, Planned, Progress, Recording, Resource, RunContext, Workload, WorkloadError,
};
use envbench_probe::{Host, fingerprint};
use envbench_store::StoreLocation;
use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// The most tags one run carries.
pub use envbench_core::model::MAX_TAGS;

/// How a run is named in the user's methodology, and how it reports: accepted by every workload command.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Naming and output")]
pub struct CommonArgs {
    /// A name for this configuration, e.g. physical-p3605.
    #[arg(long)]
    pub label: Option<String>,
    /// A key=value tag, e.g. --tag ht=off --tag storage=iscsi (repeatable).
    #[arg(long = "tag", value_name = "KEY=VALUE")]
    pub tags: Vec<String>,
    /// Print JSON instead of tables.
    #[arg(long)]
    pub json: bool,
    /// Interval of the OS sampler (iostat-style disk and CPU figures), e.g. 1s, 500ms.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub sample_interval: envbench_core::DurationArg,
    /// Serve live Prometheus metrics during the run at http://ADDRESS/metrics: the current step, the OS sampler's
    /// figures, and the workload's own (oltp and htap: rates, response-time percentiles, retries and failures). A
    /// port alone listens on 127.0.0.1 only; give an address (e.g. 0.0.0.0:9464) to serve beyond this host.
    #[arg(long, value_name = "[ADDRESS:]PORT", value_parser = envbench_core::live::parse_listen)]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// The suite this run belongs to (set by `envbench run`).
    #[arg(long, hide = true)]
    pub suite_id: Option<String>,
    /// The command line to record instead of this process's (set by `envbench run` for each of its runs).
    #[arg(long, hide = true)]
    pub invoked_as: Option<String>,
    /// The built-in suite whose defaults this run's options are (set by `envbench run` for a built-in suite's runs).
    #[arg(long, hide = true)]
    pub defaults_of: Option<String>,
    /// How the run's options were chosen, from the command line ([`common_args`]).
    #[arg(skip)]
    pub options: Option<Options>,
}

/// Options that say where a run works, how it is named and how it reports, not what it measures: giving them keeps
/// a run's options its profile's defaults. `quick` picks a built-in profile.
const PLACING_OPTIONS: &[&str] = &[
    "label",
    "tags",
    "json",
    "sample_interval",
    "metrics_listen",
    "suite_id",
    "invoked_as",
    "defaults_of",
    "dir",
    "target",
    "schema",
    "db",
    "file",
    "save",
    "force",
    "quick",
];

/// The options every workload shares, with how the run's options were chosen: the workload's or a built-in suite's
/// defaults, or tuned, naming each option the user gave that changes what is measured.
pub fn common_args(workload: &dyn Workload, matches: &clap::ArgMatches) -> Result<CommonArgs, WorkloadError> {
    let mut common = CommonArgs::from_arg_matches(matches).map_err(|e| WorkloadError::usage(e.to_string()))?;
    let definition = command(workload);
    let changed: Vec<String> = matches
        .ids()
        .map(|id| id.as_str())
        .filter(|id| !PLACING_OPTIONS.contains(id))
        .filter(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        // Options only: the groups clap makes of each flattened struct (`ExecArgs`, `CommonArgs`) are ids too.
        .filter_map(|id| definition.get_arguments().find(|a| a.get_id() == id))
        .map(|argument| {
            let id = argument.get_id().as_str();
            format!("--{}", argument.get_long().map_or_else(|| id.replace('_', "-"), str::to_string))
        })
        .collect();
    let quick =
        matches.ids().any(|id| id == "quick" && matches.value_source(id.as_str()) == Some(ValueSource::CommandLine));
    common.options = Some(match (&common.defaults_of, changed.is_empty()) {
        (Some(suite), _) => Options::Default { profile: format!("the {suite} suite") },
        (None, true) => Options::Default { profile: if quick { "--quick" } else { "defaults" }.to_string() },
        (None, false) => Options::Tuned { changed },
    });
    Ok(common)
}

impl CommonArgs {
    fn sample_interval(&self) -> Result<Duration, WorkloadError> {
        let interval = self.sample_interval.get();
        if interval < Duration::from_millis(10) || interval > Duration::from_secs(3600) {
            return Err(WorkloadError::usage("--sample-interval must be from 10ms to 1h"));
        }
        Ok(interval)
    }
}

/// A workload's command with the options every workload shares.
pub fn command(workload: &dyn Workload) -> clap::Command {
    // The derive would put CommonArgs' own doc comment in place of the workload's about text.
    let command = workload.command();
    let (about, long_about) = (command.get_about().cloned(), command.get_long_about().cloned());
    let mut command = CommonArgs::augment_args(command);
    if let Some(about) = about {
        command = command.about(about);
    }
    if let Some(long_about) = long_about {
        command = command.long_about(long_about);
    }
    command
}

/// Refuse a label or tag that would print as something else or swamp every table ([`envbench_core::text::check_name`]).
pub fn check_name(option: &str, text: &str) -> Result<(), WorkloadError> {
    envbench_core::text::check_name(option, text).map_err(WorkloadError::usage)
}

/// Parse `--tag key=value` arguments, refusing duplicates, control characters and too many.
pub fn parse_tags(tags: &[String]) -> Result<BTreeMap<String, String>, WorkloadError> {
    if tags.len() > MAX_TAGS {
        return Err(WorkloadError::usage(format!("{} tags are more than {MAX_TAGS}; give fewer --tag", tags.len())));
    }
    let mut parsed = BTreeMap::new();
    for tag in tags {
        check_name("--tag", tag)?;
        let (key, value) = parse_tag(&redact_secrets(tag)).map_err(WorkloadError::usage)?;
        check_name("--tag's key", &key)?;
        if parsed.insert(key.clone(), value).is_some() {
            return Err(WorkloadError::usage(format!("--tag {key} is given twice; give each tag once")));
        }
    }
    Ok(parsed)
}

/// The run request: the workload, its labels, and how it was invoked (without secrets).
pub fn run_request(workload: &str, common: &CommonArgs) -> Result<RunRequest, WorkloadError> {
    if let Some(label) = &common.label {
        check_name("--label", label)?;
    }
    Ok(RunRequest {
        workload: workload.to_string(),
        label: common.label.as_deref().map(redact_secrets),
        tags: parse_tags(&common.tags)?,
        command_line: common.invoked_as.as_deref().map(redact_secrets).unwrap_or_else(command_line),
        suite_id: common.suite_id.clone(),
    })
}

/// The command line as the user typed it, quoted where needed and without secrets.
pub fn command_line() -> String {
    quote_words(std::env::args())
}

/// Words joined into a command line a shell reads back the same: quoted where needed, and with every connection
/// secret replaced by `***`, since command lines are stored with runs and shown in reports.
pub fn quote_words<S: AsRef<str>>(words: impl Iterator<Item = S>) -> String {
    words
        .map(|arg| {
            let arg = redact_secrets(arg.as_ref());
            if arg.is_empty() || arg.contains(|c: char| c.is_whitespace() || "\"'$`\\".contains(c)) {
                format!("'{}'", arg.replace('\'', r"'\''"))
            } else {
                arg
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Run a workload from its parsed command line, storing the run in `location`.
pub fn run(workload: &dyn Workload, matches: &clap::ArgMatches, location: &StoreLocation) -> anyhow::Result<ExitCode> {
    let common = common_args(workload, matches)?;
    let request = run_request(workload.name(), &common)?;
    // Bound before the plan makes anything (a lock file, a database): a port in use is refused with nothing made.
    let endpoint = serve_metrics(&common)?;
    let planned = match workload.plan(matches)? {
        Plan::Answer(text) => {
            output::print(&text);
            return Ok(ExitCode::SUCCESS);
        }
        Plan::Run(planned) => planned,
    };
    Ok(run_planned(workload.name(), planned, &common, request, location, endpoint)?.exit)
}

/// The live-metrics endpoint of `--metrics-listen`, bound now (`None` without the option): callers bind it before
/// they plan, so a port in use is refused (exit 2) before anything is made or stored, as docs/metrics.md promises.
pub fn serve_metrics(common: &CommonArgs) -> Result<Option<envbench_probe::MetricsEndpoint>, WorkloadError> {
    common
        .metrics_listen
        .map(|address| envbench_probe::MetricsEndpoint::serve(address).map_err(WorkloadError::usage))
        .transpose()
}

/// Why a run of `workload` measured memory where it meant storage: its storage is memory-backed and storage
/// governs its results.
fn memory_backed(workload: &str, fingerprint: &Fingerprint) -> Option<String> {
    let reason = fingerprint.storage.as_ref()?.memory_reason()?;
    crate::registry::WORKLOADS.read_back(workload).governed_by().contains(&Resource::Storage).then_some(reason)
}

/// How a run through the driver ended: the exit status, and the run's id when it was stored.
pub struct Launched {
    pub exit: ExitCode,
    pub run: Option<String>,
}

/// Run a planned run (a workload's, a fleet's or a fleet agent's) through the lifecycle: fingerprint, session and
/// sampler, the run with Ctrl-C watched, JSON or the table, the stored end. `endpoint` is [`serve_metrics`]'s,
/// bound before the run was planned.
pub fn run_planned(
    workload: &str,
    planned: Box<dyn Planned>,
    common: &CommonArgs,
    request: RunRequest,
    location: &StoreLocation,
    endpoint: Option<envbench_probe::MetricsEndpoint>,
) -> anyhow::Result<Launched> {
    let sample_interval = common.sample_interval()?;
    let recording = planned.recording();
    if recording == Recording::NotStored && (common.label.is_some() || !common.tags.is_empty()) {
        return Err(WorkloadError::usage(format!(
            "--label and --tag name a stored run; add --save to keep this {workload} run"
        ))
        .into());
    }
    let progress = TerminalProgress { quiet: common.json };
    let interrupt = interrupt_flag();
    // Probing first: a wrong data directory is a usage error that must not create a store.
    let fingerprint =
        fingerprint(&Host::live(), Some(planned.data_dir())).map_err(|e| WorkloadError::usage(e.to_string()))?;
    // Served from before the run is stored to its end (a port that is taken stores nothing): the figures describe
    // this run.
    if let Some(endpoint) = &endpoint {
        if !endpoint.address().ip().is_loopback() {
            progress.warn(&format!(
                "serving live metrics beyond this host at http://{}/metrics: anyone who reaches it can read them",
                endpoint.address()
            ));
        } else if !common.json {
            eprintln!("live metrics at http://{}/metrics", endpoint.address());
        }
    }
    let mut session = match recording {
        Recording::NotStored => None,
        Recording::Unsampled => Some(Session::start(location, &request, &fingerprint, None, false)?),
        Recording::Sampled => Some(Session::start(
            location,
            &request,
            &fingerprint,
            Some(sample_interval),
            planned.drives_local_server(),
        )?),
    };
    let uuid = session.as_ref().map(|s| s.uuid().to_string());
    if !common.json
        && let Some(line) = planned.announce()
    {
        eprintln!("{line}");
    }
    // Said before the run, so a long one on the wrong directory can be stopped.
    let memory_backed = memory_backed(workload, &fingerprint);
    if let Some(reason) = &memory_backed {
        progress.warn(&format!(
            "{} is memory-backed ({reason}): its figures measure RAM, not storage; the results are flagged \
             {MEMORY_BACKED_FLAG}",
            planned.data_dir().display()
        ));
    }
    let steps: &dyn envbench_core::sampler::StepObserver = match &session {
        Some(session) => session.steps(),
        None => &envbench_core::sampler::NoSteps,
    };
    if endpoint.is_some() {
        envbench_core::live::set(
            "envbench_run_info",
            "The run being measured (1): its workload and, when stored, its id.",
            envbench_core::live::Kind::Gauge,
            &[("workload", workload), ("run", uuid.as_deref().unwrap_or(""))],
            1.0,
        );
    }
    let context = RunContext { steps, interrupt: &interrupt, fingerprint: &fingerprint, progress: &progress };
    let measured = planned.run(&context);
    progress.end_live_line();
    drop(endpoint);
    let series = session.as_mut().and_then(Session::stop_sampling);
    let interrupted = interrupt.load(Ordering::SeqCst);
    let measured = match measured {
        Ok(measured) => measured,
        Err(error) => {
            let status = if interrupted || error.kind() == envbench_core::workload::ErrorKind::Interrupted {
                RunStatus::Interrupted
            } else {
                RunStatus::Failed
            };
            if let Some(session) = session {
                session.abandon(status, &redact_secrets(error.message()), series);
            }
            return if status == RunStatus::Interrupted {
                Ok(Launched { exit: ExitCode::from(130), run: uuid })
            } else {
                Err(error.into())
            };
        }
    };
    let empty = envbench_core::sampler::SamplerSeries::default();
    let seen = series.as_ref().unwrap_or(&empty);
    let disturbance = seen.disturbance();
    let mut records = measured.records(seen);
    if memory_backed.is_some() {
        for record in records.iter_mut().filter(|r| !r.flags.iter().any(|f| f == MEMORY_BACKED_FLAG)) {
            record.flags.push(MEMORY_BACKED_FLAG.to_string());
        }
    }
    if disturbance.is_some() {
        // Comparisons carry result flags into their cells, so every result says its run was disturbed.
        for record in &mut records {
            if !record.flags.iter().any(|f| f == DISTURBED_FLAG) {
                record.flags.push(DISTURBED_FLAG.to_string());
            }
        }
    }
    if common.json {
        let envelope = Envelope { run: session.as_ref().map(Session::uuid), sampler: series.as_ref() };
        output::println(&serde_json::to_string_pretty(&measured.json(&envelope))?);
    } else {
        output::print(&measured.render(seen));
    }
    for warning in measured.warnings(seen) {
        progress.warn(&warning);
    }
    if let Some(note) = &seen.pressure_note {
        eprintln!("{note}");
    }
    if let Some(disturbance) = &disturbance {
        progress.warn(&format!("{}; its results carry the flag {DISTURBED_FLAG}", disturbance.reason));
    }
    let ending = measured.ending();
    if let Some(mut session) = session {
        if let Some(document) = measured.attachment() {
            session.attach(workload, &document)?;
        }
        for (name, document) in measured.extra_attachments() {
            session.attach(&name, &document)?;
        }
        let provenance = RunProvenance {
            envbench_version: envbench_core::TOOL_VERSION.to_string(),
            binary: envbench_probe::binary_identity(envbench_probe::current_binary()).ok(),
            // Set by `common_args` for every run; were it ever not, the run must not pass for one with defaults.
            options: common.options.clone().unwrap_or(Options::Tuned { changed: Vec::new() }),
        };
        session.attach(PROVENANCE_ATTACHMENT, &serde_json::to_value(&provenance)?)?;
        let (status, reason) = match (&ending, interrupted) {
            (_, true) => (
                RunStatus::Interrupted,
                Some("interrupted by a signal (SIGINT, SIGTERM, SIGHUP or SIGQUIT)".to_string()),
            ),
            (Ending::Failed(reason), false) => (RunStatus::Failed, Some(reason.clone())),
            (Ending::CompleteWithFailures(reason), false) => (RunStatus::Complete, Some(reason.clone())),
            (Ending::Complete, false) => (RunStatus::Complete, None),
        };
        session.finish(&records, series, status, reason)?;
    }
    for line in measured.epilogue() {
        eprintln!("{}", redact_secrets(&line));
    }
    let exit = if interrupted {
        ExitCode::from(130)
    } else {
        match ending {
            Ending::Complete => ExitCode::SUCCESS,
            Ending::Failed(reason) | Ending::CompleteWithFailures(reason) => {
                eprintln!("envbench: {}", redact_secrets(&reason));
                ExitCode::from(1)
            }
        }
    };
    Ok(Launched { exit, run: uuid })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_are_quoted_for_the_shell_and_keep_no_password() {
        let words = ["ranread", "--db", "postgres://bob:s3cret@db:5432/test", "--label", "vm one", "it's"];
        assert_eq!(
            quote_words(words.iter()),
            r"ranread --db postgres://bob:***@db:5432/test --label 'vm one' 'it'\''s'"
        );
    }

    #[test]
    fn labels_and_tags_must_be_printable_and_bounded() {
        assert!(check_name("--label", "physical-p3605").is_ok());
        let message = check_name("--label", "evil\x1b[2J").unwrap_err().to_string();
        assert!(message.contains(r"\x1b") && message.contains("control character"), "{message}");
        assert!(check_name("--label", &"x".repeat(100_000)).unwrap_err().to_string().contains("characters long"));
        assert!(parse_tags(&["a=1\r".into()]).is_err());
        assert!(parse_tags(&(0..100).map(|i| format!("k{i}=v")).collect::<Vec<_>>()).is_err());
    }
}

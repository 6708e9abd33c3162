//! `envbench compare`, `report` and `serve`: the answers practitioners take to IT, and the viewer (or results
//! service) over a store.

use crate::cli::{CompareArgs, ReportArgs, ServeArgs};
use crate::commands::{sides, store};
use crate::files::OutputFile;
use crate::output::print;
use crate::registry::WORKLOADS;
use crate::usage;
use envbench_report::Format;
use envbench_store::{RunFilter, StoreLocation};
use std::process::ExitCode;

pub fn compare(location: &StoreLocation, args: CompareArgs) -> anyhow::Result<ExitCode> {
    if args.sides.len() < 2 && !args.sides.iter().any(|s| sides::is_service_side(s)) {
        return Err(usage(
            "compare SIDE SIDE...: give two or more sides (the first is the baseline), or one results service URL \
             (https://host/) to compare your latest run with",
        ));
    }
    let resolved = sides::resolve(location, &args.sides, args.ca_cert.as_deref())?;
    let sides = &resolved.sides;
    let format = if args.json {
        Format::Json
    } else if args.markdown {
        Format::Markdown
    } else {
        Format::Text
    };
    let comparison = envbench_verdict::compare(sides, &WORKLOADS);
    let standings = resolved.standings()?;
    match format {
        Format::Json if !standings.is_empty() => {
            let mut document = serde_json::to_value(&comparison)?;
            document["standings"] = serde_json::to_value(&standings)?;
            print(&(serde_json::to_string_pretty(&document)? + "\n"));
        }
        _ => {
            let mut text = envbench_report::render(&comparison, format);
            text.push_str(&super::standings::standings_text(&standings, format == Format::Markdown));
            print(&text);
        }
    }
    // Runs with results but none the other side has: nothing was compared, which must not read as "no change".
    if comparison.rows.is_empty() && !comparison.unmatched.is_empty() {
        let workloads: std::collections::BTreeSet<&str> =
            comparison.unmatched.iter().map(|u| u.workload.as_str()).collect();
        if let Some(modes) = comparison.unmatched.iter().find(|u| u.is_other_mode()) {
            anyhow::bail!(
                "the sides have no result in common: {} results are in {}; compare runs measured in one mode",
                modes.workload,
                modes.reason
            );
        }
        anyhow::bail!(
            "the sides have no result in common ({} result{} of {} on one side only); compare runs of the same \
             workload, test and parameters",
            comparison.unmatched.len(),
            if comparison.unmatched.len() == 1 { "" } else { "s" },
            workloads.into_iter().collect::<Vec<_>>().join(", ")
        );
    }
    if let Some(threshold) = args.fail_if_worse {
        let gate = envbench_verdict::gate(&comparison.verdicts, threshold.fraction());
        for line in &gate.passes {
            eprintln!("gate: passed: {line}");
        }
        for line in &gate.failures {
            eprintln!("gate: FAILED: {line}");
        }
        if gate.failed() {
            eprintln!(
                "gate: --fail-if-worse {threshold}: {} workload(s) slower than allowed; exit 1",
                gate.failures.len()
            );
            return Ok(ExitCode::FAILURE);
        }
        eprintln!("gate: --fail-if-worse {threshold}: no workload significantly slower than allowed");
    }
    Ok(ExitCode::SUCCESS)
}

pub fn report(location: &StoreLocation, args: ReportArgs) -> anyhow::Result<ExitCode> {
    let output = OutputFile::check(&args.output, "-o", args.force, location)?;
    let texts = if args.sides.is_empty() {
        let store = store(location, false)?;
        let latest = store.list_runs(&RunFilter { limit: Some(1), ..Default::default() })?;
        let Some(run) = latest.first() else {
            return Err(usage(format!("{}: no runs to report on yet; run a workload first", location.display())));
        };
        vec![format!("run:{}", run.uuid)]
    } else {
        args.sides.clone()
    };
    let resolved = sides::resolve(location, &texts, args.ca_cert.as_deref())?;
    let html = envbench_report::render_report(&resolved.sides, &WORKLOADS);
    output.write(&html)?;
    if !args.json {
        eprintln!("wrote {}", args.output.display());
        return Ok(ExitCode::SUCCESS);
    }
    let sides = &resolved.sides;
    let mut document = serde_json::json!({
        "report": args.output.display().to_string(),
        "bytes": html.len(),
        "sides": sides.iter().map(|side| serde_json::json!({
            "name": side.name,
            "runs": side.runs.iter().map(|run| run.summary.uuid.as_str()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
    });
    if sides.len() >= 2 {
        document["comparison"] = serde_json::to_value(envbench_verdict::compare(sides, &WORKLOADS))?;
    }
    print(&(envbench_core::model::redact_secrets(&serde_json::to_string_pretty(&document)?) + "\n"));
    Ok(ExitCode::SUCCESS)
}

/// The smallest and the largest `--max-upload-size`: an upload of one run of a quick suite is tens of kilobytes, and
/// the service holds a body in memory while it checks it.
const UPLOAD_SIZE_RANGE: (u64, u64) = (64 << 10, 4 << 30);

pub fn serve(location: &StoreLocation, args: ServeArgs) -> anyhow::Result<ExitCode> {
    let upload = args.max_upload_size.bytes();
    if !(UPLOAD_SIZE_RANGE.0..=UPLOAD_SIZE_RANGE.1).contains(&upload) {
        return Err(usage(format!(
            "--max-upload-size {}: give a size from {} to {}",
            args.max_upload_size,
            envbench_core::ByteSize(UPLOAD_SIZE_RANGE.0),
            envbench_core::ByteSize(UPLOAD_SIZE_RANGE.1)
        )));
    }
    for name in &args.host_names {
        let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']');
        if name.is_empty() || name.len() > 253 || !name.chars().all(fits) {
            return Err(usage(format!(
                "--host-name '{}': give the host name clients use (letters, digits, dots and hyphens, or an address)",
                envbench_core::text::printable(name)
            )));
        }
    }
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(certificate), Some(key)) => {
            let certificate_pem =
                crate::files::read_small_file(certificate, "--tls-cert", crate::files::PEM_MAX_BYTES)?;
            let key_pem = crate::files::read_small_file(key, "--tls-key", crate::files::PEM_MAX_BYTES)?;
            Some(
                envbench_service::load_tls(certificate, &certificate_pem, key, &key_pem)
                    .map_err(|e| usage(e.to_string()))?,
            )
        }
        _ => None,
    };
    // Fail now, not on the first page view, when the store is missing or not an envbench store. A service's store
    // is made when missing: runs arrive by upload.
    if args.accept_uploads {
        drop(envbench_store::open_upload_store(location, true)?);
    } else {
        drop(store(location, false)?);
    }
    let listener = envbench_service::bind(&args.listen).map_err(|e| usage(e.to_string()))?;
    let address = listener.local_addr()?;
    if !envbench_service::is_loopback(&address) {
        eprintln!(
            "warning: listening on {address}, which other machines can reach: anyone on the network can read these \
             results (read-only). Use --listen 127.0.0.1:8080 to keep them on this machine."
        );
    }
    let scheme = if tls.is_some() { "https" } else { "http" };
    let uploads = args.accept_uploads.then(|| envbench_service::Limits {
        max_body_bytes: args.max_upload_size.bytes(),
        max_runs_per_upload: usize::try_from(args.max_runs_per_upload).unwrap_or(usize::MAX),
        max_uploads_per_hour: args.max_uploads_per_hour,
    });
    let api = envbench_service::api::router(location.clone(), WORKLOADS, uploads);
    let extras = envbench_service::Extras { api: Some(api), hosts: args.host_names.clone(), tls };
    if args.accept_uploads {
        eprintln!(
            "envbench results service for {} on {scheme}://{address}/: uploads at /api/v1/runs with a token (envbench \
             results token create); pages read-only{}; Ctrl-C stops it",
            location.display(),
            if scheme == "http" { "; plain HTTP, so serve it behind a TLS reverse proxy" } else { "" }
        );
    } else {
        eprintln!("envbench viewer for {} on {scheme}://{address}/ (read-only; Ctrl-C stops it)", location.display());
    }
    envbench_service::serve_blocking(location.clone(), listener, WORKLOADS, extras)?;
    Ok(ExitCode::SUCCESS)
}

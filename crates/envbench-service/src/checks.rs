//! The server's re-checks of an uploaded run: everything it can recompute, it recomputes, and a run that does not
//! match what its client stated is refused with the reason. Nothing is corrected or dropped on the way in.

use crate::upload::{UploadedRun, headlines, result_flags, workload_versions};
use envbench_core::model::{RunStatus, canonical_json, parse_utc, sha256_hex};
use envbench_core::text::check_name;

/// How far in the future a run's times may lie (clocks disagree a little).
pub const CLOCK_SKEW_S: i64 = 300;

/// The most samples one result may carry.
pub const MAX_SAMPLES: usize = 1_000_000;

/// Check one uploaded run. `fingerprint` is the run's fingerprint exactly as it was sent (its hash is taken over
/// that, not over what this server's types would make of it); `now_s` is the server's clock; `workloads` are the
/// workloads this service knows.
pub fn check_upload(
    upload: &UploadedRun,
    fingerprint: &serde_json::Value,
    now_s: i64,
    workloads: &[&str],
) -> Result<(), String> {
    let run = &upload.run;
    let s = &run.summary;
    let stated = &upload.provenance;
    let id = uuid::Uuid::parse_str(&s.uuid).map_err(|_| format!("'{}' is not a run id (a UUID)", s.uuid))?;
    // One run, one id: braced, `urn:uuid:`, 32-hex and upper-case forms would store one UUID as several runs, and
    // answer 404 by the id envbench shows.
    if id.hyphenated().to_string() != s.uuid {
        return Err(format!(
            "'{}' is not a run id as envbench writes it ({}): lower-case, hyphenated",
            envbench_core::text::truncate(&s.uuid, 64),
            id.hyphenated()
        ));
    }
    if s.status == RunStatus::Running {
        return Err("the run is still running; upload it once it has ended".into());
    }
    // The version first: a newer envbench's runs may hold fields this server would not keep.
    if !version_at_most(&run.tool_version, envbench_core::TOOL_VERSION) {
        return Err(format!(
            "made by envbench {}, newer than this service's {}: the service would not keep every field of it; \
             the service must be upgraded first",
            run.tool_version,
            envbench_core::TOOL_VERSION
        ));
    }
    if stated.envbench_version != run.tool_version {
        return Err(format!(
            "its provenance says envbench {} and the run says {}",
            stated.envbench_version, run.tool_version
        ));
    }
    // Times: parseable, in order, not in the future.
    let started =
        parse_utc(&s.started_at).ok_or_else(|| format!("its start time '{}' is not a UTC time", s.started_at))?;
    let ended = match &s.ended_at {
        Some(text) => parse_utc(text).ok_or_else(|| format!("its end time '{text}' is not a UTC time"))?,
        None => return Err("an ended run without an end time".into()),
    };
    if ended < started {
        return Err(format!("it ended ({}) before it started ({})", s.ended_at.as_deref().unwrap_or(""), s.started_at));
    }
    if ended > now_s + CLOCK_SKEW_S {
        return Err(format!(
            "its end time {} lies in the future by this server's clock; check the clock of the host that ran it",
            s.ended_at.as_deref().unwrap_or("")
        ));
    }
    // The environment: the hash of the fingerprint as sent.
    let hash = sha256_hex(canonical_json(fingerprint).as_bytes());
    if hash != run.fingerprint_hash || hash != stated.fingerprint_sha256 {
        return Err(format!(
            "its fingerprint hash does not match its fingerprint (stated {}, computed {hash}): the environment was \
             changed after the run",
            run.fingerprint_hash
        ));
    }
    if stated.binary_sha256.len() != 64 || !stated.binary_sha256.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(format!("'{}' is not the SHA-256 of a binary", stated.binary_sha256));
    }
    // Names people will read on the service's pages.
    for (what, text) in [("its workload", Some(&s.workload)), ("its label", s.label.as_ref())] {
        if let Some(text) = text {
            check_name(what, text)?;
        }
    }
    for (key, value) in &s.tags {
        check_name("a tag", &format!("{key}={value}"))?;
    }
    if !workloads.contains(&s.workload.as_str()) {
        return Err(format!("'{}' is not a workload this service knows ({})", s.workload, workloads.join(", ")));
    }
    if run.results.is_empty() {
        return Err("the run has no results to share".into());
    }
    // Every result: a workload known here, its parameters' hash, samples that are numbers.
    for result in &run.results {
        let r = &result.record;
        let named = format!("{} {}", r.test_id, r.metric);
        if !workloads.contains(&r.workload.as_str()) {
            return Err(format!("{named}: '{}' is not a workload this service knows", r.workload));
        }
        for (what, text) in [("a test", &r.test_id), ("a metric", &r.metric), ("a unit", &r.unit)] {
            check_name(what, text).map_err(|e| format!("{named}: {e}"))?;
        }
        if result.parameters_hash != r.parameters_hash() {
            return Err(format!("{named}: its parameters' hash does not match its parameters"));
        }
        if r.samples.is_empty() || r.samples.len() > MAX_SAMPLES {
            return Err(format!("{named}: {} samples; a result has from 1 to {MAX_SAMPLES}", r.samples.len()));
        }
        if let Some(bad) = r.samples.iter().find(|v| !v.is_finite() || v.abs() > 1e15) {
            return Err(format!("{named}: the sample {bad} is out of range"));
        }
    }
    // The headlines: one per result, with its sample count, and the median recomputed from the samples.
    let computed = headlines(run);
    if upload.headlines.len() != computed.len() {
        return Err(format!(
            "{} headlines for {} results: state one per result",
            upload.headlines.len(),
            computed.len()
        ));
    }
    for (stated, computed) in upload.headlines.iter().zip(&computed) {
        let named = format!("{} {}", computed.test_id, computed.metric);
        if (&stated.test_id, &stated.metric, &stated.parameters_hash)
            != (&computed.test_id, &computed.metric, &computed.parameters_hash)
        {
            return Err(format!(
                "the headline of {named} is stated for {} {}: state them in the results' order",
                stated.test_id, stated.metric
            ));
        }
        if stated.samples != computed.samples {
            return Err(format!("{named}: {} samples stated, {} sent", stated.samples, computed.samples));
        }
        if stated.median.to_bits() != computed.median.to_bits() {
            return Err(format!(
                "{named}: the headline {} does not match the median of its samples, {}",
                stated.median, computed.median
            ));
        }
    }
    if stated.workload_versions != workload_versions(run) {
        return Err(format!(
            "its provenance states workload versions {:?} its results do not have",
            stated.workload_versions
        ));
    }
    let flags = result_flags(run);
    if stated.flags != flags {
        return Err(format!("its provenance states the flags {:?}; its results carry {:?}", stated.flags, flags));
    }
    // The options as the run kept them when it ran.
    let kept = crate::upload::kept_provenance(run)?;
    if kept.options != stated.options || kept.envbench_version != run.tool_version {
        return Err(format!(
            "its provenance states options {} and envbench {}; the run kept {} and {}",
            stated.options.words(),
            stated.envbench_version,
            kept.options.words(),
            kept.envbench_version
        ));
    }
    Ok(())
}

/// True when version `a` is at most `b` (dotted numbers; anything after a `-` is ignored).
fn version_at_most(a: &str, b: &str) -> bool {
    let parts = |v: &str| -> Vec<u64> {
        v.split('-').next().unwrap_or("").split('.').map(|p| p.parse().unwrap_or(u64::MAX)).collect()
    };
    parts(a) <= parts(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::upload::UploadedRun;
    use envbench_core::fingerprint::Fingerprint;
    use envbench_core::model::{Direction, RecordSource, RunSummary, StoredResult, StoredRun};
    use envbench_core::provenance::{BinaryIdentity, Options, PROVENANCE_ATTACHMENT, RunProvenance};

    const NOW: i64 = 1_800_000_000;

    /// An honest upload of a run with one result of three samples.
    fn honest() -> (UploadedRun, serde_json::Value) {
        let fingerprint = Fingerprint::default();
        let record = RecordSource { workload: "exec", version: 1 }.record(
            "build",
            &serde_json::json!({"name": "job"}),
            "elapsed",
            "s",
            Direction::LowerIsBetter,
            vec![1.0, 3.0, 2.0],
        );
        let provenance = RunProvenance {
            envbench_version: envbench_core::TOOL_VERSION.into(),
            binary: Some(BinaryIdentity { size_bytes: 1, ends_sha256: "x".into() }),
            options: Options::Default { profile: "defaults".into() },
        };
        let run = StoredRun {
            summary: RunSummary {
                uuid: "3f2b6f4e-8a53-4c43-9d1a-0c8e6f1b2a90".into(),
                workload: "exec".into(),
                label: Some("vm".into()),
                tags: Default::default(),
                host: None,
                started_at: "2027-01-15T08:00:00.000Z".into(),
                ended_at: Some("2027-01-15T08:01:00.000Z".into()),
                status: RunStatus::Complete,
                status_reason: None,
                result_count: 1,
                suite_id: None,
                disturbed: false,
            },
            command_line: "envbench exec".into(),
            tool_version: envbench_core::TOOL_VERSION.into(),
            fingerprint_hash: fingerprint.hash(),
            fingerprint: fingerprint.clone(),
            results: vec![StoredResult { parameters_hash: record.parameters_hash(), record }],
            series: None,
            attachments: [(PROVENANCE_ATTACHMENT.to_string(), serde_json::to_value(&provenance).unwrap())].into(),
        };
        let raw = serde_json::to_value(&fingerprint).unwrap();
        (UploadedRun::of(run, &"a".repeat(64)).unwrap(), raw)
    }

    fn refusal(change: impl Fn(&mut UploadedRun)) -> String {
        let (mut upload, raw) = honest();
        change(&mut upload);
        check_upload(&upload, &raw, NOW, &["exec"]).unwrap_err()
    }

    #[test]
    fn an_honest_upload_passes_and_each_mismatch_is_refused_with_its_reason() {
        let (upload, raw) = honest();
        assert_eq!(upload.headlines[0].median, 2.0);
        check_upload(&upload, &raw, NOW, &["exec"]).unwrap();
        type Change = Box<dyn Fn(&mut UploadedRun)>;
        let cases: Vec<(Change, &str)> = vec![
            (Box::new(|u| u.run.results[0].record.samples.push(9.0)), "3 samples stated, 4 sent"),
            (Box::new(|u| u.headlines[0].median = 2.5), "does not match the median"),
            (
                Box::new(|u| u.run.results[0].record.parameters = serde_json::json!({"name": "other"})),
                "parameters' hash",
            ),
            (Box::new(|u| u.run.results[0].record.samples[0] = f64::INFINITY), "out of range"),
            (Box::new(|u| u.run.results[0].record.flags.push("disturbed".into())), "carry [\"disturbed\"]"),
            (Box::new(|u| u.provenance.options = Options::Tuned { changed: vec!["--repeat".into()] }), "the run kept"),
            (Box::new(|u| u.run.tool_version = "999.0.0".into()), "newer than this service's"),
            (Box::new(|u| u.run.summary.status = RunStatus::Running), "still running"),
            (Box::new(|u| u.run.summary.uuid = "x".into()), "not a run id"),
            // Issue #54, E7: other spellings of a UUID.
            (Box::new(|u| u.run.summary.uuid = "{3f2b6f4e-8a53-4c43-9d1a-0c8e6f1b2a90}".into()), "lower-case, hyphen"),
            (Box::new(|u| u.run.summary.uuid = "urn:uuid:3f2b6f4e-8a53-4c43-9d1a-0c8e6f1b2a90".into()), "hyphenated"),
            (Box::new(|u| u.run.summary.uuid = "3f2b6f4e8a534c439d1a0c8e6f1b2a90".into()), "as envbench writes it"),
            (Box::new(|u| u.run.summary.uuid = "3F2B6F4E-8A53-4C43-9D1A-0C8E6F1B2A90".into()), "as envbench writes"),
            (Box::new(|u| u.run.summary.ended_at = Some("2027-01-15T07:00:00.000Z".into())), "before it started"),
            (Box::new(|u| u.run.summary.label = Some("a\u{1b}[2J".into())), "control character"),
            (Box::new(|u| u.run.summary.workload = "doom".into()), "not a workload this service knows"),
            (Box::new(|u| u.provenance.binary_sha256 = "abc".into()), "not the SHA-256 of a binary"),
            (
                Box::new(|u| {
                    u.provenance.workload_versions.insert("exec".into(), 7);
                }),
                "workload versions",
            ),
        ];
        for (change, reason) in cases {
            let refused = refusal(change);
            assert!(refused.contains(reason), "'{reason}' missing from: {refused}");
        }
        // Two days after the service's clock: in the future.
        let refused = refusal(|u| u.run.summary.ended_at = Some("2027-01-17T08:00:00.000Z".into()));
        assert!(refused.contains("in the future"), "{refused}");
    }

    /// Samples that take all of an f64's digits, an even count of them (the median is computed, not one of them):
    /// through JSON and back, the stated headline still equals the median of the samples, bit for bit.
    #[test]
    fn headlines_survive_json_exactly() {
        let (mut upload, raw) = honest();
        let mut value = 0.1f64;
        let samples: Vec<f64> = (0..4)
            .map(|i| {
                value = value * 1.618_033_988_749_895 + f64::from(i) / 3.0;
                value.sqrt() / 7.0
            })
            .collect();
        upload.run.results[0].record.samples = samples;
        upload.headlines = crate::upload::headlines(&upload.run);
        let text = serde_json::to_string(&upload).unwrap();
        let back: UploadedRun = serde_json::from_str(&text).unwrap();
        assert_eq!(back.run.results[0].record.samples, upload.run.results[0].record.samples);
        check_upload(&back, &raw, NOW, &["exec"]).unwrap();
    }

    #[test]
    fn versions_compare_by_number() {
        assert!(version_at_most("0.1.0", "0.1.0"));
        assert!(version_at_most("0.1.9", "0.1.10"));
        assert!(!version_at_most("0.2.0", "0.1.10"));
        assert!(!version_at_most("x", "0.1.0"));
    }
}

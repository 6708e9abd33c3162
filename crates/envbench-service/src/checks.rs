//! The server's re-checks of an uploaded run: everything it can recompute, it recomputes, and a run that does not
//! match what its client stated is refused with the reason. Nothing is corrected or dropped on the way in.

use crate::upload::{UploadedRun, headlines, result_flags, workload_versions};
use envbench_core::model::{RunStatus, canonical_json, parse_utc, sha256_hex};
use envbench_core::text::{check_name, check_text};

/// How far in the future a run's times may lie (clocks disagree a little).
pub const CLOCK_SKEW_S: i64 = 300;

/// The most samples one result may carry.
pub const MAX_SAMPLES: usize = 1_000_000;

/// The earliest start a run may have: envbench did not exist before 2020 (a year 0001 is a made-up time).
pub const EARLIEST_START_S: i64 = 1_577_836_800;

/// The longest command line a run may keep, in characters.
pub const MAX_COMMAND_CHARS: usize = 16_384;

/// The longest text a fingerprint, a status reason or an attachment may hold in one string, in characters.
pub const MAX_TEXT_CHARS: usize = 65_536;

/// How deeply an attachment may nest: envbench's own documents nest a few levels (a step's transactions' retries by
/// kind of error), and a parser walks every level.
pub const MAX_ATTACHMENT_DEPTH: usize = 16;

/// The smallest duration or rate other than zero a sample may be (a nanosecond, in seconds): below it is no
/// measurement, and a ratio against it is a number of hundreds of digits.
pub const SMALLEST_MEASURE: f64 = 1e-9;

/// True for a unit of time: its samples are durations or CPU times, never below zero.
fn is_time(unit: &str) -> bool {
    matches!(unit, "s" | "ms" | "us" | "µs" | "ns")
}

/// True for a unit of rate: its samples are counts per unit of time, never below zero.
fn is_rate(unit: &str) -> bool {
    unit.ends_with("/s") || unit.ends_with("/h") || matches!(unit, "IOPS" | "TPM" | "NOPM" | "qph")
}

/// Why a sample of `metric` in `unit` is not a measurement, or nothing. A time or a rate is never negative, and
/// never closer to zero than [`SMALLEST_MEASURE`] but zero; it is zero only where zero was measured (a step that used
/// no CPU, a test that stalled), never as an elapsed time: no step takes no time.
fn check_sample(metric: &str, unit: &str, value: f64) -> Result<(), String> {
    if !value.is_finite() || value.abs() > 1e15 || (value != 0.0 && !value.is_normal()) {
        return Err(format!("the sample {value:e} is out of range"));
    }
    if !(is_time(unit) || is_rate(unit)) {
        return Ok(());
    }
    let what = if is_time(unit) { "time" } else { "rate" };
    if value < 0.0 || (value > 0.0 && value < SMALLEST_MEASURE) {
        return Err(format!(
            "the sample {value:e} {unit} is no {what}: a {what} is zero or at least {SMALLEST_MEASURE:e}"
        ));
    }
    if value == 0.0 && metric == "elapsed" {
        return Err(format!("the sample 0 {unit} is no elapsed time: no step takes no time"));
    }
    Ok(())
}

/// The first field of an upload, as sent, that its types do not have (its path, `run.fingerprint.cpu.x`): what
/// `sent` holds and `kept` (the upload as typed, written back) does not. A null where the types leave a field out
/// is no field.
pub fn unknown_field(sent: &serde_json::Value, kept: &serde_json::Value) -> Option<String> {
    use serde_json::Value;
    match (sent, kept) {
        (Value::Object(sent), Value::Object(kept)) => sent.iter().find_map(|(key, value)| match kept.get(key) {
            Some(kept) => unknown_field(value, kept).map(|inner| format!("{key}.{inner}")),
            None if value.is_null() => None,
            None => Some(key.clone()),
        }),
        (Value::Array(sent), Value::Array(kept)) => sent
            .iter()
            .zip(kept)
            .enumerate()
            .find_map(|(index, (sent, kept))| unknown_field(sent, kept).map(|inner| format!("{index}.{inner}"))),
        _ => None,
    }
}

/// How deeply `value` nests: 0 for a number or a string, 1 for an array or object of them, and so on.
fn depth(value: &serde_json::Value) -> usize {
    match value {
        serde_json::Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        serde_json::Value::Object(fields) => 1 + fields.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// Every string in a JSON document that is not text as envbench writes it: the first one's path and why.
fn check_strings(what: &str, value: &serde_json::Value) -> Result<(), String> {
    use serde_json::Value;
    match value {
        Value::String(text) => check_text(what, text, MAX_TEXT_CHARS),
        Value::Array(items) => {
            items.iter().enumerate().try_for_each(|(index, item)| check_strings(&format!("{what}.{index}"), item))
        }
        Value::Object(fields) => fields.iter().try_for_each(|(key, item)| {
            let path = format!("{what}.{}", envbench_core::text::truncate(&envbench_core::text::printable(key), 40));
            check_text(&path, key, envbench_core::text::MAX_NAME_CHARS)?;
            check_strings(&path, item)
        }),
        _ => Ok(()),
    }
}

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
    if s.submitter.is_some() {
        return Err("it names its submitter: the service records who sent a run, from the token; leave it out".into());
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
    if started < EARLIEST_START_S {
        return Err(format!("its start time {} is before envbench existed: a made-up time", s.started_at));
    }
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
    if s.tags.len() > envbench_core::model::MAX_TAGS {
        return Err(format!("{} tags: a run carries at most {}", s.tags.len(), envbench_core::model::MAX_TAGS));
    }
    for (key, value) in &s.tags {
        check_name("a tag", &format!("{key}={value}"))?;
    }
    // Text people and terminals read: the host, the command line, the reasons, the fingerprint and attachments.
    if let Some(host) = &s.host {
        check_name("its host", host)?;
    }
    if let Some(hostname) = &run.fingerprint.os.hostname {
        check_name("its fingerprint's host name", hostname)?;
    }
    check_text("its command line", &run.command_line, MAX_COMMAND_CHARS)?;
    for (what, text) in [("its status reason", s.status_reason.as_ref()), ("its suite id", s.suite_id.as_ref())] {
        if let Some(text) = text {
            check_text(what, text, MAX_TEXT_CHARS)?;
        }
    }
    check_strings("its fingerprint", fingerprint)?;
    // Attachments are the documents envbench writes: its workload's own, a fleet's, and the provenance.
    let written =
        [s.workload.as_str(), envbench_core::provenance::PROVENANCE_ATTACHMENT, envbench_core::fleet::FLEET_ATTACHMENT];
    for (name, document) in &run.attachments {
        check_name("an attachment's name", name)?;
        if !written.contains(&name.as_str()) {
            return Err(format!(
                "an attachment '{name}': envbench writes only {} attachments to a {} run",
                written.join(", "),
                s.workload
            ));
        }
        if depth(document) > MAX_ATTACHMENT_DEPTH {
            return Err(format!(
                "its attachment {name} nests {} levels deep: envbench's nest at most {MAX_ATTACHMENT_DEPTH}",
                depth(document)
            ));
        }
        check_strings(&format!("its attachment {name}"), document)?;
    }
    if s.result_count != run.results.len() {
        return Err(format!("it states {} results and holds {}", s.result_count, run.results.len()));
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
        r.samples
            .iter()
            .try_for_each(|&value| check_sample(&r.metric, &r.unit, value))
            .map_err(|e| format!("{named}: {e}"))?;
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
                submitter: None,
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

    /// New samples for the run's one result (seconds), its headline stated to match.
    fn samples(upload: &mut UploadedRun, values: Vec<f64>) {
        upload.run.results[0].record.samples = values;
        upload.headlines = crate::upload::headlines(&upload.run);
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
            // Issue #54, E6: text fields, counts, times and samples.
            (Box::new(|u| u.run.summary.host = Some("h\u{1b}]0;x\u{7}".into())), "its host holds a control"),
            (Box::new(|u| u.run.summary.host = Some("h".repeat(200_000))), "keep it to"),
            (Box::new(|u| u.run.command_line = "envbench \u{1b}[2J run".into()), "command line holds a control"),
            (Box::new(|u| u.run.command_line = "x".repeat(20_000)), "it is at most 16384"),
            (Box::new(|u| u.run.summary.status_reason = Some("a\u{202e}b".into())), "reorders or breaks"),
            (Box::new(|u| u.run.summary.result_count = 7), "states 7 results and holds 1"),
            (Box::new(|u| u.run.summary.started_at = "0001-01-01T00:00:00.000Z".into()), "before envbench existed"),
            (Box::new(|u| u.run.summary.submitter = Some("alice".into())), "names its submitter"),
            (Box::new(|u| samples(u, vec![0.0, 1.0, 2.0])), "is no elapsed time"),
            (Box::new(|u| samples(u, vec![-1.0, 1.0, 2.0])), "is no time"),
            (Box::new(|u| samples(u, vec![1e-300, 1.0, 2.0])), "is no time"),
            (Box::new(|u| samples(u, vec![5e-324, 1.0, 2.0])), "out of range"),
            (
                Box::new(|u| {
                    let name = u.run.summary.workload.clone();
                    u.run.attachments.insert(name, serde_json::json!({"x": ["ok", "\u{1b}[31mred"]}));
                }),
                ".x.1 holds a control",
            ),
            (
                Box::new(|u| {
                    u.run.attachments.insert("notes".into(), serde_json::json!({"x": 1}));
                }),
                "an attachment 'notes': envbench writes only",
            ),
            (
                Box::new(|u| {
                    let mut nested = serde_json::json!(1);
                    for _ in 0..120 {
                        nested = serde_json::json!([nested]);
                    }
                    let name = u.run.summary.workload.clone();
                    u.run.attachments.insert(name, nested);
                }),
                "nests 120 levels deep",
            ),
            (
                Box::new(|u| {
                    for i in 0..65 {
                        u.run.summary.tags.insert(format!("k{i}"), "v".into());
                    }
                }),
                "65 tags: a run carries at most 64",
            ),
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
    fn rates_and_other_units_take_the_samples_they_can_have() {
        assert!(check_sample("iops", "IOPS", -1.0).unwrap_err().contains("is no rate"));
        assert!(check_sample("throughput", "queries/h", 1e-200).unwrap_err().contains("is no rate"));
        check_sample("iops", "IOPS", 12_000.0).unwrap();
        // What was measured as zero stays: a step that used no CPU, a test that stalled.
        check_sample("cpu_system", "s", 0.0).unwrap();
        check_sample("nopm", "NOPM", 0.0).unwrap();
        // A count or a share may be zero or below it; never a denormal.
        check_sample("share", "%", 0.0).unwrap();
        check_sample("errors", "errors", -1.0).unwrap();
        assert!(check_sample("share", "%", 5e-324).unwrap_err().contains("out of range"));
    }

    /// Issue #54, E6: a field the types do not have is found at any depth; a null the types leave out is none.
    #[test]
    fn unknown_fields_are_found_at_every_level() {
        let (upload, _) = honest();
        let kept = serde_json::to_value(&upload).unwrap();
        assert_eq!(unknown_field(&kept, &kept), None);
        let with = |pointer: &str, key: &str, value: serde_json::Value| {
            let mut sent = kept.clone();
            sent.pointer_mut(pointer).unwrap().as_object_mut().unwrap().insert(key.into(), value);
            unknown_field(&sent, &kept)
        };
        assert_eq!(with("", "extra", 1.into()), Some("extra".into()));
        assert_eq!(with("/run", "admin", true.into()), Some("run.admin".into()));
        assert_eq!(with("/run/fingerprint/cpu", "x", "y".into()), Some("run.fingerprint.cpu.x".into()));
        assert_eq!(with("/run/results/0", "bonus", 2.into()), Some("run.results.0.bonus".into()));
        assert_eq!(with("/run", "submitter", serde_json::Value::Null), None);
    }

    #[test]
    fn versions_compare_by_number() {
        assert!(version_at_most("0.1.0", "0.1.0"));
        assert!(version_at_most("0.1.9", "0.1.10"));
        assert!(!version_at_most("0.2.0", "0.1.10"));
        assert!(!version_at_most("x", "0.1.0"));
    }
}

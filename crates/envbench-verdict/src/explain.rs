//! Why a workload's change may have happened, in sentences: what differs between the two environments and governs
//! the workload (logical CPUs, memory, platform fields, what limits the process below its machine), and what the
//! single-threaded tests did; or, when nothing that governs it differs, where else to look.

use crate::environment::{EnvironmentField, LIMIT_FIELDS, limit_sentences};
use crate::rows::{ComparisonRow, is_cross_check};
use crate::side::Side;
use crate::words::{natural_cmp, speed_words};
use envbench_core::fingerprint::Fingerprint;
use envbench_core::stats::geometric_mean;
use envbench_core::workload::{Registry, Resource};

/// At most this many tests are named as evidence in one sentence.
const NAMED_TESTS: usize = 3;

/// What a side's machine offers, from its runs' fingerprints (the first run that knows).
pub(crate) struct Machine {
    logical_cpus: Option<u32>,
    memory_bytes: Option<u64>,
    /// The first run's fingerprint, for what limits the process (affinity, cgroup quotas).
    fingerprint: Fingerprint,
}

impl Machine {
    /// Held to fewer CPUs than the machine has, by affinity (taskset) or a cpuset: a choice the comparison is of.
    pub(crate) fn pinned(&self) -> bool {
        let limits = &self.fingerprint.limits;
        let threads = self.fingerprint.cpu.threads;
        [limits.affinity_cpus, limits.cpuset_cpus].into_iter().flatten().any(|cpus| threads.is_some_and(|t| cpus < t))
    }

    pub(crate) fn of(side: &Side) -> Machine {
        let fingerprints = || side.runs.iter().map(|r| &r.fingerprint);
        Machine {
            logical_cpus: fingerprints().find_map(|f| f.cpu.threads),
            memory_bytes: fingerprints().find_map(|f| f.memory.total_bytes),
            fingerprint: fingerprints().next().cloned().unwrap_or_default(),
        }
    }
}

/// The single-threaded tests of every workload for one side: their geometric-mean speed factor and the tests that
/// moved most, in the direction of the mean.
pub(crate) struct SerialEvidence {
    ratio: Option<f64>,
    named: Vec<String>,
}

/// The single-threaded tests of `workload` alone (an explanation names only the workload's own tests): their
/// speed factor together, and the ones that moved most that way.
pub(crate) fn serial_evidence(
    rows: &[ComparisonRow],
    workload: &str,
    side: usize,
    registry: &Registry,
) -> SerialEvidence {
    let mut seen: Vec<(&str, &str, &str)> = Vec::new();
    let mut tests: Vec<(String, f64)> = Vec::new();
    for row in rows.iter().filter(|r| {
        r.workload == workload
            && !is_cross_check(r)
            && registry.read_back(&r.workload).single_threaded(&r.test_id, &r.parameters)
    }) {
        // One figure per test: its first metric.
        let key = (row.workload.as_str(), row.test_id.as_str(), row.parameters_hash.as_str());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        if let Some(ratio) = row.cells.get(side).and_then(Option::as_ref).and_then(|c| c.change.as_ref()?.ratio) {
            tests.push((row.test_name(), ratio));
        }
    }
    let ratio = geometric_mean(&tests.iter().map(|(_, r)| *r).collect::<Vec<_>>());
    let slower = ratio.is_some_and(|r| r < 1.0);
    tests.sort_by(|a, b| {
        let key = |r: f64| if slower { r } else { -r };
        key(a.1).total_cmp(&key(b.1)).then_with(|| natural_cmp(&a.0, &b.0))
    });
    let named = tests
        .into_iter()
        .filter(|(_, r)| if slower { *r < 1.0 } else { *r > 1.0 })
        .take(NAMED_TESTS)
        .map(|(name, _)| name)
        .collect();
    SerialEvidence { ratio, named }
}

/// A field that differs between the baseline and one side: its name and the two values.
pub(crate) struct PairDifference {
    name: String,
    baseline: String,
    side: String,
}

/// The fields whose values differ between the baseline and `side` (not merely between some two sides).
pub(crate) fn pair_differences(environment: &[EnvironmentField], side: usize) -> Vec<PairDifference> {
    environment
        .iter()
        .filter_map(|field| {
            let (baseline, other) = (field.values.first()?, field.values.get(side)?);
            (baseline != other).then(|| PairDifference {
                name: field.name.clone(),
                baseline: baseline.clone(),
                side: other.clone(),
            })
        })
        .collect()
}

/// Memory sizes closer than this factor are the same for a verdict (the kernel's own reservations move MemTotal).
const SAME_MEMORY_WITHIN: f64 = 1.1;

/// Which environment fields speak to which resource.
fn resource_of(field: &str) -> Option<Resource> {
    match field {
        "CPU" | "Topology" | "SMT" | "Governor" | "NUMA nodes" => Some(Resource::Cpu),
        "Memory" | "Huge pages" | "Transparent huge pages" => Some(Resource::Memory),
        "Filesystem"
        | "Mount options"
        | "Device chain"
        | "Physical devices"
        | "Network storage"
        | "I/O limits"
        | "Memory-backed storage" => Some(Resource::Storage),
        "Usable CPUs" | "CPU affinity" | "CPU quota" | "Cpuset" => Some(Resource::Cpu),
        "Memory limit" => Some(Resource::Memory),
        _ => None,
    }
}

/// Fields that differ on every machine and explain nothing.
const NOT_A_DIFFERENCE: [&str; 1] = ["Host"];

/// Fields that count for every workload: where the machine runs.
const PLATFORM_FIELDS: [&str; 4] = ["Hypervisor", "Container", "Machine", "Kernel"];

/// How many times `b` is `a`, as words: `8x the`, `half the`, `25% more`, `25% less`.
fn times_words(a: f64, b: f64) -> String {
    let factor = b / a;
    if (factor - 0.5).abs() < 0.01 {
        "half the".to_string()
    } else if factor > 1.0 && factor < 1.95 {
        format!("{:.0}% more", (factor - 1.0) * 100.0)
    } else if factor < 1.0 && factor > 0.5 {
        format!("{:.0}% less", (1.0 - factor) * 100.0)
    } else if factor >= 1.0 {
        format!("{}x the", trimmed(factor))
    } else {
        format!("1/{} the", trimmed(1.0 / factor))
    }
}

/// A factor with one decimal, without a trailing `.0`.
fn trimmed(factor: f64) -> String {
    let text = format!("{factor:.1}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The sentences that may explain a workload's change, from what differs between the two environments and what
/// the single-threaded tests did.
pub(crate) fn explain(
    title: &str,
    changed_tests: usize,
    governed_by: &[Resource],
    machines: (&Machine, &Machine),
    letters: (&str, &str),
    serial: &SerialEvidence,
    differences: &[PairDifference],
) -> Vec<String> {
    let (base, other) = machines;
    let (a, b) = letters;
    let mut sentences = Vec::new();
    let counts = governed_by.contains(&Resource::Cpu);
    if counts {
        let cpus = match (base.logical_cpus, other.logical_cpus) {
            (Some(x), Some(y)) if x != y => {
                Some(format!("{b} has {} logical CPUs of {a} ({y} vs {x})", times_words(f64::from(x), f64::from(y))))
            }
            _ => None,
        };
        let serial_text = serial
            .ratio
            .filter(|r| (r - 1.0).abs() >= 0.05 && !serial.named.is_empty())
            .map(|r| format!("its single-threaded tests are {} ({})", speed_words(r), serial.named.join(", ")));
        let more_cpus = matches!((base.logical_cpus, other.logical_cpus), (Some(x), Some(y)) if y > x);
        let fewer_cpus = matches!((base.logical_cpus, other.logical_cpus), (Some(x), Some(y)) if y < x);
        let serial_slower = serial.ratio.is_some_and(|r| r < 1.0);
        match (cpus, serial_text) {
            (Some(cpus), Some(serial_text)) => {
                let joint = if (more_cpus && serial_slower) || (fewer_cpus && !serial_slower) { "but" } else { "and" };
                sentences.push(format!("{cpus}, {joint} {serial_text}."));
            }
            (Some(cpus), None) => sentences.push(format!("{cpus}.")),
            (None, Some(serial_text)) => sentences.push(format!("On {b}, {serial_text}.")),
            (None, None) => {}
        }
    }
    let relevant = |name: &str| match resource_of(name) {
        Some(resource) => governed_by.contains(&resource),
        None => PLATFORM_FIELDS.contains(&name),
    };
    let mut limited: Vec<Resource> = Vec::new();
    for field in differences {
        if !relevant(&field.name) || field.name == "Topology" {
            continue;
        }
        if LIMIT_FIELDS.contains(&field.name.as_str()) {
            limited.extend(resource_of(&field.name));
            continue;
        }
        if field.name == "Memory" {
            if let (Some(x), Some(y)) = (base.memory_bytes, other.memory_bytes) {
                let gib = |v: u64| v as f64 / (1u64 << 30) as f64;
                let factor = gib(y) / gib(x);
                if factor < SAME_MEMORY_WITHIN && factor > 1.0 / SAME_MEMORY_WITHIN {
                    continue;
                }
                let consequence = if factor > 1.0 {
                    "more of the data fits in its caches"
                } else {
                    "less of the data fits in its caches"
                };
                sentences.push(format!(
                    "{b} has {} memory of {a} ({:.0} vs {:.0} GiB): {consequence}.",
                    times_words(gib(x), gib(y)),
                    gib(y),
                    gib(x)
                ));
            }
            continue;
        }
        let shown = |v: &str| if v.is_empty() { "-".to_string() } else { v.to_string() };
        sentences.push(format!("{}: {} on {a}, {} on {b}.", field.name, shown(&field.baseline), shown(&field.side)));
    }
    // What holds either side below its machine, where that differs and governs the workload.
    for (letter, machine) in [(a, base), (b, other)] {
        for (resource, sentence) in limit_sentences(&machine.fingerprint, letter) {
            if limited.contains(&resource) {
                sentences.push(format!("{sentence}."));
            }
        }
    }
    if sentences.is_empty() && changed_tests > 0 {
        let others: Vec<&str> = differences
            .iter()
            .filter(|d| !NOT_A_DIFFERENCE.contains(&d.name.as_str()) && !relevant(&d.name))
            .map(|d| d.name.as_str())
            .collect();
        sentences.push(if others.is_empty() {
            "Nothing envbench fingerprints differs (same hardware and settings as far as it can see): look at load \
             from elsewhere, CPU steal in the sampler charts, or a change outside the fingerprint."
                .to_string()
        } else {
            format!(
                "Nothing that governs {} differs in the fingerprints (only {} differ{}, which {} not govern it): look \
                 at load from elsewhere, CPU steal in the sampler charts, or a change outside the fingerprint.",
                title,
                envbench_core::text::and_list(&others),
                if others.len() == 1 { "s" } else { "" },
                if others.len() == 1 { "does" } else { "do" }
            )
        });
    }
    sentences
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factors_in_words() {
        assert_eq!(times_words(2.0, 16.0), "8x the");
        assert_eq!(times_words(16.0, 8.0), "half the");
        assert_eq!(times_words(16.0, 4.0), "1/4 the");
        assert_eq!(times_words(16.0, 20.0), "25% more");
        assert_eq!(times_words(16.0, 12.0), "25% less");
    }
}

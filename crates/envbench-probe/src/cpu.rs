//! CPU topology, SMT, frequency governor, NUMA nodes and caches.

use crate::host::Host;
use envbench_core::fingerprint::{CacheInfo, CpuInfo};
use std::collections::BTreeSet;

/// Flags worth knowing when comparing database hosts.
const NOTABLE_FLAGS: &[&str] = &["hypervisor", "ht", "aes", "sse4_2", "avx2", "avx512f", "sha_ni"];

pub(crate) fn probe_cpu(host: &Host, unreadable: &mut Vec<String>) -> CpuInfo {
    let cpuinfo = host.read_noted("/proc/cpuinfo", unreadable).unwrap_or_default();
    let first_field = |key: &str| {
        cpuinfo.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            (name.trim() == key).then(|| value.trim().to_string())
        })
    };
    let model = first_field("model name").or_else(|| first_field("Model")).or_else(|| first_field("cpu model"));
    let vendor = first_field("vendor_id").or_else(|| first_field("CPU implementer"));
    let flags: BTreeSet<String> = first_field("flags")
        .or_else(|| first_field("Features"))
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect();
    let notable_flags = NOTABLE_FLAGS.iter().filter(|f| flags.contains(**f)).map(|f| f.to_string()).collect();

    let online = host.read("/sys/devices/system/cpu/online").map(|list| parse_cpu_list(&list)).unwrap_or_else(|| {
        unreadable.push("/sys/devices/system/cpu/online".into());
        (0..cpuinfo.lines().filter(|l| l.starts_with("processor")).count() as u32).collect()
    });
    let mut packages = BTreeSet::new();
    let mut cores = BTreeSet::new();
    for cpu in &online {
        let topology = format!("/sys/devices/system/cpu/cpu{cpu}/topology");
        let package: Option<i64> = host.read_number(format!("{topology}/physical_package_id"));
        let core: Option<i64> = host.read_number(format!("{topology}/core_id"));
        if let (Some(package), Some(core)) = (package, core) {
            packages.insert(package);
            cores.insert((package, core));
        }
    }
    let threads = (!online.is_empty()).then_some(online.len() as u32);
    let (sockets, core_count) = if cores.is_empty() {
        unreadable.push("/sys/devices/system/cpu/cpu*/topology".into());
        (None, None)
    } else {
        (Some(packages.len() as u32), Some(cores.len() as u32))
    };
    let threads_per_core = match (threads, core_count) {
        (Some(t), Some(c)) if c > 0 => Some(t / c),
        _ => None,
    };

    let smt_control = host.read("/sys/devices/system/cpu/smt/control");
    let smt_active = host.read("/sys/devices/system/cpu/smt/active").map(|v| v == "1");
    if smt_control.is_none() {
        unreadable.push("/sys/devices/system/cpu/smt".into());
    }
    let governor = host.read("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor");
    let nodes = host.list("/sys/devices/system/node");
    let node_count = nodes.iter().filter(|n| n.strip_prefix("node").is_some_and(|d| d.parse::<u32>().is_ok())).count();
    let numa_nodes = (node_count > 0).then_some(node_count as u32);

    CpuInfo {
        model,
        vendor,
        sockets,
        cores: core_count,
        threads,
        threads_per_core,
        smt_control,
        smt_active,
        governor,
        numa_nodes,
        caches: probe_caches(host),
        notable_flags,
    }
}

fn probe_caches(host: &Host) -> Vec<CacheInfo> {
    let base = "/sys/devices/system/cpu/cpu0/cache";
    let mut caches: Vec<CacheInfo> = host
        .list(base)
        .into_iter()
        .filter(|name| name.starts_with("index"))
        .filter_map(|index| {
            let dir = format!("{base}/{index}");
            Some(CacheInfo {
                level: host.read_number(format!("{dir}/level"))?,
                kind: host.read(format!("{dir}/type"))?,
                size_bytes: parse_cache_size(&host.read(format!("{dir}/size"))?)?,
                shared_by_cpus: host.read(format!("{dir}/shared_cpu_list")).map(|l| parse_cpu_list(&l).len() as u32),
            })
        })
        .collect();
    caches.sort_by(|a, b| (a.level, &a.kind).cmp(&(b.level, &b.kind)));
    caches
}

/// `32K`, `1024K`, `32M` as sysfs writes cache sizes.
fn parse_cache_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, multiplier) = match text.chars().last()? {
        'K' => (&text[..text.len() - 1], 1 << 10),
        'M' => (&text[..text.len() - 1], 1 << 20),
        'G' => (&text[..text.len() - 1], 1 << 30),
        _ => (text, 1),
    };
    number.parse::<u64>().ok().map(|n| n * multiplier)
}

/// A kernel CPU list such as `0-3,8,10-11`.
pub(crate) fn parse_cpu_list(text: &str) -> Vec<u32> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                if let (Ok(a), Ok(b)) = (a.parse::<u32>(), b.parse::<u32>()) {
                    cpus.extend(a..=b);
                }
            }
            None => cpus.extend(part.parse::<u32>().ok()),
        }
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_parse() {
        assert_eq!(parse_cpu_list("0-3,8,10-11\n"), vec![0, 1, 2, 3, 8, 10, 11]);
        assert_eq!(parse_cpu_list("0"), vec![0]);
        assert!(parse_cpu_list("").is_empty());
    }

    #[test]
    fn cache_sizes_parse() {
        assert_eq!(parse_cache_size("32K"), Some(32 << 10));
        assert_eq!(parse_cache_size("16M"), Some(16 << 20));
        assert_eq!(parse_cache_size("512"), Some(512));
    }
}

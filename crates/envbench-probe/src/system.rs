//! Memory and operating system identity.

use crate::host::Host;
use envbench_core::fingerprint::{MemoryInfo, OsInfo};

pub(crate) fn probe_memory(host: &Host, unreadable: &mut Vec<String>) -> MemoryInfo {
    let meminfo = host.read_noted("/proc/meminfo", unreadable).unwrap_or_default();
    let field = |key: &str| -> Option<u64> {
        meminfo.lines().find_map(|line| {
            let (name, rest) = line.split_once(':')?;
            if name.trim() != key {
                return None;
            }
            let mut words = rest.split_whitespace();
            let number: u64 = words.next()?.parse().ok()?;
            Some(if words.next() == Some("kB") { number * 1024 } else { number })
        })
    };
    MemoryInfo {
        total_bytes: field("MemTotal"),
        hugepages_total: field("HugePages_Total"),
        hugepage_size_bytes: field("Hugepagesize"),
        transparent_hugepages: host
            .read("/sys/kernel/mm/transparent_hugepage/enabled")
            .and_then(|t| selected_choice(&t)),
    }
}

pub(crate) fn probe_os(host: &Host, unreadable: &mut Vec<String>) -> OsInfo {
    let distribution = host
        .read("/etc/os-release")
        .or_else(|| host.read("/usr/lib/os-release"))
        .and_then(|text| os_release_field(&text, "PRETTY_NAME").or_else(|| os_release_field(&text, "NAME")));
    if distribution.is_none() {
        unreadable.push("/etc/os-release".into());
    }
    OsInfo {
        kernel: host.read_noted("/proc/sys/kernel/osrelease", unreadable),
        distribution,
        hostname: host.read_noted("/proc/sys/kernel/hostname", unreadable),
    }
}

fn os_release_field(text: &str, key: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once('=')?;
        (name.trim() == key).then(|| value.trim().trim_matches('"').trim_matches('\'').to_string())
    })
}

/// The bracketed choice in a sysfs selector such as `always [madvise] never`.
pub(crate) fn selected_choice(text: &str) -> Option<String> {
    let start = text.find('[')?;
    let end = text[start..].find(']')? + start;
    Some(text[start + 1..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bracketed_choice_is_the_selected_one() {
        assert_eq!(selected_choice("always [madvise] never").as_deref(), Some("madvise"));
        assert_eq!(selected_choice("none [mq-deadline] kyber bfq").as_deref(), Some("mq-deadline"));
        assert_eq!(selected_choice("none"), None);
    }

    #[test]
    fn os_release_values_lose_quotes() {
        let text = "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n";
        assert_eq!(os_release_field(text, "PRETTY_NAME").as_deref(), Some("Debian GNU/Linux 12 (bookworm)"));
    }
}

//! The whole fingerprint of a machine, from each probe.

use crate::host::Host;
use crate::storage::{ProbeError, probe_storage};
use crate::{cpu, limits, system, virt};
use envbench_core::fingerprint::Fingerprint;
use std::path::Path;

/// Probe everything about the machine, and the storage under `path` when given.
pub fn fingerprint(host: &Host, path: Option<&Path>) -> Result<Fingerprint, ProbeError> {
    let mut unreadable = Vec::new();
    let storage = match path {
        Some(path) => Some(probe_storage(host, path, &mut unreadable)?),
        None => None,
    };
    let cpu = cpu::probe_cpu(host, &mut unreadable);
    let limits = limits::probe_limits(host, cpu.threads, storage.as_ref(), &mut unreadable);
    let fingerprint = Fingerprint {
        cpu,
        memory: system::probe_memory(host, &mut unreadable),
        os: system::probe_os(host, &mut unreadable),
        virtualization: virt::probe_virtualization(host, &mut unreadable),
        storage,
        limits,
        unreadable: {
            unreadable.sort();
            unreadable.dedup();
            unreadable
        },
    };
    Ok(fingerprint)
}

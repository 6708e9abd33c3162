//! Environment fingerprint and OS sampler.
//!
//! This crate reads the machine: CPU topology and SMT state, memory, OS identity, hypervisor and container
//! (systemd-detect-virt's ordered checks), the storage stack under a data directory, following `st_dev` through
//! `/sys/dev/block` down partitions, device-mapper and md layers to each physical device (and whether RAM serves it),
//! and what limits the process (CPU affinity and the cgroup v2 or v1 limits on CPU, memory and I/O). It also owns the
//! background sampler that turns `/proc/diskstats` and `/proc/stat` into iostat-style figures during a run, and
//! records who else competed for the machine (pressure stall information, steal, other processes' CPU).
//!
//! Every read goes through a [`Host`] rooted at `/` on a live machine or at a fixture tree in tests, so each probe can be
//! checked against fake `/sys` and `/proc` trees. It produces `envbench-core` types and never stores or prints them;
//! the `sysinfo` workload the driver registers ([`SYSINFO`]) renders a fingerprint for people.

mod binary;
mod cpu;
mod fingerprint;
mod host;
mod limits;
mod live;
mod mountinfo;
mod sampler;
mod storage;
pub mod sysinfo;
mod system;
mod virt;

pub use binary::{binary_identity, current_binary, file_sha256};
pub use fingerprint::fingerprint;
pub use host::{CpuidInfo, Host};
pub use live::MetricsEndpoint;
pub use mountinfo::{MountEntry, parse_mountinfo};
pub use sampler::{PRESSURE_MISSING_NOTE, RunCounters, Sampler, SamplerOptions, parse_pressure};
pub use storage::{ProbeError, probe_storage, sampled_devices};
pub use sysinfo::SYSINFO;

//! Where probes read from: the live machine or a fixture tree.

use std::fs;
use std::path::{Path, PathBuf};

/// What CPUID says about a hypervisor: the hypervisor-present bit (leaf 1, ECX bit 31) and the vendor string of leaf
/// 0x40000000.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuidInfo {
    pub hypervisor_bit: bool,
    pub hypervisor_vendor: Option<String>,
}

impl CpuidInfo {
    /// Ask the processor we run on.
    #[cfg(target_arch = "x86_64")]
    pub fn from_cpu() -> CpuidInfo {
        use std::arch::x86_64::__cpuid;
        // SAFETY: CPUID is available on every x86_64 processor.
        let leaf1 = __cpuid(1);
        let hypervisor_bit = leaf1.ecx & (1 << 31) != 0;
        if !hypervisor_bit {
            return CpuidInfo { hypervisor_bit, hypervisor_vendor: None };
        }
        // SAFETY: as above; leaf 0x40000000 is reserved for hypervisors when the bit is set.
        let leaf = __cpuid(0x4000_0000);
        let mut bytes = Vec::with_capacity(12);
        for word in [leaf.ebx, leaf.ecx, leaf.edx] {
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        let vendor = String::from_utf8_lossy(&bytes).trim_end_matches('\0').to_string();
        CpuidInfo { hypervisor_bit, hypervisor_vendor: (!vendor.is_empty()).then_some(vendor) }
    }

    /// Other architectures have no CPUID; the remaining checks decide.
    #[cfg(not(target_arch = "x86_64"))]
    pub fn from_cpu() -> CpuidInfo {
        CpuidInfo::default()
    }
}

/// A machine to probe: a root directory under which `/proc`, `/sys`, `/etc` and `/run` are read, plus the two facts
/// that do not live in files (CPUID and the `container` environment variable).
#[derive(Clone, Debug)]
pub struct Host {
    root: PathBuf,
    /// CPUID facts; `None` when unknown (fixtures that do not provide a `cpuid` file).
    pub cpuid: Option<CpuidInfo>,
    /// The value of `$container` as systemd's container managers set it.
    pub container_env: Option<String>,
    /// True for the live machine: paths given by the user are real and can be stat'ed.
    pub live: bool,
}

impl Host {
    /// The machine we run on.
    pub fn live() -> Host {
        Host {
            root: PathBuf::from("/"),
            cpuid: Some(CpuidInfo::from_cpu()),
            container_env: std::env::var("container").ok().filter(|v| !v.is_empty()),
            live: true,
        }
    }

    /// A fixture tree. A file `cpuid` at its root holds the hypervisor vendor string (empty: bit set, no vendor; absent:
    /// no hypervisor bit); a file `container-env` holds `$container`.
    pub fn fixture(root: impl Into<PathBuf>) -> Host {
        let root = root.into();
        let cpuid = fs::read_to_string(root.join("cpuid")).ok().map(|text| {
            let vendor = text.trim_end_matches('\n').to_string();
            CpuidInfo { hypervisor_bit: true, hypervisor_vendor: (!vendor.is_empty()).then_some(vendor) }
        });
        let container_env = fs::read_to_string(root.join("container-env")).ok().map(|t| t.trim().to_string());
        Host { root, cpuid: Some(cpuid.unwrap_or_default()), container_env, live: false }
    }

    /// The real location of an absolute machine path.
    pub fn path(&self, machine_path: impl AsRef<Path>) -> PathBuf {
        let path = machine_path.as_ref();
        self.root.join(path.strip_prefix("/").unwrap_or(path))
    }

    /// The contents of a file, trimmed; `None` when absent or unreadable.
    pub fn read(&self, machine_path: impl AsRef<Path>) -> Option<String> {
        fs::read_to_string(self.path(machine_path)).ok().map(|s| s.trim().to_string())
    }

    /// The contents of a file, or a note in `unreadable` when it exists on most machines but cannot be read here.
    pub fn read_noted(&self, machine_path: &str, unreadable: &mut Vec<String>) -> Option<String> {
        let value = self.read(machine_path);
        if value.is_none() {
            unreadable.push(machine_path.to_string());
        }
        value
    }

    /// A file parsed as a number.
    pub fn read_number<T: std::str::FromStr>(&self, machine_path: impl AsRef<Path>) -> Option<T> {
        self.read(machine_path)?.parse().ok()
    }

    /// True when the path exists.
    pub fn exists(&self, machine_path: impl AsRef<Path>) -> bool {
        self.path(machine_path).exists()
    }

    /// The names in a directory, sorted; empty when absent.
    pub fn list(&self, machine_path: impl AsRef<Path>) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.path(machine_path))
            .map(|entries| {
                entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Resolve a machine path through its symlinks, returning a machine path (relative to the root again).
    pub fn resolve(&self, machine_path: impl AsRef<Path>) -> Option<PathBuf> {
        let real = fs::canonicalize(self.path(machine_path)).ok()?;
        let root = fs::canonicalize(&self.root).ok()?;
        let inside = real.strip_prefix(&root).ok()?;
        Some(Path::new("/").join(inside))
    }
}

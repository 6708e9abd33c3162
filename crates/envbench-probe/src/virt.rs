//! Hypervisor and container detection, in the order systemd-detect-virt uses.
//!
//! Hypervisor: DMI strings first, trusting at once the vendors whose DMI never lies about being virtual (Oracle, Xen,
//! Amazon); then `/proc/xen`; then CPUID (hypervisor bit and the vendor leaf 0x40000000); then the other DMI answers;
//! then `/sys/hypervisor/type`; then the device tree. Container: `/run/systemd/container`, `$container`,
//! `/run/.containerenv`, `/.dockerenv`, OpenVZ and WSL markers. The two are reported separately: a container in a VM
//! has both.

use crate::host::Host;
use envbench_core::fingerprint::Virtualization;

/// DMI substrings and the hypervisor they mean (systemd's table).
const DMI_VENDORS: &[(&str, &str)] = &[
    ("KVM", "kvm"),
    ("OpenStack", "kvm"),
    ("KubeVirt", "kvm"),
    ("Amazon EC2", "amazon"),
    ("QEMU", "qemu"),
    ("VMware", "vmware"),
    ("VMW", "vmware"),
    ("innotek GmbH", "oracle"),
    ("VirtualBox", "oracle"),
    ("Oracle Corporation", "oracle"),
    ("Xen", "xen"),
    ("Bochs", "bochs"),
    ("Parallels", "parallels"),
    ("BHYVE", "bhyve"),
    ("Hyper-V", "microsoft"),
    ("Apple Virtualization", "apple"),
    ("Google Compute Engine", "google"),
];

const DMI_FIELDS: &[&str] = &["product_name", "sys_vendor", "board_vendor", "bios_vendor", "product_version"];

/// CPUID vendor strings (leaf 0x40000000) and the hypervisor they mean.
const CPUID_VENDORS: &[(&str, &str)] = &[
    ("XenVMMXenVMM", "xen"),
    ("KVMKVMKVM", "kvm"),
    ("Linux KVM Hv", "kvm"),
    ("TCGTCGTCGTCG", "qemu"),
    ("VMwareVMware", "vmware"),
    ("Microsoft Hv", "microsoft"),
    ("bhyve bhyve ", "bhyve"),
    ("QNXQVMBSQG", "qnx"),
    ("ACRNACRNACRN", "acrn"),
    ("SRESRESRESRE", "sre"),
    ("Apple VZ", "apple"),
];

pub(crate) fn probe_virtualization(host: &Host, unreadable: &mut Vec<String>) -> Virtualization {
    let dmi_dir = "/sys/class/dmi/id";
    if !host.exists(dmi_dir) {
        unreadable.push(dmi_dir.into());
    }
    let product_name = host.read(format!("{dmi_dir}/product_name")).filter(|s| !s.is_empty());
    let sys_vendor = host.read(format!("{dmi_dir}/sys_vendor")).filter(|s| !s.is_empty());
    let (hypervisor, hypervisor_source) = match detect_hypervisor(host) {
        Some((name, source)) => (Some(name), Some(source)),
        None => (None, None),
    };
    let (container, container_source) = match detect_container(host) {
        Some((name, source)) => (Some(name), Some(source)),
        None => (None, None),
    };
    Virtualization { hypervisor, hypervisor_source, container, container_source, product_name, sys_vendor }
}

fn detect_dmi(host: &Host) -> Option<(String, String)> {
    for field in DMI_FIELDS {
        let Some(value) = host.read(format!("/sys/class/dmi/id/{field}")) else { continue };
        for (needle, name) in DMI_VENDORS {
            if value.starts_with(needle) {
                return Some((name.to_string(), format!("dmi:{field}")));
            }
        }
        // Hyper-V shows as a Microsoft "Virtual Machine".
        if *field == "sys_vendor" && value.starts_with("Microsoft Corporation") {
            let product = host.read("/sys/class/dmi/id/product_name").unwrap_or_default();
            if product.starts_with("Virtual Machine") {
                return Some(("microsoft".into(), "dmi:sys_vendor".into()));
            }
        }
    }
    None
}

fn detect_hypervisor(host: &Host) -> Option<(String, String)> {
    let dmi = detect_dmi(host);
    if let Some((name, _)) = &dmi
        && matches!(name.as_str(), "oracle" | "xen" | "amazon")
    {
        return dmi;
    }
    if host.exists("/proc/xen") {
        // dom0 is the host, not a guest.
        let capabilities = host.read("/proc/xen/capabilities").unwrap_or_default();
        if !capabilities.contains("control_d") {
            return Some(("xen".into(), "/proc/xen".into()));
        }
    }
    if let Some(cpuid) = &host.cpuid
        && cpuid.hypervisor_bit
    {
        let vendor = cpuid.hypervisor_vendor.clone().unwrap_or_default();
        let name =
            CPUID_VENDORS.iter().find(|(needle, _)| vendor.starts_with(needle)).map(|(_, name)| name.to_string());
        // An unknown CPUID vendor loses to a DMI answer but is still a VM.
        return match (name, dmi) {
            (Some(name), _) => Some((name, "cpuid".into())),
            (None, Some(dmi)) => Some(dmi),
            (None, None) => Some(("other".into(), "cpuid".into())),
        };
    }
    if dmi.is_some() {
        return dmi;
    }
    if let Some(kind) = host.read("/sys/hypervisor/type") {
        let name = if kind == "xen" { "xen" } else { "other" };
        return Some((name.into(), "/sys/hypervisor/type".into()));
    }
    if let Some(compatible) = host.read("/proc/device-tree/hypervisor/compatible") {
        let name = if compatible.contains("linux,kvm") {
            "kvm"
        } else if compatible.contains("xen") {
            "xen"
        } else if compatible.contains("vmware") {
            "vmware"
        } else {
            "other"
        };
        return Some((name.into(), "device-tree".into()));
    }
    if host.exists("/proc/device-tree/ibm,partition-name") && !host.exists("/proc/device-tree/hmc-managed?") {
        return Some(("powervm".into(), "device-tree".into()));
    }
    None
}

fn detect_container(host: &Host) -> Option<(String, String)> {
    if let Some(name) = host.read("/run/systemd/container").filter(|s| !s.is_empty()) {
        return Some((normalize_container(&name), "/run/systemd/container".into()));
    }
    if let Some(name) = &host.container_env {
        return Some((normalize_container(name), "$container".into()));
    }
    if host.exists("/run/.containerenv") {
        return Some(("podman".into(), "/run/.containerenv".into()));
    }
    if host.exists("/.dockerenv") {
        return Some(("docker".into(), "/.dockerenv".into()));
    }
    if host.exists("/proc/vz") && !host.exists("/proc/bc") {
        return Some(("openvz".into(), "/proc/vz".into()));
    }
    let osrelease = host.read("/proc/sys/kernel/osrelease").unwrap_or_default();
    if osrelease.contains("Microsoft") || osrelease.contains("WSL") {
        return Some(("wsl".into(), "/proc/sys/kernel/osrelease".into()));
    }
    None
}

fn normalize_container(name: &str) -> String {
    match name {
        "oci" => "docker".into(),
        "lxc-libvirt" => "lxc".into(),
        other => other.to_string(),
    }
}

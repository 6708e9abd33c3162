//! The commit and build profile `envbench --version` names, so a result's binary can be traced to its source.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "commit unknown".into());
    // A build of changed sources says so: its commit alone does not name what it is.
    let changed = git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    println!("cargo:rustc-env=ENVBENCH_COMMIT={commit}{}", if changed { " with changes" } else { "" });
    // The profile's own name (dist, release, dev): OUT_DIR is <target>/<profile dir>/build/<crate>-<hash>/out.
    let out = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    let profile = out
        .ancestors()
        .nth(3)
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().replace("debug", "dev"))
        .unwrap_or_else(|| std::env::var("PROFILE").unwrap_or_default());
    println!("cargo:rustc-env=ENVBENCH_PROFILE={profile}");
    // Built again when the commit moves; only paths that exist, so a tree without git is not rebuilt every time.
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]).map(PathBuf::from) {
        let mut watched = vec![dir.join("HEAD"), dir.join("index"), dir.join("packed-refs")];
        if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watched.push(dir.join(reference));
        }
        for path in watched.iter().filter(|p| p.exists()) {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}

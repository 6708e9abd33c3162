//! envbench's end-to-end tests: the built binary run as a user runs it. One test binary for the crate (each file is a
//! module), so the binary and DataFusion are linked once.

mod cli;
mod commit;
mod common;
mod compare;
mod fleet;
mod htap;
mod oltp;
mod open_loop;
mod replay;
mod safety;
mod service;
mod suites;
mod sustained;
mod tpch;
mod tree;
mod viewer;
mod workloads;

/// Every crate keeps its integration tests in one binary (`tests/it/main.rs` and its modules): a file directly under
/// a crate's `tests/` would be a test binary of its own, linked with everything the crate links (issue #37).
#[test]
fn every_crate_has_at_most_one_integration_test_binary() {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut binaries = Vec::new();
    for krate in std::fs::read_dir(&crates).expect("the crates directory lists") {
        let tests = krate.expect("a crate entry").path().join("tests");
        let Ok(entries) = std::fs::read_dir(&tests) else { continue };
        for entry in entries {
            let path = entry.expect("a tests entry").path();
            let binary = path.extension().is_some_and(|e| e == "rs") || path.join("main.rs").is_file();
            if binary {
                binaries.push(path.strip_prefix(&crates).unwrap_or(&path).display().to_string());
            }
        }
    }
    binaries.sort();
    let mut per_crate = std::collections::BTreeMap::<String, Vec<&String>>::new();
    for binary in &binaries {
        per_crate.entry(binary.split('/').next().unwrap_or_default().to_string()).or_default().push(binary);
    }
    let crowded: Vec<_> = per_crate.values().filter(|b| b.len() > 1).collect();
    assert!(crowded.is_empty(), "more than one integration-test binary in a crate: {crowded:?}");
    assert!(
        binaries.iter().any(|b| b == "envbench/tests/it"),
        "the binary crate's tests are in tests/it: {binaries:?}"
    );
}

//! The source tree's own rules (issue #56), run where CI runs every test: `bench/rooms.py` finds no import circle
//! between the files of a crate, at most four source files over 800 lines (each saying why in its module doc), and
//! the CLI's command modules under 300 lines each. (What differs between databases has its own two tests in
//! envbench-sql: no dialect compared outside it, and at most eight files a new server must touch.)

use std::process::Command;

#[test]
fn the_tree_keeps_its_rooms() {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/rooms.py");
    let output = Command::new("python3").arg(script).output().expect("python3 runs bench/rooms.py");
    assert!(output.status.success(), "bench/rooms.py:\n{}", String::from_utf8_lossy(&output.stdout));
}

/// `.ci/run` runs exactly the README's test command, and that command goes on past a failing test binary
/// (`--no-fail-fast`), so one red test shows every other crate's state too (issue #66).
#[test]
fn ci_runs_the_readme_test_command_to_the_end() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let readme = std::fs::read_to_string(format!("{root}/README.md")).unwrap();
    let command = readme
        .lines()
        .find_map(|line| line.strip_prefix("cargo test ").map(|rest| rest.split('#').next().unwrap().trim()))
        .map(|rest| format!("cargo test {rest}"))
        .expect("the README opens with its test command");
    assert!(command.contains("--workspace") && command.contains("--no-fail-fast"), "{command}");
    let ci = std::fs::read_to_string(format!("{root}/.ci/run")).unwrap();
    assert!(ci.lines().any(|line| line.trim() == command), ".ci/run runs `{command}`:\n{ci}");
}

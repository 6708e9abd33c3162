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

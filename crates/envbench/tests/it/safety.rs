//! Safety, tried as a hostile user would, through the real binary. It holds docs/safety.md (the safety promises) to
//! every line.
//!
//! The battery: close to three hundred bad inputs, each ending within a minute in exit status 1 or 2 with a message
//! that names the problem, never a panic, never a file of the user's changed, and no run stored for a usage error.
//!
//! The defects two hostile batteries found, each reproduced here or, for a workload's server behaviour, in that
//! workload's tests:
//! - first battery: a reader that wiped the cube, a cube run that deleted files it did not make, store URLs that became
//!   files, leaked passwords, panics on closed pipes and huge counts, runs killed hard left `running`, unbounded `exec`
//!   output, an unbounded suite matrix, terminal escapes in labels, a full disk under the cube;
//! - second battery (issue #35): D1, a user's tables dropped through the search path (`tests/it/oltp.rs`, `tests/it/tpch.rs`,
//!   with a `$user` schema and checksums of the user's rows); D2, a live run taken for dead from another PID namespace
//!   ([`liveness`]); D3, outputs written over any file; D4, runs sharing data without a lock (`tests/it/oltp.rs`,
//!   `tests/it/tpch.rs`, `tests/it/workloads.rs`, the cube test here); D5, SIGHUP and SIGQUIT; D6, a foreign view found too
//!   late (`envbench-oltp`'s `tests/targets.rs`); D7 and D11, passwords in URLs and clients' command lines; D8, secrets
//!   on ssh's command line (`tests/it/fleet.rs`); D9, pgbench's argv (`envbench-oltp`'s unit tests and `tests/it/oltp.rs`);
//!   D10, control characters at the terminal; D12, invisible labels, CSV formulas, two `Host` headers; D13, exec's
//!   background children ([`liveness`]); D14 to D17, the battery, the small file systems and the signals below.

use crate::common;
mod liveness;

use common::{envbench, runs, scratch, show, stderr, stdout};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Every file under `dir` with a checksum of its content (FNV-1a is enough to see a change).
fn checksums(dir: &Path) -> BTreeMap<PathBuf, u64> {
    let mut sums = BTreeMap::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(next) = pending.pop() {
        for entry in std::fs::read_dir(&next).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                pending.push(path.clone());
                sums.insert(path, 0);
            } else {
                let bytes = std::fs::read(&path).unwrap_or_default();
                let sum = bytes
                    .iter()
                    .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3));
                sums.insert(path, sum);
            }
        }
    }
    sums
}

/// A directory of the user's own, next to which envbench is pointed: Essbase's files among them.
fn user_directory(root: &Path) -> PathBuf {
    let user = root.join("user");
    for (path, content) in [
        ("notes.txt", "my notes\n"),
        ("cube/ess00001.pag", "essbase page file"),
        ("cube/cube.ind", "essbase index"),
        ("cube/cube.ind.bak", "essbase index backup"),
        ("cube/step-in-progress.json", "{\"mine\": true}"),
        ("data/manifest.json", "{\"mine\": true}"),
        ("data/native_01.txt", "a native export of mine"),
        ("data/revenue_cogs_stats.csv", "a,b\n1,2\n"),
        ("envbench-tpch/keep.txt", "mine"),
    ] {
        let path = user.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }
    user
}

fn run_in(cwd: &Path, store: &Path, args: &[&str]) -> std::process::Output {
    run_bounded(cwd, store, args, Duration::from_secs(600)).expect("the binary ends")
}

/// Run the binary in `cwd`, killed after `limit`: `None` when it hung.
fn run_bounded(cwd: &Path, store: &Path, args: &[&str], limit: Duration) -> Option<std::process::Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .current_dir(cwd)
        .env("ENVBENCH_STORE", store)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", cwd.join("xdg"))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary runs");
    // Read both pipes while waiting, so a chatty child never blocks on a full pipe.
    let mut out_pipe = child.stdout.take().unwrap();
    let mut err_pipe = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut out_pipe, &mut bytes);
        bytes
    });
    let err = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = std::io::Read::read_to_end(&mut err_pipe, &mut bytes);
        bytes
    });
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    status.map(|status| std::process::Output { status, stdout, stderr })
}

/// The most a bad input may take before it counts as a hang: every refusal comes before any work.
const REFUSAL_LIMIT: Duration = Duration::from_secs(60);

#[test]
fn the_battery_of_bad_inputs_ends_in_clear_errors_and_changes_nothing() {
    let root = scratch("safety", "battery");
    let store = root.join("results.db");
    let user = user_directory(&root);
    let plain_file = user.join("notes.txt");
    let file = plain_file.to_str().unwrap();
    let cube_dir = user.to_str().unwrap();
    let tpch_dir = user.to_str().unwrap();
    let work = root.join("work");
    std::fs::create_dir_all(&work).unwrap();
    let w = work.to_str().unwrap();
    let store_dir = root.to_str().unwrap();
    let store_file = store.to_str().unwrap();
    let huge_matrix = root.join("huge.toml");
    let values: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
    std::fs::write(
        &huge_matrix,
        format!(
            "[cube]\nscale = 0.1\n\n[matrix]\ncube.calc_threads = [{0}]\ncube.load_threads = [{0}]\n",
            values.join(", ")
        ),
    )
    .unwrap();
    let bad_suite = root.join("bad.toml");
    std::fs::write(&bad_suite, "[disk]\nquick = true\n\n[diks]\nsize = \"1g\"\n").unwrap();
    // A suite file far larger than any suite (D14: such files were read whole).
    let big_suite = root.join("big.toml");
    std::fs::write(&big_suite, format!("# {}\n", "x".repeat(2 << 20))).unwrap();
    // A FIFO no one writes to (D14: reading it blocked forever).
    let fifo = root.join("fifo");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let fifo = fifo.to_str().unwrap();
    // 1100 hosts (D15: each became an ssh process at once).
    let many_hosts = root.join("hosts.txt");
    std::fs::write(&many_hosts, (1..=1100).map(|i| format!("host{i}\n")).collect::<String>()).unwrap();
    let many_hosts = many_hosts.to_str().unwrap();
    let long_label = "x".repeat(300);
    let five_thousand = "n".repeat(5000);
    let long_schema = "s".repeat(70);
    let long_step = format!("{}=true", "s".repeat(5000));
    let many_threads: String = (1..=20).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let seventy: String = (1..=70).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let thousand: String = (1..=1000).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let five_thousand_list: String = (1..=5000).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let (huge, bad, big) = (huge_matrix.to_str().unwrap(), bad_suite.to_str().unwrap(), big_suite.to_str().unwrap());
    let mut seventy_tests = vec!["disk", "--dir", w];
    seventy_tests.extend(std::iter::repeat_n(["--test", "rnd:4k:q1:t1:read"], 70).flatten());
    let mut two_thousand_tests = vec!["disk", "--dir", w];
    two_thousand_tests.extend(std::iter::repeat_n(["--test", "seq:1m:q1:t1:read"], 2000).flatten());

    // Stored runs to show, compare and push: a fingerprint, and timed steps whose results match nothing of it.
    assert!(envbench(&store, &["sysinfo", "--save", "--path", w, "--label", "fp"]).status.success());
    let steps =
        envbench(&store, &["exec", "--dir", w, "--name", "t", "--repeat", "1", "--step", "a=true", "--label", "ex"]);
    assert!(steps.status.success(), "{}", stderr(&steps));
    // Captures for `replay inspect`, cut short or of another kind (issue #69).
    let record = "2026-12-02 15:30:00.123 UTC,\"postgres\",\"test\",1,\"[local]\",\"1.2\",1,\"idle\",\
                  \"2026-12-02 15:29:00 UTC\",\"3/1\",0,LOG,00000,\"statement: select 1\",,,,,,,,,\"psql\",\
                  \"client backend\",,0\n";
    let captures = [
        ("cut.csv", format!("{record}2026-12-02 15:30:00.200 UTC,\"postgres\",\"test\",1,\"[lo")),
        ("cut.json", "{\"timestamp\":\"2026-12-02 15:30:00.1 UTC\",\"message\":\"x\"}\n{\"timestamp\":\"2026-".into()),
        ("general.log", "/usr/sbin/mariadbd, Version: 10.11.6-MariaDB (Debian). started with:\nTime\t\t    Id Command\tArgument\nnot an entry\n".into()),
        ("slow.log", "# User@Host: root[root] @ localhost []\nselect 1;\n".into()),
        ("access.log", "127.0.0.1 - - [02/Dec/2026:15:30:00 +0000] \"GET / HTTP/1.1\" 200 612\n".into()),
        ("prefix.log", "2026-12-02 15:30:00.123 UTC [77] LOG:  statement: select 1\n".into()),
        ("good.csv", record.to_string()),
        // A bound value whose quote never closes, in a session that never ends: both counted, never dropped.
        ("skips.csv", format!(
            "{record}2026-12-02 15:30:00.200 UTC,\"postgres\",\"test\",1,\"[local]\",\"1.2\",2,\"SELECT\",\
             \"2026-12-02 15:29:00 UTC\",\"3/2\",0,LOG,00000,\"execute S_1: select $1\",\"parameters: $1 = '5\",,,,,,,,\
             \"psql\",\"client backend\",,0\n"
        )),
    ];
    for (name, text) in &captures {
        std::fs::write(user.join(name), text).unwrap();
    }
    let capture = |name: &str| user.join(name).to_str().unwrap().to_string();
    let (cut_csv, cut_json, bad_general) = (capture("cut.csv"), capture("cut.json"), capture("general.log"));
    let (no_session, access, prefix) = (capture("slow.log"), capture("access.log"), capture("prefix.log"));
    let good_csv = capture("good.csv");
    let before = checksums(&user);

    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
        // replay's captures (issue #69).
        (vec!["replay", "inspect", file], 2, "not a log envbench reads (its first line reads: my notes)"),
        (vec!["replay", "inspect", cube_dir], 2, "it is a directory"),
        (vec!["replay", "inspect", "/nonexistent/postgresql.csv"], 2, "No such file"),
        (vec!["replay", "inspect", &cut_csv], 2, "line 2: a record of 5 fields, where csvlog writes at least 23 (is the log cut short?)"),
        (vec!["replay", "inspect", &cut_json], 2, "line 2: not a jsonlog record"),
        (vec!["replay", "inspect", &bad_general], 2, "line 3: not an entry of a general query log: not an entry"),
        (vec!["replay", "inspect", &no_session], 2, "an entry without its connection"),
        (vec!["replay", "inspect", &access], 2, "its first line reads: 127.0.0.1"),
        (vec!["replay", "inspect", &prefix], 2, "not with log_line_prefix = '%m|%u|%d|%c|'"),
        (vec!["replay", "inspect", fifo], 2, "not a regular file but a FIFO"),
        (vec!["replay"], 2, "give the capture and where to replay it: envbench replay LOG --target URL"),
        (vec!["replay", &good_csv], 2, "give the capture and where to replay it"),
        (vec!["replay", &good_csv, "--target", "mysql://root@127.0.0.1:1/x"], 2, "is a PostgreSQL csvlog, and --target mysql://root@127.0.0.1:1/x is MySQL/MariaDB"),
        (vec!["replay", &good_csv, "--target", "postgres:/host/db"], 2, "--target"),
        (vec!["replay", &good_csv, "--target", "postgres://u:hunter2@127.0.0.1:1/x"], 1, "postgres://u:***@127.0.0.1:1/x"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1/x", "--speed", "0"], 2, "--speed 0: give a factor from 0.01 to 1000"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1/x", "--speed", "fast"], 2, "or max"),
        (vec!["replay", &cut_csv, "--target", "postgres://127.0.0.1/x"], 2, "is the log cut short?"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1/x", "--database", "nosuch"], 2, "--target nosuch=...: the capture holds no statement in database nosuch; it holds statements in: test"),
        (vec!["replay", &good_csv, "--target", "nosuch=postgres://127.0.0.1/x"], 2, "no statement in database nosuch"),
        (vec!["replay", &good_csv, "--target", "test=postgres://127.0.0.1/x", "--target", "test=postgres://127.0.0.1/y"], 2, "--target test=... is given twice"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1/x", "--target", "postgres://127.0.0.1/y"], 2, "two --target URLs take every database"),
        (vec!["replay", &good_csv, "--target", "test=postgres://127.0.0.1/x", "--database", "test"], 2, "--database NAME goes with one --target URL"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1/x", "--allow-writes"], 2, "--source <URL>"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1/x", "--source", "postgres://127.0.0.1/y"], 2, "--allow-writes"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1:1/x", "--allow-writes", "--source", "postgres:/y"], 2, "--source postgres:/y"),
        (vec!["replay", &good_csv, "--target", "postgres://127.0.0.1:1/x", "--allow-writes", "--source", "postgres://u:hunter2@127.0.0.1:1/y"], 1, "--source postgres://u:***@127.0.0.1:1/y"),
        // Stores and global options.
        (vec!["--store", "mysql://x@y/z", "results", "list"], 2, "mysql:// scheme is not supported"),
        (vec!["--store", "https://example.com/store", "results", "list"], 2, "https:// scheme is not supported"),
        (vec!["--store", "ftp://host/x", "sysinfo", "--save"], 2, "ftp:// scheme is not supported"),
        (vec!["--store", "mysql://root:hunter2@db/x", "results", "list"], 2, "mysql://root:***@db/x"),
        (vec!["push", "--to", "mysql://x@y/z"], 2, "--to: 'mysql://x@y/z' is not a store"),
        (vec!["push", "--to", "sqlite:///tmp/x.db"], 2, "sqlite:// scheme is not supported"),
        (vec!["push", "--to", store_dir], 2, "a directory, not a store"),
        (vec!["--store", "/dev/null", "results", "list"], 2, "a device or special file"),
        (vec!["--store", store_dir, "results", "list"], 2, "a directory, not a results store file"),
        (vec!["--store", store_dir, "sysinfo", "--save"], 2, "a directory"),
        (vec!["results", "show", "ffffffff"], 1, "no run matches 'ffffffff'"),
        (vec!["results", "show", "zz"], 1, "no run matches 'zz'"),
        (vec!["results", "export", "--format", "xml"], 2, "invalid value 'xml'"),
        (vec!["results", "list", "--tag", "novalue"], 2, "is not a tag"),
        (vec!["results", "list", "--limit", "-1"], 2, "--limit"),
        (vec!["frobnicate"], 2, "unrecognized subcommand"),
        (vec!["compare", "onlyone"], 2, "SIDE"),
        (vec!["compare", "nosuchlabel", "other"], 2, "nosuchlabel"),
        (vec!["report", "-o", "/no/such/dir/report.html"], 2, "cannot write the file there"),
        (vec!["serve", "--listen", "nonsense"], 2, "nonsense"),
        (vec!["serve", "--listen", "127.0.0.1:99999"], 2, "127.0.0.1:99999"),
        // sysinfo.
        (vec!["sysinfo", "--path", "/no/such/envbench/dir"], 2, "no such file or directory"),
        (vec!["sysinfo", "--tag", "novalue", "--save"], 2, "is not a tag"),
        (vec!["sysinfo", "--tag", "a=1", "--tag", "a=2", "--save"], 2, "given twice"),
        (vec!["sysinfo", "--label", "lonely"], 2, "add --save"),
        (vec!["sysinfo", "--label", "evil\x1b[2Jlabel", "--save"], 2, "control character (\\x1b)"),
        (vec!["sysinfo", "--tag", "k=v\r", "--save"], 2, "control character (\\r)"),
        (vec!["sysinfo", "--label", "", "--save"], 2, "--label is empty"),
        (vec!["sysinfo", "--label", &long_label, "--save"], 2, "300 characters long"),
        (vec!["sysinfo", "--json", "--json"], 2, "--json"),
        // disk.
        (vec!["disk", "--dir", w, "--profile", "crystal"], 2, "unknown profile"),
        (vec!["disk", "--dir", w, "--size=-1g"], 2, "--size"),
        (vec!["disk", "--dir", w, "--size", "-1g"], 2, "--size"),
        (vec!["disk", "--dir", w, "--size", "12parsecs"], 2, "--size"),
        (vec!["disk", "--dir", w, "--size", "0"], 2, "--size is 0 B; use a larger --size"),
        (vec!["disk", "--dir", w, "--size", "1000"], 2, "--size is 1000 B"),
        (vec!["disk", "--dir", w, "--size", "1048577"], 2, "multiple of 4 KiB"),
        (vec!["disk", "--dir", w, "--test", "rnd:4k:q0:t1:read"], 2, "queue depth"),
        (vec!["disk", "--dir", w, "--test", "rnd:banana"], 2, "rnd:banana"),
        (vec!["disk", "--dir", w, "--test", "seq:1m:q1:t1:read:fsync1"], 2, "seq:1m:q1:t1:read:fsync1"),
        (vec!["disk", "--dir", w, "--runs", "0"], 2, "--runs must be at least 1"),
        (vec!["disk", "--dir", w, "--runs", "-1"], 2, "--runs"),
        (vec!["disk", "--dir", w, "--runs", "5000"], 2, "--runs 5000"),
        (vec!["disk", "--dir", w, "--duration", "0s"], 2, "--duration must be longer than zero"),
        (vec!["disk", "--dir", w, "--duration", "soon"], 2, "--duration"),
        (vec!["disk", "--dir", w, "--interval", "never"], 2, "--interval"),
        (vec!["disk", "--dir", w, "--write-sync", "sometimes"], 2, "sometimes"),
        (vec!["disk", "--dir", w, "--engine", "warp"], 2, "--engine"),
        (vec!["disk", "--dir", w, "--cross-check", "iometer"], 2, "the cross-check tools are fio"),
        (vec!["disk", "--dir", "/no/such/dir"], 2, "no such file or directory"),
        (vec!["disk", "--dir", file], 2, "is not a directory"),
        (vec!["disk", "--dir", "/proc"], 2, "pseudo file system"),
        (vec!["disk", "--dir", "/dev/null"], 2, "is not a directory"),
        (vec!["disk", "--dir", w, "--sample-interval", "1ms"], 2, "--sample-interval must be from 10ms"),
        (vec!["disk", "--dir", w, "--sample-interval", "fast"], 2, "--sample-interval"),
        // ranread.
        (vec!["ranread", "--dir", w, "--block", "3000"], 2, "not a database block size"),
        (vec!["ranread", "--dir", w, "--block", "256"], 2, "not a database block size"),
        (vec!["ranread", "--dir", w, "--jobs", "0"], 2, "--jobs"),
        (vec!["ranread", "--dir", w, "--jobs", "1,x"], 2, "--jobs"),
        (vec!["ranread", "--dir", w, "--jobs", "100000"], 2, "--jobs"),
        (vec!["ranread", "--dir", w, "--jobs", "-4"], 2, "--jobs"),
        (vec!["ranread", "--dir", w, "--target-latency", "fast"], 2, "--target-latency"),
        (vec!["ranread", "--dir", w, "--target-latency", "8"], 2, "--target-latency"),
        (vec!["ranread", "--dir", w, "--iterations", "0"], 2, "--iterations"),
        (vec!["ranread", "--dir", w, "--iterations", "5", "--duration", "1s"], 2, "cannot be used with"),
        (vec!["ranread", "--dir", w, "--db", "mysql://x"], 2, "not a PostgreSQL URL"),
        (vec!["ranread", "--dir", w, "--size", "4k"], 2, "at least one block"),
        (vec!["ranread", "--dir", w, "--size", "0"], 2, "--size must be larger than zero"),
        (vec!["ranread", "--dir", file], 2, "is not a directory"),
        (vec!["ranread", "--dir", "/proc"], 2, "pseudo file system"),
        (vec!["ranread", "--dir", w, "--keep", "--no-keep"], 2, "cannot be used with"),
        (vec!["ranread", "--dir", w, "--max-jobs", "0"], 2, "--max-jobs"),
        (vec!["ranread", "--dir", w, "--target-iops", "-5"], 2, "--target-iops"),
        (vec!["ranread", "--dir", w, "--target-iops", "NaN"], 2, "--target-iops"),
        (vec!["ranread", "--dir", w, "--engine", "warp"], 2, "--engine"),
        (vec!["ranread", "--dir", w, "--db", "postgres://postgres@127.0.0.1:1/test", "--jobs", "1"], 1, "is the server running"),
        // cube.
        (vec!["cube", "--dir", w, "--scale", "0"], 2, "--scale 0"),
        (vec!["cube", "--dir", w, "--scale", "-1"], 2, "--scale"),
        (vec!["cube", "--dir", w, "--scale", "1000"], 2, "--scale 1000"),
        (vec!["cube", "--dir", w, "--repeat", "0"], 2, "--repeat must be at least 1"),
        (vec!["cube", "--dir", w, "--calc-threads", "0"], 2, "--calc-threads"),
        (vec!["cube", "--dir", w, "--calc-threads", "1,x"], 2, "--calc-threads"),
        (vec!["cube", "--dir", w, "--fix-threads", "16"], 2, "FIXPARALLEL"),
        (vec!["cube", "--dir", w, "--compression", "lz9"], 2, "--compression"),
        (vec!["cube", "--dir", w, "--data-cache", "lots"], 2, "--data-cache"),
        (vec!["cube", "--dir", file], 2, "not a directory"),
        (vec!["cube", "--dir", w, "--calc-threads", &many_threads, "--load-threads", &many_threads], 2, "400 settings"),
        (vec!["cube", "--dir", cube_dir, "--scale", "0.01"], 2, "cube.ind, cube.ind.bak, ess00001.pag, step-in-progress.json"),
        (vec!["cube", "get", "--dir", w, "Years=FY19"], 2, "no cube here yet"),
        (vec!["cube", "get", "--dir", cube_dir, "Years=FY19"], 2, "cube.ind, cube.ind.bak, ess00001.pag"),
        (vec!["cube", "get", "Years=FY19", "--grid", "Entity"], 2, "--grid"),
        // tpch.
        (vec!["tpch", "--dir", w, "--sf", "0"], 2, "--sf 0: scale factor 0 is not usable"),
        (vec!["tpch", "--dir", w, "--sf=-1"], 2, "not usable"),
        (vec!["tpch", "--dir", w, "--target", "oracle://x@y/z"], 2, "give datafusion"),
        (vec!["tpch", "--dir", w, "--users", "0"], 2, "--users must be at least 1"),
        (vec!["tpch", "--dir", w, "--sf", "0.01", "--users", "100000", "--throughput-only"], 2, "--users 100000"),
        (vec!["tpch", "--dir", w, "--sets", "0"], 2, "--sets must be at least 1"),
        (vec!["tpch", "--dir", w, "--query-timeout", "0s"], 2, "--query-timeout 0s: give from 1s to 24h"),
        (vec!["tpch", "--dir", w, "--query-timeout", "soon"], 2, "--query-timeout"),
        // D15, D16, D17: tpch.
        (vec!["tpch", "--dir", w, "--query-timeout", "1ns"], 2, "--query-timeout 1ns: give from 1s to 24h"),
        (vec!["tpch", "--dir", w, "--query-timeout", "100000h"], 2, "give from 1s to 24h"),
        (vec!["tpch", "--dir", w, "--threads", "2,2"], 2, "--threads: 2 is given twice"),
        (vec!["tpch", "--dir", w, "--threads", &seventy], 2, "70 settings are more than 64"),
        (vec!["tpch", "--dir", w, "--threads", &five_thousand_list], 2, "--threads"),
        (vec!["tpch", "--dir", w, "--schema", ""], 2, "--schema is empty"),
        (vec!["tpch", "--dir", w, "--schema", "a\x1b[2J"], 2, "control character"),
        (vec!["tpch", "--dir", w, "--schema", &long_schema], 2, "70 bytes long; keep it to 63"),
        (vec!["tpch", "--dir", w, "--sf", "100000"], 2, "the Parquet files of SF 100000 need about"),
        (vec!["tpch", "--dir", w, "--target", "postgres:/host/db"], 2, "give datafusion"),
        (vec!["tpch", "--dir", "/nonexistent/envbench"], 2, "not a directory"),
        (vec!["tpch", "--dir", w, "--threads", "0"], 2, "--threads '0'"),
        (vec!["tpch", "--dir", w, "--power-only", "--throughput-only"], 2, "cannot be used with"),
        (vec!["tpch", "--dir", w, "--target", "postgres://postgres@127.0.0.1:1/test"], 1, "is the server running"),
        (vec!["tpch", "--dir", tpch_dir, "--sf", "0.01"], 2, "keep.txt"),
        // exec.
        (vec!["exec", "--dir", w, "--name", "x", "--step", "noequals"], 2, "is not NAME=COMMAND"),
        (vec!["exec", "--dir", w, "--name", "", "--step", "a=true"], 2, "--name is empty"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", "a=true", "--step", "a=false"], 2, "used twice"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", "a=true", "--repeat", "0"], 2, "--repeat must be at least 1"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", "a=true", "--repeat", "1000000"], 2, "--repeat 1000000"),
        (vec!["exec", "--dir", w, "--name", "x"], 2, "--step"),
        (vec!["exec", "--dir", "/no/such", "--name", "x", "--step", "a=true"], 2, "not a directory"),
        // D16 and D10: exec's names follow the rule for names; empty commands are no commands.
        (vec!["exec", "--dir", w, "--name", &five_thousand, "--step", "a=true"], 2, "5000 characters long"),
        (vec!["exec", "--dir", w, "--name", "x\x1b[2J", "--step", "a=true"], 2, "control character (\\x1b)"),
        (vec!["exec", "--dir", w, "--name", "\u{202e}x", "--step", "a=true"], 2, "U+202E"),
        (vec!["exec", "--dir", w, "--name", "\u{200b}", "--step", "a=true"], 2, "only invisible characters"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", &long_step], 2, "characters long"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", "a\x1b]0;title\x07=true"], 2, "control character"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", "a=true", "--setup", ""], 2, "--setup is empty"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", "a=true", "--teardown", "  "], 2, "--teardown is empty"),
        (vec!["exec", "--dir", w, "--name", "x", "--step", "a=true", "--repeat", "-1"], 2, "--repeat"),
        (vec!["exec", "--dir", fifo, "--name", "x", "--step", "a=true"], 2, "not a directory"),
        // Suites.
        (vec!["run", "--suite", "nosuch", "--dir", w], 2, "not a built-in suite"),
        (vec!["run", "--suite", bad, "--dir", w], 2, "line 4"),
        (vec!["run", "--suite", huge, "--dir", w, "--dry-run"], 2, "more than 10000"),
        (vec!["run", "--dir", "/no/such"], 2, "not a directory"),
        (vec!["run", "--suite", "quick", "--resume", "--dir", w], 2, "nothing to resume"),
        (vec!["run", "--dir", w, "--label", "bell\x07"], 2, "control character"),
        // D3: files envbench writes only where it may.
        (vec!["report", "-o", file], 2, "add --force to replace it"),
        (vec!["report", "-o", store_file], 2, "is the results store being read"),
        (vec!["report", "-o", store_file, "--force"], 2, "even with --force"),
        (vec!["report", "-o", w], 2, "is a directory"),
        (vec!["report", "-o", "/dev/envbench-no-such-disk"], 2, "devtmpfs"),
        (vec!["report", "-o", "/proc/envbench.html"], 2, "pseudo file system"),
        (vec!["report", "-o", fifo, "label:fp", "label:nosuch"], 2, "label:nosuch"),
        (vec!["results", "export", "--format", "csv", "-o", file], 2, "add --force to replace it"),
        (vec!["results", "export", "--format", "json", "-o", store_file], 2, "is the results store being read"),
        (vec!["results", "export", "--format", "tsv", "-o", store_file, "--force"], 2, "even with --force"),
        (vec!["results", "export", "--format", "json", "-o", w], 2, "is a directory"),
        (vec!["results", "export", "--format", "json", "-o", "/dev/sdz9"], 2, "devtmpfs"),
        (vec!["results", "export", "--format", "json", "--force"], 2, "--output"),
        (vec!["run", "--suite", "quick", "--dir", w, "--report", file], 2, "add --force to replace it"),
        (vec!["run", "--suite", "quick", "--dir", w, "--report", store_file], 2, "is the results store being read"),
        (vec!["run", "--suite", "quick", "--dir", w, "--report", w], 2, "is a directory"),
        (vec!["run", "--suite", "quick", "--dir", w, "--report", "/no/such/dir/r.html"], 2, "cannot write the file there"),
        // D14: what is not a regular file is not read.
        (vec!["run", "--suite", fifo, "--dir", w], 2, "not a regular file"),
        (vec!["run", "--suite", "/dev/zero", "--dir", w], 2, "not a regular file"),
        (vec!["run", "--suite", w, "--dir", w], 2, "not a regular file"),
        (vec!["run", "--suite", big, "--dir", w], 2, "larger than such a file can be"),
        (vec!["run", "--suite", file, "--dir", w], 2, "TOML parse error"),
        (vec!["fleet", "--hosts", fifo, "disk", "--dir", w], 2, "not a regular file"),
        // Issue #54, E10: certificates and keys are read as bounded regular files too.
        (vec!["compare", "label:a", "https://127.0.0.1:9/label:b", "--ca-cert", fifo], 2, "not a regular file"),
        (vec!["compare", "label:a", "https://127.0.0.1:9/label:b", "--ca-cert", "/dev/zero"], 2, "not a regular file"),
        (vec!["serve", "--listen", "127.0.0.1:0", "--tls-cert", fifo, "--tls-key", fifo], 2, "not a regular file"),
        (vec!["serve", "--listen", "127.0.0.1:0", "--tls-cert", "/dev/zero", "--tls-key", file], 2, "not a regular file"),
        (vec!["serve", "--listen", "127.0.0.1:0", "--tls-cert", big, "--tls-key", file], 2, "larger than such a file"),
        // E11: nonsense limits and names.
        (vec!["serve", "--listen", "127.0.0.1:0", "--max-upload-size", "0B"], 2, "give a size from 64 KiB"),
        (vec!["serve", "--listen", "127.0.0.1:0", "--max-upload-size", "1000000TiB"], 2, "--max-upload-size"),
        (vec!["serve", "--listen", "127.0.0.1:0", "--host-name", ""], 2, "--host-name ''"),
        (vec!["serve", "--listen", "127.0.0.1:0", "--host-name", "a b"], 2, "give the host name"),
        (vec!["htap", "--target", "postgres://postgres@127.0.0.1:5432/test", "--users", "0"], 2, "--users 0: htap"),
        // E2: a submitter's name is part of the addresses of their runs; a side names a submitter and a selector.
        (vec!["results", "token", "create", "--name", "a/b"], 2, "cannot name a submitter"),
        (vec!["results", "token", "create", "--name", "label:x"], 2, "cannot name a submitter"),
        (vec!["compare", "https://127.0.0.1:9/alice/", "label:a"], 2, "name a side of alice's after it"),
        (vec!["fleet", "--hosts", "/dev/zero", "disk", "--dir", w], 2, "not a regular file"),
        (vec!["fleet", "--hosts", w, "disk", "--dir", w], 2, "not a regular file"),
        (vec!["--store", fifo, "results", "list"], 2, "a device or special file"),
        (vec!["--store", "/dev/zero", "results", "list"], 2, "a device or special file"),
        (vec!["sysinfo", "--path", fifo], 2, "a FIFO, socket or device"),
        (vec!["sysinfo", "--path", "/dev/zero"], 2, "a FIFO, socket or device"),
        // D17 and friends: stores named wrongly.
        (vec!["--store", "postgres:/host/db", "results", "list"], 2, "without the // after 'postgres:'"),
        (vec!["--store", "postgresql:host/db", "sysinfo", "--save"], 2, "without the //"),
        (vec!["--store", "sqlite:results.db", "results", "list"], 2, "without the //"),
        (vec!["push", "--to", ""], 2, "an empty name"),
        (vec!["push", "--to", "postgres:/x"], 2, "without the //"),
        (vec!["push", "--to", store_file], 2, "the store being pushed from"),
        (vec!["push", "--to", "mysql://root:Co,mma'x@db/test"], 2, "mysql://root:***@db/test"),
        // D16: nonsense in the commands that read results.
        (vec!["results", "list", "--workload", "nosuch"], 2, "no such workload"),
        (vec!["results", "list", "--limit", "0"], 2, "--limit"),
        (vec!["results", "list", "--label", "x", "--limit", "-3"], 2, "--limit"),
        (vec!["results", "show", ""], 1, "no run matches ''"),
        (vec!["results", "show", "\x1b[2J"], 1, "no run matches '\\x1b[2J'"),
        (vec!["compare", "label:fp", "label:ex"], 1, "no result in common"),
        (vec!["compare", "label:fp", "label:fp"], 2, "are the same runs"),
        (vec!["compare", "label:nosuch", "label:ex"], 2, "label:nosuch"),
        (vec!["compare", "--json", "--markdown", "label:fp", "label:ex"], 2, "--markdown"),
        (vec!["report", "nosuchside"], 2, "nosuchside"),
        (vec!["serve", "--listen", ""], 2, "cannot serve on"),
        (vec!["serve", "--listen", "0.0.0.0:99999"], 2, "invalid port"),
        (vec!["agent", "--fleet", "nosuch", "--name", "a"], 2, "is not a fleet id"),
        (vec!["agent", "--fleet", "", "--name", "a"], 2, "is not a fleet id"),
        (vec!["agent", "--fleet", "6f1c0c3e-3c1a-4c47-9b53-3ad0c5e6a2d1", "--name", "a\x1b]0;x\x07"], 2, "control character"),
        // D12: names that would print as something else.
        (vec!["sysinfo", "--label", "\u{202e}evil", "--save"], 2, "U+202E"),
        (vec!["sysinfo", "--label", "a\u{2066}b", "--save"], 2, "U+2066"),
        (vec!["sysinfo", "--label", "\u{200b}\u{200b}", "--save"], 2, "only invisible characters"),
        (vec!["sysinfo", "--label", "   ", "--save"], 2, "only invisible characters"),
        (vec!["sysinfo", "--label", "one\u{2028}two", "--save"], 2, "U+2028"),
        (vec!["sysinfo", "--label", "csi\u{9b}2J", "--save"], 2, "control character (\\x9b)"),
        (vec!["sysinfo", "--tag", "k=\u{202e}v", "--save"], 2, "U+202E"),
        (vec!["sysinfo", "--tag", "\u{feff}=v", "--save"], 2, "--tag's key is empty or only invisible characters"),
        (vec!["sysinfo", "--sample-interval", "0s", "--save"], 2, "--sample-interval must be from 10ms"),
        (vec!["sysinfo", "--sample-interval", "100000h", "--save"], 2, "--sample-interval must be from 10ms"),
        (vec!["run", "--dir", w, "--label", "\u{202e}x"], 2, "U+202E"),
        (vec!["run", "--dir", w, "--tag", "a=1", "--tag", "a=2"], 2, "given twice"),
        (vec!["run", "--dir", w, "--resume", "--dry-run"], 2, "cannot be used with"),
        // D15 and D16: disk.
        (vec!["disk", "--dir", w, "--interval", "100000h"], 2, "--interval 100000h: give from 0s to 1h"),
        (vec!["disk", "--dir", w, "--duration", "100000h"], 2, "--duration 100000h: give from 100ms to 1h"),
        (vec!["disk", "--dir", w, "--duration", "1ns"], 2, "--duration 1ns: give from 100ms"),
        (vec!["disk", "--dir", w, "--sustained", "100000h"], 2, "--sustained 100000h: give at most 72h"),
        (vec!["disk", "--dir", w, "--sustained", "5s"], 2, "give at least 10s"),
        (vec!["disk", "--dir", w, "--sustained", "10s", "--runs", "2"], 2, "--runs does not apply to --sustained"),
        (vec!["disk", "--dir", w, "--sustained", "10s", "--test", "rnd:4k:q1:t1:read"], 2, "--sustained measures writes"),
        (vec!["disk", "--dir", w, "--precondition"], 2, "add --sustained"),
        (seventy_tests.clone(), 2, "70 --test options are more than 64"),
        (two_thousand_tests.clone(), 2, "2000 --test options are more than 64"),
        (vec!["disk", "--dir", w, "--profile", "commit", "--runs", "0"], 2, "--runs does not apply to --profile commit"),
        (vec!["disk", "--dir", w, "--profile", "commit", "--runs", "2"], 2, "--runs does not apply to --profile commit"),
        (vec!["disk", "--dir", w, "--profile", "commit", "--interval", "1s"], 2, "--interval does not apply"),
        (vec!["disk", "--dir", w, "--profile", "commit", "--cross-check", "fio"], 2, "cross-checks with pg_test_fsync"),
        (vec!["disk", "--dir", w, "--profile", "commit", "--duration", "100000h"], 2, "give from 100ms to 1h"),
        (vec!["disk", "--dir", "/dev"], 2, "devtmpfs"),
        (vec!["disk", "--dir", "/dev/shm/../../proc"], 2, "pseudo file system"),
        (vec!["disk", "--dir", "/sys/kernel"], 2, "sysfs"),
        (vec!["disk", "--dir", fifo], 2, "is not a directory"),
        (vec!["disk", "--dir", w, "--write-sync", "fsync:0"], 2, "fsync:0"),
        (vec!["disk", "--dir", w, "--write-sync", "fsync:99999999999"], 2, "fsync:99999999999"),
        (vec!["disk", "--dir", w, "--test", "rnd:4k:q100000:t1:read"], 2, "queue depth"),
        (vec!["disk", "--dir", w, "--test", "rnd:4k:q1:t100000:read"], 2, "thread count"),
        (vec!["disk", "--dir", w, "--test", "rnd:0:q1:t1:read"], 2, "block size"),
        (vec!["disk", "--dir", w, "--test", "rnd:2g:q1:t1:read"], 2, "block size"),
        (vec!["disk", "--dir", w, "--test", "rnd:4k:q1:t1:mix150"], 2, "mix150"),
        (vec!["disk", "--dir", w, "--size", "1p"], 2, "--size"),
        (vec!["disk", "--dir", w, "--size", "99999999999999999999"], 2, "--size"),
        (vec!["disk", "--dir", w, "--label", ""], 2, "--label is empty"),
        (vec!["disk", "--dir", w, "--tag", "=v"], 2, "is not a tag"),
        (vec!["disk", "--dir", w, "--json", "--label", "\u{202e}"], 2, "U+202E"),
        // ranread.
        (vec!["ranread", "--dir", "/dev"], 2, "devtmpfs"),
        (vec!["ranread", "--dir", w, "--db", "postgres:/host/db"], 2, "not a PostgreSQL URL"),
        (vec!["ranread", "--dir", w, "--max-jobs", "100000"], 2, "--max-jobs"),
        (vec!["ranread", "--dir", w, "--target-latency", "0ms"], 2, "--target-latency"),
        (vec!["ranread", "--dir", w, "--size", "1p"], 2, "--size"),
        // D15 and D16: ranread's lists and bounds.
        (vec!["ranread", "--dir", w, "--jobs", "1,1"], 2, "--jobs: 1 is given twice"),
        (vec!["ranread", "--dir", w, "--jobs", &seventy], 2, "70 settings are more than 64"),
        (vec!["ranread", "--dir", w, "--jobs", &five_thousand_list], 2, "--jobs"),
        (vec!["ranread", "--dir", w, "--duration", "1ns"], 2, "--duration 1ns: give from 100ms to 24h"),
        (vec!["ranread", "--dir", w, "--duration", "100000h"], 2, "--duration 100000h: give from 100ms to 24h"),
        (vec!["ranread", "--dir", w, "--iterations", "99999999999999"], 2, "give at most 1000000000 reads per job"),
        (vec!["ranread", "--dir", w, "--target-latency", "100000h"], 2, "give at most 10s"),
        (vec!["ranread", "--dir", w, "--schema", "x"], 2, "--schema"),
        // D15, D16, D17: oltp.
        (vec!["oltp", "--dir", w, "--users", "2,2"], 2, "--users: 2 is given twice"),
        // The fourth battery's accepted nonsense (issue #67, F8).
        (vec!["oltp", "--dir", w, "--rate", "10", "--users", "auto"], 2, "--users auto doubles"),
        (vec!["oltp", "--dir", w, "--drop", "--rate", "10"], 2, "cannot be used with"),
        (vec!["oltp", "--dir", w, "--rate", "10", "--slo", "new-order:p95<=1ns"], 2, "from 1us to 1h"),
        (vec!["oltp", "--dir", w, "--max-tries=-1"], 2, "from 1 (never retried) to 1000"),
        (vec!["oltp", "--dir", w, "--seed", "x"], 2, "--seed"),
        (vec!["oltp", "--dir", w, "--users", &seventy], 2, "70 settings are more than 64"),
        (vec!["oltp", "--dir", w, "--users", &five_thousand_list], 2, "--users"),
        (vec!["oltp", "--dir", w, "--duration", "1ns"], 2, "--duration 1ns: give from 1s to 24h"),
        (vec!["oltp", "--dir", w, "--duration", "100000h"], 2, "give from 1s to 24h"),
        (vec!["oltp", "--dir", w, "--ramp", "100000h"], 2, "--ramp 100000h: give from 0s to 24h"),
        (vec!["oltp", "--dir", w, "--schema", "x"], 2, "leave it out with --target sqlite"),
        (vec!["oltp", "--dir", w, "--target", "postgres:/host/db"], 2, "is not a database URL"),
        (vec!["oltp", "--dir", w, "--target", "sqlite:/x"], 2, "is not a database URL"),
        (vec!["oltp", "--dir", w, "--profile", "tpcx"], 2, "give tpcc or tpcb"),
        (vec!["oltp", "--dir", w, "--warehouses", "0"], 2, "--warehouses '0'"),
        (vec!["oltp", "--dir", w, "--warehouses", "100000"], 2, "from 1 to 10000"),
        (vec!["oltp", "--dir", w, "--max-users", "0"], 2, "--max-users '0'"),
        (vec!["oltp", "--dir", w, "--loaders", "0"], 2, "--loaders '0'"),
        (vec!["oltp", "--dir", w, "--target-latency", "0ms"], 2, "--target-latency"),
        (vec!["oltp", "--dir", w, "--cross-check", "pgbench"], 2, "add --profile tpcb"),
        (vec!["oltp", "--dir", "/dev"], 2, "devtmpfs"),
        (vec!["ranread", "--dir", w, "--db", "postgres://u:Co,mma'4@127.0.0.1:1/x", "--jobs", "1"], 1, "postgres://u:***@127.0.0.1:1/x"),
        // D15 and D16: cube.
        (vec!["cube", "--dir", w, "--scale", "1e-12"], 2, "give a number from 0.001"),
        (vec!["cube", "--dir", w, "--data-cache", "0"], 2, "--data-cache 0: give at least 4 MiB"),
        (vec!["cube", "--dir", w, "--data-cache", "1k"], 2, "give at least 4 MiB"),
        (vec!["cube", "--dir", w, "--calc-threads", "2,2,2"], 2, "--calc-threads: 2 is given twice"),
        (vec!["cube", "--dir", w, "--restructure-threads", "1,1"], 2, "given twice"),
        (vec!["cube", "--dir", w, "--load-threads", &seventy], 2, "70 settings are more than 64"),
        (vec!["cube", "--dir", w, "--retrieval-users", &seventy], 2, "70 settings are more than 64"),
        (vec!["cube", "--dir", w, "--retrieval-users", &thousand], 2, "--retrieval-users"),
        (vec!["cube", "--dir", w, "--retrieval-users", "0"], 2, "--retrieval-users"),
        (vec!["cube", "--dir", w, "--retrievals", "--retrieval-duration", "0s"], 2, "--retrieval-duration"),
        (vec!["cube", "--dir", w, "--retrievals", "--retrieval-duration", "100000h"], 2, "--retrieval-duration"),
        (vec!["cube", "--dir", w, "--retrievals-alone"], 2, "apply to retrievals"),
        (vec!["cube", "--dir", w, "--fix-threads", "0"], 2, "--fix-threads"),
        (vec!["cube", "--dir", w, "--repeat", "100000"], 2, "--repeat 100000"),
        (vec!["cube", "--dir", w, "--seed", "-1"], 2, "--seed"),
        (vec!["cube", "--dir", "/dev"], 2, "devtmpfs"),
        (vec!["cube", "--dir", "/proc/self"], 2, "pseudo file system"),
        (vec!["cube", "--dir", fifo], 2, "not a directory"),
        // D15: fleets.
        (vec!["fleet", "--hosts", many_hosts, "disk", "--dir", w], 2, "1100 hosts are more than a fleet over ssh starts (256"),
        (vec!["fleet", "--transport", "local", "--agents", "0", "disk", "--dir", w], 2, "--agents 0"),
        (vec!["fleet", "--transport", "local", "--agents", "5000", "disk", "--dir", w], 2, "--agents 5000"),
        (vec!["fleet", "--transport", "ssh", "disk", "--dir", w], 2, "needs its hosts"),
        (vec!["fleet", "--host", "-oProxyCommand=touch /tmp/x", "disk", "--dir", w], 2, "is not a host name"),
        (vec!["fleet", "--host", "a", "--agents", "2", "disk", "--dir", w], 2, "--agents is for"),
        (vec!["fleet", "--transport", "local", "--agents", "2", "--host", "a", "disk", "--dir", w], 2, "--host and --hosts are for"),
        (vec!["fleet", "--transport", "carrier-pigeon", "disk", "--dir", w], 2, "carrier-pigeon"),
        (vec!["fleet", "--transport", "local", "--agents", "2", "--prepare-timeout", "0s", "disk", "--dir", w], 2, "--prepare-timeout"),
        (vec!["fleet", "--transport", "local", "--agents", "2", "exec", "--dir", w], 2, "exec"),
        (vec!["fleet", "--transport", "local", "--agents", "2", "cube", "--dir", w], 2, "cube"),
        (vec!["fleet", "--transport", "local", "--agents", "2", "disk", "--dir", w, "--label", "\x1b[2J"], 2, "control character"),
        (vec!["fleet", "--transport", "external", "--agents", "2", "disk", "--dir", w], 2, "needs a store every host reaches"),
        (vec!["fleet", "--host", "a", "disk", "--dir", w], 2, "needs a store every host reaches"),
        (vec!["fleet", "--transport", "local", "--agents", "2"], 2, "requires a subcommand"),
    ];
    assert!(cases.len() >= 250, "{} cases", cases.len());
    let mut failures = Vec::new();
    for (args, code, message) in &cases {
        let stored = runs(&store).len();
        let Some(output) = run_bounded(&root, &store, args, REFUSAL_LIMIT) else {
            failures.push(format!("{args:?}: hung (no end within {} s)", REFUSAL_LIMIT.as_secs()));
            continue;
        };
        let text = stderr(&output);
        if output.status.code() != Some(*code) || !text.contains(message) || text.contains("panicked") {
            failures.push(format!(
                "{args:?}: exit {:?}, expected {code} and '{message}' in:\n{text}",
                output.status.code()
            ));
        }
        if *code == 2 && runs(&store).len() != stored {
            failures.push(format!("{args:?}: a usage error stored a run"));
        }
    }
    // What a capture holds but cannot replay is counted and said, never dropped: `inspect` reads on.
    let skips = run_bounded(&root, &store, &["replay", "inspect", &capture("skips.csv")], REFUSAL_LIMIT).unwrap();
    let said = String::from_utf8_lossy(&skips.stdout);
    for counted in ["a value whose quote never closes", "1 still open at its end", "statements: 1"] {
        if !skips.status.success() || !said.contains(counted) {
            failures.push(format!("replay inspect skips.csv: '{counted}' not said: {}\n{said}", stderr(&skips)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
    assert_eq!(checksums(&user), before, "a file of the user's changed");
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "bad input left files behind");
    let strays: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| {
            name.contains("://") || name.starts_with("mysql") || name.starts_with("https") || name.starts_with("ftp")
        })
        .collect();
    assert!(strays.is_empty(), "store URLs became files: {strays:?}");
}

#[test]
fn passwords_never_reach_the_store_or_the_screen() {
    let dir = scratch("safety", "passwords");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let output = envbench(
        &store,
        &[
            "exec",
            "--dir",
            d,
            "--name",
            "secrets",
            "--repeat",
            "1",
            "--step",
            "url=echo postgres://app:url-secret@db/x",
            "--step",
            "conninfo=echo host=db password=kv-secret dbname=x",
            // D7: `,` `;` and `'` are legal in a URL's password.
            "--step",
            "comma=echo 'postgres://app:Co,mma-secret@db/x mysql://root:Semi;colon-secret@db/y'",
            "--step",
            "quote=echo \"postgres://app:Quo'te-secret@db/x?password=q,uery-secret&sslmode=off\"",
            // D11: the forms database clients take passwords in.
            "--step",
            "spaced=echo 'host=db password = spaced-secret dbname=x'",
            "--step",
            "mysql=echo mysql -uroot -pmysql-secret test",
            "--step",
            "sqlplus=echo sqlplus -s scott/sqlplus-secret@orcl @run.sql",
            "--step",
            "sqlcmd=echo sqlcmd -S db -U sa -P sqlcmd-secret -i load.sql",
            "--step",
            "maxl=echo essmsh -l admin essmsh-secret -s essbase01 calc.msh; echo login admin maxl-secret on essbase01",
            "--step",
            "json=echo '{\"user\": \"app\", \"password\": \"json-secret\"}'",
            "--step",
            "yaml=echo 'password: yaml-secret'",
            "--setup",
            "PGPASSWORD=env-secret true",
            "--tag",
            "target=postgres://app:tag-secret@db/x",
        ],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let bad = envbench(
        &store,
        &["--store", "postgres://app:store-secret@127.0.0.1:1/x?password=query-secret", "results", "list"],
    );
    let uuid = runs(&store)[0]["uuid"].as_str().unwrap().to_string();
    let shown = envbench(&store, &["results", "show", &uuid]);
    let json = show(&store, &uuid).to_string();
    let raw = std::fs::read(&store).unwrap();
    let raw = String::from_utf8_lossy(&raw);
    for secret in [
        "url-secret",
        "kv-secret",
        "env-secret",
        "tag-secret",
        "store-secret",
        "query-secret",
        "mma-secret",
        "colon-secret",
        "te-secret",
        "uery-secret",
        "spaced-secret",
        "mysql-secret",
        "sqlplus-secret",
        "sqlcmd-secret",
        "essmsh-secret",
        "maxl-secret",
        "json-secret",
        "yaml-secret",
    ] {
        for (what, text) in [
            ("stdout", stdout(&output)),
            ("stderr", stderr(&output)),
            ("store error", stderr(&bad)),
            ("results show", stdout(&shown)),
            ("results show --json", json.clone()),
            ("the store file", raw.to_string()),
        ] {
            assert!(!text.contains(secret), "{secret} appears in {what}:\n{text}");
        }
    }
    assert!(json.contains("postgres://app:***@db/x") && json.contains("password=***"), "{json}");
}

#[test]
fn a_closed_pipe_is_a_normal_end() {
    let dir = scratch("safety", "pipe");
    let store = dir.join("results.db");
    let output = envbench(
        &store,
        &["exec", "--dir", dir.to_str().unwrap(), "--name", "many", "--repeat", "300", "--step", "t=true"],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    let uuid = runs(&store)[0]["uuid"].as_str().unwrap().to_string();
    for command in
        ["results list | head -1", &format!("results show {uuid} | head -5"), "results export --format json | head -1"]
    {
        let script = format!("set -o pipefail; {} {command}", env!("CARGO_BIN_EXE_envbench").replace(' ', "\\ "));
        let output = Command::new("bash")
            .args(["-c", &script])
            .env("ENVBENCH_STORE", &store)
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(0), "{command}: {}", stderr(&output));
        assert!(!stderr(&output).contains("panicked"), "{command}: {}", stderr(&output));
    }
}

#[test]
fn a_run_killed_hard_is_marked_interrupted_and_can_be_pushed() {
    let dir = scratch("safety", "killed");
    let store = dir.join("results.db");
    let mut child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["exec", "--dir", dir.to_str().unwrap(), "--name", "long", "--repeat", "1", "--step", "sleep=sleep 60"])
        .env("ENVBENCH_STORE", &store)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline && (!store.exists() || runs(&store).is_empty()) {
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let run = &runs(&store)[0];
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(run["status_reason"].as_str().unwrap().contains("ended without finishing"), "{run}");
    let copy = dir.join("copy.db");
    let pushed = envbench(&store, &["push", "--to", copy.to_str().unwrap()]);
    assert!(stdout(&pushed).contains("pushed 1 run"), "{}", stdout(&pushed));
}

#[test]
fn exec_keeps_bounded_output_and_counts_failures() {
    let dir = scratch("safety", "exec");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let flood = envbench(
        &store,
        &[
            "exec",
            "--dir",
            d,
            "--name",
            "flood",
            "--repeat",
            "1",
            "--step",
            "flood=head -c 50000000 /dev/zero | tr '\\0' x",
        ],
    );
    assert!(flood.status.success(), "{}", stderr(&flood));
    let uuid = runs(&store)[0]["uuid"].as_str().unwrap().to_string();
    let attachment = show(&store, &uuid)["attachments"]["exec"].to_string();
    assert!(attachment.len() < 200_000, "a 50 MB line became a {} byte attachment", attachment.len());
    assert!(attachment.contains("more bytes not kept"));

    let all_failed = envbench(
        &store,
        &[
            "exec",
            "--dir",
            d,
            "--name",
            "broken",
            "--repeat",
            "2",
            "--keep-going",
            "--step",
            "a=exit 3",
            "--step",
            "b=exit 4",
        ],
    );
    assert_eq!(all_failed.status.code(), Some(1), "{}", stderr(&all_failed));
    assert!(stderr(&all_failed).contains("4 executions failed"), "{}", stderr(&all_failed));
    let run = &runs(&store)[0];
    assert_eq!(run["status"], "complete");
    assert!(run["status_reason"].as_str().unwrap().contains("4 executions failed"));

    let teardown = envbench(
        &store,
        &[
            "exec",
            "--dir",
            d,
            "--name",
            "t",
            "--repeat",
            "1",
            "--step",
            "a=true",
            "--teardown",
            "echo cleanup broke; exit 5",
        ],
    );
    assert_eq!(teardown.status.code(), Some(1), "{}", stderr(&teardown));
    assert!(
        stderr(&teardown).contains("teardown") && stderr(&teardown).contains("cleanup broke"),
        "{}",
        stderr(&teardown)
    );
}

#[test]
fn control_characters_are_escaped_and_long_cells_cut_when_listing() {
    let dir = scratch("safety", "terminal");
    let store = dir.join("results.db");
    assert!(envbench(&store, &["sysinfo", "--save", "--path", dir.to_str().unwrap()]).status.success());
    // A store written by another program (or an older envbench) may hold anything.
    let id = runs(&store)[0]["uuid"].as_str().unwrap().to_string();
    let long = "y".repeat(100_000);
    sqlite3(
        &store,
        &format!(
            "INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, ended_at, status, \
             fingerprint_id) SELECT '{}', 'disk', char(27) || '[2J' || char(13) || 'evil' || char(7), 'x', '0', \
             started_at, ended_at, 'complete', fingerprint_id FROM runs WHERE uuid = '{id}'; \
             INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, ended_at, status, \
             fingerprint_id) SELECT '{}', 'disk', '{long}', 'x', '0', started_at, ended_at, 'complete', \
             fingerprint_id FROM runs WHERE uuid = '{id}';",
            "aaaaaaaa-0000-0000-0000-000000000001", "bbbbbbbb-0000-0000-0000-000000000001"
        ),
    );
    let list = envbench(&store, &["results", "list"]);
    let text = stdout(&list);
    assert!(!text.contains('\x1b') && !text.contains('\r') && !text.contains('\x07'), "{text:?}");
    assert!(text.contains(r"\x1b[2J\revil\x07"), "{text}");
    assert!(text.lines().all(|line| line.chars().count() < 400), "a long label widened every row");
}

/// Run SQL on a store file directly, as another program would.
fn sqlite3(store: &Path, sql: &str) {
    rusqlite::Connection::open(store).unwrap().execute_batch(sql).unwrap();
}

/// The cube's files with their checksums (the directory must stay exactly as the run left it).
fn cube_files(dir: &Path) -> BTreeMap<PathBuf, u64> {
    checksums(&dir.join("cube")).into_iter().filter(|(path, _)| !path.ends_with("envbench-cube.lock")).collect()
}

#[test]
fn cube_readers_never_write_and_writers_exclude_each_other() {
    let dir = scratch("safety", "cube-lock");
    let store = dir.join("results.db");
    let cube = dir.join("cube-work");
    let c = cube.to_str().unwrap();
    let query = "Years=FY19, Scenario=Actual, Version=Final, Currency=Local, Entity=TotalEntity, Product=Product, \
                 Account=NetIncome, Period=YearTotal";
    assert!(envbench(&store, &["cube", "--dir", c, "--scale", "0.01", "--repeat", "1"]).status.success());
    let finished = cube_files(&cube);
    let answer = envbench(&store, &["cube", "get", "--dir", c, query]);
    assert!(answer.status.success(), "{}", stderr(&answer));

    // A run in progress: readers are refused (and write nothing), a second writer is refused.
    let mut writer = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["cube", "--dir", c, "--scale", "0.01", "--repeat", "50"])
        .env("ENVBENCH_STORE", &store)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let marker = cube.join("cube").join("step-in-progress.json");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !marker.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(marker.exists(), "the writer never began a step");
    let reader = envbench(&store, &["cube", "get", "--dir", c, query]);
    assert_eq!(reader.status.code(), Some(1), "{}", stderr(&reader));
    assert!(stderr(&reader).contains("is writing this cube now"), "{}", stderr(&reader));
    assert!(!stdout(&reader).contains("#Missing"));
    let second = envbench(&store, &["cube", "--dir", c, "--scale", "0.01", "--repeat", "1"]);
    assert_eq!(second.status.code(), Some(1), "{}", stderr(&second));
    assert!(stderr(&second).contains("another envbench cube run"), "{}", stderr(&second));

    // Killed hard mid-step: the reader says so, exit 1, and the files stay as the run left them. The writer is
    // stopped first and killed only while its marker says a step is under way, so a busy host cannot slip the
    // step's end in between.
    let pid = writer.id() as libc::pid_t;
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(pid, libc::SIGSTOP) };
        if marker.exists() {
            break;
        }
        unsafe { libc::kill(pid, libc::SIGCONT) };
        assert!(Instant::now() < deadline, "the writer never began another step");
        std::thread::sleep(Duration::from_millis(1));
    }
    writer.kill().unwrap();
    writer.wait().unwrap();
    assert!(marker.exists(), "killed mid-step");
    let left = cube_files(&cube);
    let reader = envbench(&store, &["cube", "get", "--dir", c, query]);
    assert_eq!(reader.status.code(), Some(1), "{}", stderr(&reader));
    assert!(stderr(&reader).contains("left mid-step"), "{}", stderr(&reader));
    assert!(stderr(&reader).contains("run `envbench cube`"), "{}", stderr(&reader));
    assert!(!stderr(&reader).contains("InterruptedStep {"), "a debug struct is no message");
    assert_eq!(cube_files(&cube), left, "a reader wrote to the cube");
    assert_ne!(left, finished);
    // The next run rebuilds it.
    let rebuilt = envbench(&store, &["cube", "--dir", c, "--scale", "0.01", "--repeat", "1"]);
    assert!(rebuilt.status.success(), "{}", stderr(&rebuilt));
    assert!(stdout(&rebuilt).contains("unfinished: the cube was reset first"), "{}", stdout(&rebuilt));
    assert_eq!(stdout(&envbench(&store, &["cube", "get", "--dir", c, query])), stdout(&answer));
}

/// Run `script` with a tmpfs of `size` mounted on `mount`, in a private mount namespace (gone when the shell ends).
/// `{m}` in the script is the mount point, `{bin}` the binary.
fn with_small_file_system(mount: &Path, size: &str, store: &Path, script: &str) {
    std::fs::create_dir_all(mount).unwrap();
    let script = format!("mount -t tmpfs -o size={size} tmpfs {{m}} || exit 1; {script}")
        .replace("{m}", &mount.display().to_string())
        .replace("{bin}", env!("CARGO_BIN_EXE_envbench"));
    let status = Command::new("unshare")
        .args(["-m", "--propagation", "private", "bash", "-c", &script])
        .env("ENVBENCH_STORE", store)
        .env("NO_COLOR", "1")
        .status()
        .expect("unshare runs (util-linux)");
    assert!(status.success(), "the test needs root to mount a small tmpfs in a private namespace");
}

#[test]
fn a_full_disk_under_the_cube_is_reported_and_cleaned_up() {
    let dir = scratch("safety", "cube-full");
    let store = dir.join("results.db");
    let d = dir.display();
    // The run begins within the space its scale needs; a ballast file then fills the rest, as another program would.
    with_small_file_system(
        &dir.join("small"),
        "100m",
        &store,
        &format!(
            "({{bin}} cube --dir {{m}}/work --scale 0.002 --repeat 50 > {d}/out.txt 2> {d}/err.txt; \
             echo $? > {d}/code.txt) & \
             for i in $(seq 1 3000); do [ -e {{m}}/work/cube/g0001-ess00001.pag ] && break; sleep 0.01; done; \
             head -c 200000000 /dev/zero > {{m}}/ballast 2>/dev/null; wait; \
             ls -R {{m}} > {d}/left.txt; ls -l {{m}}/ballast >> {d}/left.txt"
        ),
    );
    let code = std::fs::read_to_string(dir.join("code.txt")).unwrap();
    let err = std::fs::read_to_string(dir.join("err.txt")).unwrap();
    let left = std::fs::read_to_string(dir.join("left.txt")).unwrap();
    assert_eq!(code.trim(), "1", "{err}");
    assert!(err.contains("the disk is full") && err.contains("partial files were removed"), "{err}");
    // The cube's page files and index are gone; the input data was complete (its manifest is written last), so it
    // is kept for the next run.
    assert!(!left.contains(".pag") && !left.contains("cube.ind"), "{left}");
    assert!(!left.contains("native_0") || left.contains("manifest.json"), "partial input data left: {left}");
    assert!(left.contains("ballast"), "the other program's file is left alone: {left}");
    assert_eq!(runs(&store)[0]["status"], "failed");

    // Asked for more than the file system holds, the cube refuses before writing anything.
    with_small_file_system(
        &dir.join("tiny"),
        "8m",
        &store,
        &format!(
            "{{bin}} cube --dir {{m}}/work --scale 1 > /dev/null 2> {d}/err2.txt; echo $? > {d}/code2.txt; \
             ls -A {{m}} > {d}/left2.txt"
        ),
    );
    let err = std::fs::read_to_string(dir.join("err2.txt")).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("code2.txt")).unwrap().trim(), "2", "{err}");
    assert!(err.contains("not enough free space for the cube"), "{err}");
    // D17: the refusal came before anything was made.
    assert_eq!(std::fs::read_to_string(dir.join("left2.txt")).unwrap().trim(), "", "the refusal left a directory");
}

#[test]
fn the_viewer_refuses_other_hosts() {
    let dir = scratch("safety", "viewer");
    let store = dir.join("results.db");
    assert!(envbench(&store, &["sysinfo", "--save", "--path", dir.to_str().unwrap()]).status.success());
    let mut server = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("ENVBENCH_STORE", &store)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut err = std::io::BufReader::new(server.stderr.take().unwrap());
    std::io::BufRead::read_line(&mut err, &mut line).unwrap();
    let address = line.split("http://").nth(1).unwrap().split('/').next().unwrap().to_string();
    let request = |host: &str| {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        write!(stream, "GET / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut response = String::new();
        std::io::Read::read_to_string(&mut stream, &mut response).unwrap();
        response
    };
    let good = request(&address);
    let rebound = request("rebind.attacker.example");
    // D12: two Host headers are a bad request (RFC 9112 3.2), whichever comes first.
    let two_hosts = {
        let mut stream = std::net::TcpStream::connect(&address).unwrap();
        write!(
            stream,
            "GET / HTTP/1.1\r\nHost: {address}\r\nHost: rebind.attacker.example\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut response = String::new();
        std::io::Read::read_to_string(&mut stream, &mut response).unwrap();
        response
    };
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(good.starts_with("HTTP/1.1 200"), "{good}");
    assert!(good.to_ascii_lowercase().contains("x-content-type-options: nosniff"));
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound}");
    assert!(two_hosts.starts_with("HTTP/1.1 400"), "{two_hosts}");
    assert!(two_hosts.to_ascii_lowercase().contains("x-content-type-options: nosniff"), "{two_hosts}");
}

#[test]
fn store_urls_with_unknown_schemes_never_become_files() {
    let dir = scratch("safety", "schemes");
    let store = dir.join("results.db");
    assert!(envbench(&store, &["sysinfo", "--save", "--path", dir.to_str().unwrap()]).status.success());
    let pushed = run_in(&dir, &store, &["push", "--to", "mysql://x@y/z"]);
    assert_eq!(pushed.status.code(), Some(2), "{}", stderr(&pushed));
    assert!(stderr(&pushed).contains("postgres://"), "{}", stderr(&pushed));
    assert!(!dir.join("mysql:").exists());
    let _: Value = serde_json::from_slice(&envbench(&store, &["results", "list", "--json"]).stdout).unwrap();
}

/// The battery's finding D3: `report -o`, `results export -o` and `run --report` overwrote any file, the store
/// being read included. Now: a new file, or one envbench wrote; anything else only with --force; the store never.
#[test]
fn envbench_writes_only_new_files_or_its_own_and_never_the_store() {
    let dir = scratch("safety", "outputs");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    assert!(envbench(&store, &["sysinfo", "--save", "--path", d]).status.success());
    let in_dir = |args: &[&str]| run_in(&dir, &store, args);

    // New files, then the same files again: envbench recognises its own report and exports.
    for _ in 0..2 {
        for args in [
            vec!["report", "-o", "report.html"],
            vec!["results", "export", "--format", "csv", "-o", "export.csv"],
            vec!["results", "export", "--format", "tsv", "-o", "export.tsv"],
            vec!["results", "export", "--format", "json", "-o", "export.json"],
        ] {
            let output = in_dir(&args);
            assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        }
    }
    let report = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(report.contains("<meta name=\"generator\" content=\"envbench\">"), "{report}");
    // An export of one format replaced by another: still envbench's file.
    assert!(in_dir(&["results", "export", "--format", "json", "-o", "export.csv"]).status.success());
    assert!(!dir.read_dir().unwrap().any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));

    // A file of the user's: refused, unchanged; replaced only with --force.
    std::fs::write(dir.join("notes.txt"), "my notes\n").unwrap();
    for args in [
        vec!["report", "-o", "notes.txt"],
        vec!["results", "export", "--format", "csv", "-o", "notes.txt"],
        vec!["run", "--suite", "quick", "--dir", d, "--report", "notes.txt"],
    ] {
        let output = in_dir(&args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("--force"), "{}", stderr(&output));
    }
    assert_eq!(std::fs::read_to_string(dir.join("notes.txt")).unwrap(), "my notes\n");
    assert_eq!(runs(&store).len(), 1, "the suite never started");
    assert!(in_dir(&["report", "-o", "notes.txt", "--force"]).status.success());
    assert!(std::fs::read_to_string(dir.join("notes.txt")).unwrap().starts_with("<!DOCTYPE html>"));

    // The store being read: never, not even with --force; it still opens afterwards.
    let copy = dir.join("copy.db");
    std::fs::copy(&store, &copy).unwrap();
    for args in [
        vec!["report", "-o", "copy.db"],
        vec!["report", "-o", "copy.db", "--force"],
        vec!["results", "export", "--format", "csv", "-o", "copy.db", "--force"],
    ] {
        let output = run_in(&dir, &copy, &args);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains("is the results store being read"), "{}", stderr(&output));
    }
    assert_eq!(runs(&copy).len(), 1, "the store is intact");

    // A pipe is written as a stream.
    let fifo = dir.join("pipe");
    assert!(Command::new("mkfifo").arg(&fifo).status().unwrap().success());
    let reader =
        Command::new("sh").args(["-c", &format!("cat {} > {}/from-pipe.csv", fifo.display(), d)]).spawn().unwrap();
    let output = in_dir(&["results", "export", "--format", "csv", "-o", "pipe"]);
    assert!(output.status.success(), "{}", stderr(&output));
    reader.wait_with_output().unwrap();
    assert!(std::fs::read_to_string(dir.join("from-pipe.csv")).unwrap().starts_with("run,label,"));
}

/// The battery's finding D5: a dropped ssh session (SIGHUP) or Ctrl-\ (SIGQUIT) left the 1 GiB test file behind.
#[test]
fn a_hangup_or_a_quit_stops_a_run_as_cleanly_as_ctrl_c() {
    let dir = scratch("safety", "signals");
    let store = dir.join("results.db");
    for signal in [libc::SIGHUP, libc::SIGQUIT] {
        let work = dir.join(format!("work-{signal}"));
        std::fs::create_dir_all(&work).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_envbench"))
            .args(["disk", "--dir", work.to_str().unwrap(), "--quick", "--size", "64m"])
            .env("ENVBENCH_STORE", &store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while std::fs::read_dir(&work).unwrap().count() == 0 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(std::fs::read_dir(&work).unwrap().count(), 1, "the run made its test file");
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(130), "signal {signal}");
        assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "signal {signal} left the test file behind");
        let run = &runs(&store)[0];
        assert_eq!(run["status"], "interrupted", "{run}");
        assert!(run["status_reason"].as_str().unwrap().contains("SIGHUP"), "{run}");
    }
}

/// The battery's finding D10: exec names, step output, a suite's name and stored text with C1 controls reached the
/// terminal raw. Everything envbench writes now passes one boundary.
#[test]
fn stored_text_and_child_output_cannot_drive_the_terminal() {
    let dir = scratch("safety", "boundary");
    let store = dir.join("results.db");
    let d = dir.to_str().unwrap();
    let raw_controls = |text: &str| text.chars().any(|c| (c.is_control() && c != '\n' && c != '\t') || c == '\u{202e}');

    // A failing step's output, shown in the error: a screen clear, a title change, a CSI.
    let failing = envbench(
        &store,
        &[
            "exec",
            "--dir",
            d,
            "--name",
            "t",
            "--repeat",
            "1",
            "--step",
            "a=printf '\\033[2J\\033]0;pwned\\007\\302\\2332J'; exit 3",
        ],
    );
    assert_eq!(failing.status.code(), Some(1), "{}", stderr(&failing));
    assert!(!raw_controls(&stderr(&failing)) && !raw_controls(&stdout(&failing)), "{:?}", stderr(&failing));
    assert!(stderr(&failing).contains("\\x1b[2J"), "{}", stderr(&failing));

    // A store written by another program: C1 controls and a bidi override in a label and a command line.
    assert!(envbench(&store, &["sysinfo", "--save", "--path", d]).status.success());
    let saved = runs(&store)[0]["uuid"].as_str().unwrap().to_string();
    let id = "cccccccc-0000-0000-0000-000000000001".to_string();
    sqlite3(
        &store,
        &format!(
            "INSERT INTO runs (uuid, workload, label, command_line, tool_version, started_at, ended_at, status, \
             fingerprint_id) SELECT '{id}', 'sysinfo', 'evil' || char(155) || '2J' || char(8238) || 'txt', \
             'x' || char(27) || ']0;title' || char(7), '0', started_at, ended_at, 'complete', fingerprint_id \
             FROM runs WHERE uuid = '{saved}'"
        ),
    );
    for args in [vec!["results", "show", id.as_str()], vec!["results", "list"], vec!["results", "show", "--json", &id]]
    {
        let output = envbench(&store, &args);
        assert!(output.status.success(), "{args:?}: {}", stderr(&output));
        assert!(!raw_controls(&stdout(&output)), "{args:?}: {:?}", stdout(&output));
    }
    let json: Value = serde_json::from_slice(&envbench(&store, &["results", "show", "--json", &id]).stdout).unwrap();
    assert_eq!(json["label"], "evil\u{9b}2J\u{202e}txt", "escaped as JSON, the same text");

    // A suite's name with an OSC sequence (TOML writes it with \u escapes).
    let suite = dir.join("osc.toml");
    std::fs::write(&suite, "[suite]\nname = \"x\\u001b]0;title\\u0007\"\n\n[sysinfo]\n").unwrap();
    let output = envbench(&store, &["run", "--suite", suite.to_str().unwrap(), "--dir", d, "--dry-run"]);
    assert!(!raw_controls(&stdout(&output)) && !raw_controls(&stderr(&output)), "{output:?}");
}

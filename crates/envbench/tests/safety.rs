//! Safety, tried as a hostile user would: over a hundred bad inputs through the real binary, each ending in exit
//! status 1 or 2 with a message that names the problem, never a panic, never a file of the user's changed and no run
//! stored for a usage error; and the defects a hostile battery once found, each reproduced: a reader that wiped the
//! cube, a cube run that deleted files it did not make, store URLs that became files, leaked passwords, panics on
//! closed pipes and huge counts, runs killed hard left `running`, unbounded `exec` output, an unbounded suite matrix,
//! terminal escapes in labels, and a full disk under the cube.

mod common;

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
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .current_dir(cwd)
        .env("ENVBENCH_STORE", store)
        .env("NO_COLOR", "1")
        .env("XDG_DATA_HOME", cwd.join("xdg"))
        .output()
        .expect("the binary runs")
}

#[test]
fn a_hundred_bad_inputs_end_in_clear_errors_and_change_nothing() {
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
    let long_label = "x".repeat(300);
    let many_threads: String = (1..=20).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let (huge, bad) = (huge_matrix.to_str().unwrap(), bad_suite.to_str().unwrap());

    // One stored run to show, compare and push.
    assert!(envbench(&store, &["sysinfo", "--save", "--path", w]).status.success());
    let before = checksums(&user);

    #[rustfmt::skip]
    let cases: Vec<(Vec<&str>, i32, &str)> = vec![
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
        (vec!["report", "-o", "/no/such/dir/report.html"], 1, "cannot write the report"),
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
        (vec!["tpch", "--dir", w, "--query-timeout", "0s"], 2, "--query-timeout must be longer than zero"),
        (vec!["tpch", "--dir", w, "--query-timeout", "soon"], 2, "--query-timeout"),
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
        // Suites.
        (vec!["run", "--suite", "nosuch", "--dir", w], 2, "not a built-in suite"),
        (vec!["run", "--suite", bad, "--dir", w], 2, "line 4"),
        (vec!["run", "--suite", huge, "--dir", w, "--dry-run"], 2, "more than 10000"),
        (vec!["run", "--dir", "/no/such"], 2, "not a directory"),
        (vec!["run", "--suite", "quick", "--resume", "--dir", w], 2, "nothing to resume"),
        (vec!["run", "--dir", w, "--label", "bell\x07"], 2, "control character"),
    ];
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let mut failures = Vec::new();
    for (args, code, message) in &cases {
        let stored = runs(&store).len();
        let output = run_in(&root, &store, args);
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
    for secret in ["url-secret", "kv-secret", "env-secret", "tag-secret", "store-secret", "query-secret"] {
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
        .args(["exec", "--dir", dir.to_str().unwrap(), "--name", "long", "--repeat", "1", "--step", "sleep=sleep 5"])
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

    // Killed hard mid-step: the reader says so, exit 1, and the files stay as the run left them.
    while !marker.exists() {
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
        &format!("{{bin}} cube --dir {{m}}/work --scale 1 > /dev/null 2> {d}/err2.txt; echo $? > {d}/code2.txt"),
    );
    let err = std::fs::read_to_string(dir.join("err2.txt")).unwrap();
    assert_eq!(std::fs::read_to_string(dir.join("code2.txt")).unwrap().trim(), "2", "{err}");
    assert!(err.contains("not enough free space for the cube"), "{err}");
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
    server.kill().unwrap();
    server.wait().unwrap();
    assert!(good.starts_with("HTTP/1.1 200"), "{good}");
    assert!(good.to_ascii_lowercase().contains("x-content-type-options: nosniff"));
    assert!(rebound.starts_with("HTTP/1.1 421"), "{rebound}");
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

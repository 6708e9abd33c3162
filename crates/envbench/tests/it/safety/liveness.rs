//! A run that is still running is seen running from everywhere, a store that cannot be written says why, and an
//! `exec` step's processes never outlive it: the real binary, the real stores (a SQLite file, the local PostgreSQL
//! server), real namespaces and real signals. Run as root (as CI does): `unshare` makes PID and mount namespaces.
//!
//! Covered: a live run seen from another PID namespace (`unshare -pf --mount-proc`) stays `running` and then
//! completes with its results, on a SQLite and a PostgreSQL store (issue #35, D2); a store on a read-only file system
//! is refused for writing saying so, and read (D17); a step's background child holding its output holds neither the
//! step nor Ctrl-C, and a step's processes end with envbench when it is killed hard (D13); over-long exec and step
//! names are refused before anything is stored (D16).

use crate::common::{Schema, envbench, runs, scratch, stderr};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long a test waits for what must happen at once (a process to end, a run to appear): far more than it takes,
/// far less than the 300 s the commands would take if it did not happen.
const DEADLINE: Duration = Duration::from_secs(60);

/// Start `envbench exec` on a store in the background, its output discarded.
fn start_exec(store: &Path, dir: &Path, args: &[&str]) -> Child {
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["exec", "--dir", dir.to_str().unwrap()])
        .args(args)
        .env("ENVBENCH_STORE", store)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the binary runs")
}

/// Wait until `done` holds, at most [`DEADLINE`]; whether it did.
fn wait_for(mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + DEADLINE;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

/// Wait for a child to exit, at most [`DEADLINE`]; its exit code, `None` when it did not exit (it is then killed).
fn exit_code(child: &mut Child) -> Option<i32> {
    let mut status = None;
    wait_for(|| {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status.map(|s| s.code().unwrap_or(-1))
}

/// Whether process `pid` is running (a zombie has ended).
fn running(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
        .is_ok_and(|stat| !stat[stat.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
}

/// The pid a step wrote into `file`.
fn pid_in(file: &Path) -> String {
    std::fs::read_to_string(file).unwrap().trim().to_string()
}

/// The runs of a store as `results list --json` shows them from a PID namespace of its own, with its own /proc (as
/// a container sharing the host's machine and boot ids sees them).
fn runs_from_another_pid_namespace(store: &str) -> Vec<serde_json::Value> {
    let output = Command::new("unshare")
        .args(["-pf", "--mount-proc", env!("CARGO_BIN_EXE_envbench"), "results", "list", "--json"])
        .env("ENVBENCH_STORE", store)
        .output()
        .expect("unshare runs (util-linux)");
    assert!(output.status.success(), "the test needs root for unshare -p: {}", stderr(&output));
    serde_json::from_slice::<serde_json::Value>(&output.stdout).unwrap().as_array().unwrap().clone()
}

/// The run of issue #35's D2, on the store at `store`: two repetitions of a step that waits for a file the test
/// creates once it has looked at the run from another PID namespace.
fn a_live_run_is_running_from_another_pid_namespace(store: &str, dir: &Path) {
    let go = dir.join("go");
    // Bounded, so a failed test leaves nothing running for long.
    let step = format!("a=for i in $(seq 1 600); do [ -e {} ] && exit 0; sleep 0.1; done; exit 1", go.display());
    let mut child = start_exec(Path::new(store), dir, &["--name", "ns", "--repeat", "2", "--step", &step]);
    let begun = || {
        let listed = envbench(Path::new(store), &["results", "list", "--json"]);
        listed.status.success() && crate::common::stdout(&listed).trim() != "[]"
    };
    assert!(wait_for(begun), "the run never began");

    let seen = runs_from_another_pid_namespace(store);
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0]["status"], "running", "a live run seen from another PID namespace: {}", seen[0]);

    std::fs::write(&go, "").unwrap();
    assert_eq!(exit_code(&mut child), Some(0), "the run ends well, its results kept");
    let run = &runs(Path::new(store))[0];
    assert_eq!(run["status"], "complete", "{run}");
    assert_eq!(run["result_count"], 3, "elapsed, user and system CPU of step a: {run}");
    assert_eq!(runs_from_another_pid_namespace(store)[0]["status"], "complete");
}

#[test]
fn a_live_run_on_a_sqlite_store_is_running_from_another_pid_namespace() {
    let dir = scratch("liveness", "sqlite-namespace");
    let store = dir.join("results.db");
    a_live_run_is_running_from_another_pid_namespace(store.to_str().unwrap(), &dir);
    let locks = std::fs::read_dir(&dir).unwrap().filter(|e| e.as_ref().unwrap().file_name() != "go").count();
    assert_eq!(locks, 1, "a run that ended leaves nothing beside its store");
}

#[test]
fn a_live_run_on_a_postgres_store_is_running_from_another_pid_namespace() {
    let dir = scratch("liveness", "postgres-namespace");
    let schema = Schema::new("liveness");
    a_live_run_is_running_from_another_pid_namespace(&schema.url(), &dir);
}

#[test]
fn a_run_killed_hard_ends_its_steps_processes_and_is_marked_interrupted() {
    let dir = scratch("liveness", "killed");
    let store = dir.join("results.db");
    let d = dir.display();
    let step = format!("a=sleep 300 & echo $! > {d}/background; echo $$ > {d}/shell; sleep 300");
    let mut child = start_exec(&store, &dir, &["--name", "killed", "--repeat", "1", "--step", &step]);
    assert!(wait_for(|| dir.join("background").exists() && dir.join("shell").exists()), "the step never began");
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        wait_for(|| !running(&pid_in(&dir.join("background"))) && !running(&pid_in(&dir.join("shell")))),
        "the step's processes outlived envbench killed with SIGKILL"
    );
    let run = &runs(&store)[0];
    assert_eq!(run["status"], "interrupted", "{run}");
    assert!(run["status_reason"].as_str().unwrap().contains("ended without finishing"), "{run}");
}

#[test]
fn ctrl_c_ends_a_run_whose_steps_leave_a_background_child_holding_their_output() {
    let dir = scratch("liveness", "ctrl-c");
    let store = dir.join("results.db");
    let d = dir.display();
    // Each shell prints and exits at once, its child keeping the output open: envbench once waited on that output
    // and, waiting there, did not see Ctrl-C.
    let step = format!("a=sleep 300 & echo $! >> {d}/background; echo started");
    let mut child = start_exec(&store, &dir, &["--name", "ctrl-c", "--repeat", "1000", "--step", &step]);
    // Two children: the first repetition has ended.
    let began = || std::fs::read_to_string(dir.join("background")).is_ok_and(|pids| pids.lines().count() >= 2);
    assert!(wait_for(began), "the steps never began");
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(exit_code(&mut child), Some(130), "the run ends at Ctrl-C");
    let pids = std::fs::read_to_string(dir.join("background")).unwrap();
    for pid in pids.lines() {
        assert!(!running(pid), "background child {pid} outlived its step");
    }
    let run = &runs(&store)[0];
    assert_eq!(run["status"], "interrupted", "{run}");
    assert_eq!(run["result_count"], 3, "the repetitions that ended are kept: {run}");
}

#[test]
fn a_step_ends_with_its_shell_though_a_background_child_holds_its_output() {
    let dir = scratch("liveness", "background");
    let store = dir.join("results.db");
    let d = dir.display();
    // The shell prints and exits; its child would keep the output open for 300 s, then leave a mark.
    let step = format!("a=(sleep 300; touch {d}/finished) & echo $! > {d}/background; echo started");
    let mut child = start_exec(&store, &dir, &["--name", "background", "--repeat", "2", "--step", &step]);
    assert_eq!(exit_code(&mut child), Some(0), "the run waited for the background child");
    assert!(!running(&pid_in(&dir.join("background"))), "the child outlived its step");
    assert!(!dir.join("finished").exists(), "the child ran to its end");
    let run = &runs(&store)[0];
    assert_eq!((&run["status"], &run["result_count"]), (&"complete".into(), &3.into()), "{run}");
    let shown = crate::common::show(&store, run["uuid"].as_str().unwrap());
    let last = &shown["attachments"]["exec"]["outcome"]["executions"][1]["last_lines"];
    assert_eq!(last, &serde_json::json!(["started"]), "the output read before the shell ended is kept");
}

#[test]
fn a_store_on_a_read_only_file_system_says_so_and_is_still_read() {
    let dir = scratch("liveness", "read-only");
    let media = dir.join("media");
    std::fs::create_dir_all(&media).unwrap();
    let existing = media.join("results.db");
    let saved = envbench(&existing, &["sysinfo", "--save"]);
    assert!(saved.status.success(), "{}", stderr(&saved));
    let (d, m, bin) = (dir.display(), media.display(), env!("CARGO_BIN_EXE_envbench"));
    // The media directory made read-only in a private mount namespace (gone when the shell ends).
    let script = format!(
        "mount --bind {m} {m} && mount -o remount,bind,ro {m} || exit 1; \
         ENVBENCH_STORE={m}/results.db {bin} exec --dir {d} --name ro --repeat 1 --step a=true \
           > /dev/null 2> {d}/write-existing.txt; echo $? >> {d}/write-existing.txt; \
         ENVBENCH_STORE={m}/new.db {bin} sysinfo --save > /dev/null 2> {d}/write-new.txt; \
           echo $? >> {d}/write-new.txt; \
         ENVBENCH_STORE={m}/results.db {bin} results list --json > {d}/read.json 2> {d}/read-error.txt; \
         true"
    );
    let status = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-c", &script])
        .env("NO_COLOR", "1")
        .status()
        .expect("unshare runs (util-linux)");
    assert!(status.success(), "the test needs root to remount a directory read-only in a private namespace");
    for file in ["write-existing.txt", "write-new.txt"] {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(text.trim_end().ends_with('1'), "{file}: {text}");
        assert!(
            text.contains("the file system holding the results store is read-only")
                && text.contains("--store (or ENVBENCH_STORE)"),
            "{file}: {text}"
        );
    }
    let read = std::fs::read_to_string(dir.join("read.json")).unwrap();
    let error = std::fs::read_to_string(dir.join("read-error.txt")).unwrap();
    let listed: serde_json::Value = serde_json::from_str(&read).unwrap_or_else(|_| panic!("{error}"));
    assert_eq!(listed.as_array().unwrap().len(), 1, "{listed}");
    assert_eq!(listed[0]["workload"], "sysinfo");
    assert!(!media.join("new.db").exists());
}

#[test]
fn exec_and_step_names_longer_than_a_label_are_refused_before_anything_is_stored() {
    let dir = scratch("liveness", "names");
    let store = dir.join("results.db");
    let long = "x".repeat(5000);
    let d = dir.to_str().unwrap();
    for (args, refused) in [
        (vec!["--name", long.as_str(), "--step", "a=true"], "--name is 5000 characters long"),
        (vec!["--name", "short", "--step", &format!("{long}=true")], "--step 1 is 5000 characters long"),
    ] {
        let mut all = vec!["exec", "--dir", d, "--repeat", "1"];
        all.extend(args);
        let output = envbench(&store, &all);
        assert_eq!(output.status.code(), Some(2), "{}", stderr(&output));
        assert!(stderr(&output).contains(refused) && stderr(&output).contains("keep it to 200"), "{}", stderr(&output));
        assert!(!store.exists(), "nothing is stored");
    }
}

//! Helpers every end-to-end test file uses (not every test module uses all of it).
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// A fresh, empty directory for one test, on the disk the tests run from (never tmpfs).
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(group).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A process's standard output as text.
pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A process's standard error as text.
pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// The real binary with a results store, no colours, and its output captured.
pub fn envbench(store: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .env("ENVBENCH_STORE", store)
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

/// The runs in a store, newest first, as `results list --json` gives them.
pub fn runs(store: &Path) -> Vec<Value> {
    let output = envbench(store, &["results", "list", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice::<Value>(&output.stdout).unwrap().as_array().unwrap().clone()
}

/// One run with its results, series and attachments, as `results show --json` gives it.
pub fn show(store: &Path, run: &str) -> Value {
    let output = envbench(store, &["results", "show", "--json", run]);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_slice(&output.stdout).unwrap()
}

/// A free loopback port, as the system hands one out.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// What `curl` gets from a live-metrics endpoint on `port`, or `None` while nothing answers there.
pub fn curl(port: u16) -> Option<String> {
    let output = Command::new("curl")
        .args(["-sf", "--max-time", "2"])
        .arg(format!("http://127.0.0.1:{port}/metrics"))
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

/// Wait until the run `child` started with `--metrics-listen PORT` measures its step (its live metrics say
/// `envbench_oltp_measuring{...} 1`, about a second into the window), at most `seconds`; fails at once if the run ends first.
/// What a test does "during the window" waits for this rather than a fixed sleep, which a slow host overruns.
pub fn measuring(port: u16, child: &mut Child, seconds: u64) {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the run ended ({status}) before its step measured");
        }
        let measures = |text: &str| {
            text.lines().any(|l| l.starts_with("envbench_oltp_measuring{") && l.trim_end().ends_with(" 1"))
        };
        if curl(port).is_some_and(|text| measures(&text)) {
            return;
        }
        assert!(started.elapsed().as_secs() < seconds, "the run's step did not measure within {seconds} s");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A PostgreSQL URL (the local server, database `test`) whose search_path is a fresh schema, dropped when the guard
/// goes: a shared store of the test's own.
pub struct Schema {
    pub name: String,
}

impl Schema {
    pub fn new(tag: &str) -> Schema {
        let name = format!("envbench_{tag}_{}", std::process::id());
        psql(&format!("DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name};"));
        Schema { name }
    }

    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:5432/test?options=-c%20search_path%3D{}", self.name)
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        psql(&format!("DROP SCHEMA IF EXISTS {} CASCADE;", self.name));
    }
}

/// Run SQL in the local server's `test` database with psql; its output, trimmed.
pub fn psql(sql: &str) -> String {
    let output = Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-Atqc", sql])
        .output()
        .expect("psql runs");
    assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// Run SQL with the mysql client on the local MariaDB; its output, trimmed.
pub fn mysql(sql: &str) -> String {
    let output = Command::new("mysql")
        .args(["--protocol=tcp", "-h", "127.0.0.1", "-u", "root", "-N", "-B", "-e", sql])
        .output()
        .expect("mysql runs");
    assert!(output.status.success(), "{sql}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).trim().to_string()
}

/// A MariaDB database of the test's own, dropped when the guard goes.
pub struct MariaDatabase(pub String);

impl MariaDatabase {
    pub fn new(tag: &str) -> MariaDatabase {
        let name = format!("envbench_{tag}_{}", std::process::id());
        mysql(&format!("DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name}"));
        MariaDatabase(name)
    }

    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:3306/{}", self.0)
    }
}

impl Drop for MariaDatabase {
    fn drop(&mut self) {
        mysql(&format!("DROP DATABASE IF EXISTS {}", self.0));
    }
}

/// A server the binary runs (`envbench serve`), stopped when dropped.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `envbench serve` with `args` on a free loopback port over `store`: the server and its URL as it says it
/// (`http://127.0.0.1:PORT`, or `https://`), without a trailing slash.
pub fn serve(store: &Path, args: &[&str]) -> (Server, String) {
    serve_limited(store, args, None)
}

/// [`serve`], with the server's limit on open descriptors set to `descriptors` (soft and hard alike) when given.
pub fn serve_limited(store: &Path, args: &[&str], descriptors: Option<u64>) -> (Server, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_envbench"));
    command.args(["serve", "--listen", "127.0.0.1:0"]).args(args).env("ENVBENCH_STORE", store).stderr(Stdio::piped());
    if let Some(limit) = descriptors {
        use std::os::unix::process::CommandExt;
        // SAFETY: setrlimit is async-signal-safe, and only the child's own limit is changed.
        unsafe {
            command.pre_exec(move || {
                let limit = libc::rlimit { rlim_cur: limit, rlim_max: limit };
                if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) == 0 {
                    Ok(())
                } else {
                    Err(std::io::Error::last_os_error())
                }
            });
        }
    }
    let mut child = command.spawn().unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Server(child);
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if let Some(start) = line.find("http://").or_else(|| line.find("https://")) {
            let url = line[start..].split_whitespace().next().unwrap().trim_end_matches([':', '/']).to_string();
            return (server, url);
        }
    }
    panic!("envbench serve never said where it listens");
}

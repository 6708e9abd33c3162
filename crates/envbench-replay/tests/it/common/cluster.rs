//! A PostgreSQL cluster of a test's own (initdb, its own port and settings, every log destination on, gone when
//! dropped), shared by envbench-replay's tests and the binary's (`#[path]`-included there).

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A fresh directory for one test, where the servers' own users can reach it: under the system's temporary
/// directory, not the build's (`/root/.cache` is closed to them when the tests run as root).
pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join("envbench-replay-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The PostgreSQL server programs of the newest installed version.
fn postgres_bin(program: &str) -> PathBuf {
    let root = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<u32> = std::fs::read_dir(root)
        .expect("PostgreSQL's server programs are installed (.ci/run installs them)")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    versions.sort();
    root.join(versions.last().expect("a PostgreSQL version").to_string()).join("bin").join(program)
}

/// Run a server program as the user that owns the cluster: `postgres` when the tests run as root (initdb refuses
/// root), this user otherwise.
fn as_owner(program: &Path, args: &[&str]) -> std::process::Output {
    let root = is_root();
    let mut command = if root {
        let mut c = Command::new("runuser");
        c.args(["-u", "postgres", "--"]).arg(program);
        c
    } else {
        Command::new(program)
    };
    let output = command.args(args).output().unwrap_or_else(|e| panic!("{}: {e}", program.display()));
    assert!(output.status.success(), "{} {args:?}: {}", program.display(), String::from_utf8_lossy(&output.stderr));
    output
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// A free TCP port on loopback, for a server to take.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// A PostgreSQL cluster of this test's own, logging every statement, connection and duration to csvlog, jsonlog and
/// stderr at once (`log/pg.csv`, `log/pg.json`, `log/pg`).
pub struct Cluster {
    pub dir: PathBuf,
    pub port: u16,
}

impl Cluster {
    pub fn start(name: &str) -> Cluster {
        let dir = scratch(name).join("data");
        std::fs::create_dir_all(&dir).unwrap();
        if is_root() {
            let status = Command::new("chown").args(["-R", "postgres:postgres"]).arg(dir.parent().unwrap()).status();
            assert!(status.unwrap().success());
        }
        let data = dir.to_str().unwrap();
        as_owner(&postgres_bin("initdb"), &["-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8"]);
        let port = free_port();
        let settings = format!(
            "port = {port}\nlisten_addresses = '127.0.0.1'\nunix_socket_directories = '{data}'\nfsync = off\n\
             shared_buffers = 16MB\nlogging_collector = on\nlog_destination = 'csvlog,jsonlog,stderr'\n\
             log_directory = 'log'\nlog_filename = 'pg'\nlog_statement = 'all'\nlog_connections = on\n\
             log_disconnections = on\nlog_min_duration_statement = 0\nlog_line_prefix = '%m|%u|%d|%c|'\n"
        );
        let conf = dir.join("postgresql.conf");
        let mut text = std::fs::read_to_string(&conf).unwrap();
        text.push_str(&settings);
        std::fs::write(&conf, text).unwrap();
        let log = dir.parent().unwrap().join("server.log");
        let log = log.to_str().unwrap().to_string();
        as_owner(&postgres_bin("pg_ctl"), &["-D", data, "-l", &log, "-w", "-t", "60", "start"]);
        Cluster { dir, port }
    }

    pub fn url(&self, database: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{database}", self.port)
    }

    pub fn log(&self, extension: &str) -> PathBuf {
        self.dir.join("log").join(format!("pg{extension}"))
    }

    /// Wait until every log destination holds a disconnection for each connection it holds (the collector writes
    /// them a moment after the session ends).
    pub fn wait_for_every_session_to_end(&self) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let counts: Vec<(usize, usize)> = ["", ".csv", ".json"]
                .iter()
                .map(|e| {
                    let text = std::fs::read_to_string(self.log(e)).unwrap_or_default();
                    (text.matches("connection authorized: ").count(), text.matches("disconnection: ").count())
                })
                .collect();
            if counts.iter().all(|(connected, ended)| connected == ended && *connected > 0)
                && counts.windows(2).all(|w| w[0] == w[1])
            {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "connections and disconnections per log: {counts:?}");
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }

    /// Run a server-side client program (pgbench, psql) against this cluster.
    pub fn client(&self, program: &str, args: &[&str]) -> String {
        let output = Command::new(postgres_bin(program))
            .args(["-h", "127.0.0.1", "-p", &self.port.to_string(), "-U", "postgres"])
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        String::from_utf8_lossy(&output.stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.dir.to_str().unwrap().to_string();
        let program = postgres_bin("pg_ctl");
        let mut command = if is_root() {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        let _ = command.args(["-D", &data, "-m", "immediate", "-w", "stop"]).output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

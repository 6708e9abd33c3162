//! The web viewer in a real browser: `envbench serve` on a real store, pages loaded by headless Chromium (Debian's
//! chromium package, which .ci/run installs), their DOM checked for the stored numbers, and screenshots taken.

mod common;

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

fn scratch(name: &str) -> PathBuf {
    common::scratch("viewer-tests", name)
}

fn envbench(store: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_envbench")).args(args).env("ENVBENCH_STORE", store).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// The server, stopped when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `envbench serve` on a free loopback port; returns the server and its base URL.
fn serve(store: &Path) -> (Server, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("ENVBENCH_STORE", store)
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let server = Server(child);
    for line in BufReader::new(stderr).lines() {
        let line = line.unwrap();
        if let Some(start) = line.find("http://") {
            let url = line[start..].split_whitespace().next().unwrap().trim_end_matches('/').to_string();
            return (server, url);
        }
    }
    panic!("envbench serve never said where it listens");
}

/// Headless Chromium with the flags this machine's closed network needs.
fn chromium(profile: &Path, args: &[&str]) -> Output {
    let browser = ["chromium", "/usr/bin/chromium", "chromium-browser"]
        .into_iter()
        .find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
        .expect("Chromium is needed for the viewer test: apt-get install chromium (.ci/run installs it)");
    Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--hide-scrollbars",
            "--window-size=1280,1600",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .unwrap()
}

fn dom(profile: &Path, url: &str) -> String {
    let output = chromium(profile, &["--dump-dom", url]);
    assert!(output.status.success(), "chromium failed on {url}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn screenshot(profile: &Path, url: &str, file: &Path) {
    let output = chromium(profile, &[&format!("--screenshot={}", file.display()), url]);
    assert!(output.status.success(), "chromium failed on {url}: {}", String::from_utf8_lossy(&output.stderr));
    let bytes = std::fs::read(file).unwrap();
    assert!(bytes.starts_with(b"\x89PNG"), "{} is not a PNG", file.display());
    // A blank page compresses to a few kilobytes; tables and charts do not.
    assert!(bytes.len() > 20_000, "{} looks empty ({} bytes)", file.display(), bytes.len());
}

#[test]
fn viewer_pages_show_the_stored_numbers_in_a_browser() {
    let dir = scratch("browser");
    let store = dir.join("results.db");
    let data = dir.to_str().unwrap();
    for label in ["physical", "virtual"] {
        envbench(
            &store,
            &[
                "disk",
                "--dir",
                data,
                "--size",
                "32m",
                "--runs",
                "3",
                "--duration",
                "200ms",
                "--interval",
                "0s",
                "--no-warmup",
                "--test",
                "rnd:4k:q8:t1:read",
                "--label",
                label,
            ],
        );
    }
    let runs: Value = serde_json::from_slice(&envbench(&store, &["results", "list", "--json"]).stdout).unwrap();
    let physical = runs.as_array().unwrap().iter().find(|r| r["label"] == "physical").unwrap();
    let uuid = physical["uuid"].as_str().unwrap();
    let run: Value = serde_json::from_slice(&envbench(&store, &["results", "show", "--json", uuid]).stdout).unwrap();
    let iops = run["results"].as_array().unwrap().iter().find(|r| r["metric"] == "iops").unwrap();
    let samples: Vec<f64> = iops["samples"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
    let median = envbench_core::stats::Summary::of(&samples).unwrap().median;

    let (_server, base) = serve(&store);
    let profile = dir.join("chromium-profile");

    let list = dom(&profile, &format!("{base}/"));
    assert!(list.contains(&uuid[..8]) && list.contains("physical") && list.contains("virtual"), "list page:\n{list}");

    let run_page = dom(&profile, &format!("{base}/run/{uuid}"));
    assert!(run_page.contains("RND4K Q8T1 read"), "run page:\n{run_page}");
    // The run page shows each metric's median over the stored samples, formatted as everywhere in the viewer.
    let median_cell = format!(">{}<", envbench_report::format_number(median));
    assert!(run_page.contains(&median_cell), "run page lacks the IOPS median {median_cell}:\n{run_page}");

    let compare_url = format!("{base}/compare?side=label:physical&side=label:virtual");
    let compare = dom(&profile, &compare_url);
    assert!(compare.contains("RND4K Q8T1 read") && compare.contains("iops"), "compare page:\n{compare}");
    assert!(compare.contains("<svg"), "the compare page draws charts");
    assert!(compare.contains(&median_cell), "compare page lacks the physical IOPS median {median_cell}");

    for (name, url) in [("list", format!("{base}/")), ("run", format!("{base}/run/{uuid}")), ("compare", compare_url)] {
        screenshot(&profile, &url, &dir.join(format!("{name}.png")));
    }
}

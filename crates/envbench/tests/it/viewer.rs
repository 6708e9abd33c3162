//! The web viewer in a real browser: `envbench serve` on a real store, pages loaded by headless Chromium (Debian's
//! chromium package, which .ci/run installs), their DOM checked for the stored numbers, and screenshots taken.

use crate::common;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    common::scratch("viewer-tests", name)
}

fn envbench(store: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_envbench")).args(args).env("ENVBENCH_STORE", store).output().unwrap();
    assert!(output.status.success(), "{args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// A short stored disk run of one test (3 samples of 200 ms on a 32 MiB file) with extra options (labels, tags).
fn quick_disk_run(store: &Path, data: &str, test: &str, extra: &[&str]) -> Output {
    let base = [
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
        test,
    ];
    envbench(store, &[&base[..], extra].concat())
}

/// `envbench serve` on a free loopback port; returns the server and its base URL.
fn serve(store: &Path) -> (common::Server, String) {
    common::serve(store, &[])
}

/// A desktop and a phone viewport.
const DESKTOP: &str = "--window-size=1280,1600";
const PHONE: &str = "--window-size=390,844";
/// One laptop screen: the report's length is counted in these.
const DESKTOP_SCREEN: &str = "--window-size=1280,800";

/// Headless Chromium with the flags this machine's closed network needs, at a desktop width.
fn chromium(profile: &Path, args: &[&str]) -> Output {
    chromium_at(DESKTOP, profile, args)
}

/// Headless Chromium at a viewport size.
fn chromium_at(size: &str, profile: &Path, args: &[&str]) -> Output {
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
            size,
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .output()
        .unwrap()
}

pub(crate) fn dom(profile: &Path, url: &str) -> String {
    let output = chromium(profile, &["--dump-dom", url]);
    assert!(output.status.success(), "chromium failed on {url}: {}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn screenshot(size: &str, profile: &Path, url: &str, file: &Path) {
    let output = chromium_at(size, profile, &[&format!("--screenshot={}", file.display()), url]);
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
    // The physical run carries a suite's bookkeeping tags beside the user's own (issue #70, item 7).
    quick_disk_run(
        &store,
        data,
        "rnd:4k:q8:t1:read",
        &[
            "--label",
            "physical",
            "--tag",
            "storage=nvme",
            "--tag",
            "suite=0123456789abcdef",
            "--tag",
            "suite.plan=feedface",
        ],
    );
    quick_disk_run(&store, data, "rnd:4k:q8:t1:read", &["--label", "virtual"]);
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
    // Each run's headline figure, as the scorecard words it.
    assert!(list.contains("<th scope=\"col\">Headline</th>") && list.contains("RND4K Q8T1 read"), "list:\n{list}");
    assert!(list.contains(" MB/s<"), "the runs list shows each run's headline figure:\n{list}");

    let run_page = dom(&profile, &format!("{base}/run/{uuid}"));
    assert!(run_page.contains("RND4K Q8T1 read"), "run page:\n{run_page}");
    // Tags are the user's; the suite's id is said as the suite, its plan hash not at all.
    let row = |name: &str| {
        let at = run_page.find(&format!("<th scope=\"row\">{name}</th>")).unwrap_or_else(|| panic!("{run_page}"));
        run_page[at..].split("</tr>").next().unwrap().to_string()
    };
    assert!(row("Tags").contains("<td>storage=nvme</td>"), "{}", row("Tags"));
    assert!(row("Suite").contains("a suite (suite 01234567)"), "{}", row("Suite"));
    // The run page shows each metric's median over the stored samples, formatted as everywhere in the viewer.
    let median_cell = format!(">{}<", envbench_verdict::number(median));
    assert!(run_page.contains(&median_cell), "run page lacks the IOPS median {median_cell}:\n{run_page}");

    let compare_url = format!("{base}/compare?side=label:physical&side=label:virtual");
    let compare = dom(&profile, &compare_url);
    assert!(compare.contains("RND4K Q8T1 read") && compare.contains("iops"), "compare page:\n{compare}");
    assert!(compare.contains("<svg"), "the compare page draws charts");
    assert!(compare.contains(&median_cell), "compare page lacks the physical IOPS median {median_cell}");

    for (name, url) in [("list", format!("{base}/")), ("run", format!("{base}/run/{uuid}")), ("compare", compare_url)] {
        screenshot(DESKTOP, &profile, &url, &dir.join(format!("{name}.png")));
    }
}

/// The page's DOM (scripts are forbidden by the viewer's policy) saved with `script`, which writes what it measured
/// into the title once the page has loaded, loaded at `size`; the title it wrote.
fn probed_title(size: &str, profile: &Path, dom: &str, file: &Path, script: &str) -> String {
    let probe = format!("<script>window.addEventListener('load', () => {{ {script} }});</script>");
    std::fs::write(file, dom.replacen("</body>", &format!("{probe}</body>"), 1)).unwrap();
    let output = chromium_at(size, profile, &["--dump-dom", &format!("file://{}", file.display())]);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    text.split("<title>").nth(1).and_then(|t| t.split("</title>").next()).unwrap_or_default().to_string()
}

/// How a page lays out in a viewport: how far it overflows sideways (`scrollWidth - innerWidth`) and how tall it is
/// with every `<details>` closed as shipped.
fn layout(size: &str, profile: &Path, dom: &str, file: &Path) -> (i64, i64) {
    let script = "const d = document.documentElement; \
                  document.title = 'overflow=' + (d.scrollWidth - window.innerWidth) + ' height=' + d.scrollHeight;";
    let title = probed_title(size, profile, dom, file, script);
    let figure = |key: &str| -> i64 {
        title
            .split_whitespace()
            .find_map(|part| part.strip_prefix(key))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no {key} in {title:?}"))
    };
    (figure("overflow="), figure("height="))
}

fn sideways_overflow(size: &str, profile: &Path, dom: &str, file: &Path) -> i64 {
    layout(size, profile, dom, file).0
}

/// A suite of the quick suite's shape (the CrystalDiskMark grid's eight tests, a timed ranread sweep, the cube,
/// transactions, the analytic queries) at a size a test can afford.
const QUICK_SHAPED_SUITE: &str = r#"
[suite]
name = "quick-shaped"

[disk]
size = "16m"
runs = 3
duration = "100ms"
interval = "0s"
no_warmup = true
test = ["seq:1m:q8:t1:read", "seq:1m:q1:t1:read", "rnd:4k:q32:t1:read", "rnd:4k:q1:t1:read",
        "seq:1m:q8:t1:write", "seq:1m:q1:t1:write", "rnd:4k:q32:t1:write", "rnd:4k:q1:t1:write"]

[ranread]
size = "16m"
jobs = "1,2"
duration = "500ms"

[cube]
scale = 0.002
repeat = 3

[oltp]
profile = "tpcb"
users = "1"
ramp = "0s"
duration = "3s"

[tpch]
sf = 0.01
"#;

/// The report of one quick-shaped suite answers first and reads as one page: at 1280x800 it is at most about six
/// screens tall before its collapsed details, with at most one chart per workload shown, a read/write grid for the
/// disk tests, no single-bar chart and no raw metric or side names in its titles; at 390 px nothing scrolls sideways.
#[test]
fn a_single_run_report_fits_six_screens_and_a_phone() {
    let dir = scratch("one-page");
    let store = dir.join("results.db");
    let suite = dir.join("quick-shaped.toml");
    std::fs::write(&suite, QUICK_SHAPED_SUITE).unwrap();
    let report = dir.join("report.html");
    let data = dir.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let args = [
        "run",
        "--suite",
        suite.to_str().unwrap(),
        "--dir",
        data.to_str().unwrap(),
        "--label",
        "here",
        "--report",
        report.to_str().unwrap(),
    ];
    envbench(&store, &args);
    let html = std::fs::read_to_string(&report).unwrap();
    // Before the first collapsed part of each workload, at most one chart.
    for section in html.split("<section class=\"workload\"").skip(1) {
        let shown = section.split("<details").next().unwrap();
        assert!(shown.matches("<svg").count() <= 1, "more than one headline chart:\n{shown}");
    }
    let disk = html.split("id=\"workload-disk\"").nth(1).expect("a disk section");
    let grid = disk.split("<details").next().unwrap();
    assert!(grid.contains("data-grid=\"read-write\"") && grid.contains("RND4K Q1T1"), "no read/write grid:\n{grid}");
    for raw in ["tag:suite=", "suite=", "latency_mean", "latency_p99", "cpu_per_io"] {
        for title in html.split("<title id=").skip(1).map(|t| t.split("</title>").next().unwrap()) {
            assert!(!title.contains(raw), "a chart title says {raw}: {title}");
        }
    }
    // No curve of one step: oltp ran one count of users, which is a number, not a point on a 0-2 axis.
    assert!(!html.contains("data-chart=\"oltp-tps\""), "a one-step oltp curve is drawn");
    // No chart of a single bar: one bar is a number.
    for chart in html.split("data-chart=\"bars\"").skip(1) {
        let svg = chart.split("</svg>").next().unwrap();
        assert!(svg.matches("class=\"bar\"").count() > 1, "a single-bar chart:\n{svg}");
    }
    let profile = dir.join("chromium-profile");
    let (overflow, height) = layout(DESKTOP_SCREEN, &profile, &html, &dir.join("desktop-probe.html"));
    assert!(overflow <= 0, "the report scrolls sideways by {overflow} px at 1280 px");
    assert!(height <= 6 * 800, "the report is {height} px tall at 1280x800: more than six screens");
    let (overflow, _) = layout(PHONE, &profile, &html, &dir.join("phone-probe.html"));
    assert!(overflow <= 0, "the report scrolls sideways by {overflow} px on a phone");
    screenshot(DESKTOP_SCREEN, &profile, &format!("file://{}", report.display()), &dir.join("report-desktop.png"));
}

#[test]
fn suites_environments_and_the_verdict_fit_a_desktop_and_a_phone() {
    let dir = scratch("phone");
    let store = dir.join("results.db");
    let data = dir.to_str().unwrap();
    // Two suites (the tags `envbench run` gives its runs), one per label.
    for (label, suite) in [("before", "aaaa1111-suite"), ("after", "bbbb2222-suite")] {
        for test in ["rnd:4k:q8:t1:read", "seq:128k:q2:t1:read"] {
            let suite_tag = format!("suite={suite}");
            quick_disk_run(&store, data, test, &["--label", label, "--tag", &suite_tag, "--tag", "suite.name=quick"]);
        }
    }
    let (_server, base) = serve(&store);
    let profile = dir.join("chromium-profile");

    let suites = dom(&profile, &format!("{base}/suites"));
    assert!(suites.contains("aaaa1111-suite") && suites.contains("bbbb2222-suite"), "suites page:\n{suites}");
    assert!(suites.contains("compare with the previous quick"), "one-click comparison:\n{suites}");
    // Suites are titled by label, suite name and start, the id only a note.
    assert!(suites.contains("<b>before (quick, ") && suites.contains("<b>after (quick, "), "suite titles:\n{suites}");
    let compare_url = format!("{base}/compare?side=suite%3Daaaa1111-suite&side=suite%3Dbbbb2222-suite");
    let compare = dom(&profile, &compare_url);
    assert!(compare.contains("id=\"verdict\"") && compare.contains("speed factor against A"), "verdict:\n{compare}");
    assert!(compare.contains("storage"), "the verdict names the workload:\n{compare}");
    // A suite side is named by its label and start, never `suite=<id>`, in the title and every legend.
    let heading = compare.split("<h1>").nth(1).and_then(|h| h.split("</h1>").next()).unwrap_or_default();
    assert!(heading.contains("before (quick, ") && !heading.contains("suite="), "title: {heading}");
    assert!(
        !compare.contains(">A: suite=") && !compare.contains(">B: suite="),
        "a legend names a suite id:\n{compare}"
    );

    let environments = dom(&profile, &format!("{base}/environments"));
    let id = environments
        .split("href=\"/environment/")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap_or_else(|| panic!("no environment link:\n{environments}"))
        .to_string();
    let environment = dom(&profile, &format!("{base}/environment/{id}"));
    assert!(environment.contains("History: storage") && environment.contains("<svg"), "history:\n{environment}");
    assert!(environment.contains("Rank among the store"), "rank section:\n{environment}");

    let report = dir.join("report.html");
    envbench(&store, &["report", "suite=aaaa1111-suite", "suite=bbbb2222-suite", "-o", report.to_str().unwrap()]);
    let report_html = std::fs::read_to_string(&report).unwrap();
    for (name, page) in
        [("compare", &compare), ("environment", &environment), ("suites", &suites), ("report", &report_html)]
    {
        let overflow = sideways_overflow(PHONE, &profile, page, &dir.join(format!("{name}-probe.html")));
        assert!(overflow <= 0, "{name} scrolls sideways by {overflow} px on a phone");
    }
    for (name, url) in [
        ("suites", format!("{base}/suites")),
        ("environment", format!("{base}/environment/{id}")),
        ("compare-verdict", compare_url.clone()),
        ("report", format!("file://{}", report.display())),
    ] {
        screenshot(DESKTOP, &profile, &url, &dir.join(format!("{name}-desktop.png")));
        screenshot(PHONE, &profile, &url, &dir.join(format!("{name}-phone.png")));
    }
}

/// The leaderboard ranks like with like: two environments (all CPUs, and one CPU by `taskset`) with a built-in
/// profile's options rank 1st and 2nd; a tuned run ranks in its own list; a run on memory-backed storage is listed
/// apart, unranked. Filters narrow the field by the fingerprint; the page fits a desktop and a phone.
#[test]
fn the_leaderboard_ranks_like_with_like_on_a_desktop_and_a_phone() {
    let online = std::thread::available_parallelism().unwrap().get();
    assert!(online >= 2, "the leaderboard test pins a run to one of this machine's CPUs: it needs two");
    let dir = scratch("leaderboard");
    let store = dir.join("results.db");
    let data = dir.to_str().unwrap();
    let test = "rnd:4k:q8:t1:read";
    // `--defaults-of` is what `envbench run` gives a built-in suite's runs.
    quick_disk_run(&store, data, test, &["--defaults-of", "quick", "--label", "default"]);
    let base = ["disk", "--dir", data, "--size", "32m", "--runs", "3", "--duration", "200ms", "--interval", "0s"];
    let pinned = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_envbench")])
        .args(base)
        .args(["--no-warmup", "--test", test])
        .args(["--defaults-of", "quick", "--label", "pinned"])
        .env("ENVBENCH_STORE", &store)
        .output()
        .unwrap();
    assert!(pinned.status.success(), "{}", String::from_utf8_lossy(&pinned.stderr));
    quick_disk_run(&store, data, test, &["--label", "tuned"]);
    let shm = Path::new("/dev/shm").join(format!("envbench-leaderboard-{}", std::process::id()));
    std::fs::create_dir_all(&shm).unwrap();
    quick_disk_run(&store, shm.to_str().unwrap(), test, &["--label", "in-memory"]);
    std::fs::remove_dir_all(&shm).unwrap();
    // A fingerprint alone: a complete run with nothing to rank, which the leaderboard does not open on.
    assert!(envbench(&store, &["sysinfo", "--save", "--path", data]).status.success());

    let (_server, base) = serve(&store);
    let profile = dir.join("chromium-profile");
    let opened = dom(&profile, &format!("{base}/leaderboard"));
    assert!(opened.contains("<h2>Default options"), "the leaderboard opens on storage, not sysinfo:\n{opened}");
    let url = format!("{base}/leaderboard?workload=disk");
    let board = dom(&profile, &url);
    let section = |title: &str| -> String {
        let start = board.find(&format!("<h2>{title}")).unwrap_or_else(|| panic!("no '{title}' section:\n{board}"));
        let rest = &board[start..];
        rest[..rest[1..].find("<h2>").map_or(rest.len(), |end| end + 1)].to_string()
    };
    let (default, tuned, flagged) = (section("Default options"), section("Tuned options"), section("Flagged"));
    // Other tests share this machine: a run they disturbed is flagged, and listed apart like the run on memory.
    let runs: Vec<Value> = serde_json::from_slice(&envbench(&store, &["results", "list", "--json"]).stdout).unwrap();
    let disturbed = |label: &str| runs.iter().any(|r| r["label"] == label && r["disturbed"] == true);
    let listed = |section: &str| section.matches("href=\"/environment/").count();
    let ranked_default = ["default", "pinned"].iter().filter(|l| !disturbed(l)).count();
    assert_eq!(listed(&default), ranked_default, "{default}");
    if ranked_default == 2 {
        assert!(default.contains(">1st<") && default.contains(">2nd<"), "{default}");
        assert!(default.contains("(1 usable)") && default.contains("100% of 1"), "{default}");
    }
    assert_eq!(listed(&tuned), usize::from(!disturbed("tuned")), "{tuned}");
    assert!(flagged.contains("(memory-backed)") && !flagged.contains(">1st<"), "{flagged}");
    assert!(!default.contains("(memory-backed)") && !tuned.contains("(memory-backed)"));
    // A filter by the fingerprint: the file system of the runs on memory leaves only them.
    let narrowed = dom(&profile, &format!("{base}/leaderboard?workload=disk&filesystem=tmpfs"));
    assert!(narrowed.contains("No run with a built-in profile's options passes these filters"), "{narrowed}");
    assert!(narrowed.contains("(memory-backed)"), "{narrowed}");
    let overflow = sideways_overflow(PHONE, &profile, &board, &dir.join("leaderboard-probe.html"));
    assert!(overflow <= 0, "the leaderboard scrolls sideways by {overflow} px on a phone");
    // A run's page: its percentile on each headline test among the other environments of its list.
    let default_run = runs.iter().find(|r| r["label"] == "default").unwrap()["uuid"].as_str().unwrap().to_string();
    let run_page = dom(&profile, &format!("{base}/run/{default_run}"));
    assert!(run_page.contains("Among the environments here"), "{run_page}");
    if ranked_default == 2 {
        // One other environment with the defaults: this run beats it on the test, or it does not.
        assert!(run_page.contains(">100%<") || run_page.contains(">0%<"), "{run_page}");
        assert!(run_page.contains(test), "{run_page}");
    }
    let overflow = sideways_overflow(PHONE, &profile, &run_page, &dir.join("run-probe.html"));
    assert!(overflow <= 0, "a run's page scrolls sideways by {overflow} px on a phone");
    screenshot(DESKTOP, &profile, &url, &dir.join("leaderboard-desktop.png"));
    screenshot(PHONE, &profile, &url, &dir.join("leaderboard-phone.png"));
}

/// Where elements lay out in a viewport: for each CSS selector, the top and bottom of its first match in page
/// pixels (-1 when nothing matches), read as [`layout`] reads the page's size.
fn element_bounds(size: &str, profile: &Path, dom: &str, file: &Path, selectors: &[&str]) -> Vec<(i64, i64)> {
    let list = selectors.iter().map(|s| format!("'{s}'")).collect::<Vec<_>>().join(",");
    let script = format!(
        "document.title = [{list}].map(s => {{ const e = document.querySelector(s); if (!e) return '-1:-1'; \
         const r = e.getBoundingClientRect(); return Math.round(r.top + window.scrollY) + ':' + \
         Math.round(r.bottom + window.scrollY); }}).join(' ');"
    );
    let title = probed_title(size, profile, dom, file, &script);
    let bounds: Vec<(i64, i64)> = title
        .split_whitespace()
        .filter_map(|pair| pair.split_once(':'))
        .filter_map(|(top, bottom)| Some((top.parse().ok()?, bottom.parse().ok()?)))
        .collect();
    assert_eq!(bounds.len(), selectors.len(), "no bounds in {title:?}");
    bounds
}

/// A comparison report on a phone (390x844): its verdict, with the first workload's answer, is in the first screen,
/// and a disturbed side's disturbance is stated once, after the verdict lines, not under each workload.
#[test]
fn a_comparison_report_shows_its_verdict_in_a_phones_first_screen() {
    let dir = scratch("phone-verdict");
    let store = dir.join("results.db");
    let data = dir.to_str().unwrap();
    for label in ["quiet", "busy"] {
        for test in ["rnd:4k:q8:t1:read", "seq:128k:q2:t1:read"] {
            for _ in 0..2 {
                quick_disk_run(&store, data, test, &["--label", label]);
            }
        }
    }
    // The busy side's runs as the sampler marks runs other work disturbed (every result flagged), and the quiet side's
    // unflagged whatever this shared machine did meanwhile: written past the store's append-only trigger, which is
    // put back as it was.
    let connection = rusqlite::Connection::open(&store).unwrap();
    connection
        .execute_batch(
            "DROP TRIGGER results_no_update;
             UPDATE results SET flags = '[\"disturbed\"]' WHERE run_id IN (SELECT id FROM runs WHERE label = 'busy');
             UPDATE results SET flags = '[]' WHERE run_id IN (SELECT id FROM runs WHERE label = 'quiet');
             CREATE TRIGGER results_no_update BEFORE UPDATE ON results
                 BEGIN SELECT RAISE(ABORT, 'envbench results are append-only'); END;",
        )
        .unwrap();
    drop(connection);
    let report = dir.join("report.html");
    envbench(&store, &["report", "label:quiet", "label:busy", "-o", report.to_str().unwrap()]);
    let html = std::fs::read_to_string(&report).unwrap();
    assert_eq!(html.matches("<b>Disturbed:</b>").count(), 1, "disturbance stated once:\n{html}");
    assert!(html.contains("B was disturbed in 4 of 4 runs"), "{html}");
    let verdict = html.find("id=\"verdict\"").expect("a verdict");
    let disturbance = html.find("<b>Disturbed:</b>").unwrap();
    let first_workload = html.find("<section class=\"workload\"").expect("a workload section");
    assert!(verdict < disturbance && disturbance < first_workload, "the disturbance follows the verdict");
    let profile = dir.join("chromium-profile");
    let bounds = element_bounds(
        PHONE,
        &profile,
        &html,
        &dir.join("verdict-probe.html"),
        &["#verdict", "#verdict li", "#verdict .caution"],
    );
    let (verdict_top, _) = bounds[0];
    let (_, first_answer_bottom) = bounds[1];
    assert!(
        verdict_top >= 0 && first_answer_bottom <= 844,
        "the verdict's first answer ends at {first_answer_bottom} px"
    );
    assert!(bounds[2].0 > bounds[1].0, "the disturbance comes after the verdict's lines: {bounds:?}");
    let overflow = sideways_overflow(PHONE, &profile, &html, &dir.join("phone-probe.html"));
    assert!(overflow <= 0, "the report scrolls sideways by {overflow} px on a phone");
    screenshot(PHONE, &profile, &format!("file://{}", report.display()), &dir.join("verdict-phone.png"));
}

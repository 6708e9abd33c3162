//! The web viewer over a real SQLite store, served on a free loopback port and read with plain HTTP/1.1 requests.

use crate::common;

use common::{HOSTILE_HOST, HOSTILE_LABEL, HOSTILE_TAG, assert_well_formed, build, chart_kinds};
use envbench_service::{bind, is_loopback, serve};
use envbench_store::{ReadRuns, RecordRuns, RunFilter, SqliteStore, StoreLocation, open_store, push_runs};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

struct Response {
    status: u16,
    headers: String,
    body: String,
}

async fn get(address: std::net::SocketAddr, path: &str) -> Response {
    get_as(address, &address.to_string(), path).await
}

/// A GET that says it is for `host` (what a browser sends after DNS rebinding: the attacker's name).
async fn get_as(address: std::net::SocketAddr, host: &str, path: &str) -> Response {
    let mut stream = tokio::net::TcpStream::connect(address).await.unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).await.unwrap();
    let raw = String::from_utf8(raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body =
        if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { unchunk(body) } else { body.to_string() };
    Response { status, headers: head.to_string(), body }
}

fn unchunk(mut body: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = body.split_once("\r\n").unwrap();
        let size = usize::from_str_radix(size.trim(), 16).unwrap();
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        body = &rest[size + 2..];
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn browse_filter_compare_and_download() {
    let fixture = build("viewer");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    assert!(is_loopback(&address));
    let server = tokio::spawn(serve(StoreLocation::Sqlite(fixture.path.clone()), listener, common::WORKLOADS));

    let list = get(address, "/").await;
    assert_eq!(list.status, 200);
    assert!(list.headers.to_ascii_lowercase().contains("content-type: text/html"));
    assert_well_formed(&list.body);
    assert!(list.body.contains(&fixture.physical_disk[0]));
    assert!(list.body.contains("type=\"checkbox\" name=\"run\""));
    for raw in [HOSTILE_LABEL, HOSTILE_TAG, HOSTILE_HOST] {
        assert!(!list.body.contains(raw), "{raw} must be escaped in the run list");
    }

    let filtered = get(address, "/?label=virtual&workload=disk").await;
    assert_eq!(filtered.status, 200);
    assert!(filtered.body.contains(&fixture.virtual_disk[0]));
    assert!(!filtered.body.contains(&fixture.physical_disk[0]));
    let by_tag = get(address, "/?tag=env%3Dphysical").await;
    assert!(by_tag.body.contains(&fixture.physical_disk[1]) && !by_tag.body.contains(&fixture.virtual_disk[1]));
    let future = get(address, "/?from=2999-01-01").await;
    assert!(future.body.contains("No runs match."));

    let run = get(address, &format!("/run/{}", &fixture.physical_disk[0][..8])).await;
    assert_eq!(run.status, 200);
    assert_well_formed(&run.body);
    assert!(run.body.contains("sampler-cpu"), "the run page shows its sampler series");

    let compare =
        get(address, &format!("/compare?run={}&run={}", fixture.physical_disk[0], fixture.virtual_disk[0])).await;
    assert_eq!(compare.status, 200);
    assert_well_formed(&compare.body);
    assert!(chart_kinds(&compare.body)["bars"] >= 1);
    assert!(compare.body.contains("/report.html?run="));

    let sides = get(address, "/compare?side=physical-p3605&side=env%3Dvirtual").await;
    assert_eq!(sides.status, 200);
    assert!(sides.body.contains("ranread-iops"));

    let report = get(address, "/report.html?side=physical-p3605&side=virtual").await;
    assert_eq!(report.status, 200);
    assert!(report.headers.to_ascii_lowercase().contains("content-disposition: attachment"));
    assert_well_formed(&report.body);
    assert!(!report.body.contains("http://") && !report.body.contains("https://"));

    let single = get(address, &format!("/report.html?run={}", fixture.virtual_disk[1])).await;
    assert_eq!(single.status, 200);

    let json = get(address, "/compare.json?side=physical-p3605&side=virtual").await;
    let parsed: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    assert_eq!(parsed["sides"].as_array().unwrap().len(), 2);
    let markdown = get(address, "/compare.md?side=physical-p3605&side=virtual").await;
    assert!(markdown.body.starts_with("## envbench comparison"));

    assert_eq!(get(address, "/run/ffffffff").await.status, 404);
    // An unknown URL gets a page that says so and leads back, not an empty body.
    let missing = get(address, "/no/such/page").await;
    assert_eq!(missing.status, 404);
    assert!(missing.body.contains("No such page") && missing.body.contains("href=\"/\""), "{}", missing.body);
    assert_eq!(get(address, "/compare?side=nobody&side=virtual").await.status, 404);
    let one = get(address, "/compare?side=virtual").await;
    assert_eq!(one.status, 400);
    assert!(one.body.contains("at least two sides"));
    let hostile = get(address, "/compare?side=%3Cscript%3E&side=virtual").await;
    assert!(!hostile.body.contains("<script>"), "error pages escape what the user typed");

    // DNS rebinding: a page from another name must not read the store through this viewer.
    for host in ["rebind.attacker.example", &format!("rebind.attacker.example:{}", address.port()), "127.0.0.1:1"] {
        let rebound = get_as(address, host, "/compare.json?side=physical-p3605&side=virtual").await;
        assert_eq!(rebound.status, 421, "{host}");
        assert!(!rebound.body.contains("physical-p3605"), "{host}");
    }
    assert_eq!(get_as(address, &format!("localhost:{}", address.port()), "/").await.status, 200);
    for response in [&list, &rebound_check(address).await] {
        let headers = response.headers.to_ascii_lowercase();
        assert!(headers.contains("content-security-policy: default-src 'none'"), "{headers}");
        assert!(headers.contains("x-content-type-options: nosniff"), "{headers}");
    }

    server.abort();
}

async fn rebound_check(address: std::net::SocketAddr) -> Response {
    get_as(address, "evil.example", "/").await
}

#[test]
fn bind_refuses_a_busy_port_with_advice() {
    let first = bind("127.0.0.1:0").unwrap();
    let address = first.local_addr().unwrap().to_string();
    let error = bind(&address).unwrap_err().to_string();
    assert!(error.contains("--listen"), "{error}");
}

/// The same viewer over the team's PostgreSQL store (runs pushed from the SQLite fixture): the synchronous PostgreSQL
/// client must work from the viewer's blocking tasks. Needs the server of `ENVBENCH_TEST_POSTGRES` (default
/// `postgres://postgres@127.0.0.1:5432/test`); fails, never skips, without it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_a_postgres_store() {
    let server =
        std::env::var("ENVBENCH_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".into());
    let schema = format!("envbench_viewer_{}", uuid::Uuid::new_v4().simple());
    let url = format!("{server}?options=-c%20search_path%3D{schema}");
    let fixture = build("viewer-postgres");
    let admin = {
        let (server, schema, path, url) = (server.clone(), schema.clone(), fixture.path.clone(), url.clone());
        tokio::task::spawn_blocking(move || {
            let mut admin = postgres::Client::connect(&server, postgres::NoTls)
                .unwrap_or_else(|e| panic!("this test needs PostgreSQL at {server} ({e})"));
            admin.batch_execute(&format!("CREATE SCHEMA {schema}")).unwrap();
            let source = SqliteStore::open(&path, false).unwrap();
            let runs: Vec<String> =
                source.list_runs(&RunFilter::default()).unwrap().into_iter().map(|r| r.uuid).collect();
            let mut team = open_store(&StoreLocation::parse(&url).unwrap(), true).unwrap();
            push_runs(&source, team.as_mut(), &runs).unwrap();
            admin
        })
        .await
        .unwrap()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let served = tokio::spawn(serve(StoreLocation::parse(&url).unwrap(), listener, common::WORKLOADS));
    let list = get(address, "/?label=virtual").await;
    let compare = get(address, "/compare?side=physical-p3605&side=virtual").await;
    served.abort();
    tokio::task::spawn_blocking(move || {
        let mut admin = admin;
        admin.batch_execute(&format!("DROP SCHEMA {schema} CASCADE")).unwrap();
    })
    .await
    .unwrap();
    assert_eq!(list.status, 200, "{}", list.body);
    assert!(list.body.contains(&fixture.virtual_disk[0]));
    assert_eq!(compare.status, 200, "{}", compare.body);
    assert_well_formed(&compare.body);
    assert!(compare.body.contains("ranread-iops"));
}

/// A complete run of `workload` (cube or tpch) with a built-in profile's options, disturbed or not, with the tags
/// `envbench run` gives a suite's runs and one of the user's.
fn default_options_run(
    store: &mut SqliteStore,
    workload: &str,
    label: &str,
    fingerprint: &envbench_core::fingerprint::Fingerprint,
    disturbed: bool,
) -> String {
    use envbench_core::model::{RunRequest, RunStatus};
    use envbench_core::provenance::{Options, PROVENANCE_ATTACHMENT, RunProvenance};
    let tags = [("suite", "0c0ffee0-suite"), ("suite.plan", "ab12cd34"), ("site", "lab")];
    let request = RunRequest {
        workload: workload.into(),
        label: Some(label.into()),
        tags: tags.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        command_line: format!("envbench {workload}"),
        suite_id: None,
    };
    let uuid = store.begin_run(&request, fingerprint).unwrap();
    let mut results = if workload == "disk" { common::disk_results(1.0, 32, 0) } else { common::tpch_results(1.0) };
    if disturbed {
        for result in &mut results {
            result.flags.push(envbench_core::sampler::DISTURBED_FLAG.to_string());
        }
    }
    store.add_results(&uuid, &results).unwrap();
    let options = Options::Default { profile: "defaults".into() };
    let provenance = RunProvenance { envbench_version: "test".into(), binary: None, options };
    store.add_attachment(&uuid, PROVENANCE_ATTACHMENT, &serde_json::to_value(provenance).unwrap()).unwrap();
    store.finish_run(&uuid, RunStatus::Complete, None).unwrap();
    uuid
}

/// The leaderboard on a busy host tells the truth: a list left empty because every run of it was flagged says so
/// (not "no run passes these filters" with every filter at "any"); an environment with a run that ranks is listed
/// once, there, with its flagged runs counted beside; entries are named by their labels with the fingerprint
/// beneath; and the run list's Tags column shows the user's tags, not suite ids and plan hashes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_leaderboard_says_why_a_list_is_empty_and_lists_an_environment_once() {
    let path = common::scratch("leaderboard-busy");
    let mut store = SqliteStore::open(&path, true).unwrap();
    let (two, one) = (common::physical(), common::virtual_machine());
    default_options_run(&mut store, "cube", "vm-2cpu", &two, false);
    default_options_run(&mut store, "cube", "vm-2cpu", &two, true);
    default_options_run(&mut store, "cube", "vm-1cpu", &one, true);
    default_options_run(&mut store, "tpch", "vm-1cpu", &one, true);
    drop(store);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let server = tokio::spawn(serve(StoreLocation::Sqlite(path.clone()), listener, common::WORKLOADS));
    let section = |board: &str, title: &str| -> String {
        let start = board.find(&format!("<h2>{title}")).unwrap_or_else(|| panic!("no '{title}' section:\n{board}"));
        let rest = &board[start..];
        rest[..rest[1..].find("<h2>").map_or(rest.len(), |end| end + 1)].to_string()
    };
    let board = get(address, "/leaderboard?workload=cube").await.body;
    let (default, tuned, flagged) =
        (section(&board, "Default options"), section(&board, "Tuned options"), section(&board, "Flagged"));
    // vm-2cpu ranks with its one quiet run, once; its disturbed run is counted beside, not listed among the flagged.
    assert_eq!(default.matches("href=\"/environment/").count(), 1, "{default}");
    assert!(default.contains(">vm-2cpu</a><br><span class=\"fingerprint\">"), "{default}");
    assert!(default.contains("(1 flagged run left out)"), "{default}");
    assert_eq!(flagged.matches("href=\"/environment/").count(), 1, "{flagged}");
    assert!(flagged.contains(">vm-1cpu</a>") && !flagged.contains("vm-2cpu"), "{flagged}");
    assert!(tuned.contains("No run of this workload with tuned options here yet."), "{tuned}");
    // Every run of tpch is flagged: the empty list says that, with every filter at "any".
    let board = get(address, "/leaderboard?workload=tpch").await.body;
    let default = section(&board, "Default options");
    assert!(
        default.contains("None ranks: every run with a built-in profile")
            && default.contains("is flagged (1 environment"),
        "{default}"
    );
    assert!(!default.contains("passes these filters"), "{default}");
    // The run list shows the user's tags, not the ones `envbench run` keeps to find a suite again.
    let runs = get(address, "/").await.body;
    assert!(runs.contains("site=lab"), "{runs}");
    assert!(!runs.contains("0c0ffee0-suite") && !runs.contains("ab12cd34"), "internal tags in the run list:\n{runs}");
    server.abort();
}

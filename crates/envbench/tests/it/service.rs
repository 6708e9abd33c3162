//! The results service end to end: `envbench serve --accept-uploads` on a loopback port, tokens made with `results
//! token`, runs from two stores uploaded with `envbench push URL --token-file`, and tampered uploads sent by hand,
//! each refused with its reason.

use crate::common;

use serde_json::Value;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    common::scratch("service-tests", name)
}

fn envbench(store: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_envbench"))
        .args(args)
        .env("ENVBENCH_STORE", store)
        .env("NO_COLOR", "1")
        .env_remove("ALL_PROXY")
        .env_remove("all_proxy")
        .env_remove("HTTP_PROXY")
        .env_remove("HTTPS_PROXY")
        .env_remove("http_proxy")
        .env_remove("https_proxy")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `envbench serve` with `args` on a free loopback port: the server and its address (`127.0.0.1:PORT`).
fn serve(store: &Path, args: &[&str]) -> (common::Server, String) {
    let (server, url) = common::serve(store, args);
    let address = url.split("://").nth(1).unwrap().to_string();
    (server, address)
}

/// A plain HTTP/1.1 request: the status and the body of the answer.
fn request(address: &str, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> (u16, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("content-length")) {
        head.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = text(&answer);
    let status = answer.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

/// Two timed steps in a store of their own, labelled.
fn exec_run(store: &Path, dir: &Path, label: &str, repeat: &str) {
    let args =
        ["exec", "--dir", dir.to_str().unwrap(), "--name", "job", "--repeat", repeat, "--step", "wait=sleep 0.01"];
    let output = envbench(store, &[args.as_slice(), &["--label", label]].concat());
    assert!(output.status.success(), "{}", text(&output.stderr));
}

fn token(service: &Path, dir: &Path, name: &str) -> PathBuf {
    let output = envbench(service, &["results", "token", "create", "--name", name]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("shown this once"));
    let file = dir.join(format!("{name}.token"));
    std::fs::write(&file, &output.stdout).unwrap();
    file
}

/// Issue #54, E11: the read API refuses what it would otherwise ignore or misread: a limit of 0, a workload envbench
/// does not have, a parameter it does not take (400, saying which).
#[test]
fn the_read_api_refuses_nonsense_queries() {
    let dir = scratch("read-api");
    let store = dir.join("results.db");
    exec_run(&store, &dir, "api", "3");
    let (_server, address) = serve(&store, &[]);
    let cases = [
        ("/api/v1/runs?limit=0", "give a count from 1"),
        ("/api/v1/runs?limit=many", "give a count from 1"),
        ("/api/v1/runs?workload=nosuch", "not one of envbench's"),
        ("/api/v1/runs?colour=red", "unknown parameter 'colour'"),
        ("/api/v1/leaderboard?workload=exec&colour=red", "unknown parameter 'colour'"),
        ("/api/v1/leaderboard?workload=nosuch", "not one of envbench's"),
        ("/leaderboard?workload=exec&hypervisr=kvm", "unknown parameter"),
    ];
    for (path, needle) in cases {
        let (status, body) = request(&address, "GET", path, &[], b"");
        assert_eq!(status, 400, "{path}: {body}");
        assert!(body.contains(needle), "{path}: '{needle}' missing from {body}");
    }
    let (status, body) = request(&address, "GET", "/api/v1/runs?limit=1&workload=exec", &[], b"");
    assert_eq!(status, 200, "{body}");
}

/// A server on a free loopback port that is not envbench's: each connection it accepts is handed to `answer` on a
/// thread of its own. Its address.
fn fake_server(answer: fn(std::net::TcpStream)) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for connection in listener.incoming().flatten() {
            std::thread::spawn(move || answer(connection));
        }
    });
    address
}

/// Issue #54, E12: a web server that answers 404 to everything is not an envbench service, and compare says so rather
/// than reading it as a service with no other environment.
#[test]
fn a_web_server_that_is_not_a_service_is_named_so() {
    use std::io::BufRead;
    let dir = scratch("not-a-service");
    let store = dir.join("mine.db");
    exec_run(&store, &dir, "here", "3");
    let address = fake_server(|connection| {
        let mut reader = std::io::BufReader::new(connection);
        let mut line = String::new();
        while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
            line.clear();
        }
        let _ = reader.get_mut().write_all(
            b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html\r\nContent-Length: 22\r\nConnection: close\r\n\r\n<h1>404 Not Found</h1>",
        );
    });
    let output = envbench(&store, &["compare", &format!("http://{address}/")]);
    let message = text(&output.stderr);
    assert!(!output.status.success(), "{message}");
    assert!(message.contains("not an envbench service"), "{message}");
    assert!(!message.contains("no other environment"), "{message}");
}

/// Issue #54, E9: compare against a "service" that accepts connections and never answers ends within the read
/// timeout (30 s), and says so, where it waited 300 s.
#[test]
fn a_service_that_never_answers_is_given_up_on() {
    use std::time::{Duration, Instant};
    let dir = scratch("silent");
    let store = dir.join("mine.db");
    exec_run(&store, &dir, "here", "3");
    // Each connection is accepted and kept open, unanswered, for 90 s.
    let address = fake_server(|connection| {
        std::thread::sleep(Duration::from_secs(90));
        drop(connection);
    });
    let started = Instant::now();
    let output = envbench(&store, &["compare", "label:here", &format!("http://{address}/label:there")]);
    let waited = started.elapsed();
    let message = text(&output.stderr);
    assert!(!output.status.success());
    assert!(message.contains("no answer within 30 s"), "{message}");
    assert!(waited < Duration::from_secs(80), "waited {waited:?}");
}

/// Issue #54, E8: on a PostgreSQL store, eight uploads at once of one run's results under eight ids: one is
/// accepted, the others are refused as copies (422), none fails (500), and no answer names the store.
#[test]
fn parallel_copies_on_a_postgres_store_are_refused_as_copies() {
    let dir = scratch("parallel-copies");
    let schema = common::Schema::new("svccopies");
    let service = schema.url();
    let service = Path::new(&service);
    let mine = dir.join("mine.db");
    exec_run(&mine, &dir, "copies", "3");
    let alice = token(service, &dir, "alice");
    let (_server, address) = serve(service, &["--accept-uploads"]);
    let dry = envbench(&mine, &["push", &format!("http://{address}/"), "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let mut run = serde_json::from_slice::<Value>(&dry.stdout).unwrap()["runs"][0].clone();
    let suite = "5f0c9b1e-2d3a-4c5b-8e6f-7a8b9c0d1e2f";
    run["run"]["tags"]["suite"] = Value::from(suite);
    let bearer = format!("Bearer {}", std::fs::read_to_string(&alice).unwrap().trim());
    // E11: a field the upload format does not have is refused at the top level too.
    let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": [run.clone()], "note": "x" })).unwrap();
    let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
    let (status, answer) = request(&address, "POST", "/api/v1/runs", &headers, &body);
    assert_eq!(status, 400, "{answer}");
    assert!(answer.contains("unknown field 'note'"), "{answer}");
    let answers: Vec<(u16, String)> = std::thread::scope(|scope| {
        let sent: Vec<_> = (1..=8)
            .map(|i| {
                let mut copy = run.clone();
                copy["run"]["uuid"] = Value::from(format!("00000000-0000-4000-8000-{i:012}"));
                let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": [copy] })).unwrap();
                let (address, bearer) = (&address, &bearer);
                scope.spawn(move || {
                    let headers = [("Authorization", bearer.as_str()), ("Content-Type", "application/json")];
                    request(address, "POST", "/api/v1/runs", &headers, &body)
                })
            })
            .collect();
        sent.into_iter().map(|s| s.join().unwrap()).collect()
    });
    assert_eq!(answers.iter().filter(|(status, _)| *status == 200).count(), 1, "{answers:?}");
    for (status, body) in &answers {
        assert!(*status == 200 || (*status == 422 && body.contains("a copy is not another run")), "{status}: {body}");
        assert!(!body.contains("postgres") && !body.contains("5432"), "the store is named: {body}");
    }
    // E2 on PostgreSQL: another submitter's run into alice's suite is refused; each submitter's runs list apart.
    let bob = token(service, &dir, "bob");
    let mut other = run.clone();
    other["run"]["uuid"] = Value::from("00000000-0000-4000-8000-000000000099");
    let elapsed = other["run"]["results"].as_array().unwrap().iter().position(|r| r["metric"] == "elapsed").unwrap();
    let doubled: Vec<f64> = other["run"]["results"][elapsed]["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_f64().unwrap() * 2.0)
        .collect();
    let mut sorted = doubled.clone();
    sorted.sort_by(f64::total_cmp);
    other["headlines"][elapsed]["median"] = Value::from(sorted[sorted.len() / 2]);
    other["run"]["results"][elapsed]["samples"] = Value::from(doubled);
    let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": [other] })).unwrap();
    let bob_bearer = format!("Bearer {}", std::fs::read_to_string(&bob).unwrap().trim());
    let (status, answer) = request(&address, "POST", "/api/v1/runs", &[("Authorization", &bob_bearer)], &body);
    assert_eq!(status, 422, "{answer}");
    assert!(answer.contains("a suite is one submitter's") && answer.contains("that 'alice' sent"), "{answer}");
    let listed = |query: &str| {
        let (status, body) = request(&address, "GET", &format!("/api/v1/runs?{query}"), &[], b"");
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Vec<Value>>(&body).unwrap()
    };
    let alices = listed("submitter=alice");
    assert_eq!(alices.len(), 1);
    assert_eq!(alices[0]["submitter"], "alice");
    assert!(listed("submitter=bob").is_empty());
}

/// Issue #54, E5: a client that sends its headers a byte at a time (slowloris), or sends nothing, is disconnected once
/// the header-read timeout (15 s) has passed, on the plain-HTTP service.
#[test]
fn slow_and_idle_clients_are_disconnected() {
    use std::time::{Duration, Instant};
    let dir = scratch("slowloris");
    let (_server, address) = serve(&dir.join("service.db"), &["--accept-uploads"]);
    let clients: Vec<_> = [true, false]
        .into_iter()
        .map(|slow| {
            let address = address.clone();
            std::thread::spawn(move || {
                let started = Instant::now();
                let mut stream = std::net::TcpStream::connect(&address).unwrap();
                stream.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
                let head = format!("GET / HTTP/1.1\r\nHost: {address}\r\nX-Slow: ");
                let mut sent = 0;
                while started.elapsed() < Duration::from_secs(45) {
                    if slow {
                        let byte = head.as_bytes().get(sent).copied().unwrap_or(b'a');
                        if stream.write_all(&[byte]).is_err() {
                            return started.elapsed();
                        }
                        sent += 1;
                    }
                    let mut buffer = [0u8; 512];
                    match stream.read(&mut buffer) {
                        Ok(0) => return started.elapsed(),
                        // The service may answer 408 before it closes.
                        Ok(_) => {}
                        Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                        }
                        Err(_) => return started.elapsed(),
                    }
                }
                panic!("the {} client is still connected after 45 s", if slow { "slow" } else { "idle" });
            })
        })
        .collect();
    for client in clients {
        let open = client.join().unwrap();
        assert!(open >= Duration::from_secs(5), "closed after {open:?}, before any timeout was due");
    }
}

/// Issue #67, F2: 1,100 clients from one peer that send an upload's headers and then a byte of its body every few
/// seconds, against a service limited to 1,024 descriptors, do not keep another client from its page: the peer's
/// connections beyond its cap are closed as they come, the service keeps descriptors for the rest, and every body has
/// a deadline.
#[test]
fn slow_bodies_from_one_peer_starve_no_other_client() {
    use std::time::{Duration, Instant};
    // This process holds the 1,100 connections itself: its soft limit goes up to its hard one.
    let mut own = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut own);
        own.rlim_cur = own.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &own);
    }
    assert!(own.rlim_cur >= 1300, "this test holds 1,100 connections; the hard limit is {}", own.rlim_max);
    let dir = scratch("slow-bodies");
    let (mut server, address) = common::serve_limited(&dir.join("service.db"), &["--accept-uploads"], Some(1024));
    let host = address.trim_start_matches("http://").to_string();
    let head = format!(
        "POST /api/v1/known HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: \
         100000\r\n\r\n{{"
    );
    let mut slow: Vec<std::net::TcpStream> = (0..1100)
        .filter_map(|_| {
            let mut stream = std::net::TcpStream::connect(&host).ok()?;
            let _ = stream.write_all(head.as_bytes());
            Some(stream)
        })
        .collect();
    assert!(slow.len() >= 1000, "the clients connected: {}", slow.len());
    // Another peer (127.0.0.2 is loopback too) asks for the runs page while the slow ones trickle on.
    let page = || {
        let started = Instant::now();
        let output = Command::new("curl")
            .args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--max-time", "10", "--interface", "127.0.0.2"])
            .arg(format!("{address}/"))
            .output()
            .unwrap();
        (String::from_utf8_lossy(&output.stdout).into_owned(), started.elapsed())
    };
    let mut fastest = Duration::MAX;
    for round in 0..5 {
        for stream in &mut slow {
            let _ = stream.write_all(b" ");
        }
        let (status, took) = page();
        assert_eq!(status, "200", "round {round}: the other client's page ({took:?})");
        fastest = fastest.min(took);
        std::thread::sleep(Duration::from_secs(1));
    }
    assert!(fastest < Duration::from_secs(1), "the other client's page took {fastest:?} at best");
    assert!(server.0.try_wait().unwrap().is_none(), "the service is still up");
    // A body that never arrives whole is cut at its deadline (10 s, and 256 KiB/s of what it announced).
    drop(slow);
    // The peer's slots come back as the service sees its clients gone.
    std::thread::sleep(Duration::from_secs(2));
    let mut held = std::net::TcpStream::connect(&host).unwrap();
    let started = Instant::now();
    held.write_all(head.as_bytes()).unwrap();
    held.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let mut answer = String::new();
    let _ = held.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 10 s"), "{answer}");
    assert!(started.elapsed() >= Duration::from_secs(10), "not before its deadline: {:?}", started.elapsed());
}

/// Issue #54, E4: a token never crosses the network in clear text unasked: plain HTTP to another host, the scheme in
/// any case, is refused before anything is sent; `--insecure-http` sends it with a warning.
#[test]
fn a_token_is_not_sent_over_plain_http_to_another_host() {
    let dir = scratch("clear-text");
    let store = dir.join("results.db");
    exec_run(&store, &dir, "plain", "1");
    let token = token(&dir.join("service.db"), &dir, "alice");
    let token = token.to_str().unwrap();
    // E12: the hint survives the redaction of secrets that every message goes through.
    let output = envbench(&store, &["push", "http://192.0.2.1:9/"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--token-file FILE"), "{}", text(&output.stderr));
    for url in ["http://192.0.2.1:9/", "HTTP://192.0.2.1:9/", "Http://results.example.invalid/"] {
        let output = envbench(&store, &["push", url, "--token-file", token]);
        let message = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{url}: {message}");
        assert!(message.contains("clear text") && message.contains("not sent"), "{url}: {message}");
        assert!(message.contains("--insecure-http"), "{message}");
    }
    // 0.0.0.0 is not a loopback address, though a connection to it reaches this host, where nothing listens on port 9.
    let output = envbench(&store, &["push", "http://0.0.0.0:9/", "--token-file", token, "--insecure-http"]);
    let message = text(&output.stderr);
    assert!(message.contains("warning:") && message.contains("clear text"), "{message}");
    assert!(!output.status.success(), "{message}");
    let output = envbench(&store, &["push", "--to", dir.join("other.db").to_str().unwrap(), "--insecure-http"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("--insecure-http is for pushing to a results service"));
}

/// Two stores push to one service; the second push skips what is there; the service keeps each run with its
/// submitter and the provenance its client stated; every tampered upload is refused with its reason, and so are a
/// revoked token, an oversized body and uploads past a token's hourly limit.
#[test]
fn two_stores_push_to_one_service_and_tampered_uploads_are_refused() {
    let dir = scratch("push");
    let service = dir.join("service.db");
    let (alice_store, bob_store) = (dir.join("alice.db"), dir.join("bob.db"));
    exec_run(&alice_store, &dir, "alice-vm", "3");
    exec_run(&alice_store, &dir, "alice-vm", "4");
    exec_run(&bob_store, &dir, "bob-metal", "3");
    let (alice, bob) = (token(&service, &dir, "alice"), token(&service, &dir, "bob"));
    let carol = token(&service, &dir, "carol");
    let again = envbench(&service, &["results", "token", "create", "--name", "alice"]);
    assert!(!again.status.success() && text(&again.stderr).contains("choose another name"));
    let (_server, address) =
        serve(&service, &["--accept-uploads", "--max-upload-size", "512KiB", "--max-uploads-per-hour", "3"]);
    let url = format!("http://{address}/");

    let push = |store: &Path, token: &Path| envbench(store, &["push", &url, "--token-file", token.to_str().unwrap()]);
    let first = push(&alice_store, &alice);
    assert!(first.status.success(), "{}{}", text(&first.stdout), text(&first.stderr));
    assert!(
        text(&first.stdout).contains("pushed 2 runs") && text(&first.stdout).contains("as 'alice'"),
        "{}",
        text(&first.stdout)
    );
    let second = push(&alice_store, &alice);
    assert!(
        text(&second.stdout).contains("pushed 0 runs") && text(&second.stdout).contains("2 already there"),
        "{}",
        text(&second.stdout)
    );
    let bobs = push(&bob_store, &bob);
    assert!(
        text(&bobs.stdout).contains("pushed 1 run ") && text(&bobs.stdout).contains("as 'bob'"),
        "{}",
        text(&bobs.stdout)
    );
    let kept: Vec<Value> = serde_json::from_slice(&envbench(&service, &["results", "list", "--json"]).stdout).unwrap();
    assert_eq!(kept.len(), 3, "{kept:?}");
    let tokens: Vec<Value> =
        serde_json::from_slice(&envbench(&service, &["results", "token", "list", "--json"]).stdout).unwrap();
    let runs_of = |name: &str| tokens.iter().find(|t| t["name"] == name).unwrap()["runs"].as_u64().unwrap();
    assert_eq!((runs_of("alice"), runs_of("bob")), (2, 1));
    assert!(
        !text(&envbench(&service, &["results", "token", "list"]).stdout).contains("envb_"),
        "tokens are never shown again"
    );

    // The upload of a new run, as push would send it, tampered in each way and sent by hand.
    exec_run(&bob_store, &dir, "bob-metal", "5");
    let dry = envbench(&bob_store, &["push", &url, "--dry-run", "--label", "bob-metal"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    let upload: Value = serde_json::from_slice(&dry.stdout).unwrap();
    let runs = upload["runs"].as_array().unwrap();
    let fresh = runs.iter().find(|r| r["headlines"][0]["samples"] == 5).expect("the new run in the dry run").clone();
    let carol_token = std::fs::read_to_string(&carol).unwrap().trim().to_string();
    let bearer = format!("Bearer {carol_token}");
    let send = |run: &Value| {
        let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": [run] })).unwrap();
        request(
            &address,
            "POST",
            "/api/v1/runs",
            &[("Authorization", &bearer), ("Content-Type", "application/json")],
            &body,
        )
    };
    let mut headline = fresh.clone();
    headline["headlines"][0]["median"] = Value::from(headline["headlines"][0]["median"].as_f64().unwrap() * 0.5);
    let mut fingerprint = fresh.clone();
    fingerprint["run"]["fingerprint"]["memory"]["total_bytes"] = Value::from(1u64 << 40);
    let mut future = fresh.clone();
    future["run"]["ended_at"] = Value::from("2099-01-01T00:00:00.000Z");
    let cases = [
        (headline, "does not match the median of its samples"),
        (fingerprint, "fingerprint hash does not match"),
        (future, "lies in the future"),
    ];
    for (tampered, reason) in &cases {
        let (status, body) = send(tampered);
        assert_eq!(status, 422, "{body}");
        let answer: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(answer["runs"][0]["outcome"], "refused", "{answer}");
        assert!(answer["runs"][0]["reason"].as_str().unwrap().contains(reason), "'{reason}' missing from {answer}");
    }
    // Past carol's 3 uploads an hour: 429, with when to try again.
    let (status, body) = send(&fresh);
    assert_eq!(status, 429, "{body}");
    assert!(body.contains("3 uploads in the last hour"), "{body}");
    // A body announced over the limit is refused before it is read (nothing of it is sent here).
    let alice_bearer = format!("Bearer {}", std::fs::read_to_string(&alice).unwrap().trim());
    let big = (600 << 10).to_string();
    let (status, body) =
        request(&address, "POST", "/api/v1/runs", &[("Authorization", &alice_bearer), ("Content-Length", &big)], b"");
    assert_eq!(status, 413, "{body}");
    assert!(body.contains("larger than this service takes"), "{body}");
    // No token, an unknown one, a revoked one.
    assert_eq!(request(&address, "POST", "/api/v1/runs", &[], b"{}").0, 401);
    let unknown = format!("Bearer envb_{}", "0".repeat(64));
    assert_eq!(request(&address, "POST", "/api/v1/runs", &[("Authorization", &unknown)], b"{}").0, 401);
    let revoked = envbench(&service, &["results", "token", "revoke", "--name", "bob"]);
    assert!(revoked.status.success(), "{}", text(&revoked.stderr));
    let refused = push(&bob_store, &bob);
    assert!(!refused.status.success());
    assert!(text(&refused.stderr).contains("was revoked"), "{}", text(&refused.stderr));
    // A copy of an accepted run under another uuid is a duplicate, from any submitter.
    let original = envbench(&alice_store, &["push", &url, "--dry-run"]);
    let mut copy = serde_json::from_slice::<Value>(&original.stdout).unwrap()["runs"][0].clone();
    copy["run"]["uuid"] = Value::from("00000000-0000-4000-8000-000000000001");
    let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": [copy] })).unwrap();
    let (status, body) = request(&address, "POST", "/api/v1/runs", &[("Authorization", &alice_bearer)], &body);
    assert_eq!(status, 422, "{body}");
    assert!(body.contains("the same results are here already"), "{body}");
    // Nothing refused was kept; the token file's contents never reached a stored command line or the output.
    let kept: Vec<Value> = serde_json::from_slice(&envbench(&service, &["results", "list", "--json"]).stdout).unwrap();
    assert_eq!(kept.len(), 3);
    assert!(!text(&first.stdout).contains("envb_") && !text(&first.stderr).contains("envb_"));
}

/// Over HTTPS with the service's own certificate (a self-signed one for 127.0.0.1 and localhost, made once with
/// `openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 36500 -subj /CN=localhost
/// -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -addext basicConstraints=critical,CA:FALSE ...`): a client that
/// trusts it with --ca-cert uploads; one that does not is refused by its own TLS check and says so.
#[test]
fn uploads_go_over_https_to_a_client_that_trusts_the_certificate() {
    let dir = scratch("tls");
    let (service, store) = (dir.join("service.db"), dir.join("mine.db"));
    exec_run(&store, &dir, "tls", "3");
    let alice = token(&service, &dir, "alice");
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/fixtures/tls");
    let (cert, key) = (fixtures.join("cert.pem"), fixtures.join("key.pem"));
    let tls = ["--accept-uploads", "--tls-cert", cert.to_str().unwrap(), "--tls-key", key.to_str().unwrap()];
    let (_server, address) = serve(&service, &tls);
    let url = format!("https://{address}/");
    let untrusted = envbench(&store, &["push", &url, "--token-file", alice.to_str().unwrap()]);
    assert_eq!(untrusted.status.code(), Some(1), "{}", text(&untrusted.stderr));
    assert!(text(&untrusted.stderr).contains("cannot reach the service"), "{}", text(&untrusted.stderr));
    let trusted =
        envbench(&store, &["push", &url, "--token-file", alice.to_str().unwrap(), "--ca-cert", cert.to_str().unwrap()]);
    assert!(trusted.status.success(), "{}", text(&trusted.stderr));
    assert!(text(&trusted.stdout).contains("pushed 1 run "), "{}", text(&trusted.stdout));
    // The key is refused when it is not the certificate's.
    let wrong = envbench(
        &service,
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            cert.to_str().unwrap(),
        ],
    );
    assert_eq!(wrong.status.code(), Some(2));
    assert!(text(&wrong.stderr).contains("--tls-key"), "{}", text(&wrong.stderr));
}

/// A service is a read-only store for `compare` and `report`: a side named on it (`http://host/label:pinned`)
/// resolves there, `http://host/` alone is its best other environment on the local side's workloads, and compare says
/// where the local side would stand there. Nothing is written to either store; the read API and the run page's
/// per-test percentiles answer as documented.
#[test]
fn compare_and_report_read_a_service_and_show_where_a_run_stands() {
    let online = std::thread::available_parallelism().unwrap().get();
    assert!(online >= 2, "this test pins a run to one of this machine's CPUs: it needs two");
    let dir = scratch("read");
    let (service, mine, theirs) = (dir.join("service.db"), dir.join("mine.db"), dir.join("theirs.db"));
    exec_run(&mine, &dir, "mine", "3");
    // Another environment: the same machine held to one CPU by taskset.
    let pinned = Command::new("taskset")
        .args(["-c", "0", env!("CARGO_BIN_EXE_envbench")])
        .args(["exec", "--dir", dir.to_str().unwrap(), "--name", "job", "--repeat", "3", "--step", "wait=sleep 0.01"])
        .args(["--label", "pinned"])
        .env("ENVBENCH_STORE", &theirs)
        .output()
        .unwrap();
    assert!(pinned.status.success(), "{}", text(&pinned.stderr));
    exec_run(&theirs, &dir, "theirs-full", "3");
    let uploader = token(&service, &dir, "theirs");
    let (_server, address) = serve(&service, &["--accept-uploads"]);
    let url = format!("http://{address}/");
    let pushed = envbench(&theirs, &["push", &url, "--token-file", uploader.to_str().unwrap()]);
    assert!(text(&pushed.stdout).contains("pushed 2 runs"), "{}{}", text(&pushed.stdout), text(&pushed.stderr));
    let count = |store: &Path| {
        serde_json::from_slice::<Vec<Value>>(&envbench(store, &["results", "list", "--json"]).stdout).unwrap().len()
    };

    // The read API.
    let (status, body) = request(&address, "GET", "/api/v1/runs?label=pinned", &[], b"");
    assert_eq!(status, 200, "{body}");
    let listed: Vec<Value> = serde_json::from_str(&body).unwrap();
    assert_eq!(listed.len(), 1, "{body}");
    let pinned_uuid = listed[0]["uuid"].as_str().unwrap().to_string();
    // A run other tests' load disturbed is flagged: never anyone's best, never ranked.
    let pinned_flagged = listed[0]["disturbed"] == true;
    let (status, body) = request(&address, "GET", &format!("/api/v1/runs/{}", &pinned_uuid[..8]), &[], b"");
    assert_eq!(status, 200, "{body}");
    let run: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(run["uuid"], pinned_uuid.as_str());
    assert!(run["results"][0]["samples"].as_array().is_some_and(|s| s.len() == 3), "every sample: {body}");
    let (status, body) = request(&address, "GET", "/api/v1/runs/ffffffff", &[], b"");
    assert_eq!(status, 404, "{body}");
    assert!(serde_json::from_str::<Value>(&body).unwrap()["error"].as_str().unwrap().contains("no run matches"));
    let (status, body) = request(&address, "GET", "/api/v1/leaderboard?workload=exec", &[], b"");
    assert_eq!(status, 200, "{body}");
    let board: Value = serde_json::from_str(&body).unwrap();
    let environments =
        ["default", "tuned", "flagged"].iter().map(|c| board[c].as_array().unwrap().len()).sum::<usize>();
    assert_eq!(environments, 2, "two environments on the service: {body}");

    // A side on the service by label; the local side's standing there.
    let named = envbench(&mine, &["compare", "label:mine", &format!("{url}label:pinned")]);
    let out = text(&named.stdout);
    assert!(named.status.success(), "{out}{}", text(&named.stderr));
    assert!(out.contains(&format!("pinned by theirs on {address}")), "{out}");
    assert!(out.contains(&format!("Standing of label:mine on http://{address}")), "{out}");
    // Its own environment (theirs-full ran on this machine too) is stood in for by the local side: 2 environments;
    // unless other tests' load disturbed it, when it is flagged and not ranked.
    if pinned_flagged {
        assert!(out.contains("not ranked"), "{out}");
    } else {
        assert!(out.contains("of 2 environments with") || out.contains("not ranked: its runs are flagged"), "{out}");
    }
    // The bare URL: its best other environment on the local side's workloads (one URL alone: the latest local run).
    let best = envbench(&mine, &["compare", "--json", "label:mine", &url]);
    let alone = envbench(&mine, &["compare", &url]);
    if pinned_flagged {
        for output in [&best, &alone] {
            assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
            assert!(text(&output.stderr).contains("besides 1 flagged"), "{}", text(&output.stderr));
        }
    } else {
        assert!(best.status.success(), "{}", text(&best.stderr));
        let document: Value = serde_json::from_slice(&best.stdout).unwrap();
        let sides: Vec<&str> =
            document["sides"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
        assert!(sides.iter().any(|s| s.starts_with("best on 127.0.0.1")), "{}", document["sides"]);
        let standing = &document["standings"][0]["workloads"][0];
        if standing["class"] == "flagged" {
            assert!(standing["position"].is_null(), "{standing}");
        } else {
            assert_eq!(standing["of"], 2, "{standing}");
            assert!(standing["position"].as_u64().is_some_and(|p| (1..=2).contains(&p)), "{standing}");
        }
        assert!(alone.status.success(), "{}", text(&alone.stderr));
        assert!(text(&alone.stdout).contains("best on 127.0.0.1"), "{}", text(&alone.stdout));
    }
    // A report with a side on the service.
    let report = dir.join("report.html");
    let written =
        envbench(&mine, &["report", "label:mine", &format!("{url}label:pinned"), "-o", report.to_str().unwrap()]);
    assert!(written.status.success(), "{}", text(&written.stderr));
    assert!(std::fs::read_to_string(&report).unwrap().contains(&format!("pinned by theirs on {address}")));
    // What the service does not have is the user's mistake, named with the service.
    let missing = envbench(&mine, &["compare", "label:mine", &format!("{url}label:nope")]);
    assert_eq!(missing.status.code(), Some(2), "{}", text(&missing.stderr));
    assert!(text(&missing.stderr).contains(&address), "{}", text(&missing.stderr));
    // Read-only both ways.
    assert_eq!((count(&mine), count(&service)), (1, 2));

    // The run page: each headline test's percentile among the other environments.
    let (status, page) = request(&address, "GET", &format!("/run/{pinned_uuid}"), &[], b"");
    assert_eq!(status, 200);
    assert!(page.contains("Among the environments here"), "{page}");
    assert!(page.contains("Beats") || page.contains("flagged"), "{page}");
}

/// The upload push would send of a store's runs (its dry run).
fn dry_upload(store: &Path, url: &str) -> Value {
    let dry = envbench(store, &["push", url, "--dry-run"]);
    assert!(dry.status.success(), "{}", text(&dry.stderr));
    serde_json::from_slice(&dry.stdout).unwrap()
}

/// Every leaderboard entry of the service's exec leaderboard, by submitter.
fn entries_by_submitter(address: &str) -> std::collections::BTreeMap<String, Vec<Value>> {
    let (status, body) = request(address, "GET", "/api/v1/leaderboard?workload=exec", &[], b"");
    assert_eq!(status, 200, "{body}");
    let board: Value = serde_json::from_str(&body).unwrap();
    let mut entries: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for list in ["default", "tuned", "flagged"] {
        for entry in board[list].as_array().unwrap() {
            let submitter = entry["submitter"].as_str().unwrap_or("(none)").to_string();
            entries.entry(submitter).or_default().push(entry.clone());
        }
    }
    entries
}

/// Issue #54, E2: a token holder forges another submitter's label, suite and fingerprint. The upload into the other's
/// suite is refused; the runs with the label and fingerprint are kept as the forger's own, so neither the other's
/// compare (named within the submitter) nor the other's leaderboard entry moves, and a bare label that now matches
/// two submitters' runs is refused with both names.
#[test]
fn a_submitter_cannot_move_another_submitters_compare_or_leaderboard() {
    let dir = scratch("forged");
    let (service, alice_store, mallory_store, mine) =
        (dir.join("service.db"), dir.join("alice.db"), dir.join("mallory.db"), dir.join("mine.db"));
    let suite = "7d1f3c2a-5b6e-4f80-9a1b-2c3d4e5f6a7b";
    for repeat in ["3", "4"] {
        let args = ["exec", "--dir", dir.to_str().unwrap(), "--name", "job", "--repeat", repeat, "--step"];
        let output = envbench(
            &alice_store,
            &[args.as_slice(), &["wait=sleep 0.01", "--label", "base", "--tag", &format!("suite={suite}")]].concat(),
        );
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    // Mallory's runs of the same step: were they counted as alice's, her samples and figure would change.
    for repeat in ["3", "5"] {
        let args = ["exec", "--dir", dir.to_str().unwrap(), "--name", "job", "--repeat", repeat];
        let output = envbench(&mallory_store, &[args.as_slice(), &["--step", "wait=sleep 0.01"]].concat());
        assert!(output.status.success(), "{}", text(&output.stderr));
    }
    exec_run(&mine, &dir, "ref", "3");
    let (alice, mallory) = (token(&service, &dir, "alice"), token(&service, &dir, "mallory"));
    let (_server, address) = serve(&service, &["--accept-uploads"]);
    let url = format!("http://{address}/");
    let pushed = envbench(&alice_store, &["push", &url, "--token-file", alice.to_str().unwrap()]);
    assert!(text(&pushed.stdout).contains("pushed 2 runs"), "{}{}", text(&pushed.stdout), text(&pushed.stderr));

    let compare = |side: &str| envbench(&mine, &["compare", "label:ref", &format!("{url}{side}")]);
    let before = compare("label:base");
    assert!(before.status.success(), "{}", text(&before.stderr));
    assert!(text(&before.stdout).contains(&format!("base by alice on {address}")), "{}", text(&before.stdout));
    let scoped = compare("alice/label:base");
    assert_eq!(text(&scoped.stdout), text(&before.stdout));
    let board_before = entries_by_submitter(&address);
    assert_eq!(board_before.keys().collect::<Vec<_>>(), ["alice"], "{board_before:?}");

    // Mallory's runs, as push would send them, made to look like alice's.
    let alices = dry_upload(&alice_store, &url);
    let alice_run = &alices["runs"][0]["run"];
    let mut forged = dry_upload(&mallory_store, &url);
    for run in forged["runs"].as_array_mut().unwrap() {
        run["run"]["label"] = Value::from("base");
        run["run"]["fingerprint"] = alice_run["fingerprint"].clone();
        run["run"]["fingerprint_hash"] = alice_run["fingerprint_hash"].clone();
        run["provenance"]["fingerprint_sha256"] = alice_run["fingerprint_hash"].clone();
    }
    let bearer = format!("Bearer {}", std::fs::read_to_string(&mallory).unwrap().trim());
    let send = |runs: &[Value]| {
        let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": runs })).unwrap();
        let (status, body) = request(&address, "POST", "/api/v1/runs", &[("Authorization", &bearer)], &body);
        (status, serde_json::from_str::<Value>(&body).unwrap())
    };
    // Into alice's suite, by its tag or by the run's suite id: refused.
    let mut by_tag = forged["runs"][0].clone();
    by_tag["run"]["tags"]["suite"] = Value::from(suite);
    let mut by_id = forged["runs"][0].clone();
    by_id["run"]["suite_id"] = Value::from(suite);
    for into_suite in [by_tag, by_id] {
        let (status, answer) = send(&[into_suite]);
        assert_eq!(status, 422, "{answer}");
        let reason = answer["runs"][0]["reason"].as_str().unwrap();
        assert!(reason.contains(suite) && reason.contains("that 'alice' sent"), "{reason}");
        assert!(reason.contains("a suite is one submitter's"), "{reason}");
    }
    let (status, answer) = send(forged["runs"].as_array().unwrap());
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["submitter"], "mallory");

    // Alice's side, named within alice's runs, compares exactly as before (where the local side would stand among
    // everyone's entries may change: mallory's is one more); the bare label is now ambiguous.
    let after = compare("alice/label:base");
    assert!(after.status.success(), "{}", text(&after.stderr));
    let comparison = |output: &Output| text(&output.stdout).split("\nStanding of").next().unwrap().to_string();
    assert_eq!(comparison(&after), comparison(&before));
    let ambiguous = compare("label:base");
    assert_eq!(ambiguous.status.code(), Some(2), "{}", text(&ambiguous.stdout));
    let error = text(&ambiguous.stderr);
    assert!(error.contains("2 submitters ('alice', 'mallory')"), "{error}");
    assert!(error.contains(&format!("{url}alice/label:base")), "{error}");
    // A run id of mallory's is not found among alice's.
    let mallory_run = forged["runs"][0]["run"]["uuid"].as_str().unwrap();
    let elsewhere = compare(&format!("alice/run:{mallory_run}"));
    assert_eq!(elsewhere.status.code(), Some(2), "{}", text(&elsewhere.stdout));
    assert!(text(&elsewhere.stderr).contains("?submitter=alice"), "{}", text(&elsewhere.stderr));
    let mallorys = compare("mallory/label:base");
    assert!(mallorys.status.success(), "{}", text(&mallorys.stderr));
    assert!(text(&mallorys.stdout).contains(&format!("base by mallory on {address}")), "{}", text(&mallorys.stdout));

    // Alice's leaderboard figure is what it was (its runs and medians; her place is among more entries now);
    // mallory's runs are an entry of their own, which names her.
    let board_after = entries_by_submitter(&address);
    assert_eq!(board_after.keys().collect::<Vec<_>>(), ["alice", "mallory"], "{board_after:?}");
    let figure = |entries: &[Value]| -> Vec<Value> {
        let fields = ["environment", "submitter", "runs", "medians", "tests"];
        entries.iter().map(|e| fields.iter().map(|f| e[*f].clone()).collect()).collect()
    };
    assert_eq!(figure(&board_after["alice"]), figure(&board_before["alice"]));
    let mallorys_runs: usize = board_after["mallory"].iter().map(|e| e["runs"].as_array().unwrap().len()).sum();
    assert_eq!(mallorys_runs, 2, "{board_after:?}");
    let (status, page) = request(&address, "GET", "/leaderboard?workload=exec", &[], b"");
    assert_eq!(status, 200);
    assert!(page.contains("by <a href=\"/?submitter=mallory\">mallory</a>"), "{page}");
    // A token's name is part of these addresses: one that cannot be is refused.
    let odd = envbench(&service, &["results", "token", "create", "--name", "label:x"]);
    assert_eq!(odd.status.code(), Some(2), "{}", text(&odd.stderr));
    assert!(text(&odd.stderr).contains("cannot name a submitter"), "{}", text(&odd.stderr));
}

/// Issue #54, E6: the battery's bad uploads, sent by hand with a live token, each refused (422) with its reason and
/// nothing of it kept: unknown fields in the run, its fingerprint and a result; escape sequences and oversize text in
/// the host and command line; a result count that does not match; a start in year 0001; zero, negative, 1e-300 and
/// denormal samples of a time.
#[test]
fn uploads_with_unknown_fields_or_nonsense_values_are_refused_and_nothing_is_kept() {
    let dir = scratch("nonsense");
    let (service, mine) = (dir.join("service.db"), dir.join("mine.db"));
    exec_run(&mine, &dir, "mine", "3");
    let sender = token(&service, &dir, "sender");
    let (_server, address) = serve(&service, &["--accept-uploads", "--max-uploads-per-hour", "1000"]);
    let honest = dry_upload(&mine, &format!("http://{address}/"))["runs"][0].clone();
    // Issue #54, E13: a tuned run names the options it was given, never clap's groups of them (`--ExecArgs`).
    let options = honest["provenance"]["options"].to_string();
    assert!(options.contains("--repeat") && !options.contains("Args"), "{options}");
    let bearer = format!("Bearer {}", std::fs::read_to_string(&sender).unwrap().trim());
    type Change = Box<dyn Fn(&mut Value)>;
    let elapsed = honest["run"]["results"].as_array().unwrap().iter().position(|r| r["metric"] == "elapsed").unwrap();
    let samples = |values: Vec<f64>| -> Change {
        Box::new(move |run: &mut Value| {
            let mut sorted = values.clone();
            sorted.sort_by(f64::total_cmp);
            run["run"]["results"][elapsed]["samples"] = Value::from(values.clone());
            run["headlines"][elapsed]["samples"] = Value::from(values.len());
            run["headlines"][elapsed]["median"] = Value::from(sorted[sorted.len() / 2]);
        })
    };
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|r| r["run"]["admin"] = Value::from(true)), "unknown field 'run.admin'"),
        (
            Box::new(|r| r["run"]["fingerprint"]["cpu"]["extra"] = Value::from(1)),
            "unknown field 'run.fingerprint.cpu.extra'",
        ),
        (Box::new(|r| r["run"]["results"][0]["bonus"] = Value::from(2)), "unknown field 'run.results.0.bonus'"),
        (Box::new(|r| r["run"]["host"] = Value::from("h\u{1b}[2Jx")), "its host holds a control character"),
        (Box::new(|r| r["run"]["host"] = Value::from("h".repeat(200_000))), "keep it to 200"),
        (
            Box::new(|r| r["run"]["command_line"] = Value::from("envbench \u{1b}]0;owned\u{7} exec")),
            "its command line holds",
        ),
        (Box::new(|r| r["run"]["result_count"] = Value::from(99)), "states 99 results"),
        (Box::new(|r| r["run"]["started_at"] = Value::from("0001-01-01T00:00:00.000Z")), "before envbench existed"),
        (Box::new(|r| r["run"]["submitter"] = Value::from("someone")), "names its submitter"),
        (samples(vec![0.0, 0.1, 0.2]), "is no elapsed time"),
        (samples(vec![-1.0, 0.1, 0.2]), "is no time"),
        (samples(vec![1e-300, 0.1, 0.2]), "is no time"),
        (samples(vec![5e-324, 0.1, 0.2]), "out of range"),
    ];
    for (change, reason) in &cases {
        let mut run = honest.clone();
        change(&mut run);
        let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": [run] })).unwrap();
        let (status, answer) = request(&address, "POST", "/api/v1/runs", &[("Authorization", &bearer)], &body);
        assert_eq!(status, 422, "{reason}: {answer}");
        let answer: Value = serde_json::from_str(&answer).unwrap();
        let stated = answer["runs"][0]["reason"].as_str().unwrap_or_default();
        assert!(stated.contains(reason), "'{reason}' missing from: {stated}");
        assert!(!stated.contains('\u{1b}'), "the reason never carries what was refused raw: {stated}");
    }
    let kept: Vec<Value> = serde_json::from_slice(&envbench(&service, &["results", "list", "--json"]).stdout).unwrap();
    assert!(kept.is_empty(), "{kept:?}");
    // The honest run itself passes.
    let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": [honest] })).unwrap();
    let (status, answer) = request(&address, "POST", "/api/v1/runs", &[("Authorization", &bearer)], &body);
    assert_eq!(status, 200, "{answer}");
}

/// Issue #54, E3: a run whose results have more samples than pages show whole is shown from digests kept when it was
/// stored (its run page says so and links the run as kept), and the read API's one run still gives every sample.
#[test]
fn pages_show_a_run_with_many_samples_from_its_digest() {
    let dir = scratch("digest");
    let store = dir.join("many.db");
    let args = ["exec", "--dir", dir.to_str().unwrap(), "--name", "job", "--repeat", "1001", "--step", "x=true"];
    let output = envbench(&store, &args);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let listed: Vec<Value> = serde_json::from_slice(&envbench(&store, &["results", "list", "--json"]).stdout).unwrap();
    let uuid = listed[0]["uuid"].as_str().unwrap().to_string();
    let (_server, address) = serve(&store, &[]);
    let (status, page) = request(&address, "GET", &format!("/run/{uuid}"), &[], b"");
    assert_eq!(status, 200);
    assert!(page.contains("digest of 1001 samples"), "{page}");
    assert!(page.contains("shows each from a digest of 1001 order statistics"), "{page}");
    assert!(page.contains(&format!("href=\"/api/v1/runs/{uuid}\"")), "{page}");
    let (status, body) = request(&address, "GET", &format!("/api/v1/runs/{uuid}"), &[], b"");
    assert_eq!(status, 200);
    let run: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(run["results"][0]["samples"].as_array().unwrap().len(), 1001);
    let flags = run["results"][0]["flags"].as_array().unwrap();
    assert!(!flags.iter().any(|f| f.as_str().unwrap().starts_with("digest of")), "{flags:?}");
    let (status, list) = request(&address, "GET", "/", &[], b"");
    assert_eq!(status, 200);
    assert!(list.contains(&uuid[..8]), "{list}");
}

/// docs/service.md's promises against a hostile token holder each name the test that holds the service to them, and
/// each named test exists.
#[test]
fn every_security_promise_names_a_test_that_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let doc = std::fs::read_to_string(root.join("docs/service.md")).unwrap();
    let section = doc.split("## Against a hostile token holder").nth(1).expect("the security section");
    let section = section.split("\n## ").next().unwrap();
    let mut promises: Vec<String> = Vec::new();
    for line in section.lines() {
        if let Some(first) = line.strip_prefix("- ") {
            promises.push(first.to_string());
        } else if line.starts_with("  ")
            && let Some(last) = promises.last_mut()
        {
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    assert!(promises.len() >= 10, "{promises:?}");
    let mut sources = String::new();
    let mut folders = vec![root.join("crates")];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push_str(&std::fs::read_to_string(&path).unwrap());
            }
        }
    }
    for promise in &promises {
        let named = promise.split("[test: ").nth(1).and_then(|t| t.split(']').next());
        let Some(name) = named else { panic!("a promise without its test: {promise}") };
        assert!(sources.contains(&format!("fn {name}(")), "no test {name} for: {promise}");
    }
}

/// Issue #55: two sides where B is 2x slower, but every run of both was disturbed and B's runs disagree by 2x. The
/// verdict says "cannot tell", with the reason and the advice, in text and in `--json`; never "about the same".
/// (The runs are a real run's upload, made so by hand and sent to a service: disturbance cannot be ordered.)
#[test]
fn a_disturbed_inconsistent_slowdown_is_cannot_tell() {
    let dir = scratch("cannot-tell");
    let (service, mine) = (dir.join("service.db"), dir.join("mine.db"));
    exec_run(&mine, &dir, "mine", "3");
    let sender = token(&service, &dir, "sender");
    let (_server, address) = serve(&service, &["--accept-uploads"]);
    let url = format!("http://{address}/");
    let honest = dry_upload(&mine, &url)["runs"][0].clone();
    let elapsed = honest["run"]["results"].as_array().unwrap().iter().position(|r| r["metric"] == "elapsed").unwrap();
    let run = |label: &str, number: u32, samples: [f64; 3]| {
        let mut run = honest.clone();
        run["run"]["uuid"] = Value::from(format!("00000000-0000-4000-8000-{number:012}"));
        run["run"]["label"] = Value::from(label);
        run["run"]["disturbed"] = Value::from(true);
        for result in run["run"]["results"].as_array_mut().unwrap() {
            result["flags"] = serde_json::json!(["disturbed"]);
        }
        run["provenance"]["flags"] = serde_json::json!(["disturbed"]);
        run["run"]["results"][elapsed]["samples"] = Value::from(samples.to_vec());
        run["headlines"][elapsed]["median"] = Value::from(samples[1]);
        run
    };
    let runs = [
        run("a", 1, [1.00, 1.01, 1.02]),
        run("a", 2, [0.99, 1.00, 1.01]),
        run("a", 3, [1.01, 1.02, 1.03]),
        run("b", 4, [1.49, 1.50, 1.51]),
        run("b", 5, [2.99, 3.00, 3.01]),
        run("b", 6, [1.99, 2.00, 2.01]),
    ];
    let bearer = format!("Bearer {}", std::fs::read_to_string(&sender).unwrap().trim());
    let body = serde_json::to_vec(&serde_json::json!({ "format": 1, "runs": runs })).unwrap();
    let (status, answer) = request(&address, "POST", "/api/v1/runs", &[("Authorization", &bearer)], &body);
    assert_eq!(status, 200, "{answer}");

    let sides = [format!("{url}label:a"), format!("{url}label:b")];
    let output = envbench(&mine, &["compare", &sides[0], &sides[1]]);
    let out = text(&output.stdout);
    assert!(output.status.success(), "{out}{}", text(&output.stderr));
    let verdict = out.lines().find(|l| l.trim_start().starts_with("timed steps")).unwrap_or_else(|| panic!("{out}"));
    assert!(verdict.contains("cannot tell: the runs of B disagree by 2.00x"), "{verdict}");
    // What would let it tell, once, after the workloads.
    assert_eq!(out.matches("To tell: run each side again when the host is quiet").count(), 1, "{out}");
    assert!(!verdict.contains("about the same"), "{verdict}");
    // Each side's disturbance is said once, after the verdict, not under each workload.
    assert_eq!(out.matches("Disturbed: ").count(), 2, "{out}");
    assert!(
        out.contains("Disturbed: A was disturbed in 3 of 3 runs") && out.contains("B was disturbed in 3 of 3"),
        "{out}"
    );
    let json = envbench(&mine, &["compare", "--json", &sides[0], &sides[1]]);
    let document: Value = serde_json::from_slice(&json.stdout).unwrap();
    let workload = &document["verdicts"][0]["workloads"][0];
    assert_eq!(workload["decision"], "cannot_tell", "{workload}");
    assert!(workload["reason"].as_str().unwrap().contains("disagree by 2.00x"), "{workload}");
    let advice = &document["verdicts"][0]["advice"];
    assert!(advice.as_str().unwrap().contains("taskset"), "the sides' advice, once: {advice}");
}

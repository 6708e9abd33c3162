//! The real binary, end to end, against real store files.

use crate::common;
use common::{envbench, stderr, stdout};

use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    common::scratch("cli-tests", name)
}

#[test]
fn help_describes_each_command_by_its_own_words() {
    let dir = scratch("help");
    let output = envbench(&dir.join("results.db"), &["--help"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for (command, about) in [
        ("ranread", "Database random-read scaling sweep"),
        ("disk", "Storage suite"),
        ("fleet", "Run a workload on many hosts at once"),
        ("agent", "Take part in a fleet run"),
    ] {
        let line = text.lines().find(|l| l.trim_start().starts_with(command)).unwrap_or_default();
        assert!(line.contains(about), "{command}: {line}\n{text}");
    }
    assert!(!text.contains("How a run is named"), "{text}");
    let fleet = stdout(&envbench(&dir.join("results.db"), &["fleet", "--help"]));
    assert!(fleet.contains("ranread") && fleet.contains("Database random-read"), "{fleet}");
}

/// Options a DBA can guess: oltp's help grouped by heading, htap's own help (no SQLite default, no tpcb profile),
/// the aliases people try, and "did you mean" for suites, workloads and profiles.
#[test]
fn options_are_grouped_aliased_and_misspellings_suggested() {
    let dir = scratch("options");
    let store = dir.join("results.db");
    let oltp = stdout(&envbench(&store, &["oltp", "--help"]));
    let headings = ["Connection:", "Load:", "Run:", "HammerDB compatibility:", "Naming and output:"];
    let at: Vec<usize> = headings.iter().map(|h| oltp.find(h).unwrap_or_else(|| panic!("{h}\n{oltp}"))).collect();
    assert!(at.windows(2).all(|w| w[0] < w[1]), "{oltp}");
    let section = |text: &str, heading: &str| {
        let start = text.find(heading).unwrap();
        let rest = &text[start + heading.len()..];
        rest[..rest.find("\n\n").unwrap_or(rest.len())].to_string()
    };
    assert!(section(&oltp, "Connection:").contains("--target"), "{oltp}");
    assert!(section(&oltp, "HammerDB compatibility:").contains("--keying-thinking"), "{oltp}");
    assert!(section(&oltp, "Naming and output:").contains("--label"), "{oltp}");
    let tpch = stdout(&envbench(&store, &["tpch", "--help"]));
    assert!(section(&tpch, "Connection:").contains("--target") && section(&tpch, "Run:").contains("--users"), "{tpch}");
    assert!(tpch.contains("[aliases: --scale, --scale-factor]"), "{tpch}");
    let htap = stdout(&envbench(&store, &["htap", "--help"]));
    for absent in ["default: sqlite", "--profile", "tpcb", "--cross-check", "--transactions", "--max-users"] {
        assert!(!htap.contains(absent), "htap --help shows {absent}:\n{htap}");
    }
    assert!(htap.contains("--analytic-users") && htap.contains("(required)"), "{htap}");
    // Without --target, htap says why SQLite will not do, and what to give.
    let output = envbench(&store, &["htap"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("give --target postgres://"), "{}", stderr(&output));
    // An oltp option htap has no use for is refused, not ignored.
    let output = envbench(&store, &["htap", "--target", "postgres://postgres@127.0.0.1:5432/test", "--max-users", "8"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--max-users is oltp's"), "{}", stderr(&output));
    // tpch takes --scale as oltp does: the scale factor is checked, not refused as an unknown option.
    let output = envbench(&store, &["tpch", "--scale", "-1"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(stderr(&output).contains("--sf -1"), "{}", stderr(&output));
    for (args, expected) in [
        (&["run", "--suite", "quik"][..], "did you mean quick?"),
        (&["results", "list", "--workload", "olpt"], "did you mean oltp?"),
        (&["disk", "--profile", "cmd", "--dir", "."], "did you mean cdm"),
        (&["oltp", "--profile", "tpc-c"], "did you mean tpcc"),
    ] {
        let output = envbench(&store, args);
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        assert!(stderr(&output).contains(expected), "{args:?}: {}", stderr(&output));
    }
    assert!(!store.exists(), "no store is made for bad input");
}

#[test]
fn sysinfo_prints_every_group() {
    let dir = scratch("sysinfo");
    let output = envbench(&dir.join("results.db"), &["sysinfo", "--path", dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    for group in ["CPU", "Memory", "Operating system", "Virtualization", "Storage under", "Mount point", "SMT"] {
        assert!(text.contains(group), "missing {group} in:\n{text}");
    }
    assert!(!dir.join("results.db").exists(), "sysinfo without --save must not create a store");
}

#[test]
fn sysinfo_json_is_the_fingerprint() {
    let dir = scratch("sysinfo-json");
    let output = envbench(&dir.join("results.db"), &["sysinfo", "--json", "--path", dir.to_str().unwrap()]);
    assert!(output.status.success(), "{}", stderr(&output));
    let value: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(value["cpu"]["threads"].as_u64().unwrap() >= 1);
    assert_eq!(value["storage"]["path"], dir.canonicalize().unwrap().to_str().unwrap());
    assert!(value["storage"]["devices"].as_array().is_some());
}

#[test]
fn saved_fingerprint_run_is_listed_shown_and_exported() {
    let dir = scratch("save");
    let store = dir.join("results.db");
    let output = envbench(
        &store,
        &["sysinfo", "--save", "--label", "physical-p3605", "--tag", "ht=on", "--path", dir.to_str().unwrap()],
    );
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(stderr(&output).contains("saved as run"));

    let list = envbench(&store, &["results", "list"]);
    assert!(list.status.success(), "{}", stderr(&list));
    let text = stdout(&list);
    assert!(
        text.contains("sysinfo")
            && text.contains("complete")
            && text.contains("physical-p3605")
            && text.contains("ht=on"),
        "{text}"
    );

    let json = envbench(&store, &["results", "list", "--json", "--tag", "ht=on"]);
    let runs: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 1);
    let uuid = runs[0]["uuid"].as_str().unwrap().to_string();
    let none = envbench(&store, &["results", "list", "--json", "--tag", "ht=off"]);
    assert_eq!(serde_json::from_slice::<serde_json::Value>(&none.stdout).unwrap(), serde_json::json!([]));

    let show = envbench(&store, &["results", "show", &uuid[..6]]);
    assert!(show.status.success(), "{}", stderr(&show));
    assert!(stdout(&show).contains(&uuid) && stdout(&show).contains("Storage under"));

    let export = envbench(&store, &["results", "export", "--format", "csv"]);
    assert!(export.status.success(), "{}", stderr(&export));
    assert!(stdout(&export).starts_with("run,label,tags,started_at,status,host,environment,workload"));
}

#[test]
fn export_writes_every_format() {
    let dir = scratch("export");
    let store = dir.join("results.db");
    assert!(envbench(&store, &["sysinfo", "--save", "--path", dir.to_str().unwrap()]).status.success());
    for format in ["csv", "tsv", "json"] {
        let file = dir.join(format!("out.{format}"));
        let output = envbench(&store, &["results", "export", "--format", format, "-o", file.to_str().unwrap()]);
        assert!(output.status.success(), "{}", stderr(&output));
        assert!(file.exists());
    }
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(json, serde_json::json!([]), "a fingerprint-only run has no samples");
    let tsv = std::fs::read_to_string(dir.join("out.tsv")).unwrap();
    assert_eq!(tsv.lines().next().unwrap().split('\t').count(), 18);
}

#[test]
fn bad_input_gets_clear_errors_and_exit_codes() {
    let dir = scratch("bad-input");
    let store = dir.join("results.db");
    let cases: &[(&[&str], i32, &str)] = &[
        (&["sysinfo", "--path", "/no/such/envbench/dir"], 2, "no such file or directory"),
        (&["sysinfo", "--tag", "novalue"], 2, "is not a tag"),
        (&["sysinfo", "--tag", "a=1", "--tag", "a=2"], 2, "given twice"),
        (&["results", "list"], 1, "no results store yet"),
        (&["results", "export", "--format", "xml"], 2, "invalid value"),
        (&["frobnicate"], 2, "unrecognized subcommand"),
    ];
    for (args, code, message) in cases {
        let output = envbench(&store, args);
        assert_eq!(output.status.code(), Some(*code), "{args:?}: {}", stderr(&output));
        assert!(stderr(&output).contains(message), "{args:?}: {}", stderr(&output));
        assert!(!stderr(&output).contains("panicked"), "{args:?}");
    }
    assert!(envbench(&store, &["sysinfo", "--save"]).status.success());
    let output = envbench(&store, &["results", "show", "ffffffff"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("no run matches 'ffffffff'"));
}

#[test]
fn foreign_store_is_refused_and_untouched() {
    let dir = scratch("foreign");
    let store = dir.join("notes.txt");
    std::fs::write(&store, "my precious notes\n".repeat(500)).unwrap();
    let output = envbench(&store, &["sysinfo", "--save"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(stderr(&output).contains("not an envbench results store"), "{}", stderr(&output));
    assert_eq!(std::fs::read_to_string(&store).unwrap(), "my precious notes\n".repeat(500));
}

#[test]
fn two_processes_write_one_store() {
    let dir = scratch("concurrent");
    let store = dir.join("results.db");
    let children: Vec<_> = (0..2)
        .map(|writer| {
            let store = store.clone();
            std::thread::spawn(move || {
                for i in 0..6 {
                    let label = format!("writer{writer}-{i}");
                    let output = envbench(&store, &["sysinfo", "--save", "--label", &label]);
                    assert!(output.status.success(), "{}", stderr(&output));
                }
            })
        })
        .collect();
    for child in children {
        child.join().unwrap();
    }
    let list = envbench(&store, &["results", "list", "--json"]);
    let runs: serde_json::Value = serde_json::from_slice(&list.stdout).unwrap();
    assert_eq!(runs.as_array().unwrap().len(), 12);
}

/// A root that is not a mount (a debootstrap chroot with /proc and /sys mounted, issue #70 item 2): its mountinfo
/// lists no mount above the data directory, and `sysinfo` and a workload still run, the fingerprint naming what it
/// could not read. Run as root (as CI does): a private mount namespace holds the chroot's mounts.
#[test]
fn a_chroot_whose_root_is_not_a_mount_is_fingerprinted_and_runs() {
    let root = scratch("chroot").join("root");
    let binary = std::path::Path::new(env!("CARGO_BIN_EXE_envbench"));
    // The binary and the shared libraries it links, at their own paths inside the root.
    let ldd = std::process::Command::new("ldd").arg(binary).output().expect("ldd runs");
    let mut files = vec![binary.to_path_buf()];
    for word in stdout(&ldd).split_whitespace().filter(|w| w.starts_with('/')) {
        files.push(PathBuf::from(word));
    }
    for file in &files {
        let inside = root.join(file.strip_prefix("/").unwrap());
        std::fs::create_dir_all(inside.parent().unwrap()).unwrap();
        // The file itself, not a symbolic link to a path outside the root (/lib64/ld-linux-x86-64.so.2).
        let real = std::fs::canonicalize(file).unwrap();
        if std::fs::hard_link(&real, &inside).is_err() {
            std::fs::copy(&real, &inside).unwrap();
        }
    }
    for dir in ["proc", "sys", "work", "tmp"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    let r = root.to_str().unwrap();
    let inside = binary.to_str().unwrap();
    let script = format!(
        "set -e; mount -t proc proc {r}/proc; mount --rbind /sys {r}/sys; \
         chroot {r} {inside} sysinfo --path /work; \
         chroot {r} {inside} oltp --dir /work --users 1 --ramp 0s --duration 1s --label chrooted"
    );
    let output = std::process::Command::new("unshare")
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .env("ENVBENCH_STORE", "/work/results.db")
        .env("HOME", "/work")
        .output()
        .expect("unshare runs (util-linux)");
    let (out, err) = (stdout(&output), stderr(&output));
    assert!(output.status.success(), "the test needs root for unshare --mount: {out}\n{err}");
    assert!(out.contains("Not readable here: ") && out.contains("no mount covers /work"), "{out}\n{err}");
    let listed = common::runs(&root.join("work/results.db"));
    assert_eq!((listed[0]["label"].as_str(), listed[0]["status"].as_str()), (Some("chrooted"), Some("complete")));
}

/// Issue #70, item 5: bench/package.sh on this build's binary (stripped, as bench/dist.sh strips it) makes a `.deb`
/// holding the docs, a man page for envbench and each command, completions for bash, zsh and fish, the licences and
/// the linked crates' licences; its man page renders with `man -l`; the package README's links all resolve inside it;
/// and `--version` names the commit and the build's profile.
#[test]
fn the_package_holds_its_docs_man_pages_and_completions() {
    let dir = scratch("package");
    let binary = dir.join("envbench");
    let strip = std::process::Command::new("strip")
        .args(["--strip-all", "-o"])
        .arg(&binary)
        .arg(env!("CARGO_BIN_EXE_envbench"))
        .status()
        .expect("strip runs (binutils)");
    assert!(strip.success());
    let out = dir.join("out");
    let packaged = std::process::Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../../bench/package.sh"))
        .arg(&binary)
        .arg(&out)
        .env("DEB_COMPRESSION", "none")
        .output()
        .unwrap();
    assert!(packaged.status.success(), "{}\n{}", stdout(&packaged), stderr(&packaged));
    let deb = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .expect("a .deb");
    let listed = std::process::Command::new("dpkg-deb").arg("-c").arg(&deb).output().unwrap();
    let listed = stdout(&listed);
    for file in [
        "./usr/bin/envbench",
        "./usr/share/man/man1/envbench.1.gz",
        "./usr/share/man/man1/envbench-oltp.1.gz",
        "./usr/share/man/man1/envbench-replay-inspect.1.gz",
        "./usr/share/doc/envbench/README.md",
        "./usr/share/doc/envbench/copyright",
        "./usr/share/doc/envbench/THIRD-PARTY.txt",
        "./usr/share/doc/envbench/docs/compare.md",
        "./usr/share/doc/envbench/docs/img/report.png",
        "./usr/share/doc/envbench/examples/",
        "./usr/share/bash-completion/completions/envbench",
        "./usr/share/zsh/vendor-completions/_envbench",
        "./usr/share/fish/vendor_completions.d/envbench.fish",
    ] {
        assert!(listed.lines().any(|l| l.ends_with(file)), "{file} is not in the .deb:\n{listed}");
    }
    let root = dir.join("root");
    assert!(std::process::Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&root).status().unwrap().success());
    let page = std::process::Command::new("man")
        .args(["-P", "cat", "-l"])
        .arg(root.join("usr/share/man/man1/envbench-oltp.1.gz"))
        .env("MANWIDTH", "100")
        .output()
        .expect("man runs (man-db)");
    let text = stdout(&page);
    assert!(page.status.success() && text.contains("--warehouses") && text.contains("envbench-oltp"), "{text}");
    // Every document the package README links to is in the package, beside it.
    let doc = root.join("usr/share/doc/envbench");
    let readme = std::fs::read_to_string(doc.join("README.md")).unwrap();
    let links: Vec<&str> = readme.split("](").skip(1).map(|rest| rest.split([')', '#']).next().unwrap()).collect();
    assert!(links.len() >= 10, "{links:?}");
    for link in links {
        assert!(doc.join(link).is_file(), "the package README links {link}, which the package does not hold");
    }
    assert!(readme.contains("envbench run --label"), "it starts from the installed binary");
    let third = std::fs::read_to_string(doc.join("THIRD-PARTY.txt")).unwrap();
    assert!(third.contains("datafusion ") && third.contains("MIT"), "{third}");
    // The bash completion loads and completes envbench's commands.
    let completion = root.join("usr/share/bash-completion/completions/envbench");
    let script = format!("source {}; complete -p envbench", completion.display());
    let loaded = std::process::Command::new("bash").args(["-c", &script]).output().unwrap();
    assert!(loaded.status.success() && stdout(&loaded).contains("envbench"), "{}", stderr(&loaded));
    // The tarball's folder holds the same beside the binary.
    let folder = std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().path()).find(|p| p.is_dir()).unwrap();
    for file in
        ["envbench", "README.md", "THIRD-PARTY.txt", "docs/replay.md", "man/envbench.1.gz", "completions/_envbench"]
    {
        assert!(folder.join(file).exists(), "{file} is not in the tarball's folder");
    }

    let version = envbench(&dir.join("results.db"), &["--version"]);
    let version = stdout(&version);
    assert!(version.starts_with("envbench 0.") && version.contains(", dev build)"), "{version}");
    // A directory with anything in it is never written into.
    let used = dir.join("used");
    std::fs::create_dir_all(&used).unwrap();
    std::fs::write(used.join("mine.1"), "mine").unwrap();
    let refused = envbench(&dir.join("results.db"), &["manpages", used.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert_eq!(std::fs::read_to_string(used.join("mine.1")).unwrap(), "mine");
}

/// Issue #70, item 6: on a terminal (a pty made by `script`), the live progress line is ended before the results, so
/// "checking consistency" never runs into the result table.
#[test]
fn on_a_terminal_the_progress_line_ends_before_the_results() {
    let dir = scratch("terminal");
    // What a terminal shows of `envbench ARGS` (with --dir): script(1) gives it one.
    let on_a_terminal = |args: &str| {
        let line = format!("{} {args} --dir {}", env!("CARGO_BIN_EXE_envbench"), dir.to_str().unwrap());
        let output = std::process::Command::new("script")
            .args(["-qefc", &line, "/dev/null"])
            .env("ENVBENCH_STORE", dir.join("results.db"))
            .output()
            .expect("script runs (util-linux)");
        let text = stdout(&output);
        assert!(output.status.success(), "{text}\n{}", stderr(&output));
        text
    };
    let text = on_a_terminal("oltp --users 1 --ramp 0s --duration 1s");
    let at = text.find("checking consistency").unwrap_or_else(|| panic!("the live line was drawn: {text:?}"));
    let after = &text[at + "checking consistency".len()..];
    assert!(after.starts_with("\r\x1b[2K"), "the live line is cleared before what follows: {after:?}");
    assert!(text.contains("OLTP tpcc") && !text.contains("consistencyOLTP"), "{text:?}");
    // The disk test's fill draws a bar with the time so far (item 6).
    let text =
        on_a_terminal("disk --size 16m --runs 1 --duration 200ms --interval 0s --no-warmup --test rnd:4k:q1:t1:read");
    assert!(text.contains("filling with incompressible data [--------------------]   0%, 0 s so far"), "{text:?}");
}

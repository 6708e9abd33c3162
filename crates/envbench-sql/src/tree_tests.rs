//! Tests of the whole tree's sources for what differs between servers (issues #56 and #68): no dialect compared
//! outside this crate, no `match` on a server with a wildcard arm, and a new server at most two files beyond its own.

/// The Rust files of the workspace's crates but this one, with their text: `tests/` folders and fixture trees
/// too when `with_tests`, and otherwise only the code before a file's `#[cfg(test)]` module.
fn workspace_sources(with_tests: bool) -> Vec<(std::path::PathBuf, String)> {
    sources(with_tests, false)
}

/// Every `.rs` file of the workspace's crates (this one's too with `with_own`), its tests cut off unless
/// `with_tests` (this file, all tests, left out).
fn sources(with_tests: bool, with_own: bool) -> Vec<(std::path::PathBuf, String)> {
    let crates = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut sources = Vec::new();
    let mut folders = vec![crates.clone()];
    while let Some(folder) = folders.pop() {
        for entry in std::fs::read_dir(&folder).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if path.is_dir() {
                let own = path == crates.join("envbench-sql") && !with_own;
                let test_only = name == "tests" || name == "benches" || name == "fixtures";
                if !own && !name.starts_with('.') && name != "target" && (with_tests || !test_only) {
                    folders.push(path);
                }
            } else if name.ends_with(".rs") && (with_tests || name != "tree_tests.rs") {
                let mut text = std::fs::read_to_string(&path).unwrap();
                if !with_tests {
                    text.truncate(text.find("#[cfg(test)]").unwrap_or(text.len()));
                }
                sources.push((path, text));
            }
        }
    }
    sources.sort();
    sources
}

/// The enums that name a server (or a kind of target), whose every `match` must list each one.
const SERVER_ENUMS: [&str; 4] = ["Dialect::", "MySqlFlavour::", "TargetKind::", "TargetSpec::"];

/// The `match`es of `text` whose arms name one of [`SERVER_ENUMS`] beside a wildcard arm (`_ =>`), by the line
/// of the `match`: a new server would take that arm without a word from the compiler. A `match` is a line with
/// `match ` that ends in `{`; an arm is a line one level inside it with `=>`; braces are counted outside string
/// literals, character literals and comments.
fn silent_branches(text: &str) -> Vec<usize> {
    struct Block {
        match_line: Option<usize>,
        server_arm: bool,
        wildcard: bool,
    }
    let mut stack: Vec<Block> = Vec::new();
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if let Some(block) = stack.last_mut()
            && block.match_line.is_some()
            && let Some((pattern, _)) = code.split_once("=>")
        {
            let pattern = pattern.trim();
            block.server_arm |= SERVER_ENUMS.iter().any(|e| pattern.contains(e));
            block.wildcard |= pattern == "_" || pattern.starts_with("_ if ");
        }
        let opens_match = code.contains("match ") && code.trim_end().ends_with('{');
        let last_brace = code.rfind('{');
        let (mut in_string, mut escaped, mut previous) = (false, false, ' ');
        for (at, c) in code.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_string => escaped = true,
                '"' => in_string = !in_string,
                '{' if !in_string && previous != '\'' => {
                    let is_match = opens_match && Some(at) == last_brace;
                    stack.push(Block {
                        match_line: is_match.then_some(number + 1),
                        server_arm: false,
                        wildcard: false,
                    });
                }
                '}' if !in_string && previous != '\'' => {
                    if let Some(Block { match_line: Some(line), server_arm: true, wildcard: true }) = stack.pop() {
                        found.push(line);
                    }
                }
                _ => {}
            }
            previous = c;
        }
    }
    found
}

/// Where `line` compares a value of one of [`SERVER_ENUMS`] with `==` or `!=` (`x == MySqlFlavour::MariaDb`,
/// `MySqlFlavour::MariaDb != x`).
fn compares_a_server(line: &str) -> bool {
    let compact: String = line.split("//").next().unwrap_or("").split_whitespace().collect();
    SERVER_ENUMS.iter().any(|e| {
        ["==", "!="].iter().any(|op| {
            compact.contains(&format!("{op}{e}"))
                || compact.match_indices(e).any(|(at, _)| {
                    let rest = &compact[at + e.len()..];
                    let name = rest.find(|c: char| !c.is_alphanumeric() && c != '_').unwrap_or(rest.len());
                    rest[name..].starts_with(op)
                })
        })
    })
}

/// No `match` on a server enum anywhere in the tree, tests too, takes a wildcard arm, and none is compared with
/// `==` or `!=`: a new server must be listed by the compiler at every place that decides by server (issue #68).
#[test]
fn no_match_on_a_server_has_a_silent_branch() {
    let mut found = Vec::new();
    for (path, text) in sources(true, true) {
        for line in silent_branches(&text) {
            found.push(format!("{}:{line}: a `_ =>` arm in a match on a server", path.display()));
        }
        for (number, line) in text.lines().enumerate() {
            if compares_a_server(line) {
                found.push(format!("{}:{}: {}", path.display(), number + 1, line.trim()));
            }
        }
    }
    assert!(found.is_empty(), "name every server in its arm instead:\n{}", found.join("\n"));
    // The scanners see what they look for, and only that.
    let silent = "fn f(d: Dialect) {\n    match d {\n        Dialect::Postgres => 1,\n        _ => 2,\n    };\n}\n";
    assert_eq!(silent_branches(silent), [2]);
    let listed = "fn f(d: Dialect) {\n    match d {\n        Dialect::Postgres => { 1 }\n        Dialect::MySql | Dialect::Sqlite => 2,\n    };\n}\n";
    assert!(silent_branches(listed).is_empty());
    let other = "fn f(d: u8) {\n    match d {\n        1 => '{',\n        _ => '}',\n    };\n}\n";
    assert!(silent_branches(other).is_empty());
    // (Split, so that this file does not compare a server itself.)
    assert!(compares_a_server(concat!("if self != MySqlFlavour", "::MariaDb {")));
    assert!(compares_a_server(concat!("let mariadb = MySqlFlavour", "::MariaDb == self;")));
    assert!(!compares_a_server("MySqlFlavour::MariaDb => true,"));
}

/// What differs between databases lives in [`super::DialectOps`]: no source outside this crate asks whether a
/// dialect equals another (a `match` is fine: the compiler finds its missing arm for a new dialect; an `==` takes
/// the wrong branch quietly). Issue #56.
#[test]
fn no_dialect_is_compared_outside_this_crate() {
    let variants = ["Dialect::Sqlite", "Dialect::Postgres", "Dialect::MySql"];
    let mut found = Vec::new();
    for (path, text) in workspace_sources(true) {
        for (number, line) in text.lines().enumerate() {
            let compact: String = line.split_whitespace().collect();
            // `x == Dialect::A`, `x != envbench_sql::Dialect::A`, `Dialect::A == x`, `matches!(x, Dialect::A)`:
            // the operand next to the operator, a path, names a dialect.
            let path_char = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
            let compared = ["==", "!="].iter().any(|op| {
                compact.match_indices(op).any(|(at, _)| {
                    let (left, right) = (&compact[..at], &compact[at + 2..]);
                    let after = &right[..right.find(|c: char| !path_char(c)).unwrap_or(right.len())];
                    let before = &left[left.rfind(|c: char| !path_char(c)).map_or(0, |i| i + 1)..];
                    after.contains("Dialect::") || before.contains("Dialect::")
                })
            }) || compact.contains("matches!(") && variants.iter().any(|d| compact.contains(d));
            if compared {
                found.push(format!("{}:{}: {}", path.display(), number + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "read a capability of Dialect::ops() instead of comparing dialects:\n{}",
        found.join("\n")
    );
}

/// The files a new database server touches beyond its own (its connection file, its row in `dialect.rs`, its
/// oltp routine file and its CI server): those whose code (not their tests) names a dialect, each a `match` the
/// compiler lists for the new variant. In this crate only the row's file and the connection files may name a
/// server; the results store's two backends are not a workload target, so a new server need not touch them.
/// `docs/development.md` lists the files ("Adding a database target").
#[test]
fn a_new_server_touches_at_most_two_files_beyond_its_own() {
    let servers = ["Dialect::Postgres", "Dialect::MySql"];
    let own = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../envbench-sql/src");
    let (mut here, mut elsewhere) = (Vec::new(), Vec::new());
    for (path, text) in sources(false, true) {
        if path.components().any(|c| c.as_os_str() == "envbench-store") || !servers.iter().any(|d| text.contains(d)) {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        if path.starts_with(&own) {
            if name != "dialect.rs" && !name.ends_with("_connection.rs") {
                here.push(path.display().to_string());
            }
        } else {
            elsewhere.push(path.display().to_string());
        }
    }
    assert!(
        here.is_empty(),
        "in envbench-sql only dialect.rs and the connection files name a server:\n{}",
        here.join("\n")
    );
    assert!(elsewhere.len() <= 2, "{} files name a server (at most 2):\n{}", elsewhere.len(), elsewhere.join("\n"));
}

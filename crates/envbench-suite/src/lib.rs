//! Suites: a whole methodology in one file.
//!
//! A suite names workloads with their parameters and a matrix of values to sweep (`cube.calc_threads = [8, 16, 32]`,
//! `disk.profile = ["cdm", "db"]`); this crate parses it (TOML, with line numbers in every error), expands the matrix
//! and the repetitions into an ordered list of runs, and turns each run's parameters into the workload command's own
//! arguments, so every option is checked by the command that owns it. It runs nothing: the binary executes the list,
//! one stored run per item. The built-in suites are made of the workloads' own tables (`Registry::builtin_suite`).

use std::collections::BTreeMap;
use toml_edit::{Document, Item, Table, Value};

/// The most runs one suite may expand into: a matrix is refused before it is expanded, not after an hour.
pub const MAX_RUNS: usize = 10_000;

/// Parameters that a command takes several times (`--test a --test b`); other lists become `a,b,c`.
const REPEATED_OPTIONS: &[&str] = &["test", "tag", "step"];

/// What is wrong with a suite file; always with the line.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SuiteError {
    #[error("{file}: {message}")]
    Syntax { file: String, message: String },
    #[error("{file} line {line}: {message}")]
    Invalid { file: String, line: usize, message: String },
}

/// A parsed and expanded suite.
#[derive(Clone, Debug, PartialEq)]
pub struct Suite {
    pub name: String,
    pub repetitions: u32,
    /// Every run, in order.
    pub items: Vec<SuiteItem>,
}

impl Suite {
    /// A short fingerprint of the expanded plan: a resumed suite must be the same plan.
    pub fn plan_hash(&self) -> String {
        let text: Vec<String> = self.items.iter().map(|i| format!("{}|{}", i.workload, i.args.join(" "))).collect();
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for byte in text.join("\n").bytes() {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
        format!("{hash:016x}")
    }
}

/// One run of a suite.
#[derive(Clone, Debug, PartialEq)]
pub struct SuiteItem {
    /// Position in the plan, from 1.
    pub index: usize,
    pub workload: String,
    /// The workload command's arguments, e.g. `["--profile", "db", "--quick"]`.
    pub args: Vec<String>,
    /// The matrix values this run takes, e.g. `calc_threads=16`; they become tags of the run.
    pub matrix: BTreeMap<String, String>,
    /// Repetition of the whole plan, from 1.
    pub repetition: u32,
    /// Where the workload's table starts in the file.
    pub line: usize,
}

/// Parse a suite. `file` names it in errors; `known` lists the workloads this build can run.
pub fn parse_suite(text: &str, file: &str, known: &[&str]) -> Result<Suite, SuiteError> {
    let document = Document::parse(text)
        .map_err(|e| SuiteError::Syntax { file: file.to_string(), message: e.to_string().trim().to_string() })?;
    let line_of = |span: Option<std::ops::Range<usize>>| span.map_or(1, |s| text[..s.start].matches('\n').count() + 1);
    let invalid = |line: usize, message: String| SuiteError::Invalid { file: file.to_string(), line, message };
    let root = document.as_table();

    let mut name = file.rsplit('/').next().unwrap_or(file).trim_end_matches(".toml").to_string();
    let mut repetitions = 1;
    if let Some((key, item)) = root.get_key_value("suite") {
        let table = item.as_table().ok_or_else(|| invalid(line_of(key.span()), "[suite] must be a table".into()))?;
        for (key, value) in table.iter() {
            let (k, _) = table.get_key_value(key).expect("iterated key exists");
            let line = line_of(k.span());
            match key {
                "name" => {
                    name = value
                        .as_str()
                        .filter(|s| !s.trim().is_empty())
                        .ok_or_else(|| invalid(line, "suite.name must be a non-empty string".into()))?
                        .to_string()
                }
                "repetitions" => {
                    repetitions = value.as_integer().filter(|n| (1..=1000).contains(n)).ok_or_else(|| {
                        invalid(line, "suite.repetitions must be a whole number from 1 to 1000".into())
                    })? as u32
                }
                other => {
                    return Err(invalid(
                        line,
                        format!("unknown setting suite.{other}: the [suite] table takes name and repetitions"),
                    ));
                }
            }
        }
    }

    // Workload tables (or arrays of tables, for several instances), in file order.
    let mut workloads: Vec<(String, &Table, usize)> = Vec::new();
    for (key, item) in root.iter() {
        if key == "suite" || key == "matrix" {
            continue;
        }
        let (k, _) = root.get_key_value(key).expect("iterated key exists");
        let line = line_of(k.span());
        if !known.contains(&key) {
            return Err(invalid(line, format!("unknown workload '{key}'; a suite can run {}", known.join(", "))));
        }
        match item {
            Item::Table(table) => workloads.push((key.to_string(), table, line_of(table.span()).max(line))),
            Item::ArrayOfTables(array) => {
                for table in array.iter() {
                    workloads.push((key.to_string(), table, line_of(table.span()).max(line)));
                }
            }
            _ => {
                return Err(invalid(line, format!("{key} must be a table: write [{key}] and its parameters below it")));
            }
        }
    }
    if workloads.is_empty() {
        return Err(invalid(
            1,
            format!("the suite runs nothing: add a table for at least one of {}", known.join(", ")),
        ));
    }

    // The matrix: matrix.<workload>.<parameter> = [values].
    let mut matrix: BTreeMap<String, Vec<(String, Vec<String>, usize)>> = BTreeMap::new();
    if let Some((key, item)) = root.get_key_value("matrix") {
        let table =
            item.as_table_like().ok_or_else(|| invalid(line_of(key.span()), "[matrix] must be a table".into()))?;
        for (workload, parameters) in table.iter() {
            let line = line_of(parameters.span().or(key.span()));
            if !workloads.iter().any(|(w, _, _)| w == workload) {
                return Err(invalid(
                    line,
                    format!("the matrix sweeps {workload}, which the suite does not run: add a [{workload}] table"),
                ));
            }
            let parameters = parameters.as_table_like().ok_or_else(|| {
                invalid(
                    line,
                    format!("matrix.{workload} must list parameters, e.g. matrix.{workload}.threads = [1, 2]"),
                )
            })?;
            for (parameter, values) in parameters.iter() {
                let line = line_of(values.span()).max(line);
                let array = values.as_array().ok_or_else(|| {
                    invalid(line, format!("matrix.{workload}.{parameter} must be a list of values, e.g. [8, 16, 32]"))
                })?;
                if array.is_empty() {
                    return Err(invalid(
                        line,
                        format!("matrix.{workload}.{parameter} is empty; give at least one value"),
                    ));
                }
                let rendered = array
                    .iter()
                    .map(|v| {
                        scalar(v).ok_or_else(|| {
                            invalid(
                                line,
                                format!("matrix.{workload}.{parameter} may hold only strings, numbers and booleans"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                matrix.entry(workload.to_string()).or_default().push((parameter.to_string(), rendered, line));
            }
        }
    }

    // Count before expanding: a 1000 x 1000 matrix must be refused at once.
    let runs = workloads
        .iter()
        .map(|(workload, _, _)| {
            matrix.get(workload).map_or(1usize, |sweeps| {
                sweeps.iter().fold(1usize, |count, (_, values, _)| count.saturating_mul(values.len()))
            })
        })
        .fold(0usize, usize::saturating_add)
        .saturating_mul(repetitions as usize);
    if runs > MAX_RUNS {
        let line = root.get_key_value("matrix").map_or(1, |(key, _)| line_of(key.span()));
        return Err(invalid(
            line,
            format!(
                "the suite expands into {} runs, more than {MAX_RUNS}; sweep fewer values or split it into several suites",
                if runs == usize::MAX { "more than 10^19".to_string() } else { runs.to_string() }
            ),
        ));
    }

    let mut plan: Vec<SuiteItem> = Vec::new();
    for (workload, table, line) in &workloads {
        let base = parameters(table, workload, *line, &line_of, &invalid)?;
        let sweeps = matrix.get(workload).cloned().unwrap_or_default();
        for combination in combinations(&sweeps) {
            let mut values = base.clone();
            for (parameter, value) in &combination {
                values.retain(|(k, _)| k != parameter);
                values.push((parameter.clone(), Rendered::Single(value.clone())));
            }
            plan.push(SuiteItem {
                index: 0,
                workload: workload.clone(),
                args: arguments(&values),
                matrix: combination.into_iter().collect(),
                repetition: 1,
                line: *line,
            });
        }
    }
    let mut items = Vec::with_capacity(plan.len() * repetitions as usize);
    for repetition in 1..=repetitions {
        for item in &plan {
            items.push(SuiteItem { index: items.len() + 1, repetition, ..item.clone() });
        }
    }
    Ok(Suite { name, repetitions, items })
}

/// A parameter value as arguments will carry it.
#[derive(Clone, Debug, PartialEq)]
enum Rendered {
    Flag(bool),
    Single(String),
    List(Vec<String>),
}

fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.value().clone()),
        Value::Integer(i) => Some(i.value().to_string()),
        Value::Float(f) => Some(f.value().to_string()),
        Value::Boolean(b) => Some(b.value().to_string()),
        _ => None,
    }
}

type Invalid<'a> = dyn Fn(usize, String) -> SuiteError + 'a;

fn parameters(
    table: &Table,
    workload: &str,
    table_line: usize,
    line_of: &dyn Fn(Option<std::ops::Range<usize>>) -> usize,
    invalid: &Invalid,
) -> Result<Vec<(String, Rendered)>, SuiteError> {
    let mut values = Vec::new();
    for (key, item) in table.iter() {
        let (k, _) = table.get_key_value(key).expect("iterated key exists");
        let line = line_of(k.span()).max(table_line);
        let value = item.as_value().ok_or_else(|| {
            invalid(line, format!("{workload}.{key} must be a value (a string, number, boolean or list), not a table"))
        })?;
        let rendered = match value {
            Value::Boolean(b) => Rendered::Flag(*b.value()),
            Value::Array(array) => Rendered::List(
                array
                    .iter()
                    .map(|v| {
                        scalar(v)
                            .ok_or_else(|| invalid(line, format!("{workload}.{key} may list only strings and numbers")))
                    })
                    .collect::<Result<_, _>>()?,
            ),
            other => {
                Rendered::Single(scalar(other).ok_or_else(|| {
                    invalid(line, format!("{workload}.{key} must be a string, number, boolean or list"))
                })?)
            }
        };
        values.push((key.to_string(), rendered));
    }
    Ok(values)
}

/// Every combination of the swept values (one empty combination when nothing is swept).
fn combinations(sweeps: &[(String, Vec<String>, usize)]) -> Vec<Vec<(String, String)>> {
    let mut all: Vec<Vec<(String, String)>> = vec![Vec::new()];
    for (parameter, values, _) in sweeps {
        all = all
            .into_iter()
            .flat_map(|combination| {
                values.iter().map(move |value| {
                    let mut next = combination.clone();
                    next.push((parameter.clone(), value.clone()));
                    next
                })
            })
            .collect();
    }
    all
}

fn arguments(values: &[(String, Rendered)]) -> Vec<String> {
    let mut args = Vec::new();
    for (key, value) in values {
        let option = format!("--{}", key.replace('_', "-"));
        match value {
            Rendered::Flag(true) => args.push(option),
            // "true"/"false" from a matrix sweep of a flag.
            Rendered::Single(text) if text == "true" => args.push(option),
            Rendered::Flag(false) => {}
            Rendered::Single(text) if text == "false" => {}
            Rendered::Single(text) => args.extend([option, text.clone()]),
            Rendered::List(items) if REPEATED_OPTIONS.contains(&key.as_str()) => {
                for item in items {
                    args.extend([option.clone(), item.clone()]);
                }
            }
            Rendered::List(items) => args.extend([option, items.join(",")]),
        }
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workloads a build of envbench registers.
    const KNOWN: &[&str] = &["sysinfo", "disk", "ranread", "cube", "oltp", "tpch", "exec"];

    fn items(text: &str) -> Vec<(String, Vec<String>)> {
        parse_suite(text, "s.toml", KNOWN).unwrap().items.into_iter().map(|i| (i.workload, i.args)).collect()
    }

    fn error(text: &str) -> String {
        parse_suite(text, "s.toml", KNOWN).unwrap_err().to_string()
    }

    #[test]
    fn parameters_become_the_commands_arguments() {
        let text = "[disk]\nprofile = \"db\"\nquick = true\nbuffered = false\nruns = 2\ntest = [\"rnd:8k:q1:t1:read\", \"seq:1m:q8:t1:read\"]\n\
                    [cube]\ncalc_threads = [1, 2, 4]\nscale = 0.1\n";
        assert_eq!(
            items(text),
            vec![
                (
                    "disk".to_string(),
                    [
                        "--profile",
                        "db",
                        "--quick",
                        "--runs",
                        "2",
                        "--test",
                        "rnd:8k:q1:t1:read",
                        "--test",
                        "seq:1m:q8:t1:read"
                    ]
                    .map(String::from)
                    .to_vec()
                ),
                ("cube".to_string(), ["--calc-threads", "1,2,4", "--scale", "0.1"].map(String::from).to_vec()),
            ]
        );
    }

    #[test]
    fn matrix_expands_per_workload_and_repetitions_repeat_the_plan() {
        let text = "[suite]\nname = \"hosts\"\nrepetitions = 2\n[disk]\nquick = true\n[cube]\nscale = 0.1\n\
                    [matrix]\ncube.calc_threads = [8, 16, 32]\ndisk.profile = [\"cdm\", \"db\"]\n";
        let suite = parse_suite(text, "s.toml", KNOWN).unwrap();
        assert_eq!(suite.name, "hosts");
        assert_eq!(suite.items.len(), 2 * (2 + 3));
        let first: Vec<String> =
            suite.items[..5].iter().map(|i| format!("{} {}", i.workload, i.args.join(" "))).collect();
        assert_eq!(
            first,
            vec![
                "disk --quick --profile cdm",
                "disk --quick --profile db",
                "cube --scale 0.1 --calc-threads 8",
                "cube --scale 0.1 --calc-threads 16",
                "cube --scale 0.1 --calc-threads 32",
            ]
        );
        assert_eq!(suite.items[2].matrix.get("calc_threads").map(String::as_str), Some("8"));
        assert_eq!((suite.items[5].repetition, suite.items[5].index), (2, 6));
        assert_eq!(suite.items[5].args, suite.items[0].args);
    }

    #[test]
    fn several_instances_of_a_workload() {
        let text = "[[exec]]\nname = \"a\"\nstep = [\"x=true\"]\n[[exec]]\nname = \"b\"\nstep = [\"y=true\"]\n";
        assert_eq!(items(text).len(), 2);
    }

    #[test]
    fn bad_files_say_where() {
        assert_eq!(
            error("[disk]\nquick = true\n\n[diks]\n"),
            "s.toml line 4: unknown workload 'diks'; a suite can run sysinfo, disk, ranread, cube, oltp, tpch, exec"
        );
        assert_eq!(
            error("[suite]\nrepetitions = \"three\"\n[disk]\n"),
            "s.toml line 2: suite.repetitions must be a whole number from 1 to 1000"
        );
        assert_eq!(
            error("[cube]\nscale = 0.1\n[matrix]\ncube.calc_threads = []\n"),
            "s.toml line 4: matrix.cube.calc_threads is empty; give at least one value"
        );
        assert_eq!(
            error("[cube]\n[matrix]\ndisk.profile = [\"db\"]\n"),
            "s.toml line 3: the matrix sweeps disk, which the suite does not run: add a [disk] table"
        );
        assert_eq!(
            error("[cube]\nopts = { a = 1 }\n"),
            "s.toml line 2: cube.opts must be a string, number, boolean or list"
        );
        assert_eq!(
            error("[suite]\nname = \"x\"\n"),
            "s.toml line 1: the suite runs nothing: add a table for at least one of sysinfo, disk, ranread, cube, oltp, tpch, exec"
        );
        assert!(error("[disk\n").starts_with("s.toml: "), "{}", error("[disk\n"));
        assert!(error("[disk\n").contains("line 1"));
    }

    #[test]
    fn plan_hash_follows_the_plan() {
        let a = parse_suite("[disk]\nquick = true\n", "s", KNOWN).unwrap();
        let b = parse_suite("[disk]\nquick = true\n", "s", KNOWN).unwrap();
        let c = parse_suite("[disk]\nquick = false\n", "s", KNOWN).unwrap();
        assert_eq!(a.plan_hash(), b.plan_hash());
        assert_ne!(a.plan_hash(), c.plan_hash());
    }

    #[test]
    fn a_huge_matrix_is_refused_before_it_is_expanded() {
        let values: Vec<String> = (1..=1000).map(|i| i.to_string()).collect();
        let text = format!(
            "[cube]\nscale = 0.1\n\n[matrix]\ncube.calc_threads = [{0}]\ncube.load_threads = [{0}]\n",
            values.join(", ")
        );
        let error = parse_suite(&text, "s.toml", KNOWN).unwrap_err().to_string();
        assert!(error.contains("1000000 runs, more than 10000"), "{error}");
        assert!(error.contains("line 4"), "{error}");
    }
}

//! Data loads: native block-row files (loaded in parallel) and a CSV mapped by a rules file (loaded by one thread).
//!
//! Both parse bytes by hand from large buffers, resolve member names through hash maps (remembering the previous
//! name of each column, since exports repeat sparse members row after row), gather the rows of one block and apply
//! them in one read-modify-write of that block. YearTotal is always recomputed from the months, never loaded.
//!
//! Native format (what a parallel export writes): a header line naming the period of each value column, then one
//! line per block row: the Years, Scenario, Version, Currency, Entity and Product members, the account, and one
//! value per period column. Names may be quoted; `#Mi` is a missing value.
//!
//! Rules format, one setting per line (`#` starts a comment):
//! ```text
//! delimiter = ,
//! header_lines = 1
//! column 1 = Entity
//! column 8 = data
//! fixed Currency = Local
//! ```
//! Every dimension must be mapped by exactly one `column N = Dim` or `fixed Dim = Member`, and one column must be
//! `data` (a column may also be `ignore`).

use crate::block::{MISSING, recompute_year_totals};
use crate::cube::Cube;
use crate::error::{CubeError, IoContext};
use crate::outline::{Dim, MemberId, Outline, STORED_PERIODS, SparseKey, YEAR_TOTAL};
use crate::parallel::{check_cancel, for_each_unit};
use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;

const READ_CHUNK_BYTES: usize = 8 << 20;

/// What a load did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Data lines read.
    pub rows: u64,
    /// Cells written (missing values count too: they clear a cell).
    pub cells: u64,
    /// Block updates (a block loaded from two separated runs of rows counts twice).
    pub block_updates: u64,
}

/// Parse a number as loaded: `[-]digits[.digits]` by hand (exactly as the standard parser rounds), anything else
/// through the standard parser; `#Mi`, `#Missing` and an empty field are missing.
pub(crate) fn parse_value(token: &[u8]) -> Option<f64> {
    if token.is_empty() || token[0] == b'#' {
        return matches!(token, b"" | b"#Mi" | b"#MI" | b"#mi" | b"#Missing" | b"#MISSING" | b"#missing")
            .then_some(MISSING);
    }
    let (negative, digits) = match token[0] {
        b'-' => (true, &token[1..]),
        b'+' => (false, &token[1..]),
        _ => (false, token),
    };
    let mut mantissa: u64 = 0;
    let mut fraction_digits: i32 = -1;
    let mut count = 0;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                count += 1;
                if fraction_digits >= 0 {
                    fraction_digits += 1;
                }
            }
            b'.' if fraction_digits < 0 => fraction_digits = 0,
            _ => return std::str::from_utf8(token).ok()?.parse().ok(),
        }
        if count > 15 {
            return std::str::from_utf8(token).ok()?.parse().ok();
        }
    }
    if count == 0 {
        return None;
    }
    // Both operands are exact (mantissa < 2^53, a power of ten <= 10^15), so the division rounds once, exactly
    // like the standard parser.
    let value = mantissa as f64 / 10f64.powi(fraction_digits.max(0));
    Some(if negative { -value } else { value })
}

/// Member names of one dimension, by their exact bytes and lowercased.
struct NameIndex {
    exact: FxHashMap<Box<[u8]>, MemberId>,
    lower: FxHashMap<Box<[u8]>, MemberId>,
}

impl NameIndex {
    fn new(outline: &Outline, dim: Dim) -> NameIndex {
        let members = &outline.dim(dim).members;
        let mut exact = FxHashMap::default();
        let mut lower = FxHashMap::default();
        for (id, m) in members.iter().enumerate() {
            exact.insert(m.name.as_bytes().into(), id as MemberId);
            lower.insert(m.name.to_lowercase().into_bytes().into(), id as MemberId);
        }
        NameIndex { exact, lower }
    }

    fn get(&self, name: &[u8]) -> Option<MemberId> {
        self.exact.get(name).copied().or_else(|| self.lower.get(name.to_ascii_lowercase().as_slice()).copied())
    }
}

/// Resolves the members of one column, remembering the previous name.
struct ColumnResolver<'a> {
    dim: Dim,
    outline: &'a Outline,
    names: NameIndex,
    last_name: Vec<u8>,
    last_id: MemberId,
}

impl<'a> ColumnResolver<'a> {
    fn new(outline: &'a Outline, dim: Dim) -> ColumnResolver<'a> {
        ColumnResolver { dim, outline, names: NameIndex::new(outline, dim), last_name: Vec::new(), last_id: 0 }
    }

    /// The member named `name`, which must be stored (data lives only in stored members).
    fn resolve(&mut self, name: &[u8]) -> Result<MemberId, String> {
        if !self.last_name.is_empty() && self.last_name == name {
            return Ok(self.last_id);
        }
        let text = String::from_utf8_lossy(name);
        let id = match self.names.get(name) {
            Some(id) => id,
            None => return Err(self.outline.dim(self.dim).lookup(&text).unwrap_err().to_string()),
        };
        let member = self.outline.dim(self.dim).member(id);
        if !member.is_stored() {
            return Err(format!(
                "'{text}' is a dynamic {} member: data can only be loaded into stored members",
                self.dim.name()
            ));
        }
        if self.dim == Dim::Period && member.stored_index == Some(YEAR_TOTAL as u32) {
            return Err("YearTotal is computed from the months and cannot be loaded".into());
        }
        self.last_name.clear();
        self.last_name.extend_from_slice(name);
        self.last_id = id;
        Ok(id)
    }
}

/// Call `f(line_number, line)` for every line of a file (without its end of line), reading in large chunks and
/// checking for cancellation between chunks.
fn for_each_line(
    path: &Path,
    cancel: &AtomicBool,
    step: &str,
    mut f: impl FnMut(u64, &[u8]) -> Result<(), CubeError>,
) -> Result<(), CubeError> {
    let mut file = File::open(path).at(path)?;
    let mut buffer = vec![0u8; READ_CHUNK_BYTES];
    let mut filled = 0usize;
    let mut line_number = 0u64;
    loop {
        check_cancel(cancel, step)?;
        if filled == buffer.len() {
            buffer.resize(buffer.len() * 2, 0);
        }
        let n = file.read(&mut buffer[filled..]).at(path)?;
        let at_end = n == 0;
        filled += n;
        let mut start = 0;
        while let Some(newline) = buffer[start..filled].iter().position(|&b| b == b'\n') {
            let mut line = &buffer[start..start + newline];
            if line.last() == Some(&b'\r') {
                line = &line[..line.len() - 1];
            }
            line_number += 1;
            f(line_number, line)?;
            start += newline + 1;
        }
        if at_end {
            if start < filled {
                line_number += 1;
                f(line_number, &buffer[start..filled])?;
            }
            return Ok(());
        }
        buffer.copy_within(start..filled, 0);
        filled -= start;
    }
}

/// Split a native line into tokens: runs of non-blank bytes, or quoted names.
fn native_tokens(line: &[u8], tokens: &mut Vec<(usize, usize)>) -> Result<(), String> {
    tokens.clear();
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b' ' | b'\t' => i += 1,
            b'"' => {
                let end = line[i + 1..].iter().position(|&b| b == b'"').ok_or("unclosed quote")? + i + 1;
                tokens.push((i + 1, end));
                i = end + 1;
            }
            _ => {
                let end = line[i..].iter().position(|&b| b == b' ' || b == b'\t').map_or(line.len(), |p| p + i);
                tokens.push((i, end));
                i = end;
            }
        }
    }
    Ok(())
}

/// The rows of one block, gathered before they are applied.
struct PendingBlock {
    key: Option<u64>,
    cells: Vec<(u32, f64)>,
}

impl PendingBlock {
    fn new() -> PendingBlock {
        PendingBlock { key: None, cells: Vec::with_capacity(4096) }
    }

    /// Apply the gathered cells to the block (creating it if needed) and recompute its year totals.
    fn flush(&mut self, cube: &Cube, report: &mut LoadReport) -> Result<(), CubeError> {
        let Some(key) = self.key.take() else { return Ok(()) };
        let outline = cube.outline();
        let cells = &self.cells;
        cube.store().update(key, false, |block| {
            for &(cell, value) in cells {
                block[cell as usize] = value;
            }
            recompute_year_totals(outline, block);
        })?;
        report.cells += self.cells.len() as u64;
        report.block_updates += 1;
        self.cells.clear();
        Ok(())
    }
}

impl Cube {
    /// Load native block-row files, `load_threads` files at a time.
    pub fn load_native(
        &self,
        files: &[PathBuf],
        load_threads: usize,
        cancel: &AtomicBool,
    ) -> Result<LoadReport, CubeError> {
        const STEP: &str = "native load";
        let total = Mutex::new(LoadReport::default());
        for_each_unit(
            load_threads,
            files.len(),
            cancel,
            STEP,
            || (),
            |_, unit| {
                let report = self.load_native_file(&files[unit], cancel)?;
                let mut total = total.lock().expect("report lock");
                total.rows += report.rows;
                total.cells += report.cells;
                total.block_updates += report.block_updates;
                Ok(())
            },
        )?;
        Ok(total.into_inner().expect("report lock"))
    }

    fn load_native_file(&self, path: &Path, cancel: &AtomicBool) -> Result<LoadReport, CubeError> {
        let outline = self.outline();
        let mut sparse: Vec<ColumnResolver> = Dim::SPARSE.iter().map(|&d| ColumnResolver::new(outline, d)).collect();
        let mut accounts = ColumnResolver::new(outline, Dim::Account);
        let mut periods = ColumnResolver::new(outline, Dim::Period);
        let mut columns: Vec<usize> = Vec::new();
        let mut tokens = Vec::new();
        let mut pending = PendingBlock::new();
        let mut report = LoadReport::default();
        let error = |line: u64, reason: String| CubeError::Parse { path: path.to_path_buf(), line, reason };
        for_each_line(path, cancel, "native load", |line_number, line| {
            native_tokens(line, &mut tokens).map_err(|r| error(line_number, r))?;
            if tokens.is_empty() {
                return Ok(());
            }
            if columns.is_empty() {
                for &(start, end) in &tokens {
                    let period = periods.resolve(&line[start..end]).map_err(|r| error(line_number, r))?;
                    let stored = outline.dim(Dim::Period).member(period).stored_index.expect("stored period");
                    columns.push(stored as usize);
                }
                return Ok(());
            }
            if tokens.len() != 7 + columns.len() {
                return Err(error(
                    line_number,
                    format!(
                        "{} fields where 7 members and {} values were expected (Years Scenario Version Currency \
                         Entity Product Account, then one value per header period)",
                        tokens.len(),
                        columns.len()
                    ),
                ));
            }
            let mut members = [0 as MemberId; 6];
            for (slot, resolver) in sparse.iter_mut().enumerate() {
                let (start, end) = tokens[slot];
                members[slot] = resolver.resolve(&line[start..end]).map_err(|r| error(line_number, r))?;
            }
            let (start, end) = tokens[6];
            let account = accounts.resolve(&line[start..end]).map_err(|r| error(line_number, r))?;
            let row = outline.account_row(account).expect("stored account");
            let key = SparseKey::new(members).0;
            if pending.key != Some(key) {
                pending.flush(self, &mut report)?;
                pending.key = Some(key);
            }
            for (column, &(start, end)) in tokens[7..].iter().enumerate() {
                let value = parse_value(&line[start..end]).ok_or_else(|| {
                    error(line_number, format!("'{}' is not a number", String::from_utf8_lossy(&line[start..end])))
                })?;
                pending.cells.push(((row * STORED_PERIODS + columns[column]) as u32, value));
            }
            report.rows += 1;
            Ok(())
        })?;
        pending.flush(self, &mut report)?;
        Ok(report)
    }

    /// Load a CSV through its rules file, on this thread.
    pub fn load_csv(&self, csv: &Path, rules: &Path, cancel: &AtomicBool) -> Result<LoadReport, CubeError> {
        let rules = LoadRules::read(rules)?;
        let outline = self.outline();
        let mut fixed = [None::<MemberId>; 8];
        for (dim, name) in &rules.fixed {
            let id = outline.dim(*dim).lookup(name)?;
            if !outline.dim(*dim).member(id).is_stored() {
                return Err(CubeError::Config(format!("fixed member {name} of {} is dynamic", dim.name())));
            }
            fixed[dim.index()] = Some(id);
        }
        let mut resolvers: Vec<Option<ColumnResolver>> = rules
            .columns
            .iter()
            .map(|role| match role {
                ColumnRole::Member(dim) => Some(ColumnResolver::new(outline, *dim)),
                _ => None,
            })
            .collect();
        let mut pending = PendingBlock::new();
        let mut report = LoadReport::default();
        let mut fields: Vec<(usize, usize)> = Vec::with_capacity(rules.columns.len());
        let error = |line: u64, reason: String| CubeError::Parse { path: csv.to_path_buf(), line, reason };
        for_each_line(csv, cancel, "csv load", |line_number, line| {
            if line_number <= rules.header_lines || line.is_empty() {
                return Ok(());
            }
            fields.clear();
            let mut start = 0;
            for (i, &b) in line.iter().enumerate() {
                if b == rules.delimiter {
                    fields.push(unquote(line, start, i));
                    start = i + 1;
                }
            }
            fields.push(unquote(line, start, line.len()));
            if fields.len() != rules.columns.len() {
                return Err(error(
                    line_number,
                    format!("{} fields where the rules map {}", fields.len(), rules.columns.len()),
                ));
            }
            let mut members = fixed;
            let mut value = MISSING;
            for (column, role) in rules.columns.iter().enumerate() {
                let (s, e) = fields[column];
                match role {
                    ColumnRole::Member(dim) => {
                        let resolver = resolvers[column].as_mut().expect("member column");
                        members[dim.index()] = Some(resolver.resolve(&line[s..e]).map_err(|r| error(line_number, r))?);
                    }
                    ColumnRole::Data => {
                        value = parse_value(&line[s..e]).ok_or_else(|| {
                            error(line_number, format!("'{}' is not a number", String::from_utf8_lossy(&line[s..e])))
                        })?;
                    }
                    ColumnRole::Ignore => {}
                }
            }
            let member = |dim: Dim| members[dim.index()].expect("rules map every dimension");
            let key = SparseKey::new(Dim::SPARSE.map(member)).0;
            let row = outline.account_row(member(Dim::Account)).expect("stored account");
            let period = outline.dim(Dim::Period).member(member(Dim::Period)).stored_index.expect("stored period");
            if pending.key != Some(key) {
                pending.flush(self, &mut report)?;
                pending.key = Some(key);
            }
            pending.cells.push(((row * STORED_PERIODS) as u32 + period, value));
            report.rows += 1;
            Ok(())
        })?;
        pending.flush(self, &mut report)?;
        Ok(report)
    }
}

fn unquote(line: &[u8], start: usize, end: usize) -> (usize, usize) {
    let (mut s, mut e) = (start, end);
    while s < e && line[s] == b' ' {
        s += 1;
    }
    while e > s && line[e - 1] == b' ' {
        e -= 1;
    }
    if e - s >= 2 && line[s] == b'"' && line[e - 1] == b'"' { (s + 1, e - 1) } else { (s, e) }
}

/// What one CSV column holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnRole {
    Member(Dim),
    Data,
    Ignore,
}

/// A parsed rules file: how the CSV's columns map to the outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadRules {
    pub delimiter: u8,
    pub header_lines: u64,
    pub columns: Vec<ColumnRole>,
    /// Dimensions not in the file, with the member every row goes to.
    pub fixed: Vec<(Dim, String)>,
}

impl LoadRules {
    pub fn read(path: &Path) -> Result<LoadRules, CubeError> {
        let text = std::fs::read_to_string(path).at(path)?;
        LoadRules::parse(path, &text)
    }

    pub fn parse(path: &Path, text: &str) -> Result<LoadRules, CubeError> {
        let mut delimiter = b',';
        let mut header_lines = 0;
        let mut columns: Vec<Option<ColumnRole>> = Vec::new();
        let mut fixed = Vec::new();
        for (index, raw) in text.lines().enumerate() {
            let line_number = index as u64 + 1;
            let bad = |reason: String| CubeError::Rules { path: path.to_path_buf(), line: line_number, reason };
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (left, right) =
                line.split_once('=').ok_or_else(|| bad(format!("'{line}' is not a setting: write name = value")))?;
            let (left, right) = (left.trim(), right.trim());
            let words: Vec<&str> = left.split_whitespace().collect();
            match words.as_slice() {
                ["delimiter"] => {
                    let value = if right == "tab" { "\t" } else { right };
                    if value.len() != 1 {
                        return Err(bad(format!("delimiter '{right}' must be one character (or 'tab')")));
                    }
                    delimiter = value.as_bytes()[0];
                }
                ["header_lines"] => {
                    header_lines = right.parse().map_err(|_| bad(format!("header_lines '{right}' is not a count")))?;
                }
                ["column", number] => {
                    let n: usize = number
                        .parse()
                        .ok()
                        .filter(|&n| n >= 1)
                        .ok_or_else(|| bad(format!("column '{number}' must be a number from 1")))?;
                    let role = match right.to_ascii_lowercase().as_str() {
                        "data" => ColumnRole::Data,
                        "ignore" => ColumnRole::Ignore,
                        _ => ColumnRole::Member(Dim::parse(right).map_err(|e| bad(e.to_string()))?),
                    };
                    if columns.len() < n {
                        columns.resize(n, None);
                    }
                    if columns[n - 1].replace(role).is_some() {
                        return Err(bad(format!("column {n} is mapped twice")));
                    }
                }
                ["fixed", dim] => {
                    let dim = Dim::parse(dim).map_err(|e| bad(e.to_string()))?;
                    fixed.push((dim, right.to_string()));
                }
                _ => {
                    return Err(bad(format!(
                        "unknown setting '{left}': use delimiter, header_lines, column N or fixed Dimension"
                    )));
                }
            }
        }
        let bad = |reason: String| CubeError::Rules { path: path.to_path_buf(), line: 0, reason };
        let columns: Vec<ColumnRole> = columns
            .into_iter()
            .enumerate()
            .map(|(i, role)| {
                role.ok_or_else(|| bad(format!("column {} is not mapped (map it, or to 'ignore')", i + 1)))
            })
            .collect::<Result<_, _>>()?;
        if columns.iter().filter(|r| **r == ColumnRole::Data).count() != 1 {
            return Err(bad("exactly one column must be 'data'".into()));
        }
        for dim in Dim::ALL {
            let mapped = columns.iter().filter(|r| **r == ColumnRole::Member(dim)).count()
                + fixed.iter().filter(|(d, _)| *d == dim).count();
            if mapped != 1 {
                return Err(bad(format!(
                    "{} is mapped {mapped} times: map it once, by a column or by 'fixed {} = Member'",
                    dim.name(),
                    dim.name()
                )));
            }
        }
        Ok(LoadRules { delimiter, header_lines, columns, fixed })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_like_the_standard_parser() {
        for text in ["0", "1.5", "-1234.56", "0.01", "99999999.99", "+3", "12345678901234.5", "1e3", "0.1"] {
            assert_eq!(parse_value(text.as_bytes()), Some(text.parse::<f64>().unwrap()), "{text}");
        }
        assert!(parse_value(b"#Mi").unwrap().is_nan());
        assert!(parse_value(b"").unwrap().is_nan());
        assert_eq!(parse_value(b"abc"), None);
        assert_eq!(parse_value(b"-"), None);
        assert_eq!(parse_value(b"#Zero"), None);
    }

    #[test]
    fn native_lines_tokenize_with_quotes() {
        let mut tokens = Vec::new();
        let line = br#""FY19" "North America" 1.5 #Mi"#;
        native_tokens(line, &mut tokens).unwrap();
        let words: Vec<&[u8]> = tokens.iter().map(|&(s, e)| &line[s..e]).collect();
        assert_eq!(words, vec![&b"FY19"[..], b"North America", b"1.5", b"#Mi"]);
        assert!(native_tokens(br#""open"#, &mut tokens).is_err());
    }

    #[test]
    fn rules_must_map_every_dimension_once() {
        let path = Path::new("test.rules");
        let good = "delimiter = ,\nheader_lines = 1\ncolumn 1 = Entity\ncolumn 2 = Product\ncolumn 3 = Account\n\
                    column 4 = Years\ncolumn 5 = Scenario\ncolumn 6 = Version\ncolumn 7 = Period\ncolumn 8 = data\n\
                    fixed Currency = Local # every row is in local currency\n";
        let rules = LoadRules::parse(path, good).unwrap();
        assert_eq!(rules.columns.len(), 8);
        assert_eq!(rules.fixed, vec![(Dim::Currency, "Local".to_string())]);
        let missing = good.replace("fixed Currency = Local", "");
        assert!(LoadRules::parse(path, &missing).unwrap_err().to_string().contains("Currency is mapped 0 times"));
        let typo = good.replace("column 2 = Product", "column 2 = Prodct");
        assert!(LoadRules::parse(path, &typo).unwrap_err().to_string().contains("did you mean Product"));
        let gap = good.replace("column 5 = Scenario\n", "fixed Scenario = Actual\n");
        assert!(LoadRules::parse(path, &gap).unwrap_err().to_string().contains("column 5 is not mapped"));
    }
}

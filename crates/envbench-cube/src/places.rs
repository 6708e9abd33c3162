//! The two directories the cube works in (`data/` for the generated input, `cube/` for page files and index), and
//! how envbench keeps its hands off everything it did not make there.
//!
//! Each directory envbench creates carries a marker file with envbench's identity. A directory without the marker is
//! used only when it is empty (the marker is then written); one holding anything is refused with the names of what
//! it holds, and so is a marked directory holding a file envbench would not have written. An Essbase administrator
//! may point `--dir` next to real Essbase data (`ess00001.pag`, `cube.ind`): nothing there is ever read as ours,
//! overwritten or removed.
//!
//! Writers (a cube run) hold an exclusive lock on the cube directory for the whole run; readers (`cube get`) take a
//! shared one and never write. The lock file records the writer's pid, so the refusal can name it.

use crate::error::{CubeError, IoContext};
use envbench_base::lock::{FileLock, LockMode, LockRefused, this_command_line};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The marker in every directory envbench cube created.
pub const MARKER_FILE: &str = ".envbench-cube";
/// The lock file in the cube directory.
pub const LOCK_FILE: &str = "envbench-cube.lock";
/// The generated CSV input in the data directory.
pub const CSV_FILE: &str = "revenue_cogs_stats.csv";
/// The load rules of the CSV input, beside it.
pub const RULES_FILE: &str = "revenue_cogs_stats.rules";

/// Which of the two directories.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Place {
    /// Generated input files.
    Data,
    /// The block store.
    Cube,
}

/// What the marker file says.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Marker {
    made_by: String,
    place: Place,
}

const MADE_BY: &str = "envbench cube";

/// True for a file name envbench cube writes into a directory of this kind.
fn is_ours(name: &str, place: Place) -> bool {
    if name == MARKER_FILE {
        return true;
    }
    let digits = |text: &str, count: usize| text.len() == count && text.bytes().all(|b| b.is_ascii_digit());
    match place {
        Place::Data => {
            matches!(name, "manifest.json" | "manifest.tmp" | CSV_FILE | RULES_FILE)
                || name.strip_prefix("native_").and_then(|n| n.strip_suffix(".txt")).is_some_and(|n| digits(n, 2))
        }
        Place::Cube => {
            matches!(name, LOCK_FILE | "cube.ind" | "cube.tmp" | "step-in-progress.json" | "step-in-progress.tmp")
                || is_page_file(name)
        }
    }
}

/// `g0001-ess00001.pag`: a page file of one store generation.
pub(crate) fn is_page_file(name: &str) -> bool {
    let digits = |text: &str, count: usize| text.len() == count && text.bytes().all(|b| b.is_ascii_digit());
    name.strip_prefix('g')
        .and_then(|rest| rest.strip_suffix(".pag"))
        .and_then(|rest| rest.split_once("-ess"))
        .is_some_and(|(generation, number)| digits(generation, 4) && digits(number, 5))
}

/// The names in `dir` envbench cube would not have written there (sorted), and whether its marker is there. In a
/// directory without the marker, nothing is envbench's: every name is listed.
fn survey(dir: &Path, place: Place) -> Result<(Vec<String>, bool), CubeError> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).at(dir)? {
        names.push(entry.at(dir)?.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    let marked = names.iter().any(|n| n == MARKER_FILE) && marker_matches(&dir.join(MARKER_FILE), place);
    let foreign = if marked { names.into_iter().filter(|name| !is_ours(name, place)).collect() } else { names };
    Ok((foreign, marked))
}

fn marker_matches(path: &Path, place: Place) -> bool {
    std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Marker>(&bytes).ok())
        .is_some_and(|m| m.made_by == MADE_BY && m.place == place)
}

/// Make `dir` a directory of envbench cube's: create it with its marker, or mark it when it exists and is empty.
/// Refuses (naming the files) a directory that holds anything without the marker, or a file envbench cube would
/// not have written.
pub fn claim(dir: &Path, place: Place) -> Result<(), CubeError> {
    match std::fs::metadata(dir) {
        Ok(meta) if !meta.is_dir() => {
            return Err(CubeError::Config(format!("{} is not a directory; choose another --dir", dir.display())));
        }
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(CubeError::Io { path: dir.to_path_buf(), source: e }),
    }
    std::fs::create_dir_all(dir).at(dir)?;
    let (foreign, marked) = survey(dir, place)?;
    if !foreign.is_empty() {
        return Err(foreign_files(dir, &foreign, marked));
    }
    if !marked {
        let marker = Marker { made_by: MADE_BY.into(), place };
        let path = dir.join(MARKER_FILE);
        std::fs::write(&path, serde_json::to_vec_pretty(&marker).expect("a marker serializes")).at(&path)?;
    }
    Ok(())
}

/// For readers: `dir` exists, carries the marker and holds nothing foreign. Never writes. `Ok(false)` when there is
/// no such directory.
pub fn check(dir: &Path, place: Place) -> Result<bool, CubeError> {
    if !dir.is_dir() {
        return Ok(false);
    }
    let (foreign, marked) = survey(dir, place)?;
    if !foreign.is_empty() {
        return Err(foreign_files(dir, &foreign, marked));
    }
    Ok(marked)
}

fn foreign_files(dir: &Path, names: &[String], marked: bool) -> CubeError {
    const SHOWN: usize = 6;
    let mut files = names.iter().take(SHOWN).cloned().collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        files.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    CubeError::ForeignFiles {
        dir: dir.to_path_buf(),
        files,
        why: if marked {
            "files envbench cube does not write".into()
        } else {
            "files, and no marker saying envbench made this directory".into()
        },
    }
}

/// A lock on the cube directory ([`envbench_base::lock`]), held while it lives.
pub struct CubeLock {
    _lock: FileLock,
}

impl CubeLock {
    /// The writer's lock: refused while another run or a reader holds the cube.
    pub fn exclusive(cube_dir: &Path) -> Result<CubeLock, CubeError> {
        let path = cube_dir.join(LOCK_FILE);
        match FileLock::take(&path, LockMode::Exclusive, &this_command_line()) {
            Ok(lock) => Ok(CubeLock { _lock: lock }),
            Err(LockRefused::Io { path, source }) => Err(CubeError::Io { path, source }),
            Err(busy) => Err(CubeError::Busy { dir: cube_dir.to_path_buf(), holder: busy.holder_text() }),
        }
    }

    /// A reader's lock: refused while a run writes the cube. `None` when no run ever locked this cube.
    pub fn shared(cube_dir: &Path) -> Result<Option<CubeLock>, CubeError> {
        match FileLock::share_existing(&cube_dir.join(LOCK_FILE)) {
            Ok(lock) => Ok(lock.map(|lock| CubeLock { _lock: lock })),
            Err(LockRefused::Io { path, source }) => Err(CubeError::Io { path, source }),
            Err(busy) => Err(CubeError::BeingWritten { dir: cube_dir.to_path_buf(), holder: busy.holder_text() }),
        }
    }
}

/// Bytes a run at `scale` needs free: the generated input (unless it is reused) and twice the cube, whose dense
/// restructure writes a second generation of page files before it removes the first.
pub fn space_needed(scale: f64, data_reused: bool) -> u64 {
    // Measured after one sequence (debug build, seed 1) and rounded up: input files 1.2 MB at scale 0.002, 59.5 MB at
    // 0.1; the cube 20.8 MB at 0.002, 399 MB at 0.05, 738 MB at 0.1 (upper-level blocks do not shrink with the scale).
    const INPUT_BYTES_AT_SCALE_ONE: f64 = 0.65e9;
    const CUBE_BYTES_AT_SCALE_ONE: f64 = 7.5e9;
    const CUBE_BYTES_AT_ANY_SCALE: f64 = 25e6;
    let input = if data_reused { 0.0 } else { INPUT_BYTES_AT_SCALE_ONE * scale };
    (input + 2.0 * (CUBE_BYTES_AT_SCALE_ONE * scale + CUBE_BYTES_AT_ANY_SCALE)) as u64
}

/// Refuse a run whose files cannot fit in `dir` (measured on its nearest existing directory: `dir` may not exist yet).
pub fn check_space(dir: &Path, needed_bytes: u64) -> Result<(), CubeError> {
    let existing = dir.ancestors().find(|d| d.is_dir()).unwrap_or(Path::new("."));
    match envbench_base::place::available_bytes(existing).ok().flatten() {
        Some(available) if needed_bytes > available => Err(CubeError::NotEnoughSpace {
            dir: dir.to_path_buf(),
            needed: envbench_core::ByteSize(needed_bytes),
            available: envbench_core::ByteSize(available),
        }),
        _ => Ok(()),
    }
}

/// Remove what envbench cube wrote into `dir` (never the marker, the lock, or anything else): after a full disk,
/// so a failed run leaves nothing large behind.
pub fn remove_partial_files(dir: &Path, place: Place) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if is_ours(&name, place) && name != MARKER_FILE && name != LOCK_FILE {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testdir::tempdir;

    #[test]
    fn names_are_recognised_by_place() {
        assert!(is_page_file("g0001-ess00001.pag"));
        assert!(!is_page_file("ess00001.pag"), "Essbase's own page file is not ours");
        assert!(is_ours("native_03.txt", Place::Data) && !is_ours("native_3.txt", Place::Data));
        assert!(is_ours("cube.ind", Place::Cube) && !is_ours("cube.ind.bak", Place::Cube));
        assert!(!is_ours("cube.ind", Place::Data));
    }

    #[test]
    fn foreign_directories_are_refused_and_left_alone() {
        let dir = tempdir("places-foreign");
        std::fs::write(dir.join("ess00001.pag"), b"essbase data").unwrap();
        std::fs::write(dir.join("cube.ind"), b"essbase index").unwrap();
        let error = claim(&dir, Place::Cube).unwrap_err();
        let message = error.to_string();
        assert!(message.contains("cube.ind, ess00001.pag"), "{message}");
        assert!(matches!(error, CubeError::ForeignFiles { .. }));
        assert_eq!(std::fs::read(dir.join("ess00001.pag")).unwrap(), b"essbase data");
        assert!(!dir.join(MARKER_FILE).exists(), "nothing is written next to foreign files");
        assert!(check(&dir, Place::Cube).is_err());
    }

    #[test]
    fn an_empty_directory_is_claimed_and_a_marked_one_with_strangers_refused() {
        let dir = tempdir("places-claim");
        claim(&dir, Place::Data).unwrap();
        assert!(check(&dir, Place::Data).unwrap());
        assert!(check(&dir, Place::Cube).is_err(), "a data marker does not make a cube directory");
        std::fs::write(dir.join("notes.txt"), b"mine").unwrap();
        let message = claim(&dir, Place::Data).unwrap_err().to_string();
        assert!(message.contains("notes.txt") && message.contains("does not write"), "{message}");
    }

    #[test]
    fn one_writer_at_a_time_and_no_reader_while_it_writes() {
        let dir = tempdir("places-lock");
        claim(&dir, Place::Cube).unwrap();
        assert!(CubeLock::shared(&dir).unwrap().is_none(), "no run ever locked it");
        let writer = CubeLock::exclusive(&dir).unwrap();
        let busy = CubeLock::exclusive(&dir).err().unwrap();
        assert!(busy.to_string().contains(&format!("pid {}", std::process::id())), "{busy}");
        assert!(matches!(CubeLock::shared(&dir), Err(CubeError::BeingWritten { .. })));
        drop(writer);
        let reader = CubeLock::shared(&dir).unwrap();
        assert!(reader.is_some());
        assert!(matches!(CubeLock::exclusive(&dir), Err(CubeError::Busy { .. })), "readers keep writers out");
    }
}

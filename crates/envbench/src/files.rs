//! Files the user names on the command line.
//!
//! Read ([`read_small_file`]: a suite, a host list, a token, a PEM certificate or key): only a regular file, and only
//! up to a size such a file can have, so a FIFO, `/dev/zero` or a huge file is refused instead of blocking or filling
//! memory.
//!
//! Written ([`OutputFile`]: `report -o`, `results export -o`, `run --report`): a new file, or a file envbench wrote
//! before (it recognises its own reports and exports), and nothing else unless `--force` says so; never the store
//! being read, never a directory or a device. The check runs before any work (a suite does not run for two minutes
//! to then find it may not write its report), and the file is written whole or not at all: into a temporary file
//! beside it, then renamed into place (a new file is linked, so one that appeared meanwhile is not replaced).

use crate::usage;
use envbench_store::StoreLocation;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The most a PEM file (`--ca-cert`, `--tls-cert`, `--tls-key`) may hold: a long chain is a few tens of kilobytes.
pub const PEM_MAX_BYTES: u64 = 1 << 20;

/// The text of a small file the user named with `option`: a regular file of at most `max_bytes`. It is opened
/// without blocking (a FIFO would otherwise wait for a writer forever) and checked again once open.
pub fn read_small_file(path: &Path, option: &str, max_bytes: u64) -> anyhow::Result<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = envbench_core::text::printable(&path.display().to_string());
    let not_regular =
        || usage(format!("{option} {shown}: not a regular file (a directory, a FIFO or a device); give a file"));
    let metadata = std::fs::metadata(path).map_err(|e| usage(format!("{option} {shown}: cannot read it ({e})")))?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| usage(format!("{option} {shown}: cannot read it ({e})")))?;
    let metadata = file.metadata().map_err(|e| usage(format!("{option} {shown}: cannot read it ({e})")))?;
    if !metadata.is_file() {
        return Err(not_regular());
    }
    if metadata.len() > max_bytes {
        return Err(usage(format!(
            "{option} {shown}: {} is larger than such a file can be ({}); is it the right file?",
            envbench_core::ByteSize(metadata.len()),
            envbench_core::ByteSize(max_bytes)
        )));
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1).read_to_end(&mut bytes).map_err(|e| usage(format!("{option} {shown}: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(usage(format!("{option} {shown}: it grew past {} while read", envbench_core::ByteSize(max_bytes))));
    }
    String::from_utf8(bytes).map_err(|_| usage(format!("{option} {shown}: not UTF-8 text")))
}

/// How much of an existing file is read to recognise it as envbench's.
const RECOGNITION_BYTES: u64 = 64 * 1024;

/// A file envbench may write.
#[derive(Debug)]
pub struct OutputFile {
    path: PathBuf,
    /// A pipe or a terminal (`-o /dev/stdout`, `-o >(gzip > x)`): written as a stream, nothing to replace.
    stream: bool,
}

/// True when `head`, the start of a file, is a report or an export envbench wrote.
pub fn is_envbench_output(head: &str) -> bool {
    if envbench_report::is_envbench_page(head) {
        return true;
    }
    let first_line = head.lines().next().unwrap_or_default();
    envbench_export::is_sample_export(head) || first_line == envbench_ranread::TSV_HEADER.join("\t")
}

/// The (device, inode) of the store's files, so the store is never written over.
fn store_files(store: &StoreLocation) -> Vec<(u64, u64)> {
    let StoreLocation::Sqlite(path) = store else { return Vec::new() };
    let mut files = vec![path.clone()];
    for suffix in ["-wal", "-shm", "-journal"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        files.push(PathBuf::from(name));
    }
    files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| (m.dev(), m.ino())).collect()
}

impl OutputFile {
    /// Check that `path` may be written, before any work. `option` names the option for messages (`-o`,
    /// `--report`); `force` allows replacing a regular file envbench did not write (never the store).
    pub fn check(path: &Path, option: &str, force: bool, store: &StoreLocation) -> anyhow::Result<OutputFile> {
        let shown = envbench_core::text::printable(&path.display().to_string());
        let metadata = match std::fs::metadata(path) {
            Ok(metadata) => metadata,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                if !parent.is_dir() {
                    return Err(usage(format!(
                        "{option} {shown}: cannot write the file there: {} is not a directory; choose another {option}",
                        envbench_core::text::printable(&parent.display().to_string())
                    )));
                }
                // `/dev/sda` where there is no such disk would become a regular file among the devices.
                if let Err(error) = envbench_base::place::check_directory(parent) {
                    return Err(usage(format!("{option} {shown}: {error}; choose another {option}")));
                }
                return Ok(OutputFile { path: path.to_path_buf(), stream: false });
            }
            Err(e) => return Err(usage(format!("{option} {shown}: {e}; choose another {option}"))),
        };
        let file_type = metadata.file_type();
        if store_files(store).contains(&(metadata.dev(), metadata.ino())) {
            return Err(usage(format!(
                "{option} {shown} is the results store being read; envbench never writes over it, even with --force; \
                 choose another {option}"
            )));
        }
        if file_type.is_dir() {
            return Err(usage(format!(
                "{option} {shown} is a directory; name a file, e.g. {shown}/envbench-report.html"
            )));
        }
        if file_type.is_fifo() || (file_type.is_char_device() && is_stream_device(path)) {
            return Ok(OutputFile { path: path.to_path_buf(), stream: true });
        }
        if !file_type.is_file() {
            return Err(usage(format!(
                "{option} {shown} is a device or special file, not a file envbench may write; choose another {option}"
            )));
        }
        if !force && !Self::written_by_envbench(path) {
            return Err(usage(format!(
                "{option} {shown} exists and is not a report or export envbench wrote; envbench only replaces its \
                 own files: choose another {option}, or add --force to replace it"
            )));
        }
        Ok(OutputFile { path: path.to_path_buf(), stream: false })
    }

    fn written_by_envbench(path: &Path) -> bool {
        let Ok(file) = std::fs::File::open(path) else { return false };
        let mut head = Vec::new();
        if file.take(RECOGNITION_BYTES).read_to_end(&mut head).is_err() {
            return false;
        }
        is_envbench_output(&String::from_utf8_lossy(&head))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Write `content` whole: into a temporary file in the same directory, made durable, then put in place.
    pub fn write(&self, content: &str) -> anyhow::Result<()> {
        let shown = envbench_core::text::printable(&self.path.display().to_string());
        let failed = |e: std::io::Error| anyhow::anyhow!("{shown}: cannot write the file ({e})");
        if self.stream {
            let mut stream = std::fs::OpenOptions::new().write(true).open(&self.path).map_err(failed)?;
            return stream.write_all(content.as_bytes()).map_err(failed);
        }
        let directory = self.path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        let name = self.path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temporary = directory.join(format!(".{name}.envbench-{}.tmp", std::process::id()));
        let result = (|| {
            let mut file = std::fs::OpenOptions::new().write(true).create_new(true).open(&temporary)?;
            file.write_all(content.as_bytes())?;
            file.sync_all()?;
            if self.path.exists() {
                // Checked as ours (or --force) before the work began.
                std::fs::rename(&temporary, &self.path)
            } else {
                // A new file: linking fails if one of that name appeared meanwhile, which is then left alone.
                std::fs::hard_link(&temporary, &self.path)?;
                std::fs::remove_file(&temporary)
            }
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        result.map_err(|e| {
            if e.kind() == std::io::ErrorKind::AlreadyExists {
                anyhow::anyhow!("{shown}: a file of this name appeared while envbench worked; it was left alone")
            } else {
                failed(e)
            }
        })
    }
}

/// A character device that is a stream, not storage: `/dev/null`, a terminal.
fn is_stream_device(path: &Path) -> bool {
    if path == Path::new("/dev/null") {
        return true;
    }
    std::fs::OpenOptions::new().write(true).open(path).is_ok_and(|file| {
        use std::io::IsTerminal;
        file.is_terminal()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn envbench_recognises_its_own_files_only() {
        let report = envbench_report::html::page("envbench report", envbench_report::html::cell("x"));
        assert!(is_envbench_output(&report));
        assert!(is_envbench_output(&format!("{}\nx,y\n", envbench_export::SAMPLE_COLUMNS.join(","))));
        assert!(is_envbench_output("[\n  {\n    \"run\": \"abc\",\n"));
        assert!(is_envbench_output("[]\n"));
        assert!(is_envbench_output(&format!("{}\n1\t2\n", envbench_ranread::TSV_HEADER.join("\t"))));
        for foreign in ["my notes\n", "SQLite format 3\0", "<!DOCTYPE html>\n<html><title>mine</title>", "[1, 2]", ""] {
            assert!(!is_envbench_output(foreign), "{foreign:?}");
        }
    }
}

//! Generating the tables as Parquet: every part of every table a job, the big ones first, run on parallel threads;
//! each part written to a `.partial` file and renamed when complete; the manifest written last; and on failure or
//! Ctrl-C everything the generation wrote taken back. The file format (compression, row groups, page statistics) is
//! chosen in [`writer_properties`].

use crate::data_dir::{GENERATOR, MANIFEST_FILE, MANIFEST_FORMAT, Manifest, TableFiles, io_error, remove_ours};
use crate::error::TpchError;
use crate::tables::TableName;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::Compression;
use datafusion::parquet::file::properties::{EnabledStatistics, WriterProperties};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

/// How every file is compressed (see [`writer_properties`]); the manifest records its name.
const COMPRESSION: Compression = Compression::LZ4_RAW;

/// Progress of a generation, for a rows/s display.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GenerationProgress {
    pub rows_generated: u64,
    /// About how many rows there will be (lineitem's count is estimated).
    pub rows_expected: u64,
    pub elapsed_seconds: f64,
}

/// One part of one table to write.
struct Job {
    table: TableName,
    part: i32,
    parts: i32,
    row_group_rows: u64,
}

/// Generate every table of `scale_factor` into `dir` on `threads` threads (`None`: every CPU), each scaled table in at
/// least `min_row_groups` row groups, and write the manifest last. An interrupted or failed generation removes what it
/// wrote.
pub(crate) fn generate(
    dir: &Path,
    scale_factor: f64,
    threads: Option<usize>,
    min_row_groups: u64,
    interrupt: &AtomicBool,
    progress: &(dyn Fn(GenerationProgress) + Sync),
) -> Result<Manifest, TpchError> {
    let started = Instant::now();
    let sf = scale_factor;
    remove_ours(dir)?;
    for table in TableName::ALL {
        let table_dir = dir.join(table.as_str());
        std::fs::create_dir_all(&table_dir).map_err(io_error(&table_dir, "creating"))?;
    }
    // Big tables first so the long jobs start early and the small ones fill the gaps.
    let mut jobs: Vec<Job> = TableName::ALL
        .iter()
        .flat_map(|&table| {
            let parts = table.parts(sf);
            let row_group_rows = table.row_group_rows(sf, min_row_groups);
            (1..=parts).map(move |part| Job { table, part, parts, row_group_rows })
        })
        .collect();
    jobs.sort_by_key(|job| std::cmp::Reverse(job.table.approximate_rows(sf) / job.parts as u64));
    let rows_expected = TableName::approximate_total_rows(sf);
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1))
        .clamp(1, jobs.len());
    let next_job = Mutex::new(jobs.into_iter());
    let rows_generated = AtomicU64::new(0);
    let written: Mutex<Vec<(TableName, String, PartWritten)>> = Mutex::new(Vec::new());
    let first_error: Mutex<Option<TpchError>> = Mutex::new(None);

    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    if interrupt.load(Ordering::SeqCst) || first_error.lock().expect("no panics").is_some() {
                        return;
                    }
                    let Some(job) = next_job.lock().expect("no panics").next() else { return };
                    let relative = format!("{}/part-{:05}.parquet", job.table.as_str(), job.part);
                    let on_rows = |rows: u64| {
                        let total = rows_generated.fetch_add(rows, Ordering::Relaxed) + rows;
                        progress(GenerationProgress {
                            rows_generated: total,
                            rows_expected,
                            elapsed_seconds: started.elapsed().as_secs_f64(),
                        });
                    };
                    match write_part(dir, &relative, &job, sf, interrupt, &on_rows) {
                        Ok(part) => written.lock().expect("no panics").push((job.table, relative, part)),
                        Err(e) => {
                            first_error.lock().expect("no panics").get_or_insert(e);
                        }
                    }
                }
            });
        }
    });
    let failure = match first_error.into_inner().expect("no panics") {
        Some(error) => Some(error),
        None if interrupt.load(Ordering::SeqCst) => Some(TpchError::Interrupted),
        None => None,
    };
    if let Some(error) = failure {
        // An incomplete generation is of no use to anyone: take back what was written (best effort, the error
        // that stopped generation is the one to report).
        let _ = remove_ours(dir);
        let _ = std::fs::remove_dir(dir);
        return Err(error);
    }
    let mut tables: BTreeMap<TableName, TableFiles> = BTreeMap::new();
    let mut written = written.into_inner().expect("no panics");
    written.sort_by(|a, b| a.1.cmp(&b.1));
    for (table, file, part) in written {
        let entry = tables.entry(table).or_insert(TableFiles {
            rows: 0,
            bytes: 0,
            row_groups: 0,
            row_group_rows: table.row_group_rows(sf, min_row_groups),
            files: Vec::new(),
        });
        entry.rows += part.rows;
        entry.bytes += part.bytes;
        entry.row_groups += part.row_groups;
        entry.files.push(file);
    }
    let manifest = Manifest {
        format: MANIFEST_FORMAT,
        scale_factor: sf,
        generator: GENERATOR.to_string(),
        compression: COMPRESSION.to_string().to_lowercase(),
        min_row_groups,
        tables,
        generation_ms: started.elapsed().as_millis() as u64,
    };
    let path = dir.join(MANIFEST_FILE);
    let text = serde_json::to_string_pretty(&manifest).expect("a manifest always serializes");
    std::fs::write(&path, text).map_err(io_error(&path, "writing"))?;
    Ok(manifest)
}

/// What writing one part wrote.
struct PartWritten {
    rows: u64,
    bytes: u64,
    row_groups: u64,
}

/// How a table's files are written: LZ4_RAW, row groups of at most `row_group_rows` ([`TableName::row_group_rows`]), and
/// statistics per page, so the page index (column and offset indexes) lets a reader skip pages as well as row groups.
/// LZ4_RAW files are as small as Snappy ones (365 against 356 MiB at SF 1), and decompressing Snappy was a fifth of
/// DataFusion's CPU time in the power test: on the same machine in one run, the power test's geometric mean was 1.22x
/// faster on LZ4_RAW files than on Snappy ones (DuckDB's 1.19x). Uncompressed files were faster still but 1.8x larger,
/// so more I/O on a network store; zstd decompresses slower than Snappy. Plain instead of dictionary encoding for the
/// near-unique columns (1.05x for DataFusion, 1.08x for DuckDB, inside the run-to-run spread) and Arrow dictionary
/// types for the short strings (no gain) were measured too, and left out.
fn writer_properties(row_group_rows: u64) -> WriterProperties {
    WriterProperties::builder()
        .set_compression(COMPRESSION)
        .set_max_row_group_row_count(Some(row_group_rows as usize))
        .set_statistics_enabled(EnabledStatistics::Page)
        .build()
}

/// Write one part to `<relative>.partial`, then rename it, so a crash never leaves a plausible-looking file.
fn write_part(
    dir: &Path,
    relative: &str,
    job: &Job,
    scale_factor: f64,
    interrupt: &AtomicBool,
    on_rows: &dyn Fn(u64),
) -> Result<PartWritten, TpchError> {
    let path = dir.join(relative);
    let partial = dir.join(format!("{relative}.partial"));
    let parquet_error = |e: &dyn std::fmt::Display| TpchError::Parquet { path: path.clone(), reason: e.to_string() };
    let file = std::fs::File::create(&partial).map_err(io_error(&partial, "creating"))?;
    let batches = job.table.arrow_batches(scale_factor, job.part, job.parts);
    let properties = writer_properties(job.row_group_rows);
    let mut writer =
        ArrowWriter::try_new(file, batches.schema().clone(), Some(properties)).map_err(|e| parquet_error(&e))?;
    let mut rows = 0u64;
    for batch in batches {
        if interrupt.load(Ordering::SeqCst) {
            return Err(TpchError::Interrupted);
        }
        let batch: RecordBatch = batch;
        let batch_rows = batch.num_rows() as u64;
        writer.write(&batch).map_err(|e| parquet_error(&e))?;
        rows += batch_rows;
        on_rows(batch_rows);
    }
    let metadata = writer.close().map_err(|e| parquet_error(&e))?;
    std::fs::rename(&partial, &path).map_err(io_error(&path, "renaming"))?;
    let bytes = std::fs::metadata(&path).map_err(io_error(&path, "reading size of"))?.len();
    Ok(PartWritten { rows, bytes, row_groups: metadata.num_row_groups() as u64 })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{GenerationOptions, ensure_data};
    use crate::data_dir::scale_factor_dir;

    #[test]
    fn an_interrupted_generation_leaves_nothing_behind() {
        let root = std::env::temp_dir().join(format!("envbench-tpch-interrupt-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let options = GenerationOptions { data_dir: root.clone(), scale_factor: 0.05, fresh: false, threads: Some(1) };
        let interrupt = AtomicBool::new(false);
        // Ctrl-C arrives once some rows are written.
        let error = ensure_data(&options, &interrupt, &|p| {
            if p.rows_generated > 10_000 {
                interrupt.store(true, Ordering::SeqCst);
            }
        })
        .unwrap_err();
        assert!(matches!(error, TpchError::Interrupted), "{error}");
        let sf_dir = scale_factor_dir(&root, 0.05);
        assert!(!sf_dir.exists(), "the incomplete generation was removed: {:?}", std::fs::read_dir(&sf_dir).ok());
        // The next run generates from scratch and succeeds.
        let data = ensure_data(&options, &AtomicBool::new(false), &|_| {}).unwrap();
        assert!(!data.reused);
        std::fs::remove_dir_all(&root).unwrap();
    }
}

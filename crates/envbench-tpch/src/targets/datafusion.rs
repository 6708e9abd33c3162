//! The embedded target: Apache DataFusion reading the generated Parquet files in this process.

use super::local_files::LocalFiles;
use super::{INTERRUPT_POLL, LoadInfo, LoadProgress, QueryAnswer, QueryFailure, Session, Target, TargetKind};
use crate::data::{DataSet, GenerationInfo, GenerationOptions, TableName, ensure_data};
use crate::data_dir::{read_manifest, scale_factor_dir};
use crate::error::TpchError;
use crate::refresh::UpdateSet;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::common::runtime::SpawnedTask;
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use envbench_core::sampler::StepObserver;
use envbench_core::text::count;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const REFRESH_SKIPPED: &str =
    "the DataFusion target reads immutable Parquet files, so the refresh functions RF1/RF2 are skipped";

/// DataFusion over one generated data set.
pub struct DataFusionTarget {
    /// The data, once generated (or found).
    data: Option<DataSet>,
    /// Where to generate it when it is not given.
    data_dir: std::path::PathBuf,
    runtime: Arc<tokio::runtime::Runtime>,
    context: Option<SessionContext>,
    threads: usize,
    /// DataFusion settings on top of its defaults, for experiments (`datafusion.execution.batch_size` = `16384`).
    settings: Vec<(String, String)>,
    /// The lock the run holds on the data under `data_dir`, once taken.
    lock: Option<envbench_base::lock::FileLock>,
}

impl DataFusionTarget {
    /// A target over generated data. `threads` (default: every CPU) sizes both the runtime and DataFusion's
    /// partitioning.
    pub fn new(data: DataSet, threads: Option<usize>) -> Result<DataFusionTarget, TpchError> {
        let mut target = DataFusionTarget::generating(data.dir.clone(), threads)?;
        target.data = Some(data);
        Ok(target)
    }

    /// A target that generates (or reuses) the data of the scale factor it is prepared for under `data_dir`.
    pub fn generating(data_dir: std::path::PathBuf, threads: Option<usize>) -> Result<DataFusionTarget, TpchError> {
        let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        tune_allocator();
        let runtime = Arc::new(runtime(threads, &data_dir)?);
        Ok(DataFusionTarget { data: None, data_dir, runtime, context: None, threads, settings: Vec::new(), lock: None })
    }

    /// Set DataFusion settings by name on top of envbench's own, as `SET` would (for experiments such as
    /// bench/tpch.sh's); a name DataFusion does not know is refused when the tables are registered.
    pub fn with_settings(mut self, settings: Vec<(String, String)>) -> DataFusionTarget {
        self.settings = settings;
        self
    }

    /// The session's configuration: partitions sized to the target's threads, DataFusion's defaults otherwise, then any
    /// settings given.
    fn config(&self) -> Result<SessionConfig, datafusion::error::DataFusionError> {
        let mut config = SessionConfig::new().with_target_partitions(self.threads).with_information_schema(false);
        // bench/tpch.sh measured the settings one might tune (Parquet filter pushdown and reordering, batch size, more
        // partitions than threads, the page index, dynamic filters, single-partition hash joins up to 32 MiB, row-count
        // estimates for partitioning, the statistics registry, hash joins without repartitioning, perfect-hash joins
        // on sparser keys, strings read as Utf8 instead of Utf8View) and a declared sort order of the generated files;
        // none beat DataFusion 55's defaults beyond the machine's noise, and several lost (filter pushdown: Q6 and Q12
        // 1.5x slower). DataFusion already splits file scans over partitions from 1 MiB, which spreads SF 1's smallest
        // tables over every core. mimalloc as the global allocator (datafusion-cli's) was 1.07x slower over the 22
        // queries (Q9 1.4x), so the system allocator stays; skipping partial aggregation from a 0.1 group/row ratio
        // made SF 10's Q18 1.2x faster and the 22 no faster. At SF 10 on 2 threads, filter pushdown (which lets the
        // hash joins' dynamic filters drop lineitem rows in the scan, as DuckDB's do) made Q3 1.24x and Q5 1.37x
        // slower, probe-side buffering of hash joins Q5 1.10x slower, collect-left joins up to 256 MiB Q9 1.22x slower,
        // and a declared l_orderkey/o_orderkey order Q18 1.6x slower. What did pay is in the query texts (see
        // crate::queries), LZ4_RAW files (see crate::generate), the release profile's fat LTO, and around DataFusion:
        // column chunks read in the worker's own thread (see super::local_files) and malloc's thresholds (see
        // tune_allocator).
        for (key, value) in &self.settings {
            config.options_mut().set(key, value)?;
        }
        Ok(config)
    }

    /// A session context with every table of `data` registered, its partitions sized to the target's threads.
    fn register(&self, data: &DataSet) -> Result<SessionContext, TpchError> {
        let data_error = |e: datafusion::error::DataFusionError| TpchError::DataFusion {
            dir: data.dir.clone(),
            reason: e.to_string(),
        };
        let context = SessionContext::new_with_config(self.config().map_err(data_error)?);
        context.register_object_store(ObjectStoreUrl::local_filesystem().as_ref(), Arc::new(LocalFiles::new()));
        for table in TableName::ALL {
            let dir = data.table_dir(table);
            let path = format!("{}/", dir.display());
            self.runtime
                .block_on(context.register_parquet(table.as_str(), &path, ParquetReadOptions::default()))
                .map_err(data_error)?;
        }
        Ok(context)
    }

    /// Generate the data of a scale factor, or reuse a complete generation.
    fn generate(
        &self,
        scale_factor: f64,
        fresh: bool,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<DataSet, TpchError> {
        let generating =
            fresh || read_manifest(&scale_factor_dir(&self.data_dir, scale_factor)).ok().flatten().is_none();
        let options =
            GenerationOptions { data_dir: self.data_dir.clone(), scale_factor, fresh, threads: Some(self.threads) };
        let on_progress = |p: crate::data::GenerationProgress| {
            progress(LoadProgress {
                rows_loaded: p.rows_generated,
                rows_expected: p.rows_expected,
                action: "generating",
            })
        };
        if generating {
            observer.step_started("generate");
        }
        let data = ensure_data(&options, interrupt, &on_progress);
        if generating {
            observer.step_finished("generate");
        }
        data
    }
}

impl Target for DataFusionTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::DataFusion
    }

    fn prepare(
        &mut self,
        scale_factor: f64,
        fresh: bool,
        interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<LoadInfo, TpchError> {
        if self.data.is_none() {
            self.data = Some(self.generate(scale_factor, fresh, interrupt, observer, progress)?);
        }
        let data = self.data.as_ref().expect("the data was generated or given");
        if data.scale_factor() != scale_factor {
            return Err(TpchError::BadOptions(format!(
                "the data in {} is scale factor {}, not {scale_factor}; generate that scale factor first",
                data.dir.display(),
                data.scale_factor()
            )));
        }
        observer.step_started("load");
        let started = Instant::now();
        let context = self.register(data);
        observer.step_finished("load");
        let context = context?;
        let rows = data.manifest.tables.iter().map(|(t, files)| (t.as_str().to_string(), files.rows)).collect();
        let generation = GenerationInfo::of(data);
        let replaced = match (data.replaced_format, data.replaced_for_cores) {
            (Some(format), _) => {
                let why = match format {
                    ..2 => "whose row groups were too few to scan in parallel",
                    2 => "Snappy-compressed",
                    _ => "with nation and region in one row group",
                };
                format!(" (replacing files of an older layout, manifest format {format}, {why})")
            }
            (None, Some(cores)) => format!(
                " (replacing files laid out for fewer cores: each table now has at least {} row groups for this \
                 machine's {cores})",
                data.manifest.min_row_groups
            ),
            (None, None) => String::new(),
        };
        let summary = format!(
            "{} SF {}{replaced}: {} rows, {} of Parquet in {} ({}generated in {:.1} s, {} rows/s)",
            if data.reused { "reusing" } else { "generated" },
            crate::scale::format_scale_factor(scale_factor),
            count(generation.rows as f64),
            envbench_core::ByteSize(generation.bytes),
            data.dir.display(),
            if data.reused { "earlier " } else { "" },
            generation.seconds,
            count(generation.rows_per_second)
        );
        let info = LoadInfo {
            reused: data.reused,
            rows,
            load_seconds: started.elapsed().as_secs_f64(),
            details: format!(
                "DataFusion {} over {} Parquet files in {}",
                datafusion::DATAFUSION_VERSION,
                data.manifest.tables.values().map(|t| t.files.len()).sum::<usize>(),
                data.dir.display()
            ),
            summary,
            generation: Some(generation),
        };
        self.context = Some(context);
        Ok(info)
    }

    fn thread_sweep_support(&self) -> Result<(), String> {
        Ok(())
    }

    /// A new runtime of `threads` workers and the tables registered again, partitioned for them.
    fn set_threads(&mut self, threads: usize) -> Result<(), TpchError> {
        self.runtime = Arc::new(runtime(threads, &self.data_dir)?);
        self.threads = threads;
        if let Some(data) = &self.data {
            self.context = Some(self.register(data)?);
        }
        Ok(())
    }

    fn check(&self, scale_factor: f64) -> Result<(), TpchError> {
        crate::data_dir::check_only_ours(&self.data_dir, &scale_factor_dir(&self.data_dir, scale_factor))
    }

    /// The file lock beside the scale factor's data: exclusive to generate (after checking the free space, before
    /// any directory is created), shared to read complete data.
    fn lock(&mut self, scale_factor: f64, fresh: bool, _writes: bool) -> Result<(), TpchError> {
        let must_generate =
            |target: &mut DataFusionTarget| Ok(fresh || !crate::data::reusable(&target.data_dir, scale_factor)?);
        envbench_base::lock::take_as_needed(self, must_generate, |target, exclusive| {
            target.lock = None;
            if exclusive {
                crate::data_dir::check_space(&target.data_dir, scale_factor)?;
            }
            target.lock = Some(crate::data_dir::lock(&target.data_dir, scale_factor, exclusive)?);
            Ok(())
        })
        .map(|_| ())
    }

    fn session(&self) -> Result<Box<dyn Session>, TpchError> {
        let context = self.context.clone().ok_or_else(|| {
            TpchError::BadOptions("the DataFusion target was not prepared; call prepare before opening sessions".into())
        })?;
        Ok(Box::new(DataFusionSession { runtime: self.runtime.clone(), context }))
    }

    fn refresh_support(&self) -> Result<(), String> {
        Err(REFRESH_SKIPPED.to_string())
    }
}

/// glibc's malloc set up for DataFusion's allocations, once per process: blocks up to 32 MiB (glibc's largest mmap
/// threshold) come from its heaps rather than fresh mappings, and up to 512 MiB of freed heap is kept instead of given
/// back. By default glibc maps a new large block (a hash table, a decoded column chunk) from the kernel when its heap
/// has none free, and unmaps it when freed: in the power test at SF 1 on 2 threads (3 measured runs) that was 410-510
/// K page faults, each a zeroed page, against 140-150 K with these thresholds, and TLB shoot-downs across the workers;
/// the geometric mean was 1.04x slower over 8 alternating runs each (Q21 1.3x, Q18 1.18x), and with the worker's own
/// reads (see [`super::local_files`]) the two together made it 1.19x faster. Trimming freed memory at glibc's default
/// 128 KiB with the same mmap threshold was 1.25x slower. A user's own `GLIBC_TUNABLES` for malloc wins.
fn tune_allocator() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static TUNED: std::sync::Once = std::sync::Once::new();
        TUNED.call_once(|| {
            let users = std::env::var("GLIBC_TUNABLES").is_ok_and(|tunables| tunables.contains("glibc.malloc."));
            if !users {
                // SAFETY: mallopt only changes malloc's thresholds; it is safe to call while other threads allocate.
                unsafe {
                    libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
                    libc::mallopt(libc::M_TRIM_THRESHOLD, 512 << 20);
                }
            }
        });
    }
}

/// The runtime the queries run on: `threads` workers.
fn runtime(threads: usize, data_dir: &std::path::Path) -> Result<tokio::runtime::Runtime, TpchError> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("envbench-datafusion")
        .enable_time()
        .build()
        .map_err(|e| TpchError::Io {
            path: data_dir.to_path_buf(),
            action: "starting the DataFusion runtime",
            source: e,
        })
}

struct DataFusionSession {
    runtime: Arc<tokio::runtime::Runtime>,
    context: SessionContext,
}

impl Session for DataFusionSession {
    fn query(
        &mut self,
        sql: &str,
        timeout: Option<Duration>,
        interrupt: &AtomicBool,
    ) -> Result<QueryAnswer, QueryFailure> {
        let context = self.context.clone();
        let sql = sql.to_string();
        let deadline = timeout.map(|t| Instant::now() + t);
        self.runtime.block_on(async move {
            // The query runs as a task on the runtime's workers, not in this thread's `block_on`, which would run the
            // plan's top operators here: one thread more than the count the user asked for. Dropping the task (on an
            // early return) aborts the query, so waiting in slices is enough to honor both limits.
            let task = SpawnedTask::spawn(async move {
                let frame = context.sql(&sql).await?;
                frame.collect().await
            });
            let mut done = std::pin::pin!(task.join());
            loop {
                if interrupt.load(Ordering::SeqCst) {
                    return Err(QueryFailure::Cancelled);
                }
                let slice = match deadline {
                    Some(deadline) => {
                        let left = deadline.saturating_duration_since(Instant::now());
                        if left.is_zero() {
                            return Err(QueryFailure::TimedOut);
                        }
                        left.min(INTERRUPT_POLL)
                    }
                    None => INTERRUPT_POLL,
                };
                if let Ok(joined) = tokio::time::timeout(slice, &mut done).await {
                    let result = joined.map_err(|e| QueryFailure::Error(format!("the query stopped: {e}")))?;
                    return result
                        .map_err(|e| QueryFailure::Error(e.to_string()))
                        .and_then(|batches| to_answer(&batches));
                }
            }
        })
    }

    fn refresh_insert(&mut self, _update_set: &UpdateSet) -> Result<(), QueryFailure> {
        Err(QueryFailure::Error(REFRESH_SKIPPED.to_string()))
    }

    fn refresh_delete(&mut self, _update_set: &UpdateSet) -> Result<(), QueryFailure> {
        Err(QueryFailure::Error(REFRESH_SKIPPED.to_string()))
    }
}

/// Arrow batches as text rows.
fn to_answer(batches: &[RecordBatch]) -> Result<QueryAnswer, QueryFailure> {
    let mut answer = QueryAnswer::default();
    let options = FormatOptions::default();
    for batch in batches {
        if answer.columns.is_empty() {
            answer.columns = batch.schema().fields().iter().map(|f| f.name().clone()).collect();
        }
        let formatters = batch
            .columns()
            .iter()
            .map(|column| ArrayFormatter::try_new(column.as_ref(), &options))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| QueryFailure::Error(format!("formatting the answer: {e}")))?;
        for row in 0..batch.num_rows() {
            answer.rows.push(formatters.iter().map(|f| f.value(row).to_string()).collect());
        }
    }
    Ok(answer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use envbench_core::sampler::NoSteps;

    #[test]
    fn readers_share_the_data_and_a_generating_run_is_alone() {
        let root = std::env::temp_dir().join(format!("envbench-tpch-lock-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let data_dir = root.join("envbench-tpch");
        let target = || DataFusionTarget::generating(data_dir.clone(), Some(1)).unwrap();
        // No data yet: the first run must generate, so it holds the lock alone, and a second is refused, naming it.
        let mut first = target();
        first.lock(0.01, false, false).unwrap();
        let refused = target().lock(0.01, false, false).unwrap_err();
        assert!(matches!(refused, TpchError::Busy(_)), "{refused}");
        let message = refused.to_string();
        assert!(message.contains("the TPC-H data of SF 0.01 is in use by another envbench run (pid "), "{message}");
        // Another scale factor's data has a lock of its own.
        target().lock(0.02, false, false).unwrap();
        first.prepare(0.01, false, &AtomicBool::new(false), &NoSteps, &|_| {}).unwrap();
        drop(first);
        // Complete data is read under a shared lock: readers run side by side, a run that would regenerate waits.
        let (mut reader, mut other_reader) = (target(), target());
        reader.lock(0.01, false, false).unwrap();
        other_reader.lock(0.01, false, false).unwrap();
        let refused = target().lock(0.01, true, false).unwrap_err().to_string();
        assert!(refused.contains("in use by another envbench run that reads it"), "{refused}");
        drop((reader, other_reader));
        target().lock(0.01, true, false).unwrap();
        std::fs::remove_dir_all(&root).unwrap();
    }
}

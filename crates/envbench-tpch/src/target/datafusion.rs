//! The embedded target: Apache DataFusion reading the generated Parquet files in this process.

use super::{INTERRUPT_POLL, LoadInfo, LoadProgress, QueryAnswer, QueryFailure, Session, Target, TargetKind};
use crate::TpchError;
use crate::data::{DataSet, TableName};
use crate::refresh::UpdateSet;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::prelude::{ParquetReadOptions, SessionConfig, SessionContext};
use envbench_core::sampler::StepObserver;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const REFRESH_SKIPPED: &str =
    "the DataFusion target reads immutable Parquet files, so the refresh functions RF1/RF2 are skipped";

/// DataFusion over one generated data set.
pub struct DataFusionTarget {
    data: DataSet,
    runtime: Arc<tokio::runtime::Runtime>,
    context: Option<SessionContext>,
    threads: usize,
}

impl DataFusionTarget {
    /// A target over generated data. `threads` (default: every CPU) sizes both the runtime and DataFusion's
    /// partitioning.
    pub fn new(data: DataSet, threads: Option<usize>) -> Result<DataFusionTarget, TpchError> {
        let threads = threads.unwrap_or_else(|| std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("envbench-datafusion")
            .enable_time()
            .build()
            .map_err(|e| TpchError::Io {
                path: data.dir.clone(),
                action: "starting the DataFusion runtime",
                source: e,
            })?;
        Ok(DataFusionTarget { data, runtime: Arc::new(runtime), context: None, threads })
    }
}

impl Target for DataFusionTarget {
    fn kind(&self) -> TargetKind {
        TargetKind::DataFusion
    }

    fn prepare(
        &mut self,
        scale_factor: f64,
        _fresh: bool,
        _interrupt: &AtomicBool,
        observer: &dyn StepObserver,
        _progress: &(dyn Fn(LoadProgress) + Sync),
    ) -> Result<LoadInfo, TpchError> {
        if self.data.scale_factor() != scale_factor {
            return Err(TpchError::BadOptions(format!(
                "the data in {} is scale factor {}, not {scale_factor}; generate that scale factor first",
                self.data.dir.display(),
                self.data.scale_factor()
            )));
        }
        observer.step_started("load");
        let started = Instant::now();
        let config = SessionConfig::new().with_target_partitions(self.threads).with_information_schema(false);
        let context = SessionContext::new_with_config(config);
        let data_error = |e: datafusion::error::DataFusionError| TpchError::DataFusion {
            dir: self.data.dir.clone(),
            reason: e.to_string(),
        };
        for table in TableName::ALL {
            let dir = self.data.table_dir(table);
            let path = format!("{}/", dir.display());
            self.runtime
                .block_on(context.register_parquet(table.as_str(), &path, ParquetReadOptions::default()))
                .map_err(data_error)?;
        }
        observer.step_finished("load");
        self.context = Some(context);
        let rows = self.data.manifest.tables.iter().map(|(t, files)| (t.as_str().to_string(), files.rows)).collect();
        Ok(LoadInfo {
            reused: self.data.reused,
            rows,
            load_seconds: started.elapsed().as_secs_f64(),
            details: format!(
                "DataFusion {} over {} Parquet files in {}",
                datafusion::DATAFUSION_VERSION,
                self.data.manifest.tables.values().map(|t| t.files.len()).sum::<usize>(),
                self.data.dir.display()
            ),
        })
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
            let work = async move {
                let frame = context.sql(&sql).await?;
                frame.collect().await
            };
            let mut work = std::pin::pin!(work);
            // Dropping the future cancels the query, so polling in slices is enough to honor both limits.
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
                if let Ok(done) = tokio::time::timeout(slice, &mut work).await {
                    return done
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

//! A planned ranread run: the database file (its size policy) or table built or reused, then the sweep.

use crate::document::{Comparable, RanreadDocument, RanreadMeasured};
use crate::error::RanReadError;
use crate::options::RanreadRun;
use crate::{
    FileOptions, FileRanRead, FileState, JobsPlan, PostgresOptions, PostgresRanRead, StepFigures, StepLimit,
    StepRunner, TABLE, sweep,
};
use envbench_core::ByteSize;
use envbench_core::model::redact_secrets;
use envbench_core::workload::{Measured, Planned, RunContext, WorkloadError};
use envbench_io::{cache_honesty, select_engine};
use std::path::{Path, PathBuf};

/// The default database file with O_DIRECT: large enough to defeat a storage controller's cache.
pub const DEFAULT_DIRECT_FILE_BYTES: u64 = 8 << 30;
/// The database file size when the user gives none: the default with O_DIRECT, twice the RAM buffered (so the page
/// cache cannot hold it), in whole 4 KiB pages.
pub fn default_file_bytes(direct: bool, ram_bytes: u64) -> u64 {
    let size = if direct { DEFAULT_DIRECT_FILE_BYTES } else { 2 * ram_bytes };
    size / 4096 * 4096
}

/// A target ready for the sweep.
pub(crate) struct Prepared {
    pub(crate) runner: Box<dyn StepRunner>,
    pub(crate) parameters: Comparable,
    pub(crate) flags: Vec<String>,
    /// The database file, in file mode.
    pub(crate) database_file: Option<PathBuf>,
    /// The schema of the table, with --db.
    pub(crate) namespace: Option<envbench_sql::Namespace>,
}

impl RanreadRun {
    /// Build or reuse the database file or table.
    pub(crate) fn prepare(&self, context: &RunContext<'_>) -> Result<Prepared, RanReadError> {
        let progress = context.progress;
        match &self.db {
            Some(url) => {
                let options = PostgresOptions {
                    url: url.clone(),
                    size_bytes: self.size_bytes,
                    fresh: self.fresh,
                    namespace: self.namespace.clone(),
                    agent: self.fleet_agent,
                };
                let started = std::time::Instant::now();
                let mut on_rows = |done: i64, total: i64| {
                    let bar =
                        envbench_core::text::progress_bar(done.max(0) as u64, total.max(0) as u64, started.elapsed());
                    progress.update(&format!("building the table of {total} pages: {bar}"));
                };
                let target = PostgresRanRead::prepare(&options, context.interrupt, &mut on_rows)?;
                let info = &target.info;
                progress.line(&format!(
                    "{} table {}: {} pages ({}), shared_buffers {}, PostgreSQL {}",
                    if info.reused { "reusing" } else { "built" },
                    target.namespace().qualify(TABLE),
                    info.rows,
                    ByteSize(info.table_bytes as u64),
                    ByteSize(info.shared_buffers_bytes as u64),
                    info.server_version
                ));
                let parameters = Comparable::Postgres {
                    block_bytes: info.block_bytes as u64,
                    table_pages: info.rows,
                    limit: self.limit,
                };
                let namespace = Some(target.namespace().clone());
                Ok(Prepared { runner: Box::new(target), parameters, flags: Vec::new(), database_file: None, namespace })
            }
            None => {
                let selection = select_engine(self.engine)?;
                let ram = context.fingerprint.memory.total_bytes.unwrap_or(0);
                let size = self.size_bytes.map_or_else(|| default_file_bytes(self.direct, ram), |s| s / 4096 * 4096);
                let cache = cache_honesty(self.direct, size);
                if let Some(warning) = cache.warning() {
                    progress.warn(&warning);
                }
                let options = FileOptions {
                    dir: self.dir.clone(),
                    data_bytes: size,
                    block_bytes: self.block_bytes,
                    direct: self.direct,
                    engine: selection.kind,
                    fresh: self.fresh,
                };
                let started = std::time::Instant::now();
                let mut on_bytes = |done: u64, total: u64| {
                    progress.update(&format!(
                        "filling the database file of {}: {}",
                        ByteSize(total),
                        envbench_core::text::progress_bar(done, total, started.elapsed())
                    ));
                };
                context.steps.step_started("prepare");
                let target = FileRanRead::prepare(options, context.interrupt, &mut on_bytes);
                context.steps.step_finished("prepare");
                let target = target?;
                progress.line(&format!(
                    "{} {} ({}), {} reads of {}, engine {}",
                    match target.state {
                        FileState::Reused => "reusing",
                        FileState::Created => "created",
                    },
                    target.path().display(),
                    ByteSize(size),
                    if self.direct { "O_DIRECT" } else { "buffered" },
                    ByteSize(self.block_bytes),
                    selection.kind.as_str()
                ));
                let parameters = Comparable::File {
                    block_bytes: self.block_bytes,
                    file_size_bytes: size,
                    direct: self.direct,
                    engine: selection.kind.as_str().to_string(),
                    limit: self.limit,
                };
                let path = target.path().to_path_buf();
                Ok(Prepared {
                    runner: Box::new(target),
                    parameters,
                    flags: cache.flags(),
                    database_file: Some(path),
                    namespace: None,
                })
            }
        }
    }
}

impl Planned for RanreadRun {
    fn data_dir(&self) -> &Path {
        &self.dir
    }

    fn drives_local_server(&self) -> bool {
        self.db
            .as_deref()
            .and_then(|url| envbench_sql::DatabaseUrl::parse(url).ok())
            .is_some_and(|url| !url.dialect().ops().embedded && url.is_local())
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let Prepared { mut runner, parameters, flags, database_file, .. } = self.prepare(context)?;
        context.progress.line(&format!(
            "sweep: {}, each step {} per job, target mean response time {} ms{}",
            match &self.jobs {
                JobsPlan::Auto { max_jobs } => format!("jobs 1, 2, 4, ... up to {max_jobs}"),
                JobsPlan::List(list) =>
                    format!("jobs {}", list.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")),
            },
            match self.limit {
                StepLimit::Iterations(n) => format!("{n} reads"),
                StepLimit::Duration(d) => envbench_core::units::format_duration(d),
            },
            self.targets.latency_ms,
            self.targets.iops.map(|i| format!(", target {i:.0} IOPS")).unwrap_or_default()
        ));
        let mut on_step = |step: &StepFigures| {
            context.progress.line(&format!(
                "  {:>4} jobs: {:>9.0} IOPS, {:.3} ms mean, {:.3} ms p99",
                step.jobs, step.iops, step.mean_ms, step.p99_ms
            ));
        };
        let outcome = sweep(
            runner.as_mut(),
            &self.jobs,
            self.targets,
            self.limit,
            context.steps,
            context.interrupt,
            &mut on_step,
        );
        let target = redact_secrets(&runner.target());
        drop(runner);
        let outcome = outcome?;
        if let Some(path) = database_file
            && self.no_keep
        {
            std::fs::remove_file(&path).map_err(|e| {
                WorkloadError::failure(format!("{}: cannot remove the database file ({e})", path.display()))
            })?;
        }
        Ok(Box::new(RanreadMeasured { document: RanreadDocument { target, parameters, outcome }, flags }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_sizes_follow_the_cache_policy() {
        assert_eq!(default_file_bytes(true, 64 << 30), DEFAULT_DIRECT_FILE_BYTES);
        assert_eq!(default_file_bytes(false, (1 << 30) + 100), 2 << 30);
        assert_eq!(default_file_bytes(false, 3 << 30) % 4096, 0);
    }
}

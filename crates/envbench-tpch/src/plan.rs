//! From `envbench tpch`'s arguments to a run ready to start ([`TpchRun`]): the checks the value parsers cannot make
//! alone (bounds that depend on each other, the schema name, the directory), the target opened (a server reached, so
//! a wrong URL or a stopped server is refused before anything is stored), and the run's options. A single host's run
//! and a fleet's coordinator and agents plan alike.

use crate::error::TpchError;
use crate::options::{DATA_DIR, MAX_SETS, MAX_USERS, TpchArgs};
use crate::run::RunOptions;
use crate::targets::OpenOptions;
use crate::targets::Target;
use envbench_core::workload::WorkloadError;
use std::path::PathBuf;

pub(crate) fn plan(args: &TpchArgs) -> Result<TpchRun, WorkloadError> {
    if args.sets == 0 {
        return Err(WorkloadError::usage("--sets must be at least 1"));
    }
    if args.sets > MAX_SETS {
        return Err(WorkloadError::usage(format!("--sets {}: give at most {MAX_SETS} query sets", args.sets)));
    }
    match args.users {
        Some(0) => {
            return Err(WorkloadError::usage(
                "--users must be at least 1 (or leave it out for the TPC-H minimum for the scale factor)",
            ));
        }
        Some(users) if users > MAX_USERS => {
            return Err(WorkloadError::usage(format!(
                "--users {users}: at most {MAX_USERS} virtual users (each is a thread and a connection)"
            )));
        }
        _ => {}
    }
    let thread_counts = args.threads.as_ref().map(|t| t.0.clone()).unwrap_or_default();
    let sweep = if thread_counts.len() > 1 { thread_counts.clone() } else { Vec::new() };
    if !sweep.is_empty() && args.throughput_only {
        return Err(WorkloadError::usage(
            "--threads with several counts runs the power test at each count: leave out --throughput-only",
        ));
    }
    if let Some(schema) = &args.schema {
        envbench_core::text::check_name("--schema", schema).map_err(WorkloadError::usage)?;
        envbench_sql::namespace::check_schema_name(schema)
            .map_err(|e| WorkloadError::usage(format!("--schema: {e}")))?;
    }
    if let Some(dir) = &args.dir
        && !dir.is_dir()
    {
        return Err(WorkloadError::usage(format!(
            "--dir {}: not a directory; give an existing directory",
            dir.display()
        )));
    }
    let data_parent = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    // A server is reached here, before anything is stored: a wrong URL or a stopped server is the user's to fix.
    // A sweep generates with every CPU, then runs at each count.
    let threads = if sweep.is_empty() { thread_counts.first().copied() } else { None };
    let target = crate::targets::open(
        &args.target,
        &OpenOptions { data_dir: data_parent.join(DATA_DIR), schema: args.schema.clone(), threads },
    )?;
    target.check(args.sf)?;
    if !sweep.is_empty() {
        // A server refuses a thread sweep here, before anything is stored.
        target.thread_sweep_support().map_err(WorkloadError::usage)?;
    }
    // The directory whose storage the fingerprint describes and the sampler watches.
    let watched = match (&args.dir, target.data_directory()) {
        (Some(dir), _) => dir.clone(),
        (None, Some(server_dir)) => server_dir.to_path_buf(),
        (None, None) => PathBuf::from("."),
    };
    let mut options = RunOptions::new(args.sf);
    options.users = args.users;
    options.sets = args.sets;
    options.validate = args.validate;
    options.seed = args.seed;
    options.query_timeout = args.query_timeout;
    options.power = !args.throughput_only;
    options.throughput = !args.power_only && sweep.is_empty();
    Ok(TpchRun { target, options, fresh: args.fresh, cold: args.cold, watched, sweep })
}

/// Everything the arguments say, checked, with the target opened (a server reached).
pub(crate) struct TpchRun {
    pub(crate) target: Box<dyn Target>,
    pub(crate) options: RunOptions,
    pub(crate) fresh: bool,
    pub(crate) cold: bool,
    /// The directory whose storage the run describes.
    pub(crate) watched: PathBuf,
    /// With `--threads 1,2,4`: the power test at each thread count (empty: one run).
    pub(crate) sweep: Vec<usize>,
}

impl TpchRun {
    /// Take the lock the run holds on its data until it ends (see [`Target::lock`]): after every check, before
    /// anything is generated or loaded. A run writes when it runs the refresh functions.
    pub(crate) fn lock(&mut self) -> Result<(), TpchError> {
        let writes = self.target.refresh_support().is_ok() && (self.options.power || self.options.throughput);
        self.target.lock(self.options.scale_factor, self.fresh, writes)
    }
}

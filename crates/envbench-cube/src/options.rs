//! The command line of `envbench cube`: a run's options and `cube get`'s, each typed by clap as it parses them (lists
//! of counts, the compression, sizes and durations), so a wrong value is refused with what to give instead.

use crate::block::Compression;
use clap::{Args, Subcommand};
use envbench_core::ByteSize;
use envbench_core::DurationArg;
use std::path::PathBuf;

/// The arguments of `envbench cube`.
#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct CubeArgs {
    #[command(subcommand)]
    pub action: Option<CubeAction>,
    #[command(flatten)]
    pub run: CubeRunArgs,
}

#[derive(Subcommand, Debug)]
pub enum CubeAction {
    /// Read one cell (or a small grid with --grid) from the cube a finished run left in --dir (reads only).
    Get(CubeGetArgs),
}

#[derive(Args, Debug)]
pub struct CubeRunArgs {
    /// Working directory: generated data in DIR/data (reused), the cube in DIR/cube.
    #[arg(long, default_value = "envbench-cube")]
    pub dir: PathBuf,
    /// Data volume: 1.0 is EssBench-sized (about 10 million native cells and 10 million CSV rows).
    #[arg(long, default_value_t = 1.0)]
    pub scale: f64,
    /// Seed of the data generator.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// How many times the 8-step sequence runs.
    #[arg(long, default_value_t = 3)]
    pub repeat: u32,
    /// Parallel native load threads; a list such as 2,4,8 sweeps them.
    #[arg(long, value_name = "N[,N...]", value_parser = count_list("load-threads", MAX_THREADS))]
    pub load_threads: Option<CountList>,
    /// Calculation threads (the CALCPARALLEL analog); a list such as 1,2,4 sweeps them.
    #[arg(long, value_name = "N[,N...]", value_parser = count_list("calc-threads", MAX_THREADS))]
    pub calc_threads: Option<CountList>,
    /// Allocation threads (the FIXPARALLEL analog, at most 8); a list sweeps them.
    #[arg(long, value_name = "N[,N...]", value_parser = count_list("fix-threads", MAX_THREADS))]
    pub fix_threads: Option<CountList>,
    /// Dense restructure threads; a list sweeps them.
    #[arg(long, value_name = "N[,N...]", value_parser = count_list("restructure-threads", MAX_THREADS))]
    pub restructure_threads: Option<CountList>,
    /// Block compression: bitmap (default), zlib or none.
    #[arg(long, default_value = "bitmap", value_parser = parse_compression)]
    pub compression: Compression,
    /// Bound of the cache of expanded blocks, e.g. 256MiB.
    #[arg(long, default_value = "256MiB", value_name = "SIZE")]
    pub data_cache: ByteSize,
    /// Open the page files with O_DIRECT.
    #[arg(long)]
    pub direct: bool,
    /// After the last sequence, concurrent users retrieve grids from the loaded cube (a mix of summary,
    /// drill-down and wide grids), cold, warm, and while aggregations run.
    #[arg(long)]
    pub retrievals: bool,
    /// Retrieval users, e.g. 1,4,8 (implies --retrievals; default 1,4).
    #[arg(long, value_name = "N[,N...]", value_parser = count_list("retrieval-users", MAX_RETRIEVAL_USERS))]
    pub retrieval_users: Option<CountList>,
    /// How long each retrieval pass runs (default 10s).
    #[arg(long, value_name = "DURATION")]
    pub retrieval_duration: Option<DurationArg>,
    /// Retrievals alone only: skip the pass during a background aggregation.
    #[arg(long)]
    pub retrievals_alone: bool,
}

#[derive(Args, Debug)]
pub struct CubeGetArgs {
    /// One member per dimension, e.g. "Years=FY19, Scenario=Actual, Version=Final, Currency=USD, Entity=TotalEntity,
    /// Product=Product, Account=NetIncome, Period=Q1"; with --grid, leave the grid's dimensions out.
    pub query: String,
    /// A grid: rows and columns, each a dimension or Dim=Member (that member's children), e.g. --grid Entity Period.
    #[arg(long, num_args = 2, value_names = ["ROWS", "COLUMNS"])]
    pub grid: Option<Vec<String>>,
    /// The working directory of the cube run.
    #[arg(long, default_value = "envbench-cube")]
    pub dir: PathBuf,
}

/// The most threads one step may use.
const MAX_THREADS: usize = 1024;
/// The most concurrent retrieval users.
const MAX_RETRIEVAL_USERS: usize = 256;

/// A comma-separated list of counts such as `1,2,4` (one count is a list of one), each from 1 to a maximum and none
/// given twice.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountList(pub Vec<usize>);

/// The clap parser of a `--OPTION N[,N...]` list of counts from 1 to `max`; its errors name the option and say what
/// to give, e.g. "--calc-threads '1,x': give whole numbers from 1 to 1024, e.g. --calc-threads 1,2,4".
fn count_list(option: &'static str, max: usize) -> impl Fn(&str) -> Result<CountList, String> + Clone + Send + Sync {
    move |text| envbench_core::workload::count_list(option, Some(text), max).map(CountList).map_err(|e| e.to_string())
}

/// `--compression`: bitmap, zlib or none.
fn parse_compression(text: &str) -> Result<Compression, String> {
    text.parse::<Compression>().map_err(|e| format!("--compression: {e}"))
}

/// The values of a thread list, empty when the option was not given.
pub(crate) fn thread_list(list: &Option<CountList>) -> Vec<usize> {
    list.as_ref().map_or_else(Vec::new, |l| l.0.clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_typed_while_clap_parses_them() {
        let threads = count_list("calc-threads", MAX_THREADS);
        assert_eq!(threads("4"), Ok(CountList(vec![4])));
        assert_eq!(threads("1, 2,4"), Ok(CountList(vec![1, 2, 4])));
        let error = threads("1,x").unwrap_err();
        assert!(error.contains("--calc-threads '1,x': give whole numbers from 1 to 1024"), "{error}");
        assert!(threads("0").unwrap_err().contains("--calc-threads"));
        assert!(threads("2,2,2").unwrap_err().contains("--calc-threads: 2 is given twice"));
        let users = count_list("retrieval-users", MAX_RETRIEVAL_USERS);
        assert!(users("1000").unwrap_err().contains("from 1 to 256"));

        assert_eq!(parse_compression("zlib"), Ok(Compression::Zlib));
        assert_eq!(parse_compression(" None "), Ok(Compression::None));
        let error = parse_compression("lz9").unwrap_err();
        assert!(error.starts_with("--compression: ") && error.contains("use bitmap, zlib or none"), "{error}");
        assert_eq!(thread_list(&None), Vec::<usize>::new());
    }

    #[test]
    fn the_command_line_refuses_bad_lists_as_it_parses() {
        let parse = |line: &[&str]| envbench_core::workload::parse_args::<CubeArgs>("cube", line);
        let refused = parse(&["--load-threads", "1,x"]).unwrap_err();
        assert!(refused.to_string().contains("--load-threads '1,x': give whole numbers"), "{refused}");
        let args = parse(&["--calc-threads", "1,2", "--compression", "zlib"]).unwrap();
        assert_eq!(args.run.calc_threads, Some(CountList(vec![1, 2])));
        assert_eq!(args.run.compression, Compression::Zlib);
        assert_eq!(args.run.load_threads, None);
    }
}

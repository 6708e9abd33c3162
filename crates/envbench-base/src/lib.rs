//! The ground floor envbench's workloads and its results store stand on, below the I/O engine: the file lock a run
//! holds on the files it owns ([`lock`]), a fast seeded RNG for offsets and fill data ([`rng`]), the mergeable latency
//! histogram every workload records into ([`latency`]), the checks of a place before files are made in it: a
//! directory, its free space, its file system ([`place`]), dropping the OS page cache ([`page_cache`]), and waits that
//! a stop request cuts short ([`wait`]).
//!
//! It links no I/O engine and no database driver, so the store can take a lock and a workload can keep a histogram
//! without io_uring. It does not measure, print or store anything.

pub mod latency;
pub mod lock;
pub mod page_cache;
pub mod place;
pub mod rng;
pub mod wait;

//! `envbench htap`: transactions and analytics on the same live tables, to answer "can this server take the reports
//! on the primary, or do we need a replica?".
//!
//! Modelled on the CH-benCHmark (R. Cole, F. Funke, L. Giakoumakis, W. Guy, A. Kemper, S. Krompass, H. Kuno,
//! R. Nambiar, T. Neumann, M. Poess, K.-U. Sattler, M. Seibold, E. Simon, F. Waas: "The mixed workload CH-benCHmark",
//! DBTest 2011; the queries as published at <https://db.in.tum.de/research/projects/CHbenCHmark/>): oltp's TPC-C
//! tables, loader, transactions and users ([`envbench_oltp`]), plus the CH tables supplier, nation and region
//! ([`ch`]) and the 22 analytic queries over all of them ([`queries`]), run by analytic streams beside the
//! transactional users ([`streams`]). Each step runs the transactional users with a number of streams; step 0 is the
//! transactions' baseline and each count of streams alone is the analytics' own, so the run shows what each stream
//! costs the transactions and how much slower the analytics run beside them. Behind the registration ([`HTAP`]), the
//! command line, the plan, the run's document, its records, its tables and its read-back are private modules of one
//! job each.
//!
//! On PostgreSQL and MariaDB/MySQL. These are CH-benCHmark- and TPC-derived workloads, not TPC benchmarks: their
//! results are not TPC results and must not be called so.

pub mod ch;
mod document;
mod fleet;
mod measured;
mod options;
pub mod queries;
mod readback;
mod render;
mod run;
mod source;
pub mod streams;
mod workload;

pub use source::{SOURCE, WORKLOAD, WORKLOAD_VERSION};
pub use workload::HTAP;

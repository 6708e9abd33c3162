//! The workload's name and version, and its two profiles: what the users run (TPC-C-derived order entry, or
//! pgbench's TPC-B-like transaction), with the words each is measured in.

use crate::transactions::Kind;
use serde::{Deserialize, Serialize};

/// The name of the workload.
pub const WORKLOAD: &str = "oltp";
/// Bumped when results stop being comparable with older ones. Version 2: `tpm` is one figure over the whole
/// measured window (as the terminal prints it), and `tpm_window` holds the per-window samples; version 1 stored
/// per-second samples under `tpm`, so a median of seconds was compared with it.
pub const WORKLOAD_VERSION: u32 = 2;
/// What every record of an oltp run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };

/// What the users run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// TPC-C-derived order entry.
    Tpcc,
    /// pgbench's TPC-B-like transaction.
    Tpcb,
}

impl Profile {
    pub fn parse(text: &str) -> Option<Profile> {
        match text {
            "tpcc" => Some(Profile::Tpcc),
            "tpcb" => Some(Profile::Tpcb),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Profile::Tpcc => "tpcc",
            Profile::Tpcb => "tpcb",
        }
    }

    /// The transactions it runs.
    pub fn kinds(self) -> &'static [Kind] {
        match self {
            Profile::Tpcc => &Kind::TPCC,
            Profile::Tpcb => &[Kind::TpcB],
        }
    }

    /// The transaction whose p95 judges the knee.
    pub fn judged_kind(self) -> Kind {
        match self {
            Profile::Tpcc => Kind::NewOrder,
            Profile::Tpcb => Kind::TpcB,
        }
    }

    /// What the scale counts.
    pub fn scale_word(self) -> &'static str {
        match self {
            Profile::Tpcc => "warehouses",
            Profile::Tpcb => "scale",
        }
    }

    /// The throughput the knee is judged by, and its unit.
    pub fn throughput_label(self) -> &'static str {
        match self {
            Profile::Tpcc => "NOPM",
            Profile::Tpcb => "TPS",
        }
    }
}

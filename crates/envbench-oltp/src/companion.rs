//! Tables another workload keeps beside the TPC-C tables, in the same namespace and under the same lock
//! (`envbench htap`'s CH-benCHmark supplier, nation and region): looked at when a run plans, built while the run
//! holds the tables alone, and refused, never touched, where relations of their names are not envbench's.

use crate::error::OltpError;
use envbench_sql::{Connection, Namespace};
use std::sync::atomic::AtomicBool;

/// What a namespace holds of a companion's tables.
#[derive(Clone, Debug, PartialEq)]
pub enum CompanionState {
    /// Complete, of the version this envbench builds.
    Complete,
    /// Missing, unfinished or of another version: built again by a run that holds the tables alone.
    Missing,
    /// Relations of its names that envbench did not make, each described: refused.
    Foreign(Vec<String>),
}

/// Tables kept beside the TPC-C tables.
pub trait Companion: Sync {
    /// What they are, for messages ("the CH-benCHmark tables").
    fn name(&self) -> &'static str;

    /// The workload whose tables they are (`htap`): the holder a refused lock names.
    fn workload(&self) -> &'static str;

    /// What `namespace` holds of them.
    fn state(&self, connection: &mut dyn Connection, namespace: &Namespace) -> Result<CompanionState, OltpError>;

    /// Build them anew, replacing only what envbench made of them; the caller holds the tables alone.
    fn build(
        &self,
        connection: &mut dyn Connection,
        namespace: &Namespace,
        interrupt: &AtomicBool,
    ) -> Result<(), OltpError>;

    /// Drop what envbench made of them: the names dropped, and those left as not envbench's.
    fn drop_own(
        &self,
        connection: &mut dyn Connection,
        namespace: &Namespace,
    ) -> Result<crate::schema::Dropped, OltpError>;
}

//! Many hosts, one result: a workload run on N hosts at once, started together and merged, with the shared results
//! store as the place they meet.
//!
//! No daemon of our own: the coordinator ([`coordinator::CoordinatorRun`]) starts agents over the system's OpenSSH,
//! as local processes, or leaves that to the user's tools ([`transport`]); agents ([`agent::AgentRun`]) and the
//! coordinator talk through an append-only message board in the store ([`board`]), whose database server's clock is
//! the one clock: a step is released for an instant of it, and each agent measures its own clock's offset to it, so
//! the start skew is measured, not assumed. What a step is and how the agents' figures merge is the workload's
//! ([`envbench_core::fleet`]); both sides run through the binary's one driver, so every agent's run and the merged
//! run are stored, fingerprinted and sampled like any other.

pub mod agent;
pub mod board;
pub mod coordinator;
pub mod strip;
pub mod transport;

pub use agent::{AgentRun, COORDINATOR_SILENCE_S, join};
pub use board::{Board, FleetSpec};
pub use coordinator::{CoordinatorRun, FleetMeasured};
pub use envbench_core::fleet::FLEET_ATTACHMENT;
pub use transport::{MAX_SSH_AGENTS, SshOptions, Transport};

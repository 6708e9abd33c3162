//! An agent (`envbench agent --fleet ID`): joins a fleet from its board, prepares, reads its clock against the
//! database server's, then runs its share of each step at the instant the coordinator released it, and stores its
//! own run through the one driver like any run.

use crate::board::{self, Board, COORDINATOR, FleetSpec, Ready, StepDone, StepRelease, Stop, kind};
use envbench_core::fleet::FleetAgent;
use envbench_core::workload::{Measured, Planned, RunContext, WorkloadError};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long an agent waits without a word from the coordinator (it posts one every few seconds) before it stops
/// on its own, removing its files: an agent never outlives its coordinator by more than this.
pub const COORDINATOR_SILENCE_S: f64 = 60.0;

/// How long an agent waits for its fleet's description to appear on the board.
const JOIN_TIMEOUT: Duration = Duration::from_secs(30);

/// How often an agent reads the board while it waits.
const POLL: Duration = Duration::from_millis(25);

/// Read a fleet's description from its board, waiting for it to be posted.
pub fn join(board: &mut Board) -> Result<FleetSpec, WorkloadError> {
    let deadline = Instant::now() + JOIN_TIMEOUT;
    loop {
        for event in board.poll()? {
            if event.sender == COORDINATOR && event.kind == kind::FLEET {
                return board::body(&event);
            }
        }
        if Instant::now() > deadline {
            return Err(WorkloadError::usage(format!(
                "fleet {}: no such fleet in this store after {} s; start agents with the fleet id and store that \
                 `envbench fleet --transport external` printed",
                board.fleet(),
                JOIN_TIMEOUT.as_secs()
            )));
        }
        std::thread::sleep(POLL);
    }
}

/// An agent's run, planned: what the driver runs on an agent host.
pub struct AgentRun {
    pub name: String,
    pub board: Board,
    pub work: Box<dyn FleetAgent>,
}

impl Planned for AgentRun {
    fn data_dir(&self) -> &Path {
        self.work.data_dir()
    }

    fn announce(&self) -> Option<String> {
        Some(format!("envbench agent {} of fleet {}", self.name, self.board.fleet()))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let AgentRun { name, mut board, mut work } = *self;
        let outcome = take_part(&name, &mut board, work.as_mut(), context);
        match outcome {
            Ok(()) => work.finish(),
            Err(error) => {
                let _ = board.post(kind::FAILED, &board::Failure { error: error.message().to_string() });
                // The work is dropped here, and with it the agent's files.
                Err(error)
            }
        }
    }
}

/// Prepare, report ready, and run every step released to this agent until the coordinator stops the fleet.
fn take_part(
    name: &str,
    board: &mut Board,
    work: &mut dyn FleetAgent,
    context: &RunContext<'_>,
) -> Result<(), WorkloadError> {
    let prepared = work.prepare(context)?;
    context.progress.line(&prepared);
    let (offset_s, uncertainty_s) = board.clock_offset()?;
    board.post(
        kind::READY,
        &Ready { hostname: context.fingerprint.os.hostname.clone(), prepared, offset_s, uncertainty_s },
    )?;
    let mut last_word_s = board::now_s() - offset_s;
    loop {
        if context.interrupted() {
            return Err(WorkloadError::interrupted());
        }
        for event in board.poll()? {
            if event.sender != COORDINATOR {
                continue;
            }
            last_word_s = last_word_s.max(event.at_s);
            match event.kind.as_str() {
                kind::STEP => {
                    let release: StepRelease = board::body(&event)?;
                    let Some(assignment) = release.assignments.get(name) else { continue };
                    board::wait_until(release.release_at_s + offset_s, context)?;
                    let started = board::now_s();
                    context.steps.step_started(&release.name);
                    let report = work.run_step(&release.name, assignment, context);
                    context.steps.step_finished(&release.name);
                    let ended = board::now_s();
                    let report = report?;
                    context.progress.line(&format!(
                        "{}: done, {}",
                        release.name,
                        envbench_core::text::number(report.throughput)
                    ));
                    board.post(
                        kind::REPORT,
                        &StepDone {
                            index: release.index,
                            report,
                            started_at_s: started - offset_s,
                            ended_at_s: ended - offset_s,
                        },
                    )?;
                    last_word_s = last_word_s.max(ended - offset_s);
                }
                kind::STOP => {
                    let stop: Stop = board::body(&event)?;
                    return match stop.aborted {
                        None => Ok(()),
                        Some(reason) => {
                            Err(WorkloadError::failure(format!("the coordinator stopped the fleet: {reason}")))
                        }
                    };
                }
                _ => {}
            }
        }
        if board::now_s() - offset_s - last_word_s > COORDINATOR_SILENCE_S {
            return Err(WorkloadError::failure(format!(
                "the coordinator of fleet {} has been silent for {COORDINATOR_SILENCE_S:.0} s; stopping, and removing \
                 this agent's files",
                board.fleet()
            )));
        }
        std::thread::sleep(POLL);
    }
}

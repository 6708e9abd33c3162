//! The coordinator (`envbench fleet`): describes the fleet on the board, starts the agents, waits until every one is
//! prepared, releases each step at one instant of the database server's clock, merges the agents' reports through
//! the workload, and stops every agent, in order or, on an error or Ctrl-C, at once.

use crate::board::{self, Board, COORDINATOR, Failure, Finished, FleetSpec, Ready, StepDone, StepRelease, Stop, kind};
use crate::transport::{self, AgentProcess, Transport};
use envbench_core::fleet::{
    AgentReport, FLEET_ATTACHMENT, FleetCoordinator, FleetDocument, FleetHost, FleetShare, FleetStepRecord,
};
use envbench_core::sampler::{SamplerSeries, StepSummary};
use envbench_core::workload::{Envelope, Measured, Planned, RunContext, WorkloadError};
use envbench_store::{FleetEvent, StoreLocation};
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

/// The environment variable that gives an agent its store.
pub const STORE_VARIABLE: &str = "ENVBENCH_STORE";

/// How far ahead of the database clock's "now" a step is released: time for every agent to read the release
/// (agents poll every 25 ms) and sleep to the instant.
const RELEASE_LEAD_S: f64 = 1.0;
/// How often the coordinator says it is still there while it waits.
const ALIVE_EVERY: Duration = Duration::from_secs(5);
/// How long agents have to store their runs and leave once the fleet is done.
const FINISH_TIMEOUT: Duration = Duration::from_secs(120);
/// How long agents have to leave after an abort before their processes are killed.
const ABORT_TIMEOUT: Duration = Duration::from_secs(30);
const POLL: Duration = Duration::from_millis(25);

/// A fleet run, planned: what the driver runs on the coordinator's host.
pub struct CoordinatorRun {
    pub fleet: String,
    pub spec: FleetSpec,
    pub transport: Transport,
    /// The store every agent reaches, as the coordinator opens it.
    pub store: StoreLocation,
    /// What every agent is given in its environment: its store (`ENVBENCH_STORE`) and the database passwords the
    /// workload's URLs leave out (they are never on the board).
    pub agent_environment: Vec<(String, String)>,
    /// Go on without agents that fail, instead of failing the fleet.
    pub keep_going: bool,
    /// How long agents may take to prepare.
    pub prepare_timeout: Duration,
    pub throughput_unit: String,
    pub coordinator: Box<dyn FleetCoordinator>,
}

/// An agent as the coordinator follows it.
struct Member {
    process: AgentProcess,
    ready: Option<Ready>,
    error: Option<String>,
    finished: Option<Finished>,
}

impl Member {
    fn name(&self) -> &str {
        &self.process.name
    }

    /// Why the agent's process ended, when it did.
    fn ended(&mut self) -> Option<String> {
        let status = self.process.exited()?;
        let output = self.process.last_output();
        Some(if output.is_empty() {
            format!("the agent ended ({status})")
        } else {
            format!("the agent ended ({status}): {output}")
        })
    }
}

/// One step's reports, by member index.
struct StepRound {
    release: StepRelease,
    done: Vec<(usize, StepDone)>,
}

impl Planned for CoordinatorRun {
    /// The workload's directory when this host has it (local agents); else the current one: the agents' hosts
    /// hold the workload's directory, each agent's run describes its own.
    fn data_dir(&self) -> &Path {
        let dir = self.coordinator.data_dir();
        if dir.is_dir() { dir } else { Path::new(".") }
    }

    fn announce(&self) -> Option<String> {
        Some(format!(
            "envbench fleet {}: {} on {} agent{} ({} transport)",
            self.fleet,
            self.spec.workload,
            self.spec.agents.len(),
            envbench_core::text::plural(self.spec.agents.len()),
            self.transport.name()
        ))
    }

    fn run(self: Box<Self>, context: &RunContext<'_>) -> Result<Box<dyn Measured>, WorkloadError> {
        let CoordinatorRun {
            fleet,
            spec,
            transport,
            store,
            agent_environment,
            keep_going,
            prepare_timeout,
            throughput_unit,
            mut coordinator,
        } = *self;
        // What the agents share is built once, here, before any agent starts and looks for it.
        if let Some(prepared) = coordinator.prepare(context)? {
            context.progress.line(&prepared);
        }
        let mut board = Board::open(&store, &fleet, COORDINATOR)?;
        board.post(kind::FLEET, &spec)?;
        let clock_offset_s = board.clock_offset()?.0;
        let (copied, copy_failed) = copy_binaries(&transport, &fleet, context)?;
        if !copy_failed.is_empty() && (!keep_going || copy_failed.len() == spec.agents.len()) {
            remove_binaries(&transport, &fleet, &copied);
            return Err(WorkloadError::failure(summarize_failures(&copy_failed)));
        }
        // Agents whose host did not take the binary are not started (--keep-going): named, with why.
        let unreachable = |name: &str| -> Option<String> {
            let Transport::Ssh(ssh) = &transport else { return None };
            let host = ssh.hosts.get(spec.agents.iter().position(|a| a == name)?)?;
            copy_failed.iter().find(|(h, _)| h == host).map(|(_, error)| error.clone())
        };
        if let Transport::External { .. } = transport {
            context.progress.line(&format!(
                "start the {} agents on their hosts, each with its own name, e.g. with Ansible or a job scheduler:",
                spec.agents.len()
            ));
            // Passwords are not printed: the commands say where each goes.
            let mut environment = vec![format!("ENVBENCH_STORE={}", transport::shell_words(&[store.display()]))];
            environment.extend(
                agent_environment.iter().filter(|(key, _)| key != STORE_VARIABLE).map(|(key, _)| format!("{key}=***")),
            );
            for name in &spec.agents {
                context.progress.line(&format!(
                    "  {} {}",
                    environment.join(" "),
                    transport::shell_words(&transport::agent_words("envbench", &fleet, name))
                ));
            }
        }
        let skipped: Vec<String> = spec.agents.iter().filter(|name| unreachable(name).is_some()).cloned().collect();
        let processes = transport::start(&transport, &fleet, &spec.agents, &skipped, &agent_environment)
            .map_err(|(name, error)| WorkloadError::failure(format!("agent {name}: {error}")))?;
        let mut members: Vec<Member> = processes
            .into_iter()
            .map(|process| {
                let error = unreachable(&process.name);
                Member { process, ready: None, error, finished: None }
            })
            .collect();
        let mut driver =
            Driver { board: &mut board, members: &mut members, context, last_alive: Instant::now(), clock_offset_s };
        let driven = driver.await_ready(prepare_timeout, keep_going).and_then(|()| {
            context.progress.line(&coordinator.announce(driver.active().len()));
            driver.run_steps(coordinator.as_mut(), keep_going)
        });
        let outcome = match driven {
            Ok(rounds) => {
                let finished = driver.finish();
                finished.map(|()| rounds)
            }
            Err(error) => {
                driver.abort(error.message());
                Err(error)
            }
        };
        remove_binaries(&transport, &fleet, &copied);
        let rounds = outcome?;
        let document = document(&fleet, &transport, &throughput_unit, &members, &rounds, &board);
        let measured = coordinator.finish(false)?;
        Ok(Box::new(FleetMeasured { inner: measured, document }))
    }
}

/// The most distinct failures a message shows, and the longest each may be.
const SHOWN_FAILURES: usize = 5;
const SHOWN_FAILURE_CHARS: usize = 400;

/// Agents' failures for one message of bounded length, whatever the fleet's size: agents that failed the same way
/// are named together (`agent db1, db2, db3 and 997 more: ...`, the commonest first), at most [`SHOWN_FAILURES`] different failures are shown,
/// each cut at [`SHOWN_FAILURE_CHARS`].
pub fn summarize_failures(failed: &[(String, String)]) -> String {
    let mut groups: Vec<(String, Vec<&str>)> = Vec::new();
    for (agent, error) in failed {
        match groups.iter_mut().find(|(e, _)| e == error) {
            Some((_, agents)) => agents.push(agent),
            None => groups.push((error.clone(), vec![agent])),
        }
    }
    // The commonest failure first: it is most likely the cause.
    groups.sort_by_key(|(_, agents)| std::cmp::Reverse(agents.len()));
    let mut parts: Vec<String> = groups
        .iter()
        .take(SHOWN_FAILURES)
        .map(|(error, agents)| {
            let mut names = agents.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            if agents.len() > 3 {
                names.push_str(&format!(" and {} more", agents.len() - 3));
            }
            format!("agent {names}: {}", envbench_core::text::truncate(error, SHOWN_FAILURE_CHARS))
        })
        .collect();
    if groups.len() > SHOWN_FAILURES {
        let rest: usize = groups[SHOWN_FAILURES..].iter().map(|(_, agents)| agents.len()).sum();
        parts.push(format!("{rest} more agents failed in {} other ways", groups.len() - SHOWN_FAILURES));
    }
    parts.join("; ")
}

/// The hosts a copy went to, and the hosts it could not reach with why.
type Copies = (Vec<String>, Vec<(String, String)>);

/// With `--copy-binary`, this envbench copied to every ssh host, compressed and without its debug information.
fn copy_binaries(transport: &Transport, fleet: &str, context: &RunContext<'_>) -> Result<Copies, WorkloadError> {
    let (mut copied, mut failed) = (Vec::new(), Vec::new());
    if let Transport::Ssh(ssh) = transport
        && ssh.copy_binary
    {
        let (packed, line) = transport::program_to_copy().map_err(WorkloadError::failure)?;
        let path = transport::SshOptions::copied_binary(fleet);
        let mut hosts: Vec<&String> = Vec::new();
        for host in &ssh.hosts {
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
        context.progress.line(&format!("{line} to {} host{}", hosts.len(), if hosts.len() == 1 { "" } else { "s" }));
        for host in hosts {
            match ssh.copy_binary(host, &path, &packed) {
                Ok(()) => copied.push(host.clone()),
                Err(error) => failed.push((host.clone(), error)),
            }
        }
    }
    Ok((copied, failed))
}

fn remove_binaries(transport: &Transport, fleet: &str, hosts: &[String]) {
    if let Transport::Ssh(ssh) = transport {
        for host in hosts {
            ssh.remove_binary(host, &transport::SshOptions::copied_binary(fleet));
        }
    }
}

/// What one look at the agents saw: whose process had ended, by member, and new messages by member.
type Look = (Vec<bool>, Vec<(usize, FleetEvent)>);

/// The coordinator's loop over the board and the agents.
struct Driver<'a, 'c> {
    board: &'a mut Board,
    members: &'a mut Vec<Member>,
    context: &'a RunContext<'c>,
    last_alive: Instant,
    /// This host's clock minus the database server's.
    clock_offset_s: f64,
}

impl Driver<'_, '_> {
    /// The members still taking part.
    fn active(&self) -> Vec<usize> {
        (0..self.members.len())
            .filter(|i| self.members[*i].ready.is_some() && self.members[*i].error.is_none())
            .collect()
    }

    fn member(&self, name: &str) -> Option<usize> {
        self.members.iter().position(|m| m.name() == name)
    }

    /// One look at the agents: which processes had ended (read before the board: an agent posts its last message
    /// before it exits), and the agents' new messages, their failures recorded already.
    fn look(&mut self) -> Result<Look, WorkloadError> {
        let exited: Vec<bool> = self.members.iter_mut().map(|m| m.process.exited().is_some()).collect();
        let mut events = Vec::new();
        for event in self.board.poll()? {
            let Some(index) = self.member(&event.sender) else { continue };
            if event.kind == kind::FAILED {
                self.members[index].error = Some(board::body::<Failure>(&event)?.error);
            } else {
                events.push((index, event));
            }
        }
        Ok((exited, events))
    }

    /// Say the coordinator is still there, every few seconds.
    fn keep_alive(&mut self) -> Result<(), WorkloadError> {
        if self.last_alive.elapsed() >= ALIVE_EVERY {
            self.board.post(kind::ALIVE, &Value::Null)?;
            self.last_alive = Instant::now();
        }
        Ok(())
    }

    /// Wait until every agent is ready or failed; fail the fleet on a failure unless `keep_going` (and one is left).
    fn await_ready(&mut self, timeout: Duration, keep_going: bool) -> Result<(), WorkloadError> {
        let deadline = Instant::now() + timeout;
        loop {
            if self.context.interrupted() {
                return Err(WorkloadError::interrupted());
            }
            let (exited, events) = self.look()?;
            for (index, event) in events.iter().filter(|(_, e)| e.kind == kind::READY) {
                let ready: Ready = board::body(event)?;
                self.context.progress.line(&format!("{}: {}", event.sender, ready.prepared));
                self.members[*index].ready = Some(ready);
            }
            let mut waiting = 0;
            for (member, exited) in self.members.iter_mut().zip(&exited) {
                if member.ready.is_some() || member.error.is_some() {
                    continue;
                }
                if let Some(ended) = member.ended().filter(|_| *exited) {
                    member.error = Some(ended);
                } else if Instant::now() > deadline {
                    member.error = Some(format!("not ready after {} s", timeout.as_secs()));
                } else {
                    waiting += 1;
                }
            }
            if waiting == 0 {
                break;
            }
            self.keep_alive()?;
            std::thread::sleep(POLL);
        }
        self.judge_failures(keep_going, "preparing")
    }

    /// Fail the fleet when an agent failed (all of them, or any without `keep_going`); otherwise warn and go on.
    fn judge_failures(&mut self, keep_going: bool, during: &str) -> Result<(), WorkloadError> {
        let failed: Vec<(String, String)> =
            self.members.iter().filter_map(|m| m.error.as_ref().map(|e| (m.name().to_string(), e.clone()))).collect();
        if failed.is_empty() {
            return Ok(());
        }
        if !keep_going || self.active().is_empty() {
            return Err(WorkloadError::failure(format!(
                "the fleet failed while {during}: {}{}",
                summarize_failures(&failed),
                if keep_going { "" } else { " (--keep-going goes on without failed agents)" }
            )));
        }
        self.context.progress.warn(&format!(
            "{}; the fleet goes on without {} (--keep-going)",
            summarize_failures(&failed),
            if failed.len() == 1 { "it" } else { "them" }
        ));
        Ok(())
    }

    /// Release each step the workload plans at one instant, collect every share's report, merge.
    fn run_steps(
        &mut self,
        coordinator: &mut dyn FleetCoordinator,
        keep_going: bool,
    ) -> Result<Vec<StepRound>, WorkloadError> {
        let mut rounds = Vec::new();
        loop {
            let active = self.active();
            let Some(step) = coordinator.next_step(active.len()) else { break };
            if self.context.interrupted() {
                return Err(WorkloadError::interrupted());
            }
            coordinator.before_step(&step, self.context)?;
            let assignments: std::collections::BTreeMap<String, Value> = active
                .iter()
                .zip(&step.assignments)
                .filter(|(_, a)| !a.is_null())
                .map(|(i, a)| (self.members[*i].name().to_string(), a.clone()))
                .collect();
            let release = StepRelease {
                index: rounds.len(),
                name: step.name.clone(),
                release_at_s: self.board.clock()? + RELEASE_LEAD_S + step.pause.as_secs_f64(),
                assignments,
            };
            self.board.post(kind::STEP, &release)?;
            self.last_alive = Instant::now();
            // This host's sampler covers the step from its release, as the agents' do.
            board::wait_until(release.release_at_s + self.clock_offset_s, self.context)?;
            self.context.steps.step_started(&step.name);
            let done = self.collect(&release);
            self.context.steps.step_finished(&step.name);
            let done = done?;
            self.judge_failures(keep_going, &format!("running {}", step.name))?;
            let reports: Vec<AgentReport<'_>> = done
                .iter()
                .map(|(i, d)| AgentReport {
                    agent: self.members[*i].name(),
                    assignment: &release.assignments[self.members[*i].name()],
                    report: &d.report,
                })
                .collect();
            if reports.is_empty() {
                return Err(WorkloadError::failure(format!("{}: no agent reported it", step.name)));
            }
            let line = coordinator.merge_step(&step, &reports)?;
            self.context.progress.line(&line);
            rounds.push(StepRound { release, done });
        }
        Ok(rounds)
    }

    /// Wait for the report of every agent with a share of `release`, or its failure.
    fn collect(&mut self, release: &StepRelease) -> Result<Vec<(usize, StepDone)>, WorkloadError> {
        let mut done: Vec<(usize, StepDone)> = Vec::new();
        loop {
            if self.context.interrupted() {
                return Err(WorkloadError::interrupted());
            }
            let (exited, events) = self.look()?;
            for (index, event) in events.iter().filter(|(_, e)| e.kind == kind::REPORT) {
                let report: StepDone = board::body(event)?;
                if report.index == release.index {
                    done.push((*index, report));
                }
            }
            let mut waiting = 0;
            for name in release.assignments.keys() {
                let index = self.member(name).expect("assigned agents are members");
                if done.iter().any(|(i, _)| *i == index) || self.members[index].error.is_some() {
                    continue;
                }
                match self.members[index].ended().filter(|_| exited[index]) {
                    Some(ended) => self.members[index].error = Some(format!("during {}: {ended}", release.name)),
                    None => waiting += 1,
                }
            }
            if waiting == 0 {
                done.sort_by_key(|(i, _)| *i);
                return Ok(done);
            }
            self.keep_alive()?;
            std::thread::sleep(POLL);
        }
    }

    /// The fleet is done: tell the agents, and wait for each to store its run and leave.
    fn finish(&mut self) -> Result<(), WorkloadError> {
        self.board.post(kind::STOP, &Stop { aborted: None })?;
        let deadline = Instant::now() + FINISH_TIMEOUT;
        loop {
            let (exited, events) = self.look()?;
            for (index, event) in events.iter().filter(|(_, e)| e.kind == kind::FINISHED) {
                self.members[*index].finished = Some(board::body(event)?);
            }
            let mut pending = 0;
            for (member, exited) in self.members.iter_mut().zip(&exited) {
                if member.ready.is_none() || member.finished.is_some() || member.error.is_some() {
                    continue;
                }
                match member.ended().filter(|_| *exited) {
                    Some(ended) => member.error = Some(format!("while storing its run: {ended}")),
                    None => pending += 1,
                }
            }
            // Agents this process started are waited for until their process ends, so none is left behind.
            let mut running = 0;
            for member in self.members.iter_mut() {
                if !member.process.is_external() && member.process.exited().is_none() {
                    running += 1;
                }
            }
            if (pending == 0 && running == 0) || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(POLL);
        }
        for member in self.members.iter_mut() {
            member.process.kill();
            if member.ready.is_some() && member.finished.is_none() && member.error.is_none() {
                member.error = Some("did not store its run in time".into());
            }
        }
        Ok(())
    }

    /// Stop every agent at once: tell them, ask local ones to stop now (an agent then stores its run as
    /// interrupted and removes its files), wait a while for all, then kill what is left.
    fn abort(&mut self, reason: &str) {
        let _ = self.board.post(kind::STOP, &Stop { aborted: Some(reason.to_string()) });
        for member in self.members.iter_mut() {
            member.process.interrupt_if_local();
        }
        let deadline = Instant::now() + ABORT_TIMEOUT;
        while Instant::now() < deadline
            && self.members.iter_mut().any(|m| !m.process.is_external() && m.process.running())
        {
            std::thread::sleep(POLL);
        }
        for member in self.members.iter_mut() {
            member.process.kill();
        }
    }
}

/// The fleet document: each host, and each step's shares with the hosts' own sampler figures.
fn document(
    fleet: &str,
    transport: &Transport,
    throughput_unit: &str,
    members: &[Member],
    rounds: &[StepRound],
    board: &Board,
) -> FleetDocument {
    let series: Vec<Option<SamplerSeries>> = members
        .iter()
        .map(|m| {
            let run = m.finished.as_ref()?.run.as_ref()?;
            board.store().load_run(run).ok()?.series
        })
        .collect();
    let hosts = members
        .iter()
        .map(|m| FleetHost {
            name: m.name().to_string(),
            hostname: m.ready.as_ref().and_then(|r| r.hostname.clone()),
            run: m.finished.as_ref().and_then(|f| f.run.clone()),
            error: m.error.clone(),
            clock_offset_ms: m.ready.as_ref().map(|r| r.offset_s * 1e3),
            clock_uncertainty_ms: m.ready.as_ref().map(|r| r.uncertainty_s * 1e3),
        })
        .collect();
    let steps = rounds
        .iter()
        .map(|round| {
            let release = round.release.release_at_s;
            let total: f64 = round.done.iter().map(|(_, d)| d.report.throughput).sum();
            let shares = round
                .done
                .iter()
                .map(|(index, done)| {
                    let name = members[*index].name();
                    let step: Option<&StepSummary> = series[*index].as_ref().and_then(|s| s.step(&round.release.name));
                    FleetShare {
                        host: name.to_string(),
                        assignment: round.release.assignments.get(name).cloned().unwrap_or(Value::Null),
                        throughput: done.report.throughput,
                        share_percent: if total > 0.0 { done.report.throughput / total * 100.0 } else { 0.0 },
                        skew_ms: (done.started_at_s - release) * 1e3,
                        elapsed_s: done.ended_at_s - done.started_at_s,
                        device_ops_per_s: step.and_then(|s| {
                            s.disks.iter().map(|d| d.reads_per_s + d.writes_per_s).max_by(f64::total_cmp)
                        }),
                        cpu_busy_percent: step.map(|s| {
                            s.cpu.user_percent + s.cpu.nice_percent + s.cpu.system_percent + s.cpu.irq_percent
                        }),
                        cpu_steal_percent: step.map(|s| s.cpu.steal_percent),
                    }
                })
                .collect();
            let ends = round.done.iter().map(|(_, d)| d.ended_at_s);
            let starts = round.done.iter().map(|(_, d)| d.started_at_s);
            let first_end = ends.clone().fold(f64::INFINITY, f64::min);
            let last_end = ends.fold(f64::NEG_INFINITY, f64::max);
            let last_start = starts.fold(f64::NEG_INFINITY, f64::max);
            FleetStepRecord {
                name: round.release.name.clone(),
                released_at: board::utc(release),
                first_done_s: first_end - release,
                last_done_s: last_end - release,
                all_running_s: (first_end - last_start).max(0.0),
                shares,
            }
        })
        .collect();
    FleetDocument {
        fleet: fleet.to_string(),
        transport: transport.name().to_string(),
        throughput_unit: throughput_unit.to_string(),
        hosts,
        steps,
    }
}

/// The workload's merged result with the fleet's per-host breakdown beside it.
pub struct FleetMeasured {
    pub inner: Box<dyn Measured>,
    pub document: FleetDocument,
}

impl Measured for FleetMeasured {
    fn records(&self, series: &SamplerSeries) -> Vec<envbench_core::model::ResultRecord> {
        self.inner.records(series)
    }

    fn attachment(&self) -> Option<Value> {
        self.inner.attachment()
    }

    fn extra_attachments(&self) -> Vec<(String, Value)> {
        let mut attachments = self.inner.extra_attachments();
        attachments.push((FLEET_ATTACHMENT.to_string(), serde_json::to_value(&self.document).expect("serializes")));
        attachments
    }

    fn json(&self, envelope: &Envelope<'_>) -> Value {
        let mut value = self.inner.json(envelope);
        if let Some(map) = value.as_object_mut() {
            map.insert(FLEET_ATTACHMENT.into(), serde_json::to_value(&self.document).expect("serializes"));
        }
        value
    }

    fn render(&self, series: &SamplerSeries) -> String {
        format!("{}\n{}", self.inner.render(series), self.document.render())
    }

    fn warnings(&self, series: &SamplerSeries) -> Vec<String> {
        let mut warnings = self.inner.warnings(series);
        for host in &self.document.hosts {
            if let Some(error) = &host.error {
                warnings.push(format!("agent {} took no (further) part: {error}", host.name));
            }
        }
        warnings
    }

    fn ending(&self) -> envbench_core::workload::Ending {
        self.inner.ending()
    }

    fn epilogue(&self) -> Vec<String> {
        self.inner.epilogue()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The battery's finding: a failed 1000-agent fleet printed one 94 KB error line.
    #[test]
    fn a_thousand_failures_read_as_one_short_line() {
        let mut failed: Vec<(String, String)> = (1..=1000)
            .map(|i| {
                (
                    format!("host{i}"),
                    format!("ssh: connect to host host{i} port 22: Connection refused {}", "x".repeat(80)),
                )
            })
            .collect();
        failed.extend((1..=997).map(|i| (format!("db{i}"), "not ready after 60 s".to_string())));
        let line = summarize_failures(&failed);
        assert!(line.len() < 4000, "{} bytes: {line}", line.len());
        assert!(line.contains("agent db1, db2, db3 and 994 more: not ready after 60 s"), "{line}");
        assert!(line.contains("more agents failed in"), "{line}");
        assert_eq!(summarize_failures(&[("a".into(), "boom".into())]), "agent a: boom");
    }
}

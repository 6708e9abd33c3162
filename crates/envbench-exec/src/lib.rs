//! The user's own timed steps (`envbench exec`).
//!
//! Practitioners time their production scripts (MaxL against a real Essbase, SQL against Oracle) as named steps. This
//! crate runs each step's command through the shell, repeated, and measures it: wall time, and the user and system CPU
//! of the whole child tree (from `wait4`), with the exit status and the last lines of output kept. A failing step stops
//! the run (or, with keep-going, is recorded and skipped). Each command runs in a process group of its own, which
//! never outlives it: the command ends when its shell exits (a background child still holding its output does not
//! hold the step), and what it left running is then stopped; Ctrl-C stops the whole group; and a small watcher in
//! the group stops it when envbench itself ends, however it ends (see `StepGroup`). The results are ordinary result
//! records, so `compare` and `report` treat them like built-in workloads. Its
//! [`workload::EXEC`] is what the driver registers: the command line, the table, the ending (a run whose steps failed
//! with `--keep-going` completes with the failures counted; exit status 1). It does not print, sample the OS (it names
//! the steps to a `StepObserver`) or store anything. Output kept from commands is bounded ([`KEPT_OUTPUT_LINES`]
//! lines of at most [`KEPT_LINE_BYTES`] bytes), and every connection secret in commands and output is redacted
//! before it is kept.

pub mod workload;

use envbench_core::model::{Direction, ResultRecord};
use envbench_core::sampler::StepObserver;
use envbench_core::text::check_name;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::VecDeque;
use std::io::Read;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Bumped when timing changes in a way that makes old results incomparable.
pub const WORKLOAD_VERSION: u32 = 1;
/// What every record of an exec run is of.
pub const SOURCE: envbench_core::RecordSource =
    envbench_core::RecordSource { workload: WORKLOAD, version: WORKLOAD_VERSION };

/// How many output lines are kept from each command.
pub const KEPT_OUTPUT_LINES: usize = 20;

/// The longest output line kept; the rest of a longer line is cut (a command printing one 50 MB line must not make a
/// 50 MB attachment).
pub const KEPT_LINE_BYTES: usize = 4096;

/// The most steps and repetitions a run takes.
pub const MAX_STEPS: usize = 1000;
pub const MAX_REPEAT: u32 = 100_000;

/// The name of the workload, as commands, stores and suites know it.
pub const WORKLOAD: &str = "exec";

/// What can go wrong before or around the steps; a failing step is an outcome, not an error.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    #[error("--step '{0}' is not NAME=COMMAND: write e.g. --step load='essmsh load.msh'")]
    BadStep(String),
    #[error("step name '{0}' is used twice; give each step its own name")]
    DuplicateStep(String),
    #[error("--name is empty: name what is being timed, e.g. --name essbench-maxl")]
    NoName,
    /// A name that is not one (too long, control characters, invisible): the message says which and what to do.
    #[error("{0}")]
    BadName(String),
    #[error("no steps: give at least one --step NAME=COMMAND")]
    NoSteps,
    #[error("{0} is empty: give the command to run, or leave the option out")]
    EmptyCommand(&'static str),
    #[error("--repeat must be at least 1")]
    NoRepeat,
    #[error("--repeat {0} is more than {MAX_REPEAT}; give a smaller count")]
    TooManyRepeats(u32),
    #[error("{0} steps are more than {MAX_STEPS}; split the work into several runs")]
    TooManySteps(usize),
    #[error("cannot start the shell for '{command}': {reason}")]
    Spawn { command: String, reason: String },
}

/// One named command.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepCommand {
    pub name: String,
    pub command: String,
}

/// Parse `NAME=COMMAND` (the name may not be empty or contain `=`; the command is everything after the first `=`).
pub fn parse_step(text: &str) -> Result<StepCommand, ExecError> {
    match text.split_once('=') {
        Some((name, command)) if !name.trim().is_empty() && !command.trim().is_empty() => {
            Ok(StepCommand { name: name.trim().to_string(), command: command.to_string() })
        }
        _ => Err(ExecError::BadStep(text.to_string())),
    }
}

/// What to run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecOptions {
    /// What the steps together are, e.g. `essbench-maxl`; results match by it.
    pub name: String,
    pub steps: Vec<StepCommand>,
    pub repeat: u32,
    /// Run once before the first repetition (not timed as a step).
    pub setup: Option<String>,
    /// Run once after the last repetition, also after a failure.
    pub teardown: Option<String>,
    /// Carry on after a failing step instead of stopping.
    pub keep_going: bool,
}

impl ExecOptions {
    /// Check the options before anything runs.
    pub fn validate(&self) -> Result<(), ExecError> {
        if self.name.trim().is_empty() {
            return Err(ExecError::NoName);
        }
        check_name("--name", &self.name).map_err(ExecError::BadName)?;
        if self.steps.is_empty() {
            return Err(ExecError::NoSteps);
        }
        if self.repeat == 0 {
            return Err(ExecError::NoRepeat);
        }
        if self.repeat > MAX_REPEAT {
            return Err(ExecError::TooManyRepeats(self.repeat));
        }
        if self.steps.len() > MAX_STEPS {
            return Err(ExecError::TooManySteps(self.steps.len()));
        }
        for (option, command) in [("--setup", &self.setup), ("--teardown", &self.teardown)] {
            if command.as_deref().is_some_and(|c| c.trim().is_empty()) {
                return Err(ExecError::EmptyCommand(option));
            }
        }
        for (i, step) in self.steps.iter().enumerate() {
            check_name(&format!("the name of --step {}", i + 1), &step.name).map_err(ExecError::BadName)?;
            if self.steps[..i].iter().any(|s| s.name == step.name) {
                return Err(ExecError::DuplicateStep(step.name.clone()));
            }
        }
        Ok(())
    }
}

/// One execution of one command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    /// The step name (`setup` and `teardown` for those).
    pub step: String,
    /// From 1; 0 for setup and teardown.
    pub repetition: u32,
    pub wall_seconds: f64,
    /// CPU of the command and every descendant it waited for.
    pub user_seconds: f64,
    pub system_seconds: f64,
    /// The exit status, when the command exited.
    pub exit_status: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// The last lines of its standard output and error, interleaved as they came.
    pub last_lines: Vec<String>,
}

impl Execution {
    pub fn succeeded(&self) -> bool {
        self.exit_status == Some(0)
    }

    /// How it ended, for people: `exit status 3`, `killed by signal 9`.
    pub fn ending(&self) -> String {
        match (self.exit_status, self.signal) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "unknown ending".into(),
        }
    }
}

/// Everything that ran.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecOutcome {
    pub setup: Option<Execution>,
    /// Step executions in order.
    pub executions: Vec<Execution>,
    pub teardown: Option<Execution>,
    /// Why the run stopped early, when a step failed without keep-going.
    pub failure: Option<String>,
    pub interrupted: bool,
}

impl ExecOutcome {
    /// Executions that did not succeed: steps, and the teardown (a failing setup stops the run and is its failure).
    pub fn failed_executions(&self) -> Vec<&Execution> {
        self.executions.iter().chain(self.teardown.iter()).filter(|e| !e.succeeded()).collect()
    }

    /// The first execution that failed, setup included: the one whose output to show.
    pub fn first_failure(&self) -> Option<&Execution> {
        self.setup.iter().chain(&self.executions).chain(self.teardown.iter()).find(|e| !e.succeeded())
    }
}

/// Run the setup, every step `repeat` times, then the teardown. The observer hears each step as `<step> r<N>`;
/// `on_execution` sees each execution as it ends.
pub fn run_exec(
    options: &ExecOptions,
    observer: &dyn StepObserver,
    interrupt: &AtomicBool,
    on_execution: &mut dyn FnMut(&Execution),
) -> Result<ExecOutcome, ExecError> {
    options.validate()?;
    let mut outcome =
        ExecOutcome { setup: None, executions: Vec::new(), teardown: None, failure: None, interrupted: false };
    if let Some(setup) = &options.setup {
        let execution = execute("setup", 0, setup, interrupt)?;
        on_execution(&execution);
        let failed = !execution.succeeded();
        outcome.setup = Some(execution.clone());
        if failed {
            outcome.failure = Some(format!("the setup command failed ({})", execution.ending()));
        }
    }
    'repetitions: for repetition in 1..=options.repeat {
        if outcome.failure.is_some() {
            break;
        }
        for step in &options.steps {
            if interrupt.load(Ordering::SeqCst) {
                outcome.interrupted = true;
                break 'repetitions;
            }
            let mark = format!("{} r{repetition}", step.name);
            observer.step_started(&mark);
            let execution = execute(&step.name, repetition, &step.command, interrupt);
            observer.step_finished(&mark);
            let execution = execution?;
            on_execution(&execution);
            let failed = !execution.succeeded();
            let ending = execution.ending();
            outcome.executions.push(execution);
            if interrupt.load(Ordering::SeqCst) {
                outcome.interrupted = true;
                break 'repetitions;
            }
            if failed && !options.keep_going {
                outcome.failure = Some(format!(
                    "step {} failed in repetition {repetition} ({ending}); use --keep-going to continue past failures",
                    step.name
                ));
                break 'repetitions;
            }
        }
    }
    if let Some(teardown) = &options.teardown {
        // The teardown runs even after a failure or an interrupt: it cleans up what the setup made.
        let quiet = AtomicBool::new(false);
        let execution = execute("teardown", 0, teardown, &quiet)?;
        on_execution(&execution);
        outcome.teardown = Some(execution);
    }
    Ok(outcome)
}

/// Run one command through `sh -c` in a process group of its own and measure it. The command ends when its shell
/// exits; its output is read in the same loop that watches for Ctrl-C, so a background child holding the output open
/// holds neither; what the command left running is stopped once it has ended.
fn execute(step: &str, repetition: u32, command: &str, interrupt: &AtomicBool) -> Result<Execution, ExecError> {
    let spawn_error = |e: std::io::Error| ExecError::Spawn { command: command.to_string(), reason: e.to_string() };
    let group = StepGroup::start().map_err(spawn_error)?;
    // One pipe for stdout and stderr, as a terminal shows them: the last lines keep the order the command wrote them
    // in (two pipes read separately would interleave them by chance).
    let (mut output, output_writer) = std::io::pipe().map_err(spawn_error)?;
    let stderr_writer = output_writer.try_clone().map_err(spawn_error)?;
    set_nonblocking(&output).map_err(spawn_error)?;
    let started = Instant::now();
    // The Command, and with it this process's copies of the pipe's write end, is dropped at the end of the statement,
    // so the pipe reads as ended when the command (and anything it left running) has closed its copies.
    let child = Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(output_writer)
        .stderr(stderr_writer)
        .process_group(group.id())
        .spawn()
        .map_err(spawn_error)?;
    let pid = child.id() as libc::pid_t;
    // wait4 on a helper thread, so the wall time is taken the moment the command ends and this thread can read its
    // output and watch for Ctrl-C meanwhile.
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut status = 0;
        // SAFETY: wait4 writes only the status and rusage we own.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        let _ = sender.send((reaped, status, usage, Instant::now()));
    });
    let mut kept = LastLines::default();
    let mut output_open = true;
    let mut signalled_at: Option<Instant> = None;
    let (reaped, status, usage, ended) = loop {
        if let Ok(result) = receiver.try_recv() {
            break result;
        }
        if interrupt.load(Ordering::SeqCst) {
            // The whole process group: the shell and everything it started.
            match signalled_at {
                None => {
                    group.signal(libc::SIGTERM);
                    signalled_at = Some(Instant::now());
                }
                Some(at) if at.elapsed() > STOP_GRACE => group.signal(libc::SIGKILL),
                Some(_) => {}
            }
        }
        if output_open {
            wait_readable(&output, POLL_INTERVAL);
            output_open = kept.read_available(&mut output);
        } else {
            match receiver.recv_timeout(POLL_INTERVAL) {
                Ok(result) => break result,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => unreachable!("the waiting thread always sends"),
            }
        }
    };
    // The shell has ended: what is in the pipe now is the rest of its output.
    if output_open {
        kept.read_available(&mut output);
    }
    drop(output);
    // What the command left running is stopped now, before the next command runs.
    drop(group);
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let (exit_status, signal) = if reaped == pid {
        if libc::WIFEXITED(status) {
            (Some(libc::WEXITSTATUS(status)), None)
        } else if libc::WIFSIGNALED(status) {
            (None, Some(libc::WTERMSIG(status)))
        } else {
            (None, None)
        }
    } else {
        (None, None)
    };
    Ok(Execution {
        step: step.to_string(),
        repetition,
        wall_seconds: ended.duration_since(started).as_secs_f64(),
        user_seconds: seconds(usage.ru_utime),
        system_seconds: seconds(usage.ru_stime),
        exit_status,
        signal,
        last_lines: kept.finish(),
    })
}

/// How often the loop around a running command looks at Ctrl-C when nothing else wakes it.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How long processes of a step get to end after SIGTERM before SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// The process group a command runs in, and the watcher that makes it die with envbench.
///
/// The watcher is a shell that leads the group, ignores the signals envbench sends the group, and waits on a pipe
/// whose only writer is envbench: when envbench ends, however it ends (SIGKILL included), the pipe closes and the
/// watcher kills its own process group, the command's. A parent-death signal would reach only a direct child, not
/// what the command started; a cgroup cannot be made everywhere envbench runs. Because the watcher is a member and is
/// reaped only after the group has been killed, the group's number always names this group: envbench never signals
/// a group that is not the step's, and neither does the watcher.
struct StepGroup {
    watcher: std::process::Child,
    /// envbench's end of the watcher's pipe (close-on-exec, so no command inherits it).
    _guard: std::io::PipeWriter,
}

/// The watcher: ignore what is sent to the group, wait for envbench's end of the pipe to close, kill the group.
const WATCHER_SCRIPT: &str = "trap '' INT TERM HUP QUIT; read -r line; kill -9 0";

impl StepGroup {
    /// Start a group with its watcher, for one command to join.
    fn start() -> std::io::Result<StepGroup> {
        let (watch, guard) = std::io::pipe()?;
        let watcher = Command::new("sh")
            .arg("-c")
            .arg(WATCHER_SCRIPT)
            .stdin(watch)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()?;
        Ok(StepGroup { watcher, _guard: guard })
    }

    /// The group's id, for a command to join (`Command::process_group`).
    fn id(&self) -> i32 {
        self.watcher.id() as i32
    }

    /// Send `signal` to every process of the group (the watcher ignores all but SIGKILL).
    fn signal(&self, signal: libc::c_int) {
        // SAFETY: the group's leader is our unreaped child, so the number still names this group.
        unsafe { libc::killpg(self.id(), signal) };
    }

    /// Whether a process other than the watcher, and not yet ended, is in the group.
    fn has_members(&self) -> bool {
        let Ok(entries) = std::fs::read_dir("/proc") else { return false };
        let watcher = self.watcher.id();
        entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok()).any(|pid| {
            pid != watcher
                && std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    // Fields after the command name: state, parent, process group.
                    let Some(after_name) = stat.rfind(')').map(|at| &stat[at + 1..]) else { return false };
                    let mut fields = after_name.split_whitespace();
                    let state = fields.next();
                    let group = fields.nth(1).and_then(|g| g.parse::<i32>().ok());
                    state != Some("Z") && group == Some(self.id())
                })
        })
    }
}

impl Drop for StepGroup {
    /// Stop what is left in the group: SIGTERM, a grace period for it to end, then SIGKILL for the rest and the
    /// watcher, which is reaped last.
    fn drop(&mut self) {
        if self.has_members() {
            self.signal(libc::SIGTERM);
            let asked = Instant::now();
            while self.has_members() && asked.elapsed() < STOP_GRACE {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        self.signal(libc::SIGKILL);
        let _ = self.watcher.wait();
    }
}

fn set_nonblocking(pipe: &std::io::PipeReader) -> std::io::Result<()> {
    let fd = pipe.as_raw_fd();
    // SAFETY: fcntl on a descriptor we own.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 || unsafe { libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Wait until the pipe has something to read (or has ended), at most `timeout`.
fn wait_readable(pipe: &std::io::PipeReader, timeout: Duration) {
    let mut poll = libc::pollfd { fd: pipe.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: poll on one descriptor we own; an interrupted or failed poll only means we look again sooner.
    unsafe { libc::poll(&mut poll, 1, timeout.as_millis() as libc::c_int) };
}

/// The last [`KEPT_OUTPUT_LINES`] lines of a command's output, each cut at [`KEPT_LINE_BYTES`] and with connection
/// secrets redacted. Memory stays bounded whatever the command prints.
#[derive(Default)]
struct LastLines {
    kept: VecDeque<String>,
    line: Vec<u8>,
    cut_bytes: usize,
}

impl LastLines {
    /// Read what the (non-blocking) pipe holds now; false once it has ended.
    fn read_available(&mut self, output: &mut impl Read) -> bool {
        let mut chunk = [0u8; 64 << 10];
        loop {
            match output.read(&mut chunk) {
                Ok(0) => return false,
                Ok(read) => self.feed(&chunk[..read]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            }
        }
    }

    fn feed(&mut self, bytes: &[u8]) {
        for piece in bytes.split_inclusive(|&b| b == b'\n') {
            let (body, ends) = match piece.strip_suffix(b"\n") {
                Some(body) => (body, true),
                None => (piece, false),
            };
            let room = KEPT_LINE_BYTES.saturating_sub(self.line.len());
            self.line.extend_from_slice(&body[..body.len().min(room)]);
            self.cut_bytes += body.len().saturating_sub(room);
            if ends {
                self.finish_line();
            }
        }
    }

    fn finish_line(&mut self) {
        let mut text = envbench_core::model::redact_secrets(&String::from_utf8_lossy(&self.line));
        if self.cut_bytes > 0 {
            text.push_str(&format!(" … ({} more bytes not kept)", self.cut_bytes));
        }
        if self.kept.len() == KEPT_OUTPUT_LINES {
            self.kept.pop_front();
        }
        self.kept.push_back(text);
        self.line.clear();
        self.cut_bytes = 0;
    }

    /// The lines kept, the last one even without its line break.
    fn finish(mut self) -> Vec<String> {
        if !self.line.is_empty() || self.cut_bytes > 0 {
            self.finish_line();
        }
        self.kept.into()
    }
}

/// Reads one metric from an execution.
type MetricReader = fn(&Execution) -> f64;

/// Per step: elapsed, user CPU and system CPU, one sample per successful repetition. Parameters are the run's name
/// and the step's command, so the same script matches across environments.
pub fn result_records(options: &ExecOptions, outcome: &ExecOutcome) -> Vec<ResultRecord> {
    let mut records = Vec::new();
    for step in &options.steps {
        let done: Vec<&Execution> =
            outcome.executions.iter().filter(|e| e.step == step.name && e.succeeded()).collect();
        if done.is_empty() {
            continue;
        }
        let parameters =
            json!({ "name": options.name, "command": envbench_core::model::redact_secrets(&step.command) });
        let metrics: [(&str, MetricReader); 3] =
            [("elapsed", |e| e.wall_seconds), ("cpu_user", |e| e.user_seconds), ("cpu_system", |e| e.system_seconds)];
        for (metric, read) in metrics {
            let samples = done.iter().map(|e| read(e)).collect();
            records.push(SOURCE.record(&step.name, &parameters, metric, "s", Direction::LowerIsBetter, samples));
        }
    }
    records
}

#[cfg(test)]
mod tests {
    use super::*;
    use envbench_core::sampler::NoSteps;
    use std::sync::Arc;

    fn options(steps: &[(&str, &str)], repeat: u32) -> ExecOptions {
        ExecOptions {
            name: "test".into(),
            steps: steps.iter().map(|(n, c)| StepCommand { name: n.to_string(), command: c.to_string() }).collect(),
            repeat,
            setup: None,
            teardown: None,
            keep_going: false,
        }
    }

    fn run(options: &ExecOptions) -> ExecOutcome {
        run_exec(options, &NoSteps, &AtomicBool::new(false), &mut |_| {}).unwrap()
    }

    #[test]
    fn steps_parse() {
        assert_eq!(
            parse_step("load=essmsh load.msh a=b").unwrap(),
            StepCommand { name: "load".into(), command: "essmsh load.msh a=b".into() }
        );
        for bad in ["load", "=x", "load=", " =x"] {
            assert!(parse_step(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sleeps_are_timed_within_tolerance() {
        let outcome = run(&options(&[("short", "sleep 0.2"), ("long", "sleep 0.5")], 2));
        assert_eq!(outcome.executions.len(), 4);
        for execution in &outcome.executions {
            let expected = if execution.step == "short" { 0.2 } else { 0.5 };
            assert!(
                // At least the sleep; what a busy host adds to starting it has no bound worth asserting.
                (expected..expected + 30.0).contains(&execution.wall_seconds),
                "{} took {} s",
                execution.step,
                execution.wall_seconds
            );
            assert!(execution.succeeded());
        }
        let records = result_records(&options(&[("short", "sleep 0.2"), ("long", "sleep 0.5")], 2), &outcome);
        assert_eq!(records.len(), 6);
        assert_eq!(records[0].samples.len(), 2);
    }

    #[test]
    fn child_cpu_counts_the_whole_tree() {
        // The busy loop runs in a grandchild (a subshell); wait4 still sees its CPU.
        let outcome = run(&options(&[("busy", "( i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done )")], 1));
        let execution = &outcome.executions[0];
        assert!(execution.user_seconds + execution.system_seconds > 0.05, "{execution:?}");
        assert!(execution.user_seconds + execution.system_seconds <= execution.wall_seconds * 1.1 + 0.02);
    }

    #[test]
    fn exit_status_and_last_lines_are_kept() {
        let mut o = options(&[("fails", "seq 1 30; echo oops >&2; exit 3"), ("never", "true")], 1);
        let outcome = run(&o);
        let execution = &outcome.executions[0];
        assert_eq!(execution.exit_status, Some(3));
        assert_eq!(execution.last_lines.len(), KEPT_OUTPUT_LINES);
        // stdout and stderr arrive in the order they were written, as on a terminal.
        assert_eq!(execution.last_lines[KEPT_OUTPUT_LINES - 2..], ["30".to_string(), "oops".to_string()]);
        assert_eq!(outcome.executions.len(), 1, "a failing step stops the run");
        assert!(outcome.failure.as_deref().unwrap().contains("step fails failed in repetition 1 (exit status 3)"));
        o.keep_going = true;
        let outcome = run(&o);
        assert_eq!(outcome.executions.len(), 2);
        assert!(outcome.failure.is_none());
        assert_eq!(result_records(&o, &outcome).iter().filter(|r| r.test_id == "fails").count(), 0);
    }

    #[test]
    fn output_kept_is_bounded_and_secrets_are_redacted() {
        let o = options(
            &[("flood", "head -c 50000000 /dev/zero | tr '\\0' x; echo; echo postgres://u:hunter2@db/x; exit 1")],
            1,
        );
        let outcome = run(&o);
        let lines = &outcome.executions[0].last_lines;
        let kept: usize = lines.iter().map(String::len).sum();
        assert!(kept < KEPT_OUTPUT_LINES * (KEPT_LINE_BYTES + 64), "{kept} bytes kept");
        assert!(lines[0].ends_with("(49995904 more bytes not kept)"), "{}", &lines[0][lines[0].len() - 40..]);
        assert_eq!(lines[1], "postgres://u:***@db/x");
        assert_eq!(outcome.failed_executions().len(), 1);
    }

    #[test]
    fn setup_and_teardown_run_once_around_the_steps() {
        let dir = std::env::temp_dir().join(format!("envbench-exec-{}", std::process::id()));
        let mut o = options(&[("append", &format!("echo step >> {}/log", dir.display()))], 2);
        o.setup = Some(format!("mkdir -p {0} && echo setup > {0}/log", dir.display()));
        o.teardown = Some(format!("echo teardown >> {}/log", dir.display()));
        let outcome = run(&o);
        assert!(outcome.setup.unwrap().succeeded() && outcome.teardown.unwrap().succeeded());
        let log = std::fs::read_to_string(dir.join("log")).unwrap();
        assert_eq!(log, "setup\nstep\nstep\nteardown\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A scratch directory of one test.
    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("envbench-exec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Whether the process whose pid a step wrote to `file` is still running (a zombie has ended).
    fn still_running(file: &std::path::Path) -> bool {
        let pid = std::fs::read_to_string(file).unwrap();
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|stat| !stat[stat.rfind(')').unwrap() + 1..].trim_start().starts_with('Z'))
    }

    #[test]
    fn interrupt_kills_the_process_group() {
        let dir = scratch("interrupt");
        let interrupt = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&interrupt);
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            flag.store(true, Ordering::SeqCst);
        });
        let started = Instant::now();
        let step = format!("sleep 300 & echo $! > {}/background; sleep 300; wait", dir.display());
        let outcome = run_exec(&options(&[("hang", &step)], 1), &NoSteps, &interrupt, &mut |_| {}).unwrap();
        assert!(started.elapsed() < Duration::from_secs(60), "took {:?}", started.elapsed());
        assert!(outcome.interrupted);
        assert_eq!(outcome.executions[0].signal, Some(libc::SIGTERM));
        assert!(!still_running(&dir.join("background")), "the background child is stopped with the step");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_background_child_holding_the_output_does_not_hold_the_step() {
        // The shell ends at once; its child keeps the output pipe open for 300 s. The step ends with the shell, with
        // what it printed, and the child is stopped with it.
        let dir = scratch("background");
        let step = format!("sleep 300 & echo $! > {}/background; echo started", dir.display());
        let outcome = run(&options(&[("detached", &step)], 2));
        assert_eq!(outcome.executions.len(), 2);
        for execution in &outcome.executions {
            assert!(execution.succeeded(), "{execution:?}");
            assert_eq!(execution.last_lines, ["started"]);
        }
        assert!(!still_running(&dir.join("background")), "the background child is stopped with the step");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_options_are_refused() {
        assert!(matches!(options(&[], 1).validate(), Err(ExecError::NoSteps)));
        let long = "x".repeat(5000);
        let mut named = options(&[("a", "true")], 1);
        named.name = long.clone();
        let refused = named.validate().unwrap_err().to_string();
        assert!(refused.contains("--name is 5000 characters long; keep it to 200"), "{refused}");
        named.name = "ok".into();
        named.steps.push(StepCommand { name: long, command: "true".into() });
        let refused = named.validate().unwrap_err().to_string();
        assert!(refused.contains("--step 2 is 5000 characters long"), "{refused}");
        named.steps[1].name = "b\u{202e}".into();
        assert!(matches!(named.validate(), Err(ExecError::BadName(_))));
        assert!(matches!(options(&[("a", "true")], 0).validate(), Err(ExecError::NoRepeat)));
        assert!(matches!(options(&[("a", "true"), ("a", "false")], 1).validate(), Err(ExecError::DuplicateStep(_))));
    }
}

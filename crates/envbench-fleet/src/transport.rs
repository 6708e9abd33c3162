//! How agents are started: as local processes (one machine, many agents), over the system's OpenSSH (so keys,
//! agents, jump hosts and `~/.ssh/config` work as they do for the user), or by someone else (Ansible, a Kubernetes
//! job, Slurm), given the agent command the coordinator prints.

use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How the agents are started.
#[derive(Clone, Debug, PartialEq)]
pub enum Transport {
    /// `count` agent processes on this machine.
    Local { count: usize },
    /// One agent per host over ssh.
    Ssh(SshOptions),
    /// `count` agents started by someone else with the printed command.
    External { count: usize },
}

/// How to reach the hosts over ssh.
#[derive(Clone, Debug, PartialEq)]
pub struct SshOptions {
    /// Hosts as ssh takes them: `host`, `user@host`, or an alias of the ssh configuration.
    pub hosts: Vec<String>,
    /// `-F FILE`: an ssh configuration file instead of `~/.ssh/config`.
    pub config: Option<PathBuf>,
    /// `-o KEY=VALUE` options.
    pub options: Vec<String>,
    /// The envbench program on the hosts.
    pub remote_binary: String,
    /// Copy this envbench to each host first (removed again at the end).
    pub copy_binary: bool,
}

impl Transport {
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Local { .. } => "local",
            Transport::Ssh(_) => "ssh",
            Transport::External { .. } => "external",
        }
    }

    /// The agents' names: `local-1`..., each ssh host as given (a repeated host numbered), `agent-1`...
    pub fn agent_names(&self) -> Vec<String> {
        match self {
            Transport::Local { count } => (1..=*count).map(|i| format!("local-{i}")).collect(),
            Transport::External { count } => (1..=*count).map(|i| format!("agent-{i}")).collect(),
            Transport::Ssh(ssh) => {
                let mut names: Vec<String> = Vec::new();
                for host in &ssh.hosts {
                    let mut name = host.clone();
                    let mut n = 1;
                    while names.contains(&name) {
                        n += 1;
                        name = format!("{host}#{n}");
                    }
                    names.push(name);
                }
                names
            }
        }
    }
}

/// A started agent: its process (the ssh client, for ssh), and the last lines it wrote, for error messages.
pub struct AgentProcess {
    pub name: String,
    /// A process on this machine (local transport), which a signal stops.
    local: bool,
    child: Option<Child>,
    output: Arc<Mutex<Vec<String>>>,
    /// The threads reading its standard output and error into `output`.
    readers: Vec<std::thread::JoinHandle<()>>,
    exit: Option<ExitStatus>,
}

/// How long an ended agent's readers get to take in its last lines (a background child of the agent could hold the
/// pipes open for ever: its lines are not waited for past this).
const LAST_LINES_WAIT: Duration = Duration::from_secs(2);

/// The most lines of an agent's output kept for its error message.
const KEPT_LINES: usize = 20;

impl AgentProcess {
    /// An agent nobody here started (external transport, or a host left out).
    pub fn external(name: &str) -> AgentProcess {
        AgentProcess {
            name: name.to_string(),
            local: false,
            child: None,
            output: Arc::default(),
            readers: Vec::new(),
            exit: None,
        }
    }

    /// Start `command`; `input`, when given, is written to its standard input, which is then closed.
    fn spawn(name: &str, mut command: Command, local: bool, input: Option<&str>) -> Result<AgentProcess, String> {
        let stdin = if input.is_some() { Stdio::piped() } else { Stdio::null() };
        command.stdin(stdin).stdout(Stdio::piped()).stderr(Stdio::piped());
        // Its own process group: Ctrl-C reaches the coordinator, which stops every agent in order.
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| format!("cannot start {:?} ({e})", command.get_program()))?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            // A few lines: far less than a pipe holds, so this never waits on the remote side.
            use std::io::Write;
            if let Err(error) = stdin.write_all(input.as_bytes()) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("cannot hand the agent its environment ({error})"));
            }
        }
        let output: Arc<Mutex<Vec<String>>> = Arc::default();
        let mut readers = Vec::new();
        for stream in [
            child.stdout.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
            child.stderr.take().map(|s| Box::new(s) as Box<dyn Read + Send>),
        ]
        .into_iter()
        .flatten()
        {
            let output = Arc::clone(&output);
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    let line = line.rsplit('\r').next().unwrap_or("").to_string();
                    let mut kept = output.lock().expect("not poisoned");
                    kept.push(line);
                    if kept.len() > KEPT_LINES {
                        kept.remove(0);
                    }
                }
            }));
        }
        Ok(AgentProcess { name: name.to_string(), local, child: Some(child), output, readers, exit: None })
    }

    /// The exit status once the process ended (never, for an external agent). Once it has, the lines it wrote last
    /// are in [`last_output`](Self::last_output): the process can end before its readers reach the end of its
    /// output, and an error message without its last line (`Connection refused`) says nothing.
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.exit.is_none()
            && let Some(child) = &mut self.child
            && let Ok(Some(status)) = child.try_wait()
        {
            self.exit = Some(status);
            self.await_readers();
        }
        self.exit
    }

    /// Wait, a bounded while, for the readers to reach the end of the ended process's output.
    fn await_readers(&mut self) {
        let deadline = Instant::now() + LAST_LINES_WAIT;
        while self.readers.iter().any(|r| !r.is_finished()) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        self.readers.retain(|r| !r.is_finished());
    }

    /// True while the process runs (an external agent's is not known: true).
    pub fn running(&mut self) -> bool {
        self.child.is_none() || self.exited().is_none()
    }

    /// The last lines the agent wrote, for an error message.
    pub fn last_output(&self) -> String {
        let kept = self.output.lock().expect("not poisoned");
        kept.iter().filter(|l| !l.trim().is_empty()).cloned().collect::<Vec<_>>().join(" | ")
    }

    /// True for an agent nobody here started.
    pub fn is_external(&self) -> bool {
        self.child.is_none()
    }

    /// Ask a local agent to stop now (SIGTERM: it stores its run as interrupted and removes its files). A remote
    /// agent reads the stop from the board instead (a signal to its ssh client would not reach it).
    pub fn interrupt_if_local(&mut self) {
        if !self.local {
            return;
        }
        if self.exited().is_none()
            && let Some(child) = &self.child
        {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
        }
    }

    /// Stop the process at once.
    pub fn kill(&mut self) {
        if let Some(child) = &mut self.child
            && self.exit.is_none()
        {
            let _ = child.kill();
            self.exit = child.wait().ok();
        }
    }
}

/// Words quoted for a POSIX shell (what ssh hands the remote command to).
pub fn shell_words(words: &[String]) -> String {
    words
        .iter()
        .map(|w| {
            if !w.is_empty() && w.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+%".contains(c)) {
                w.clone()
            } else {
                format!("'{}'", w.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The agent command line for a fleet (what `--transport external` prints, and what ssh runs).
pub fn agent_words(program: &str, fleet: &str, name: &str) -> Vec<String> {
    [program, "agent", "--fleet", fleet, "--name", name].map(String::from).to_vec()
}

/// The most agents a fleet over ssh starts: each is one ssh session that stays open for the whole run. More hosts
/// than this are for `--transport external` (a job scheduler or Ansible starts the agents).
pub const MAX_SSH_AGENTS: usize = 256;

/// How many ssh sessions are opened at once; the next ones wait [`SSH_WAVE_PAUSE`], so a large fleet does not open
/// hundreds of connections (and processes) in the same instant.
pub const SSH_SESSIONS_AT_ONCE: usize = 32;
const SSH_WAVE_PAUSE: std::time::Duration = std::time::Duration::from_millis(250);

/// What ssh runs on a host: a POSIX shell that reads the agent's environment (its store, database passwords) from
/// standard input, one value a line, exports it and becomes the agent. Secrets so never appear in the remote command
/// line, where `ps` on either host would show them. Values are checked to hold no line break.
pub fn remote_agent_command(variables: &[&str], agent: &[String]) -> String {
    let mut script = String::new();
    for variable in variables {
        script.push_str(&format!("IFS= read -r {variable} || exit 97; export {variable}; "));
    }
    script.push_str("exec ");
    script.push_str(&shell_words(agent));
    shell_words(&["exec".to_string(), "sh".to_string(), "-c".to_string(), script])
}

impl SshOptions {
    /// `ssh` with the user's configuration and options, never asking for a password (a fleet has no terminal to
    /// ask on), to `host`.
    fn command(&self, host: &str) -> Command {
        let mut command = Command::new("ssh");
        command.args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]);
        if let Some(config) = &self.config {
            command.arg("-F").arg(config);
        }
        for option in &self.options {
            command.arg("-o").arg(option);
        }
        command.arg(host).arg("--");
        command
    }

    /// Where a copied binary goes on the hosts.
    pub fn copied_binary(fleet: &str) -> String {
        format!("/tmp/envbench-fleet-{}", &fleet[..fleet.len().min(8)])
    }

    /// Copy `packed` (this envbench, gzip-compressed by [`program_to_copy`]) to `host` at `path`, over ssh's standard
    /// input; the host unpacks it with gzip, which every Linux distribution installs.
    pub fn copy_binary(&self, host: &str, path: &str, packed: &[u8]) -> Result<(), String> {
        use std::io::Write;
        let quoted = shell_words(&[path.to_string()]);
        let mut child = self
            .command(host)
            // A stream that ends early (refused, cut, or the connection dropped) leaves no part of the binary behind:
            // the partial file goes however the shell ends.
            .arg(format!(
                "umask 077 && trap 'rm -f {quoted}.part' EXIT && trap 'exit 129' HUP INT TERM PIPE && \
                 {{ command -v gzip >/dev/null || {{ echo 'gzip is not installed there: install it, or copy \
                 envbench there yourself and give --remote-binary' >&2; exit 3; }}; }} && \
                 gzip -dc > {quoted}.part && chmod 700 {quoted}.part && mv {quoted}.part {quoted}"
            ))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run ssh ({e})"))?;
        // A host that refuses the copy closes its end early: its answer on standard error says why.
        let sent = child.stdin.take().expect("piped").write_all(packed);
        let output = child.wait_with_output().map_err(|e| format!("cannot run ssh ({e})"))?;
        if !output.status.success() || sent.is_err() {
            return Err(format!(
                "copying envbench to {host} failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(())
    }

    /// Remove a copied binary from `host` (best effort).
    pub fn remove_binary(&self, host: &str, path: &str) {
        let _ = self.command(host).arg(format!("rm -f {}", shell_words(&[path.to_string()]))).output();
    }
}

/// This envbench as `--copy-binary` sends it: the program without its debug information (a build with line tables
/// carries hundreds of megabytes that only a backtrace on this host reads), gzip-compressed once for every host, and a
/// line saying what is sent.
pub fn program_to_copy() -> Result<(Vec<u8>, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this envbench program ({e})"))?;
    let image =
        std::fs::read(&exe).map_err(|e| format!("cannot read this envbench program {} ({e})", exe.display()))?;
    let mib = |bytes: usize| bytes as f64 / (1024.0 * 1024.0);
    let (program, debug) = match crate::strip::strip_debug(&image) {
        Ok(Some(stripped)) => (stripped.image, Some(stripped.debug_bytes as usize)),
        Ok(None) => (image, None),
        Err(error) => {
            return Err(format!(
                "{}: {error}; --copy-binary sends only envbench's own Linux executable, without its debug information",
                exe.display()
            ));
        }
    };
    let packed = gzip(&program);
    let mut line = format!("copying envbench ({:.1} MiB, {:.1} MiB compressed", mib(program.len()), mib(packed.len()));
    if let Some(debug) = debug {
        line.push_str(&format!("; its {:.1} MiB of debug information stay here", mib(debug)));
    }
    line.push(')');
    Ok((packed, line))
}

/// `bytes` as a gzip stream, at the level that pays on a network: level 1 packs the stripped release envbench (111 MB)
/// to 40 MB in 1.5 s, level 6 to 36 MB in 4.6 s (gzip, 2-vCPU VM), so level 1 is sooner done at any speed above
/// 1.4 MB/s to one host.
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 2), flate2::Compression::fast());
    encoder.write_all(bytes).expect("writing to memory");
    encoder.finish().expect("writing to memory")
}

/// Start the agents of `fleet`, named `names` but for `skip`, with `environment`: their store
/// (`ENVBENCH_STORE`, a URL or path every agent reaches) and the database passwords the workload's URLs leave out.
pub fn start(
    transport: &Transport,
    fleet: &str,
    names: &[String],
    skip: &[String],
    environment: &[(String, String)],
) -> Result<Vec<AgentProcess>, (String, String)> {
    if let Some((key, _)) = environment.iter().find(|(_, value)| value.contains(['\n', '\r', '\0'])) {
        return Err((String::new(), format!("{key} holds a line break; an agent's environment cannot carry it")));
    }
    let mut started = Vec::new();
    for (index, name) in names.iter().enumerate() {
        if index > 0 && index % SSH_SESSIONS_AT_ONCE == 0 && matches!(transport, Transport::Ssh(_)) {
            std::thread::sleep(SSH_WAVE_PAUSE);
        }
        let process = match transport {
            _ if skip.contains(name) => Ok(AgentProcess::external(name)),
            Transport::External { .. } => Ok(AgentProcess::external(name)),
            Transport::Local { .. } => {
                let exe = std::env::current_exe().map_err(|e| (name.clone(), format!("cannot find envbench ({e})")))?;
                let mut command = Command::new(exe);
                command.args(&agent_words("envbench", fleet, name)[1..]).envs(environment.iter().cloned());
                AgentProcess::spawn(name, command, true, None)
            }
            Transport::Ssh(ssh) => {
                let host = &ssh.hosts[index];
                let program =
                    if ssh.copy_binary { SshOptions::copied_binary(fleet) } else { ssh.remote_binary.clone() };
                let variables: Vec<&str> = environment.iter().map(|(key, _)| key.as_str()).collect();
                let input: String = environment.iter().map(|(_, value)| format!("{value}\n")).collect();
                let mut command = ssh.command(host);
                command.arg(remote_agent_command(&variables, &agent_words(&program, fleet, name)));
                AgentProcess::spawn(name, command, false, Some(&input))
            }
        };
        match process {
            Ok(process) => started.push(process),
            Err(error) => {
                for mut other in started {
                    other.kill();
                }
                return Err((name.clone(), error));
            }
        }
    }
    Ok(started)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CI's finding: a refused ssh connection was reported without ssh's last line, read after the process ended.
    #[test]
    fn an_ended_agent_is_reported_with_its_last_line() {
        for _ in 0..50 {
            let mut command = Command::new("sh");
            command.args(["-c", "echo first; echo 'ssh: connect to host h port 1: Connection refused' >&2; exit 255"]);
            let mut agent = AgentProcess::spawn("h", command, false, None).unwrap();
            let status = loop {
                if let Some(status) = agent.exited() {
                    break status;
                }
                std::thread::sleep(Duration::from_millis(1));
            };
            assert_eq!(status.code(), Some(255));
            assert!(agent.last_output().contains("Connection refused"), "{}", agent.last_output());
        }
    }

    #[test]
    fn remote_words_are_quoted_for_the_shell() {
        let words = ["env", "ENVBENCH_STORE=postgres://u@h/db", "it's here", ""].map(String::from);
        assert_eq!(shell_words(&words), r"env ENVBENCH_STORE=postgres://u@h/db 'it'\''s here' ''");
    }

    /// The battery's finding D8: the store URL and database passwords never reach ssh's command line; a shell on
    /// the host reads them from standard input.
    #[test]
    fn secrets_travel_over_standard_input_not_the_command_line() {
        let agent = agent_words("envbench", "f1", "db1");
        let command = remote_agent_command(&["ENVBENCH_STORE", "PGPASSWORD"], &agent);
        assert!(!command.contains("postgres://") && !command.contains("secret"), "{command}");
        let script = format!(
            "printf 'postgres://u:pw@h/db\\nsec ret\\n' | {}",
            command.replace("exec envbench agent --fleet f1 --name db1", "env")
        );
        let output = Command::new("sh").args(["-c", &script]).output().unwrap();
        let env = String::from_utf8_lossy(&output.stdout);
        assert!(env.contains("ENVBENCH_STORE=postgres://u:pw@h/db") && env.contains("PGPASSWORD=sec ret"), "{env}");
    }

    #[test]
    fn agents_are_named_by_transport() {
        assert_eq!(Transport::Local { count: 2 }.agent_names(), ["local-1", "local-2"]);
        let ssh = SshOptions {
            hosts: vec!["db1".into(), "bob@db2".into(), "db1".into()],
            config: None,
            options: Vec::new(),
            remote_binary: "envbench".into(),
            copy_binary: false,
        };
        assert_eq!(Transport::Ssh(ssh).agent_names(), ["db1", "bob@db2", "db1#2"]);
    }
}

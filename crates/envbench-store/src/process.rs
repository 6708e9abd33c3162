//! Which process runs a run, so that a run whose envbench was killed hard does not stay `running` forever.
//!
//! A run keeps the identity of its process: the machine (`/etc/machine-id`), the boot (`boot_id`), the pid and the
//! pid's start time (so a reused pid is not mistaken for the run's process). When a store is opened, a running run of
//! this machine whose process is gone, or of any machine that has been running for longer than [`ABANDONED_AFTER_S`],
//! is marked interrupted.

use envbench_core::model::parse_utc;

/// A run still `running` after this long, on a machine envbench cannot look into, is taken as abandoned.
pub const ABANDONED_AFTER_S: i64 = 7 * 24 * 3600;

/// The identity of one process on one machine and boot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProcessIdentity {
    machine: String,
    boot: String,
    pid: u32,
    /// Clock ticks after boot at which the process started (`/proc/PID/stat` field 22).
    start_ticks: u64,
}

impl ProcessIdentity {
    /// This process, when the machine tells (Linux with /proc).
    pub fn current() -> Option<ProcessIdentity> {
        let machine = read_trimmed("/etc/machine-id").or_else(|| read_trimmed("/var/lib/dbus/machine-id"))?;
        let boot = read_trimmed("/proc/sys/kernel/random/boot_id")?;
        let pid = std::process::id();
        Some(ProcessIdentity { machine, boot, pid, start_ticks: start_ticks(pid)? })
    }

    /// Read back what [`std::fmt::Display`] wrote.
    pub fn parse(text: &str) -> Option<ProcessIdentity> {
        let mut parts = text.split_whitespace();
        let identity = ProcessIdentity {
            machine: parts.next()?.to_string(),
            boot: parts.next()?.to_string(),
            pid: parts.next()?.parse().ok()?,
            start_ticks: parts.next()?.parse().ok()?,
        };
        parts.next().is_none().then_some(identity)
    }

    /// Whether this process is gone, seen from `me` (a process on the same or another machine): `None` when it
    /// cannot be told from here (another machine).
    fn is_gone(&self, me: &ProcessIdentity) -> Option<bool> {
        if self.machine != me.machine {
            return None;
        }
        Some(self.boot != me.boot || start_ticks(self.pid) != Some(self.start_ticks))
    }
}

impl std::fmt::Display for ProcessIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {} {} {}", self.machine, self.boot, self.pid, self.start_ticks)
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty() && !text.contains(char::is_whitespace)).then(|| text.to_string())
}

/// The start time of a process, `None` when there is no such process.
fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Why a running run should be marked interrupted, or `None` when it may still be running. `owner` is the run's
/// process (unknown for runs written by envbench before it kept one), `me` this process, `started_at` and `now` are
/// RFC 3339 times.
pub(crate) fn abandoned_reason(
    owner: Option<&ProcessIdentity>,
    me: Option<&ProcessIdentity>,
    started_at: &str,
    now: &str,
) -> Option<String> {
    if let (Some(owner), Some(me)) = (owner, me)
        && owner.is_gone(me) == Some(true)
    {
        return Some(format!(
            "interrupted: its envbench process (pid {}) ended without finishing the run (killed, or the machine \
             restarted)",
            owner.pid
        ));
    }
    let age = parse_utc(now)? - parse_utc(started_at)?;
    (age > ABANDONED_AFTER_S).then(|| {
        format!("interrupted: still running after {} days with no end recorded; taken as abandoned", age / 86_400)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_dead_one_is_gone() {
        let me = ProcessIdentity::current().expect("Linux tells who we are");
        assert_eq!(ProcessIdentity::parse(&me.to_string()), Some(me.clone()));
        assert_eq!(me.is_gone(&me), Some(false));
        let now = envbench_core::model::now_utc();
        assert_eq!(abandoned_reason(Some(&me), Some(&me), &now, &now), None);

        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = ProcessIdentity { pid: child.id(), start_ticks: start_ticks(child.id()).unwrap_or(1), ..me.clone() };
        child.wait().unwrap();
        assert_eq!(dead.is_gone(&me), Some(true));
        assert!(abandoned_reason(Some(&dead), Some(&me), &now, &now).unwrap().contains("ended without finishing"));

        let reused = ProcessIdentity { start_ticks: me.start_ticks + 1, ..me.clone() };
        assert_eq!(reused.is_gone(&me), Some(true), "a reused pid is not the run's process");
        let rebooted = ProcessIdentity { boot: "other-boot".into(), ..me.clone() };
        assert_eq!(rebooted.is_gone(&me), Some(true));
    }

    #[test]
    fn other_machines_are_judged_by_age_only() {
        let me = ProcessIdentity::current().unwrap();
        let elsewhere = ProcessIdentity { machine: "another-machine".into(), ..me.clone() };
        assert_eq!(elsewhere.is_gone(&me), None);
        let now = "2026-11-23T12:00:00.000Z";
        assert_eq!(abandoned_reason(Some(&elsewhere), Some(&me), "2026-11-20T12:00:00.000Z", now), None);
        let old = abandoned_reason(Some(&elsewhere), Some(&me), "2026-11-01T12:00:00.000Z", now).unwrap();
        assert!(old.contains("22 days"), "{old}");
        assert!(abandoned_reason(None, Some(&me), "2026-11-01T12:00:00.000Z", now).is_some());
        assert_eq!(ProcessIdentity::parse("not an identity"), None);
    }
}

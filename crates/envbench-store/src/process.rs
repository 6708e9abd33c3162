//! Which process runs a run, so that a run whose envbench was killed hard does not stay `running` forever, and a run
//! that is still running is never taken for dead.
//!
//! The proof that a run is alive is its lock ([`crate::liveness`]): held, the run is running; free, its process is
//! gone. A run also keeps the identity of its process: the machine (`/etc/machine-id`), the boot (`boot_id`), the
//! PID namespace (the inode of `/proc/self/ns/pid`), the pid and the pid's start time (so a reused pid is not
//! mistaken for the run's process), and whether it holds a lock. Containers share the boot id and often the
//! machine id, cloned machines share the machine id: a pid is looked up only from the same boot and PID namespace,
//! and only when the lock cannot tell (runs recorded by an envbench that kept no lock, a lock file out of sight).
//! Otherwise a run still `running` after [`ABANDONED_AFTER_S`] is taken as abandoned, unless its lock is held.

use crate::liveness::Liveness;
use envbench_core::model::parse_utc;
use std::os::unix::fs::MetadataExt;

/// A run still `running` after this long, whose process envbench cannot look into, is taken as abandoned.
pub const ABANDONED_AFTER_S: i64 = 7 * 24 * 3600;

/// The identity of one process on one machine and boot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ProcessIdentity {
    machine: String,
    boot: String,
    /// The inode of the process's PID namespace, when this process's /proc shows that namespace; `None` in
    /// identities written by envbench before it kept one.
    pid_namespace: Option<u64>,
    pid: u32,
    /// Clock ticks after boot at which the process started (`/proc/PID/stat` field 22).
    start_ticks: u64,
    /// Whether the process holds the run's lock ([`crate::liveness`]).
    holds_lock: bool,
}

impl ProcessIdentity {
    /// This process, when the machine tells (Linux with /proc); `holds_lock` says whether it holds the run's lock.
    pub fn current(holds_lock: bool) -> Option<ProcessIdentity> {
        let machine = read_trimmed("/etc/machine-id").or_else(|| read_trimmed("/var/lib/dbus/machine-id"))?;
        let boot = read_trimmed("/proc/sys/kernel/random/boot_id")?;
        let pid = std::process::id();
        // A /proc mounted for another PID namespace names processes by other numbers: no pid of it is comparable.
        let own_proc = std::fs::read_link("/proc/self").is_ok_and(|link| link.as_os_str() == pid.to_string().as_str());
        let pid_namespace = own_proc.then(|| std::fs::metadata("/proc/self/ns/pid").ok().map(|m| m.ino())).flatten();
        Some(ProcessIdentity {
            machine,
            boot,
            pid_namespace,
            pid,
            start_ticks: start_ticks_of("/proc/self/stat")?,
            holds_lock,
        })
    }

    /// Whether the process holds the run's lock, so that the lock tells whether it is alive.
    pub fn holds_lock(&self) -> bool {
        self.holds_lock
    }

    /// Read back what [`std::fmt::Display`] wrote, also the four fields envbench wrote before it kept the PID
    /// namespace and the lock.
    pub fn parse(text: &str) -> Option<ProcessIdentity> {
        let parts: Vec<&str> = text.split_whitespace().collect();
        let (pid_namespace, holds_lock) = match parts.as_slice() {
            [_, _, _, _] => (None, false),
            [_, _, _, _, namespace, lock] => {
                let namespace = match namespace.strip_prefix("pidns:")? {
                    "-" => None,
                    inode => Some(inode.parse().ok()?),
                };
                let holds_lock = match *lock {
                    "lock" => true,
                    "nolock" => false,
                    _ => return None,
                };
                (namespace, holds_lock)
            }
            _ => return None,
        };
        Some(ProcessIdentity {
            machine: parts[0].to_string(),
            boot: parts[1].to_string(),
            pid_namespace,
            pid: parts[2].parse().ok()?,
            start_ticks: parts[3].parse().ok()?,
            holds_lock,
        })
    }
    /// Whether this process is gone, seen from `me`: `None` when its pid cannot be looked up from here (another
    /// machine, boot or PID namespace, or an identity that does not say its namespace).
    fn is_gone(&self, me: &ProcessIdentity) -> Option<bool> {
        let same_namespace = self.machine == me.machine
            && self.boot == me.boot
            && self.pid_namespace.is_some()
            && self.pid_namespace == me.pid_namespace;
        same_namespace.then(|| start_ticks(self.pid) != Some(self.start_ticks))
    }
}

impl std::fmt::Display for ProcessIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let namespace = self.pid_namespace.map_or("-".to_string(), |inode| inode.to_string());
        let lock = if self.holds_lock { "lock" } else { "nolock" };
        write!(f, "{} {} {} {} pidns:{namespace} {lock}", self.machine, self.boot, self.pid, self.start_ticks)
    }
}

fn read_trimmed(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty() && !text.contains(char::is_whitespace)).then(|| text.to_string())
}

/// The start time of a process, `None` when there is no such process.
fn start_ticks(pid: u32) -> Option<u64> {
    start_ticks_of(&format!("/proc/{pid}/stat"))
}

fn start_ticks_of(stat_path: &str) -> Option<u64> {
    let stat = std::fs::read_to_string(stat_path).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing parenthesis.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

/// Why a running run should be marked interrupted, or `None` when it may still be running. `owner` is the run's
/// process (unknown for runs written by envbench before it kept one), `me` this process, `lock` what the run's lock
/// says (`None` when the owner holds none), `started_at` and `now` are RFC 3339 times. Only positive evidence ends a
/// run: its lock free, its pid gone from the same PID namespace, or its age.
pub(crate) fn abandoned_reason(
    owner: Option<&ProcessIdentity>,
    me: Option<&ProcessIdentity>,
    lock: Option<Liveness>,
    started_at: &str,
    now: &str,
) -> Option<String> {
    let ended = |owner: &ProcessIdentity| {
        format!(
            "interrupted: its envbench process (pid {}) ended without finishing the run (killed, or the machine \
             restarted)",
            owner.pid
        )
    };
    match (lock, owner) {
        (Some(Liveness::Held), _) => return None,
        (Some(Liveness::Free), Some(owner)) => return Some(ended(owner)),
        _ => {}
    }
    if let (Some(owner), Some(me)) = (owner, me)
        && owner.is_gone(me) == Some(true)
    {
        return Some(ended(owner));
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
        let me = ProcessIdentity::current(true).expect("Linux tells who we are");
        assert!(me.pid_namespace.is_some() && me.holds_lock());
        assert_eq!(ProcessIdentity::parse(&me.to_string()), Some(me.clone()));
        assert_eq!(me.is_gone(&me), Some(false));
        let now = envbench_core::model::now_utc();
        assert_eq!(abandoned_reason(Some(&me), Some(&me), None, &now, &now), None);

        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = ProcessIdentity { pid: child.id(), start_ticks: start_ticks(child.id()).unwrap_or(1), ..me.clone() };
        child.wait().unwrap();
        assert_eq!(dead.is_gone(&me), Some(true));
        assert!(
            abandoned_reason(Some(&dead), Some(&me), None, &now, &now).unwrap().contains("ended without finishing")
        );

        let reused = ProcessIdentity { start_ticks: me.start_ticks + 1, ..me.clone() };
        assert_eq!(reused.is_gone(&me), Some(true), "a reused pid is not the run's process");
    }

    #[test]
    fn the_lock_decides_when_it_can_tell() {
        let me = ProcessIdentity::current(true).unwrap();
        let now = "2026-11-23T12:00:00.000Z";
        let long_ago = "2026-01-01T12:00:00.000Z";
        // Held: alive, even when its pid is not to be seen here and it is older than the age limit.
        let elsewhere = ProcessIdentity { pid: u32::MAX, ..me.clone() };
        assert_eq!(abandoned_reason(Some(&elsewhere), Some(&me), Some(Liveness::Held), long_ago, now), None);
        // Free: its process is gone, wherever it ran.
        let other_machine = ProcessIdentity { machine: "another-machine".into(), ..me.clone() };
        let reason = abandoned_reason(Some(&other_machine), Some(&me), Some(Liveness::Free), now, now).unwrap();
        assert!(reason.contains("ended without finishing"), "{reason}");
        // Unknown: the pid where it can be looked up, the age otherwise.
        assert_eq!(abandoned_reason(Some(&me), Some(&me), Some(Liveness::Unknown), now, now), None);
        assert!(abandoned_reason(Some(&other_machine), Some(&me), Some(Liveness::Unknown), long_ago, now).is_some());
    }

    #[test]
    fn other_namespaces_boots_and_machines_are_judged_by_age_only() {
        let me = ProcessIdentity::current(false).unwrap();
        // The pid of a live run in another PID namespace (a container sharing machine and boot ids) is not in this
        // /proc: it says nothing. The same for a cloned machine (same machine id, another boot) and another machine.
        let another_namespace = ProcessIdentity { pid_namespace: Some(1), pid: u32::MAX, ..me.clone() };
        let cloned = ProcessIdentity { boot: "other-boot".into(), pid: u32::MAX, ..me.clone() };
        let elsewhere = ProcessIdentity { machine: "another-machine".into(), ..me.clone() };
        // Written by an envbench that kept no namespace: its namespace cannot be proved the same.
        let old = ProcessIdentity::parse(&format!("{} {} {} 1", me.machine, me.boot, u32::MAX)).unwrap();
        assert_eq!((old.pid_namespace, old.holds_lock), (None, false));
        let now = "2026-11-23T12:00:00.000Z";
        for owner in [&another_namespace, &cloned, &elsewhere, &old] {
            assert_eq!(owner.is_gone(&me), None, "{owner}");
            assert_eq!(abandoned_reason(Some(owner), Some(&me), None, "2026-11-20T12:00:00.000Z", now), None);
            let aged = abandoned_reason(Some(owner), Some(&me), None, "2026-11-01T12:00:00.000Z", now).unwrap();
            assert!(aged.contains("22 days"), "{aged}");
        }
        assert!(abandoned_reason(None, Some(&me), None, "2026-11-01T12:00:00.000Z", now).is_some());
        for bad in ["not an identity", "m b 1 2 3", "m b 1 2 pidns:x lock", "m b 1 2 pidns:- maybe"] {
            assert_eq!(ProcessIdentity::parse(bad), None, "{bad}");
        }
    }
}

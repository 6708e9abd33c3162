//! Waiting that a stop request cuts short: a workload's pauses and schedules all wake within 50 ms of Ctrl-C; and
//! when a request waited for its schedule too long ([`LATE_AFTER`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How long a wait sleeps at most before it looks at the stop flag again.
const POLL: Duration = Duration::from_millis(50);

/// Of an open loop's requests (oltp's `--rate`, a replay at its captured pace): one sent later than this after its
/// intended start is late, as it waited for its session. (A [`sleep_until`] wakes well within it.)
pub const LATE_AFTER: Duration = Duration::from_millis(1);

/// Sleep until `deadline` unless `stop` is set first; false when stopped.
pub fn sleep_until(deadline: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep((deadline - now).min(POLL));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_at_its_deadline_or_at_once_when_stopped() {
        let start = Instant::now();
        assert!(sleep_until(start + Duration::from_millis(20), &AtomicBool::new(false)));
        assert!(start.elapsed() >= Duration::from_millis(20));
        assert!(!sleep_until(Instant::now() + Duration::from_secs(3600), &AtomicBool::new(true)));
    }
}

//! A minimal work-sharing loop: `threads` workers take unit numbers from an atomic counter until the units run out,
//! an error occurs or the user cancels. Units are checked for cancellation one by one, so a unit should be small
//! (a block group, a file chunk) for Ctrl-C to take effect within a second.

use crate::error::CubeError;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Run `work(state, unit)` for every unit in `0..units` on `threads` threads, each with its own state from
/// `init`. Returns the first error; [`CubeError::Cancelled`] when `cancel` was set.
pub(crate) fn for_each_unit<S>(
    threads: usize,
    units: usize,
    cancel: &AtomicBool,
    step: &str,
    init: impl Fn() -> S + Sync,
    work: impl Fn(&mut S, usize) -> Result<(), CubeError> + Sync,
) -> Result<(), CubeError> {
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let first_error: Mutex<Option<CubeError>> = Mutex::new(None);
    let worker = || {
        let mut state = init();
        loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            if cancel.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
                return;
            }
            let unit = next.fetch_add(1, Ordering::Relaxed);
            if unit >= units {
                return;
            }
            if let Err(error) = work(&mut state, unit) {
                stop.store(true, Ordering::Relaxed);
                first_error.lock().expect("error slot").get_or_insert(error);
                return;
            }
        }
    };
    let threads = threads.clamp(1, units.max(1));
    if threads == 1 {
        worker();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(worker);
            }
        });
    }
    if let Some(error) = first_error.into_inner().expect("error slot") {
        return Err(error);
    }
    check_cancel(cancel, step)
}

/// `Err(Cancelled)` when the user asked to stop.
pub(crate) fn check_cancel(cancel: &AtomicBool, step: &str) -> Result<(), CubeError> {
    if cancel.load(Ordering::Relaxed) { Err(CubeError::Cancelled { step: step.to_string() }) } else { Ok(()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn every_unit_runs_once() {
        let sum = AtomicU64::new(0);
        let never = AtomicBool::new(false);
        for_each_unit(
            3,
            1000,
            &never,
            "t",
            || (),
            |_, u| {
                sum.fetch_add(u as u64, Ordering::Relaxed);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(sum.load(Ordering::Relaxed), 999 * 1000 / 2);
    }

    #[test]
    fn cancellation_and_errors_stop_the_loop() {
        let cancel = AtomicBool::new(true);
        let result = for_each_unit(2, 10, &cancel, "4 aggregation", || (), |_, _| Ok(()));
        assert!(matches!(result, Err(CubeError::Cancelled { .. })));
        let never = AtomicBool::new(false);
        let result = for_each_unit(
            2,
            10,
            &never,
            "t",
            || (),
            |_, u| {
                if u == 3 { Err(CubeError::Config("boom".into())) } else { Ok(()) }
            },
        );
        assert!(matches!(result, Err(CubeError::Config(_))));
    }
}

//! What `inspect` and `replay` both keep of a capture's sessions as they read it: which are open, each one's
//! database as the log last named it, the statement a later `duration:` line belongs to, and when each session
//! began and ended, for the captured concurrency over time.

use crate::capture::{Event, EventKind};
use std::collections::HashMap;

/// The capture's sessions, fed every event in the log's order; `P` is what the reader remembers of a session's
/// last statement until its duration is logged (a fingerprint, or its index).
pub(crate) struct Sessions<P> {
    open: HashMap<String, Open<P>>,
    /// Sessions seen; those whose connection the capture holds; those that ended in it.
    pub seen: u64,
    pub connected: u64,
    pub ended: u64,
    /// Each ended session's first and last moment (microseconds since the Unix epoch).
    pub spans: Vec<(i64, i64)>,
}

struct Open<P> {
    database: Option<String>,
    pending: Option<P>,
    began: i64,
}

impl<P> Sessions<P> {
    pub fn new() -> Sessions<P> {
        Sessions { open: HashMap::new(), seen: 0, connected: 0, ended: 0, spans: Vec::new() }
    }

    /// Take in one event, before the reader acts on it: a connection, a change of database or a statement begins a
    /// session not open yet; a skipped line clears what a later duration would be counted against; a disconnection
    /// ends the session.
    pub fn track(&mut self, event: &Event) {
        let begins =
            matches!(event.kind, EventKind::Connect { .. } | EventKind::UseDatabase { .. } | EventKind::Statement(_));
        if begins && !self.open.contains_key(&event.session) {
            self.open.insert(event.session.clone(), Open { database: None, pending: None, began: event.at });
            self.seen += 1;
        }
        match &event.kind {
            EventKind::Connect { database, .. } => {
                self.connected += 1;
                if let Some(open) = self.open.get_mut(&event.session) {
                    open.database = database.clone();
                }
            }
            EventKind::UseDatabase { database } => {
                if let Some(open) = self.open.get_mut(&event.session) {
                    open.database = Some(database.clone());
                }
            }
            EventKind::Statement(statement) => {
                if let (Some(database), Some(open)) = (&statement.database, self.open.get_mut(&event.session)) {
                    open.database = Some(database.clone());
                }
            }
            EventKind::Skipped(_) => {
                // A duration logged after a skipped statement is its own, not the statement's before it.
                if let Some(open) = self.open.get_mut(&event.session) {
                    open.pending = None;
                }
            }
            EventKind::Disconnect => {
                if let Some(open) = self.open.remove(&event.session) {
                    self.ended += 1;
                    self.spans.push((open.began, event.at));
                }
            }
            EventKind::Duration { .. } => {}
        }
    }

    /// The database the session works in, as the log last named it.
    pub fn database(&self, session: &str) -> Option<&str> {
        self.open.get(session)?.database.as_deref()
    }

    /// The session's statement just read, whose duration may follow on a line of its own.
    pub fn await_duration(&mut self, session: &str, pending: P) {
        if let Some(open) = self.open.get_mut(session) {
            open.pending = Some(pending);
        }
    }

    /// What a duration line of the session is counted against, once.
    pub fn take_pending(&mut self, session: &str) -> Option<P> {
        self.open.get_mut(session)?.pending.take()
    }

    /// The sessions still open at the capture's end.
    pub fn open_now(&self) -> u64 {
        self.open.len() as u64
    }

    /// Every session's span, those still open ending at `last_at`.
    pub fn all_spans(&self, last_at: i64) -> Vec<(i64, i64)> {
        let open = self.open.values().map(|open| (open.began, last_at));
        self.spans.iter().copied().chain(open).collect()
    }

    /// The most sessions open at once, by the log's clock (those still open ending at `last_at`). Not by the order
    /// of its lines: a server writing several logs at once may interleave two sessions' lines differently in each,
    /// but stamps each message with one time.
    pub fn peak(&self, last_at: i64) -> u64 {
        let spans = self.all_spans(last_at);
        let mut edges: Vec<(i64, i64)> = spans.iter().flat_map(|&(from, to)| [(from, 1), (to.max(from), -1)]).collect();
        // At one moment, a start before an end, as `concurrency` counts them.
        edges.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
        let (mut now, mut most) = (0i64, 0i64);
        for (_, step) in edges {
            now += step;
            most = most.max(now);
        }
        most as u64
    }
}

/// The most intervals open at once within each of `buckets` of `width` seconds from 0, the intervals in seconds
/// from the same start.
pub fn concurrency(intervals: &[(f64, f64)], width: f64, buckets: usize) -> Vec<u64> {
    let mut edges: Vec<(f64, i64)> = intervals.iter().flat_map(|&(from, to)| [(from, 1), (to.max(from), -1)]).collect();
    // At one moment, a start before an end: a session that ends as another begins overlapped it.
    edges.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
    let mut most = vec![0u64; buckets];
    let (mut now, mut at) = (0i64, 0usize);
    for (bucket, most) in most.iter_mut().enumerate() {
        let end = (bucket + 1) as f64 * width;
        // Open at the bucket's start.
        let mut peak = now;
        while at < edges.len() && (edges[at].0 < end || bucket + 1 == buckets) {
            now += edges[at].1;
            peak = peak.max(now);
            at += 1;
        }
        *most = peak.max(0) as u64;
    }
    most
}

#[cfg(test)]
mod tests {
    use super::{Sessions, concurrency};
    use crate::capture::{Event, EventKind};

    /// Two logs of one server at once may interleave sessions' lines differently: the peak is the same in both.
    #[test]
    fn the_peak_is_by_the_clock_not_by_the_order_of_lines() {
        let event = |at: i64, session: &str, kind: EventKind| Event { at, session: session.into(), line: 0, kind };
        let connect = || EventKind::Connect { user: None, database: None };
        let setup_ends = event(2_000, "setup", EventKind::Disconnect);
        let client_starts = event(3_000, "client", connect());
        let mut orders = Vec::new();
        for lines in [[setup_ends.clone(), client_starts.clone()], [client_starts, setup_ends]] {
            let mut sessions: Sessions<()> = Sessions::new();
            sessions.track(&event(1_000, "setup", connect()));
            sessions.track(&event(1_500, "other", connect()));
            for line in &lines {
                sessions.track(line);
            }
            orders.push(sessions.peak(10_000));
        }
        assert_eq!(orders, [2, 2]);
    }

    #[test]
    fn concurrency_is_the_most_open_at_once_in_each_bucket() {
        let spans = [(0.0, 2.5), (0.5, 0.7), (0.6, 1.2), (3.0, 3.0)];
        assert_eq!(concurrency(&spans, 1.0, 4), [3, 2, 1, 1]);
        assert_eq!(concurrency(&[], 1.0, 2), [0, 0]);
        // What runs past the last bucket is counted in it.
        assert_eq!(concurrency(&[(0.0, 9.0), (5.0, 6.0)], 2.0, 2), [1, 2]);
    }
}

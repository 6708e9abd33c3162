//! What the tests share: a private PostgreSQL cluster ([`Cluster`]), and a capture read back.

#![allow(dead_code)]

mod cluster;

pub use cluster::{Cluster, scratch};
use envbench_replay::{Inspection, inspect, open};
use std::path::Path;

/// The summary of the capture at `path`.
pub fn inspected(path: &Path) -> Inspection {
    let mut reader = open(path).unwrap_or_else(|e| panic!("{e}"));
    inspect(reader.as_mut()).unwrap_or_else(|e| panic!("{e}"))
}

/// The calls of the fingerprint `fingerprint` in a capture, wherever it ranks.
pub fn calls(path: &Path, fingerprint: &str) -> u64 {
    let mut reader = open(path).unwrap();
    let mut calls = 0;
    while let Some(event) = reader.next_event().unwrap() {
        if let envbench_replay::EventKind::Statement(s) = &event.kind
            && envbench_replay::fingerprint(&s.sql) == fingerprint
        {
            calls += 1;
        }
    }
    calls
}

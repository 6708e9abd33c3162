//! I/O engines: one small trait in the style of fio's engine operations table, and one file per engine.
//!
//! An engine only moves bytes: it queues requests, pushes them to the kernel and hands back completions. Choosing
//! offsets, keeping the queue full, timing and accounting live once, in [`run_job`](crate::run_job), for every engine.

mod threadpool;
mod uring;

pub use threadpool::ThreadPoolEngine;
pub use uring::UringEngine;

use crate::buffer::BufferPool;
use crate::error::BenchError;
use serde::{Deserialize, Serialize};
use std::fs::File;
use std::io;
use std::sync::{Arc, OnceLock};

/// What a request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IoOp {
    /// Read `len_bytes` at `offset_bytes` into the request's slot.
    Read,
    /// Write the request's slot (its first `len_bytes`) at `offset_bytes`.
    Write,
    /// fdatasync the file. Offset, length and slot buffer are ignored; the slot only names the request.
    DataSync,
}

/// One request. The slot is both the buffer used and the request's identity in its [`Completion`], so the caller
/// never has more than one request per slot in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoRequest {
    pub op: IoOp,
    pub slot: u32,
    pub offset_bytes: u64,
    pub len_bytes: u32,
}

/// One finished request: its slot and the kernel's result (bytes moved, or a negative errno).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub slot: u32,
    pub result: i32,
}

/// The operations every engine provides. A request given to [`Engine::submit`] may stay queued until the next
/// [`Engine::reap`], which pushes everything queued to the kernel and waits in one step (one system call per loop
/// turn with io_uring); the caller always reaps after submitting.
pub trait Engine {
    /// The engine and the features in use, e.g. `io_uring (registered file, registered buffers, defer_taskrun)`.
    fn describe(&self) -> String;

    /// The buffers the requests' slots refer to. Touch only slots that have no request in flight.
    fn buffers(&mut self) -> &mut BufferPool;

    /// Queue requests. The caller never has more requests in flight than the depth the engine was opened with.
    fn submit(&mut self, requests: &[IoRequest]) -> io::Result<()>;

    /// Issue everything queued, wait until at least `min` requests have completed (`min` is at most the number in
    /// flight), and append every completion available to `out`.
    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()>;

    /// CPU time in nanoseconds used so far by threads the engine runs besides the caller's (the thread pool's
    /// workers); the caller takes differences. Zero when the engine works in the caller's thread only.
    fn helper_cpu_ns(&self) -> u64 {
        0
    }
}

/// The engines envbench has.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EngineKind {
    /// io_uring with a registered file and registered buffers where the kernel allows.
    #[serde(rename = "io_uring")]
    IoUring,
    /// Worker threads doing pread/pwrite (one per request in flight; synchronous in the caller at depth 1).
    #[serde(rename = "threadpool")]
    ThreadPool,
}

impl EngineKind {
    /// The name used in parameters, JSON and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::IoUring => "io_uring",
            EngineKind::ThreadPool => "threadpool",
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which engine the user asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineChoice {
    /// io_uring when the kernel allows it, else the thread pool (the reason is recorded).
    #[default]
    Auto,
    /// io_uring or an error.
    IoUring,
    /// The thread pool.
    ThreadPool,
}

impl std::str::FromStr for EngineChoice {
    type Err = String;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(EngineChoice::Auto),
            "io_uring" | "io-uring" | "uring" => Ok(EngineChoice::IoUring),
            "threadpool" | "thread-pool" | "threads" => Ok(EngineChoice::ThreadPool),
            _ => Err(format!("unknown engine '{text}'; valid engines: auto, io_uring, threadpool")),
        }
    }
}

/// The engine a run will use and, when io_uring was wanted but could not be had, why.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EngineSelection {
    pub kind: EngineKind,
    pub fallback_reason: Option<String>,
}

/// Resolve a choice to an engine, probing io_uring once per process.
pub fn select_engine(choice: EngineChoice) -> Result<EngineSelection, BenchError> {
    match choice {
        EngineChoice::ThreadPool => Ok(EngineSelection { kind: EngineKind::ThreadPool, fallback_reason: None }),
        EngineChoice::IoUring => match uring_unavailable_reason() {
            None => Ok(EngineSelection { kind: EngineKind::IoUring, fallback_reason: None }),
            Some(reason) => Err(BenchError::UringUnavailable { reason }),
        },
        EngineChoice::Auto => Ok(match uring_unavailable_reason() {
            None => EngineSelection { kind: EngineKind::IoUring, fallback_reason: None },
            Some(reason) => EngineSelection { kind: EngineKind::ThreadPool, fallback_reason: Some(reason) },
        }),
    }
}

/// Why io_uring cannot be used in this process, or `None` when it can. Cached: the answer does not change.
fn uring_unavailable_reason() -> Option<String> {
    static REASON: OnceLock<Option<String>> = OnceLock::new();
    REASON.get_or_init(|| uring::probe().err()).clone()
}

/// Open an engine of `kind` on `file` with `depth` requests in flight at most, using `buffers` (at least `depth`
/// slots). Call it on the thread that will use the engine: io_uring rings are set up for a single issuer.
pub fn open_engine(
    kind: EngineKind,
    file: &Arc<File>,
    buffers: BufferPool,
    depth: u32,
) -> Result<Box<dyn Engine>, BenchError> {
    assert!(buffers.slots() >= depth as usize, "need one buffer slot per request in flight");
    match kind {
        EngineKind::IoUring => match UringEngine::new(Arc::clone(file), buffers, depth) {
            Ok(engine) => Ok(Box::new(engine)),
            Err(source) => Err(BenchError::Io { context: "setting up io_uring".into(), source }),
        },
        EngineKind::ThreadPool => match ThreadPoolEngine::new(Arc::clone(file), buffers, depth) {
            Ok(engine) => Ok(Box::new(engine)),
            Err(source) => Err(BenchError::Io { context: "starting the I/O thread pool".into(), source }),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testfile::open_for_io;
    use crate::testing::scratch_dir;
    use envbench_base::rng::FastRng;

    fn available_engines() -> Vec<EngineKind> {
        match select_engine(EngineChoice::Auto).unwrap().kind {
            EngineKind::IoUring => vec![EngineKind::IoUring, EngineKind::ThreadPool],
            EngineKind::ThreadPool => vec![EngineKind::ThreadPool],
        }
    }

    fn expected_block(offset: u64, block_bytes: usize) -> Vec<u8> {
        let mut data = vec![0u8; block_bytes];
        FastRng::new(offset).fill(&mut data);
        data
    }

    /// Submit all requests at once and wait for every completion, checking each moved `len_bytes`.
    fn submit_all(engine: &mut dyn Engine, requests: &[IoRequest]) {
        engine.submit(requests).unwrap();
        let mut completions = Vec::new();
        while completions.len() < requests.len() {
            engine.reap(1, &mut completions).unwrap();
        }
        assert_eq!(completions.len(), requests.len());
        for completion in &completions {
            let request = requests.iter().find(|r| r.slot == completion.slot).unwrap();
            let expected = if request.op == IoOp::DataSync { 0 } else { request.len_bytes as i32 };
            assert_eq!(completion.result, expected, "{request:?}");
        }
    }

    /// Write a known pattern at known offsets with one engine, read it back with another, O_DIRECT throughout.
    fn round_trip(writer: EngineKind, reader: EngineKind, depth: u32, block_bytes: usize) {
        let dir = scratch_dir("round-trip");
        let path = dir.join("envbench-round-trip.dat");
        std::fs::write(&path, vec![0u8; 2 << 20]).unwrap();
        let file = Arc::new(open_for_io(&path, true, false).unwrap());
        let blocks = (2 << 20) / block_bytes as u64;
        // Scattered, distinct, aligned offsets, more than one batch of `depth`.
        let offsets: Vec<u64> = (0..2 * depth as u64).map(|i| (i * 37 + 5) % blocks * block_bytes as u64).collect();
        let request = |op, slot: usize, offset_bytes| IoRequest {
            op,
            slot: slot as u32,
            offset_bytes,
            len_bytes: block_bytes as u32,
        };

        let mut engine = open_engine(writer, &file, BufferPool::new(depth as usize, block_bytes), depth).unwrap();
        for batch in offsets.chunks(depth as usize) {
            let mut requests = Vec::new();
            for (slot, &offset) in batch.iter().enumerate() {
                engine.buffers().slot_mut(slot).copy_from_slice(&expected_block(offset, block_bytes));
                requests.push(request(IoOp::Write, slot, offset));
            }
            submit_all(engine.as_mut(), &requests);
        }
        submit_all(engine.as_mut(), &[IoRequest { op: IoOp::DataSync, slot: 0, offset_bytes: 0, len_bytes: 0 }]);
        drop(engine);

        let mut engine = open_engine(reader, &file, BufferPool::new(depth as usize, block_bytes), depth).unwrap();
        for batch in offsets.chunks(depth as usize) {
            let requests: Vec<IoRequest> =
                batch.iter().enumerate().map(|(slot, &offset)| request(IoOp::Read, slot, offset)).collect();
            for slot in 0..batch.len() {
                engine.buffers().slot_mut(slot).fill(0);
            }
            submit_all(engine.as_mut(), &requests);
            for (slot, &offset) in batch.iter().enumerate() {
                assert!(
                    engine.buffers().slot(slot) == expected_block(offset, block_bytes).as_slice(),
                    "{writer} -> {reader}, depth {depth}: block at {offset} differs"
                );
            }
        }
        // And the file itself holds the pattern (checked without any engine).
        let data = std::fs::read(&path).unwrap();
        for &offset in &offsets {
            let start = offset as usize;
            assert!(data[start..start + block_bytes] == expected_block(offset, block_bytes)[..]);
        }
    }

    #[test]
    fn engines_read_back_what_engines_wrote() {
        let engines = available_engines();
        for &writer in &engines {
            for &reader in &engines {
                round_trip(writer, reader, 8, 4096);
                round_trip(writer, reader, 1, 8192);
                round_trip(writer, reader, 3, 128 << 10);
            }
        }
    }

    #[test]
    fn engines_describe_themselves() {
        let dir = scratch_dir("describe");
        let path = dir.join("envbench-describe.dat");
        std::fs::write(&path, vec![0u8; 4096]).unwrap();
        let file = Arc::new(open_for_io(&path, false, false).unwrap());
        for kind in available_engines() {
            let engine = open_engine(kind, &file, BufferPool::new(4, 4096), 4).unwrap();
            assert!(engine.describe().starts_with(kind.as_str()), "{}", engine.describe());
        }
    }

    #[test]
    fn engine_choices_parse() {
        assert_eq!("auto".parse::<EngineChoice>().unwrap(), EngineChoice::Auto);
        assert_eq!("io_uring".parse::<EngineChoice>().unwrap(), EngineChoice::IoUring);
        assert_eq!("threadpool".parse::<EngineChoice>().unwrap(), EngineChoice::ThreadPool);
        let error = "aio".parse::<EngineChoice>().unwrap_err();
        assert!(error.contains("valid engines: auto, io_uring, threadpool"), "{error}");
    }

    #[test]
    fn thread_pool_is_always_available() {
        let selection = select_engine(EngineChoice::ThreadPool).unwrap();
        assert_eq!(selection.kind, EngineKind::ThreadPool);
        assert_eq!(selection.fallback_reason, None);
    }

    #[test]
    fn auto_records_why_it_fell_back() {
        let selection = select_engine(EngineChoice::Auto).unwrap();
        match selection.kind {
            EngineKind::IoUring => assert!(selection.fallback_reason.is_none()),
            EngineKind::ThreadPool => assert!(selection.fallback_reason.is_some()),
        }
    }
}

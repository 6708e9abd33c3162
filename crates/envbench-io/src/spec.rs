//! What one test does: access pattern, block size, queue depth, threads, read/write mix and write durability; its
//! CrystalDiskMark-style id (`RND4K Q32T1 read`); and the ad-hoc form users type (`rnd:8k:q32:t1:read`).

use envbench_core::parse_byte_size;
use serde::{Deserialize, Serialize};
use std::fmt;

/// Smallest block: one 512-byte sector, the smallest unit O_DIRECT accepts.
pub const MIN_BLOCK_BYTES: u64 = 512;
/// Largest block: 64 MiB.
pub const MAX_BLOCK_BYTES: u64 = 64 << 20;
/// Largest queue depth per thread.
pub const MAX_QUEUE_DEPTH: u32 = 1024;
/// Largest number of threads.
pub const MAX_THREADS: u32 = 256;

/// How offsets are chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// Consecutive blocks; with several threads each thread walks its own equal share of the file.
    Sequential,
    /// Uniformly random aligned blocks over the whole file, shared by all threads.
    Random,
}

impl Pattern {
    /// The name used in parameters: `sequential` or `random`.
    pub fn as_str(self) -> &'static str {
        match self {
            Pattern::Sequential => "sequential",
            Pattern::Random => "random",
        }
    }
}

/// Reads, writes, or a mix.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operation {
    Read,
    Write,
    /// Each I/O is a read with probability `read_percent`%, else a write.
    Mixed {
        read_percent: u8,
    },
}

impl Operation {
    /// The share of reads in percent: 100 for reads, 0 for writes.
    pub fn read_percent(self) -> u8 {
        match self {
            Operation::Read => 100,
            Operation::Write => 0,
            Operation::Mixed { read_percent } => read_percent,
        }
    }

    /// Whether the test writes at all.
    pub fn writes(self) -> bool {
        self.read_percent() < 100
    }

    /// `read`, `write` or `mix70`.
    pub fn label(self) -> String {
        match self {
            Operation::Read => "read".into(),
            Operation::Write => "write".into(),
            Operation::Mixed { read_percent } => format!("mix{read_percent}"),
        }
    }
}

/// How writes are made durable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteSync {
    /// No syncing: writes complete when the device (or, buffered, the page cache) has them.
    #[default]
    None,
    /// fdatasync after every `every` writes of a thread, inside the measured time. The thread drains its queue
    /// first, and the write that completes each group is timed until its fdatasync returns (commit latency).
    Fsync { every: u32 },
    /// The file is opened with O_DSYNC: each write returns once it is durable.
    Dsync,
}

impl WriteSync {
    /// `none`, `fsync:N` or `dsync`, as stored in parameters.
    pub fn label(self) -> String {
        match self {
            WriteSync::None => "none".into(),
            WriteSync::Fsync { every } => format!("fsync:{every}"),
            WriteSync::Dsync => "dsync".into(),
        }
    }
}

impl fmt::Display for WriteSync {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.label())
    }
}

impl std::str::FromStr for WriteSync {
    type Err = SpecError;
    /// `none`, `dsync`, `fsyncN` or `fsync:N` (N >= 1).
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || SpecError::WriteSync { found: text.to_string() };
        let lower = text.trim().to_ascii_lowercase();
        match lower.as_str() {
            "none" => Ok(WriteSync::None),
            "dsync" => Ok(WriteSync::Dsync),
            _ => {
                let count = lower.strip_prefix("fsync").ok_or_else(bad)?;
                let count = count.strip_prefix(':').unwrap_or(count);
                match count.parse::<u32>() {
                    Ok(every) if every >= 1 => Ok(WriteSync::Fsync { every }),
                    _ => Err(bad()),
                }
            }
        }
    }
}

/// One storage test.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TestSpec {
    pub pattern: Pattern,
    pub block_bytes: u64,
    /// Requests each thread keeps in flight.
    pub queue_depth: u32,
    pub threads: u32,
    pub operation: Operation,
    pub write_sync: WriteSync,
    /// The name a profile gives the test (e.g. CrystalDiskMark 5's `Seq Q32T1`), shown instead of the id.
    pub label: Option<String>,
}

impl TestSpec {
    /// A test without write syncing or label.
    pub fn new(pattern: Pattern, block_bytes: u64, queue_depth: u32, threads: u32, operation: Operation) -> TestSpec {
        TestSpec { pattern, block_bytes, queue_depth, threads, operation, write_sync: WriteSync::None, label: None }
    }

    /// The same test with write durability `write_sync`.
    pub fn with_sync(mut self, write_sync: WriteSync) -> TestSpec {
        self.write_sync = write_sync;
        self
    }

    /// The same test shown under `label`.
    pub fn labelled(mut self, label: &str) -> TestSpec {
        self.label = Some(label.to_string());
        self
    }

    /// The same test with another operation (profiles run each test as a read and as a write).
    pub fn with_operation(mut self, operation: Operation) -> TestSpec {
        self.operation = operation;
        self
    }

    /// The CrystalDiskMark-style id that results are matched by: `SEQ1M Q8T1 read`, `RND4K Q32T1 write`,
    /// `RND8K Q16T1 mix70`, `SEQ16K Q1T1 write fsync1`, `SEQ16K Q1T1 write dsync`.
    pub fn id(&self) -> String {
        let pattern = match self.pattern {
            Pattern::Sequential => "SEQ",
            Pattern::Random => "RND",
        };
        let sync = match self.write_sync {
            WriteSync::None => String::new(),
            WriteSync::Fsync { every } => format!(" fsync{every}"),
            WriteSync::Dsync => " dsync".to_string(),
        };
        format!(
            "{pattern}{} Q{}T{} {}{sync}",
            block_label(self.block_bytes),
            self.queue_depth,
            self.threads,
            self.operation.label()
        )
    }

    /// What to show people: the profile's label with the operation (`Seq Q32T1 read`), else the id.
    pub fn display_name(&self) -> String {
        match &self.label {
            Some(label) => format!("{label} {}", self.operation.label()),
            None => self.id(),
        }
    }

    /// Check the limits; the error names the field and the valid range.
    pub fn validate(&self) -> Result<(), SpecError> {
        let text = self.id();
        if self.block_bytes < MIN_BLOCK_BYTES
            || self.block_bytes > MAX_BLOCK_BYTES
            || !self.block_bytes.is_multiple_of(MIN_BLOCK_BYTES)
        {
            return Err(SpecError::BlockSize { text, found: format!("{} bytes", self.block_bytes) });
        }
        if self.queue_depth == 0 || self.queue_depth > MAX_QUEUE_DEPTH {
            return Err(SpecError::QueueDepth { text, found: format!("q{}", self.queue_depth) });
        }
        if self.threads == 0 || self.threads > MAX_THREADS {
            return Err(SpecError::Threads { text, found: format!("t{}", self.threads) });
        }
        if matches!(self.operation, Operation::Mixed { read_percent } if !(1..=99).contains(&read_percent)) {
            return Err(SpecError::Operation { text, found: self.operation.label() });
        }
        if self.write_sync != WriteSync::None && !self.operation.writes() {
            return Err(SpecError::SyncOnRead { text, found: self.write_sync.label() });
        }
        Ok(())
    }
}

impl fmt::Display for TestSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.id())
    }
}

/// `1M`, `128K`, `4K`, `512B`: the block size as CrystalDiskMark writes it.
pub fn block_label(block_bytes: u64) -> String {
    if block_bytes >= 1 << 20 && block_bytes.is_multiple_of(1 << 20) {
        format!("{}M", block_bytes >> 20)
    } else if block_bytes >= 1 << 10 && block_bytes.is_multiple_of(1 << 10) {
        format!("{}K", block_bytes >> 10)
    } else {
        format!("{block_bytes}B")
    }
}

/// The ad-hoc test syntax, for messages.
pub const AD_HOC_SYNTAX: &str = "pattern:block:qN:tN:operation[:sync], e.g. rnd:4k:q32:t1:read, seq:1m:q8:t1:write, \
                                 rnd:8k:q16:t1:mix70, seq:16k:q1:t1:write:fsync1";

/// Why a test or profile name was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    #[error("'{text}' is not a test: write {AD_HOC_SYNTAX}")]
    Shape { text: String },
    #[error("'{text}': unknown pattern '{found}'; use seq (sequential) or rnd (random)")]
    Pattern { text: String, found: String },
    #[error(
        "'{text}': block size '{found}' is not valid; use a multiple of 512 bytes from 512 to 64m, e.g. 4k, 128k, 1m"
    )]
    BlockSize { text: String, found: String },
    #[error("'{text}': queue depth '{found}' is not valid; write q and a whole number from 1 to 1024, e.g. q1, q32")]
    QueueDepth { text: String, found: String },
    #[error("'{text}': thread count '{found}' is not valid; write t and a whole number from 1 to 256, e.g. t1, t16")]
    Threads { text: String, found: String },
    #[error(
        "'{text}': operation '{found}' is not valid; use read, write, or mixNN with NN the read percentage from 1 to \
         99, e.g. mix70"
    )]
    Operation { text: String, found: String },
    #[error(
        "write durability '{found}' is not valid; use none, fsyncN (fdatasync after every N writes, e.g. fsync1) or \
         dsync (O_DSYNC)"
    )]
    WriteSync { found: String },
    #[error("'{text}': {found} makes writes durable, but this test only reads; drop it or test writes")]
    SyncOnRead { text: String, found: String },
    #[error("unknown profile '{found}'; valid profiles: {valid}{hint}")]
    UnknownProfile { found: String, valid: String, hint: String },
}

impl std::str::FromStr for TestSpec {
    type Err = SpecError;

    /// Parse `pattern:block:qN:tN:operation[:sync]`: pattern `seq` or `rnd`, block a size (`4k`, `1m`), `q32`, `t1`,
    /// operation `read`, `write` or `mix70`, sync `none`, `fsyncN` or `dsync`. Case does not matter.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let owned = || text.to_string();
        let fields: Vec<&str> = text.trim().split(':').map(str::trim).collect();
        if !(5..=6).contains(&fields.len()) || fields.iter().any(|field| field.is_empty()) {
            return Err(SpecError::Shape { text: owned() });
        }
        let pattern = match fields[0].to_ascii_lowercase().as_str() {
            "seq" | "sequential" => Pattern::Sequential,
            "rnd" | "rand" | "random" => Pattern::Random,
            _ => return Err(SpecError::Pattern { text: owned(), found: fields[0].into() }),
        };
        let block_bytes = parse_byte_size(fields[1])
            .map_err(|_| SpecError::BlockSize { text: owned(), found: fields[1].into() })?
            .bytes();
        let queue_depth = parse_prefixed(fields[2], 'q')
            .ok_or_else(|| SpecError::QueueDepth { text: owned(), found: fields[2].into() })?;
        let threads = parse_prefixed(fields[3], 't')
            .ok_or_else(|| SpecError::Threads { text: owned(), found: fields[3].into() })?;
        let bad_operation = || SpecError::Operation { text: owned(), found: fields[4].into() };
        let operation = match fields[4].to_ascii_lowercase().as_str() {
            "read" | "r" => Operation::Read,
            "write" | "w" => Operation::Write,
            other => {
                let percent = other.strip_prefix("mix").ok_or_else(bad_operation)?;
                let read_percent = percent.parse::<u8>().map_err(|_| bad_operation())?;
                Operation::Mixed { read_percent }
            }
        };
        let write_sync = match fields.get(5) {
            Some(field) => field.parse::<WriteSync>()?,
            None => WriteSync::None,
        };
        let spec = TestSpec { pattern, block_bytes, queue_depth, threads, operation, write_sync, label: None };
        // Range errors quote what the user typed, not the normalized id.
        spec.validate().map_err(|error| match error {
            SpecError::BlockSize { .. } => SpecError::BlockSize { text: owned(), found: fields[1].into() },
            SpecError::QueueDepth { .. } => SpecError::QueueDepth { text: owned(), found: fields[2].into() },
            SpecError::Threads { .. } => SpecError::Threads { text: owned(), found: fields[3].into() },
            SpecError::Operation { .. } => bad_operation(),
            SpecError::SyncOnRead { found, .. } => SpecError::SyncOnRead { text: owned(), found },
            other => other,
        })?;
        Ok(spec)
    }
}

/// `q32` -> 32: a letter followed by a whole number (no sign, no unit).
fn parse_prefixed(field: &str, letter: char) -> Option<u32> {
    let lower = field.to_ascii_lowercase();
    let digits = lower.strip_prefix(letter)?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TestSpec, SpecError> {
        text.parse()
    }

    #[test]
    fn ad_hoc_tests_parse() {
        let spec = parse("rnd:8k:q32:t1:read").unwrap();
        assert_eq!(spec, TestSpec::new(Pattern::Random, 8192, 32, 1, Operation::Read));
        assert_eq!(spec.id(), "RND8K Q32T1 read");

        let spec = parse("seq:1m:q8:t1:write").unwrap();
        assert_eq!(spec.id(), "SEQ1M Q8T1 write");

        let spec = parse("rnd:8k:q16:t1:mix70").unwrap();
        assert_eq!(spec.operation, Operation::Mixed { read_percent: 70 });
        assert_eq!(spec.id(), "RND8K Q16T1 mix70");

        let spec = parse("seq:16k:q1:t1:write:fsync1").unwrap();
        assert_eq!(spec.write_sync, WriteSync::Fsync { every: 1 });
        assert_eq!(spec.id(), "SEQ16K Q1T1 write fsync1");

        let spec = parse(" SEQ:4M:Q1:T1:WRITE:dsync ").unwrap();
        assert_eq!(spec.write_sync, WriteSync::Dsync);
        assert_eq!(spec.id(), "SEQ4M Q1T1 write dsync");

        let spec = parse("rnd:4k:q32:t16:read").unwrap();
        assert_eq!(spec.id(), "RND4K Q32T16 read");
        assert_eq!(parse("rnd:512:q1:t1:read").unwrap().id(), "RND512B Q1T1 read");
        assert_eq!(parse("rnd:8k:q4:t2:mix50:fsync4").unwrap().write_sync, WriteSync::Fsync { every: 4 });
    }

    #[test]
    fn garbled_tests_are_rejected_with_the_reason() {
        type Expected = fn(&SpecError) -> bool;
        let cases: &[(&str, Expected)] = &[
            ("rnd:8k:q32:t1", |e| matches!(e, SpecError::Shape { .. })),
            ("rnd:8k:q32:t1:read:fsync1:x", |e| matches!(e, SpecError::Shape { .. })),
            ("rnd::q32:t1:read", |e| matches!(e, SpecError::Shape { .. })),
            ("zig:8k:q32:t1:read", |e| matches!(e, SpecError::Pattern { .. })),
            ("rnd:0:q32:t1:read", |e| matches!(e, SpecError::BlockSize { .. })),
            ("rnd:-4k:q32:t1:read", |e| matches!(e, SpecError::BlockSize { .. })),
            ("rnd:4x:q32:t1:read", |e| matches!(e, SpecError::BlockSize { .. })),
            ("rnd:100:q32:t1:read", |e| matches!(e, SpecError::BlockSize { .. })),
            ("rnd:1g:q32:t1:read", |e| matches!(e, SpecError::BlockSize { .. })),
            ("rnd:8k:q0:t1:read", |e| matches!(e, SpecError::QueueDepth { .. })),
            ("rnd:8k:q-1:t1:read", |e| matches!(e, SpecError::QueueDepth { .. })),
            ("rnd:8k:32:t1:read", |e| matches!(e, SpecError::QueueDepth { .. })),
            ("rnd:8k:q2000:t1:read", |e| matches!(e, SpecError::QueueDepth { .. })),
            ("rnd:8k:qx:t1:read", |e| matches!(e, SpecError::QueueDepth { .. })),
            ("rnd:8k:q1:t0:read", |e| matches!(e, SpecError::Threads { .. })),
            ("rnd:8k:q1:tt:read", |e| matches!(e, SpecError::Threads { .. })),
            ("rnd:8k:q1:t1:rw", |e| matches!(e, SpecError::Operation { .. })),
            ("rnd:8k:q1:t1:mix0", |e| matches!(e, SpecError::Operation { .. })),
            ("rnd:8k:q1:t1:mix100", |e| matches!(e, SpecError::Operation { .. })),
            ("rnd:8k:q1:t1:mix300", |e| matches!(e, SpecError::Operation { .. })),
            ("rnd:8k:q1:t1:write:fsync0", |e| matches!(e, SpecError::WriteSync { .. })),
            ("rnd:8k:q1:t1:write:sometimes", |e| matches!(e, SpecError::WriteSync { .. })),
            ("rnd:8k:q1:t1:read:fsync1", |e| matches!(e, SpecError::SyncOnRead { .. })),
        ];
        for (text, expected) in cases {
            let error = parse(text).expect_err(text);
            assert!(expected(&error), "{text}: unexpected {error:?}");
        }
    }

    #[test]
    fn errors_say_what_is_valid() {
        let message = parse("rnd:8k:q0:t1:read").unwrap_err().to_string();
        assert_eq!(
            message,
            "'rnd:8k:q0:t1:read': queue depth 'q0' is not valid; write q and a whole number from 1 to 1024, e.g. q1, q32"
        );
        let message = parse("rnd:0:q1:t1:read").unwrap_err().to_string();
        assert!(message.contains("block size '0' is not valid; use a multiple of 512 bytes"), "{message}");
        let message = parse("nonsense").unwrap_err().to_string();
        assert!(message.contains("rnd:4k:q32:t1:read"), "{message}");
    }

    #[test]
    fn write_sync_parses_on_its_own() {
        assert_eq!("fsync:4".parse::<WriteSync>().unwrap(), WriteSync::Fsync { every: 4 });
        assert_eq!("fsync16".parse::<WriteSync>().unwrap(), WriteSync::Fsync { every: 16 });
        assert_eq!("none".parse::<WriteSync>().unwrap(), WriteSync::None);
        assert_eq!("DSYNC".parse::<WriteSync>().unwrap(), WriteSync::Dsync);
        for text in ["fsync", "fsync:0", "fsync-1", "osync"] {
            assert!(text.parse::<WriteSync>().is_err(), "{text}");
        }
        assert_eq!(WriteSync::Fsync { every: 4 }.label(), "fsync:4");
    }

    #[test]
    fn display_name_prefers_the_profile_label() {
        let spec = TestSpec::new(Pattern::Sequential, 128 << 10, 32, 1, Operation::Read).labelled("Seq Q32T1");
        assert_eq!(spec.display_name(), "Seq Q32T1 read");
        assert_eq!(spec.id(), "SEQ128K Q32T1 read");
    }
}

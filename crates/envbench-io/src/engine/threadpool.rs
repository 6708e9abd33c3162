//! The thread-pool engine: worker threads doing pread/pwrite/fdatasync, one per request in flight. It is the
//! fallback where io_uring is blocked (containers with seccomp) and can be chosen explicitly. At depth 1 it works
//! synchronously in the caller's thread, exactly like fio's psync engine, so queue-depth-1 latency carries no
//! thread hand-off.

use super::{Completion, Engine, IoOp, IoRequest};
use crate::buffer::BufferPool;
use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::thread::JoinHandleExt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// A request with the address of its slot, handed to a worker.
struct Job {
    request: IoRequest,
    buf: SlotPtr,
}

/// A slot address. The engine owns the pool and joins its workers before the pool is dropped, so the address stays
/// valid while any worker uses it.
struct SlotPtr(*mut u8);
unsafe impl Send for SlotPtr {}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    done: Vec<Completion>,
    idle_workers: usize,
    reaper_waiting: bool,
    shutdown: bool,
}

#[derive(Default)]
struct Shared {
    state: Mutex<State>,
    work_ready: Condvar,
    done_ready: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A worker never panics while holding the lock (it only moves plain data), so poison is not expected; if it
        // happens the state is still consistent.
        self.state.lock().unwrap_or_else(|poison| poison.into_inner())
    }
}

enum Mode {
    /// Depth 1: each request runs in `submit`, in the caller's thread.
    Inline { done: Vec<Completion> },
    /// Depth > 1: `workers` threads take requests from a shared queue.
    Pool { shared: Arc<Shared>, workers: Vec<JoinHandle<()>>, cpu_clocks: Vec<libc::clockid_t> },
}

/// pread/pwrite on worker threads.
pub struct ThreadPoolEngine {
    mode: Mode,
    buffers: BufferPool,
    file: Arc<File>,
    depth: u32,
}

impl ThreadPoolEngine {
    /// An engine for `depth` requests in flight on `file`: synchronous at depth 1, else `depth` worker threads.
    pub fn new(file: Arc<File>, buffers: BufferPool, depth: u32) -> io::Result<ThreadPoolEngine> {
        let mode = if depth <= 1 {
            Mode::Inline { done: Vec::with_capacity(1) }
        } else {
            let shared = Arc::new(Shared::default());
            let mut workers = Vec::with_capacity(depth as usize);
            let mut cpu_clocks = Vec::with_capacity(depth as usize);
            for index in 0..depth {
                let worker_shared = Arc::clone(&shared);
                let fd = file.as_raw_fd();
                let spawned = std::thread::Builder::new()
                    .name(format!("envbench-io-{index}"))
                    .stack_size(64 * 1024)
                    .spawn(move || work(&worker_shared, fd));
                let handle = match spawned {
                    Ok(handle) => handle,
                    Err(error) => {
                        stop_workers(&shared, &mut workers);
                        return Err(error);
                    }
                };
                let mut clock: libc::clockid_t = 0;
                // SAFETY: the thread is alive (it waits for work until we join it) and `clock` is a valid out pointer.
                if unsafe { libc::pthread_getcpuclockid(handle.as_pthread_t(), &mut clock) } == 0 {
                    cpu_clocks.push(clock);
                }
                workers.push(handle);
            }
            Mode::Pool { shared, workers, cpu_clocks }
        };
        Ok(ThreadPoolEngine { mode, buffers, file, depth })
    }
}

/// Run one request with a plain system call; the result is bytes moved or a negative errno, as io_uring reports.
fn perform(fd: RawFd, request: &IoRequest, buf: *mut u8) -> i32 {
    loop {
        // SAFETY: `buf` is a slot of at least `len_bytes` bytes that nobody else touches while the request runs.
        let result = unsafe {
            match request.op {
                IoOp::Read => {
                    libc::pread(fd, buf.cast(), request.len_bytes as usize, request.offset_bytes as libc::off_t)
                }
                IoOp::Write => {
                    libc::pwrite(fd, buf.cast(), request.len_bytes as usize, request.offset_bytes as libc::off_t)
                }
                IoOp::DataSync => libc::fdatasync(fd) as isize,
            }
        };
        if result >= 0 {
            return result as i32;
        }
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO);
        if errno != libc::EINTR {
            return -errno;
        }
    }
}

fn work(shared: &Shared, fd: RawFd) {
    let mut state = shared.lock();
    loop {
        if let Some(job) = state.queue.pop_front() {
            drop(state);
            let result = perform(fd, &job.request, job.buf.0);
            state = shared.lock();
            state.done.push(Completion { slot: job.request.slot, result });
            if state.reaper_waiting {
                shared.done_ready.notify_one();
            }
            continue;
        }
        if state.shutdown {
            return;
        }
        state.idle_workers += 1;
        state = shared.work_ready.wait(state).unwrap_or_else(|poison| poison.into_inner());
        state.idle_workers -= 1;
    }
}

fn stop_workers(shared: &Shared, workers: &mut Vec<JoinHandle<()>>) {
    shared.lock().shutdown = true;
    shared.work_ready.notify_all();
    for worker in workers.drain(..) {
        // A worker only returns; a panic there would be a bug we cannot report from here.
        let _ = worker.join();
    }
}

impl Engine for ThreadPoolEngine {
    fn describe(&self) -> String {
        match self.mode {
            Mode::Inline { .. } => "threadpool (synchronous pread/pwrite in the job thread)".to_string(),
            Mode::Pool { .. } => format!("threadpool ({} worker threads doing pread/pwrite)", self.depth),
        }
    }

    fn buffers(&mut self) -> &mut BufferPool {
        &mut self.buffers
    }

    fn submit(&mut self, requests: &[IoRequest]) -> io::Result<()> {
        match &mut self.mode {
            Mode::Inline { done } => {
                let fd = self.file.as_raw_fd();
                for request in requests {
                    let result = perform(fd, request, self.buffers.slot_ptr(request.slot as usize));
                    done.push(Completion { slot: request.slot, result });
                }
            }
            Mode::Pool { shared, .. } => {
                let wake = {
                    let mut state = shared.lock();
                    for request in requests {
                        let buf = SlotPtr(self.buffers.slot_ptr(request.slot as usize));
                        state.queue.push_back(Job { request: *request, buf });
                    }
                    state.idle_workers.min(requests.len())
                };
                for _ in 0..wake {
                    shared.work_ready.notify_one();
                }
            }
        }
        Ok(())
    }

    fn reap(&mut self, min: usize, out: &mut Vec<Completion>) -> io::Result<()> {
        match &mut self.mode {
            Mode::Inline { done } => out.append(done),
            Mode::Pool { shared, .. } => {
                let mut state = shared.lock();
                while state.done.len() < min {
                    state.reaper_waiting = true;
                    state = shared.done_ready.wait(state).unwrap_or_else(|poison| poison.into_inner());
                    state.reaper_waiting = false;
                }
                out.append(&mut state.done);
            }
        }
        Ok(())
    }

    fn helper_cpu_ns(&self) -> u64 {
        let Mode::Pool { cpu_clocks, .. } = &self.mode else { return 0 };
        cpu_clocks
            .iter()
            .map(|&clock| {
                let mut time = libc::timespec { tv_sec: 0, tv_nsec: 0 };
                // SAFETY: the clock belongs to a worker that lives until the engine is dropped.
                if unsafe { libc::clock_gettime(clock, &mut time) } == 0 {
                    time.tv_sec as u64 * 1_000_000_000 + time.tv_nsec as u64
                } else {
                    0
                }
            })
            .sum()
    }
}

impl Drop for ThreadPoolEngine {
    fn drop(&mut self) {
        // Workers finish queued requests before they see the shutdown, so no slot is in use once they are joined.
        if let Mode::Pool { shared, workers, .. } = &mut self.mode {
            stop_workers(shared, workers);
        }
    }
}

//! The endpoint of live metrics (`--metrics-listen`): a small HTTP server on its own thread that answers
//! `GET /metrics` with [`envbench_core::live::render`] for as long as the run lasts, and what the OS sampler adds to
//! the figures each interval.
//!
//! It answers one request per connection (no keep-alive), reads at most a few kilobytes of a request with a short
//! timeout, and serves nothing but the figures: it holds no secrets and accepts no input, so a scrape can neither
//! stall a run nor change it. A request whose headers do not end within the bound is refused (431) before anything
//! is served, so no `Host` goes unseen; and when every slot is taken, a new connection takes the slot of the one
//! that has waited longest without sending its request, so clients that connect and send nothing cannot keep a
//! scrape out.

use envbench_core::live::{self, Kind};
use envbench_core::sampler::SamplerPoint;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The longest a client may take to send its whole request.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// Requests answered at once; a connection beyond them is closed unanswered.
const MAX_CONNECTIONS: usize = 16;
/// How often the accepting thread looks whether the endpoint was dropped.
const POLL: Duration = Duration::from_millis(25);
/// The most of a request that is read: its request line and headers.
const MAX_REQUEST_BYTES: usize = 8192;

/// A serving endpoint; dropping it stops the server and forgets the figures.
pub struct MetricsEndpoint {
    address: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl MetricsEndpoint {
    /// Bind `address` and serve the figures from a thread of its own.
    pub fn serve(address: SocketAddr) -> Result<MetricsEndpoint, String> {
        let listener = TcpListener::bind(address).map_err(|e| {
            format!("--metrics-listen {address}: cannot listen there ({e}); choose another port or address")
        })?;
        let address = listener.local_addr().map_err(|e| format!("--metrics-listen {address}: {e}"))?;
        // Accepting without blocking, so a drop is seen within [`POLL`] whatever clients do.
        listener.set_nonblocking(true).map_err(|e| format!("--metrics-listen {address}: {e}"))?;
        live::set_enabled(true);
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("envbench-metrics".into())
            .spawn(move || {
                // Each request on a short-lived thread of its own, so a slow client delays no scrape and no run.
                let slots = Arc::new(Slots::default());
                while !thread_stop.load(Ordering::SeqCst) {
                    let Ok((stream, _)) = listener.accept() else {
                        std::thread::sleep(POLL);
                        continue;
                    };
                    if stream.set_nonblocking(false).is_err() {
                        continue;
                    }
                    let Some(slot) = slots.take(&stream) else { continue };
                    let slots = Arc::clone(&slots);
                    let spawned =
                        std::thread::Builder::new().name("envbench-metrics-request".into()).spawn(move || {
                            let _ = answer(stream, address.ip().is_loopback(), &slot);
                            slots.free(&slot);
                        });
                    if spawned.is_err() {
                        // The thread never ran: it holds no place.
                        std::thread::sleep(POLL);
                    }
                }
            })
            .map_err(|e| format!("--metrics-listen: cannot start its thread ({e})"))?;
        Ok(MetricsEndpoint { address, stop, thread: Some(thread) })
    }

    /// Where it listens (the port the system chose, for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }
}

impl Drop for MetricsEndpoint {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // The accepting thread sees it within [`POLL`]; requests still being answered end on their own deadline.
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        live::set_enabled(false);
    }
}

/// The connections being answered, at most [`MAX_CONNECTIONS`], each with whether its request has arrived.
#[derive(Default)]
struct Slots {
    held: Mutex<Vec<Arc<Slot>>>,
}

/// One connection being answered.
struct Slot {
    /// A handle on the connection, to cut it when its slot is taken.
    stream: TcpStream,
    /// Its request line and headers have arrived: it is being answered, not waited for.
    requested: AtomicBool,
}

impl Slots {
    /// A slot for `stream`: a free one, or the slot of the connection that has waited longest without sending its
    /// request (cut now); `None` when every slot answers a request.
    fn take(&self, stream: &TcpStream) -> Option<Arc<Slot>> {
        let mut held = self.held.lock().unwrap_or_else(|e| e.into_inner());
        if held.len() >= MAX_CONNECTIONS {
            // Oldest first: the first that has sent nothing yet (a request that arrived and waits to be read is not
            // idle).
            let idle =
                held.iter().position(|slot| !slot.requested.load(Ordering::SeqCst) && !has_input(&slot.stream))?;
            let evicted = held.remove(idle);
            let _ = evicted.stream.shutdown(std::net::Shutdown::Both);
        }
        let slot = Arc::new(Slot { stream: stream.try_clone().ok()?, requested: AtomicBool::new(false) });
        held.push(Arc::clone(&slot));
        Some(slot)
    }

    fn free(&self, slot: &Arc<Slot>) {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).retain(|held| !Arc::ptr_eq(held, slot));
    }
}

/// Whether `stream` has bytes waiting to be read, asked without reading them or changing how the stream blocks.
fn has_input(stream: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut byte = 0u8;
    // SAFETY: a one-byte peek into a local buffer on a socket this process holds open.
    let peeked = unsafe {
        libc::recv(stream.as_raw_fd(), (&mut byte as *mut u8).cast(), 1, libc::MSG_PEEK | libc::MSG_DONTWAIT)
    };
    peeked > 0
}

/// Answer one request: the figures for `GET /metrics` (and `/`), 404 for other paths, 405 for other methods, 431 for
/// headers that do not end within [`MAX_REQUEST_BYTES`]. On loopback, a request named for another host is refused
/// (421), so a web page cannot read the figures through DNS rebinding.
fn answer(stream: TcpStream, loopback: bool, slot: &Slot) -> std::io::Result<()> {
    // One deadline for the whole request: each read may wait only for what is left of it.
    let deadline = Instant::now() + REQUEST_TIMEOUT;
    let left = || {
        deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
            .ok_or_else(|| std::io::Error::new(std::io::ErrorKind::TimedOut, "the request took too long"))
    };
    stream.set_write_timeout(Some(REQUEST_TIMEOUT))?;
    let mut reader = BufReader::new(&stream);
    let mut request_line = String::new();
    stream.set_read_timeout(Some(left()?))?;
    reader.by_ref().take(MAX_REQUEST_BYTES as u64).read_line(&mut request_line)?;
    // The headers, up to the blank line, within the same bound: a request that does not end there is refused,
    // whatever it named.
    let mut read = request_line.len();
    let mut foreign_host = false;
    let mut ended = false;
    while request_line.ends_with('\n') {
        let mut header = String::new();
        stream.set_read_timeout(Some(left()?))?;
        let n = reader.by_ref().take((MAX_REQUEST_BYTES.saturating_sub(read)) as u64).read_line(&mut header)?;
        read += n;
        if header == "\r\n" || header == "\n" {
            ended = true;
            break;
        }
        if n == 0 || !header.ends_with('\n') {
            break;
        }
        if let Some((name, value)) = header.split_once(':')
            && name.trim().eq_ignore_ascii_case("host")
        {
            foreign_host |= loopback && !is_loopback_name(value.trim());
        }
    }
    slot.requested.store(true, Ordering::SeqCst);
    let mut parts = request_line.split_whitespace();
    let (method, path) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let path = path.split('?').next().unwrap_or("");
    let (status, content_type, body) = match (method, path) {
        _ if !ended => (
            "431 Request Header Fields Too Large",
            "text/plain; charset=utf-8",
            format!("a request's line and headers end within {MAX_REQUEST_BYTES} bytes\n"),
        ),
        _ if foreign_host => {
            ("421 Misdirected Request", "text/plain; charset=utf-8", "envbench serves this host only\n".into())
        }
        ("GET" | "HEAD", "/metrics" | "/") => ("200 OK", "text/plain; version=0.0.4; charset=utf-8", live::render()),
        ("GET" | "HEAD", _) => ("404 Not Found", "text/plain; charset=utf-8", "envbench serves /metrics\n".into()),
        _ => ("405 Method Not Allowed", "text/plain; charset=utf-8", "envbench serves GET /metrics\n".into()),
    };
    let mut stream = &stream;
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if method != "HEAD" {
        stream.write_all(body.as_bytes())?;
    }
    stream.flush()?;
    if !ended {
        // What the client still sends is read and dropped (a bounded amount, within the deadline), so that closing
        // with it unread does not reset the connection before the client has read the refusal.
        stream.shutdown(std::net::Shutdown::Write)?;
        stream.set_read_timeout(Some(left()?))?;
        let _ = std::io::copy(&mut reader.take(1 << 16), &mut std::io::sink());
    }
    Ok(())
}

/// A `Host` header's name is this machine's loopback: `localhost`, `127.0.0.1` or `[::1]`, with or without a port.
fn is_loopback_name(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The sampler's figures of one interval, as live metrics: CPU shares and each sampled device's iostat figures.
pub fn publish_point(point: &SamplerPoint) {
    if !live::enabled() {
        return;
    }
    let cpu = &point.cpu;
    for (mode, value) in [
        ("user", cpu.user_percent),
        ("nice", cpu.nice_percent),
        ("system", cpu.system_percent),
        ("iowait", cpu.iowait_percent),
        ("irq", cpu.irq_percent),
        ("steal", cpu.steal_percent),
        ("idle", cpu.idle_percent),
    ] {
        live::set(
            "envbench_cpu_percent",
            "The share of all CPUs in each mode over the sampler's last interval, in percent (iostat's avg-cpu).",
            Kind::Gauge,
            &[("mode", mode)],
            value,
        );
    }
    for disk in &point.disks {
        let device = [("device", disk.device.as_str())];
        for (name, help, value) in [
            ("envbench_disk_reads_per_second", "Reads completed per second (iostat's r/s).", disk.reads_per_s),
            ("envbench_disk_writes_per_second", "Writes completed per second (iostat's w/s).", disk.writes_per_s),
            ("envbench_disk_read_bytes_per_second", "Bytes read per second.", disk.read_mb_per_s * 1e6),
            ("envbench_disk_write_bytes_per_second", "Bytes written per second.", disk.write_mb_per_s * 1e6),
            ("envbench_disk_read_await_seconds", "Mean time of a read (iostat's r_await).", disk.read_await_ms / 1e3),
            (
                "envbench_disk_write_await_seconds",
                "Mean time of a write (iostat's w_await).",
                disk.write_await_ms / 1e3,
            ),
            ("envbench_disk_queue_size", "Mean requests in flight (iostat's aqu-sz).", disk.queue_size),
            (
                "envbench_disk_util_percent",
                "The share of time the device was busy (iostat's %util).",
                disk.util_percent,
            ),
        ] {
            live::set(name, help, Kind::Gauge, &device, value);
        }
    }
}

/// The step a run is in, as live metrics (none: between steps).
pub fn publish_step(step: Option<&str>) {
    live::clear("envbench_step_info");
    if let Some(step) = step {
        live::set("envbench_step_info", "The step the run is measuring now (1).", Kind::Gauge, &[("step", step)], 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(address: SocketAddr, request: &str) -> String {
        let mut stream = TcpStream::connect(address).unwrap();
        stream.write_all(request.as_bytes()).unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    }

    /// The endpoint serves the figures at /metrics in the exposition format, refuses other paths and methods, and
    /// stops when dropped.
    #[test]
    fn the_endpoint_serves_the_figures_until_it_is_dropped() {
        let endpoint = MetricsEndpoint::serve("127.0.0.1:0".parse().unwrap()).unwrap();
        let address = endpoint.address();
        publish_step(Some("U=2"));
        let response = get(address, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
        assert!(response.contains("Content-Type: text/plain; version=0.0.4"), "{response}");
        assert!(response.contains("envbench_step_info{step=\"U=2\"} 1\n"), "{response}");
        assert!(get(address, "GET /other HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        assert!(get(address, "POST /metrics HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 405"));
        // A page that rebinds a name of its own to loopback is refused; loopback's names are served.
        assert!(get(address, "GET /metrics HTTP/1.1\r\nHost: evil.example:80\r\n\r\n").starts_with("HTTP/1.1 421"));
        for host in ["localhost:9464", "127.0.0.1", "[::1]:9464"] {
            let request = format!("GET /metrics HTTP/1.1\r\nHost: {host}\r\n\r\n");
            assert!(get(address, &request).starts_with("HTTP/1.1 200"), "{host}");
        }
        // A request whose line and headers do not end within the bound is refused before any Host is missed
        // (issue #67, F3).
        let long = format!("GET /metrics?{} HTTP/1.1\r\nHost: rebind.attacker.example\r\n\r\n", "a".repeat(8300));
        let response = get(address, &long);
        assert!(response.starts_with("HTTP/1.1 431"), "{response}");
        assert!(!response.contains("envbench_step_info"), "no figures: {response}");
        let padded = format!("GET /metrics HTTP/1.1\r\nX-Pad: {}\r\nHost: evil.example\r\n\r\n", "b".repeat(8300));
        assert!(get(address, &padded).starts_with("HTTP/1.1 431"));
        // Clients that connect, send nothing and connect again as soon as they are cut take no scrape's slot
        // (F4): every scrape is answered.
        let stop = Arc::new(AtomicBool::new(false));
        let hogs: Vec<_> = (0..MAX_CONNECTIONS)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || {
                    while !stop.load(Ordering::SeqCst) {
                        let Ok(mut idle) = TcpStream::connect(address) else { continue };
                        let _ = idle.set_read_timeout(Some(Duration::from_secs(5)));
                        let _ = idle.read(&mut [0u8; 64]);
                    }
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(200));
        for scrape in 0..20 {
            let response = get(address, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n");
            assert!(response.starts_with("HTTP/1.1 200"), "scrape {scrape} beside idle clients: {response}");
        }
        stop.store(true, Ordering::SeqCst);
        for hog in hogs {
            hog.join().unwrap();
        }
        // A client that sends nothing holds up neither another scrape nor the endpoint's end.
        let idle = TcpStream::connect(address).unwrap();
        assert!(get(address, "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n").starts_with("HTTP/1.1 200"));
        let taken = MetricsEndpoint::serve(address).err().unwrap();
        assert!(taken.contains("cannot listen there"), "{taken}");
        let dropped = std::time::Instant::now();
        drop(endpoint);
        // Waiting for the idle client would take its whole request deadline.
        assert!(dropped.elapsed() < REQUEST_TIMEOUT, "the end waits for no client");
        drop(idle);
        assert!(!live::enabled());
        assert!(TcpStream::connect_timeout(&address, Duration::from_millis(200)).is_err(), "stopped");
    }
}

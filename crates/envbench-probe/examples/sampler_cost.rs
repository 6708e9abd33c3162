//! Measures what the OS sampler costs: runs it for a while at a given interval over the devices under a path and
//! prints its own CPU time as a share of one core.
//!
//! `cargo run --release -p envbench-probe --example sampler_cost -- [SECONDS] [INTERVAL_MS] [PATH]`

use envbench_probe::{Host, Sampler, SamplerOptions, probe_storage, sampled_devices};
use std::path::PathBuf;
use std::time::Duration;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: u64 = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(30);
    let interval_ms: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(1000);
    let path = PathBuf::from(args.get(3).map(String::as_str).unwrap_or("."));
    let host = Host::live();
    let storage = probe_storage(&host, &path, &mut Vec::new()).expect("probing the path");
    let devices = sampled_devices(&storage);
    let sampler = Sampler::start(
        host,
        SamplerOptions { interval: Duration::from_millis(interval_ms), devices: devices.clone(), ..Default::default() },
    );
    std::thread::sleep(Duration::from_secs(seconds));
    let series = sampler.finish();
    println!(
        "sampler over {:?} every {interval_ms} ms for {:.1} s: {} points, {:.4} s CPU = {:.4}% of one core ({:.1} us per point)",
        devices,
        series.wall_seconds,
        series.points.len(),
        series.own_cpu_seconds,
        series.own_cost_percent_of_core(),
        1e6 * series.own_cpu_seconds / series.points.len().max(1) as f64
    );
}

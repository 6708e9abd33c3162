//! Run the cube workload and print per-step figures: `cargo run --release -p envbench-cube --example cubebench --
//! --scale 0.1 [--repeat 3] [--dir /var/tmp/envbench-cube] [--seed 1] [--compression bitmap|zlib|none] [--direct]
//! [--cache 256MiB] [--load-threads 8] [--calc-threads 1,2,4] [--fix-threads 8] [--restructure-threads 8]`.
//! A list of thread counts runs a sweep and prints its recommendation.

use envbench_core::sampler::NoSteps;
use envbench_core::{ByteSize, parse_byte_size};
use envbench_cube::{CubeConfig, SequenceOutcome, ThreadSweep, run_sweep};
use std::sync::atomic::AtomicBool;

fn list(value: &str) -> Vec<usize> {
    value
        .split(',')
        .map(|v| v.trim().parse().unwrap_or_else(|_| usage(&format!("'{v}' is not a thread count"))))
        .collect()
}

fn usage(problem: &str) -> ! {
    eprintln!("cubebench: {problem}");
    eprintln!(
        "usage: cubebench [--scale F] [--repeat N] [--dir PATH] [--seed N] [--compression bitmap|zlib|none] \
         [--direct] [--cache SIZE] [--page-file SIZE] [--load-threads L] [--calc-threads L] [--fix-threads L] \
         [--restructure-threads L]   (L: a count or a comma-separated list for a sweep)"
    );
    std::process::exit(2)
}

fn print_outcome(outcome: &SequenceOutcome) {
    let t = outcome.threads;
    println!(
        "\nscale {} seed {} compression {} cache {} direct {} | load {} calc {} fix {} restructure {} threads",
        outcome.scale,
        outcome.seed,
        outcome.compression,
        ByteSize(outcome.data_cache_bytes),
        outcome.direct_io,
        t.load_threads,
        t.calc_threads,
        t.fix_threads,
        t.restructure_threads
    );
    println!(
        "{:<24} {:>9} {:>9} {:>9} {:>6} {:>12} {:>9} {:>9}",
        "step", "mean s", "min s", "max s", "share", "cells/s", "rd MB/s", "wr MB/s"
    );
    for s in &outcome.summary {
        println!(
            "{:<24} {:>9.2} {:>9.2} {:>9.2} {:>5.1}% {:>12.0} {:>9.0} {:>9.0}",
            s.name,
            s.mean_seconds,
            s.min_seconds,
            s.max_seconds,
            100.0 * s.share_of_total,
            s.cells_per_second,
            s.read_mb_per_s,
            s.write_mb_per_s
        );
    }
    let last = outcome.repetitions.last().expect("at least one repetition");
    println!("\nlast repetition, per step: blocks read / written, MB read / written, cache hits / misses");
    for s in &last.steps {
        println!(
            "{:<24} {:>9} {:>9} {:>9.1} {:>9.1} {:>9} {:>9}",
            s.name,
            s.blocks_read,
            s.blocks_written,
            s.bytes_read as f64 / 1e6,
            s.bytes_written as f64 / 1e6,
            s.cache_hits,
            s.cache_misses
        );
    }
    let restructure = &last.steps[7];
    let stats = &outcome.statistics;
    let expanded = restructure.blocks_read as f64 * stats.expanded_block_bytes as f64;
    println!(
        "\nrestructure: {:.2} GB/s of stored block data (read + written), {:.2} GB/s of expanded blocks",
        (restructure.bytes_read + restructure.bytes_written) as f64 / restructure.seconds / 1e9,
        expanded / restructure.seconds / 1e9
    );
    println!(
        "cube: {} blocks ({} level 0, {} upper; {} Local, {} USD), {} page files, {}, density {:.2}%, compression \
         ratio {:.1}",
        stats.blocks,
        stats.level0_blocks,
        stats.upper_blocks,
        stats.local_blocks,
        stats.usd_blocks,
        stats.page_files,
        ByteSize(stats.page_file_bytes),
        100.0 * stats.average_density,
        stats.compression_ratio
    );
    let m = &outcome.data.manifest;
    println!(
        "data: {} native cells in {} files, {} CSV rows, {} input blocks{}",
        m.native_cells,
        m.native_files.len(),
        m.csv_rows,
        m.level0_blocks,
        if outcome.data.generated_now {
            format!(" (generated in {:.1} s)", m.generation_seconds)
        } else {
            String::new()
        }
    );
    println!(
        "allocation: pool {:.2}, allocated {:.2} over {} blocks",
        outcome.allocation.pool_cents as f64 / 100.0,
        outcome.allocation.allocated_cents as f64 / 100.0,
        outcome.allocation.blocks_written
    );
}

fn main() {
    let mut config = CubeConfig::new(std::env::temp_dir().join("envbench-cube-bench"));
    let mut sweep = ThreadSweep::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--direct" {
            config.options.direct_io = true;
            continue;
        }
        let value = args.next().unwrap_or_else(|| usage(&format!("{flag} needs a value")));
        let size = |v: &str| parse_byte_size(v).unwrap_or_else(|e| usage(&e.to_string()));
        match flag.as_str() {
            "--scale" => config.scale = value.parse().unwrap_or_else(|_| usage("--scale needs a number")),
            "--seed" => config.seed = value.parse().unwrap_or_else(|_| usage("--seed needs a number")),
            "--repeat" => config.repeat = value.parse().unwrap_or_else(|_| usage("--repeat needs a count")),
            "--dir" => {
                let base = CubeConfig::new(&value);
                config.data_dir = base.data_dir;
                config.cube_dir = base.cube_dir;
            }
            "--compression" => config.options.compression = value.parse().unwrap_or_else(|e| usage(&format!("{e}"))),
            "--cache" => config.options.data_cache = size(&value),
            "--page-file" => config.options.page_file_max = size(&value),
            "--load-threads" => sweep.load_threads = list(&value),
            "--calc-threads" => sweep.calc_threads = list(&value),
            "--fix-threads" => sweep.fix_threads = list(&value),
            "--restructure-threads" => sweep.restructure_threads = list(&value),
            other => usage(&format!("unknown option {other}")),
        }
    }
    let cancel = AtomicBool::new(false);
    match run_sweep(&config, &sweep, &NoSteps, &cancel) {
        Ok(swept) => {
            for outcome in &swept.outcomes {
                print_outcome(outcome);
            }
            if let Some(recommendation) = swept.recommendation {
                println!("\n{}", recommendation.sentence);
            }
        }
        Err(error) => {
            eprintln!("cubebench: {error}");
            std::process::exit(1);
        }
    }
}

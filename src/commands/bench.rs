//! `seisimage bench`: every stage of a migration against its floor (see src/bench.rs).

use super::Reporting;
use crate::cli::BenchArgs;
use seisimage::bench::{self, BenchConfig};

pub fn run(args: &BenchArgs, reporting: Reporting) -> anyhow::Result<()> {
    let temporary = args.workdir.is_none();
    let workdir = args
        .workdir
        .clone()
        .unwrap_or_else(|| std::env::temp_dir().join(format!("seisimage-bench-{}", std::process::id())));
    let cfg = BenchConfig {
        size: args.size,
        method: args.method,
        backend: args.backend,
        depth_steps: args.depth_steps,
        fmax: args.fmax,
        workdir: workdir.clone(),
        threads: args.threads.clone(),
        scales: args.scales,
    };
    if let Some(path) = &args.json {
        seisimage::io::files::check_output_file(path)?;
    }
    if args.backend != seisimage::job::Backend::Cpu {
        // The benchmark's job runs on the first device.
        super::see_only_gpu(0);
    }
    let progress = reporting.progress();
    let result = bench::run(&cfg, progress.as_ref());
    if temporary {
        let _ = std::fs::remove_dir_all(&workdir);
    }
    let report = result?;
    super::print(&report.table())?;
    if let Some(path) = &args.json {
        seisimage::io::output::write_atomic(path, serde_json::to_string_pretty(&report)?.as_bytes())?;
    }
    Ok(())
}

//! One module per command; each turns its arguments into library calls.

mod bench;
mod convert;
mod devices;
mod header_range;
mod headers;
mod info;
mod job;
mod plot;
mod progress;
mod reduce;
mod synth;

use std::time::Duration;

use crate::cli::{Cli, Command, SegyArgs};
use seisimage::io::segy::SegyOptions;
use seisimage::progress::Progress;

pub fn run(cli: &Cli) -> anyhow::Result<()> {
    let reporting = Reporting { quiet: cli.quiet, interval: cli.progress_interval };
    match &cli.command {
        Command::Info(a) => info::run(a, reporting),
        Command::Convert(a) => convert::run(a, reporting),
        Command::Run(a) => job::run(a, reporting),
        Command::Reduce(a) => reduce::run(a, reporting),
        Command::Validate(a) => job::validate(a),
        Command::PrintConfig(a) => job::print_config(a),
        Command::Plot(a) => plot::run(a),
        Command::Synth(a) => synth::run(a, reporting),
        Command::Devices(a) => devices::run(a),
        Command::Bench(a) => bench::run(a, reporting),
    }
}

/// How a command shows progress on stderr, from the global options.
#[derive(Clone, Copy)]
pub(crate) struct Reporting {
    quiet: bool,
    interval: Duration,
}

impl Reporting {
    fn progress(self) -> Box<dyn Progress> {
        progress::for_stderr(self.quiet, self.interval)
    }
}

/// Write `text` to stdout. A reader that went away (a closed pipe, `seisimage info x | head`) ends the
/// output quietly: what it did not read, it did not want.
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// [`print`] with a line end.
pub(crate) fn println(text: &str) -> anyhow::Result<()> {
    print(&format!("{text}\n"))
}

/// Let CUDA see only `device`, the one GPU this process will use, before anything starts CUDA: CUDA's
/// start-up initialises every device it sees, and on a host of several GPUs that costs a few tenths of a
/// second per device (see `gpu::runtime::only_device`). Nothing is changed where the device cannot be
/// named that way (no NVIDIA driver, devices named by UUID, no such device: the engine reports it).
fn see_only_gpu(device: usize) {
    use seisimage::gpu::runtime;
    let Some(list) = runtime::only_device(device) else { return };
    // CUDA reads the variable once, as it starts, and nothing has started it yet; no other thread reads
    // the environment now (the thread pool waits for work), so the change races with no reader.
    std::env::set_var("CUDA_VISIBLE_DEVICES", &list);
    runtime::see_only(device);
    tracing::debug!("CUDA sees device {device} alone (CUDA_VISIBLE_DEVICES={list}), so its start-up opens no other");
}

/// In a rank of a run over several GPUs, have NCCL reach the buffers of the ranks of its host through CUDA's
/// IPC handles instead of its own cuMem mappings (`NCCL_CUMEM_ENABLE=0`), unless the environment sets that
/// variable; like [`see_only_gpu`], before anything loads NCCL. On four H100s joined by NVLink, rank 0's
/// part of the ingest exchange of a 16 GB volume took 0.107 s of device time (81 GB/s) that way, against
/// 0.24-0.27 s (32-36 GB/s) through the mappings, in runs on three hosts, alternated on one.
fn nccl_through_cuda_ipc() {
    if std::env::var_os("NCCL_CUMEM_ENABLE").is_some() {
        return;
    }
    // As in `see_only_gpu`: nothing has loaded NCCL, and no other thread reads the environment now.
    std::env::set_var("NCCL_CUMEM_ENABLE", "0");
    tracing::debug!("NCCL reaches the other GPUs of this host through CUDA IPC handles (NCCL_CUMEM_ENABLE=0)");
}

/// SEG-Y reading options from the shared command-line flags.
fn segy_options(a: &SegyArgs) -> SegyOptions {
    SegyOptions {
        preset: a.headers,
        iline_byte: a.iline_byte,
        xline_byte: a.xline_byte,
        x_byte: a.x_byte,
        y_byte: a.y_byte,
        endian: a.endian,
        sample_format: a.format_code,
        sample_interval: a.sample_interval,
        domain: a.domain,
    }
}

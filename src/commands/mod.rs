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

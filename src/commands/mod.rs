//! One module per command; each turns its arguments into library calls.

mod convert;
mod devices;
mod info;
mod job;
mod synth;

use crate::cli::{Cli, Command, SegyArgs};
use seisimage::io::segy::SegyOptions;

pub fn run(cli: &Cli) -> anyhow::Result<()> {
    match &cli.command {
        Command::Info(a) => info::run(a, cli.quiet),
        Command::Convert(a) => convert::run(a, cli.quiet),
        Command::Run(a) => job::run(a, cli.quiet),
        Command::Validate(a) => job::validate(a),
        Command::PrintConfig(a) => job::print_config(a),
        Command::Synth(a) => synth::run(a, cli.quiet),
        Command::Devices(a) => devices::run(a),
    }
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
        ..Default::default()
    }
}

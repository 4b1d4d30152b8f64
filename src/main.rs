//! The `seisimage` command: parse the command line, run one command, report an error once and map it to
//! an exit code a batch scheduler can act on (0 done, 1 failed, 2 usage or configuration error).

mod cli;
mod commands;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    if let Err(e) = seisimage::cancel::install_signal_handlers() {
        tracing::warn!("cannot install the SIGINT/SIGTERM handlers: {e}");
    }
    if let Err(e) = commands::run(&cli) {
        eprintln!("error: {e:#}");
        std::process::exit(exit_code(&e));
    }
}

fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("seisimage={default},warn")));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}

/// The exit code of the first library error in the chain; 1 for anything else.
fn exit_code(e: &anyhow::Error) -> i32 {
    e.chain().find_map(|c| c.downcast_ref::<seisimage::Error>()).map(|e| e.exit_code()).unwrap_or(1)
}

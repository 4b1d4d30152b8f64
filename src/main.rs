//! The `seisimage` command: parse the command line, run one command, report an error once and map it to
//! an exit code a batch scheduler can act on (0 done, 1 failed, 2 usage or configuration error, 128 + the
//! signal that stopped it).

mod cli;
mod commands;

use std::io::Write;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    init_logging(cli.verbose, cli.quiet);
    // Before anything opens an HDF5 file: HDF5 plugins are never loaded.
    seisimage::io::hdf5::init();
    if let Err(e) = seisimage::cancel::install_signal_handlers() {
        tracing::warn!("cannot install the signal handlers: {e}");
    }
    raise_open_file_limit();
    let ran = seisimage::threads::start_global_pool(seisimage::distributed::ranks::ranks_on_this_host())
        .map_err(anyhow::Error::from)
        .and_then(|()| commands::run(&cli));
    exit_now(match ran {
        Ok(()) => 0,
        Err(e) => {
            // Nobody may be reading any more (a closed pipe): the exit code still tells.
            let _ = writeln!(std::io::stderr(), "error: {}", message(&e));
            exit_code(&e)
        }
    })
}

/// End the process with `code` without running the libraries' exit handlers, once the command is over,
/// error or not:
/// - a job that fails early ends while its engine is still being set up on a thread of its own (CUDA's
///   start-up and NCCL's overlap the preparing of the job), and CUDA or NCCL torn down under that thread can
///   crash the process: a rank whose input was missing printed its error and then died by a signal, which a
///   scheduler reads as a crash, not as exit code 1;
/// - a run's last engine is left whole for the exit to free (`run::leave_engine_to_exit`).
///
/// Nothing is left to finish: the command's files are closed, and a failed run's temporary files went as
/// the error came up.
fn exit_now(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    // SAFETY: `_exit` ends the process at once, touching no state of this one.
    unsafe { libc::_exit(code) }
}

/// Raise the soft limit on open files to the hard one, as the system allows any process to: a run with
/// many products writes many files. (A run that still meets the limit creates its files as their values
/// come instead of ahead of them.)
fn raise_open_file_limit() {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit and setrlimit on this process, with a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max {
            limit.rlim_cur = limit.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

/// The error and its causes on one line, leaving out a cause whose text the message already holds (a
/// library error includes its I/O cause).
fn message(e: &anyhow::Error) -> String {
    let mut text = e.to_string();
    for cause in e.chain().skip(1).map(|c| c.to_string()) {
        if !text.contains(&cause) {
            text = format!("{text}: {cause}");
        }
    }
    text
}

/// The crates whose log lines show at the level the options ask for: the application and its layers
/// (docs/architecture.md). Other crates' show from warnings up.
const LOGGING_CRATES: [&str; 7] =
    ["seisimage", "seis_core", "seis_io", "seis_velocity", "seis_render", "seis_imaging", "seis_cuda"];

fn init_logging(verbose: u8, quiet: bool) {
    let default = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let ours: Vec<String> = LOGGING_CRATES.iter().map(|c| format!("{c}={default}")).collect();
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(format!("{},warn", ours.join(","))));
    // Colours only for a person at a terminal: a batch log keeps plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(ansi)
        // A log nobody reads any more (a closed pipe) is not worth a panic, nor a report on that same stderr.
        .log_internal_errors(false)
        .init();
}

/// The exit code of the first library error in the chain; 1 for anything else.
fn exit_code(e: &anyhow::Error) -> i32 {
    e.chain().find_map(|c| c.downcast_ref::<seisimage::Error>()).map(|e| e.exit_code()).unwrap_or(1)
}

#[cfg(test)]
mod tests {
    use seisimage::Error;

    #[test]
    fn a_fault_exits_1_and_a_mistake_2_under_any_context() {
        let batch = "2 of 3 jobs failed (a.toml, b.toml); the first";
        let fault = anyhow::Error::from(Error::Internal("the engine did not return request box 2".into()));
        assert_eq!(super::exit_code(&fault), 1);
        assert_eq!(super::exit_code(&fault.context(batch)), 1);
        let mistake = anyhow::Error::from(Error::at_key("imaging.dz", "dz must be a positive depth step"));
        assert_eq!(super::exit_code(&mistake.context(batch)), 2);
        assert_eq!(super::exit_code(&anyhow::anyhow!("not a library error")), 1);
    }
}

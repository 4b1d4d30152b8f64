//! `seisimage run JOB --gpus all`: one run over every GPU of this machine, without a cluster launcher. The
//! command starts one rank per GPU — itself again, with `RANK`, `WORLD_SIZE`, `LOCAL_RANK`,
//! `LOCAL_WORLD_SIZE` (by which each rank takes its share of the cores), a fresh `SEISIMAGE_RUN_ID` and,
//! on fewer GPUs than the host has, a `CUDA_VISIBLE_DEVICES` of those it uses —
//! and watches them: when one fails or is killed the others are stopped (SIGTERM,
//! then SIGKILL after a grace period), a SIGINT or SIGTERM to the command is passed on to every rank, and
//! the command exits with the code of the first rank that failed.
//!
//! Processes rather than threads of this one: on a host of four H100s, four ranks as threads of one
//! process (one CUDA start-up for the four devices) were no faster to set up than four processes. CUDA
//! initialises the devices one at a time either way (the contexts were ready 1.1-1.3 s after the start),
//! and NCCL's set-up took 0.86-0.90 s in one process against 0.58-0.70 s in four; the phase-shift job of
//! `scripts/gpu-multi.sh` took 3.64-3.73 s as threads and 3.37-3.98 s as processes.

use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use crate::cancel::{CancelToken, Stop};
use crate::error::{Error, Result};

/// How many GPUs `--gpus` asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gpus {
    All,
    Count(usize),
}

impl std::str::FromStr for Gpus {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim() {
            "all" => Ok(Gpus::All),
            n => match n.parse::<usize>() {
                Ok(n) if n >= 1 => Ok(Gpus::Count(n)),
                _ => Err(format!("expected `all` or a number of GPUs ≥ 1, got {s:?}")),
            },
        }
    }
}

/// How long ranks have to stop after SIGTERM before they are killed.
pub const GRACE: Duration = Duration::from_secs(30);

/// The ranks for `gpus` of the `visible` GPUs.
pub fn rank_count(gpus: Gpus, visible: usize) -> Result<usize> {
    match gpus {
        _ if visible == 0 => Err(Error::Backend("--gpus: no CUDA device is visible".into())),
        Gpus::All => Ok(visible),
        Gpus::Count(n) if n <= visible => Ok(n),
        Gpus::Count(n) => Err(Error::Request(format!("--gpus {n}: only {visible} CUDA devices are visible"))),
    }
}

/// Start `ranks` copies of this program with `args` (a `run` command line without `--gpus`) of a job
/// writing into `output_dir`, one per GPU, and wait for them (see the module comment). Their rendezvous
/// folder goes once they have all ended, whether they failed or not.
pub fn launch(
    ranks: usize,
    args: &[std::ffi::OsString],
    output_dir: &std::path::Path,
    cancel: &CancelToken,
) -> Result<()> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::Backend(format!("cannot find this program to start its ranks: {e}")))?;
    let run_id = format!(
        "gpus-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    );
    // Ranks on fewer GPUs than the host has see only those: CUDA's start-up initialises every device it sees.
    let devices = crate::gpu::runtime::first_devices(ranks);
    let commands = (0..ranks).map(|r| rank_command(&exe, args, r, ranks, &run_id, devices.as_deref())).collect();
    tracing::info!("starting {ranks} ranks, one per GPU");
    let result = supervise(commands, cancel, GRACE);
    crate::distributed::ranks::clear(&crate::distributed::ranks::rendezvous_path(output_dir, &run_id));
    result
}

/// The command of rank `rank` of `ranks`, all on this host, which see the CUDA devices `devices` (a
/// `CUDA_VISIBLE_DEVICES` list; `None`: those this process sees).
fn rank_command(
    exe: &std::path::Path,
    args: &[std::ffi::OsString],
    rank: usize,
    ranks: usize,
    run_id: &str,
    devices: Option<&str>,
) -> Command {
    let mut c = crate::io::files::child_process(exe);
    c.args(args)
        .env("RANK", rank.to_string())
        .env("WORLD_SIZE", ranks.to_string())
        .env("LOCAL_RANK", rank.to_string())
        .env("LOCAL_WORLD_SIZE", ranks.to_string())
        .env("SEISIMAGE_RUN_ID", run_id);
    if let Some(devices) = devices {
        c.env("CUDA_VISIBLE_DEVICES", devices);
    }
    c
}

/// Run `commands` together and wait for them: the first that fails (or every one, when `cancel` stops)
/// makes the others get SIGTERM, and SIGKILL `grace` later. `Ok` when all succeed; else the error of the
/// first failure, with its exit code.
pub fn supervise(commands: Vec<Command>, cancel: &CancelToken, grace: Duration) -> Result<()> {
    let mut children: Vec<Option<Child>> = Vec::new();
    for mut c in commands {
        match c.spawn() {
            Ok(child) => children.push(Some(child)),
            Err(e) => {
                stop_all(&mut children, grace);
                return Err(Error::Backend(format!("cannot start rank {}: {e}", children.len())));
            }
        }
    }
    let mut failure: Option<(usize, i32)> = None;
    let mut stopping: Option<Instant> = None;
    loop {
        for (rank, slot) in children.iter_mut().enumerate() {
            let Some(child) = slot else { continue };
            match child.try_wait() {
                Ok(Some(status)) => {
                    *slot = None;
                    let code = exit_code(status);
                    tracing::debug!("rank {rank} ended (exit code {code})");
                    if code != 0 && failure.is_none() {
                        failure = Some((rank, code));
                    }
                }
                Ok(None) => {}
                Err(e) => tracing::warn!("cannot look at rank {rank}: {e}"),
            }
        }
        if children.iter().all(Option::is_none) {
            break;
        }
        let stop = failure.is_some() || cancel.stopped().is_some();
        match stopping {
            None if stop => {
                signal_all(&children, libc::SIGTERM);
                stopping = Some(Instant::now());
            }
            Some(since) if since.elapsed() >= grace => {
                signal_all(&children, libc::SIGKILL);
                stopping = Some(Instant::now() + Duration::from_secs(3600));
            }
            _ => {}
        }
        // The command ends as soon as its last rank has: a wait of its own would add to every run.
        std::thread::sleep(Duration::from_millis(10));
    }
    match (failure, cancel.stopped()) {
        (_, Some(why)) => Err(Error::Interrupted(why)),
        (None, None) => Ok(()),
        (Some((rank, code)), None) => Err(match (code, Stop::from_exit_code(code)) {
            (_, Some(stop)) => Error::Interrupted(stop),
            (2, None) => Error::Request(format!(
                "rank {rank} stopped with a mistake in the job or command (exit code 2); see its error above"
            )),
            (c, None) => Error::Backend(format!(
                "rank {rank} failed (exit code {c}), and the other ranks were stopped; see its error above"
            )),
        }),
    }
}

fn signal_all(children: &[Option<Child>], signal: libc::c_int) {
    for child in children.iter().flatten() {
        // SAFETY: kill(2) on the pid of a child we have not reaped.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    }
}

fn stop_all(children: &mut [Option<Child>], grace: Duration) {
    signal_all(children, libc::SIGTERM);
    let deadline = Instant::now() + grace;
    for child in children.iter_mut().flatten() {
        while matches!(child.try_wait(), Ok(None)) {
            if Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A child's exit code as a shell would give it: its code, or 128 + the signal that killed it.
fn exit_code(status: ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = crate::io::files::child_process("sh");
        c.args(["-c", script]);
        c
    }

    #[test]
    fn gpu_counts_read_and_fit_the_machine() {
        assert_eq!("all".parse::<Gpus>(), Ok(Gpus::All));
        assert_eq!("4".parse::<Gpus>(), Ok(Gpus::Count(4)));
        assert!("0".parse::<Gpus>().is_err() && "some".parse::<Gpus>().is_err());
        assert_eq!(rank_count(Gpus::All, 8).unwrap(), 8);
        assert_eq!(rank_count(Gpus::Count(2), 8).unwrap(), 2);
        assert_eq!(rank_count(Gpus::Count(9), 8).unwrap_err().exit_code(), 2);
        assert!(rank_count(Gpus::All, 0).unwrap_err().to_string().contains("no CUDA device"));
    }

    /// Each rank learns its place, how many ranks share the host (so that it takes its share of the
    /// cores), and which GPUs they use.
    #[test]
    fn a_rank_is_told_its_place_and_the_ranks_of_its_host() {
        let c = rank_command(std::path::Path::new("seisimage"), &["run".into()], 2, 4, "gpus-1-2", Some("3,1,0,2"));
        let env: std::collections::HashMap<String, String> =
            c.get_envs().filter_map(|(k, v)| Some((k.to_str()?.to_string(), v?.to_str()?.to_string()))).collect();
        for (name, value) in [
            ("RANK", "2"),
            ("WORLD_SIZE", "4"),
            ("LOCAL_RANK", "2"),
            ("LOCAL_WORLD_SIZE", "4"),
            ("SEISIMAGE_RUN_ID", "gpus-1-2"),
            ("CUDA_VISIBLE_DEVICES", "3,1,0,2"),
        ] {
            assert_eq!(env.get(name).map(String::as_str), Some(value), "{name}");
        }
    }

    #[test]
    fn ranks_that_all_succeed_succeed() {
        supervise(vec![sh("exit 0"), sh("sleep 0.2")], &CancelToken::new(), GRACE).unwrap();
    }

    /// One rank failing stops the others at once and gives its exit code; one that ignores SIGTERM is
    /// killed after the grace period.
    #[test]
    fn a_failing_rank_stops_the_others_with_its_code() {
        let t = Instant::now();
        let e = supervise(vec![sh("sleep 30"), sh("sleep 0.2; exit 3"), sh("sleep 30")], &CancelToken::new(), GRACE)
            .unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10), "the others were not stopped: {:?}", t.elapsed());
        assert!(e.to_string().contains("rank 1 failed (exit code 3)"), "{e}");
        assert_eq!(e.exit_code(), 1);
        let e =
            supervise(vec![sh("sleep 0.1; kill -TERM $$"), sh("sleep 30")], &CancelToken::new(), GRACE).unwrap_err();
        assert_eq!(e.exit_code(), 143, "{e}");
        let t = Instant::now();
        let stubborn = sh("trap '' TERM; sleep 30");
        let e = supervise(vec![sh("sleep 0.1; exit 2"), stubborn], &CancelToken::new(), Duration::from_millis(300))
            .unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10), "the stubborn rank was not killed: {:?}", t.elapsed());
        assert_eq!(e.exit_code(), 2);
    }

    #[test]
    fn a_stop_of_the_launcher_stops_every_rank() {
        let cancel = CancelToken::new();
        let c = cancel.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(200));
            c.cancel(Stop::Sigint);
        });
        let t = Instant::now();
        let e = supervise(vec![sh("sleep 30"), sh("sleep 30")], &cancel, GRACE).unwrap_err();
        assert!(t.elapsed() < Duration::from_secs(10));
        assert_eq!(e.exit_code(), 130);
    }
}

//! What the command-line tests share: running the real binary (to the end, or in the background to signal
//! it), synthetic inputs written with the library's synthetic models and writers, job files, and looks at
//! an output folder.
#![allow(dead_code)] // each test binary uses its own subset

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use seisimage::io::{write_volume, FileFormat, WriteOptions};
use seisimage::synth::{Event, Medium, Model, ModelSpec};
use seisimage::volume::VolumeReader;

/// The `seisimage` binary built with these tests, or the one `SEISIMAGE_BIN` names (the tests carried to
/// another machine, where the build's path does not exist).
pub fn seisimage() -> Command {
    child(seisimage_path())
}

/// Where the `seisimage` binary of [`seisimage`] is, for tests that hand it to a script.
pub fn seisimage_path() -> std::ffi::OsString {
    std::env::var_os("SEISIMAGE_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_seisimage").into())
}

pub use seisimage::io::files::child_process as child;

/// How many GPUs this machine has, for a test's GPU part, when `SEISIMAGE_GPU_TESTS=1` (a machine without
/// a usable GPU then fails the test); without that variable `None`, with a message, and the part is skipped.
pub fn gpus_for_tests() -> Option<usize> {
    if std::env::var("SEISIMAGE_GPU_TESTS").as_deref() != Ok("1") {
        eprintln!("GPU run skipped: set SEISIMAGE_GPU_TESTS=1 on a machine with a CUDA device to run it");
        return None;
    }
    Some(seisimage::gpu::probe().expect("SEISIMAGE_GPU_TESTS=1 but no usable GPU").devices.len())
}

/// What a finished command left.
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

impl std::fmt::Debug for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}\n--- stdout\n{}\n--- stderr\n{}", self.status, self.stdout, self.stderr)
    }
}

/// Run `seisimage ARGS` to the end (stdin closed, stderr not a terminal: the batch-log mode).
pub fn run(args: &[&str]) -> Outcome {
    run_command(seisimage().args(args))
}

pub fn run_command(cmd: &mut Command) -> Outcome {
    let out = cmd.stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("cannot start {:?}: {e}", cmd.get_program()));
    Outcome {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A synthetic volume: a point diffractor and a flat reflector in a 2000 m/s medium, 10 m bins, 4 ms.
pub fn model(ilines: usize, xlines: usize, samples: usize) -> Model {
    let centre = |n: usize| (n - 1) as f64 * 5.0;
    Model::new(ModelSpec {
        ilines,
        xlines,
        samples,
        dt_ms: 4.0,
        bin_m: [10.0, 10.0],
        medium: Medium::Constant { velocity: 2000.0 },
        peak_hz: 20.0,
        events: vec![
            Event::Diffractor { x: centre(ilines), y: centre(xlines), z: 150.0, amplitude: 1.0 },
            Event::Reflector { z: 300.0, amplitude: 0.5 },
        ],
        noise: None,
    })
    .expect("synthetic model")
}

/// The samples of `m`, in `[il][xl][sample]` order.
pub fn samples(m: &Model) -> Vec<f32> {
    let mut data = vec![0.0; m.geometry().n_values()];
    m.read_all(&mut data).expect("synthetic samples");
    data
}

/// Write `data` on the grid of `m` as an IEEE-float SEG-Y file (inline numbers and crosslines from 1).
pub fn write_segy(path: &Path, m: &Model, data: &[f32]) {
    write_volume(FileFormat::Segy, path, m.geometry(), data, &WriteOptions::default()).expect("write SEG-Y");
}

/// A job on `input` writing into `out`, constant velocity 2000 m/s, on the CPU; `imaging` is the body of
/// `[imaging]` and `output` the body of `[output]` after its `dir`.
pub fn job_text(input: &Path, out: &Path, imaging: &str, output: &str) -> String {
    format!(
        "[input]\npath = {input:?}\n\n[velocity]\nkind = \"constant\"\nvelocity = 2000.0\n\n[imaging]\n{imaging}\n\n\
         [compute]\nbackend = \"cpu\"\n\n[output]\ndir = {out:?}\n{output}\n"
    )
}

/// Write a job file and return its path.
pub fn write_job(path: &Path, text: &str) -> PathBuf {
    std::fs::write(path, text).expect("write job file");
    path.to_path_buf()
}

/// This machine's host name, as the kernel gives it.
pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname").expect("the host name").trim().to_string()
}

/// Names in `dir` (not recursive), sorted; empty when `dir` does not exist.
pub fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect(),
        Err(_) => Vec::new(),
    };
    v.sort();
    v
}

/// Files in `dir` whose name marks them as written under a temporary name.
pub fn partial_files(dir: &Path) -> Vec<String> {
    names(dir).into_iter().filter(|n| n.contains(".partial-")).collect()
}

/// A `seisimage` process running in the background, its stderr read line by line as it comes.
pub struct Running {
    child: Child,
    lines: Receiver<String>,
    log: Arc<Mutex<String>>,
    reader: Option<JoinHandle<()>>,
}

impl Running {
    pub fn start(cmd: &mut Command) -> Running {
        let mut child =
            cmd.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("start seisimage");
        let stderr = child.stderr.take().expect("piped stderr");
        let (tx, lines) = mpsc::channel();
        let log = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&log);
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
                sink.lock().unwrap().push_str(&format!("{line}\n"));
                let _ = tx.send(line);
            }
        });
        Running { child, lines, log, reader: Some(reader) }
    }

    /// Wait until a stderr line contains `pattern`, and return it. Panics if the process ends first or
    /// `timeout` passes.
    pub fn wait_for(&mut self, pattern: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(pattern) => return line,
                Ok(_) => {}
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("no line with {pattern:?} on stderr within {timeout:?}:\n{}", self.log.lock().unwrap());
                }
            }
        }
    }

    /// The process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn signal(&self, signal: i32) {
        // SAFETY: kill(2) on our own child, which has not been waited for, so its pid is still its own.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        assert_eq!(rc, 0, "kill({}, {signal})", self.child.id());
    }

    /// Wait for the process to end (killing it and panicking after `timeout`); its status and whole stderr.
    pub fn finish(mut self, timeout: Duration) -> (ExitStatus, String) {
        let deadline = Instant::now() + timeout;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("seisimage did not end within {timeout:?}:\n{}", self.log.lock().unwrap());
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.reader.take().expect("reader").join().expect("stderr reader");
        let log = self.log.lock().unwrap().clone();
        (status, log)
    }
}

//! What a benchmark reports: the floors, the stages set against them, and the whole report as a table.

use std::fmt::Write;

use serde::Serialize;

use crate::imaging::Method;
use crate::run::Prepared;

/// Bytes in a GB: rates are reported in GB/s.
pub(super) const GB: f64 = 1e9;

/// A velocity scan against its parts: one ingest and one migration per member, timed in the same process
/// on the same engine (the products collected in memory, not written).
#[derive(Clone, Debug, Serialize)]
pub struct ScanReport {
    /// The velocity factors of the members.
    pub scales: Vec<f64>,
    /// One migration of the job (ingest included), s.
    pub single_seconds: f64,
    /// What a scan does once of it: read, window, upload, time FFT, store, and each band's load and
    /// spatial FFTs, s.
    pub ingest_seconds: f64,
    /// The whole scan, s.
    pub scan_seconds: f64,
    /// `scan / (ingest + members × (single − ingest))`: 1 when the scan costs one ingest and its migrations.
    pub ratio_to_one_ingest: f64,
    /// `members × single / scan`: how much faster than separate runs.
    pub speedup_over_separate: f64,
    /// The stages of the scan.
    pub stages: crate::stats::RunStats,
}

/// One row of the stage table.
#[derive(Clone, Debug, Serialize)]
pub struct StageRow {
    pub stage: String,
    pub seconds: f64,
    pub bytes: u64,
    /// Bytes / seconds (GB/s), when the stage moves bytes.
    pub gb_per_s: Option<f64>,
    /// What the stage is compared with, and its rate.
    pub floor: Option<String>,
    /// Stage rate ÷ floor rate (1 = at the floor), or floor time ÷ stage time.
    pub ratio: Option<f64>,
}

/// Hardware floors measured in this process.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Floors {
    /// Plain sequential read of the input file (page cache warm), GB/s.
    pub file_read_gbps: f64,
    pub h2d_pinned_gbps: Option<f64>,
    pub h2d_pageable_gbps: Option<f64>,
    pub d2h_pinned_gbps: Option<f64>,
    /// Device-to-device copy, counting bytes read plus bytes written.
    pub d2d_gbps: Option<f64>,
    /// Pinned H2D of the volume's bytes while the host decodes and windows the input into a pinned staging
    /// ring beside it, as the ingest does but with no chunk waiting for another.
    pub h2d_pinned_beside_decode_gbps: Option<f64>,
    /// That decode's time, with the upload running beside it (s).
    pub decode_beside_upload_seconds: Option<f64>,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchReport {
    pub size: [usize; 3],
    pub input_bytes: u64,
    pub method: &'static str,
    pub backend: String,
    pub device: Option<String>,
    pub plan: Vec<String>,
    pub floors: Floors,
    /// Decode throughput of the whole-file read (GB/s of file bytes), IEEE and IBM.
    pub decode_ieee_gbps: f64,
    pub decode_ibm_gbps: f64,
    pub stages: Vec<StageRow>,
    /// `seisimage run`'s wall time, file in page cache to products on disk.
    pub end_to_end_seconds: f64,
    /// Then, after the manifest, waiting for the engine to release the device (its context, modules and
    /// pinned memory; most of that overlaps writing the products).
    pub release_wait_seconds: f64,
    /// Upload floor (input bytes at pinned H2D) plus the device compute stages.
    pub floor_seconds: Option<f64>,
    pub naive_seconds: Option<f64>,
    /// Phase shift: depth-step updates (ω × k × steps) per second.
    pub updates_per_second: Option<f64>,
    /// Peak resident host memory of the run, and what the plan allows (volume + staging + products).
    pub peak_rss_bytes: Option<u64>,
    pub device_memory_planned_bytes: u64,
    /// CPU: (threads, migrate seconds, updates per second).
    pub cpu_scaling: Vec<(usize, f64, f64)>,
    /// Opening the input (header scan) and planning, before the run starts.
    pub prepare_seconds: f64,
    /// Every stage the run recorded, as the manifest has them (setup stages included).
    pub all_stages: crate::stats::RunStats,
    /// With `--scales N`: the velocity scan against one ingest plus N migrations.
    pub scan: Option<ScanReport>,
    pub notes: Vec<String>,
}

/// The stages of the run that move bytes, each set against the floor it could at best reach.
pub(super) fn stage_rows(
    p: &Prepared,
    stats: &crate::stats::RunStats,
    floors: &Floors,
    input_bytes: u64,
    bus_bytes: u64,
) -> Vec<StageRow> {
    let plan = &p.plan;
    let (nw, nk) = (plan.n_omega() as u64, plan.nk() as u64);
    let [ni, nx, _] = plan.input.shape();
    let pt = plan.padded[2] as u64;
    let traces = (ni * nx) as u64;
    let spectrum = nw * nk * 8;
    let levels = plan.levels.len() as u64;
    let product_bytes: u64 = p.request.boxes.iter().map(|b| b.len() as u64 * 4).sum();
    let split = plan.method == Method::SplitStep;
    let steps = plan.last_level() as u64;
    // Bytes each device stage must at least read and write.
    let device_bytes = |stage: &str| -> u64 {
        match stage {
            "time-fft" => traces * (pt * 4 + (pt / 2 + 1) * 8) + spectrum,
            "spatial-fft" => 2 * spectrum * if split { 1 + steps } else { 1 },
            "inverse-fft" => 2 * if split { spectrum * steps } else { levels * nk * 8 },
            "gather" => product_bytes,
            _ => 0,
        }
    };
    let rate = |bytes: u64, s: f64| (bytes > 0 && s > 0.0).then(|| bytes as f64 / s / GB);
    let mut rows = Vec::new();
    let mut push = |stage: &str, label: &str, bytes: u64, floor: Option<(String, f64)>| {
        let Some(s) = stats.seconds(stage) else { return };
        let gbps = rate(bytes, s);
        let ratio = match (&floor, gbps) {
            (Some((_, f)), Some(g)) => Some(g / f),
            _ => None,
        };
        rows.push(StageRow {
            stage: label.into(),
            seconds: s,
            bytes,
            gb_per_s: gbps,
            floor: floor.map(|(n, f)| format!("{n} {f:.1} GB/s")),
            ratio,
        });
    };
    push("read", "read, decode, window", input_bytes, Some(("plain file read".into(), floors.file_read_gbps)));
    push("h2d", "H2D", bus_bytes, floors.h2d_pinned_gbps.map(|f| ("pinned H2D".into(), f)));
    // The whole ingest (read, window, upload and t→ω, overlapped) against the bus alone.
    push("ingest", "ingest (file → spectrum)", bus_bytes, floors.h2d_pinned_gbps.map(|f| ("pinned H2D".into(), f)));
    let d2d = floors.d2d_gbps.map(|f| ("device copy".to_string(), f));
    push("time-fft", "t→ω", device_bytes("time-fft"), d2d.clone());
    push("spatial-fft", "spatial FFT", device_bytes("spatial-fft"), d2d.clone());
    push("migrate", "migration", if split { 4 * spectrum * steps } else { 2 * spectrum }, d2d.clone());
    push("inverse-fft", "inverse FFT", device_bytes("inverse-fft"), d2d.clone());
    push("gather", "gather", device_bytes("gather"), d2d);
    push("d2h", "D2H", product_bytes, floors.d2h_pinned_gbps.map(|f| ("pinned D2H".into(), f)));
    push("write", "write", stats.bytes("write").unwrap_or(0), None);
    rows
}

impl BenchReport {
    /// The report as a table for a terminal or a Markdown file.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let [ni, nx, nt] = self.size;
        let _ = writeln!(
            s,
            "seisimage bench: {ni} × {nx} × {nt} float32 ({:.2} GB), {}, on {}",
            self.input_bytes as f64 / GB,
            self.method,
            self.backend
        );
        for l in &self.plan {
            let _ = writeln!(s, "  plan: {l}");
        }
        self.write_floors(&mut s);
        self.write_stages(&mut s);
        self.write_times(&mut s);
        if let Some(scan) = &self.scan {
            write_scan(&mut s, scan);
        }
        for n in &self.notes {
            let _ = writeln!(s, "note: {n}");
        }
        s
    }

    /// The floors measured in the run.
    fn write_floors(&self, s: &mut String) {
        let f = &self.floors;
        let _ = writeln!(s, "\nfloors measured in this run:");
        let _ = writeln!(s, "  plain file read          {:>8.2} GB/s", f.file_read_gbps);
        let opt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2} GB/s"));
        let _ = writeln!(s, "  H2D pinned / pageable    {:>10} / {}", opt(f.h2d_pinned_gbps), opt(f.h2d_pageable_gbps));
        let _ = writeln!(s, "  D2H pinned               {:>10}", opt(f.d2h_pinned_gbps));
        let _ = writeln!(s, "  device copy (r+w)        {:>10}", opt(f.d2d_gbps));
        if let (Some(h2d), Some(decode)) = (f.h2d_pinned_beside_decode_gbps, f.decode_beside_upload_seconds) {
            let _ = writeln!(
                s,
                "  H2D pinned, host decoding beside it {:.2} GB/s (the decode into pinned staging: {:.1} ms)",
                h2d,
                decode * 1e3
            );
        }
        let _ = writeln!(
            s,
            "  decode IEEE / IBM        {:>8.2} / {:.2} GB/s of file bytes (whole-file read)",
            self.decode_ieee_gbps, self.decode_ibm_gbps
        );
    }

    /// The stages as a Markdown table.
    fn write_stages(&self, s: &mut String) {
        let _ = writeln!(s, "\n| stage | time (ms) | bytes (MB) | GB/s | floor | ratio to floor |");
        let _ = writeln!(s, "|---|---:|---:|---:|---|---:|");
        for r in &self.stages {
            let _ = writeln!(
                s,
                "| {} | {:.2} | {:.1} | {} | {} | {} |",
                r.stage,
                r.seconds * 1e3,
                r.bytes as f64 / 1e6,
                r.gb_per_s.map_or("-".into(), |g| format!("{g:.1}")),
                r.floor.clone().unwrap_or_else(|| "-".into()),
                r.ratio.map_or("-".into(), |x| format!("{x:.2}"))
            );
        }
        let _ = writeln!(s);
    }

    /// The run's times against its floors and the naive way, its memory, and every stage it recorded.
    fn write_times(&self, s: &mut String) {
        if let Some(u) = self.updates_per_second {
            let _ = writeln!(s, "phase shift: {:.3e} depth-step updates per second", u);
        }
        let setup = self.all_stages.seconds("engine-setup").unwrap_or(0.0);
        let wait = self.all_stages.seconds("engine-wait").unwrap_or(0.0);
        let _ = writeln!(
            s,
            "end to end (file in page cache → products on disk): {:.3} s, of which {:.3} s waiting for the engine \
             (its set-up took {:.3} s, the rest hidden behind opening and planning)",
            self.end_to_end_seconds, wait, setup
        );
        if self.release_wait_seconds >= 0.0005 {
            let _ = writeln!(
                s,
                "  then {:.3} s waiting for the engine to release the device (it began as the products were written)",
                self.release_wait_seconds
            );
        }
        let running = self.end_to_end_seconds - wait;
        if let Some(fl) = self.floor_seconds {
            let _ = writeln!(
                s,
                "  without that wait: {:.3} s = {:.2} × (upload floor + device compute = {:.3} s)",
                running,
                running / fl,
                fl
            );
        }
        if let Some(n) = self.naive_seconds {
            let _ = writeln!(
                s,
                "  naive path (pageable upload, same compute, whole image back; engine already set up): {:.3} s → \
                 seisimage is {:.2} × faster",
                n,
                n / running
            );
        }
        if let Some(r) = self.peak_rss_bytes {
            let _ =
                writeln!(s, "peak host memory {:.2} GB (input {:.2} GB)", r as f64 / GB, self.input_bytes as f64 / GB);
        }
        let _ = writeln!(s, "device memory planned {:.2} GB", self.device_memory_planned_bytes as f64 / GB);
        for (n, t, u) in &self.cpu_scaling {
            let _ = writeln!(s, "cpu {n:>3} threads: migration {t:.3} s, {u:.3e} updates/s");
        }
        let _ =
            writeln!(s, "\nevery stage of the run (wall or device time, s): open + plan {:.3}", self.prepare_seconds);
        for st in self.all_stages.stages.iter() {
            let _ = writeln!(s, "  {:<20} {:>8.4}  {:>10.1} MB", st.name, st.seconds, st.bytes as f64 / 1e6);
        }
    }
}

/// The velocity scan against one ingest and its migrations.
fn write_scan(s: &mut String, scan: &ScanReport) {
    let n = scan.scales.len();
    let _ = writeln!(
        s,
        "\nvelocity scan of {n} (× {:.3} .. × {:.3}), products in memory: {:.3} s; one migration {:.3} s, of \
         which ingest {:.3} s",
        scan.scales[0],
        scan.scales[n - 1],
        scan.scan_seconds,
        scan.single_seconds,
        scan.ingest_seconds
    );
    let _ = writeln!(
        s,
        "  scan / (one ingest + {n} migrations = {:.3} s) = {:.2}; {:.2} × faster than {n} separate runs",
        scan.ingest_seconds + n as f64 * (scan.single_seconds - scan.ingest_seconds),
        scan.ratio_to_one_ingest,
        scan.speedup_over_separate
    );
    for st in scan.stages.stages.iter() {
        let _ = writeln!(s, "  scan {:<15} {:>8.4}  {:>10.1} MB", st.name, st.seconds, st.bytes as f64 / 1e6);
    }
}

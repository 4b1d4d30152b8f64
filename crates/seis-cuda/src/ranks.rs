//! A rank of a run over several GPUs, one process per GPU: the CUDA engine of its GPU and an NCCL
//! communicator with the other ranks. Which rank this process is, and how the ranks meet and tell each
//! other of a failure, is the application's to say ([`Peers`]): the engine reads no environment.
//!
//! Each rank migrates its share of the frequencies ([`seis_imaging::bands`]) in as many bands as its GPU
//! needs. The input is read once in the whole run: each rank reads a slab of the inlines, transforms it in
//! time on its GPU and sends every other rank that rank's frequencies of it (see `run/ingest.rs`). Once
//! every band is in, rank 0 receives the other ranks' products into its device memory, sums them there in
//! rank order (so that the result depends on the number of ranks only through float rounding, and is the
//! same from run to run), and hands the sums over as one GPU's run hands its products over (through pinned
//! buffers, see `run/handover.rs`) to the job, which writes them and the manifest; the ranks send rank 0 the
//! record of their part for the manifest.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::device::DeviceBuffer;
use super::engine::{GpuEngine, RankPart};
use super::launch::{grid_1d, Arg, Launcher};
use super::nccl::{Comm, Nccl, Watch};
pub use super::peers::Peers;
use super::run::Exchange;
use seis_core::cancel::{CancelToken, Stop};
use seis_core::context::RunContext;
use seis_core::error::{Error, Result};
use seis_core::stats::{Distribution, PartRecord, Stages};
use seis_imaging::bands::Share;
use seis_imaging::compute::ComputeConfig;
use seis_imaging::parts::part_record;
use seis_imaging::{BackendChoice, Engine, ImageRequest, Migration, Plan, ProductSink};

pub struct RankEngine {
    gpu: GpuEngine,
    comm: Comm,
    peers: Arc<dyn Peers>,
    detail: String,
    /// How long this rank waited for rank 0's unique id, until the first run records the communicator's
    /// set-up (the id and the joining) as a stage.
    id_wait: Option<Duration>,
}

impl RankEngine {
    /// This rank's engine: NCCL loaded, the rank's GPU opened, and the communicator of every rank being
    /// joined (within `compute.rank_timeout_s`): NCCL sets it up while the engine prepares for the job and
    /// reads its slab, and the first exchange waits for it.
    pub fn start(compute: &ComputeConfig, peers: Arc<dyn Peers>) -> Result<(Box<dyn Engine + Send>, BackendChoice)> {
        let t = Instant::now();
        // Loading NCCL (a large library) and opening the GPU take about as long as each other: side by side.
        let loading = std::thread::spawn(Nccl::load);
        let (rank, world) = (peers.rank(), peers.world());
        let opened = Self::open_gpu(compute, &*peers);
        // NCCL's error first: without it nothing else is worth reporting.
        let nccl = loading.join().map_err(|_| Error::Internal("loading NCCL panicked".into()))??;
        let (gpu, choice, ordinal) = opened?;
        gpu.launcher().gpu.ctx.bind_to_thread().map_err(|e| Error::Gpu(format!("binding the CUDA context: {e:?}")))?;
        let mut gpu = gpu;
        gpu.set_ranks(world);
        let timeout = Duration::from_secs_f64(compute.rank_timeout_s);
        let cancel = CancelToken::process().clone();
        tracing::info!(
            "rank {rank} of {world} ({}) on device {ordinal}: waiting for the other ranks (at most {} s)",
            peers.launcher(),
            compute.rank_timeout_s
        );
        let met = Instant::now();
        let id = peers.share_id(timeout, &cancel, &|| nccl.unique_id())?;
        let watch = Watch { cancel, peers: peers.clone() };
        let id_wait = met.elapsed();
        let comm = Comm::new(nccl, id, rank, world, timeout, watch)?;
        tracing::debug!(
            "rank {rank} of {world} had the unique id in {:.3} s ({:.3} s since it started); joining the others",
            id_wait.as_secs_f64(),
            t.elapsed().as_secs_f64()
        );
        let detail = format!(
            "rank {rank} of {world} ({}; NCCL {}.{}.{} from {}), {}",
            peers.launcher(),
            nccl.version.0,
            nccl.version.1,
            nccl.version.2,
            nccl.library,
            choice.detail
        );
        let choice = BackendChoice { kind: "cuda", detail: detail.clone() };
        Ok((Box::new(RankEngine { gpu, comm, peers, detail, id_wait: Some(id_wait) }), choice))
    }

    /// The engine of this rank's GPU, and its ordinal.
    fn open_gpu(compute: &ComputeConfig, peers: &dyn Peers) -> Result<(GpuEngine, BackendChoice, usize)> {
        let visible = super::runtime::device_count().map_err(|e| Error::Backend(e.0))?;
        let ordinal = peers.device(visible)?;
        if compute.device != 0 {
            tracing::warn!(
                "compute.device = {} is not used: rank {} runs on device {ordinal}",
                compute.device,
                peers.rank()
            );
        }
        let mut sub = compute.clone();
        sub.device = ordinal;
        let (gpu, choice) = super::engine_on(&sub)?;
        Ok((gpu, choice, ordinal))
    }

    /// This rank's share of `scan` (one migration, or the members of a velocity scan).
    fn migrate_rank(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        let started = Instant::now();
        let (rank, world) = (self.peers.rank(), self.peers.world());
        let share = Share::new(rank, world).expect("a rank is below the number of ranks");
        let m = scan.first().ok_or_else(|| Error::Internal("a run of no migration".into()))?;
        let plans: Vec<Plan> = scan
            .iter()
            .map(|m| {
                let mut plan = m.plan.clone();
                plan.restrict_to(share);
                plan
            })
            .collect();
        let plan = &plans[0];
        if rank == 0 && plan.method == seis_imaging::Method::Stolt {
            tracing::info!(
                "Stolt needs every frequency of a wavenumber at once: rank 0 migrates them all, the other ranks only \
                 read their part of the input"
            );
        }
        let shares = (0..world).map(|r| m.plan.share_frequencies(Share { index: r, count: world })).collect();
        let exchange = Exchange { comm: &self.comm, slabs: Exchange::slabs_for(plan.input.shape()[0], world), shares };
        let comm = &self.comm;
        let combine =
            |dev: &Launcher, products: &[(u64, usize)], ctx: &mut RunContext| sum_on_root(comm, dev, products, ctx);
        // Another rank's failure stops this one between its steps too, not only where it waits on them.
        let watching = Arc::new(AtomicBool::new(true));
        let watcher = {
            let (watching, stop, peers) = (watching.clone(), ctx.cancel.clone(), self.peers.clone());
            std::thread::spawn(move || {
                while watching.load(Ordering::Relaxed) {
                    if peers.failure().is_some() {
                        stop.cancel(Stop::Requested);
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            })
        };
        let migrations: Vec<Migration> = scan.iter().zip(&plans).map(|(m, plan)| Migration { plan, ..*m }).collect();
        let part = RankPart { exchange, combine: &combine };
        let result = self.gpu.migrate_share(&migrations, ctx, sinks, Some(&part));
        watching.store(false, Ordering::Relaxed);
        let _ = watcher.join();
        match result {
            Err(Error::Interrupted(Stop::Requested)) => {
                return Err(self.peers.failure().unwrap_or(Error::Interrupted(Stop::Requested)))
            }
            other => other?,
        }
        // The communicator's set-up, which overlapped this first run's ingest.
        if let (Some(id_wait), Some(joined)) = (self.id_wait, self.comm.joined_after()) {
            self.id_wait = None;
            ctx.stats.add("nccl-setup", id_wait + joined, 0);
        }
        // The record of this rank's part, for rank 0's manifest.
        // Its migration: from the ingest to its products, the waits on the other ranks' reads included,
        // not the sum on rank 0.
        let seconds = ctx.stats.seconds("ingest+compute").unwrap_or_else(|| started.elapsed().as_secs_f64());
        let record = part_record(rank, plan, &self.detail, seconds, &ctx.stats);
        let bytes =
            serde_json::to_vec(&record).map_err(|e| Error::Internal(format!("encoding a rank's record: {e}")))?;
        let dev = self.gpu.launcher();
        if let Some(records) = self.comm.gather_bytes(&dev.gpu, &bytes, &dev.compute)? {
            let parts = records
                .iter()
                .enumerate()
                .map(|(r, b)| {
                    serde_json::from_slice::<PartRecord>(b)
                        .map_err(|e| Error::Backend(format!("rank {r} sent a record that cannot be read: {e}")))
                })
                .collect::<Result<Vec<_>>>()?;
            ctx.stats.distributed = Some(Distribution::new("ranks", parts));
        }
        Ok(())
    }
}

/// Every rank's `products` (device addresses and lengths of f32 boxes, alike on every rank) summed in rank
/// order into rank 0's: whether this rank holds the sums (rank 0), to hand over. The wait for the slowest
/// rank is the stage `rank-wait`, the transfers and the sum `rank-sum`.
fn sum_on_root(comm: &Comm, dev: &Launcher, products: &[(u64, usize)], ctx: &mut RunContext) -> Result<bool> {
    let (rank, world) = (comm.rank(), comm.world());
    let t = Instant::now();
    let token = DeviceBuffer::<u32>::from_slice(&dev.gpu, &vec![0; world])?;
    let (sends, recvs): (Vec<_>, Vec<_>) = match rank {
        0 => (Vec::new(), (1..world).map(|p| (p, token.ptr_at(p), 4)).collect()),
        _ => (vec![(0, token.ptr(), 4)], Vec::new()),
    };
    comm.exchange(&dev.gpu, &sends, &recvs, &dev.compute)?;
    ctx.stats.add("rank-wait", t.elapsed(), 0);

    let t = Instant::now();
    let total: usize = products.iter().map(|p| p.1).sum();
    let bytes = total as u64 * 4 * (world as u64 - 1);
    if rank != 0 {
        let sends: Vec<_> = products.iter().map(|&(ptr, n)| (0, ptr, n * 4)).collect();
        comm.exchange(&dev.gpu, &sends, &[], &dev.compute)?;
        ctx.stats.add("rank-sum", t.elapsed(), bytes);
        return Ok(false);
    }
    let mut steps = Stages::default();
    // The other ranks' boxes side by side, rank after rank: box k of rank p at (p − 1) · total + offset(k).
    let inbox: DeviceBuffer<f32> = dev.gpu.alloc((world - 1).max(1) * total.max(1))?;
    steps.lap("allocate");
    let mut recvs = Vec::new();
    for p in 1..world {
        let mut at = (p - 1) * total;
        for &(_, n) in products {
            recvs.push((p, inbox.ptr_at(at), n * 4));
            at += n;
        }
    }
    comm.exchange(&dev.gpu, &[], &recvs, &dev.compute)?;
    steps.lap("receive");
    let mut at = 0;
    for &(ptr, n) in products {
        let args = [
            Arg::Ptr(ptr),
            Arg::Ptr(inbox.ptr_at(at)),
            Arg::U64(n as u64),
            Arg::I32(world as i32 - 1),
            Arg::U64(total as u64),
        ];
        dev.launch(&dev.compute, "sum_ranks", grid_1d(n, 256), &args)?;
        at += n;
    }
    dev.sync(&dev.compute)?;
    steps.lap("sum");
    steps.log_trace("the ranks' products summed");
    ctx.stats.add("rank-sum", t.elapsed(), bytes);
    Ok(true)
}

impl Engine for RankEngine {
    fn name(&self) -> &str {
        "cuda"
    }

    fn prepare(&mut self, plan: &Plan, request: &ImageRequest, members: usize) -> Result<()> {
        let mut plan = plan.clone();
        plan.restrict_to(Share { index: self.peers.rank(), count: self.peers.world() });
        self.gpu.prepare(&plan, request, members)
    }

    fn release_last_run(&mut self) {
        self.gpu.release_last_run();
    }

    fn migrate_scan(&mut self, scan: &[Migration], ctx: &mut RunContext, sinks: &[&dyn ProductSink]) -> Result<()> {
        let result = self.migrate_rank(scan, ctx, sinks);
        match &result {
            // Its failure ends every rank: a note for them, and the communicator is aborted so that no
            // call of this rank waits any more.
            Err(e) => {
                if !matches!(e, Error::Peer { .. }) {
                    self.peers.tell_failure(e);
                }
                self.comm.abort();
            }
            Ok(()) if self.peers.rank() == 0 => self.peers.finished(),
            Ok(()) => self.peers.leaving(),
        }
        result
    }
}

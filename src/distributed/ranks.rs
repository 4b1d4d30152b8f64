//! The ranks of a run over several GPUs: which rank this process is (from its launcher's environment), how
//! the ranks meet (NCCL's unique id, passed through a file next to the outputs unless `NCCL_COMM_ID` names
//! rank 0's address), and how a rank that fails tells the others.
//!
//! The rendezvous folder `OUTPUT/.seisimage-ranks-RUN` (RUN: the launcher's id of this run, so that two
//! runs never meet by mistake) holds the unique id that rank 0 writes, and a note from any rank that
//! fails (`failed-rank-R`: its exit code and its error). Every rank looks for such notes while it waits on
//! the others and while it migrates, and stops when it finds one; rank 0 removes the folder when the run
//! ends well. It must be on a file system every rank sees (the output folder of a cluster job is).
//!
//! The output folder may be shared with other users, and what the rendezvous folder holds decides where
//! the ranks connect: it is made private to the user (0700), and a folder under its name that is not (a
//! link, another user's, one others may write in) is refused rather than used. It is opened without
//! following a link and checked as opened, and its files are written and read relative to the open folder
//! (so that nothing is written into whatever a link there leads to); they are read only if they are
//! regular files, within their sizes. The folder of a run that failed is removed by the next run that
//! locks the output folder ([`remove_failed`]), and by `seisimage run --gpus` once its ranks have ended.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::alive::read_note;
use crate::cancel::CancelToken;
use crate::error::{Error, IoContext, Location, Result};
use crate::io::output::Folder;

/// Largest number of ranks a run may have.
pub const MAX_RANKS: usize = 4096;

/// This process's place in a run over several processes, one per GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankEnv {
    pub rank: usize,
    pub world: usize,
    /// The rank's index among the ranks of its node: its GPU when the node's GPUs are all visible.
    pub local_rank: usize,
    /// Which launcher's variables said so.
    pub launcher: &'static str,
    /// The launcher's id of this run, the same in every rank (see `run_id`).
    pub run_id: Option<String>,
}

/// The variables of each launcher: rank, number of ranks, rank within the node. Checked in this order:
/// explicit variables first (torchrun's, and `seisimage run --gpus`), then MPI's, then Slurm's (an `mpirun`
/// inside a Slurm allocation inherits the allocation's variables, which do not describe its ranks).
const LAUNCHERS: [(&str, [&str; 3]); 4] = [
    ("RANK/WORLD_SIZE", ["RANK", "WORLD_SIZE", "LOCAL_RANK"]),
    ("Open MPI", ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"]),
    ("MPICH", ["PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"]),
    // SLURM_STEP_NUM_TASKS, not SLURM_NTASKS: only `srun` sets it, so a batch script's own process (which
    // sees the allocation's task count) is not taken for rank 0 of many.
    ("Slurm", ["SLURM_PROCID", "SLURM_STEP_NUM_TASKS", "SLURM_LOCALID"]),
];

impl RankEnv {
    /// The rank of this process, or `None` when it runs alone (no launcher, or one rank).
    pub fn from_env() -> Result<Option<RankEnv>> {
        RankEnv::from_vars(|k| std::env::var(k).ok())
    }

    /// [`RankEnv::from_env`] on any source of variables.
    pub fn from_vars(get: impl Fn(&str) -> Option<String>) -> Result<Option<RankEnv>> {
        for (launcher, [rank, world, local]) in LAUNCHERS {
            let (Some(r), Some(w)) = (get(rank), get(world)) else { continue };
            let number = |name: &str, value: &str| {
                value.trim().parse::<usize>().map_err(|_| {
                    Error::config("the environment", Location::File, format!("{name}={value:?} is not a rank number"))
                })
            };
            let (r, w) = (number(rank, &r)?, number(world, &w)?);
            if w == 0 || w > MAX_RANKS || r >= w {
                let message = format!("{rank}={r} and {world}={w} do not describe a rank of 1 to {MAX_RANKS} ranks");
                return Err(Error::config("the environment", Location::File, message));
            }
            if w == 1 {
                return Ok(None);
            }
            // Without a local rank, the ranks are taken to share one node.
            let local = match get(local) {
                Some(v) => number(local, &v)?,
                None => r,
            };
            return Ok(Some(RankEnv { rank: r, world: w, local_rank: local, launcher, run_id: run_id(&get) }));
        }
        Ok(None)
    }

    /// The CUDA device of this rank among `visible` devices: the only one, or the one of its local rank.
    pub fn device(&self, visible: usize) -> Result<usize> {
        match visible {
            0 => Err(Error::Backend("no CUDA device is visible to this rank".into())),
            1 => Ok(0),
            n if self.local_rank < n => Ok(self.local_rank),
            n => Err(Error::Backend(format!(
                "rank {} is local rank {} of its node, which has only {n} visible CUDA devices: start one rank per \
                 GPU",
                self.rank, self.local_rank
            ))),
        }
    }

    /// The rendezvous folder of this run in `output_dir` (see the module comment).
    pub fn rendezvous_dir(&self, output_dir: &Path) -> Result<PathBuf> {
        let id = self.run_id.as_ref().ok_or_else(|| {
            Error::Backend(
                "the ranks of this run cannot be told from another run's: no launcher's job id was found (Slurm, \
                 Open MPI, MPICH, torchrun set one); set SEISIMAGE_RUN_ID to the same value in every rank"
                    .into(),
            )
        })?;
        Ok(rendezvous_path(output_dir, id))
    }
}

/// A rank's side of the rendezvous folder: how the rank engine meets the other ranks of its run.
pub struct Rendezvous {
    env: RankEnv,
    dir: PathBuf,
}

impl Rendezvous {
    /// The rendezvous of rank `env` in the output folder `output_dir`.
    pub fn new(env: RankEnv, output_dir: &Path) -> Result<Rendezvous> {
        let dir = env.rendezvous_dir(output_dir)?;
        Ok(Rendezvous { env, dir })
    }
}

impl crate::gpu::ranks::Peers for Rendezvous {
    fn rank(&self) -> usize {
        self.env.rank
    }

    fn world(&self) -> usize {
        self.env.world
    }

    fn launcher(&self) -> &str {
        self.env.launcher
    }

    fn device(&self, visible: usize) -> Result<usize> {
        self.env.device(visible)
    }

    fn share_id(
        &self,
        timeout: Duration,
        cancel: &CancelToken,
        make: &dyn Fn() -> Result<[u8; 128]>,
    ) -> Result<[u8; 128]> {
        super::alive::note_process(&self.dir, self.env.rank);
        share_id(&self.env, &self.dir, timeout, cancel, make)
    }

    fn failure(&self) -> Option<Error> {
        peer_failure(&self.dir, self.env.rank)
    }

    fn leaving(&self) {
        if let Ok(folder) = Folder::open_no_link(&self.dir) {
            super::alive::leave(&folder, self.env.rank);
        }
    }

    fn tell_failure(&self, error: &Error) {
        note_failure(&self.dir, self.env.rank, error)
    }

    fn finished(&self) {
        clear(&self.dir)
    }
}

/// How many ranks of a run share this host, as its launcher says: `LOCAL_WORLD_SIZE` (`run --gpus`,
/// torchrun), `OMPI_COMM_WORLD_LOCAL_SIZE` (Open MPI), `MPI_LOCALNRANKS` (MPICH); 1 when none does. The
/// ranks of a host share its cores (see `threads::start_global_pool`).
pub fn ranks_on_this_host() -> usize {
    ["LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|name| std::env::var(name).ok()?.trim().parse::<usize>().ok().filter(|&n| n > 0))
        .unwrap_or(1)
}

/// The rendezvous folder of run `id` in `output_dir`.
pub fn rendezvous_path(output_dir: &Path, id: &str) -> PathBuf {
    output_dir.join(format!("{RENDEZVOUS_PREFIX}{id}"))
}

/// The start of a rendezvous folder's name; the run's id follows.
const RENDEZVOUS_PREFIX: &str = ".seisimage-ranks-";
/// The start of a failure note's name; the rank follows.
const NOTE_PREFIX: &str = "failed-rank-";

/// The run's id, the same in every rank: `SEISIMAGE_RUN_ID` (set by `seisimage run --gpus`), else the
/// launcher's (Slurm job and step, Open MPI or PMIx job, torchrun's run), else `NCCL_COMM_ID`; letters,
/// digits, `.`, `_` and `-` only, at most 64 of them.
fn run_id(get: &impl Fn(&str) -> Option<String>) -> Option<String> {
    let slurm = get("SLURM_JOB_ID").map(|j| match get("SLURM_STEP_ID") {
        Some(s) => format!("{j}.{s}"),
        None => j,
    });
    let raw = get("SEISIMAGE_RUN_ID")
        .or(slurm)
        .or_else(|| get("OMPI_MCA_ess_base_jobid"))
        .or_else(|| get("PMIX_NAMESPACE"))
        .or_else(|| get("TORCHELASTIC_RUN_ID"))
        .or_else(|| get("NCCL_COMM_ID"))?;
    let id: String =
        raw.chars().map(|c| if c.is_ascii_alphanumeric() || "._-".contains(c) { c } else { '_' }).take(64).collect();
    (!id.is_empty()).then_some(id)
}

/// The first bytes of the unique-id file.
const ID_MAGIC: &[u8] = b"seisimage-nccl-id/1\n";
const ID_FILE: &str = "nccl-id";

/// NCCL's unique id for this run, the same in every rank: with `NCCL_COMM_ID` set every rank makes it
/// (`make`: it is rank 0's address); else rank 0 makes it and writes it into `dir`, and the other ranks
/// wait for it there until `timeout`, or until `cancel` stops them.
pub fn share_id(
    env: &RankEnv,
    dir: &Path,
    timeout: Duration,
    cancel: &CancelToken,
    make: impl FnOnce() -> Result<[u8; 128]>,
) -> Result<[u8; 128]> {
    if std::env::var_os("NCCL_COMM_ID").is_some() {
        return make();
    }
    let path = dir.join(ID_FILE);
    if env.rank == 0 {
        let id = make()?;
        let folder = Arc::new(crate::io::output::Folder::private(dir)?);
        crate::io::output::write_atomic_in(&folder, ID_FILE, &[ID_MAGIC, &id].concat())?;
        return Ok(id);
    }
    let deadline = Instant::now() + timeout;
    loop {
        cancel.check()?;
        if let Some(id) = read_id(dir)? {
            return Ok(id);
        }
        if let Some(e) = peer_failure(dir, env.rank) {
            return Err(e);
        }
        if Instant::now() >= deadline {
            return Err(Error::Backend(format!(
                "rank {}: rank 0 did not publish the run's NCCL id in {} within {} s (compute.rank_timeout_s): is \
                 rank 0 running, with the same job and output folder?",
                env.rank,
                path.display(),
                timeout.as_secs_f64()
            )));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The id in the rendezvous folder `dir`, `None` while the file is not there; an error when it is not an
/// id file, or when the folder is not private to this user (anyone could have put it there), or a link.
fn read_id(dir: &Path) -> Result<Option<[u8; 128]>> {
    let path = dir.join(ID_FILE);
    let len = (ID_MAGIC.len() + 128) as u64;
    let not_found = |e: &std::io::Error| e.kind() == std::io::ErrorKind::NotFound;
    let folder = match Folder::open_no_link(dir) {
        Err(e) if not_found(&e) => return Ok(None),
        opened => opened.at(dir)?,
    };
    let bytes = match read_note(&folder, ID_FILE, len) {
        Err(e) if not_found(&e) => return Ok(None),
        read => read.at(&path)?,
    };
    if let Some(why) = folder.not_private() {
        let message = format!("{why}: the NCCL id in it is not trusted; remove the folder and run again");
        return Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::PermissionDenied, message)));
    }
    match bytes.strip_prefix(ID_MAGIC) {
        Some(id) if id.len() == 128 => Ok(Some(id.try_into().expect("128 bytes"))),
        _ => Err(Error::format(path, Location::File, "not a seisimage NCCL id file")),
    }
}

/// Tell the other ranks that this one failed with `error`: a note in the rendezvous folder.
pub fn note_failure(dir: &Path, rank: usize, error: &Error) {
    let note = format!("{}\n{error}", error.exit_code());
    let written = crate::io::output::Folder::private(dir).and_then(|folder| {
        crate::io::output::write_atomic_in(&Arc::new(folder), &format!("{NOTE_PREFIX}{rank}"), note.as_bytes())
    });
    if let Err(e) = written {
        tracing::warn!("could not tell the other ranks that this one failed: {e}");
    }
}

/// Longest failure note read (the rest of a longer one is cut off).
const MAX_NOTE: usize = 4096;

/// The failure of another rank than `me` noted in `dir`, if any, as this rank's error (a folder that is
/// not private to this user holds none that counts).
pub fn peer_failure(dir: &Path, me: usize) -> Option<Error> {
    let folder = Folder::open_no_link(dir).ok()?;
    if folder.not_private().is_some() {
        return None;
    }
    let mut failed: Vec<(usize, String)> = notes(&folder).into_iter().filter(|(rank, _)| *rank != me).collect();
    failed.sort();
    let Some((rank, name)) = failed.into_iter().next() else {
        return super::alive::vanished_peer(&folder, me);
    };
    let text = read_note(&folder, &name, MAX_NOTE as u64).unwrap_or_default();
    let text = String::from_utf8_lossy(&text);
    let (code, message) = text.split_once('\n').unwrap_or(("1", &text));
    Some(Error::Peer { rank, code: code.trim().parse().unwrap_or(1), message: message.trim().to_string() })
}

/// The failure notes in a rendezvous folder: each rank that left one, and the note's name.
fn notes(folder: &Folder) -> Vec<(usize, String)> {
    let names = folder.names().unwrap_or_default();
    names.into_iter().filter_map(|n| Some((n.strip_prefix(NOTE_PREFIX)?.parse::<usize>().ok()?, n))).collect()
}

/// The run ended well, or (`seisimage run --gpus`) every rank has ended: the rendezvous folder goes.
pub fn clear(dir: &Path) {
    let removed = match (dir.parent(), dir.file_name().and_then(|n| n.to_str())) {
        (Some(parent), Some(name)) => Folder::open(parent).and_then(|output| remove_rendezvous(&output, name)),
        _ => Ok(()),
    };
    if let Err(e) = removed {
        if e.kind() != std::io::ErrorKind::NotFound {
            tracing::warn!("could not remove {}: {e}", dir.display());
        }
    }
}

/// Remove the rendezvous folder `name` of the output folder `output`: only a folder of this user's (not a
/// link, which is left), and only the files in it, which are the ranks' (a folder inside is left, and the
/// folder with it).
fn remove_rendezvous(output: &Folder, name: &str) -> std::io::Result<()> {
    let folder = output.subfolder(name)?;
    if folder.not_private().is_some() {
        return Ok(());
    }
    for entry in folder.names()? {
        let _ = folder.remove(&entry);
    }
    output.remove_dir(name)
}

/// Remove the rendezvous folders that runs which failed left in the output folder `output` (each holds a
/// rank's failure note), but the one of run `own`: called by a run that holds the output folder's lock, so
/// no other run is past its rendezvous there. A folder without a note (a run that is still meeting) stays.
pub fn remove_failed(output: &Folder, own: Option<&str>) {
    let Ok(names) = output.names() else { return };
    for name in names.iter().filter(|n| n.starts_with(RENDEZVOUS_PREFIX)) {
        if own.is_some_and(|id| name.strip_prefix(RENDEZVOUS_PREFIX) == Some(id)) {
            continue;
        }
        let failed = output.subfolder(name).is_ok_and(|f| f.not_private().is_none() && !notes(&f).is_empty());
        if failed && remove_rendezvous(output, name).is_ok() {
            tracing::info!("removed {}, left by a run over several GPUs that failed", output.join(name).display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn env(vars: &[(&str, &str)]) -> Result<Option<RankEnv>> {
        let map: HashMap<String, String> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        RankEnv::from_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn each_launcher_names_the_rank_and_mpi_wins_over_the_allocation() {
        assert_eq!(env(&[]).unwrap(), None);
        let slurm = env(&[
            ("SLURM_PROCID", "5"),
            ("SLURM_STEP_NUM_TASKS", "8"),
            ("SLURM_LOCALID", "1"),
            ("SLURM_JOB_ID", "77"),
            ("SLURM_STEP_ID", "0"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((slurm.rank, slurm.world, slurm.local_rank, slurm.launcher), (5, 8, 1, "Slurm"));
        assert_eq!(slurm.run_id.as_deref(), Some("77.0"));
        // a batch script's own process: the allocation's task count, but no step
        assert_eq!(env(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "8")]).unwrap(), None);
        // mpirun inside an allocation: Open MPI's variables describe the ranks
        let mpi = env(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_STEP_NUM_TASKS", "1"),
            ("OMPI_COMM_WORLD_RANK", "3"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_RANK", "3"),
            ("OMPI_MCA_ess_base_jobid", "123:4"),
        ])
        .unwrap()
        .unwrap();
        assert_eq!((mpi.rank, mpi.world, mpi.local_rank, mpi.launcher), (3, 4, 3, "Open MPI"));
        assert_eq!(mpi.run_id.as_deref(), Some("123_4"));
        let mpich = env(&[("PMI_RANK", "1"), ("PMI_SIZE", "2"), ("MPI_LOCALRANKID", "0")]).unwrap().unwrap();
        assert_eq!((mpich.rank, mpich.world, mpich.local_rank, mpich.run_id), (1, 2, 0, None));
        let torch = env(&[("RANK", "2"), ("WORLD_SIZE", "4"), ("SEISIMAGE_RUN_ID", "x y")]).unwrap().unwrap();
        assert_eq!((torch.local_rank, torch.run_id.as_deref()), (2, Some("x_y")), "no local rank: one node");
        // one rank is no distributed run
        assert_eq!(env(&[("RANK", "0"), ("WORLD_SIZE", "1")]).unwrap(), None);
    }

    #[test]
    fn nonsense_rank_variables_are_refused_with_their_names() {
        for vars in [
            vec![("RANK", "4"), ("WORLD_SIZE", "4")],
            vec![("RANK", "a"), ("WORLD_SIZE", "4")],
            vec![("RANK", "0"), ("WORLD_SIZE", "0")],
            vec![("RANK", "0"), ("WORLD_SIZE", "99999")],
            vec![("RANK", "0"), ("WORLD_SIZE", "2"), ("LOCAL_RANK", "-1")],
        ] {
            let e = env(&vars).unwrap_err();
            assert!(e.to_string().contains("RANK") || e.to_string().contains("LOCAL_RANK"), "{e}");
            assert_eq!(e.exit_code(), 2);
        }
    }

    #[test]
    fn a_rank_takes_the_only_gpu_or_its_local_one() {
        let r = RankEnv { rank: 5, world: 8, local_rank: 1, launcher: "Slurm", run_id: None };
        assert_eq!((r.device(1).unwrap(), r.device(4).unwrap()), (0, 1));
        assert!(r.device(0).is_err());
        let far = RankEnv { local_rank: 5, ..r.clone() };
        assert!(far.device(4).unwrap_err().to_string().contains("only 4 visible"));
        let e = r.rendezvous_dir(Path::new("/out")).unwrap_err().to_string();
        assert!(e.contains("SEISIMAGE_RUN_ID"), "{e}");
        let named = RankEnv { run_id: Some("77.0".into()), ..r };
        assert_eq!(named.rendezvous_dir(Path::new("/out")).unwrap(), Path::new("/out/.seisimage-ranks-77.0"));
    }

    /// Rank 0 publishes the id; the others find it, or give up at their deadline, or when stopped.
    #[test]
    fn the_unique_id_goes_from_rank_0_to_the_others_through_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join(".seisimage-ranks-t");
        let rank = |r| RankEnv { rank: r, world: 3, local_rank: r, launcher: "test", run_id: Some("t".into()) };
        let cancel = CancelToken::new();
        let waiting: Vec<_> = (1..3)
            .map(|r| {
                let (at, cancel) = (at.clone(), cancel.clone());
                std::thread::spawn(move || {
                    share_id(&rank(r), &at, Duration::from_secs(20), &cancel, || panic!("not rank 0"))
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(100));
        let id = [7u8; 128];
        assert_eq!(share_id(&rank(0), &at, Duration::from_secs(1), &cancel, || Ok(id)).unwrap(), id);
        for w in waiting {
            assert_eq!(w.join().unwrap().unwrap(), id);
        }
        // Without rank 0: a clear error at the deadline, or the stop.
        let lonely = dir.path().join(".seisimage-ranks-u");
        let e = share_id(&rank(1), &lonely, Duration::from_millis(200), &cancel, || panic!()).unwrap_err();
        assert!(e.to_string().contains("did not publish") && e.to_string().contains("rank_timeout_s"), "{e}");
        cancel.cancel(crate::cancel::Stop::Sigterm);
        let e = share_id(&rank(1), &lonely, Duration::from_secs(20), &cancel, || panic!()).unwrap_err();
        assert_eq!(e.exit_code(), 143);
        // A file that is not an id is refused, not read as one.
        std::fs::write(at.join(ID_FILE), b"garbage").unwrap();
        let e = share_id(&rank(2), &at, Duration::from_secs(1), &CancelToken::new(), || panic!()).unwrap_err();
        assert!(e.to_string().contains("not a seisimage NCCL id file"), "{e}");
    }

    /// The rendezvous folder lies in an output folder others may write in: a folder under its name that
    /// is not private to this user is neither used to publish the id nor trusted for one or for notes.
    #[test]
    fn a_rendezvous_folder_others_can_write_is_not_trusted() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join(".seisimage-ranks-t");
        let rank = |r| RankEnv { rank: r, world: 2, local_rank: r, launcher: "test", run_id: Some("t".into()) };
        let cancel = CancelToken::new();
        // planted by someone else, open to all, with an id and a note in it
        std::fs::create_dir(&at).unwrap();
        std::fs::write(at.join(ID_FILE), [ID_MAGIC, &[9u8; 128]].concat()).unwrap();
        std::fs::write(at.join("failed-rank-0"), "1\nplanted").unwrap();
        std::fs::set_permissions(&at, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = share_id(&rank(1), &at, Duration::from_secs(1), &cancel, || panic!("not rank 0")).unwrap_err();
        assert!(e.to_string().contains("writable by others") && e.to_string().contains("not trusted"), "{e}");
        assert!(peer_failure(&at, 1).is_none(), "a note in a folder anyone can write is no rank's");
        let e = share_id(&rank(0), &at, Duration::from_secs(1), &cancel, || Ok([7u8; 128])).unwrap_err();
        assert!(e.to_string().contains("writable by others"), "{e}");
        // a link in its place is not followed into another folder
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir(&elsewhere).unwrap();
        std::fs::set_permissions(&elsewhere, std::fs::Permissions::from_mode(0o777)).unwrap();
        let link = dir.path().join(".seisimage-ranks-u");
        std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
        assert!(share_id(&rank(0), &link, Duration::from_secs(1), &cancel, || Ok([7u8; 128])).is_err());
        assert!(!elsewhere.join(ID_FILE).exists());
    }

    /// A link at the rendezvous folder's name, even to a private folder of this user's, is never followed:
    /// nothing is written into its target, and nothing there is read as an id or a note.
    #[test]
    fn a_link_at_the_rendezvous_folder_is_never_followed() {
        use std::os::unix::fs::DirBuilderExt;
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::DirBuilder::new().mode(0o700).create(&victim).unwrap();
        let planted_id = [ID_MAGIC, &[9u8; 128]].concat();
        std::fs::write(victim.join(ID_FILE), &planted_id).unwrap();
        std::fs::write(victim.join("failed-rank-0"), "1\nplanted").unwrap();
        let link = dir.path().join(".seisimage-ranks-t");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let rank = |r| RankEnv { rank: r, world: 2, local_rank: r, launcher: "test", run_id: Some("t".into()) };
        let cancel = CancelToken::new();

        note_failure(&link, 1, &Error::Backend("no GPU".into()));
        let e = share_id(&rank(0), &link, Duration::from_secs(1), &cancel, || Ok([7u8; 128])).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        let e = share_id(&rank(1), &link, Duration::from_secs(1), &cancel, || panic!("not rank 0")).unwrap_err();
        assert!(e.to_string().contains("symbolic link"), "{e}");
        assert!(peer_failure(&link, 1).is_none(), "a note behind a link is no rank's");
        let mut names: Vec<_> = std::fs::read_dir(&victim).unwrap().map(|e| e.unwrap().file_name()).collect();
        names.sort();
        assert_eq!(names, ["failed-rank-0", ID_FILE], "nothing was written into the link's target");
        assert_eq!(std::fs::read(victim.join(ID_FILE)).unwrap(), planted_id);
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
    }

    /// The next run that locks the output folder removes the rendezvous folders of runs that failed (a
    /// note in them), but not its own, not one where ranks still meet, and not a link or what it leads to.
    #[test]
    fn the_rendezvous_folders_of_failed_runs_are_removed() {
        use std::os::unix::fs::DirBuilderExt;
        let out = tempfile::tempdir().unwrap();
        let at = |id: &str| rendezvous_path(out.path(), id);
        note_failure(&at("failed"), 1, &Error::Backend("no GPU".into()));
        note_failure(&at("own"), 1, &Error::Backend("no GPU".into()));
        let meeting = Arc::new(crate::io::output::Folder::private(&at("meeting")).unwrap());
        crate::io::output::write_atomic_in(&meeting, ID_FILE, &[ID_MAGIC, &[7u8; 128]].concat()).unwrap();
        let victim = out.path().join("victim");
        std::fs::DirBuilder::new().mode(0o700).create(&victim).unwrap();
        std::fs::write(victim.join("failed-rank-0"), "1\nplanted").unwrap();
        std::os::unix::fs::symlink(&victim, at("link")).unwrap();

        remove_failed(&Folder::open(out.path()).unwrap(), Some("own"));
        assert!(!at("failed").exists(), "the folder of a failed run is removed");
        assert!(at("own").join("failed-rank-1").exists() && at("meeting").join(ID_FILE).exists());
        assert!(std::fs::symlink_metadata(at("link")).is_ok() && victim.join("failed-rank-0").exists());
        clear(&at("link"));
        assert!(victim.join("failed-rank-0").exists(), "clearing never goes through a link");
        clear(&at("own"));
        assert!(!at("own").exists());
    }

    #[test]
    fn a_failure_note_stops_the_other_ranks_with_its_code() {
        let dir = tempfile::tempdir().unwrap();
        assert!(peer_failure(dir.path(), 0).is_none());
        note_failure(dir.path(), 2, &Error::Interrupted(crate::cancel::Stop::Sigterm));
        assert!(peer_failure(dir.path(), 2).is_none(), "a rank's own note is not another's failure");
        let e = peer_failure(dir.path(), 0).unwrap();
        assert_eq!(e.exit_code(), 143);
        assert!(e.to_string().contains("rank 2") && e.to_string().contains("SIGTERM"), "{e}");
        std::fs::write(dir.path().join("failed-rank-1"), "x".repeat(100_000)).unwrap();
        let e = peer_failure(dir.path(), 0).unwrap();
        assert!(matches!(e, Error::Peer { rank: 1, code: 1, .. }), "{e}");
        assert!(e.to_string().len() < MAX_NOTE + 200);
        clear(dir.path());
        assert!(!dir.path().exists());
    }
}

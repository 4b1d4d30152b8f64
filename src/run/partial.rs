//! The partial products of one share of a job: what `seisimage run --shard I/N` writes and
//! `seisimage reduce` sums.
//!
//! One file per share, `shard-I-of-N.partial`, in the job's output folder (or the folder `--partials`
//! names), written under a temporary name and renamed when complete:
//!
//! ```text
//! seisimage-partial/1\n          the format and its version
//! {JSON header}\n                one line: see `Header`
//! values                         f32, little-endian: every product box of the job in the job's order
//!                                (of every member of a velocity scan, member after member), each
//!                                [iline][xline][depth] (depth contiguous), as migrated (a complex-trace
//!                                attribute is taken of the sum, by `reduce`)
//! ```
//!
//! The header says which job the share belongs to (`job`: a fingerprint of the plan, the velocity, the
//! products, the members of a velocity scan and the input's identity, see [`fingerprint`]), which share it is,
//! which frequencies it migrated, the length of each box and the SHA-256 of the values, and the share's
//! record for the manifest (where and how it ran, its stages). `reduce` refuses a file whose fingerprint, share, frequencies or boxes are
//! not those the job gives, whose length is not exactly what the header and the job say, or whose values
//! do not have their checksum; it never allocates more than the job's products.

use std::fmt::Write as _;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, IoContext, Location, Result};
use crate::imaging::bands::Share;
use crate::io::output::{hex, TempOutput};
use crate::run::Prepared;
use crate::stats::PartRecord;

/// The first line of a partial file.
pub const MAGIC: &[u8] = b"seisimage-partial/1\n";
/// Longest header line read.
const MAX_HEADER: usize = 1 << 20;

/// The header line of a partial file.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Header {
    /// The job's fingerprint ([`fingerprint`]).
    pub job: String,
    /// Which share: `shard` of `shards`, counted from 1.
    pub shard: usize,
    pub shards: usize,
    /// The frequencies migrated: indices into the plan's band, first and one past the last.
    pub frequencies: [usize; 2],
    /// Values of each box, in the job's product order.
    pub boxes: Vec<usize>,
    /// SHA-256 of the values as stored (hex).
    pub values_sha256: String,
    /// Where and how the share ran, for the manifest.
    pub record: PartRecord,
}

/// The file name of `share`'s partial products.
pub fn file_name(share: Share) -> String {
    format!("shard-{}-of-{}.partial", share.index + 1, share.count)
}

/// Remove the partial products of a job's `shares` shares from `dir`, once `reduce` has summed them: each
/// by its name relative to the folder held open, so that nothing but those files can go. Returns how many
/// went; one that cannot go is a warning naming it.
pub fn remove_all(dir: &Path, shares: usize) -> std::io::Result<usize> {
    let folder = crate::io::output::Folder::open(dir)?;
    let mut removed = 0;
    for index in 0..shares {
        let name = file_name(Share { index, count: shares });
        match folder.remove(&name) {
            Ok(()) => removed += 1,
            Err(e) => tracing::warn!("could not remove {}: {e}", dir.join(&name).display()),
        }
    }
    Ok(removed)
}

/// What identifies a job across the processes of its shares: SHA-256 (hex) over the plan (sizes, band,
/// depth levels and velocities, tapers, method settings), the velocity model, the product boxes, the
/// members of a velocity scan, and the input: its geometry, size and modification time, its trace headers
/// (SEG-Y) and a sample of its traces ([`crate::volume::VolumeReader::digest_identity`]). The shares must
/// read the same file, unchanged: another file of the same geometry, or the file rewritten, is another job.
pub fn fingerprint(p: &Prepared) -> Result<String> {
    struct Hashing(Sha256);
    impl std::fmt::Write for Hashing {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.update(s.as_bytes());
            Ok(())
        }
    }
    let plan = &p.plan;
    let input = &p.job.config.input.path;
    let meta = std::fs::metadata(input).at(input)?;
    let modified = meta.modified().at(input)?;
    let mut h = Hashing(Sha256::new());
    let _ = write!(
        h,
        "{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{}|{:?}|{}|{:?}",
        plan.method.kind(),
        plan.input,
        plan.dt,
        plan.t0,
        plan.bin,
        plan.padded,
        plan.window,
        plan.band,
        plan.depth,
        plan.levels,
        plan.step_velocity,
        plan.dip_limit,
        plan.method.stolt(),
        plan.nonfinite,
        p.velocity.identity(),
        p.request,
        meta.len(),
        modified.duration_since(std::time::UNIX_EPOCH).unwrap_or_default(),
    );
    // A velocity scan: every member's velocity (and the plans differ in it only).
    for m in &p.scan {
        let _ = write!(h, "|{:?}|{}", m.step, m.velocity.identity());
    }
    p.reader.digest_identity(&mut h.0)?;
    Ok(hex(&h.0.finalize()))
}

/// Feed `values` to `f` as little-endian bytes, a block at a time.
fn le_blocks(values: &[f32], mut f: impl FnMut(&[u8]) -> std::io::Result<()>) -> std::io::Result<()> {
    let mut block = Vec::with_capacity(1 << 16);
    for chunk in values.chunks(1 << 14) {
        block.clear();
        block.extend(chunk.iter().flat_map(|v| v.to_le_bytes()));
        f(&block)?;
    }
    Ok(())
}

/// Write `boxes` as the partial products of `header`'s share into `dir` (its `values_sha256` and `boxes` are
/// filled in here). Returns the file's path.
pub fn write(dir: &Path, share: Share, mut header: Header, boxes: &[Vec<f32>]) -> Result<PathBuf> {
    let mut sha = Sha256::new();
    for b in boxes {
        le_blocks(b, |bytes| {
            sha.update(bytes);
            Ok(())
        })
        .expect("hashing does not fail");
    }
    header.values_sha256 = hex(&sha.finalize());
    header.boxes = boxes.iter().map(|b| b.len()).collect();
    let line =
        serde_json::to_string(&header).map_err(|e| Error::Internal(format!("encoding a partial header: {e}")))?;
    let path = dir.join(file_name(share));
    let (out, file) = TempOutput::create(&path)?;
    let mut w = BufWriter::with_capacity(1 << 20, file);
    w.write_all(MAGIC).at(&path)?;
    w.write_all(line.as_bytes()).at(&path)?;
    w.write_all(b"\n").at(&path)?;
    for b in boxes {
        le_blocks(b, |bytes| w.write_all(bytes)).at(&path)?;
    }
    w.into_inner().map_err(|e| e.into_error()).at(&path)?;
    out.commit()
}

/// What the job expects of share `share`'s file.
pub struct Expect<'a> {
    pub job: &'a str,
    pub share: Share,
    pub frequencies: [usize; 2],
    pub boxes: &'a [usize],
}

/// Read the partial products at `path` and check them against `expect` (see the module comment).
pub fn read(path: &Path, expect: &Expect) -> Result<(Header, Vec<Vec<f32>>)> {
    let bad = |at: u64, message: String| Error::format(path, Location::Byte(at), message);
    let mut file = crate::io::files::open_regular(path)?;
    let meta = file.metadata().at(path)?;
    refuse_unless_own(path, &meta)?;
    let len = meta.len();
    // The magic and the header line, read within their bound.
    let mut head = Vec::new();
    (&mut file).take((MAGIC.len() + MAX_HEADER) as u64).read_to_end(&mut head).at(path)?;
    if !head.starts_with(MAGIC) {
        return Err(bad(0, "not a seisimage partial-products file (it should start with seisimage-partial/1)".into()));
    }
    let body = &head[MAGIC.len()..];
    let end = body
        .iter()
        .position(|&b| b == b'\n')
        .ok_or_else(|| bad(MAGIC.len() as u64, format!("no header line within {MAX_HEADER} bytes")))?;
    let header: Header = serde_json::from_slice(&body[..end])
        .map_err(|e| bad(MAGIC.len() as u64, format!("the header cannot be read: {e}")))?;
    let values_at = (MAGIC.len() + end + 1) as u64;

    let share = expect.share;
    let mismatch = |what: String| {
        Error::Request(format!(
            "{}: {what}; it does not belong to this job's share {share} (run that share again with the same job file)",
            path.display()
        ))
    };
    if header.job != expect.job {
        return Err(mismatch("made for another job (its plan, velocity, products or input differ)".into()));
    }
    if (header.shard, header.shards) != (share.index + 1, share.count) {
        return Err(mismatch(format!("it holds share {}/{}", header.shard, header.shards)));
    }
    if header.frequencies != expect.frequencies {
        return Err(mismatch(format!(
            "it migrated frequencies {:?}, not {:?}",
            header.frequencies, expect.frequencies
        )));
    }
    if header.boxes != expect.boxes {
        return Err(mismatch(format!("its boxes hold {:?} values, the job's {:?}", header.boxes, expect.boxes)));
    }
    let values: u64 = expect.boxes.iter().map(|&n| n as u64).sum();
    if len != values_at + values * 4 {
        return Err(bad(
            len.min(values_at + values * 4),
            format!("{len} bytes, where the header and the job make {} (truncated or damaged)", values_at + values * 4),
        ));
    }
    // The lengths are the job's own, and the file holds exactly that much.
    use std::io::{Seek, SeekFrom};
    file.seek(SeekFrom::Start(values_at)).at(path)?;
    let mut reader = std::io::BufReader::with_capacity(1 << 20, file);
    let mut sha = Sha256::new();
    let mut boxes = Vec::with_capacity(expect.boxes.len());
    let mut bytes = vec![0u8; 1 << 16];
    for &n in expect.boxes {
        let mut b = Vec::with_capacity(n);
        while b.len() < n {
            let take = (n - b.len()).min(bytes.len() / 4);
            reader.read_exact(&mut bytes[..take * 4]).at(path)?;
            sha.update(&bytes[..take * 4]);
            b.extend(bytes[..take * 4].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])));
        }
        boxes.push(b);
    }
    if hex(&sha.finalize()) != header.values_sha256 {
        return Err(bad(values_at, "the values do not have the checksum the header gives (damaged)".into()));
    }
    Ok((header, boxes))
}

/// Refuse a partial file that is not the running user's: whoever owns it chose its values, and a share's
/// values carry no key that could show they were migrated (another user's file is run again or copied).
fn refuse_unless_own(path: &Path, meta: &std::fs::Metadata) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() == me {
        return Ok(());
    }
    let message = format!(
        "the partial products belong to user {}, not to user {me} who runs reduce; seisimage sums only shares \
         its own user wrote (run the share again, or copy the file if you trust it)",
        meta.uid()
    );
    Err(Error::io(path, std::io::Error::new(std::io::ErrorKind::PermissionDenied, message)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::StageStat;

    fn header(share: Share) -> Header {
        Header {
            job: "abc".into(),
            shard: share.index + 1,
            shards: share.count,
            frequencies: [3, 7],
            boxes: Vec::new(),
            values_sha256: String::new(),
            record: PartRecord {
                index: share.index + 1,
                host: "h".into(),
                backend: "cpu".into(),
                frequencies: [3, 7],
                frequencies_hz: [1.0, 2.0],
                bands: 1,
                seconds: 0.5,
                stages: vec![StageStat { name: "read".into(), seconds: 0.1, bytes: 10 }],
                nonfinite_samples: 0,
            },
        }
    }

    fn values() -> Vec<Vec<f32>> {
        vec![vec![1.5, -2.0, 3.25], vec![], vec![f32::MIN_POSITIVE, 1e30]]
    }

    #[test]
    fn a_share_written_reads_back_and_is_checked_against_the_job() {
        let dir = tempfile::tempdir().unwrap();
        let share = Share { index: 1, count: 4 };
        let path = write(dir.path(), share, header(share), &values()).unwrap();
        assert_eq!(path.file_name().unwrap(), "shard-2-of-4.partial");
        let boxes = [3, 0, 2];
        let expect = Expect { job: "abc", share, frequencies: [3, 7], boxes: &boxes };
        let (h, v) = read(&path, &expect).unwrap();
        assert_eq!(v, values());
        assert_eq!((h.shard, h.shards, h.record.seconds), (2, 4, 0.5));

        for (e, says) in [
            (Expect { job: "abd", ..expect }, "another job"),
            (Expect { share: Share { index: 2, count: 4 }, ..expect }, "share 2/4"),
            (Expect { frequencies: [3, 8], ..expect }, "frequencies"),
            (Expect { boxes: &[3, 0, 3], ..expect }, "boxes"),
        ] {
            let err = read(&path, &e).unwrap_err();
            assert!(err.to_string().contains(says) && err.exit_code() == 2, "{says}: {err}");
        }
    }

    /// Damaged and hostile files get an error naming the file and the byte, never a panic or a large
    /// allocation.
    #[test]
    fn damaged_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let share = Share { index: 0, count: 2 };
        let good = std::fs::read(write(dir.path(), share, header(share), &values()).unwrap()).unwrap();
        let boxes = [3, 0, 2];
        let expect = Expect { job: "abc", share, frequencies: [3, 7], boxes: &boxes };
        let at = dir.path().join("x.partial");
        let check = |bytes: &[u8], says: &str| {
            std::fs::write(&at, bytes).unwrap();
            let e = read(&at, &expect).unwrap_err().to_string();
            assert!(e.contains("x.partial") && e.contains(says), "{says}: {e}");
        };
        check(&good[..good.len() - 1], "truncated");
        check(&[good.as_slice(), &[0]].concat(), "damaged");
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        check(&flipped, "checksum");
        check(b"PK\x03\x04 not ours", "not a seisimage partial");
        check(&[MAGIC, b"{\"job\": 1}\n"].concat(), "header cannot be read");
        check(&[MAGIC, &vec![b' '; MAX_HEADER + 10]].concat(), "no header line");
        // a header that claims huge boxes is compared with the job's, not believed
        let text = String::from_utf8_lossy(&good).replace("\"boxes\":[3,0,2]", "\"boxes\":[3,0,2000000000000]");
        check(text.as_bytes(), "boxes");
    }
}

//! What a run records of the files it reads and writes, below the manifest that gathers it, so that the
//! output folder, its lock and the preparation of a job use it without the manifest: the manifest's file
//! name, the stamp of a file read, the time of day as the manifest writes it, and how counts are worded.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;

/// Name of the run manifest in the output folder.
pub const MANIFEST: &str = "manifest.json";

/// A file as it was when the job read it: its size and when it was last changed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileStamp {
    pub bytes: u64,
    pub modified_utc: Option<String>,
}

impl FileStamp {
    pub fn of(path: &Path) -> Option<FileStamp> {
        let meta = std::fs::metadata(path).ok()?;
        Some(FileStamp { bytes: meta.len(), modified_utc: meta.modified().ok().map(utc) })
    }
}

/// A file the job read, with its stamp.
#[derive(Clone, Debug, Serialize)]
pub struct FileRecord {
    pub path: PathBuf,
    #[serde(flatten)]
    pub stamp: Option<FileStamp>,
}

/// `SystemTime` as an RFC 3339 UTC timestamp (seconds), by humantime. A clock outside the years 1970 to
/// 9999, which RFC 3339 and humantime cannot write, gives the nearest time they can.
pub fn utc(t: SystemTime) -> String {
    const LAST_SECOND_OF_9999: u64 = 253_402_300_799;
    let t = t.clamp(UNIX_EPOCH, UNIX_EPOCH + Duration::from_secs(LAST_SECOND_OF_9999));
    humantime::format_rfc3339_seconds(t).to_string()
}

/// `n` things, the noun in the plural unless there is one: `1 product`, `4 products`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        assert_eq!(utc(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        // 2000-02-29 12:34:56 UTC = 951827696 s
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(951_827_696)), "2000-02-29T12:34:56Z");
        // 2026-11-21 00:00:00 UTC = 1795219200 s
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(1_795_219_200)), "2026-11-21T00:00:00Z");
        // Clocks that RFC 3339 cannot write give the nearest time it can, not a panic.
        assert_eq!(utc(UNIX_EPOCH - Duration::from_secs(1)), "1970-01-01T00:00:00Z");
        assert_eq!(utc(UNIX_EPOCH + Duration::from_secs(300_000_000_000)), "9999-12-31T23:59:59Z");
    }
}

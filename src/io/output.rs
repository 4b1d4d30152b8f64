//! Outputs are written under a temporary name in the destination folder and renamed into place only when
//! complete, so an interrupted or failed job never leaves a file that looks finished.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::error::{IoContext, Result};

/// A file being written under a temporary name; removed on drop unless [`TempOutput::commit`] was called.
#[derive(Debug)]
pub struct TempOutput {
    final_path: PathBuf,
    temp_path: PathBuf,
    committed: bool,
}

impl TempOutput {
    /// Reserve a temporary name next to `final_path` (same folder, so the rename is atomic). The name holds
    /// the process id and a count, so that two writers of one file, in two processes or on two threads of
    /// one (two jobs storing the same compiled kernels), never write into the same temporary file.
    pub fn new(final_path: impl AsRef<Path>) -> Self {
        static COUNT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let final_path = final_path.as_ref().to_path_buf();
        let name = final_path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let temp_path = final_path.with_file_name(format!(".{name}.partial-{}-{n}", std::process::id()));
        TempOutput { final_path, temp_path, committed: false }
    }

    /// Where to write now.
    pub fn path(&self) -> &Path {
        &self.temp_path
    }

    /// Where the file will be once committed.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Create (truncate) the temporary file for writing.
    pub fn create(&self) -> Result<File> {
        File::create(&self.temp_path).at(&self.final_path)
    }

    /// Flush the temporary file to disk and move it to its final name.
    pub fn commit(mut self) -> Result<PathBuf> {
        let t = std::time::Instant::now();
        if let Ok(f) = File::open(&self.temp_path) {
            f.sync_all().at(&self.final_path)?;
        }
        tracing::trace!("{} flushed to disk in {:.1} ms", self.final_path.display(), t.elapsed().as_secs_f64() * 1e3);
        std::fs::rename(&self.temp_path, &self.final_path).at(&self.final_path)?;
        self.committed = true;
        Ok(self.final_path.clone())
    }
}

impl Drop for TempOutput {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp_path);
        }
    }
}

/// Write `bytes` to `path` atomically.
pub fn write_atomic(path: impl AsRef<Path>, bytes: &[u8]) -> Result<PathBuf> {
    let out = TempOutput::new(path);
    let mut f = out.create()?;
    f.write_all(bytes).at(out.final_path())?;
    drop(f);
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncommitted_output_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("a.bin");
        {
            let t = TempOutput::new(&target);
            std::fs::write(t.path(), b"half").unwrap();
            assert!(t.path().exists());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "temporary file must be removed on drop");
        write_atomic(&target, b"whole").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

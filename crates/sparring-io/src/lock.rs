//! The lock on a run directory: one process writes a run at a time.
//!
//! [`RunLock::acquire`] takes an exclusive advisory lock (`flock` on Unix,
//! `LockFileEx` on Windows, through [`std::fs::File::try_lock`]) on
//! `<dir>/run.lock` and writes its own process id into the file. A second
//! process that tries the same directory fails at once with
//! [`Error::Locked`], naming the pid it reads from the file. The operating
//! system releases the lock when the process holding it ends, however it
//! ends (`kill -9` included), so a lock left by a dead process is no
//! obstacle: the next run takes it over and writes its own pid over the
//! stale one. The file itself is left in place when the lock is released:
//! removing it would let a process that opened the old file and one that
//! created a new one both hold "the" lock.

use crate::Error;
use std::fs::{File, OpenOptions};
use std::io::{Read as _, Seek as _, SeekFrom, Write as _};
use std::path::{Path, PathBuf};

/// The lock file's name inside a run directory.
pub const LOCK_FILE: &str = "run.lock";

/// A held lock on a run directory; dropping it releases the lock.
#[derive(Debug)]
pub struct RunLock {
    file: File,
    path: PathBuf,
}

impl RunLock {
    /// Creates `dir` if needed and locks it for this process.
    ///
    /// # Errors
    ///
    /// [`Error::Locked`] when another process holds the lock (naming its
    /// pid when the file says it); [`Error::Write`] when the directory or
    /// the lock file cannot be made.
    pub fn acquire(dir: &Path) -> Result<Self, Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::write(dir, &e))?;
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| Error::write(&path, &e))?;
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                let mut text = String::new();
                let _ = file.read_to_string(&mut text);
                return Err(Error::Locked {
                    dir: dir.to_owned(),
                    pid: text.trim().parse().ok(),
                });
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::write(&path, &e)),
        }
        // Ours now: the pid of a process that died holding it is replaced.
        file.set_len(0)
            .and_then(|()| file.seek(SeekFrom::Start(0)))
            .and_then(|_| writeln!(file, "{}", std::process::id()))
            .and_then(|()| file.flush())
            .map_err(|e| Error::write(&path, &e))?;
        Ok(Self { file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for RunLock {
    fn drop(&mut self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_second_lock_names_the_holder_and_a_released_one_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        let held = RunLock::acquire(&run).unwrap();
        let e = RunLock::acquire(&run).unwrap_err();
        assert!(
            matches!(e, Error::Locked { pid: Some(p), .. } if p == std::process::id()),
            "{e}"
        );
        assert!(
            e.to_string()
                .contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        drop(held);
        // A stale pid in the file (its process gone) does not hold the lock.
        std::fs::write(run.join(LOCK_FILE), "999999999\n").unwrap();
        let again = RunLock::acquire(&run).unwrap();
        let text = std::fs::read_to_string(again.path()).unwrap();
        assert_eq!(text.trim(), std::process::id().to_string());
    }
}

//! Where an output file is written while it is made.
//!
//! A file is written under a temporary name beside its target and renamed into place only when
//! it is finished (a recording synced to disk first, a derived output not): the target never
//! holds a partial file, and an error or a cancel leaves nothing. A target that exists and is
//! not a regular file or a directory (a device such as `/dev/null`, a FIFO, a terminal) is
//! written in place instead, unsynced: renaming a file over it replaces the device itself. As
//! root, a rename over `/dev/null` turns it into a regular file, which then fills with whatever
//! every other program throws away (this machine's did, and CI failed on it).

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::Result;

/// A temporary path beside `target`, in the same directory so the rename is atomic.
pub fn temp_path_for(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map_or_else(|| "bag".into(), |n| n.to_string_lossy().into_owned());
    let dir = target.parent().unwrap_or(Path::new("."));
    dir.join(format!(".{name}.{}.partial", std::process::id()))
}

/// `target.active`, where a recording from a live system is written until it is finished (the
/// name `rosbag record` uses).
pub fn active_path_for(target: &Path) -> PathBuf {
    let mut p = target.as_os_str().to_owned();
    p.push(".active");
    PathBuf::from(p)
}

/// Whether `target` exists and is neither a regular file nor a directory (following links):
/// a device, a FIFO, a socket. Such a target is written in place.
pub fn is_special(target: &Path) -> bool {
    std::fs::metadata(target).is_ok_and(|m| {
        let t = m.file_type();
        !t.is_file() && !t.is_dir()
    })
}

/// An output file being made: where it is written, and where it goes when finished.
#[derive(Debug, Clone)]
pub struct Staged {
    path: PathBuf,
    target: PathBuf,
}

impl Staged {
    /// `target` written under a temporary name ([`temp_path_for`]), or in place where it is
    /// special ([`is_special`]).
    pub fn new(target: &Path) -> Staged {
        Staged::via(target, temp_path_for)
    }

    /// `target` written as `target.active` ([`active_path_for`]), or in place where it is
    /// special.
    pub fn active(target: &Path) -> Staged {
        Staged::via(target, active_path_for)
    }

    fn via(target: &Path, name: fn(&Path) -> PathBuf) -> Staged {
        if is_special(target) {
            return Staged {
                path: target.to_path_buf(),
                target: target.to_path_buf(),
            };
        }
        // A link is followed: the file it names is replaced, not the link (`-o /dev/stdout`
        // with standard output redirected to a file names that file).
        let target = match std::fs::symlink_metadata(target) {
            Ok(m) if m.file_type().is_symlink() => {
                std::fs::canonicalize(target).unwrap_or_else(|_| target.to_path_buf())
            }
            _ => target.to_path_buf(),
        };
        Staged {
            path: name(&target),
            target,
        }
    }

    /// Where the file is written until it is finished.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where the file goes when finished.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Whether the target itself is written (it is special).
    pub fn in_place(&self) -> bool {
        self.path == self.target
    }

    /// Creates (or truncates) the file written.
    pub fn create(&self) -> std::io::Result<File> {
        File::create(&self.path)
    }

    /// The finished `file` synced to disk and renamed into place: a recording, which a crash
    /// of the machine right after must not leave empty at its name. A target written in place
    /// is only closed (a device has nothing to sync, and `fsync` of one fails).
    pub fn commit(&self, file: File) -> Result<()> {
        if self.in_place() {
            return Ok(());
        }
        file.sync_all()?;
        drop(file);
        std::fs::rename(&self.path, &self.target)?;
        Ok(())
    }

    /// The finished `file` renamed into place without waiting for the disk: a derived output
    /// (CSV, an image) that is made again from its recording at will. The rename alone keeps
    /// a partial file from ever being seen at the target; what a crash of the machine may
    /// lose is left to the file system, as `cp` and `sort -o` leave it. (The `fsync` was 3 ms
    /// of a 20 ms `csv` of a time window, more than its decoding.)
    pub fn commit_unsynced(&self, file: File) -> Result<()> {
        if self.in_place() {
            return Ok(());
        }
        drop(file);
        std::fs::rename(&self.path, &self.target)?;
        Ok(())
    }

    /// An unfinished file removed (a target written in place is left as it is).
    pub fn discard(&self) {
        if !self.in_place() {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_file_is_written_beside_its_target_and_renamed_into_place() {
        let dir = std::env::temp_dir().join(format!("bagscope-staged-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let target = dir.join("out.csv");
        let s = Staged::new(&target);
        assert!(!s.in_place());
        assert_eq!(s.path().parent(), Some(dir.as_path()));
        let mut f = s.create().expect("create");
        std::io::Write::write_all(&mut f, b"a,b\n").expect("write");
        assert!(!target.exists(), "nothing at the target before the commit");
        s.commit(f).expect("commit");
        assert_eq!(std::fs::read(&target).expect("read"), b"a,b\n");
        assert!(!s.path().exists());
        let derived = Staged::new(&target);
        let mut f = derived.create().expect("create");
        std::io::Write::write_all(&mut f, b"c\n").expect("write");
        assert_eq!(
            std::fs::read(&target).expect("read"),
            b"a,b\n",
            "the old file until the rename"
        );
        derived.commit_unsynced(f).expect("commit");
        assert_eq!(std::fs::read(&target).expect("read"), b"c\n");
        assert!(!derived.path().exists());
        let discarded = Staged::new(&target);
        drop(discarded.create().expect("create"));
        discarded.discard();
        assert!(!discarded.path().exists());
        assert_eq!(std::fs::read(&target).expect("read"), b"c\n");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }

    #[test]
    fn dev_null_is_written_in_place_and_stays_a_device() {
        let null = Path::new("/dev/null");
        assert!(
            is_special(null),
            "/dev/null is not a device on this machine"
        );
        for s in [Staged::new(null), Staged::active(null)] {
            assert!(s.in_place());
            let mut f = s.create().expect("open /dev/null");
            std::io::Write::write_all(&mut f, b"thrown away").expect("write");
            s.commit(f).expect("commit");
            s.discard();
            let f = s.create().expect("open /dev/null");
            s.commit_unsynced(f).expect("commit");
        }
        assert!(is_special(null), "/dev/null is still a device");
        assert!(!is_special(Path::new("/nonexistent/bagscope")));
        assert!(!is_special(&std::env::temp_dir()));
    }

    #[test]
    fn a_link_to_a_file_is_followed_and_stays_a_link() {
        let dir = std::env::temp_dir().join(format!("bagscope-staged-link-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let (file, link) = (dir.join("real.csv"), dir.join("link.csv"));
        std::fs::write(&file, b"old").expect("write");
        std::os::unix::fs::symlink(&file, &link).expect("symlink");
        let s = Staged::new(&link);
        let f = s.create().expect("create");
        s.commit(f).expect("commit");
        assert!(std::fs::symlink_metadata(&link)
            .expect("link")
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&file).expect("read"), b"");
        std::fs::remove_dir_all(&dir).expect("clean up");
    }
}

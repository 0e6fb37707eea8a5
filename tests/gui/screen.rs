//! The real app in an X server of its own (Xvfb, Mesa's software GL), and its screen read
//! back (xwd, read with ffmpeg): for the tests that look at pixels as a user sees them.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A process stopped when dropped: asked to end (SIGTERM, so that an X server removes its lock
/// file; killed outright, Xvfb leaves `/tmp/.XN-lock` behind), killed after a second if it has
/// not.
pub struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.0.id().to_string()])
            .status();
        for _ in 0..50 {
            if matches!(self.0.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// An X server of `w` × `h` pixels on a display no other holds, and the app in it.
pub struct Screen {
    pub w: usize,
    pub h: usize,
    n: u32,
    _app: Option<Killed>,
    _x: Killed,
}

impl Screen {
    /// Starts Xvfb on a display it picks itself (`-displayfd`: the first one no live server
    /// holds, a stale lock file of a server that died taken over), and waits for it.
    pub fn new(w: usize, h: usize) -> Screen {
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                &format!("{w}x{h}x24"),
                "-nolisten",
                "tcp",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("Xvfb (.ci/run installs it)");
        let mut line = String::new();
        let read = child
            .stdout
            .take()
            .map(|o| std::io::BufRead::read_line(&mut std::io::BufReader::new(o), &mut line));
        let x = Killed(child);
        assert!(
            matches!(read, Some(Ok(n)) if n > 0),
            "Xvfb said no display it serves"
        );
        let n: u32 = line.trim().parse().expect("Xvfb's display number");
        Screen {
            w,
            h,
            n,
            _app: None,
            _x: x,
        }
    }

    /// Runs bagscope with `args` in the display, its settings under `home`.
    pub fn app(&mut self, args: &[&dyn AsRef<std::ffi::OsStr>], home: &Path) {
        std::fs::create_dir_all(home).unwrap();
        self._app = Some(Killed(
            Command::new(env!("CARGO_BIN_EXE_bagscope"))
                .args(args)
                .env("DISPLAY", format!(":{}", self.n))
                .env("HOME", home)
                .env_remove("WAYLAND_DISPLAY")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        ));
    }

    /// The screen as RGB (`None` while it cannot be read).
    pub fn shot(&self, dir: &Path) -> Option<Vec<u8>> {
        let xwd = dir.join("screen.xwd");
        let ok = Command::new("xwd")
            .args([
                "-root",
                "-silent",
                "-display",
                &format!(":{}", self.n),
                "-out",
            ])
            .arg(&xwd)
            .status()
            .ok()?;
        if !ok.success() {
            return None;
        }
        let out = Command::new("ffmpeg")
            .args(["-loglevel", "error", "-i"])
            .arg(&xwd)
            .args(["-f", "rawvideo", "-pix_fmt", "rgb24", "-"])
            .output()
            .ok()?;
        (out.status.success() && out.stdout.len() == self.w * self.h * 3).then_some(out.stdout)
    }
}

//! The real app in an X server of its own (Xvfb, Mesa's software GL), and its screen read
//! back (xwd, read with ffmpeg): for the tests that look at pixels as a user sees them.

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A process killed when dropped.
pub struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
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
    /// Starts Xvfb.
    pub fn new(w: usize, h: usize) -> Screen {
        // A display no other X server holds (its lock file absent).
        let n = (0..40)
            .map(|k| 40 + (std::process::id() + k) % 40)
            .find(|n| !Path::new(&format!("/tmp/.X{n}-lock")).exists())
            .expect("a free X display");
        let x = Killed(
            Command::new("Xvfb")
                .args([
                    &format!(":{n}"),
                    "-screen",
                    "0",
                    &format!("{w}x{h}x24"),
                    "-nolisten",
                    "tcp",
                ])
                .stderr(Stdio::null())
                .spawn()
                .expect("Xvfb (.ci/run installs it)"),
        );
        std::thread::sleep(Duration::from_millis(800));
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

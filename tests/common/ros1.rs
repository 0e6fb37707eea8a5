//! A ROS 1 graph for tests: Debian's `roscore` on a free port of 127.0.0.1 and the processes of
//! a test, each in a process group of its own, stopped when dropped. A missing program fails
//! the test (it never skips): `.ci/run` installs them.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bagscope_live::ros1::xmlrpc::{self, Value};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A process group started for a test, stopped (SIGINT, then SIGKILL) when dropped.
pub struct Proc {
    pub child: Child,
    what: String,
}

impl Proc {
    pub fn signal(&self, sig: &str) {
        let _ = Command::new("kill")
            .args([sig, "--", &format!("-{}", self.child.id())])
            .status();
    }

    /// Sends SIGINT to the group and waits for the process, at most `t`.
    pub fn interrupt(mut self, t: Duration) -> std::process::ExitStatus {
        self.signal("-INT");
        let end = Instant::now() + t;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                return s;
            }
            assert!(Instant::now() < end, "{} did not stop on SIGINT", self.what);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            // roscore stops the master and rosout it started (in sessions of their own) on
            // SIGINT: it is given the time to, before the group is killed.
            self.signal("-INT");
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end && self.child.try_wait().ok().flatten().is_none() {
                std::thread::sleep(Duration::from_millis(50));
            }
            self.signal("-KILL");
            let _ = self.child.wait();
        }
    }
}

/// The ROS 1 environment of a graph with its master at `uri`, everything on 127.0.0.1.
pub fn ros_env(cmd: &mut Command, uri: &str, home: &Path) {
    cmd.env("ROS_MASTER_URI", uri)
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env("ROS_HOME", home)
        .env("ROS_LOG_DIR", home.join("log"));
}

pub fn spawn(mut cmd: Command, what: &str, log: &Path) -> Proc {
    let out = std::fs::File::create(log).unwrap();
    let err = out.try_clone().unwrap();
    let child = cmd
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .stdin(Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run {what}: {e} (Debian's ros-core, python3-rosbag and python3-rostopic; .ci/run installs them)")
        });
    Proc {
        child,
        what: what.into(),
    }
}

/// A master of its own (Debian's `roscore`), answering before this returns.
pub struct Master {
    pub uri: String,
    home: PathBuf,
    _proc: Proc,
}

impl Master {
    pub fn start(dir: &Path) -> Master {
        let port = free_port();
        let uri = format!("http://127.0.0.1:{port}/");
        let home = dir.join("ros_home");
        std::fs::create_dir_all(&home).unwrap();
        let mut cmd = Command::new("roscore");
        cmd.args(["-p", &port.to_string()]);
        ros_env(&mut cmd, &uri, &home);
        let proc = spawn(cmd, "roscore", &dir.join("roscore.log"));
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            if xmlrpc::call(&uri, "getUri", &[Value::str("/test")]).is_ok() {
                break;
            }
            assert!(
                Instant::now() < end,
                "roscore did not answer at {uri}: {}",
                std::fs::read_to_string(dir.join("roscore.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Master {
            uri,
            home,
            _proc: proc,
        }
    }

    pub fn command(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        ros_env(&mut c, &self.uri, &self.home);
        c
    }

    /// Waits until some node subscribes to (or publishes, `publishers`) `topic`.
    pub fn wait_for(&self, topic: &str, publishers: bool) {
        let end = Instant::now() + Duration::from_secs(30);
        loop {
            let state = xmlrpc::call(&self.uri, "getSystemState", &[Value::str("/test")])
                .unwrap()
                .ros_result("getSystemState")
                .unwrap();
            let list = &state.as_array().unwrap()[if publishers { 0 } else { 1 }];
            let found = list.as_array().unwrap().iter().any(|t| {
                let t = t.as_array().unwrap();
                t[0].as_str() == Some(topic) && !t[1].as_array().unwrap().is_empty()
            });
            if found {
                return;
            }
            assert!(Instant::now() < end, "nobody on {topic} after 30 s");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// Runs `cmd` to its end, failing the test after `limit`.
pub fn run_for(cmd: &mut Command, limit: Duration) -> std::process::Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(o) => o.unwrap(),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &id.to_string()])
                .status();
            panic!("{cmd:?} still ran after {limit:?}");
        }
    }
}

//! `bagscope tf`: the transform tree at a time, or one frame's pose in another.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;

use clap::Args;

use bagscope_ops::timefmt;

use super::args::time_range;

/// The transform tree (/tf, /tf_static) at a time, each frame with its transform from its
/// parent; or, with --target and --source, the pose of one frame in another (as tf_echo).
#[derive(Args, Debug)]
pub struct TfArgs {
    /// The recording.
    pub bag: PathBuf,
    /// The time: epoch seconds, or +S from the start (default: the end of the recording).
    #[arg(long, allow_hyphen_values = true)]
    pub at: Option<String>,
    /// The frame to express the pose in (with --source).
    #[arg(long, requires = "source")]
    pub target: Option<String>,
    /// The frame whose pose is printed (with --target).
    #[arg(long, requires = "target")]
    pub source: Option<String>,
    /// With --target and --source: the pose over the whole recording as CSV (time_ns, x,
    /// y, z, qx, qy, qz, qw, roll, pitch, yaw), one row each time a frame between them moved.
    #[arg(long, requires = "source", conflicts_with = "at")]
    pub track: bool,
    /// A message script making a virtual tf2_msgs/msg/TFMessage topic (docs/scripts.md).
    /// Repeatable.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
}

/// `bagscope tf`: the transform tree at a time, or one frame's pose in another.
pub fn run(
    a: &TfArgs,
    opts: &bagscope_reader::OpenOptions,
    urdf: Option<&std::path::Path>,
) -> crate::cli::Result<ExitCode> {
    let (path, at, track) = (a.bag.as_path(), a.at.as_deref(), a.track);
    let pair = a.target.clone().zip(a.source.clone());
    let bag = super::scripts::open(path, &a.scripts, opts)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    if !bagscope_ops::spatial::tf::has_transforms(&bag, urdf) {
        eprintln!(
            "bagscope: {} has no transform topic (tf2_msgs/TFMessage, tf/tfMessage) or robot description",
            path.display()
        );
        return Ok(ExitCode::from(1));
    }
    let t = match at {
        Some(a) => time_range(&bag, Some(a), None)?.0.unwrap_or(0),
        None => bag.summary().end_ns.unwrap_or(u64::MAX),
    };
    let h = bagscope_ops::spatial::tf::TfHistory::read(&bag, None, urdf, &AtomicBool::new(false))?;
    if h.bad > 0 {
        eprintln!("bagscope: {} transform message(s) did not decode", h.bad);
    }
    if let Some(p) = &h.robot.problem {
        eprintln!("bagscope: the robot model is not used: {p}");
    }
    if !h.robot.frames.is_empty() {
        eprintln!(
            "bagscope: {} frame(s) from the robot description and joint states",
            h.robot.frames.len()
        );
    }
    if !h.robot.unknown_joints.is_empty() {
        eprintln!(
            "bagscope: joint states name joints the robot description does not have: {}",
            h.robot.unknown_joints.join(", ")
        );
    }
    if h.truncated {
        eprintln!(
            "bagscope: only the first {} transforms were read",
            bagscope_ops::spatial::tf::MAX_SAMPLES
        );
    }
    let when = format!("{} ({} UTC)", timefmt::secs(t), timefmt::date(t));
    if let (true, Some((target, source))) = (track, &pair) {
        let rows = match h.track(target, source, usize::MAX) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("bagscope: {e}");
                return Ok(ExitCode::from(1));
            }
        };
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        let mut text = String::from("time_ns,x,y,z,qx,qy,qz,qw,roll,pitch,yaw\n");
        for (t, p) in rows {
            let r = p.rpy();
            text.push_str(&format!(
                "{t},{},{},{},{},{},{},{},{},{},{}\n",
                p.t[0], p.t[1], p.t[2], p.q[0], p.q[1], p.q[2], p.q[3], r[0], r[1], r[2]
            ));
            if text.len() > 1 << 16 {
                if out.write_all(text.as_bytes()).is_err() {
                    return Ok(ExitCode::SUCCESS);
                }
                text.clear();
            }
        }
        let _ = out.write_all(text.as_bytes());
        let _ = out.flush();
        return Ok(ExitCode::SUCCESS);
    }
    if let Some((target, source)) = pair {
        return match h.lookup(&target, &source, t) {
            Ok(p) => {
                println!("{source} in {target} at {when}: {}", pose_text(&p));
                Ok(ExitCode::SUCCESS)
            }
            Err(e) => {
                eprintln!("bagscope: {e}");
                Ok(ExitCode::from(1))
            }
        };
    }
    println!("transform tree at {when}:");
    for f in h.tree_at(t) {
        let indent = "  ".repeat(f.depth);
        let name = &h.frames[f.frame];
        match f.from_parent {
            None => println!("{indent}{name}"),
            Some(s) => {
                let age = if h.is_static[f.frame] {
                    "static".to_string()
                } else {
                    format!("{} ago", timefmt::period(t.saturating_sub(s.time_ns)))
                };
                println!("{indent}{name}  {}  ({age})", pose_text(&s.pose));
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// A pose as `tf_echo` prints it: translation, quaternion and roll/pitch/yaw in degrees.
fn pose_text(p: &bagscope_ops::geom::Pose) -> String {
    let r = p.rpy().map(f64::to_degrees);
    format!(
        "xyz [{:.4}, {:.4}, {:.4}] q [{:.4}, {:.4}, {:.4}, {:.4}] rpy° [{:.2}, {:.2}, {:.2}]",
        p.t[0], p.t[1], p.t[2], p.q[0], p.q[1], p.q[2], p.q[3], r[0], r[1], r[2]
    )
}

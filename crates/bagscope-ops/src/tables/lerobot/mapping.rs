//! The mapping file (`map.yaml`) of a LeRobot export: which expressions make
//! `observation.state` and `action`, which topics are `observation.images.*`, the frame rate,
//! how streams are aligned onto the frame clock, the task, and how recordings split into
//! episodes. Each entry knows its line; checked against every recording before any is read.

use bagscope_reader::bag::Bag;
use bagscope_reader::expr::Expr;
use bagscope_reader::series::{compile_source, Source};

use crate::yaml::{self, only_keys, LineError, Node};

/// How a stream's value at a frame's time is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// The last sample at or before the frame's time.
    Hold,
    /// The sample nearest the frame's time, within the tolerance.
    Nearest,
}

/// What becomes of a frame where a stream has no value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// The frame is left out (and counted).
    Drop,
    /// The stream's value of the frame before is used (the first frames: the first value).
    Fill,
}

/// How recordings split into episodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Episodes {
    /// One episode a recording.
    Recording,
    /// One episode per range bookmark kept in the recording.
    Bookmarks,
    /// These ranges of every recording: `(start, end)` in seconds from its start.
    Ranges(Vec<(f64, f64)>),
}

/// One expression of a vector feature, and its line.
#[derive(Debug, Clone, PartialEq)]
pub struct Component {
    /// The expression as written.
    pub text: String,
    /// Parsed.
    pub expr: Expr,
    /// Its name in `info.json`'s `names` (the expression's text unless named).
    pub name: String,
    /// Line in the mapping file.
    pub line: usize,
}

/// A camera feature: `observation.images.NAME: TOPIC`.
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    /// The feature key (`observation.images.front`).
    pub key: String,
    /// The topic.
    pub topic: String,
    /// Line in the mapping file.
    pub line: usize,
}

/// A mapping file.
#[derive(Debug, Clone, PartialEq)]
pub struct Mapping {
    /// Frames a second.
    pub fps: u32,
    /// The task's text (every frame's).
    pub task: String,
    /// `info.json`'s `robot_type`.
    pub robot_type: Option<String>,
    /// How streams are aligned.
    pub align: Align,
    /// For `nearest` (and a camera's frames): the furthest a sample may be (ns).
    pub tolerance_ns: u64,
    /// A frame where a stream has no value.
    pub missing: Missing,
    /// How episodes are cut.
    pub episodes: Episodes,
    /// `observation.state`'s components.
    pub state: Vec<Component>,
    /// `action`'s components.
    pub action: Vec<Component>,
    /// The cameras.
    pub cameras: Vec<Camera>,
    /// The depth (m) a depth camera's black and white stand for: its pictures (`16UC1` in mm,
    /// `32FC1` in m) are encoded as grey between them.
    pub depth_range: (f64, f64),
}

/// A depth camera's range where the mapping gives none (m).
pub const DEPTH_RANGE: (f64, f64) = (0.0, 10.0);

const KEYS: [&str; 11] = [
    "fps",
    "task",
    "robot_type",
    "align",
    "tolerance",
    "missing",
    "episodes",
    "observation.state",
    "action",
    "names",
    "depth_range",
];

impl Mapping {
    /// Parses a mapping file's text.
    ///
    /// ```
    /// use bagscope_ops::tables::lerobot::Mapping;
    /// let m = Mapping::parse("fps: 10\ntask: drive\nobservation.state: [/odom.pose.pose.position.x]\naction: [/cmd_vel.linear.x]\n").unwrap();
    /// assert_eq!((m.fps, m.state.len(), m.action[0].line), (10, 1, 4));
    /// assert_eq!(Mapping::parse("fps: ten\n").unwrap_err().line, 1);
    /// ```
    pub fn parse(text: &str) -> Result<Mapping, LineError> {
        let root = yaml::parse(text)?;
        let top = root.map("the mapping file")?;
        for (k, n) in top {
            if !KEYS.contains(&k.as_str()) && !k.starts_with("observation.images.") {
                return Err(LineError::new(
                    n.key_line,
                    format!(
                        "unknown key {k:?} (known: {}, observation.images.NAME)",
                        KEYS.join(", ")
                    ),
                ));
            }
        }
        let get = |k: &str| top.iter().find(|(key, _)| key == k).map(|(_, n)| n);
        let need = |k: &str| {
            get(k).ok_or_else(|| LineError::new(root.line, format!("the mapping needs {k}:")))
        };
        let fps_node = need("fps")?;
        let fps = fps_node.number("fps")?;
        if !((1.0..=1000.0).contains(&fps) && fps.fract() == 0.0) {
            return Err(LineError::new(
                fps_node.line,
                format!("fps: a whole number of frames a second from 1 to 1000, not {fps}"),
            ));
        }
        let task = need("task")?.text("task")?.to_string();
        let robot_type = get("robot_type")
            .map(|n| n.text("robot_type").map(str::to_string))
            .transpose()?;
        let align = choice(
            get("align"),
            "align",
            &[("hold", Align::Hold), ("nearest", Align::Nearest)],
        )?
        .unwrap_or(Align::Hold);
        let tolerance_ns = match get("tolerance") {
            None => 500_000_000 / u64::from(fps as u32),
            Some(n) => {
                let s = n.number("tolerance")?;
                if s <= 0.0 {
                    return Err(LineError::new(n.line, "tolerance: seconds, above 0"));
                }
                (s * 1e9).round() as u64
            }
        };
        let missing = choice(
            get("missing"),
            "missing",
            &[("drop", Missing::Drop), ("fill", Missing::Fill)],
        )?
        .unwrap_or(Missing::Drop);
        let episodes = match get("episodes") {
            Some(n) if matches!(n.kind, yaml::Kind::Seq(_)) => Episodes::Ranges(ranges(n)?),
            n => choice(
                n,
                "episodes",
                &[
                    ("recording", Episodes::Recording),
                    ("bookmarks", Episodes::Bookmarks),
                ],
            )?
            .unwrap_or(Episodes::Recording),
        };
        let depth_range = match get("depth_range") {
            None => DEPTH_RANGE,
            Some(n) => match n.bounds("depth_range", " in metres")? {
                (Some(a), Some(b)) if a >= 0.0 && b > a && b.is_finite() => (a, b),
                _ => {
                    return Err(LineError::new(
                        n.line,
                        "depth_range: [NEAR, FAR] in metres, NEAR 0 or more and FAR above it",
                    ))
                }
            },
        };
        let names = get("names");
        let state = components(need("observation.state")?, "observation.state", names)?;
        let action = components(need("action")?, "action", names)?;
        let mut cameras = Vec::new();
        for (k, n) in top {
            if let Some(name) = k.strip_prefix("observation.images.") {
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    return Err(LineError::new(
                        n.key_line,
                        format!("{k}: a camera's name is letters, digits and _"),
                    ));
                }
                cameras.push(Camera {
                    key: k.clone(),
                    topic: n.text(k)?.trim().to_string(),
                    line: n.line,
                });
            }
        }
        Ok(Mapping {
            fps: fps as u32,
            task,
            robot_type,
            align,
            tolerance_ns,
            missing,
            episodes,
            state,
            action,
            cameras,
            depth_range,
        })
    }

    /// Every component, the state's then the action's.
    pub fn components(&self) -> impl Iterator<Item = &Component> {
        self.state.iter().chain(self.action.iter())
    }

    /// Checks the mapping against `bag`: every topic it names is there, every path compiles
    /// against its topic's definition, every camera is an image or video topic. The error is at
    /// the entry's line.
    pub fn check(&self, bag: &Bag) -> Result<(), LineError> {
        let s = bag.summary();
        for c in self.components() {
            for p in c.expr.paths() {
                if s.topic(&p.topic).is_none() {
                    return Err(LineError::new(
                        c.line,
                        format!("{}: no topic {} in the recording", c.text, p.topic),
                    ));
                }
                let vars = Default::default();
                let src = Source {
                    path: p,
                    text: &c.text,
                    vars: &vars,
                };
                compile_source(bag, src)
                    .map_err(|e| LineError::new(c.line, format!("{}: {e}", c.text)))?;
            }
            if c.expr.paths().is_empty() {
                return Err(LineError::new(
                    c.line,
                    format!("{}: reads no topic, so it has no times", c.text),
                ));
            }
        }
        for cam in &self.cameras {
            let Some(t) = s.topic(&cam.topic) else {
                return Err(LineError::new(
                    cam.line,
                    format!("{}: no topic {} in the recording", cam.key, cam.topic),
                ));
            };
            if !crate::media::video::is_video_type(&t.datatype)
                && !crate::media::image::is_camera_type(&t.datatype)
            {
                return Err(LineError::new(
                    cam.line,
                    format!(
                        "{}: {} is {}, not a camera: cameras are H.264/H.265/AV1 video topics \
                         (copied) or image topics (Image, CompressedImage, RawImage; encoded as AV1)",
                        cam.key, cam.topic, t.datatype
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `episodes:` as a list of `[START, END]` ranges (seconds from a recording's start).
fn ranges(n: &Node) -> Result<Vec<(f64, f64)>, LineError> {
    let mut out = Vec::new();
    for r in n.items("episodes")? {
        let bad = || {
            LineError::new(
                r.line,
                "episodes: each range is [START, END] in seconds from the recording's start, \
                 START 0 or more and END above it",
            )
        };
        if !matches!(r.kind, yaml::Kind::Seq(_)) {
            return Err(bad());
        }
        match r.bounds("episodes", " in seconds")? {
            (Some(a), Some(b)) if a >= 0.0 && b > a => out.push((a, b)),
            _ => return Err(bad()),
        }
    }
    if out.is_empty() {
        return Err(LineError::new(n.line, "episodes: an empty list of ranges"));
    }
    Ok(out)
}

/// One of `options` by its word, where the key is given.
fn choice<T: Clone>(
    n: Option<&Node>,
    what: &str,
    options: &[(&str, T)],
) -> Result<Option<T>, LineError> {
    let Some(n) = n else { return Ok(None) };
    let word = n.text(what)?;
    match options.iter().find(|(w, _)| *w == word) {
        Some((_, v)) => Ok(Some(v.clone())),
        None => {
            let words: Vec<&str> = options.iter().map(|(w, _)| *w).collect();
            Err(LineError::new(
                n.line,
                format!("{what}: {}, not {word:?}", words.join(" or ")),
            ))
        }
    }
}

/// A feature's components: a list of expressions, named by `names: {feature: [...]}` or by
/// their text.
fn components(n: &Node, what: &str, names: Option<&Node>) -> Result<Vec<Component>, LineError> {
    let mut out = Vec::new();
    for item in n.items(what)? {
        let text = item.text(what)?.trim().to_string();
        let expr = Expr::parse(&text)
            .map_err(|e| LineError::new(item.line, format!("{what}: {text}: {}", e.reason)))?;
        out.push(Component {
            name: text.clone(),
            text,
            expr,
            line: item.line,
        });
    }
    if out.is_empty() {
        return Err(LineError::new(
            n.line,
            format!("{what}: at least one expression"),
        ));
    }
    if let Some(names) = names {
        let m = names.map("names")?;
        only_keys(m, &["observation.state", "action"], "names")?;
        if let Some((_, list)) = m.iter().find(|(k, _)| k == what) {
            let given = list.items(what)?;
            if given.len() != out.len() {
                return Err(LineError::new(
                    list.line,
                    format!(
                        "names: {what}: {} names for {} expressions",
                        given.len(),
                        out.len()
                    ),
                ));
            }
            for (c, g) in out.iter_mut().zip(given) {
                c.name = g.text(what)?.to_string();
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mapping_read_with_its_lines() {
        let m = Mapping::parse(
            "fps: 10\ntask: drive the eight\nalign: nearest\ntolerance: 0.02\nmissing: fill\n\
             observation.state:\n  - /odom.pose.pose.position.x\n  - /odom.pose.pose.position.y\n\
             action: [/cmd_vel.linear.x]\nobservation.images.front: /camera/front/h264\n\
             names:\n  action: [vx]\n",
        )
        .unwrap();
        assert_eq!(
            (m.fps, m.align, m.missing),
            (10, Align::Nearest, Missing::Fill)
        );
        assert_eq!(m.tolerance_ns, 20_000_000);
        assert_eq!(m.state[1].line, 8);
        assert_eq!(m.action[0].name, "vx");
        assert_eq!(m.cameras[0].key, "observation.images.front");
        assert_eq!(m.cameras[0].line, 10);
    }

    #[test]
    fn mistakes_name_their_line() {
        let line = |t: &str| Mapping::parse(t).unwrap_err().line;
        let base = "fps: 10\ntask: t\nobservation.state: [/a.x]\naction: [/b.y]\n";
        assert_eq!(line(&format!("{base}align: closest\n")), 5);
        assert_eq!(line(&format!("{base}fsp: 3\n")), 5);
        assert_eq!(line(&format!("{base}observation.images.a b: /c\n")), 5);
        assert_eq!(line("fps: 10.5\n"), 1);
        assert_eq!(
            line("fps: 10\ntask: t\nobservation.state: [/a.x +]\naction: [/b.y]\n"),
            3
        );
        assert_eq!(line(&format!("{base}names:\n  action: [a, b]\n")), 6);
        let e = Mapping::parse("fps: 10\n").unwrap_err();
        assert!(e.reason.contains("needs task"), "{e:?}");
    }

    #[test]
    fn episodes_are_a_word_or_ranges() {
        let base = "fps: 10\ntask: t\nobservation.state: [/a.x]\naction: [/b.y]\n";
        let m = |t: &str| Mapping::parse(&format!("{base}{t}"));
        assert_eq!(m("").unwrap().episodes, Episodes::Recording);
        assert_eq!(
            m("episodes: bookmarks\n").unwrap().episodes,
            Episodes::Bookmarks
        );
        assert_eq!(
            m("episodes:\n  - [0, 2.5]\n  - [3, 10]\n")
                .unwrap()
                .episodes,
            Episodes::Ranges(vec![(0.0, 2.5), (3.0, 10.0)])
        );
        let line = |t: &str| m(t).unwrap_err().line;
        assert_eq!(line("episodes:\n  - [0, 2]\n  - [5, 3]\n"), 7);
        assert_eq!(line("episodes:\n  - [-1, 2]\n"), 6);
        assert_eq!(line("episodes: [0, 2]\n"), 5);
        assert_eq!(line("episodes: []\n"), 5);
        assert_eq!(line("episodes: some\n"), 5);
    }

    #[test]
    fn a_depth_range_is_near_and_far_in_metres() {
        let base = "fps: 10\ntask: t\nobservation.state: [/a.x]\naction: [/b.y]\n";
        let m = |t: &str| Mapping::parse(&format!("{base}{t}"));
        assert_eq!(m("").unwrap().depth_range, DEPTH_RANGE);
        assert_eq!(
            m("depth_range: [0.3, 4.5]\n").unwrap().depth_range,
            (0.3, 4.5)
        );
        for bad in ["[4, 1]", "[-1, 2]", "[0, ]", "near"] {
            let e = m(&format!("depth_range: {bad}\n")).unwrap_err();
            assert_eq!(e.line, 5, "{bad}: {e:?}");
        }
    }
}

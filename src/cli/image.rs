//! `bagscope image`: one image message as a PNG.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::cli::Error;
use bagscope_ops::tables::csv::AtomicFile;
use bagscope_ops::timefmt;
use bagscope_reader::Bag;

use super::args::{time_range, Render};

/// One image message as a PNG: raw Image (every common encoding), CompressedImage (jpeg,
/// png, compressedDepth), an OccupancyGrid map, a LaserScan or PointCloud2 seen from above;
/// depth, float, ranges and heights through a colormap; the frame of a video topic
/// (CompressedVideo, FFMPEGPacket, H.264/H.265 CompressedImage) shown at that time.
#[derive(Args, Debug)]
pub struct ImageArgs {
    /// The recording.
    pub bag: PathBuf,
    /// The image topic.
    pub topic: String,
    /// The message at or before this time (epoch seconds, or +S from the start).
    #[arg(long, conflicts_with = "index")]
    pub at: Option<String>,
    /// The topic's N-th message (0-based; default 0); of a video topic, its N-th frame shown.
    #[arg(long)]
    pub index: Option<usize>,
    /// The PNG to write (atomically).
    #[arg(short, long)]
    pub output: PathBuf,
    #[command(flatten)]
    pub render: Render,
    #[command(flatten)]
    pub overlay: super::image_overlay::OverlayArgs,
}

/// Runs `bagscope image`.
pub fn run(
    a: &ImageArgs,
    opts: &bagscope_reader::OpenOptions,
    urdf: Option<&std::path::Path>,
) -> crate::cli::Result<ExitCode> {
    image(Asked {
        opts,
        bag: &a.bag,
        topic: &a.topic,
        at: a.at.as_deref(),
        index: a.index,
        out: &a.output,
        colormap: a.render.colormap.as_deref(),
        range: a.render.range(),
        rotate: a.render.rotate,
        overlay: &a.overlay,
        urdf,
    })
}

/// What `bagscope image` was asked.
struct Asked<'a> {
    /// How recordings are opened.
    opts: &'a bagscope_reader::OpenOptions,
    bag: &'a Path,
    topic: &'a str,
    at: Option<&'a str>,
    index: Option<usize>,
    out: &'a Path,
    colormap: Option<&'a str>,
    range: Option<(f32, f32)>,
    rotate: u8,
    overlay: &'a super::image_overlay::OverlayArgs,
    /// The robot model in place of the recording's (`--urdf`).
    urdf: Option<&'a Path>,
}

/// `bagscope image`: one camera message as a PNG.
fn image(a: Asked) -> crate::cli::Result<ExitCode> {
    use bagscope_ops::media::image::Orientation;
    let bag = super::scripts::open(a.bag, &[], a.opts)?;
    let conns = bag.connections_of_topics(&[a.topic])?;
    let tables = bag.tables()?;
    // Every message of the topic, in time order, as (time, connection, entry).
    let mut all: Vec<(u64, usize, bagscope_reader::IndexEntry)> = conns
        .iter()
        .flat_map(|&c| {
            tables
                .per_connection
                .get(c)
                .into_iter()
                .flatten()
                .map(move |e| (e.time_ns, c, *e))
        })
        .collect();
    all.sort_by_key(|x| x.0);
    let pick = match (a.at, a.index) {
        (Some(t), _) => {
            let (Some(t), _) = time_range(&bag, Some(t), None)? else {
                return Err(Error::Invalid("no time".into()));
            };
            let k = all.partition_point(|x| x.0 <= t);
            k.checked_sub(1).and_then(|k| all.get(k)).ok_or_else(|| {
                Error::NotFound(format!("no message on {} at or before {t}", a.topic))
            })?
        }
        (None, i) => {
            let i = i.unwrap_or(0);
            all.get(i).ok_or_else(|| {
                Error::NotFound(format!("{} has {} messages, no #{i}", a.topic, all.len()))
            })?
        }
    };
    let (time_ns, conn, entry) = *pick;
    let (plan, _) = bag
        .plan(conn)
        .map_err(|e| Error::Invalid(format!("{}: {e}", a.topic)))?;
    let m = bag.message(conn, entry)?;
    let packet = plan
        .decode(&m.data)
        .ok()
        .and_then(|n| bagscope_ops::media::video::packet_of(&plan.def, &n));
    let img = if packet.is_some() {
        // A video topic: the frame shown at that message's time (its N-th frame for the
        // N-th message), decoded from its keyframe.
        let n = all.partition_point(|x| x.0 <= time_ns).saturating_sub(1);
        video_frame(&bag, a.topic, n)?
    } else {
        bagscope_ops::media::image::decode_message(&plan, &m.data)
            .map_err(|e| Error::Invalid(format!("{} message at {time_ns}: {e}", a.topic)))?
    };
    let mut painter = None;
    if a.overlay.any() {
        if !a.rotate.is_multiple_of(4) {
            return Err(Error::Invalid(
                "--overlay, --tf-axes and --rectify draw on the image as recorded: leave out --rotate".into(),
            ));
        }
        painter = Some(super::image_overlay::Painter::new(
            &bag, a.topic, a.overlay, a.urdf,
        )?);
    }
    let img = match painter.as_mut() {
        Some(p) => p.rectified(img, time_ns)?,
        None => img,
    };
    let cmap = colormap_for(&img, a.colormap)?;
    let range = a.range.unwrap_or_else(|| img.default_range());
    let o = Orientation {
        quarter_turns: a.rotate % 4,
        ..Default::default()
    };
    let (w, h, mut px) = img.render(cmap, range, o);
    if let Some(p) = painter.as_mut() {
        for note in p.paint((conn, entry), w, h, &mut px) {
            eprintln!("{}: {note}", a.topic);
        }
    }
    let png = bagscope_ops::media::image::encode_png(w, h, &px)?;
    let mut f = AtomicFile::create(a.out)?;
    f.write_all(&png)?;
    f.commit()?;
    let range_text = if img.is_scalar() {
        format!(", values {:.4} to {:.4}", range.0, range.1)
    } else {
        String::new()
    };
    println!(
        "{}: {}×{} {} at {}{range_text}",
        a.out.display(),
        img.width,
        img.height,
        img.encoding,
        timefmt::date(time_ns)
    );
    Ok(ExitCode::SUCCESS)
}

/// Frame `n` (display order) of a video topic as an RGBA image.
fn video_frame(
    bag: &Bag,
    topic: &str,
    n: usize,
) -> crate::cli::Result<bagscope_ops::media::image::Image> {
    use bagscope_ops::media::video::{Shown, Video, VideoIndex, DEFAULT_BUDGET};
    let ix = std::sync::Arc::new(VideoIndex::build(bag, topic, None)?);
    let mut video = Video::new(std::sync::Arc::clone(&ix), DEFAULT_BUDGET);
    let at = ix.time_of(n).unwrap_or(0);
    match video.frame(bag, n) {
        Shown::Frame(f) => Ok(bagscope_ops::media::image::Image {
            width: f.width as u32,
            height: f.height as u32,
            encoding: format!("{} frame {n} ({})", ix.codec, f.colour.matrix_name()),
            pixels: bagscope_ops::media::image::Pixels::Rgba(f.to_rgba()),
            map: None,
        }),
        Shown::Waiting => Err(Error::NotFound(format!(
            "{topic} at {}: frame {n} comes before the first keyframe (frame {}): nothing to show",
            timefmt::date(at),
            ix.keys.first().copied().unwrap_or(0)
        ))),
        Shown::Lost(why) => Err(Error::Invalid(why)),
    }
}

/// The colormap asked for, else the image's default (turbo for depth and float).
pub(super) fn colormap_for(
    img: &bagscope_ops::media::image::Image,
    asked: Option<&str>,
) -> crate::cli::Result<bagscope_ops::media::image::Colormap> {
    use bagscope_ops::media::image::{Colormap, Pixels};
    Ok(match asked {
        Some("grey" | "gray") => Colormap::Grey,
        Some("turbo") => Colormap::Turbo,
        Some(other) => {
            return Err(Error::Invalid(format!(
                "unknown colormap {other:?} (grey or turbo)"
            )))
        }
        None => match img.pixels {
            Pixels::Mono8(_) | Pixels::Rgba(_) | Pixels::Occupancy(_) => Colormap::Grey,
            _ => Colormap::Turbo,
        },
    })
}

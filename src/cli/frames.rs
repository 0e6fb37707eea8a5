//! `bagscope frames`: every image of a topic as numbered PNG files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::cli::Error;
use bagscope_ops::tables::csv::AtomicFile;
use bagscope_ops::timefmt;
use bagscope_reader::Filter;

use super::args::{time_range, Range, Render};
use super::image::colormap_for;

/// Every image of a topic (cameras, maps, scans and clouds from above) as numbered PNG
/// files, in time order, decoded and written on all cores; as image_view's extract_images.
#[derive(Args, Debug)]
pub struct FramesArgs {
    /// The recording.
    pub bag: PathBuf,
    /// The image topic.
    pub topic: String,
    /// The folder to write into (made if missing): TOPIC_NNNNNN_TIMENS.png.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Only every N-th message.
    #[arg(long, default_value_t = 1)]
    pub every: usize,
    #[command(flatten)]
    pub range: Range,
    #[command(flatten)]
    pub render: Render,
}

/// Runs `bagscope frames`.
pub fn run(a: &FramesArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    let (start, end) = a.range.as_strs();
    frames(Asked {
        opts,
        bag: &a.bag,
        topic: &a.topic,
        out: &a.output,
        start,
        end,
        every: a.every,
        colormap: a.render.colormap.as_deref(),
        range: a.render.range(),
        rotate: a.render.rotate,
    })
}

/// What `bagscope frames` was asked.
struct Asked<'a> {
    /// How recordings are opened.
    opts: &'a bagscope_reader::OpenOptions,
    bag: &'a Path,
    topic: &'a str,
    out: &'a Path,
    start: Option<&'a str>,
    end: Option<&'a str>,
    every: usize,
    colormap: Option<&'a str>,
    range: Option<(f32, f32)>,
    rotate: u8,
}

/// `bagscope frames`: every image of a topic as numbered PNG files.
fn frames(a: Asked) -> crate::cli::Result<ExitCode> {
    use bagscope_ops::media::image::{decode_message, encode_png, Orientation};
    if let Some(c) = a.colormap {
        if !matches!(c, "grey" | "gray" | "turbo") {
            return Err(Error::Invalid(format!(
                "unknown colormap {c:?} (grey or turbo)"
            )));
        }
    }
    let bag = super::scripts::open(a.bag, &[], a.opts)?;
    let conns = bag.connections_of_topics(&[a.topic.to_string()])?;
    let (start_ns, end_ns) = time_range(&bag, a.start, a.end)?;
    std::fs::create_dir_all(a.out)?;
    let stem: String = a
        .topic
        .trim_matches('/')
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .collect();
    let o = Orientation {
        quarter_turns: a.rotate % 4,
        ..Default::default()
    };
    let every = a.every.max(1);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    // The reader hands messages to the workers over a bounded channel; each worker decodes,
    // draws, encodes and writes (atomically) its frames.
    let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, bagscope_reader::Message)>(threads * 2);
    let rx = std::sync::Mutex::new(rx);
    let written = std::sync::atomic::AtomicU64::new(0);
    let failed: std::sync::Mutex<Vec<(u64, String)>> = std::sync::Mutex::new(Vec::new());
    let read = std::thread::scope(|sc| -> crate::cli::Result<usize> {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let next = match rx.lock() {
                    Ok(r) => r.recv(),
                    Err(_) => return,
                };
                let Ok((k, m)) = next else { return };
                let r = bag
                    .plan(m.conn)
                    .map_err(Error::from)
                    .and_then(|(plan, _)| Ok(decode_message(&plan, &m.data)?))
                    .and_then(|img| {
                        let cmap = colormap_for(&img, a.colormap)?;
                        let range = a.range.unwrap_or_else(|| img.default_range());
                        let (w, h, px) = img.render(cmap, range, o);
                        Ok(encode_png(w, h, &px)?)
                    })
                    .and_then(|png| {
                        let p = a.out.join(format!("{stem}_{k:06}_{}.png", m.time_ns));
                        let mut f = AtomicFile::create(&p)?;
                        f.write_all(&png)?;
                        Ok(f.commit()?)
                    });
                match r {
                    Ok(_) => {
                        written.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                    Err(e) => {
                        if let Ok(mut f) = failed.lock() {
                            f.push((m.time_ns, e.to_string()));
                        }
                    }
                }
            });
        }
        let mut k = 0usize;
        let msgs = bag.messages(&Filter {
            connections: Some(conns),
            start_ns,
            end_ns,
        })?;
        for (n, m) in msgs.enumerate() {
            // Every message is read, so that an error in a skipped one still stops the run.
            let m = m?;
            if !n.is_multiple_of(every) {
                continue;
            }
            if tx.send((k, m)).is_err() {
                break;
            }
            k += 1;
        }
        drop(tx);
        Ok(k)
    })?;
    let written = written.into_inner();
    let mut failed = failed.into_inner().unwrap_or_default();
    failed.sort_by_key(|f| f.0);
    println!(
        "{}: {written} of {read} frames of {} written",
        a.out.display(),
        a.topic
    );
    if let Some((t, e)) = failed.first() {
        eprintln!(
            "bagscope: {} frame(s) not written, the first at {}: {e}",
            failed.len(),
            timefmt::secs(*t)
        );
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

//! What more than one panel draws with: colours, the time axis's steps and labels.

use egui::Color32;

use bagscope_ops::reports::log::Level;

/// The colour of a log severity (the log panel, the timeline's marks, the top bar's count).
pub fn level_color(l: Level, text: Color32) -> Color32 {
    match l {
        Level::Debug => Color32::from_gray(140),
        Level::Info | Level::Other(_) => text,
        Level::Warn => Color32::from_rgb(230, 170, 40),
        Level::Error => Color32::from_rgb(235, 80, 70),
        Level::Fatal => Color32::from_rgb(220, 70, 220),
    }
}

/// A round time step (ns) for axis ticks about 110 px apart at `ns_per_px`.
pub fn nice_step(ns_per_px: f64) -> f64 {
    let target = ns_per_px * 110.0;
    const STEPS: [f64; 14] = [
        1.0, 2.0, 5.0, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 900.0, 1800.0, 3600.0, 7200.0,
    ];
    if target < 1e9 {
        let mag = 10f64.powf((target).log10().floor());
        for m in [1.0, 2.0, 5.0, 10.0] {
            if mag * m >= target {
                return (mag * m).max(1.0);
            }
        }
        return mag * 10.0;
    }
    for s in STEPS {
        if s * 1e9 >= target {
            return s * 1e9;
        }
    }
    (target / 3.6e12).ceil() * 3.6e12
}

/// A tick label for `off_ns` after the start: `m:ss` for steps of a minute or more, else seconds.
pub fn tick_label(off_ns: f64, step: f64) -> String {
    let s = off_ns / 1e9;
    if step >= 60e9 {
        let m = (s / 60.0).floor();
        format!("{}:{:02.0}", m as i64, s - m * 60.0)
    } else {
        let digits = (-(step / 1e9).log10()).ceil().clamp(0.0, 9.0) as usize;
        format!("{s:.digits$} s")
    }
}

//! What panels ask for ([`Cmd`]) and the one place it is carried out ([`App::apply`]): the
//! recording's navigation, and every reach from one panel to another.

use std::path::PathBuf;

use crate::job::Job;
use crate::{export, find, live, plot, publish, scene, shown_path, topics, App, Doc};

/// What panels ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    /// Open a bag file.
    Open(PathBuf),
    /// Open several recordings on one timeline, each with its time shift.
    OpenMany(Vec<bagscope_reader::bag::merge::Part>),
    /// Show the Open dialog to add a recording to the timeline.
    AddDialog,
    /// Show or hide the Recordings window (time shifts of several recordings).
    ShowRecordings(bool),
    /// Ask before writing the bookmarks into the recording.
    SaveNotes,
    /// Write them (asked).
    SaveNotesConfirmed,
    /// Ask where to save the layout.
    SaveLayoutDialog,
    /// Ask which layout to open.
    OpenLayoutDialog,
    /// Save the layout of what is shown to a file.
    SaveLayoutTo(PathBuf),
    /// Open a layout file (bagscope's, Lichtblick's/Foxglove's or PlotJuggler's).
    OpenLayoutFrom(PathBuf),
    /// Ask for a rules file to check the recording against.
    ExpectDialog,
    /// Check the recording against a rules file; its failures become bookmarks.
    CheckExpectations(PathBuf),
    /// Draw a field as a state row under the timeline.
    AddStateRow(String),
    /// Show or hide the Diagnostics panel (read on first showing).
    ShowDiagnostics(bool),
    /// Show or hide the Compare runs window.
    ShowCompare(bool),
    /// Reopen the recordings on the timeline shifted to start together (worked out on the
    /// loader thread: it opens each).
    AlignStarts,
    /// Open (writing it first if needed) the demo bag.
    OpenDemo,
    /// Show the Open dialog (a file).
    OpenDialog,
    /// Show the Open dialog for a folder (a rosbag2 recording).
    OpenFolderDialog,
    /// Close the bag.
    Close,
    /// Open the recordings on the timeline again (their plots and panels stay).
    Reload,
    /// Close the window.
    Quit,
    /// Show or hide the command palette.
    ShowPalette(bool),
    /// Show or hide the Help window (every shortcut).
    ShowHelp(bool),
    /// Stop building the message tables.
    CancelIndexing,
    /// Select a topic (index into the summary's topics) or none.
    SelectTopic(Option<usize>),
    /// Show or hide a topic's timeline row.
    SetVisible(usize, bool),
    /// Show or hide every topic.
    SetAllVisible(bool),
    /// Move the playhead (ns, clamped to the bag).
    SetPlayhead(u64),
    /// Step to the next (`true`) or previous message of the selected topic, or of any topic.
    Step(bool),
    /// Play or pause.
    TogglePlay,
    /// Playback speed.
    SetSpeed(f32),
    /// The selected range (ns), or none.
    SetSelection(Option<(u64, u64)>),
    /// The visible time window (ns, as offsets from the bag start, fractional).
    SetView(f64, f64),
    /// Show the whole bag.
    FitAll,
    /// Show the bag info window.
    ShowInfo(bool),
    /// Set the message search path (directories separated as in PATH) and reopen.
    SetMsgPath(String),
    /// Plot a field path (`/imu.linear_acceleration.x`).
    AddSeries(String),
    /// Show the export window.
    ShowExport(bool),
    /// Export the bag as the export window is set.
    ExportBag,
    /// Export the plotted series to CSV as the export window is set.
    ExportCsv,
    /// Open an image panel on a topic.
    OpenImage(usize),
    /// Open a 3D panel (with every topic it draws), or add a topic to the first one.
    OpenScene(Option<usize>),
    /// Open a map panel on a topic, or on every topic the map draws.
    OpenMap(Option<usize>),
    /// Select the topic of a connection and move the playhead to a message of it (ns): what
    /// the inspector then shows.
    InspectMessage(usize, u64),
    /// Show or hide the log panel.
    ShowLog(bool),
    /// Show or hide the Find window.
    ShowFind(bool),
    /// Show or hide the TF window.
    ShowTf(bool),
    /// Show or hide the Scripts window.
    ShowScripts(bool),
    /// Apply a series script edited in the Scripts window (replacing the one at the index, or
    /// added) and plot its series.
    ApplyScript(Option<usize>, bagscope_ops::script::SeriesScript),
    /// Open the recording again with these message scripts (the one edited: the index), its
    /// panels kept.
    ApplyMessageScripts(
        Vec<bagscope_ops::script::message::MessageScript>,
        Option<usize>,
    ),
    /// Show or hide the Publish window.
    ShowPublish(bool),
    /// Turn a topic's Publish toggle on or off.
    SetPublish(usize, bool),
    /// Stop publishing (the node leaves the ROS graph, every toggle goes off).
    PublishDisconnect,
    /// Serve the recording to Foxglove clients (the Publish window's port).
    ServeStart,
    /// Stop serving it.
    ServeStop,
    /// Show or hide the Live window.
    ShowLive(bool),
    /// Look for the topics published on the Live window's master or domain.
    LiveFindTopics,
    /// Start recording live (the recording shown is closed).
    LiveStart,
    /// Stop recording live (the file is finished and stays shown).
    LiveStop,
    /// Show the newest time of the live recording again.
    LiveFollow,
    /// Ask where to save the live recording.
    LiveSaveAs,
    /// Save the live recording there.
    LiveSaveTo(PathBuf),
    /// Search for the Find window's query.
    Find,
    /// Move the playhead to the next (`true`) or previous hit of the last search.
    FindStep(bool),
    /// Set or clear the second cursor (ns).
    SetCursor2(Option<u64>),
    /// Bookmark a time (ns).
    AddBookmark(u64),
    /// Bookmark the selected range (a range bookmark, with a colour).
    BookmarkSelection,
    /// Remove the i-th bookmark.
    RemoveBookmark(usize),
    /// Plot a topic's header.stamp minus its receive time.
    PlotStampDelay(usize),
    /// Plot a series worked out elsewhere (a TF track, stamp delays): its name and points
    /// (x: seconds since the start).
    AddPoints(String, Vec<egui_plot::PlotPoint>),
}

impl App {
    /// Carries out one command.
    pub fn apply(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::SetPublish(ti, on) => {
                if let Some(d) = &mut self.doc {
                    publish::set(d, ti, on, &self.ctx);
                }
            }
            Cmd::ServeStart => {
                if let Some(d) = &mut self.doc {
                    super::serve::start(&mut d.publish.serve, &d.rec.bag, &self.ctx);
                }
            }
            Cmd::ShowLive(b) => self.live.open = b,
            Cmd::LiveFindTopics => live::find_topics(&mut self.live, &self.ctx),
            Cmd::LiveStart => live::start(self),
            Cmd::LiveStop => live::stop(&mut self.live),
            Cmd::LiveFollow => {
                if let (Some(s), Some(d)) = (&mut self.live.session, &mut self.doc) {
                    s.follow = true;
                    let (a, b) = d.rec.range();
                    let dur = b.saturating_sub(a) as f64;
                    let w = d.nav.view.1 - d.nav.view.0;
                    d.nav.view = ((dur - w).max(0.0), dur.max(1.0));
                    d.nav.playhead = b;
                    d.nav.play_pos = b as f64;
                }
            }
            Cmd::LiveSaveAs => live::save_as(&mut self.live, &self.ctx),
            Cmd::LiveSaveTo(p) => live::save_to(&mut self.live, p, &self.ctx),
            Cmd::Open(p) => {
                let label = shown_path(&p);
                self.start_loading(bagscope_reader::bag::merge::parts_of(&[p]), label);
            }
            Cmd::OpenMany(parts) => {
                let label = parts
                    .iter()
                    .map(|p| p.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" + ");
                self.start_loading(parts, label);
            }
            Cmd::OpenDemo => self.start_loading(Vec::new(), "demo bag".into()),
            Cmd::AlignStarts => {
                if let Some(d) = &self.doc {
                    let parts = d.rec.parts.clone();
                    self.start_loading_with(parts, true, "aligning the recordings".into());
                }
            }
            Cmd::SaveNotes => {
                if let Some(d) = &mut self.doc {
                    super::bookmarks_io::ask(d);
                }
            }
            Cmd::ExpectDialog => {
                if let Some(d) = &mut self.doc {
                    super::expect::dialog(d, &self.ctx);
                }
            }
            Cmd::CheckExpectations(p) => match &mut self.doc {
                Some(d) if self.opening.is_none() => super::expect::start(d, p, &self.ctx),
                // Checked once the recording being opened is.
                _ => self.pending_expect = Some(p),
            },
            Cmd::SaveNotesConfirmed => {
                if let Some(d) = &mut self.doc {
                    super::bookmarks_io::start(d, &self.ctx);
                }
            }
            Cmd::SaveLayoutDialog
            | Cmd::OpenLayoutDialog
            | Cmd::SaveLayoutTo(_)
            | Cmd::OpenLayoutFrom(_) => self.layout_cmd(cmd),
            Cmd::AddStateRow(p) => {
                if let Some(d) = &mut self.doc {
                    super::timeline::state_rows::add(d, p, &self.ctx);
                }
            }
            Cmd::ShowDiagnostics(b) => {
                if let Some(d) = &mut self.doc {
                    d.diag.open = b;
                    if b {
                        super::diagnostics::start(d, &self.ctx);
                    }
                }
            }
            Cmd::ShowCompare(b) => {
                if let Some(d) = &mut self.doc {
                    d.compare.open = b;
                }
            }
            Cmd::ShowRecordings(b) => {
                if let Some(d) = &mut self.doc {
                    d.recordings.open = b;
                }
            }
            Cmd::OpenDialog | Cmd::OpenFolderDialog | Cmd::AddDialog => {
                let folder = cmd == Cmd::OpenFolderDialog;
                self.adding = cmd == Cmd::AddDialog;
                let r = Job::spawn("file-dialog", 1, &self.ctx, move |h| {
                    let dialog = rfd::FileDialog::new();
                    // Several files may be chosen: they go on one timeline.
                    let f = if folder {
                        dialog
                            .set_title("Open a rosbag2 recording (its folder)")
                            .pick_folder()
                            .map(|p| vec![p])
                    } else {
                        dialog
                            .add_filter(
                                "Recordings",
                                &["bag", "active", "orig", "mcap", "db3", "zstd", "yaml"],
                            )
                            .add_filter("All files", &["*"])
                            .pick_files()
                            .filter(|v| !v.is_empty())
                    };
                    h.send(f);
                });
                match r {
                    Ok(j) => self.dialog = Some(j),
                    Err(e) => self.error = Some(format!("cannot show the Open dialog: {e}")),
                }
            }
            Cmd::Close => {
                self.bookmarks = self.all_bookmarks();
                self.layouts = self.all_layouts();
                self.loader = None;
                self.doc = None;
                self.opening = None;
            }
            Cmd::CancelIndexing => {
                if let Some(l) = &self.loader {
                    l.cancel();
                }
            }
            Cmd::ShowInfo(b) => self.show_info = b,
            Cmd::ShowHelp(b) => self.show_help = b,
            Cmd::ShowPalette(b) => {
                self.palette = crate::palette::Palette {
                    open: b,
                    ..Default::default()
                }
            }
            Cmd::Quit => self.ctx.send_viewport_cmd(egui::ViewportCommand::Close),
            Cmd::Reload => {
                if let Some(d) = &self.doc {
                    let parts = d.rec.parts.clone();
                    let label = shown_path(&d.rec.path);
                    self.start_loading(parts, label);
                }
            }
            Cmd::SetMsgPath(p) => {
                self.msg_path = p;
                // Definitions are resolved when a recording opens: open it again.
                if let Some(d) = &self.doc {
                    let path = d.rec.path.clone();
                    self.cmds.push(Cmd::Open(path));
                }
            }
            Cmd::ApplyMessageScripts(all, at) => self.apply_message_scripts(all, at),
            Cmd::ApplyScript(at, script) => {
                if let Some(d) = &mut self.doc {
                    super::scripts::apply(d, at, script, &self.ctx);
                }
            }
            Cmd::AddSeries(p) => {
                if let Some(d) = &mut self.doc {
                    if let Err(e) = plot::add_series(d, &p, &self.ctx) {
                        // Under the path box, in monospace: the caret lines up.
                        d.plots.error = Some(format!("cannot plot: {e}"));
                    }
                }
            }
            Cmd::ShowExport(b) => {
                if let Some(d) = &mut self.doc {
                    d.export.open = b;
                }
            }
            Cmd::ExportBag => {
                if let Some(d) = &mut self.doc {
                    export::start_bag_export(d, &self.ctx);
                }
            }
            Cmd::AddPoints(name, points) => {
                if let Some(d) = &mut self.doc {
                    plot::add_points(d, &name, points);
                }
            }
            Cmd::PlotStampDelay(ti) => {
                if let Some(d) = &mut self.doc {
                    topics::timing::plot_stamp_delay(d, ti, &self.ctx);
                }
            }
            Cmd::Find => {
                if let Some(d) = &mut self.doc {
                    find::start(d, &self.ctx);
                }
            }
            Cmd::ExportCsv => {
                if let Some(d) = &mut self.doc {
                    export::start_csv_export(d, &self.ctx);
                }
            }
            other => {
                if let Some(d) = &mut self.doc {
                    apply_doc(d, other);
                }
            }
        }
    }
}

fn apply_doc(d: &mut Doc, cmd: Cmd) {
    let (a, b) = d.rec.range();
    match cmd {
        Cmd::SelectTopic(t) => d.nav.selected = t,
        Cmd::SetVisible(t, v) => {
            if let Some(x) = d.nav.visible.get_mut(t) {
                *x = v;
            }
        }
        Cmd::SetAllVisible(v) => d.nav.visible.iter_mut().for_each(|x| *x = v),
        Cmd::SetPlayhead(t) => {
            d.nav.playhead = t.clamp(a, b.max(a));
            d.nav.play_pos = d.nav.playhead as f64;
        }
        Cmd::Step(fwd) => {
            if let Some(t) = d.step(fwd) {
                d.nav.playhead = t;
                d.nav.play_pos = t as f64;
                d.nav.playing = false;
            }
        }
        Cmd::TogglePlay => {
            if !d.nav.playing && d.nav.playhead >= b {
                d.nav.playhead = a;
            }
            d.nav.playing = !d.nav.playing;
            d.nav.play_pos = d.nav.playhead as f64;
        }
        Cmd::SetSpeed(s) => d.nav.speed = s.clamp(0.1, 10.0),
        Cmd::SetSelection(r) => {
            d.nav.selection = r.map(|(x, y)| {
                let (x, y) = (x.min(y), x.max(y));
                (x.clamp(a, b), y.clamp(a, b))
            })
        }
        Cmd::SetView(x, y) => {
            let dur = (b - a).max(1) as f64;
            let w = (y - x).clamp(1e3, dur * 1.2);
            let x = x.clamp(-dur * 0.1, dur - w * 0.5);
            d.nav.view = (x, x + w);
        }
        Cmd::FitAll => d.nav.view = (0.0, (b - a).max(1) as f64),
        Cmd::OpenImage(ti) if ti < d.rec.bag.summary().topics.len() => d.images.open(ti),
        Cmd::OpenScene(ti) => scene::open(d, ti),
        Cmd::OpenMap(ti) => super::map::open(d, ti),
        Cmd::InspectMessage(conn, t) => {
            let topic = d
                .rec
                .bag
                .summary()
                .topics
                .iter()
                .position(|tp| tp.connections.contains(&conn));
            if topic.is_some() {
                d.nav.selected = topic;
            }
            let (s, e) = d.rec.range();
            d.nav.playhead = t.clamp(s, e);
            d.nav.play_pos = d.nav.playhead as f64;
            d.nav.playing = false;
        }
        Cmd::ShowLog(b) => d.log.open = b,
        Cmd::ShowTf(b) => d.tf.open = b && d.rec.has_tf,
        Cmd::ShowScripts(b) => d.scripts.open = b,
        Cmd::ShowPublish(b) => d.publish.open = b,
        Cmd::PublishDisconnect => publish::disconnect(d),
        Cmd::ServeStop => super::serve::stop(&mut d.publish.serve),
        Cmd::ShowFind(b) => {
            d.find.focus_query = b && !d.find.open;
            d.find.open = b;
        }
        Cmd::SetCursor2(t) => d.nav.cursor2 = t.map(|t| t.clamp(a, b.max(a))),
        Cmd::AddBookmark(t) => {
            let t = t.clamp(a, b.max(a));
            if !d.nav.bookmarks.iter().any(|x| x.0 == t) {
                let n = d.nav.bookmarks.len() + 1;
                d.nav.bookmarks.push((t, format!("Bookmark {n}")));
                d.nav.bookmarks.sort_by_key(|x| x.0);
            }
        }
        Cmd::BookmarkSelection => {
            if let Some((x, y)) = d.nav.selection {
                let (x, y) = (x.min(y), x.max(y));
                let n = d.nav.bookmarks.len() + 1;
                let label = format!("Range {n}");
                // A range, in a colour of its own: kept with its end when written into the
                // recording.
                let color = ["#4da3ff", "#ff8c42", "#7bd389", "#d67bff"][n % 4].to_string();
                d.rec.notes.push(bagscope_ops::bookmarks::Bookmark {
                    start_ns: x,
                    end_ns: Some(y),
                    label: label.clone(),
                    color,
                });
                d.nav.bookmarks.push((x, label));
                d.nav.bookmarks.sort_by_key(|b| b.0);
            }
        }
        Cmd::RemoveBookmark(i) if i < d.nav.bookmarks.len() => {
            d.nav.bookmarks.remove(i);
        }
        Cmd::FindStep(fwd) => {
            if let Some(t) = d.find.next_from(d.nav.playhead, fwd) {
                d.nav.playhead = t;
                d.nav.play_pos = t as f64;
            }
        }
        _ => {}
    }
}

/// The parts with one more recording (a path already there is not added twice).
pub(crate) fn add_part(
    parts: &[bagscope_reader::bag::merge::Part],
    p: PathBuf,
) -> Vec<bagscope_reader::bag::merge::Part> {
    let mut v = parts.to_vec();
    if !v.iter().any(|x| x.path == p) {
        v.push(bagscope_reader::bag::merge::Part {
            path: p,
            offset_ns: 0,
        });
    }
    v
}

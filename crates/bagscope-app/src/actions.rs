//! Every action the app offers from its menus, its keyboard and the command palette, in one
//! table: a menu item, its shortcut, the Help window's list and the palette's entry cannot
//! drift apart. The keys follow `ros2 bag play` (Space pauses, → steps, ↑/↓ change the rate),
//! rqt_bag (Home/End) and desktop conventions (Ctrl+O, Ctrl+W, F5, F1, Ctrl+K).

use egui::{Key, KeyboardShortcut, Modifiers};

use super::timeline::SPEEDS;
use super::{App, Cmd};

/// The menu an action sits in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Menu {
    File,
    View,
    Tools,
    Help,
}

impl Menu {
    pub const ALL: [Menu; 4] = [Menu::File, Menu::View, Menu::Tools, Menu::Help];

    pub fn name(self) -> &'static str {
        match self {
            Menu::File => "File",
            Menu::View => "View",
            Menu::Tools => "Tools",
            Menu::Help => "Help",
        }
    }
}

/// One action.
#[derive(Debug, Clone)]
pub struct Action {
    pub menu: Menu,
    pub name: &'static str,
    pub keys: Option<KeyboardShortcut>,
    /// A line on what it does (the menu's tooltip, the palette's second column).
    pub hint: &'static str,
    /// What it does now; `None` where it cannot (no recording open, nothing to step to).
    pub cmd: Option<Cmd>,
}

const fn key(k: Key) -> Option<KeyboardShortcut> {
    Some(KeyboardShortcut::new(Modifiers::NONE, k))
}

const fn ctrl(k: Key) -> Option<KeyboardShortcut> {
    Some(KeyboardShortcut::new(Modifiers::COMMAND, k))
}

const fn ctrl_shift(k: Key) -> Option<KeyboardShortcut> {
    Some(KeyboardShortcut::new(
        Modifiers::COMMAND.plus(Modifiers::SHIFT),
        k,
    ))
}

/// The speed after `s` in the toolbar's list (`up`) or before it.
fn next_speed(s: f32, up: bool) -> f32 {
    if up {
        SPEEDS.iter().copied().find(|&x| x > s).unwrap_or(s)
    } else {
        SPEEDS.iter().rev().copied().find(|&x| x < s).unwrap_or(s)
    }
}

/// The app's actions as they stand now, in menu order.
pub fn actions(app: &App) -> Vec<Action> {
    let d = app.doc.as_ref();
    let open = d.is_some();
    let when = |ok: bool, c: Cmd| ok.then_some(c);
    let nav = d.map(|d| &d.nav);
    let range = d.map(|d| d.rec.range());
    let a = |menu, name, keys, hint, cmd| Action {
        menu,
        name,
        keys,
        hint,
        cmd,
    };
    use Menu::*;
    vec![
        a(
            File,
            "Open…",
            ctrl(Key::O),
            "Open recordings (several: one timeline)",
            Some(Cmd::OpenDialog),
        ),
        a(
            File,
            "Open folder…",
            ctrl_shift(Key::O),
            "A rosbag2 recording: the folder with metadata.yaml",
            Some(Cmd::OpenFolderDialog),
        ),
        a(
            File,
            "Open the demo recording",
            None,
            "A generated recording with every kind of topic",
            Some(Cmd::OpenDemo),
        ),
        a(
            File,
            "Add to timeline…",
            ctrl_shift(Key::A),
            "Open another recording beside this one (a split part, or another run to compare)",
            when(open, Cmd::AddDialog),
        ),
        a(
            File,
            "Open layout…",
            ctrl_shift(Key::L),
            "Panels, plots, hidden topics, bookmarks from a layout file (bagscope's, Lichtblick's, PlotJuggler's)",
            when(open, Cmd::OpenLayoutDialog),
        ),
        a(
            File,
            "Save layout…",
            ctrl(Key::S),
            "What is shown as a layout file to hand to a colleague",
            when(open, Cmd::SaveLayoutDialog),
        ),
        a(
            File,
            "Check expectations…",
            None,
            "Check the recording against a rules file (rates, gaps, required topics, values): its failures as red bookmarks",
            when(open, Cmd::ExpectDialog),
        ),
        a(
            File,
            "Save bookmarks into the recording…",
            None,
            "MCAP: as metadata records (the file written again, then renamed over it); a bag or rosbag2: a sidecar JSON beside it",
            d.and_then(|d| when(!d.nav.bookmarks.is_empty(), Cmd::SaveNotes)),
        ),
        a(
            File,
            "Reload",
            key(Key::F5),
            "Open the recording again (the plots and panels stay)",
            when(open, Cmd::Reload),
        ),
        a(
            File,
            "Export…",
            ctrl(Key::E),
            "Write the selected range or topics to a bag, MCAP, rosbag2 or CSV",
            when(open, Cmd::ShowExport(true)),
        ),
        a(
            File,
            "Live…",
            None,
            "Record from a live ROS 1 master or ROS 2 domain and watch it grow",
            Some(Cmd::ShowLive(true)),
        ),
        a(
            File,
            "Publish…",
            None,
            "Publish topics onto a live ROS 1 system, or serve Foxglove clients",
            when(open, Cmd::ShowPublish(true)),
        ),
        a(
            File,
            "Close",
            ctrl(Key::W),
            "Close the recording",
            when(open, Cmd::Close),
        ),
        a(
            File,
            "Quit",
            ctrl(Key::Q),
            "Close the window",
            Some(Cmd::Quit),
        ),
        a(
            View,
            "Bag info",
            ctrl(Key::I),
            "Topics, connections, chunks, warnings of the recording",
            when(open, Cmd::ShowInfo(true)),
        ),
        a(
            View,
            "Log",
            ctrl(Key::L),
            "The recording's /rosout messages",
            when(open, Cmd::ShowLog(true)),
        ),
        a(
            View,
            "TF",
            ctrl(Key::T),
            "The transform tree at the playhead, and one frame's pose in another",
            d.and_then(|d| when(d.rec.has_tf, Cmd::ShowTf(true))),
        ),
        a(
            View,
            "Scripts",
            None,
            "Lua series scripts: edit, check and plot them (PlotJuggler's custom functions)",
            when(open, Cmd::ShowScripts(true)),
        ),
        a(
            View,
            "3D view",
            None,
            "Clouds, scans, markers, poses, maps and frames at the playhead",
            when(open, Cmd::OpenScene(None)),
        ),
        a(
            View,
            "Map",
            None,
            "GPS tracks and GeoJSON on map tiles, with the position at the playhead",
            d.and_then(|d| when(crate::map::has_map_topics(d), Cmd::OpenMap(None))),
        ),
        a(
            View,
            "Recordings",
            None,
            "The time shifts of the recordings on the timeline",
            d.and_then(|d| when(d.rec.parts.len() > 1, Cmd::ShowRecordings(true))),
        ),
        a(
            View,
            "Diagnostics",
            ctrl(Key::D),
            "Each diagnostic status name's level over time, its message and values at the playhead",
            d.and_then(|d| when(d.rec.has_diagnostics, Cmd::ShowDiagnostics(true))),
        ),
        a(
            View,
            "Compare runs",
            None,
            "The recordings on the timeline side by side: each topic's messages, rate, gaps; fields' statistics",
            d.and_then(|d| when(d.rec.parts.len() > 1, Cmd::ShowCompare(true))),
        ),
        a(
            View,
            "Fit the whole recording",
            ctrl(Key::Num0),
            "Show the whole timeline",
            when(open, Cmd::FitAll),
        ),
        a(
            View,
            "Play / pause",
            key(Key::Space),
            "Play from the playhead at the chosen speed",
            when(open, Cmd::TogglePlay),
        ),
        a(
            View,
            "Next message",
            key(Key::ArrowRight),
            "Of the selected topic, or of any",
            when(open, Cmd::Step(true)),
        ),
        a(
            View,
            "Previous message",
            key(Key::ArrowLeft),
            "Of the selected topic, or of any",
            when(open, Cmd::Step(false)),
        ),
        a(
            View,
            "Go to the start",
            key(Key::Home),
            "The playhead to the first message",
            range.map(|r| Cmd::SetPlayhead(r.0)),
        ),
        a(
            View,
            "Go to the end",
            key(Key::End),
            "The playhead to the last message",
            range.map(|r| Cmd::SetPlayhead(r.1)),
        ),
        a(
            View,
            "Faster",
            key(Key::ArrowUp),
            "The next playback speed",
            nav.map(|n| Cmd::SetSpeed(next_speed(n.speed, true))),
        ),
        a(
            View,
            "Slower",
            key(Key::ArrowDown),
            "The previous playback speed",
            nav.map(|n| Cmd::SetSpeed(next_speed(n.speed, false))),
        ),
        a(
            View,
            "Bookmark the playhead",
            key(Key::B),
            "A named time on the timeline (kept with the file)",
            nav.map(|n| Cmd::AddBookmark(n.playhead)),
        ),
        a(
            View,
            "Bookmark the selected range",
            ctrl(Key::B),
            "A named range on the timeline, in a colour of its own (kept with the file, and in it when saved)",
            d.and_then(|d| d.nav.selection.map(|_| Cmd::BookmarkSelection)),
        ),
        a(
            Tools,
            "Command palette…",
            ctrl(Key::K),
            "Find any action, topic, panel or bookmark by typing",
            Some(Cmd::ShowPalette(true)),
        ),
        a(
            Tools,
            "Find…",
            ctrl(Key::F),
            "Messages where a field meets a condition",
            when(open, Cmd::ShowFind(true)),
        ),
        a(
            Tools,
            "Next hit",
            key(Key::F3),
            "The playhead to the next message found",
            when(open, Cmd::FindStep(true)),
        ),
        a(
            Tools,
            "Previous hit",
            Some(KeyboardShortcut::new(Modifiers::SHIFT, Key::F3)),
            "The playhead to the previous message found",
            when(open, Cmd::FindStep(false)),
        ),
        a(
            Help,
            "Keyboard shortcuts",
            key(Key::F1),
            "Every shortcut, and the mouse on the timeline",
            Some(Cmd::ShowHelp(true)),
        ),
    ]
}

/// Whether a shortcut acts while a text field has the keyboard (those with Ctrl, and the
/// function keys, do; plain keys are the field's).
fn global(k: &KeyboardShortcut) -> bool {
    k.modifiers.command
        || k.modifiers.ctrl
        || matches!(k.logical_key, Key::F1 | Key::F3 | Key::F5 | Key::Escape)
}

/// The commands of the shortcuts pressed this frame (each key consumed once: those with
/// more modifiers first, so Shift+F3 is not taken as F3).
pub fn pressed(app: &App, ctx: &egui::Context) -> Vec<Cmd> {
    let typing = ctx.egui_wants_keyboard_input();
    let mut list: Vec<(KeyboardShortcut, Option<Cmd>)> = actions(app)
        .into_iter()
        .filter_map(|a| Some((a.keys?, a.cmd)))
        .filter(|(k, _)| !typing || global(k))
        .collect();
    let weight = |m: Modifiers| u8::from(m.shift) + u8::from(m.command || m.ctrl) + u8::from(m.alt);
    list.sort_by_key(|(k, _)| std::cmp::Reverse(weight(k.modifiers)));
    let mut out = Vec::new();
    ctx.input_mut(|i| {
        for (k, cmd) in list {
            // A shortcut of an action not available now is still taken (it does nothing).
            if i.consume_shortcut(&k) {
                out.extend(cmd);
            }
        }
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn speeds_step_through_the_toolbar_list() {
        assert_eq!(next_speed(1.0, true), 1.5);
        assert_eq!(next_speed(1.0, false), 0.5);
        assert_eq!(next_speed(10.0, true), 10.0);
        assert_eq!(next_speed(0.1, false), 0.1);
        // A speed not in the list (set elsewhere) goes to its neighbours.
        assert_eq!(next_speed(3.0, true), 4.0);
        assert_eq!(next_speed(3.0, false), 2.0);
    }

    #[test]
    fn no_two_actions_share_a_shortcut() {
        let app = App::new(None, None);
        let keys: Vec<_> = actions(&app).into_iter().filter_map(|a| a.keys).collect();
        for (i, a) in keys.iter().enumerate() {
            for b in &keys[i + 1..] {
                assert!(a != b, "{a:?} twice");
            }
        }
    }
}

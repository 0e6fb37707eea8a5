//! Serving the open recording to Foxglove clients, from the Publish window (what `bagscope
//! serve` does): a thread owns the server (binding, the channels' definitions, every client);
//! the UI hears from it over a bounded channel and reads its client count, never waiting on it.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::time::Duration;

use bagscope_live::foxglove::{ServeOptions, Server};
use bagscope_reader::bag::Bag;

use super::Cmd;

/// What the server's thread says.
enum Event {
    /// It listens at this address.
    Listening(String),
    /// It could not start, or stopped on an error.
    Failed(String),
}

/// A server started from the window.
struct Running {
    stop: Arc<AtomicBool>,
    events: Receiver<Event>,
    clients: Option<Arc<AtomicUsize>>,
    clients_rx: Receiver<Arc<AtomicUsize>>,
    addr: Option<String>,
}

impl Drop for Running {
    fn drop(&mut self) {
        // The thread sees it within its accept loop's 20 ms and closes every client.
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// The Foxglove part of the Publish window.
pub struct ServeState {
    /// The port as typed.
    pub port: String,
    running: Option<Running>,
    /// The last failure, shown until the next start.
    pub error: Option<String>,
}

impl Default for ServeState {
    fn default() -> Self {
        ServeState {
            port: "8765".into(),
            running: None,
            error: None,
        }
    }
}

impl ServeState {
    /// Serving now.
    pub fn running(&self) -> bool {
        self.running.is_some()
    }

    /// Where, once it listens.
    pub fn address(&self) -> Option<&str> {
        self.running.as_ref().and_then(|r| r.addr.as_deref())
    }
}

/// Starts serving `bag` on 127.0.0.1 at the typed port.
pub fn start(s: &mut ServeState, bag: &Bag, ctx: &egui::Context) {
    s.running = None;
    s.error = None;
    let port = match s.port.trim().parse::<u16>() {
        Ok(p) => p,
        Err(_) => {
            s.error = Some(format!("{:?} is not a port (0 to 65535)", s.port));
            return;
        }
    };
    let (tx, events) = sync_channel(4);
    let (ctx_tx, clients_rx) = sync_channel(1);
    let stop = Arc::new(AtomicBool::new(false));
    let (bag, ctx, flag) = (bag.clone(), ctx.clone(), Arc::clone(&stop));
    let opts = ServeOptions {
        port,
        name: bag.summary().path.display().to_string(),
        ..ServeOptions::default()
    };
    let spawned = std::thread::Builder::new()
        .name("bagscope-serve".into())
        .spawn(move || {
            let said = match Server::bind(Arc::new(bag), opts) {
                Ok(server) => {
                    let _ = ctx_tx.try_send(server.clients_handle());
                    let addr = server.local_addr().map(|a| format!("ws://{a}"));
                    let _ = tx.try_send(match addr {
                        Ok(a) => Event::Listening(a),
                        Err(e) => Event::Failed(e.to_string()),
                    });
                    ctx.request_repaint();
                    server.run(&flag).err().map(|e| e.to_string())
                }
                Err(e) => Some(e.to_string()),
            };
            if let Some(e) = said {
                let _ = tx.try_send(Event::Failed(e));
                ctx.request_repaint();
            }
        });
    match spawned {
        Ok(_) => {
            s.running = Some(Running {
                stop,
                events,
                clients: None,
                clients_rx,
                addr: None,
            })
        }
        Err(e) => s.error = Some(format!("cannot start a thread: {e}")),
    }
}

/// Stops serving (every client is closed).
pub fn stop(s: &mut ServeState) {
    s.running = None;
}

/// What the thread said since the last frame.
fn poll(s: &mut ServeState) {
    let Some(r) = s.running.as_mut() else {
        return;
    };
    if let Ok(c) = r.clients_rx.try_recv() {
        r.clients = Some(c);
    }
    let mut failed = None;
    while let Ok(e) = r.events.try_recv() {
        match e {
            Event::Listening(a) => r.addr = Some(a),
            Event::Failed(e) => failed = Some(e),
        }
    }
    if failed.is_some() {
        s.running = None;
        s.error = failed;
    }
}

/// The window's section.
pub fn ui(ui: &mut egui::Ui, s: &mut ServeState, cmds: &mut Vec<Cmd>) {
    poll(s);
    ui.strong("Foxglove WebSocket");
    ui.label(
        "Serves this recording to Foxglove and Lichtblick (Open connection, Foxglove \
         WebSocket): every client plays it on its own clock, as bagscope serve does.",
    );
    ui.horizontal(|ui| {
        ui.label("Port:");
        ui.add_enabled(
            !s.running(),
            egui::TextEdit::singleline(&mut s.port).desired_width(60.0),
        );
        if s.running() {
            if ui.button("Stop serving").clicked() {
                cmds.push(Cmd::ServeStop);
            }
        } else if ui.button("Serve").clicked() {
            cmds.push(Cmd::ServeStart);
        }
    });
    if let Some(r) = &s.running {
        match &r.addr {
            Some(a) => {
                let n = r.clients.as_ref().map_or(0, |c| c.load(Ordering::Relaxed));
                ui.horizontal(|ui| {
                    ui.label(format!("Serving {a}: {n} client(s)"));
                    if ui.small_button("Copy").clicked() {
                        ui.ctx().copy_text(a.clone());
                    }
                });
                // The client count changes without input.
                ui.ctx().request_repaint_after(Duration::from_secs(1));
            }
            None => {
                ui.label("Starting…");
            }
        }
    }
    if let Some(e) = &s.error {
        ui.colored_label(ui.visuals().error_fg_color, e);
    }
}

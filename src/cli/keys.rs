//! The keys of `ros2 bag play` while playing in a terminal: space pauses and resumes, `s`
//! steps while paused, the arrows change the rate, `q` or Ctrl-C stops. Only when stdin is a
//! terminal; the terminal is put back as it was when playing ends.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use crossterm::event::{self, Event, KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use bagscope_live::play::Control;

/// Keys read on a thread of their own while the terminal is in raw mode.
pub struct Keys {
    rx: Receiver<Control>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Keys {
    /// Starts reading keys, or None when stdin is not a terminal (nothing is read then).
    pub fn start() -> Option<Keys> {
        if !std::io::stdin().is_terminal() || crossterm::terminal::enable_raw_mode().is_err() {
            return None;
        }
        let (tx, rx) = mpsc::sync_channel(64);
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        let thread = std::thread::Builder::new()
            .name("bagscope-keys".into())
            .spawn(move || {
                while !stop2.load(Ordering::Relaxed) {
                    if !event::poll(Duration::from_millis(100)).unwrap_or(false) {
                        continue;
                    }
                    let Ok(Event::Key(k)) = event::read() else {
                        continue;
                    };
                    if let Some(c) = control(&k) {
                        if tx.send(c).is_err() || c == Control::Quit {
                            return;
                        }
                    }
                }
            })
            .ok();
        Some(Keys { rx, stop, thread })
    }

    /// What the keys ask for.
    pub fn receiver(&self) -> &Receiver<Control> {
        &self.rx
    }
}

/// The control a key press means.
fn control(k: &KeyEvent) -> Option<Control> {
    if k.kind != KeyEventKind::Press {
        return None;
    }
    Some(match k.code {
        KeyCode::Char(' ') => Control::TogglePause,
        KeyCode::Char('s') => Control::Step,
        KeyCode::Up | KeyCode::Right => Control::Faster,
        KeyCode::Down | KeyCode::Left => Control::Slower,
        KeyCode::Char('q') => Control::Quit,
        KeyCode::Char('c') if k.modifiers.contains(KeyModifiers::CONTROL) => Control::Quit,
        _ => return None,
    })
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

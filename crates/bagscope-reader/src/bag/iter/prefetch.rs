//! The read-ahead: threads that load chunks in the order an iteration will want them,
//! a window of them held at a time.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use super::chunk::{Loader, Ready, Spare, Work};
use crate::bag::Bag;
use crate::error::{Error, Result};

#[derive(Default)]
pub(super) struct State {
    pub(super) ready: HashMap<u32, Ready>,
    pub(super) claimed: HashSet<u32>,
    /// Chunks claimed and not yet released: at most `window` of them.
    pub(super) live: HashSet<u32>,
    /// Buffers of chunks finished with, for the next chunks read.
    pub(super) spare: Vec<Spare>,
    pub(super) stop: bool,
    /// Read-ahead threads still running.
    pub(super) workers: usize,
}

/// Counts a read-ahead thread out when it ends, however it ends.
struct Running<'a>(&'a Prefetch);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        if let Ok(mut st) = self.0.state.lock() {
            st.workers = st.workers.saturating_sub(1);
        }
        self.0.cv.notify_all();
    }
}

/// A prefetch started (none when not worth it) and its threads.
pub(super) type Started = (Option<Arc<Prefetch>>, Vec<JoinHandle<()>>);

pub(super) struct Prefetch {
    pub(super) order: Vec<u32>,
    pub(super) loader: Arc<Loader>,
    pub(super) next: AtomicUsize,
    pub(super) state: Mutex<State>,
    pub(super) cv: Condvar,
    pub(super) window: usize,
}

impl Prefetch {
    /// Starts `threads` threads loading chunks `order` ahead (none for a single chunk or no
    /// thread).
    pub(super) fn start(
        bag: &Bag,
        order: Vec<u32>,
        loader: Arc<Loader>,
        threads: usize,
    ) -> Result<Started> {
        let mut workers = Vec::new();
        if order.len() <= 1 || threads == 0 {
            return Ok((None, workers));
        }
        let p = Arc::new(Prefetch {
            order,
            loader,
            next: AtomicUsize::new(0),
            state: Mutex::new(State {
                workers: threads,
                ..State::default()
            }),
            cv: Condvar::new(),
            window: threads + 2,
        });
        for i in 0..threads {
            let (p, b) = (p.clone(), bag.clone());
            let h = std::thread::Builder::new()
                .name(format!("bagscope-decompress-{i}"))
                .spawn(move || p.worker(&b))?;
            workers.push(h);
        }
        Ok((Some(p), workers))
    }

    pub(super) fn worker(self: &Arc<Self>, bag: &Bag) {
        let _running = Running(self);
        let mut work = Work::default();
        loop {
            let (c, reuse) = {
                let Ok(mut st) = self.state.lock() else {
                    return;
                };
                loop {
                    // Done once every chunk is claimed: a thread that waited for room in the
                    // window only to find nothing left kept the reader waiting at the end, on
                    // its wake-up and exit, when the reader joined it.
                    if st.stop || self.next.load(Ordering::Relaxed) >= self.order.len() {
                        return;
                    }
                    if st.live.len() < self.window {
                        break;
                    }
                    st = match self.cv.wait(st) {
                        Ok(s) => s,
                        Err(_) => return,
                    };
                }
                let i = self.next.fetch_add(1, Ordering::Relaxed);
                let Some(&c) = self.order.get(i) else { return };
                if !st.claimed.insert(c) {
                    continue;
                }
                st.live.insert(c);
                (c, st.spare.pop().unwrap_or_default())
            };
            let r = self.loader.load(bag, c, reuse, &mut work);
            if let Ok(mut st) = self.state.lock() {
                st.ready.insert(c, r);
            }
            self.cv.notify_all();
        }
    }

    /// Waits for chunk `c`, loading it here only if no read-ahead thread will take it (none
    /// is left, or the window is full of chunks held); each chunk is taken once (an error
    /// stays for whoever asks again). The threads already keep the cores busy: a load here
    /// would only contend with them, in buffers of its own.
    pub(super) fn get(&self, bag: &Bag, c: u32, work: &mut Work) -> Ready {
        let lost = || Error::ThreadPanicked("a read-ahead thread");
        let mut st = self.state.lock().map_err(|_| lost())?;
        loop {
            match st.ready.remove(&c) {
                Some(Ok(l)) => return Ok(l),
                Some(Err(e)) => {
                    st.ready.insert(c, Err(e.clone()));
                    return Err(e);
                }
                None => {}
            }
            if !st.claimed.contains(&c) && (st.workers == 0 || st.live.len() >= self.window) {
                st.claimed.insert(c);
                st.live.insert(c);
                let reuse = st.spare.pop().unwrap_or_default();
                drop(st);
                let r = self.loader.load(bag, c, reuse, work);
                if let Err(e) = &r {
                    self.state
                        .lock()
                        .map_err(|_| lost())?
                        .ready
                        .insert(c, Err(e.clone()));
                }
                return r;
            }
            st = self.cv.wait(st).map_err(|_| lost())?;
        }
    }

    /// Chunk `c` is finished with; its buffers, when nothing else holds them, serve again.
    pub(super) fn release(&self, c: u32, spare: Option<Spare>) {
        if let Ok(mut st) = self.state.lock() {
            st.ready.remove(&c);
            st.live.remove(&c);
            if let Some(buf) = spare {
                if st.spare.len() < self.window {
                    st.spare.push(buf);
                }
            }
        }
        self.cv.notify_all();
    }
}

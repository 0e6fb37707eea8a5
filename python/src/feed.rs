//! Where the package's message iterators take their messages from: the library's iterator run
//! on a thread of its own, which hands over batches through a bounded channel, so that reading
//! (chunk records parsed, connections merged in time order, each message's bytes found) goes on
//! beside the Python thread that makes objects of the messages before.

use std::collections::VecDeque;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Mutex;

use pyo3::prelude::*;
use pyo3::sync::MutexExt;

use bagscope_reader::bag::iter::Messages as Reader;
use bagscope_reader::{Error, Message, Result};

/// Messages a batch holds at most, and the bytes after which it is sent with fewer.
const BATCH: usize = 2048;
const BATCH_BYTES: usize = 2 << 20;
/// Batches read ahead and not yet taken. With the one being filled and the one being handed
/// out, at most four batches are held whatever the recording: about 8 MiB of messages (a batch
/// ends with the message that takes it past 2 MiB). Larger batches held more than the reading
/// gains: at 8 MiB, iterating a 5 GB camera bag peaked at 76 MiB resident instead of 47.
const AHEAD: usize = 2;

enum Batch {
    Some(VecDeque<Result<Message>>),
    /// The library's iterator ended: nothing follows.
    End,
}

/// The messages of one iteration, in order.
pub(crate) struct Feed {
    state: Mutex<State>,
}

struct State {
    /// The library's iterator, until the first message is asked for (the thread starts then:
    /// an iterator made and never used reads nothing).
    idle: Option<Reader>,
    rx: Option<Receiver<Batch>>,
    ready: VecDeque<Result<Message>>,
    ended: bool,
    /// Whether each message is copied out of a large chunk (`Bytes::detach`) on the reading
    /// thread: for messages a caller may keep.
    detach: bool,
}

impl Feed {
    pub(crate) fn new(it: Reader) -> Feed {
        Feed {
            state: Mutex::new(State {
                idle: Some(it),
                rx: None,
                ready: VecDeque::new(),
                ended: false,
                detach: true,
            }),
        }
    }

    /// Messages left in their chunks (for a caller that copies each out and drops it before the
    /// next). Before the first message only.
    pub(crate) fn without_copies(&self) {
        if let Ok(mut s) = self.state.lock() {
            s.detach = false;
        }
    }

    /// The next message, None after the last. Waits (the GIL let go) only where the reading
    /// thread has no batch ready.
    pub(crate) fn next(&self, py: Python<'_>) -> Option<Result<Message>> {
        // Another Python thread on the same iterator may hold the state while it waits on the
        // reading thread, the GIL let go: waited for likewise, never with the GIL held.
        let Ok(mut s) = self.state.lock_py_attached(py) else {
            return Some(Err(Error::ThreadPanicked("a message iterator")));
        };
        if let Some(m) = s.ready.pop_front() {
            return Some(m);
        }
        if s.ended {
            return None;
        }
        if let Some(it) = s.idle.take() {
            let (tx, rx) = sync_channel(AHEAD);
            let detach = s.detach;
            let started = std::thread::Builder::new()
                .name("bagscope-read".into())
                .spawn(move || read(it, detach, tx));
            match started {
                Ok(_) => s.rx = Some(rx),
                Err(e) => {
                    s.ended = true;
                    return Some(Err(Error::Io(e)));
                }
            }
        }
        let got = match s.rx.take() {
            Some(rx) => {
                let (rx, got) = py.detach(move || {
                    let got = rx.recv();
                    (rx, got)
                });
                s.rx = Some(rx);
                got
            }
            None => Ok(Batch::End),
        };
        match got {
            Ok(Batch::Some(batch)) => {
                s.ready = batch;
                s.ready.pop_front()
            }
            Ok(Batch::End) => {
                s.ended = true;
                s.rx = None;
                None
            }
            // The thread is gone without saying the iteration ended: it panicked.
            Err(_) => {
                s.ended = true;
                s.rx = None;
                Some(Err(Error::ThreadPanicked("the message reading thread")))
            }
        }
    }
}

/// The reading thread: batches until the iterator ends or the feed is dropped (a send fails).
fn read(mut it: Reader, detach: bool, tx: SyncSender<Batch>) {
    loop {
        let mut batch = VecDeque::with_capacity(BATCH);
        let mut bytes = 0usize;
        while batch.len() < BATCH && bytes < BATCH_BYTES {
            match it.next() {
                Some(m) => {
                    bytes += m.as_ref().map_or(0, |m| m.data.len());
                    // Copied out of its chunk here, where the chunk is a large buffer of which
                    // the message is a small part (`Bytes::detach`), rather than on the Python
                    // thread.
                    batch.push_back(m.map(|mut m| {
                        if detach {
                            m.data = m.data.detach();
                        }
                        m
                    }));
                }
                None => break,
            }
        }
        let last = batch.len() < BATCH && bytes < BATCH_BYTES;
        if !batch.is_empty() && tx.send(Batch::Some(batch)).is_err() {
            return;
        }
        if last {
            let _ = tx.send(Batch::End);
            return;
        }
    }
}

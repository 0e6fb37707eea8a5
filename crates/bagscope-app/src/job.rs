//! The one way the app runs work in the background: a [`Job`] is a named thread that hands its
//! results to the UI over a bounded channel, can be cancelled, reports progress, and asks for a
//! repaint whenever it has something. A [`Service`] is a job that also takes requests, where only
//! the newest one matters (the inspector, the image panels, the thumbnails).
//!
//! The UI thread only ever calls the non-blocking side ([`Job::take`], [`Job::latest`],
//! [`Service::ask`]); the worker side ([`Handle::send`], [`Requests::latest`]) may block.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};
use std::sync::Arc;

/// How far a job has got (any unit the job chooses: messages, bytes).
#[derive(Debug, Default)]
pub struct Progress {
    done: AtomicU64,
    total: AtomicU64,
}

/// The worker's side of a job: where it sends, whether it is cancelled, its progress.
pub struct Handle<U> {
    tx: SyncSender<U>,
    cancel: Arc<AtomicBool>,
    progress: Arc<Progress>,
    ctx: egui::Context,
}

impl<U> Clone for Handle<U> {
    fn clone(&self) -> Self {
        Handle {
            tx: self.tx.clone(),
            cancel: Arc::clone(&self.cancel),
            progress: Arc::clone(&self.progress),
            ctx: self.ctx.clone(),
        }
    }
}

impl<U> Handle<U> {
    /// Sends an update and asks for a repaint. Waits while the UI is behind (the channel is
    /// bounded); `false` when the UI has dropped the job, so the worker stops.
    pub fn send(&self, u: U) -> bool {
        let ok = self.tx.send(u).is_ok();
        self.ctx.request_repaint();
        ok
    }

    /// Sends an update unless the channel is full (a newer one will supersede it); `false` only
    /// when the UI has dropped the job.
    pub fn offer(&self, u: U) -> bool {
        match self.tx.try_send(u) {
            Ok(()) | Err(TrySendError::Full(_)) => {
                self.ctx.request_repaint();
                true
            }
            Err(TrySendError::Disconnected(_)) => false,
        }
    }

    /// Whether the UI cancelled the job.
    pub fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// The cancel flag, for library calls that take one.
    pub fn cancel_flag(&self) -> &AtomicBool {
        &self.cancel
    }

    /// Sets the progress the UI shows.
    pub fn progress(&self, done: u64, total: u64) {
        self.progress.done.store(done, Ordering::Relaxed);
        self.progress.total.store(total, Ordering::Relaxed);
    }

    /// Runs `work` on a helper thread named `name` that sends into the same job (the loader's
    /// Bag info text). A helper that cannot start sends what `failed` makes of the reason.
    pub fn helper(
        &self,
        name: &str,
        work: impl FnOnce(&Handle<U>) + Send + 'static,
        failed: impl FnOnce(String) -> U,
    ) where
        U: Send + 'static,
    {
        let h = self.clone();
        if let Err(e) = std::thread::Builder::new()
            .name(format!("bagscope-{name}"))
            .spawn(move || work(&h))
        {
            self.send(failed(format!("cannot start a thread: {e}")));
        }
    }
}

/// A background job as the UI holds it. Dropping it cancels the work.
pub struct Job<U> {
    rx: Receiver<U>,
    cancel: Arc<AtomicBool>,
    progress: Arc<Progress>,
    ended: bool,
}

impl<U: Send + 'static> Job<U> {
    /// Runs `work` on a thread named `bagscope-{name}`, with room for `capacity` updates the UI
    /// has not taken yet. Fails only when the system cannot start a thread.
    pub fn spawn(
        name: &str,
        capacity: usize,
        ctx: &egui::Context,
        work: impl FnOnce(&Handle<U>) + Send + 'static,
    ) -> Result<Job<U>, String> {
        let (tx, rx) = sync_channel(capacity.max(1));
        let cancel = Arc::new(AtomicBool::new(false));
        let progress = Arc::new(Progress::default());
        let h = Handle {
            tx,
            cancel: Arc::clone(&cancel),
            progress: Arc::clone(&progress),
            ctx: ctx.clone(),
        };
        std::thread::Builder::new()
            .name(format!("bagscope-{name}"))
            .spawn(move || {
                below_the_ui();
                work(&h);
                h.ctx.request_repaint();
            })
            .map_err(|e| format!("cannot start a thread for {name}: {e}"))?;
        Ok(Job {
            rx,
            cancel,
            progress,
            ended: false,
        })
    }

    /// A job that has already ended with `last` as its only update (an error found before any
    /// thread was needed, or a thread that could not start).
    pub fn done(last: U) -> Job<U> {
        let (tx, rx) = sync_channel(1);
        let _ = tx.send(last);
        Job {
            rx,
            cancel: Arc::default(),
            progress: Arc::default(),
            ended: false,
        }
    }
}

impl<U> Job<U> {
    /// The next update, if one is waiting (never blocks).
    pub fn take(&mut self) -> Option<U> {
        match self.rx.try_recv() {
            Ok(u) => Some(u),
            Err(TryRecvError::Empty) => None,
            Err(TryRecvError::Disconnected) => {
                self.ended = true;
                None
            }
        }
    }

    /// Waits up to `timeout` for the next update: for tests, never for the UI thread.
    pub fn wait(&mut self, timeout: std::time::Duration) -> Option<U> {
        match self.rx.recv_timeout(timeout) {
            Ok(u) => Some(u),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => None,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                self.ended = true;
                None
            }
        }
    }

    /// The newest update waiting, the older ones dropped (never blocks).
    pub fn latest(&mut self) -> Option<U> {
        let mut last = None;
        while let Some(u) = self.take() {
            last = Some(u);
        }
        last
    }

    /// Whether the worker has finished and every update was taken.
    pub fn ended(&self) -> bool {
        self.ended
    }

    /// Asks the worker to stop.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }

    /// Progress as the worker last set it: (done, total).
    pub fn progress(&self) -> (u64, u64) {
        (
            self.progress.done.load(Ordering::Relaxed),
            self.progress.total.load(Ordering::Relaxed),
        )
    }
}

impl<U> Drop for Job<U> {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// The requests a [`Service`]'s worker receives.
pub struct Requests<Q> {
    rx: Receiver<Q>,
}

impl<Q> Requests<Q> {
    /// Waits for a request, then skips to the newest one queued; `None` when the UI dropped
    /// the service.
    pub fn latest(&self) -> Option<Q> {
        let mut q = self.rx.recv().ok()?;
        while let Ok(n) = self.rx.try_recv() {
            q = n;
        }
        Some(q)
    }

    /// Waits for the next request; `None` when the UI dropped the service.
    pub fn recv(&self) -> Option<Q> {
        self.rx.recv().ok()
    }

    /// Waits at most `d` for the next request.
    pub fn recv_timeout(
        &self,
        d: std::time::Duration,
    ) -> Result<Q, std::sync::mpsc::RecvTimeoutError> {
        self.rx.recv_timeout(d)
    }

    /// The next request if one is queued (never blocks).
    pub fn try_recv(&self) -> Option<Q> {
        self.rx.try_recv().ok()
    }
}

/// A job that serves requests: the UI asks without waiting, requests the queue has no room
/// for wait in the service and are replaced by newer ones asking for the same thing.
pub struct Service<Q, U> {
    job: Job<U>,
    tx: SyncSender<Q>,
    pending: Vec<Q>,
}

impl<Q: Send + 'static, U: Send + 'static> Service<Q, U> {
    /// Runs `work` on a thread named `bagscope-{name}` with room for `queue` requests and
    /// `capacity` results.
    pub fn spawn(
        name: &str,
        queue: usize,
        capacity: usize,
        ctx: &egui::Context,
        work: impl FnOnce(Requests<Q>, &Handle<U>) + Send + 'static,
    ) -> Result<Service<Q, U>, String> {
        let (tx, rx) = sync_channel(queue.max(1));
        let job = Job::spawn(name, capacity, ctx, move |h| work(Requests { rx }, h))?;
        Ok(Service {
            job,
            tx,
            pending: Vec::new(),
        })
    }
}

impl<Q, U> Service<Q, U> {
    /// Asks for `q`; a request still waiting that `same` says asks for the same thing is
    /// replaced. Never blocks.
    pub fn ask(&mut self, q: Q, same: impl Fn(&Q, &Q) -> bool) {
        self.pending.retain(|p| !same(p, &q));
        self.pending.push(q);
        self.flush();
    }

    /// Hands on the requests the queue had no room for.
    pub fn flush(&mut self) {
        while !self.pending.is_empty() {
            let q = self.pending.remove(0);
            match self.tx.try_send(q) {
                Ok(()) | Err(TrySendError::Disconnected(_)) => {}
                Err(TrySendError::Full(q)) => {
                    self.pending.insert(0, q);
                    break;
                }
            }
        }
    }

    /// The next result, if one is waiting (never blocks).
    pub fn take(&mut self) -> Option<U> {
        self.job.take()
    }
}

/// The nice value of a worker's thread: below the UI thread's (0).
#[cfg(target_os = "linux")]
const WORKER_NICE: i32 = 5;

/// Puts the calling worker thread below the UI thread, so that where both want a core the
/// frame is drawn first (the threads a worker starts, a read's decompression threads say,
/// inherit it). Measured on two cores: while three derived series of a million points were
/// read, the UI frame's p99 was 2.5-13.5 ms from run to run with the workers level with it
/// (docs/benchmarks/2026-11-30-ui-frame-five-runs.md). Where it cannot be set, nothing changes.
fn below_the_ui() {
    #[cfg(target_os = "linux")]
    {
        let tid = rustix::thread::gettid();
        let _ = rustix::process::setpriority_process(Some(tid), WORKER_NICE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn wait_for<U>(job: &mut Job<U>) -> Option<U> {
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            if let Some(u) = job.take() {
                return Some(u);
            }
            if job.ended() {
                return None;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        None
    }

    #[test]
    fn a_job_sends_reports_progress_and_ends() {
        let ctx = egui::Context::default();
        let mut job = Job::spawn("test", 1, &ctx, |h: &Handle<u32>| {
            h.progress(3, 4);
            for i in 0..5 {
                if !h.send(i) {
                    return;
                }
            }
        })
        .unwrap();
        let got: Vec<u32> = std::iter::from_fn(|| wait_for(&mut job)).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4]);
        assert!(job.ended());
        assert_eq!(job.progress(), (3, 4));
    }

    #[test]
    fn dropping_a_job_cancels_it() {
        let ctx = egui::Context::default();
        let (tx, rx) = std::sync::mpsc::channel();
        let job = Job::spawn("test", 1, &ctx, move |h: &Handle<()>| {
            let t0 = Instant::now();
            while !h.cancelled() && t0.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(1));
            }
            let _ = tx.send(h.cancelled());
        })
        .unwrap();
        drop(job);
        assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(true));
    }

    #[test]
    fn a_service_works_on_the_newest_request() {
        let ctx = egui::Context::default();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let mut s = Service::spawn("test", 8, 8, &ctx, move |reqs: Requests<u32>, h| {
            // Held until the UI has queued several requests.
            let _ = go_rx.recv();
            while let Some(q) = reqs.latest() {
                if !h.send(q * 10) {
                    return;
                }
            }
        })
        .unwrap();
        for q in 1..=5 {
            s.ask(q, |_, _| false);
        }
        go_tx.send(()).unwrap();
        assert_eq!(wait_for(&mut s.job), Some(50));
        s.ask(7, |_, _| false);
        assert_eq!(wait_for(&mut s.job), Some(70));
    }

    #[test]
    fn requests_waiting_for_room_are_replaced_by_newer_ones() {
        let ctx = egui::Context::default();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let mut s = Service::spawn("test", 1, 8, &ctx, move |reqs: Requests<(u8, u32)>, h| {
            let _ = go_rx.recv();
            while let Some(q) = reqs.recv() {
                h.send(q);
            }
        })
        .unwrap();
        s.ask((0, 1), |a, b| a.0 == b.0);
        // The queue (one) is full: these wait in the service, panel 0's replaced.
        s.ask((1, 2), |a, b| a.0 == b.0);
        s.ask((0, 3), |a, b| a.0 == b.0);
        assert_eq!(s.pending, vec![(1, 2), (0, 3)]);
        go_tx.send(()).unwrap();
        assert_eq!(wait_for(&mut s.job), Some((0, 1)));
        let t0 = Instant::now();
        while !s.pending.is_empty() && t0.elapsed() < Duration::from_secs(10) {
            s.flush();
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(wait_for(&mut s.job), Some((1, 2)));
        assert_eq!(wait_for(&mut s.job), Some((0, 3)));
    }
}

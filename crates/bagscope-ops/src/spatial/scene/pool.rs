//! Scenes no longer shown, kept for the next scene to fill again ([`ScenePool`]): a scene of
//! millions of points is neither freed nor allocated anew ten times a second, so no thread (the
//! UI's least) waits while the kernel unmaps and maps hundreds of megabytes.

use std::sync::mpsc::{channel, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};

use super::Scene;

/// Kept scenes' buffers are freed after this many seconds without a new one.
pub(super) const RECYCLE_KEEP_S: u64 = 10;

/// Scenes smaller than this are freed where they are dropped.
pub(super) const RECYCLE_BYTES: usize = 4 << 20;

/// Scenes kept at once; more are freed on the pool's thread.
const KEEP: usize = 2;

/// A pool of scene buffers, owned by whoever builds scenes (the app) and handed to each
/// [`super::Builder`] ([`super::Builder::with_pool`]). A scene the builder takes from it goes
/// back when it is dropped: its buffers are moved to the pool's thread, which empties them and
/// keeps two scenes' worth for the next builds, and frees them after 10 s
/// without a new scene. The thread is started by [`ScenePool::new`] and ends once the pool and
/// every scene taken from it are dropped. Cheap to clone (one pool, shared).
#[derive(Clone)]
pub struct ScenePool {
    tx: Arc<Mutex<Sender<Scene>>>,
    kept: Arc<Mutex<Vec<Scene>>>,
}

impl std::fmt::Debug for ScenePool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScenePool").finish_non_exhaustive()
    }
}

impl ScenePool {
    /// A pool and its thread (`bagscope-scene-recycle`).
    pub fn new() -> std::io::Result<ScenePool> {
        let (tx, rx) = channel::<Scene>();
        let kept: Arc<Mutex<Vec<Scene>>> = Arc::new(Mutex::new(Vec::new()));
        let shelf = Arc::clone(&kept);
        std::thread::Builder::new()
            .name("bagscope-scene-recycle".into())
            .spawn(move || loop {
                match rx.recv_timeout(std::time::Duration::from_secs(RECYCLE_KEEP_S)) {
                    Ok(mut s) => {
                        // Kept without its handle, so that a kept scene does not keep the
                        // pool's channel open.
                        s.pool = None;
                        s.empty_into_spare();
                        let mut k = shelf.lock().unwrap_or_else(|e| e.into_inner());
                        if k.len() < KEEP {
                            k.push(s);
                        }
                    }
                    // No scene for a while (the panels closed, or a still playhead): what is
                    // kept is freed, here.
                    Err(RecvTimeoutError::Timeout) => {
                        let old =
                            std::mem::take(&mut *shelf.lock().unwrap_or_else(|e| e.into_inner()));
                        drop(old);
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            })?;
        Ok(ScenePool {
            tx: Arc::new(Mutex::new(tx)),
            kept,
        })
    }

    /// A scene to fill: an earlier one's buffers when the pool has one. It comes back to the
    /// pool when dropped.
    pub(super) fn take(&self) -> Scene {
        let old = self.kept.lock().ok().and_then(|mut k| k.pop());
        let mut s = old.unwrap_or_default();
        s.pool = Some(self.clone());
        s
    }

    /// Hands `scene` to the pool's thread.
    pub(super) fn give(&self, scene: Scene) {
        if let Ok(tx) = self.tx.lock() {
            // The thread has ended only if it panicked: the scene is then freed here.
            let _ = tx.send(scene);
        }
    }
}

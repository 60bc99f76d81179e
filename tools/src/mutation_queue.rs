//! Serialises edits and writes to one file, so concurrent tool calls never interleave.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;

use tokio::sync::OwnedMutexGuard;

use crate::paths::canonical_key;

/// Per-file locks keyed by canonical path; entries vanish when nobody holds them.
#[derive(Default)]
pub struct MutationQueue {
    locks: Mutex<HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>>,
}

impl MutationQueue {
    /// The process-wide queue shared by every file-mutating tool.
    pub fn global() -> &'static MutationQueue {
        static QUEUE: OnceLock<MutationQueue> = OnceLock::new();
        QUEUE.get_or_init(MutationQueue::default)
    }

    /// Wait for exclusive access to `path`; the guard releases it.
    pub async fn lock(&self, path: &Path) -> OwnedMutexGuard<()> {
        let key = canonical_key(path);
        let lock = {
            let mut map = self.locks.lock();
            map.retain(|_, w| w.strong_count() > 0);
            match map.get(&key).and_then(Weak::upgrade) {
                Some(l) => l,
                None => {
                    let l = Arc::new(tokio::sync::Mutex::new(()));
                    map.insert(key, Arc::downgrade(&l));
                    l
                }
            }
        };
        lock.lock_owned().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn one_file_is_never_held_twice_and_different_files_do_not_wait() {
        let dir = tempfile::tempdir().unwrap();
        let queue = Arc::new(MutationQueue::default());
        let inside = Arc::new(AtomicUsize::new(0));
        let mut tasks = Vec::new();
        for i in 0..16 {
            let (q, inside) = (queue.clone(), inside.clone());
            // Two spellings of the same file must share a lock.
            let path = if i % 2 == 0 {
                dir.path().join("f.txt")
            } else {
                dir.path().join("sub/../f.txt")
            };
            std::fs::create_dir_all(dir.path().join("sub")).unwrap();
            tasks.push(tokio::spawn(async move {
                let _g = q.lock(&path).await;
                assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0);
                tokio::task::yield_now().await;
                inside.fetch_sub(1, Ordering::SeqCst);
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let _a = queue.lock(&dir.path().join("a")).await;
        let _b = queue.lock(&dir.path().join("b")).await;
    }
}

//! How the checker splits work over cores: one policy for every part of it.
//!
//! Work that splits into independent pieces (the walk's folders, the resolution's
//! runs of files, the codec's halves and renumbering, a move's runs of replaced
//! files, the cache encoded beside a check) runs on rayon's pool, which sizes
//! itself to the cores (or `RAYON_NUM_THREADS`) and keeps its threads between the
//! phases of a command instead of starting new ones for each. Measured against the
//! per-phase scoped threads it replaced in BENCHMARKS.md ("One thread pool").
//!
//! One kind of work does not go on the pool: a stage another stage waits for (the
//! cache loaded while the walk runs; the walk's tasks block until it is there). On
//! a pool of one thread, a task waiting for a task queued behind it would wait for
//! ever; such a stage gets a thread of its own.

/// Runs `work` on the shared pool, or, for `threads` other than 0, on a pool of
/// that many threads (tests use it to show the result is the same however the
/// work is cut). A pool that cannot be started runs `work` on the shared one.
pub(crate) fn on_threads<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> T {
    if threads == 0 {
        return work();
    }
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

//! Work split over threads.

/// What each of `threads` returned, in order; a thread's panic goes on in the
/// caller as it was (the checker's work split over threads fails as it would on
/// one). Spawn them all before (into a `Vec`): a lazy iterator would start each
/// thread only once the one before had ended.
pub(crate) fn joined<'scope, T>(
    threads: impl IntoIterator<Item = std::thread::ScopedJoinHandle<'scope, T>>,
) -> Vec<T> {
    (threads.into_iter())
        .map(|thread| match thread.join() {
            Ok(value) => value,
            Err(panic) => std::panic::resume_unwind(panic),
        })
        .collect()
}

//! The hash map and set of the checker's hot paths (paths, reference texts).

/// The hash map of the checker's hot paths (paths, reference texts): foldhash,
/// seeded per process, hashes a short string several times faster than the standard
/// SipHash, which was a tenth of building the graph of 100,000 files.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// The hash set of the same hot paths (see [`FastMap`]).
pub(crate) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

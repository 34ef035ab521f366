//! Shared data generators for the benchmarks.

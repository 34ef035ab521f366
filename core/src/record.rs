//! Instance records as blobs store them: little-endian fields at fixed offsets.
//! Component types write them when a level is compiled ([`RecordWriter`]) and
//! read them when it is spawned ([`RecordReader`], or the fixed-offset helpers
//! the built-in managers use), as a plugin's component does through its ABI.

use glam::Vec3;

/// Reads little-endian values from an instance record.
#[derive(Debug, Clone, Copy)]
pub struct RecordReader<'a>(&'a [u8]);

impl<'a> RecordReader<'a> {
    /// Reads from `bytes`; reads past the end yield zero (callers check sizes first).
    pub fn new(bytes: &'a [u8]) -> Self {
        RecordReader(bytes)
    }
    fn take<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        if self.0.len() >= N {
            out.copy_from_slice(&self.0[..N]);
            self.0 = &self.0[N..];
        }
        out
    }
    /// Next `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }
    /// Next `u64`.
    pub fn u64(&mut self) -> u64 {
        u64::from_le_bytes(self.take())
    }
    /// Next `f32`.
    pub fn f32(&mut self) -> f32 {
        f32::from_le_bytes(self.take())
    }
    /// Next three `f32`.
    pub fn vec3(&mut self) -> Vec3 {
        Vec3::new(self.f32(), self.f32(), self.f32())
    }
}

/// Appends little-endian values to an instance record.
pub trait RecordWriter {
    /// Appends a `u32`.
    fn put_u32(&mut self, v: u32);
    /// Appends a `u64`.
    fn put_u64(&mut self, v: u64);
    /// Appends an `f32`.
    fn put_f32(&mut self, v: f32);
    /// Appends three `f32`.
    fn put_vec3(&mut self, v: Vec3) {
        self.put_f32(v.x);
        self.put_f32(v.y);
        self.put_f32(v.z);
    }
}

impl RecordWriter for Vec<u8> {
    fn put_u32(&mut self, v: u32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_u64(&mut self, v: u64) {
        self.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f32(&mut self, v: f32) {
        self.extend_from_slice(&v.to_le_bytes());
    }
}

/// Record `k` of `data`, whose records are `N` bytes each; zeros past the end
/// (callers check record sizes first). One range check per record: the fields are
/// then read at fixed offsets of an array, with none.
#[inline]
pub(crate) fn record<const N: usize>(data: &[u8], k: usize) -> [u8; N] {
    data.get(k * N..(k + 1) * N)
        .and_then(|bytes| bytes.try_into().ok())
        .unwrap_or([0; N])
}

/// The little-endian `u32` at byte `at` of `record`.
#[inline]
pub(crate) fn u32_in<const N: usize>(record: &[u8; N], at: usize) -> u32 {
    u32::from_le_bytes([record[at], record[at + 1], record[at + 2], record[at + 3]])
}

/// The little-endian `u64` at byte `at` of `record`.
#[inline]
pub(crate) fn u64_in<const N: usize>(record: &[u8; N], at: usize) -> u64 {
    u64::from(u32_in(record, at)) | (u64::from(u32_in(record, at + 4)) << 32)
}

/// The `f32` at byte `at` of `record`.
#[inline]
pub(crate) fn f32_in<const N: usize>(record: &[u8; N], at: usize) -> f32 {
    f32::from_bits(u32_in(record, at))
}

/// The three `f32` at byte `at` of `record`.
#[inline]
pub(crate) fn vec3_in<const N: usize>(record: &[u8; N], at: usize) -> Vec3 {
    Vec3::new(
        f32_in(record, at),
        f32_in(record, at + 4),
        f32_in(record, at + 8),
    )
}

//! Plugins for people without a toolchain: libraries an engineer built and the team
//! commits, each with a stamp of the sources it came from.
//!
//! `kiln plugins prebuild` writes, for each plugin folder with sources,
//! `<folder>/prebuilt/<platform>/plugin.<suffix>` and `stamp.json` beside it:
//!
//! ```json
//! {"sources": "5d1c9a0e7b3f2a18", "platform": "x86_64-linux", "kiln": "0.1.0", "types": ["wind"]}
//! ```
//!
//! `sources` is the plugin's source stamp (names and contents of its files but
//! `Cargo.lock`, the same on every machine); `types` the component types it registers, so that a level using
//! one can name the plugin even when it does not load. Kiln loads a prebuilt library
//! when its stamp matches the sources, and, with a warning, when the sources changed
//! but nothing on the machine can build them. The ABI's tables are versioned and
//! never change once released, so a library built by an older `kiln` keeps loading.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

/// The platform a library is built for, as its prebuilt folder is named:
/// `x86_64-linux`, `aarch64-macos`, `x86_64-windows`.
pub fn platform() -> String {
    format!("{}-{}", std::env::consts::ARCH, std::env::consts::OS)
}

/// The prebuilt library's file name.
pub fn library_name() -> String {
    format!("plugin{}", std::env::consts::DLL_SUFFIX)
}

/// The stamp file's name.
pub const STAMP_FILE: &str = "stamp.json";

/// What a prebuilt library's stamp says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamp {
    /// The source stamp it was built from.
    pub sources: u64,
    /// The component types it registers.
    pub types: Vec<String>,
    /// The `kiln` that built it.
    pub kiln: String,
}

impl Stamp {
    /// The stamp as written (canonical JSON, one line per key).
    pub fn to_json(&self) -> String {
        let value = json!({
            "sources": format!("{:016x}", self.sources),
            "platform": platform(),
            "kiln": self.kiln,
            "types": self.types,
        });
        let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
        text.push('\n');
        text
    }

    /// Reads a stamp; `None` when it is not one (a damaged or foreign file is the
    /// same as none: the library is not trusted to match anything).
    pub fn parse(bytes: &[u8]) -> Option<Stamp> {
        let value: Value = serde_json::from_slice(bytes).ok()?;
        let sources = u64::from_str_radix(value.get("sources")?.as_str()?, 16).ok()?;
        let types = value
            .get("types")
            .and_then(Value::as_array)
            .map(|t| {
                t.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let kiln = value
            .get("kiln")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        Some(Stamp {
            sources,
            types,
            kiln,
        })
    }
}

/// The folder of a plugin that holds its prebuilt libraries, one folder per platform.
pub const PREBUILT_DIR: &str = "prebuilt";

/// Where a plugin folder's prebuilt library for this platform is, relative to the
/// folder.
pub fn relative_dir() -> PathBuf {
    Path::new(PREBUILT_DIR).join(platform())
}

/// Whether the program `name` (a command name looked up on `PATH`, or a path) can be
/// run: how Kiln knows whether this machine can build a plugin at all.
pub fn program_exists(name: &std::ffi::OsStr) -> bool {
    let path = Path::new(name);
    if path.components().count() > 1 {
        return is_executable(path);
    }
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|dir| is_executable(&dir.join(name)))
    })
}

fn is_executable(path: &Path) -> bool {
    kiln_core::os::is_executable(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_stamp_reads_back_and_a_damaged_one_is_none() {
        let stamp = Stamp {
            sources: 0x0123_4567_89ab_cdef,
            types: vec!["wind".into(), "gust".into()],
            kiln: "0.1.0".into(),
        };
        let text = stamp.to_json();
        assert!(text.contains("\"sources\": \"0123456789abcdef\""), "{text}");
        assert_eq!(Stamp::parse(text.as_bytes()), Some(stamp));
        assert_eq!(Stamp::parse(b"{\"sources\": \"xyz\"}"), None);
        assert_eq!(Stamp::parse(b"\x00\x01"), None);
        assert_eq!(Stamp::parse(b"[]"), None);
    }

    #[test]
    fn programs_are_found_on_the_path_or_by_their_path() {
        assert!(program_exists(std::ffi::OsStr::new("sh")));
        assert!(program_exists(std::ffi::OsStr::new("/bin/sh")));
        assert!(!program_exists(std::ffi::OsStr::new(
            "no-such-program-kiln"
        )));
        assert!(!program_exists(std::ffi::OsStr::new("/no/such/cc")));
    }
}

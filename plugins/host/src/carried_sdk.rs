//! The Rust SDK this `kiln` carries, for building a project's Rust plugins wherever
//! the project lives.
//!
//! A Rust plugin depends on `kiln_plugin = "0.1"`, as it would on a crate from
//! crates.io. Kiln never publishes the SDK and never points a plugin into its own
//! repository: the SDK's sources are compiled into the `kiln` binary, unpacked under
//! the project's `.kiln/sdk/kiln_plugin/` before a build, and the dependency is
//! patched there on cargo's command line (`--config patch.crates-io...`). So a
//! project copied to any folder, or opened by a `kiln` installed from a package,
//! builds its plugins against exactly the ABI of the `kiln` that loads them, and
//! offline: the patch answers for the registry.

use std::path::{Path, PathBuf};

/// Where the SDK is unpacked, below the project root.
pub const SDK_DIR: &str = kiln_core::own_folder::SDK;

/// The SDK's version (its package's); plugins ask for a compatible one.
pub const SDK_VERSION: &str = kiln_plugin::VERSION;

/// The SDK's manifest as unpacked: the package alone, as its own workspace (the
/// repository's manifest inherits from Kiln's workspace, which a project has not).
fn manifest() -> String {
    format!(
        r#"# The Kiln plugin SDK, unpacked by kiln {version}: do not edit (it is written
# again whenever it differs). Plugins depend on `kiln_plugin = "{version}"`.
[package]
name = "kiln_plugin"
version = "{version}"
edition = "2024"
rust-version = "1.95"
license = "MIT OR Apache-2.0"
description = "The C ABI between Kiln and its plugins, and a safe Rust SDK for writing one"
publish = false

[lib]
path = "src/lib.rs"

[lints.rust]
unsafe_code = "deny"

[workspace]
"#,
        version = SDK_VERSION
    )
}

/// The SDK's source files, as the `kiln` binary carries them (path below the SDK
/// folder, contents). A test checks that this is every file of `plugins/sdk/src`.
pub const SOURCES: &[(&str, &str)] = &[
    ("src/lib.rs", include_str!("../../sdk/src/lib.rs")),
    ("src/abi.rs", include_str!("../../sdk/src/abi.rs")),
    ("src/sdk.rs", include_str!("../../sdk/src/sdk.rs")),
    ("include/kiln_plugin.h", kiln_plugin::C_HEADER),
];

/// Every file of the unpacked SDK: the manifest and [`SOURCES`].
pub fn files() -> Vec<(String, Vec<u8>)> {
    std::iter::once(("Cargo.toml".to_owned(), manifest().into_bytes()))
        .chain(
            SOURCES
                .iter()
                .map(|(path, text)| ((*path).to_owned(), text.as_bytes().to_vec())),
        )
        .collect()
}

/// Unpacks the SDK below the project `root` (only the files that differ, so cargo
/// sees nothing new when nothing is), never through a link; returns its folder.
pub fn unpack(root: &Path) -> std::io::Result<PathBuf> {
    let folder = Path::new(SDK_DIR);
    for (rel, bytes) in files() {
        let rel = folder.join(rel);
        let same = kiln_core::read_below(root, &rel, 1 << 20).is_ok_and(|b| b == bytes);
        if !same {
            kiln_core::write_below(root, &rel, &bytes)?;
        }
    }
    Ok(root.join(folder))
}

/// The `--config` argument that points `kiln_plugin` at the SDK unpacked in
/// `folder`: a TOML string, which a JSON string is (escapes and all).
pub fn patch_argument(folder: &Path) -> Result<String, String> {
    let path = folder.to_str().ok_or_else(|| {
        format!(
            "{} is not UTF-8, which cargo's configuration needs",
            folder.display()
        )
    })?;
    let quoted = serde_json::to_string(path).map_err(|e| e.to_string())?;
    Ok(format!("patch.crates-io.kiln_plugin.path={quoted}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn every_source_of_the_sdk_is_carried_as_it_is() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../sdk/src");
        let mut on_disk: Vec<String> = std::fs::read_dir(&src)
            .unwrap()
            .map(|e| format!("src/{}", e.unwrap().file_name().to_string_lossy()))
            .collect();
        on_disk.sort();
        let mut carried: Vec<String> = SOURCES
            .iter()
            .map(|(p, _)| (*p).to_owned())
            .filter(|p| p.starts_with("src/"))
            .collect();
        carried.sort();
        assert_eq!(
            carried, on_disk,
            "a new SDK module must be added to SOURCES"
        );
        for (path, text) in SOURCES {
            let disk = std::fs::read_to_string(
                Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../sdk")
                    .join(path),
            )
            .unwrap();
            assert_eq!(&disk, text, "{path}");
        }
    }

    #[test]
    fn the_manifest_carries_the_sdks_version() {
        let repo =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../Cargo.toml"))
                .unwrap();
        assert!(
            repo.contains(&format!("version = \"{SDK_VERSION}\"")),
            "{repo}"
        );
        assert!(manifest().contains(&format!("version = \"{SDK_VERSION}\"")));
    }

    #[cfg(unix)]
    #[test]
    fn unpacking_writes_only_what_differs_and_never_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let folder = unpack(dir.path()).unwrap();
        let lib = folder.join("src/lib.rs");
        let written = std::fs::metadata(&lib).unwrap().modified().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        unpack(dir.path()).unwrap();
        assert_eq!(
            std::fs::metadata(&lib).unwrap().modified().unwrap(),
            written
        );
        std::fs::write(&lib, "changed").unwrap();
        unpack(dir.path()).unwrap();
        assert_eq!(std::fs::read_to_string(&lib).unwrap(), SOURCES[0].1);

        let other = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir(other.path().join(".kiln")).unwrap();
        kiln_core::os::symlink(outside.path(), other.path().join(".kiln/sdk")).unwrap();
        assert!(unpack(other.path()).is_err());
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn the_patch_is_a_toml_string_whatever_the_path() {
        let arg = patch_argument(Path::new("/home/a \"b\"\\c/.kiln/sdk/kiln_plugin")).unwrap();
        assert_eq!(
            arg,
            r#"patch.crates-io.kiln_plugin.path="/home/a \"b\"\\c/.kiln/sdk/kiln_plugin""#
        );
    }
}

//! New projects: `kiln new` and File > New project write one of the templates the
//! `kiln` binary carries (see `build.rs`) into a new or empty folder, so that a
//! `kiln` installed anywhere, far from this repository, can start a project.

use std::path::{Path, PathBuf};

use anyhow::Context as _;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/templates.rs"));
}

/// Which project a new one starts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Template {
    /// A level with a ground and a box, two meshes, two materials and the folders.
    #[default]
    Empty,
    /// The demo: two levels, nested prefabs, materials, meshes, textures, glTF art,
    /// and two plugins (Rust and C, prebuilt for Linux).
    Demo,
}

impl Template {
    /// Every template, in the order the editor offers them.
    pub const ALL: [Template; 2] = [Template::Empty, Template::Demo];

    /// Its name in the editor.
    pub fn label(self) -> &'static str {
        match self {
            Template::Empty => "Empty project",
            Template::Demo => "Demo",
        }
    }

    /// One line saying what it holds.
    pub fn describe(self) -> &'static str {
        match self {
            Template::Empty => {
                "One level with a ground and a box; folders for levels, prefabs, materials, meshes, textures and art."
            }
            Template::Demo => {
                "Two levels with hierarchies, nested prefabs, materials, glTF art and two plugins."
            }
        }
    }

    /// The files it writes (path with `/`, bytes).
    pub fn files(self) -> &'static [(&'static str, &'static [u8])] {
        match self {
            Template::Empty => embedded::EMPTY,
            Template::Demo => embedded::DEMO,
        }
    }
}

/// Folders every new project has, whether or not it has files in them yet.
pub const FOLDERS: &[&str] = &["levels", "units", "materials", "meshes", "textures", "art"];

/// What a new project's `.gitignore` leaves out of version control: what Kiln makes
/// again from the project.
const GITIGNORE: &str = "# Kiln's index cache and private builds, and compiled levels: made again from the project.\n.kiln/\nbuild/\n";

/// A project `create` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Created {
    /// Its folder (canonical).
    pub root: PathBuf,
    /// Its name, as `kiln.project` says.
    pub name: String,
    /// How many files were written.
    pub files: usize,
}

/// Writes a project from `template` into `dir`, which must not exist or be empty
/// (a `.git` alone is allowed: `git init` first is fine). `name` goes into
/// `kiln.project` (default: the folder's name). Nothing is written through a link;
/// if a write fails, what was written is removed again.
pub fn create(dir: &Path, template: Template, name: Option<&str>) -> anyhow::Result<Created> {
    match std::fs::symlink_metadata(dir) {
        Ok(m) if !m.is_dir() => anyhow::bail!("{} exists and is not a folder", dir.display()),
        Ok(_) => {
            let listing =
                std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
            let mut others: Vec<String> = listing
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n != ".git")
                .collect();
            if !others.is_empty() {
                others.sort();
                let more = others.len().saturating_sub(4);
                others.truncate(4);
                if more > 0 {
                    others.push(format!("{more} more"));
                }
                anyhow::bail!(
                    "{} is not empty (it holds {}); a new project goes in a new or empty folder",
                    dir.display(),
                    others.join(", ")
                );
            }
        }
        Err(_) => std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the folder {}", dir.display()))?,
    }
    let root = std::fs::canonicalize(dir)
        .with_context(|| format!("finding the folder {}", dir.display()))?;
    let name = match name {
        Some(n) if !n.trim().is_empty() => n.trim().to_owned(),
        _ => root
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "New project".into()),
    };
    let files = populate(&root, template, &name)?;
    // The demo's plugins came with Kiln: the project is trusted by what it holds
    // (`crate::trust::is_carried_demo`), never remembered by its folder, which may
    // hold a cloned `.git` whose next pull brings other code.
    Ok(Created { root, name, files })
}

/// Writes the template into `root`; if a write fails, removes what it wrote (the
/// folder was empty) and says why. Returns how many files it wrote.
fn populate(root: &Path, template: Template, name: &str) -> anyhow::Result<usize> {
    let mut written = Vec::new();
    if let Err(e) = write_template(root, template, name, &mut written) {
        for rel in written.iter().rev() {
            let _ = std::fs::remove_file(root.join(rel));
        }
        // Folders it made are empty again; ones it did not make are kept (a
        // folder that is not empty, or a link, is not removed by remove_dir).
        let mut folders: Vec<PathBuf> = written
            .iter()
            .flat_map(|rel| {
                rel.ancestors()
                    .skip(1)
                    .map(Path::to_owned)
                    .collect::<Vec<_>>()
            })
            .filter(|f| !f.as_os_str().is_empty())
            .chain(FOLDERS.iter().map(PathBuf::from))
            .collect();
        folders.sort_by_key(|f| std::cmp::Reverse(f.components().count()));
        folders.dedup();
        for folder in folders {
            let path = root.join(&folder);
            if std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir()) {
                let _ = std::fs::remove_dir(path);
            }
        }
        return Err(e);
    }
    Ok(written.len())
}

fn write_template(
    root: &Path,
    template: Template,
    name: &str,
    written: &mut Vec<PathBuf>,
) -> anyhow::Result<()> {
    let mut files: Vec<(&str, std::borrow::Cow<'static, [u8]>)> = template
        .files()
        .iter()
        .map(|(rel, bytes)| (*rel, std::borrow::Cow::Borrowed(*bytes)))
        .collect();
    for (rel, bytes) in &mut files {
        if *rel == kiln_core::project::PROJECT_FILE {
            *bytes = std::borrow::Cow::Owned(named_project_file(bytes, name)?);
        }
    }
    files.push((
        ".gitignore",
        std::borrow::Cow::Borrowed(GITIGNORE.as_bytes()),
    ));
    for (rel, bytes) in files {
        let rel = PathBuf::from(rel);
        kiln_core::write_below(root, &rel, &bytes)
            .with_context(|| format!("writing {}", root.join(&rel).display()))?;
        written.push(rel);
    }
    for folder in FOLDERS {
        kiln_core::create_dir_below(root, Path::new(folder))
            .with_context(|| format!("creating {}", root.join(folder).display()))?;
    }
    Ok(())
}

/// The template's `kiln.project` with `name`, in canonical JSON.
fn named_project_file(bytes: &[u8], name: &str) -> anyhow::Result<Vec<u8>> {
    let mut config: serde_json::Map<String, serde_json::Value> =
        serde_json::from_slice(bytes).context("the template's kiln.project")?;
    config.insert("name".into(), serde_json::Value::String(name.to_owned()));
    let mut text = kiln_core::json_format::to_canonical_string(&serde_json::Value::Object(config));
    if !text.ends_with('\n') {
        text.push('\n');
    }
    Ok(text.into_bytes())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_binary_carries_the_templates_and_nothing_generated() {
        for template in Template::ALL {
            let files: Vec<&str> = template.files().iter().map(|(p, _)| *p).collect();
            assert!(files.contains(&"kiln.project"), "{files:?}");
            assert!(
                files.iter().all(|f| !f.starts_with(".kiln")
                    && !f.starts_with("build/")
                    && !f.contains("/target/")
                    && !f.split('/').any(|part| part.starts_with('.'))),
                "{files:?}"
            );
        }
        let demo: Vec<&str> = Template::Demo.files().iter().map(|(p, _)| *p).collect();
        for needed in [
            "levels/forest.level",
            "plugins/wind/Cargo.toml",
            "plugins/wind/Cargo.lock",
            "plugins/blink/blink.c",
            "art/canopy.gltf",
        ] {
            assert!(demo.contains(&needed), "{needed} missing: {demo:?}");
        }
    }

    #[test]
    fn a_folder_that_is_not_empty_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        let e = create(dir.path(), Template::Empty, None).unwrap_err();
        assert!(
            e.to_string().contains("is not empty (it holds notes.txt)"),
            "{e}"
        );
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // A fresh `git init` is fine.
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        create(repo.path(), Template::Empty, Some("Mine")).unwrap();
        let config = std::fs::read_to_string(repo.path().join("kiln.project")).unwrap();
        assert!(config.contains("\"name\": \"Mine\""), "{config}");
    }

    #[test]
    fn a_failed_write_takes_back_what_it_wrote_and_writes_nothing_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        // A link planted where a template folder goes (between the emptiness check
        // and the writes, by another program): the write there fails halfway.
        kiln_core::os::symlink(outside.path(), dir.path().join("meshes")).unwrap();
        let e = populate(dir.path(), Template::Empty, "Game").unwrap_err();
        assert!(format!("{e:#}").contains("symbolic link"), "{e:#}");
        let left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(left, ["meshes"], "only what was there before");
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }
}

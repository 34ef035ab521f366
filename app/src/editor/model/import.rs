//! Importing files from outside the project: what a drop on the window or File >
//! Import… copies in, under which canonical names, and what it makes beside them.
//!
//! Planned first, written after: a plan lists every file it would write and whether
//! one is there already, so that the editor can ask before replacing anything.
//!
//! - Names are made canonical (`Tree Model.GLTF` -> `tree_model.gltf`).
//! - A glTF model (`.gltf`, `.glb`) brings the buffers and images its URIs name,
//!   found beside it (never above its folder, never through a link), copied into the
//!   same folder under canonical names, with its URIs rewritten to match; and gets a
//!   `.mesh` beside it that draws it, so it can be placed at once.
//! - A PNG image gets a `.material` beside it that uses it as its texture.
//! - A folder is imported with what is in it, as a folder of the same (canonical)
//!   name.

use std::path::{Path, PathBuf};

use kiln_core::path::canonical_segment;
use serde_json::{Value, json};

/// The most bytes one imported file may have.
const MAX_IMPORTED_FILE: u64 = 1 << 30;

pub use crate::editor::actions::OnConflict;

/// One file an import writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incoming {
    /// Project path it is written to.
    pub target: String,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// The file it was copied from; `None` for what the import makes (a `.mesh`
    /// for a model, a `.material` for an image).
    pub from: Option<PathBuf>,
    /// A file is at `target` already.
    pub exists: bool,
}

/// What an import would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportPlan {
    /// The files it writes, in order.
    pub files: Vec<Incoming>,
    /// What it could not take, and why (one sentence each, naming the file).
    pub problems: Vec<String>,
}

impl ImportPlan {
    /// The files it would write over.
    pub fn conflicts(&self) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| f.exists)
            .map(|f| f.target.as_str())
            .collect()
    }
}

/// Plans importing `sources` into the project folder `folder` (`""`: the root).
/// `exists` says whether a project path is taken; with `on_conflict` `None`, taken
/// targets are kept and marked, so that the caller can ask.
pub fn plan(
    sources: &[PathBuf],
    folder: &str,
    exists: &dyn Fn(&str) -> bool,
    on_conflict: Option<OnConflict>,
) -> ImportPlan {
    let mut planner = Planner {
        exists,
        on_conflict,
        plan: ImportPlan::default(),
        made: Vec::new(),
        total: 0,
    };
    for source in sources {
        planner.source(source, folder, 0);
    }
    // What the import makes comes last: a `.mesh` or `.material` the user dropped
    // too, or one the project has (with its own size or colour), is kept.
    for made in std::mem::take(&mut planner.made) {
        planner.make(made);
    }
    planner.plan
}

/// The most bytes one import may copy in all: undo keeps what it replaced, and it
/// is read on the editor's thread.
const MAX_IMPORTED_TOTAL: u64 = 2 << 30;

/// A file the import makes beside one it copies.
enum Made {
    /// A `.mesh` drawing the model at `model` (a project path), `glb` if binary.
    Mesh { model: String, glb: bool },
    /// A `.material` using the texture at `texture`.
    Material { texture: String },
}

struct Planner<'a> {
    exists: &'a dyn Fn(&str) -> bool,
    on_conflict: Option<OnConflict>,
    plan: ImportPlan,
    /// Files to make once every dropped file has its name.
    made: Vec<Made>,
    /// Bytes read so far.
    total: u64,
}

/// `folder/name`, or `name` at the root.
fn join(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}

/// The canonical file name of `path`'s name: its stem and extension made canonical.
fn canonical_file_name(path: &Path) -> Option<(String, String)> {
    let name = path.file_name()?.to_string_lossy();
    let (stem, ext) = name.rsplit_once('.').unwrap_or((&name, ""));
    let ext = canonical_segment(ext).replace('.', "_");
    let stem = match canonical_segment(stem) {
        s if s.is_empty() => "imported".to_owned(),
        s => s,
    };
    (!ext.is_empty()).then_some((stem, ext))
}

impl Planner<'_> {
    fn in_plan(&self, target: &str) -> bool {
        self.plan.files.iter().any(|f| f.target == target)
    }

    /// The project path the file `stem.ext` gets in `folder`: its own name, unless
    /// the import itself gave it to another file (then always a free one: two
    /// textures of one name from two folders of a model), or the project has it
    /// and [`OnConflict::KeepBoth`] was chosen.
    fn name(&self, folder: &str, stem: &str, ext: &str) -> String {
        let first = join(folder, &format!("{stem}.{ext}"));
        let keep_both = self.on_conflict == Some(OnConflict::KeepBoth);
        let clashes = self.in_plan(&first) || (keep_both && (self.exists)(&first));
        if !clashes {
            return first;
        }
        (2..100_000)
            .map(|n| join(folder, &format!("{stem}_{n}.{ext}")))
            .find(|other| !self.in_plan(other) && !(self.exists)(other))
            .unwrap_or(first)
    }

    /// Adds a file to write, unless it may not be written there.
    fn push(&mut self, target: String, bytes: Vec<u8>, from: Option<PathBuf>) -> bool {
        let what = from
            .as_ref()
            .map_or(target.clone(), |p| p.display().to_string());
        let refused = if self.in_plan(&target) {
            Some(format!("another imported file takes the name {target}"))
        } else if dependency_checker::fs::is_excluded(&target) {
            Some(format!(
                "{target} would be in a folder Kiln keeps for itself"
            ))
        } else if target == kiln_core::project::PROJECT_FILE {
            Some("a project has one kiln.project, its own".to_owned())
        } else {
            None
        };
        if let Some(why) = refused {
            self.plan.problems.push(format!("{what}: {why}"));
            return false;
        }
        let exists = (self.exists)(&target);
        self.plan.files.push(Incoming {
            target,
            bytes,
            from,
            exists,
        });
        true
    }

    fn problem(&mut self, path: &Path, why: impl std::fmt::Display) {
        self.plan
            .problems
            .push(format!("{}: {why}", path.display()));
    }

    /// Reads a file to copy, within what one import may copy in all.
    fn read(&mut self, path: &Path) -> std::io::Result<Vec<u8>> {
        let bytes = read_limited(path)?;
        self.total += bytes.len() as u64;
        if self.total > MAX_IMPORTED_TOTAL {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!(
                    "the import would copy more than {} MB in all; import less at a time",
                    MAX_IMPORTED_TOTAL >> 20
                ),
            ));
        }
        Ok(bytes)
    }

    fn source(&mut self, source: &Path, folder: &str, depth: usize) {
        // What was dropped is taken as it is, a link included; inside a dropped
        // folder, links are not followed (a link to `..` would loop, one to the
        // home folder would bring it all).
        let meta = if depth == 0 {
            std::fs::metadata(source)
        } else {
            std::fs::symlink_metadata(source)
        };
        let meta = match meta {
            Ok(m) => m,
            Err(e) => return self.problem(source, e),
        };
        if meta.file_type().is_symlink() {
            return self.problem(source, "a symbolic link inside the folder; not followed");
        }
        if meta.is_dir() {
            if depth > 16 {
                return self.problem(source, "folders nest too deeply");
            }
            let name = source
                .file_name()
                .map(|n| canonical_segment(&n.to_string_lossy()))
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "imported".into());
            let inner = join(folder, &name);
            let mut entries: Vec<PathBuf> = match std::fs::read_dir(source) {
                Ok(l) => l
                    .flatten()
                    .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                    .map(|e| e.path())
                    .collect(),
                Err(e) => return self.problem(source, e),
            };
            entries.sort();
            for entry in entries {
                self.source(&entry, &inner, depth + 1);
            }
            return;
        }
        if !meta.is_file() {
            return self.problem(source, "not a file or a folder");
        }
        let Some((stem, ext)) = canonical_file_name(source) else {
            return self.problem(
                source,
                "it has no extension, which is a file's type in Kiln",
            );
        };
        // Files a model brings along are taken with it; dropped beside it too, they
        // are not taken twice.
        if self
            .plan
            .files
            .iter()
            .any(|f| f.from.as_deref() == Some(source))
        {
            return;
        }
        let bytes = match self.read(source) {
            Ok(b) => b,
            Err(e) => return self.problem(source, e),
        };
        match ext.as_str() {
            "gltf" | "glb" => self.model(source, folder, &stem, &ext, bytes),
            _ => {
                let target = self.name(folder, &stem, &ext);
                if self.push(target.clone(), bytes, Some(source.to_owned())) && ext == "png" {
                    self.made.push(Made::Material { texture: target });
                }
            }
        }
    }

    /// A glTF model with the files its URIs name, and a `.mesh` that draws it.
    fn model(&mut self, source: &Path, folder: &str, stem: &str, ext: &str, bytes: Vec<u8>) {
        let target = self.name(folder, stem, ext);
        let binary = ext == "glb";
        let (json_text, layout) = if binary {
            match kiln_core::gltf::glb_layout(&bytes) {
                Ok(layout) => (bytes[layout.json.clone()].to_vec(), Some(layout)),
                Err(e) => return self.problem(source, format!("not a binary glTF file: {e}")),
            }
        } else {
            (bytes.clone(), None)
        };
        let mut gltf: Value = match serde_json::from_slice(&json_text) {
            Ok(v) => v,
            Err(e) => {
                return self.problem(
                    source,
                    format!(
                        "not a glTF file: line {}, column {}: {e}",
                        e.line(),
                        e.column()
                    ),
                );
            }
        };
        let dir = source.parent().unwrap_or(Path::new("")).to_owned();
        let mut rewritten = false;
        // Reserve the model's name before its companions take theirs.
        if !self.push(target.clone(), Vec::new(), Some(source.to_owned())) {
            return;
        }
        for list in ["buffers", "images"] {
            let Some(items) = gltf.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for item in items {
                let Some(uri) = item.get("uri").and_then(Value::as_str).map(str::to_owned) else {
                    continue;
                };
                if kiln_core::gltf::has_scheme(&uri) {
                    continue; // data: and remote URIs stay as they are.
                }
                let companion = match companion_path(&dir, &uri) {
                    Ok(p) => p,
                    Err(e) => {
                        self.problem(source, format!("its URI \"{uri}\" {e}; left as it is"));
                        continue;
                    }
                };
                let name = match self
                    .plan
                    .files
                    .iter()
                    .find(|f| f.from.as_deref() == Some(&companion))
                {
                    Some(done) => done.target.clone(),
                    None => {
                        let Some((c_stem, c_ext)) = canonical_file_name(&companion) else {
                            self.problem(&companion, "it has no extension");
                            continue;
                        };
                        let data = match self.read(&companion) {
                            Ok(b) => b,
                            Err(e) => {
                                self.problem(
                                    source,
                                    format!("its URI \"{uri}\" cannot be read: {e}"),
                                );
                                continue;
                            }
                        };
                        let c_target = self.name(folder, &c_stem, &c_ext);
                        if !self.push(c_target.clone(), data, Some(companion.clone())) {
                            continue;
                        }
                        c_target
                    }
                };
                let new_uri = kiln_core::gltf::relative_uri(&target, &name);
                if new_uri != uri {
                    item["uri"] = Value::String(new_uri);
                    rewritten = true;
                }
            }
        }
        let out = if !rewritten {
            bytes
        } else if let Some(layout) = layout {
            let json = serde_json::to_vec(&gltf).unwrap_or_default();
            let mut patched = bytes[..layout.json.start].to_vec();
            patched.extend_from_slice(&json);
            patched.extend_from_slice(&bytes[layout.json.end..]);
            match kiln_core::gltf::repack_glb(&bytes, &patched) {
                Ok(b) => b,
                Err(e) => {
                    return self.problem(source, format!("its URIs cannot be rewritten: {e}"));
                }
            }
        } else {
            let mut text = serde_json::to_vec_pretty(&gltf).unwrap_or_default();
            text.push(b'\n');
            text
        };
        if let Some(model) = self.plan.files.iter_mut().find(|f| f.target == target) {
            model.bytes = out;
        }
        self.made.push(Made::Mesh {
            model: target,
            glb: binary,
        });
    }

    /// Makes a file beside one imported, named after it (`art/tree.gltf` ->
    /// `art/tree.mesh`), only where that name is free: a file of that name (dropped
    /// too, or already in the project with its own settings) is kept as it is.
    fn make(&mut self, made: Made) {
        let (beside, ext, value) = match &made {
            Made::Mesh { model, glb } => {
                let field = if *glb { "glb" } else { "gltf" };
                (model, "mesh", json!({ field: without_extension(model) }))
            }
            Made::Material { texture } => (
                texture,
                "material",
                json!({"color": [1, 1, 1, 1], "texture": without_extension(texture)}),
            ),
        };
        let target = format!("{}.{ext}", without_extension(beside));
        if self.in_plan(&target) || (self.exists)(&target) {
            return;
        }
        let text = kiln_core::json_format::to_canonical_string(&value);
        self.push(target, text.into_bytes(), None);
    }
}

/// `art/tree.gltf` -> `art/tree`: how a typed reference names a file.
fn without_extension(path: &str) -> &str {
    path.rsplit_once('.').map_or(path, |(base, _)| base)
}

/// The file a model's relative `uri` names, beside it or below its folder: never
/// above it (a model from elsewhere must not carry other files of the disk into the
/// project), never through a link.
fn companion_path(dir: &Path, uri: &str) -> Result<PathBuf, String> {
    let decoded =
        kiln_core::gltf::percent_decode(uri).map_err(|e| format!("cannot be decoded ({e})"))?;
    if decoded.starts_with('/') || decoded.contains('\\') {
        return Err("is not a relative path".into());
    }
    let mut path = dir.to_owned();
    for part in decoded.split('/') {
        match part {
            "" | "." => {}
            ".." => return Err("leads outside the model's folder".into()),
            // A drive or a stream name: not a plain name of a file beside it.
            name if name.contains(':') => return Err("is not a relative path".into()),
            name => {
                path.push(name);
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    return Err("goes through a symbolic link".into());
                }
            }
        }
    }
    Ok(path)
}

/// A regular file's bytes, at most [`MAX_IMPORTED_FILE`].
fn read_limited(path: &Path) -> std::io::Result<Vec<u8>> {
    let meta = std::fs::metadata(path)?;
    if !meta.is_file() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    if meta.len() > MAX_IMPORTED_FILE {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!(
                "{} bytes, more than Kiln imports ({MAX_IMPORTED_FILE})",
                meta.len()
            ),
        ));
    }
    std::fs::read(path)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn targets(plan: &ImportPlan) -> Vec<&str> {
        plan.files.iter().map(|f| f.target.as_str()).collect()
    }

    #[test]
    fn a_model_brings_its_files_under_canonical_names_and_gets_a_mesh() {
        let outside = tempfile::tempdir().unwrap();
        let d = outside.path();
        std::fs::create_dir(d.join("Tex")).unwrap();
        std::fs::write(d.join("Tree Model.bin"), [1u8, 2, 3]).unwrap();
        std::fs::write(d.join("Tex/Bark Colour.PNG"), b"png").unwrap();
        std::fs::write(
            d.join("Tree Model.GLTF"),
            r#"{"asset": {"version": "2.0"}, "buffers": [{"uri": "Tree%20Model.bin", "byteLength": 3}],
                "images": [{"uri": "Tex/Bark%20Colour.PNG"}, {"uri": "data:image/png;base64,AA=="}]}"#,
        )
        .unwrap();
        let plan = plan(&[d.join("Tree Model.GLTF")], "art", &|_| false, None);
        assert!(plan.problems.is_empty(), "{:?}", plan.problems);
        assert_eq!(
            targets(&plan),
            [
                "art/tree_model.gltf",
                "art/tree_model.bin",
                "art/bark_colour.png",
                "art/tree_model.mesh"
            ]
        );
        let gltf: Value = serde_json::from_slice(&plan.files[0].bytes).unwrap();
        assert_eq!(gltf["buffers"][0]["uri"], "tree_model.bin");
        assert_eq!(gltf["images"][0]["uri"], "bark_colour.png");
        assert_eq!(gltf["images"][1]["uri"], "data:image/png;base64,AA==");
        assert_eq!(plan.files[1].bytes, [1, 2, 3]);
        let mesh: Value = serde_json::from_slice(&plan.files[3].bytes).unwrap();
        assert_eq!(mesh, json!({"gltf": "art/tree_model"}));
        assert_eq!(plan.files[3].from, None);
    }

    #[test]
    fn a_uri_leading_above_the_models_folder_is_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        let d = outside.path().join("model");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(outside.path().join("secret.bin"), b"secret").unwrap();
        std::fs::write(
            d.join("m.gltf"),
            r#"{"asset": {"version": "2.0"}, "buffers": [{"uri": "../secret.bin"}]}"#,
        )
        .unwrap();
        let plan = plan(&[d.join("m.gltf")], "", &|_| false, None);
        assert_eq!(targets(&plan), ["m.gltf", "m.mesh"]);
        assert!(
            plan.problems[0].contains("leads outside the model's folder"),
            "{:?}",
            plan.problems
        );
    }

    #[test]
    fn a_binary_model_is_repacked_with_its_uris_rewritten() {
        let outside = tempfile::tempdir().unwrap();
        let d = outside.path();
        std::fs::write(d.join("Skin.png"), b"png").unwrap();
        let json = br#"{"asset":{"version":"2.0"},"images":[{"uri":"Skin.png"}]}"#;
        let mut padded = json.to_vec();
        while !padded.len().is_multiple_of(4) {
            padded.push(b' ');
        }
        let bin = [9u8, 8, 7, 6];
        let mut glb = b"glTF".to_vec();
        glb.extend(2u32.to_le_bytes());
        let total = 12 + 8 + padded.len() + 8 + bin.len();
        glb.extend((total as u32).to_le_bytes());
        glb.extend((padded.len() as u32).to_le_bytes());
        glb.extend(0x4E4F_534Au32.to_le_bytes());
        glb.extend(&padded);
        glb.extend((bin.len() as u32).to_le_bytes());
        glb.extend(0x004E_4942u32.to_le_bytes());
        glb.extend(bin);
        std::fs::write(d.join("Robot.glb"), &glb).unwrap();
        let plan = plan(&[d.join("Robot.glb")], "art", &|_| false, None);
        assert!(plan.problems.is_empty(), "{:?}", plan.problems);
        assert_eq!(
            targets(&plan),
            ["art/robot.glb", "art/skin.png", "art/robot.mesh"]
        );
        let out = &plan.files[0].bytes;
        let layout = kiln_core::gltf::glb_layout(out).unwrap();
        let inner: Value = serde_json::from_slice(&out[layout.json.clone()]).unwrap();
        assert_eq!(inner["images"][0]["uri"], "skin.png");
        assert!(
            out.ends_with(&bin),
            "the binary chunk is kept byte for byte"
        );
        let mesh: Value = serde_json::from_slice(&plan.files[2].bytes).unwrap();
        assert_eq!(mesh, json!({"glb": "art/robot"}));
    }

    #[test]
    fn names_that_are_taken_are_marked_or_made_free() {
        let outside = tempfile::tempdir().unwrap();
        let png = outside.path().join("Rock.png");
        std::fs::write(&png, b"png").unwrap();
        let taken = |p: &str| p == "textures/rock.png";
        let asked = plan(std::slice::from_ref(&png), "textures", &taken, None);
        assert_eq!(asked.conflicts(), ["textures/rock.png"]);
        let both = plan(
            std::slice::from_ref(&png),
            "textures",
            &taken,
            Some(OnConflict::KeepBoth),
        );
        assert_eq!(
            targets(&both),
            ["textures/rock_2.png", "textures/rock_2.material"]
        );
        let material: Value = serde_json::from_slice(&both.files[1].bytes).unwrap();
        assert_eq!(material["texture"], "textures/rock_2");
        assert!(both.conflicts().is_empty());
        let replace = plan(&[png], "textures", &taken, Some(OnConflict::Replace));
        assert_eq!(replace.conflicts(), ["textures/rock.png"]);
    }

    #[test]
    fn two_textures_of_one_name_get_two_names_and_the_model_names_each() {
        let outside = tempfile::tempdir().unwrap();
        let d = outside.path();
        for sub in ["a", "b"] {
            std::fs::create_dir(d.join(sub)).unwrap();
            std::fs::write(d.join(sub).join("tex.png"), sub).unwrap();
        }
        std::fs::write(
            d.join("m.gltf"),
            r#"{"asset": {"version": "2.0"}, "images": [{"uri": "a/tex.png"}, {"uri": "b/tex.png"}]}"#,
        )
        .unwrap();
        for on_conflict in [None, Some(OnConflict::Replace), Some(OnConflict::KeepBoth)] {
            let plan = plan(&[d.join("m.gltf")], "art", &|_| false, on_conflict);
            assert!(plan.problems.is_empty(), "{:?}", plan.problems);
            assert_eq!(
                targets(&plan),
                ["art/m.gltf", "art/tex.png", "art/tex_2.png", "art/m.mesh"]
            );
            let gltf: Value = serde_json::from_slice(&plan.files[0].bytes).unwrap();
            assert_eq!(gltf["images"][0]["uri"], "tex.png");
            assert_eq!(gltf["images"][1]["uri"], "tex_2.png");
            assert_eq!(plan.files[2].bytes, b"b");
        }
    }

    #[test]
    fn what_the_import_makes_never_takes_the_place_of_a_real_file() {
        let outside = tempfile::tempdir().unwrap();
        let d = outside.path().join("pack");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("tree.gltf"), r#"{"asset": {"version": "2.0"}}"#).unwrap();
        std::fs::write(
            d.join("tree.mesh"),
            r#"{"gltf": "pack/tree", "size": [2, 2, 2]}"#,
        )
        .unwrap();
        std::fs::write(d.join("rock.png"), b"png").unwrap();
        // The dropped mesh is taken; the project's own rock material is kept.
        let taken = |p: &str| p == "pack/rock.material";
        let plan = plan(&[d], "", &taken, None);
        assert!(plan.problems.is_empty(), "{:?}", plan.problems);
        assert_eq!(
            targets(&plan),
            ["pack/rock.png", "pack/tree.gltf", "pack/tree.mesh"]
        );
        assert_eq!(
            plan.files[2].from.as_deref(),
            Some(outside.path().join("pack/tree.mesh").as_path())
        );
    }

    #[test]
    fn links_inside_a_dropped_folder_are_not_followed_and_kilns_own_places_are_refused() {
        let outside = tempfile::tempdir().unwrap();
        let d = outside.path().join("Build");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("a.png"), b"png").unwrap();
        kiln_core::os::symlink(&d, d.join("loop")).unwrap();
        kiln_core::os::symlink("/etc", d.join("etc")).unwrap();
        let planned = plan(std::slice::from_ref(&d), "", &|_| false, None);
        assert!(planned.files.is_empty(), "{:?}", targets(&planned));
        let problems = planned.problems.join("\n");
        assert!(
            problems.contains("loop: a symbolic link inside the folder; not followed"),
            "{problems}"
        );
        assert!(
            problems.contains("build/a.png would be in a folder Kiln keeps for itself"),
            "{problems}"
        );
        let project = outside.path().join("Kiln.project");
        std::fs::write(&project, "{}").unwrap();
        let plan = plan(&[project], "", &|_| true, Some(OnConflict::Replace));
        assert!(plan.files.is_empty());
        assert!(
            plan.problems[0].contains("a project has one kiln.project"),
            "{:?}",
            plan.problems
        );
    }

    #[test]
    fn a_folder_comes_with_its_files_and_a_file_without_a_type_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        let d = outside.path().join("My Sounds");
        std::fs::create_dir(&d).unwrap();
        std::fs::write(d.join("Wind.OGG"), b"ogg").unwrap();
        std::fs::write(d.join(".DS_Store"), b"x").unwrap();
        std::fs::write(d.join("README"), b"x").unwrap();
        let plan = plan(&[d], "", &|_| false, None);
        assert_eq!(targets(&plan), ["my_sounds/wind.ogg"]);
        assert!(
            plan.problems[0].contains("README: it has no extension"),
            "{:?}",
            plan.problems
        );
    }
}

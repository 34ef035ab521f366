//! A project: a folder with a `kiln.project` file at its root. Everything Kiln reads or
//! writes is inside it; paths that would leave it (through `..`, absolute paths or
//! symbolic links) are refused.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::compiler::{
    CompileError, CompileOptions, CompiledLevel, ResourceSource, compile_level_with,
};
use crate::path::ResourcePath;
use crate::registry::Registry;

/// The name of the file that marks a project root.
pub const PROJECT_FILE: &str = "kiln.project";
/// The redirect log at the project root: every move appends `old -> new` (the
/// dependency checker keeps it; `kiln merge` merges it as a union).
pub const REDIRECT_FILE: &str = "kiln.redirects";
pub use crate::fs::BUILD_DIR;

/// The largest project file Kiln reads (a bound, so that a file that never ends
/// cannot take all memory).
pub const MAX_FILE: u64 = 1 << 30;

/// The contents of `kiln.project`. `{}` is a valid project file.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectConfig {
    /// Display name; the folder name when empty.
    pub name: String,
    /// Levels the game boots into (project paths without extension). Everything they
    /// reach is in use.
    pub boot_levels: Vec<String>,
    /// Reference rules for file types Kiln has no schema for (another engine's
    /// `.unit`, a tool's `.json`), keyed by extension (`*` for every file), each a map
    /// from a field pattern to the resource type its strings name. See
    /// [`ReferenceRules`].
    pub references: ReferenceRules,
    /// The most entities a level may flatten to (prefabs expanded); 0 means
    /// [`crate::compiler::DEFAULT_MAX_LEVEL_ENTITIES`].
    pub max_level_entities: usize,
    /// Plugin folders, project-relative (`plugins/wind`), loaded in this order: each
    /// holds a Rust crate (`Cargo.toml`), C sources (`*.c`) or a built library, which
    /// Kiln builds if needed and loads (`docs/plugins.md`).
    pub plugins: Vec<String>,
}

pub use crate::reference_rules::ReferenceRules;

/// What is wrong with one rule of `references`, if anything.
/// (`ty`: one type it names; `None` checks the extension and pattern alone.)
fn check_reference_rule(ext: &str, pattern: &str, ty: Option<&str>) -> Option<String> {
    if ext != "*" && !crate::path::is_extension(ext) {
        return Some(format!(
            "references: \"{ext}\" is not a file extension (a-z, 0-9, _ and -, without the dot) or \"*\""
        ));
    }
    if pattern.is_empty() {
        return Some(format!("references.{ext}: a pattern is empty"));
    }
    let ty = ty?;
    let bare = ty.strip_prefix('.').unwrap_or(ty);
    if !crate::path::is_extension(bare) {
        return Some(format!(
            "references.{ext}.\"{pattern}\": \"{ty}\" is not a resource type (a file extension: a-z, 0-9, _ and -)"
        ));
    }
    if bare != ty {
        return Some(format!(
            "references.{ext}.\"{pattern}\": write the type without its dot: \"{bare}\""
        ));
    }
    None
}

/// 1-based line and column of the first `"needle"` in `text` after byte `from`.
fn locate(text: &str, from: usize, needle: &str) -> (usize, usize) {
    let quoted = format!("\"{needle}\"");
    let at = text
        .get(from..)
        .and_then(|rest| rest.find(&quoted))
        .map_or(from, |i| from + i);
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.len(), |i| before.len() - i - 1)
        + 1;
    (line, column)
}

impl ProjectConfig {
    /// Parses `kiln.project`'s text; errors name `file`, line and column.
    pub fn parse(file: &Path, text: &str) -> Result<Self, ProjectError> {
        // A merge left conflicts in it: named, rather than "unknown field".
        let found = crate::conflict::find_conflicts(text, "project");
        if let Some((_, line, column)) = found.first() {
            return Err(ProjectError::BadProjectFile {
                file: file.to_owned(),
                line: *line,
                column: *column,
                message: crate::level::conflicts_message(&found),
            });
        }
        let config: ProjectConfig =
            serde_json::from_str(text).map_err(|e| ProjectError::BadProjectFile {
                file: file.to_owned(),
                line: e.line(),
                column: e.column(),
                message: e
                    .to_string()
                    .split(" at line ")
                    .next()
                    .unwrap_or_default()
                    .to_owned(),
            })?;
        let section = text.find("\"references\"").unwrap_or(0);
        for (ext, rules) in &config.references {
            for (pattern, spec) in rules {
                let problem = check_reference_rule(ext, pattern, None).or_else(|| {
                    spec.types()
                        .find_map(|ty| check_reference_rule(ext, pattern, Some(ty)))
                });
                if let Some(message) = problem {
                    let key = if crate::path::is_extension(ext) || ext == "*" {
                        pattern
                    } else {
                        ext
                    };
                    let (line, column) = locate(text, section, key);
                    return Err(ProjectError::BadProjectFile {
                        file: file.to_owned(),
                        line,
                        column,
                        message,
                    });
                }
            }
        }
        let ceiling = crate::compiler::MAX_LEVEL_ENTITIES_CEILING;
        if config.max_level_entities > ceiling {
            let (line, column) = locate(text, 0, "max_level_entities");
            return Err(ProjectError::BadProjectFile {
                file: file.to_owned(),
                line,
                column,
                message: format!(
                    "max_level_entities: {} is more than Kiln compiles ({ceiling} at most)",
                    config.max_level_entities
                ),
            });
        }
        let section = text.find("\"plugins\"").unwrap_or(0);
        // A set, not a search of the entries before: a list of 200,000 took a minute.
        let mut seen = std::collections::HashSet::with_capacity(config.plugins.len());
        for entry in &config.plugins {
            let message = if !is_plain_folder(entry) {
                format!(
                    "plugins: \"{entry}\" is not a folder inside the project (a relative path with '/', no '..', not in .kiln or build)"
                )
            } else if !seen.insert(entry.as_str()) {
                format!("plugins: \"{entry}\" is listed twice")
            } else {
                continue;
            };
            let (line, column) = locate(text, section, entry);
            return Err(ProjectError::BadProjectFile {
                file: file.to_owned(),
                line,
                column,
                message,
            });
        }
        Ok(config)
    }
}

/// Whether `entry` is a plain project-relative path of a folder of the project
/// ([`crate::fs::is_excluded`]: not Kiln's own folders, not hidden), without a
/// drive or stream name.
fn is_plain_folder(entry: &str) -> bool {
    crate::fs::is_plain_relative(entry) && !entry.contains(':') && !crate::fs::is_excluded(entry)
}

/// A failure reading or writing project files, naming the file.
#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    /// No `kiln.project` in the folder.
    #[error("{0} is not a Kiln project: it has no {PROJECT_FILE} file")]
    NotAProject(PathBuf),
    /// `kiln.project` is malformed.
    #[error("{file}:{line}:{column}: {message}")]
    BadProjectFile {
        /// The file.
        file: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// An operating-system error on a file.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// A path that leads outside the project.
    #[error("{0} is outside the project")]
    OutsideProject(PathBuf),
    /// A level failed to compile.
    #[error(transparent)]
    Compile(#[from] CompileError),
}

fn io_error(path: &Path) -> impl FnOnce(io::Error) -> ProjectError + '_ {
    move |source| ProjectError::Io {
        path: path.to_owned(),
        source,
    }
}

/// An open project.
#[derive(Debug, Clone)]
pub struct Project {
    root: PathBuf,
    config: ProjectConfig,
}

impl Project {
    /// Opens the project whose root is `dir`.
    pub fn open(dir: &Path) -> Result<Self, ProjectError> {
        let root = fs::canonicalize(dir).map_err(io_error(dir))?;
        let file = root.join(PROJECT_FILE);
        // As every project file is read: never through a link, never a FIFO.
        let read = crate::fs::read_below(&root, Path::new(PROJECT_FILE), MAX_FILE).and_then(|b| {
            String::from_utf8(b)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"))
        });
        let text = match read {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Err(ProjectError::NotAProject(root));
            }
            Err(e) => {
                return Err(ProjectError::Io {
                    path: file,
                    source: e,
                });
            }
        };
        let config = ProjectConfig::parse(&file, &text)?;
        Ok(Project { root, config })
    }

    /// The root folder (canonical, absolute).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The parsed `kiln.project`.
    pub fn config(&self) -> &ProjectConfig {
        &self.config
    }

    /// The display name.
    pub fn name(&self) -> String {
        if self.config.name.is_empty() {
            self.root
                .file_name()
                .map_or_else(|| "project".into(), |n| n.to_string_lossy().into_owned())
        } else {
            self.config.name.clone()
        }
    }

    /// The file of resource `path` of type `ext`.
    pub fn file_of(&self, path: &ResourcePath, ext: &str) -> PathBuf {
        self.root.join(path.with_extension(ext))
    }

    /// Resolves a project-relative file path (as written by a user), refusing
    /// anything that leaves the root: an absolute path, `..`, or a symbolic link on
    /// the way (under Kiln's one path policy a link is never gone through, wherever
    /// it points). A path that does not exist yet is judged by what exists of it.
    /// To read or write the file, [`Project::read`] and [`Project::write`] reach it
    /// folder by folder without following links.
    pub fn resolve(&self, relative: &str) -> Result<PathBuf, ProjectError> {
        let rel = Path::new(relative);
        let outside = || ProjectError::OutsideProject(rel.to_owned());
        if rel.is_absolute()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(outside());
        }
        if crate::fs::goes_through_link(&self.root, rel) {
            return Err(outside());
        }
        Ok(self.root.join(rel))
    }

    /// The bytes of the project file `relative`, read as the one path policy reads
    /// (see [`crate::fs`]): never through a link, never a FIFO.
    pub fn read(&self, relative: &str) -> Result<Vec<u8>, ProjectError> {
        self.resolve(relative)?;
        let rel = Path::new(relative);
        crate::fs::read_below(&self.root, rel, MAX_FILE).map_err(io_error(&self.root.join(rel)))
    }

    /// Writes the project file `relative` whole (through a temporary file and a
    /// rename, flushed to disk), making its folders; never through a link.
    pub fn write(&self, relative: &str, bytes: &[u8]) -> Result<crate::fs::FileStat, ProjectError> {
        self.resolve(relative)?;
        let rel = Path::new(relative);
        crate::fs::write_below(&self.root, rel, bytes).map_err(io_error(&self.root.join(rel)))
    }

    /// [`Project::read`] of a file that must be UTF-8 text.
    pub fn read_text(&self, relative: &str) -> Result<String, ProjectError> {
        String::from_utf8(self.read(relative)?).map_err(|_| ProjectError::Io {
            path: self.root.join(relative),
            source: io::Error::new(io::ErrorKind::InvalidData, "not UTF-8 text"),
        })
    }

    /// Reads a resource's text, refusing files outside the project.
    pub fn read_resource(&self, path: &ResourcePath, ext: &str) -> Result<String, ProjectError> {
        self.read_text(&path.with_extension(ext))
    }

    /// Every `.level` file, as project paths (`levels/forest.level`), sorted: the
    /// project's files ([`crate::fs::is_excluded`]) reached without following a
    /// link. Files whose names are not canonical are skipped here; the dependency
    /// checker reports them.
    pub fn levels(&self) -> Result<Vec<String>, ProjectError> {
        use crate::fs::{Entries, Kind, Step, Unreadable, walk_below};
        let mut out = Vec::new();
        walk_below(
            &self.root,
            "",
            Entries::OfTheProject,
            Unreadable::Fails,
            |rel, kind| {
                if kind == Kind::File
                    && rel.ends_with(".level")
                    && ResourcePath::split_file(rel).is_ok()
                {
                    out.push(rel.to_owned());
                }
                Step::Enter
            },
        )
        .map_err(io_error(&self.root))?;
        out.sort();
        Ok(out)
    }

    /// Compiles the level file `level` (a project path such as `levels/forest.level`).
    pub fn compile(&self, registry: &Registry, level: &str) -> Result<CompiledLevel, ProjectError> {
        self.compile_with(registry, level, CompileOptions::default())
    }

    /// [`Project::compile`] with `options`.
    pub fn compile_with(
        &self,
        registry: &Registry,
        level: &str,
        options: CompileOptions,
    ) -> Result<CompiledLevel, ProjectError> {
        let bytes = self.read(level)?;
        let text = crate::level::SyntaxError::text(bytes, level).map_err(CompileError::Syntax)?;
        let mut source = ProjectSource(self);
        Ok(compile_level_with(
            registry,
            &mut source,
            level,
            &text,
            options,
        )?)
    }
}

impl Project {
    /// Compiles the level file `level` as it is read, holding only what it
    /// compiles (see `compiler/streamed.rs`): the compile of `kiln compile`, whose
    /// blob goes to a file. Gives what [`Project::compile_with`] gives, and the same
    /// error.
    pub fn compile_streamed(
        &self,
        registry: &Registry,
        level: &str,
        options: CompileOptions,
    ) -> Result<LevelBuild, ProjectError> {
        self.compile_streamed_from(registry, level, options, &mut ProjectSource(self))
    }

    /// [`Project::compile_streamed`], reading units from `source` (a
    /// [`ProjectSource`] that also records what was read, or shares parsed units
    /// between the compiles of a check).
    pub fn compile_streamed_from(
        &self,
        registry: &Registry,
        level: &str,
        options: CompileOptions,
        source: &mut dyn ResourceSource,
    ) -> Result<LevelBuild, ProjectError> {
        self.resolve(level)?;
        if let Ok((file, stat)) = crate::fs::open_below(&self.root, level)
            && stat.size <= MAX_FILE
        {
            use std::io::Read;
            let reader = io::BufReader::with_capacity(1 << 16, file.take(MAX_FILE));
            if let Some(streamed) =
                crate::compiler::compile_streamed(registry, source, level, reader, options)
            {
                return Ok(LevelBuild::Streamed(streamed));
            }
        }
        let bytes = self.read(level)?;
        let text = crate::level::SyntaxError::text(bytes, level).map_err(CompileError::Syntax)?;
        Ok(LevelBuild::Whole(compile_level_with(
            registry, source, level, &text, options,
        )?))
    }
}

/// A compiled level, from [`Project::compile_streamed`].
#[derive(Debug)]
pub enum LevelBuild {
    /// Compiled as it was read: the blob is written from its parts.
    Streamed(crate::compiler::StreamedLevel),
    /// Compiled the usual way.
    Whole(CompiledLevel),
}

impl LevelBuild {
    /// Number of entities after flattening prefabs.
    pub fn entity_count(&self) -> usize {
        match self {
            LevelBuild::Streamed(level) => level.entity_count,
            LevelBuild::Whole(level) => level.entity_count,
        }
    }
    /// Components left out because their type is not known.
    pub fn left_out(&self) -> &[CompileError] {
        match self {
            LevelBuild::Streamed(level) => &level.left_out,
            LevelBuild::Whole(level) => &level.left_out,
        }
    }
    /// The size of the blob.
    pub fn blob_len(&self) -> usize {
        match self {
            LevelBuild::Streamed(level) => level.blob_len(),
            LevelBuild::Whole(level) => level.blob.len(),
        }
    }
    /// Writes the blob to `out`.
    pub fn write_blob(&self, out: &mut dyn io::Write) -> io::Result<()> {
        match self {
            LevelBuild::Streamed(level) => level.write_blob(out),
            LevelBuild::Whole(level) => out.write_all(&level.blob),
        }
    }
}

impl Project {
    /// Where the compiler reads this project's units (prefabs) from.
    pub fn resource_source(&self) -> impl ResourceSource + '_ {
        ProjectSource(self)
    }

    /// The text of the level `level`, as a compile reads it: an error names the
    /// file (and, for text that is not UTF-8, where).
    pub fn level_text(&self, level: &str) -> Result<String, ProjectError> {
        let bytes = self.read(level)?;
        Ok(crate::level::SyntaxError::text(bytes, level).map_err(CompileError::Syntax)?)
    }
}

/// The project's files as the compiler reads units: below the root, never through
/// a link, bounded in size; and the project's limit on a level's entities.
#[derive(Debug)]
pub struct ProjectSource<'a>(pub &'a Project);

impl ResourceSource for ProjectSource<'_> {
    fn max_level_entities(&self) -> usize {
        match self.0.config.max_level_entities {
            0 => crate::compiler::DEFAULT_MAX_LEVEL_ENTITIES,
            n => n,
        }
    }

    fn read_text(&mut self, path: &ResourcePath, ext: &str) -> Result<String, String> {
        self.0.read_resource(path, ext).map_err(|e| match e {
            ProjectError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound => {
                "no such file".to_owned()
            }
            ProjectError::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_project_file_with_merge_conflicts_names_them() {
        let text = "{\n  \"name\": {\n    \"kiln:conflict\": {\"ours\": \"A\", \"theirs\": \"B\"}\n  }\n}\n";
        let e = ProjectConfig::parse(Path::new("kiln.project"), text).unwrap_err();
        let said = e.to_string();
        assert!(
            said.contains("1 unresolved merge conflict") && said.contains("key \"name\""),
            "{said}"
        );
    }

    /// A project may raise the entity limit, but not so far that a prefab that
    /// instances another twice over, 40 deep, compiles until memory runs out.
    #[test]
    fn the_entity_limit_is_bounded_and_a_limit_past_it_is_named() {
        let ok = format!(
            "{{\"max_level_entities\": {}}}",
            crate::compiler::MAX_LEVEL_ENTITIES_CEILING
        );
        assert!(ProjectConfig::parse(Path::new("kiln.project"), &ok).is_ok());
        let text = "{\n  \"name\": \"big\",\n  \"max_level_entities\": 1000000000000\n}\n";
        let e = ProjectConfig::parse(Path::new("kiln.project"), text).unwrap_err();
        let said = e.to_string();
        assert!(
            said.contains("kiln.project:3:3") && said.contains("max_level_entities"),
            "{said}"
        );
    }

    #[test]
    fn paths_leaving_the_project_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join(PROJECT_FILE), "{}").unwrap();
        let outside = tempfile::tempdir().unwrap();
        #[cfg(unix)]
        crate::os::symlink(outside.path(), dir.path().join("escape")).unwrap();
        let project = Project::open(dir.path()).unwrap();
        for bad in ["../x.level", "/etc/passwd", "a/../../x"] {
            assert!(
                matches!(project.resolve(bad), Err(ProjectError::OutsideProject(_))),
                "{bad}"
            );
        }
        #[cfg(unix)]
        assert!(matches!(
            project.resolve("escape/x.level"),
            Err(ProjectError::OutsideProject(_))
        ));
        assert!(project.resolve("levels/new.level").is_ok());
    }

    #[test]
    fn project_files_are_validated() {
        let dir = tempfile::tempdir().unwrap();
        assert!(matches!(
            Project::open(dir.path()),
            Err(ProjectError::NotAProject(_))
        ));
        fs::write(dir.path().join(PROJECT_FILE), "{\n  \"boot_level\": []\n}").unwrap();
        let err = Project::open(dir.path()).unwrap_err().to_string();
        assert!(err.contains("kiln.project:2:"), "{err}");
        assert!(err.contains("unknown field `boot_level`"), "{err}");
    }

    #[test]
    fn plugin_folders_are_plain_paths_inside_the_project() {
        let file = Path::new("kiln.project");
        let ok = ProjectConfig::parse(file, r#"{"plugins": ["plugins/wind", "blink"]}"#).unwrap();
        assert_eq!(ok.plugins, ["plugins/wind", "blink"]);
        for bad in [
            "../x", "/usr/lib", "a/../b", ".kiln/p", "build", "a\\\\b", "", "a//b", "c:/x",
        ] {
            let text = format!("{{\n  \"plugins\": [\"ok\", \"{bad}\"]\n}}");
            let e = ProjectConfig::parse(file, &text).unwrap_err().to_string();
            assert!(
                e.contains("is not a folder inside the project"),
                "{bad}: {e}"
            );
            assert!(e.contains("kiln.project:2:"), "{bad}: {e}");
        }
        let e = ProjectConfig::parse(file, r#"{"plugins": ["a", "a"]}"#).unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
    }

    /// A long list is checked in linear time: 200,000 entries (listed twice at
    /// the end) took a minute when each was looked for among those before.
    #[test]
    fn a_long_plugins_list_is_checked_in_linear_time() {
        let file = std::path::Path::new("kiln.project");
        let entries: Vec<String> = (0..200_000).map(|n| format!("\"p/n{n}\"")).collect();
        let text = format!("{{\"plugins\": [{}, \"p/n7\"]}}", entries.join(","));
        let started = std::time::Instant::now();
        let e = ProjectConfig::parse(file, &text).unwrap_err();
        assert!(e.to_string().contains("listed twice"), "{e}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    }

    #[test]
    fn reference_rules_are_read_and_bad_ones_named_with_their_place() {
        let file = Path::new("kiln.project");
        let config = ProjectConfig::parse(
            file,
            r#"{"references": {"unit": {"/components/*/data/mesh_resource": "mesh", "material": "material"}, "*": {"unit": "unit"}}}"#,
        )
        .unwrap();
        assert_eq!(config.references["unit"]["material"], "material");
        assert_eq!(config.references["*"]["unit"], "unit");
        let cases = [
            (
                "{\n  \"references\": {\n    \"unit\": {\"mesh\": \".mesh\"}}}",
                3,
                "without its dot",
            ),
            (
                "{\"references\": {\"Unit\": {\"mesh\": \"mesh\"}}}",
                1,
                "not a file extension",
            ),
            (
                "{\"references\": {\"unit\": {\"mesh\": \"Mesh File\"}}}",
                1,
                "not a resource type",
            ),
            (
                "{\"references\": {\"unit\": [\"mesh\"]}}",
                1,
                "invalid type",
            ),
        ];
        for (text, line, needle) in cases {
            let err = ProjectConfig::parse(file, text).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("kiln.project:{line}:")),
                "{text}: {err}"
            );
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}

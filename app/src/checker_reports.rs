//! What `kiln check`, `kiln refs`, `kiln deps` and `kiln mv` report, on a checker
//! already open: shared by the terminal's commands (`checker_commands.rs`), a
//! running `kiln watch` or editor answering them (`query_service.rs`), and the
//! editor's served `kiln mv` (`editor/model/served.rs`).
//!
//! With `--json` each prints one JSON object whose `schema` field names its format and
//! version (`kiln-check/1`, ...), specified in `docs/json-output.md` with a JSON Schema
//! per command under `docs/json/`.

use std::io::Write;
use std::path::Path;

use dependency_checker::check::{Finding, Place};
use dependency_checker::ops::{self, MovePlan, MoveRequest, Skipped};
use dependency_checker::resolve::Target;
use dependency_checker::{Checker, ReferenceView};
use serde_json::{Value, json};

use crate::outcome::Outcome;
use kiln_plugin_host::project::ProjectPlugins;

/// How `kiln check` runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CheckOptions {
    /// Patch stale paths (references to paths the redirect log moved).
    pub fix: bool,
    /// With `fix`: show the patches, change nothing.
    pub dry_run: bool,
    /// Machine-readable output.
    pub json: bool,
    /// Warnings fail the check too.
    pub deny_warnings: bool,
}

/// What `kiln check` reports of the project's plugins: why each that failed did
/// not load (errors), and what loaded with a caveat (warnings: a prebuilt library
/// built from other sources than the folder holds).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginReport {
    /// One message per plugin that did not load.
    pub errors: Vec<String>,
    /// One message per plugin loaded with a caveat.
    pub warnings: Vec<String>,
    /// A hash of the plugins' libraries ([`crate::plugins::libraries_fingerprint`]):
    /// their code compiles their components, so a level is compiled again for
    /// `kiln check` when it changes.
    pub libraries: u64,
    /// Whether a plugin the project lists is not loaded (an error above, or the
    /// project not trusted): the levels are then compiled for `kiln check` leaving
    /// out the components of types no plugin registered, as `kiln compile
    /// --skip-unknown-components` does.
    pub some_not_loaded: bool,
}

/// The report of `plugins`.
pub fn plugin_report(plugins: &ProjectPlugins) -> PluginReport {
    PluginReport {
        errors: plugins.errors.iter().map(|e| e.to_string()).collect(),
        warnings: plugins.warnings.clone(),
        libraries: crate::plugins::libraries_fingerprint(&plugins.loaded),
        some_not_loaded: !(plugins.errors.is_empty() && plugins.left_out.is_empty()),
    }
}

/// `kiln check` on an open checker; the plugins' errors and warnings are counted
/// with the findings.
pub fn check_with(
    checker: &mut Checker,
    plugins: &PluginReport,
    options: CheckOptions,
    (out, err): (&mut dyn Write, &mut dyn Write),
) -> anyhow::Result<Outcome> {
    let mut fixes = None;
    if options.fix {
        let mut plan = ops::plan_redirect_fixes(checker);
        // As a move: another operation may change the project between the plan and
        // the fix (see `mv_with`).
        if !options.dry_run && !plan.is_empty() {
            ops::apply_planning_again(
                &mut *checker,
                &mut plan,
                |checker, plan| Ok(ops::apply_without_undo(checker, plan)?),
                |checker, stale| {
                    writeln!(err, "{}", planning_again(stale, "fix"))?;
                    checker.rescan()?;
                    Ok(ops::plan_redirect_fixes(checker))
                },
                |e: &anyhow::Error| e.downcast_ref::<dependency_checker::CheckerError>(),
            )?;
        }
        if !options.json {
            print_plan(&plan, out)?;
        }
        if !options.json {
            let verb = if options.dry_run {
                "would fix"
            } else {
                "fixed"
            };
            writeln!(
                out,
                "{verb} {} references to moved resources",
                plan.change_count()
            )?;
        }
        fixes = Some(plan);
    }
    let findings = checker.findings();
    let plugin_errors = &plugins.errors;
    // What the last merge broke across files, until it is fixed (see
    // merge_check.rs): errors too, answered alike by a served check.
    let registry = checker.index().registry().clone();
    let across = crate::merge_check::still_recorded(checker, &registry);
    let (dangling, refused): (Vec<_>, Vec<_>) = not_compiling(checker, plugins, &findings)
        .into_iter()
        .partition(|e| e.error.is_unknown_entity());
    let errors = findings.iter().filter(|f| f.is_error()).count()
        + plugin_errors.len()
        + across.len()
        + dangling.len()
        + refused.len();
    let warnings = findings.len()
        + plugin_errors.len()
        + plugins.warnings.len()
        + across.len()
        + dangling.len()
        + refused.len()
        - errors;
    if options.json {
        // Item by item: a project may have hundreds of thousands of findings or
        // fixes (a branch merged from before a folder move).
        write!(
            out,
            "{{\n  \"schema\": \"kiln-check/1\",\n  \"files\": {},\n  \"errors\": {errors},\n  \"warnings\": {warnings},\n  \"findings\": ",
            checker.index().len()
        )?;
        JsonArray::write(out, 1, findings.iter().map(finding_json))?;
        if !plugin_errors.is_empty() {
            write!(out, ",\n  \"plugins\": ")?;
            JsonArray::write(out, 1, plugin_errors.iter().map(|e| json!(e)))?;
        }
        if !plugins.warnings.is_empty() {
            write!(out, ",\n  \"plugin_warnings\": ")?;
            JsonArray::write(out, 1, plugins.warnings.iter().map(|w| json!(w)))?;
        }
        if !dangling.is_empty() {
            write!(out, ",\n  \"entity_fields\": ")?;
            JsonArray::write(out, 1, dangling.iter().map(entity_field_json))?;
        }
        if !refused.is_empty() {
            write!(out, ",\n  \"compile_errors\": ")?;
            JsonArray::write(out, 1, refused.iter().map(compile_error_json))?;
        }
        if !across.is_empty() {
            write!(out, ",\n  \"merge_conflicts\": ")?;
            JsonArray::write(
                out,
                1,
                across
                    .iter()
                    .map(|c| json!({"problem": c.problem, "files": c.files})),
            )?;
        }
        if let Some(plan) = &fixes {
            write!(
                out,
                ",\n  \"fix\": {{\n    \"dry_run\": {},\n    \"patches\": ",
                options.dry_run
            )?;
            JsonArray::write(out, 2, patches_json(plan))?;
            write!(out, "\n  }}")?;
        }
        writeln!(out, "\n}}")?;
    } else {
        for e in plugin_errors {
            writeln!(out, "error: {e}")?;
        }
        for w in &plugins.warnings {
            writeln!(out, "warning: {w}")?;
        }
        for f in &findings {
            writeln!(out, "{}: {f}", f.severity())?;
        }
        for e in dangling.iter().chain(&refused) {
            writeln!(out, "error: {}", describe_compile_error(e))?;
        }
        for c in &across {
            writeln!(out, "error: {}", c.describe())?;
        }
        if !across.is_empty() {
            writeln!(
                out,
                "{} conflict{} across files from the last merge ({})",
                across.len(),
                if across.len() == 1 { "" } else { "s" },
                crate::merge_check::RECORD
            )?;
        }
        writeln!(
            out,
            "{} findings ({errors} errors, {warnings} warnings) in {} files",
            findings.len()
                + plugin_errors.len()
                + plugins.warnings.len()
                + across.len()
                + dangling.len()
                + refused.len(),
            checker.index().len()
        )?;
    }
    let failed = errors > 0 || (options.deny_warnings && warnings > 0);
    Ok(Outcome::findings_if(failed))
}

/// The levels `kiln compile` refuses, with the compiler's errors (see
/// `Checker::compile_errors`), but for an error in a file `findings` already
/// report an error in: a prefab that cannot be read is a missing reference first,
/// and one fix answers both. A prefab cycle is reported once, as the check finds it.
fn not_compiling(
    checker: &Checker,
    plugins: &PluginReport,
    findings: &[Finding],
) -> Vec<dependency_checker::compiles::LevelCompileError> {
    let options = kiln_core::CompileOptions {
        skip_unknown_components: plugins.some_not_loaded,
    };
    let with_errors: std::collections::HashSet<&str> = (findings.iter())
        .filter(|f| f.is_error())
        .map(Finding::file)
        .collect();
    let any_cycle = (findings.iter()).any(|f| matches!(f, Finding::PrefabCycle { .. }));
    let mut errors = checker.compile_errors(options, plugins.libraries);
    errors.retain(|e| {
        !(with_errors.contains(e.error.file())
            || (any_cycle && matches!(e.error, kiln_core::CompileError::PrefabCycle { .. })))
    });
    errors
}

/// A level's compile error as a line of `kiln check`: the error, which names the
/// file it is in, and the level when that is another file (one of its units).
fn describe_compile_error(e: &dependency_checker::compiles::LevelCompileError) -> String {
    if e.error.file() == e.level {
        format!("{}", e.error)
    } else {
        format!("{} (compiling {})", e.error, e.level)
    }
}

/// A level's compile error as JSON: the level, the file the error is in, the
/// error's parts as the compiler names them, and the line a person reads.
fn compile_error_json(e: &dependency_checker::compiles::LevelCompileError) -> Value {
    json!({
        "level": e.level,
        "file": e.error.file(),
        "error": e.error,
        "description": describe_compile_error(e),
    })
}

/// An entity field that names no entity, as JSON.
fn entity_field_json(e: &dependency_checker::compiles::LevelCompileError) -> Value {
    match &e.error {
        kiln_core::CompileError::Field {
            file,
            entity,
            component,
            field,
            message,
        } => json!({
            "file": file, "entity": entity, "component": component, "field": field,
            "message": message, "description": e.error.to_string(),
        }),
        other => json!({"file": other.file(), "description": other.to_string()}),
    }
}

/// A finding as JSON: its fields, plus `severity` and the `message` a person reads.
fn finding_json(f: &Finding) -> Value {
    let mut v = serde_json::to_value(f).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut v {
        map.insert("severity".into(), json!(f.severity()));
        map.insert("file".into(), json!(f.file()));
        map.insert("description".into(), json!(f.to_string()));
    }
    v
}

fn place_json(place: &Place) -> serde_json::Map<String, Value> {
    let mut map = serde_json::Map::new();
    map.insert("file".into(), json!(place.file));
    map.insert("line".into(), json!(place.line));
    map.insert("column".into(), json!(place.column));
    map.insert("pointer".into(), json!(place.pointer));
    map.insert("entity".into(), json!(place.entity));
    map.insert("component".into(), json!(place.component));
    map
}

/// A reference as JSON: where, its text, and what it points at as plain values.
fn reference_json(r: &ReferenceView) -> Value {
    let mut map = place_json(&r.place);
    map.insert("text".into(), json!(r.text));
    map.insert("type".into(), json!(r.expected_type));
    let (status, target, candidates, reason): (&str, Option<&str>, Vec<&str>, Option<&str>) =
        match &r.target {
            Target::Resolved(f) => ("resolved", Some(f), Vec::new(), None),
            Target::Missing(f) => ("missing", Some(f), Vec::new(), None),
            Target::Ambiguous(c) => ("ambiguous", None, c.iter().map(|p| &**p).collect(), None),
            Target::Invalid(why) => ("invalid", None, Vec::new(), Some(why)),
        };
    map.insert("status".into(), json!(status));
    map.insert("target".into(), json!(target));
    map.insert("candidates".into(), json!(candidates));
    map.insert("reason".into(), json!(reason));
    Value::Object(map)
}

fn require_exists(checker: &Checker, resource: &str) -> anyhow::Result<()> {
    if checker.files_under(resource).is_empty() {
        anyhow::bail!(
            "{resource} is not a file or folder of the project (give the path with its extension, e.g. materials/bark.material)"
        );
    }
    Ok(())
}

/// `kiln refs` on an open checker.
pub fn refs_with(
    checker: &Checker,
    resource: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    require_exists(checker, resource)?;
    // Each reference is printed as it is found: the 250,000 references to a big
    // folder are never all held (BENCHMARKS.md, "kiln refs of a folder").
    if as_json {
        report_head(out, "kiln-refs/1", resource)?;
        let mut refs = JsonArray::new(out);
        checker.try_each_reference_to(resource, |r| refs.push(&reference_json(&r)))?;
        refs.end()?;
        write!(out, ",\n  \"ambiguous\": ")?;
        let mut maybe = JsonArray::new(out);
        checker.try_each_ambiguous_reference_to(resource, |r| maybe.push(&reference_json(&r)))?;
        maybe.end()?;
        writeln!(out, "\n}}")?;
    } else {
        let mut refs = 0;
        checker.try_each_reference_to(resource, |r| {
            refs += 1;
            writeln!(out, "{}: \"{}\"", r.place, r.text)
        })?;
        let mut maybe = 0;
        checker.try_each_ambiguous_reference_to(resource, |r| {
            maybe += 1;
            writeln!(out, "{}: \"{}\" (ambiguous)", r.place, r.text)
        })?;
        writeln!(out, "{refs} references to {resource}")?;
        if maybe > 0 {
            writeln!(
                out,
                "{maybe} ambiguous references may mean {resource} (written without extension where several files match; declare the field's type in kiln.project to settle them)"
            )?;
        }
    }
    Ok(Outcome::Done)
}

/// The start of a `--json` report of references printed as they are found, up to
/// its `references` array: as `serde_json::to_string_pretty` lays it out.
fn report_head(out: &mut dyn Write, schema: &str, resource: &str) -> anyhow::Result<()> {
    write!(
        out,
        "{{\n  \"schema\": {},\n  \"resource\": {},\n  \"references\": ",
        serde_json::to_string(schema)?,
        serde_json::to_string(resource)?
    )?;
    Ok(())
}

/// A JSON array written item by item, laid out as `serde_json::to_string_pretty`
/// lays out an array that is a field of the report's top object: a report of
/// 250,000 references is printed without building it whole.
struct JsonArray<'w> {
    out: &'w mut dyn Write,
    items: usize,
    /// How many objects the array is inside (1: a field of the report's top object).
    depth: usize,
    /// Each item's lines' indent: one level deeper than the array.
    indent: String,
}

impl<'w> JsonArray<'w> {
    fn new(out: &'w mut dyn Write) -> Self {
        Self::nested(out, 1)
    }

    /// An array that is a field of an object `depth` objects deep.
    fn nested(out: &'w mut dyn Write, depth: usize) -> Self {
        JsonArray {
            out,
            items: 0,
            depth,
            indent: "  ".repeat(depth + 1),
        }
    }

    /// Writes `items`, made one at a time, as an array `depth` objects deep.
    fn write(
        out: &'w mut dyn Write,
        depth: usize,
        items: impl IntoIterator<Item = Value>,
    ) -> std::io::Result<()> {
        let mut array = Self::nested(out, depth);
        for item in items {
            array.push(&item)?;
        }
        array.end()
    }

    fn push(&mut self, item: &Value) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(item)?;
        self.out
            .write_all(if self.items == 0 { b"[" } else { b"," })?;
        // A string's line breaks are escaped: each line here is the layout's.
        for line in text.lines() {
            write!(self.out, "\n{}{line}", self.indent)?;
        }
        self.items += 1;
        Ok(())
    }

    fn end(self) -> std::io::Result<()> {
        if self.items == 0 {
            self.out.write_all(b"[]")
        } else {
            write!(self.out, "\n{}]", "  ".repeat(self.depth))
        }
    }
}

/// `kiln deps` on an open checker.
pub fn deps_with(
    checker: &Checker,
    resource: &str,
    as_json: bool,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    require_exists(checker, resource)?;
    if as_json {
        report_head(out, "kiln-deps/1", resource)?;
        let mut deps = JsonArray::new(out);
        checker.try_each_dependency_of(resource, |d| deps.push(&reference_json(&d)))?;
        deps.end()?;
        writeln!(out, "\n}}")?;
    } else {
        let mut deps = 0;
        checker.try_each_dependency_of(resource, |d| {
            deps += 1;
            let target = match &d.target {
                Target::Resolved(f) => f.to_string(),
                Target::Missing(f) => format!("{f} (missing)"),
                Target::Ambiguous(c) => {
                    format!(
                        "ambiguous: {}",
                        c.iter().map(|p| &**p).collect::<Vec<_>>().join(" or ")
                    )
                }
                Target::Invalid(reason) => format!("invalid: {reason}"),
            };
            writeln!(out, "{} -> {target}", d.place)
        })?;
        writeln!(out, "{resource} references {deps} resources")?;
    }
    Ok(Outcome::Done)
}

/// The JSON of each patch of a plan, made as it is asked for.
fn patches_json(plan: &MovePlan) -> impl Iterator<Item = Value> + '_ {
    plan.edits.iter().flat_map(|e| &e.changes).map(|c| {
        let mut map = place_json(&c.place);
        map.insert("old".into(), json!(c.old_text));
        map.insert("new".into(), json!(c.new_text));
        Value::Object(map)
    })
}

/// The JSON of moves or renames (old, new), made as they are asked for.
fn pairs_json(pairs: &[(String, String)]) -> impl Iterator<Item = Value> + '_ {
    pairs
        .iter()
        .map(|(from, to)| json!({"from": from, "to": to}))
}

/// `kiln mv --json`'s report, written item by item in `serde_json`'s pretty layout:
/// built whole, a folder move's 250,000 patches took 1 GB at 100,000 files.
fn write_move_report(
    plan: &MovePlan,
    dry_run: bool,
    applied: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    write!(
        out,
        "{{\n  \"schema\": \"kiln-mv/1\",\n  \"dry_run\": {dry_run},\n  \"applied\": {applied},\n  \"renames\": "
    )?;
    JsonArray::write(out, 1, pairs_json(&plan.renames))?;
    write!(out, ",\n  \"moves\": ")?;
    JsonArray::write(out, 1, pairs_json(&plan.moves))?;
    write!(out, ",\n  \"patches\": ")?;
    JsonArray::write(out, 1, patches_json(plan))?;
    write!(out, ",\n  \"skipped\": ")?;
    JsonArray::write(out, 1, plan.skipped.iter().map(skipped_json))?;
    write!(out, ",\n  \"unchanged\": ")?;
    JsonArray::write(out, 1, plan.unchanged.iter().map(|path| json!(path)))?;
    writeln!(out, "\n}}")
}

fn skipped_json(s: &Skipped) -> Value {
    let mut map = place_json(&s.place);
    map.insert("text".into(), json!(s.text));
    let (reason, candidates) = match &s.reason {
        ops::SkipReason::Ambiguous { candidates } => ("ambiguous", candidates),
        ops::SkipReason::BecomesAmbiguous { candidates } => ("becomes_ambiguous", candidates),
    };
    map.insert("reason".into(), json!(reason));
    map.insert("candidates".into(), json!(candidates));
    Value::Object(map)
}

/// Prints a plan as `kiln mv --dry-run` and `kiln check --fix` show it.
fn print_plan(plan: &MovePlan, out: &mut dyn Write) -> std::io::Result<()> {
    for path in &plan.unchanged {
        writeln!(out, "{path} is already there: nothing to move")?;
    }
    for (old, new) in &plan.moves {
        writeln!(out, "move {old} -> {new}")?;
    }
    print_patches(plan, "patch ", out)?;
    for s in &plan.skipped {
        writeln!(out, "{s}")?;
    }
    Ok(())
}

/// One line per reference a plan patches, each after `prefix`.
pub(crate) fn print_patches(
    plan: &MovePlan,
    prefix: &str,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for edit in &plan.edits {
        for c in &edit.changes {
            writeln!(
                out,
                "{prefix}{}: \"{}\" -> \"{}\"",
                c.place, c.old_text, c.new_text
            )?;
        }
    }
    Ok(())
}

/// The note that an operation (`what`: "move", "fix") is planned again after
/// `e`.
fn planning_again(e: &dependency_checker::CheckerError, what: &str) -> String {
    match e {
        dependency_checker::CheckerError::Changed { file } => {
            format!("{file} changed while the {what} was being planned; planning again")
        }
        _ => format!(
            "another Kiln operation changed the project while the {what} was being planned; planning again"
        ),
    }
}

/// The moves `kiln mv` arguments ask for (see [`MoveRequest::from_arguments`]).
pub fn move_request(root: &Path, paths: &[String]) -> anyhow::Result<MoveRequest> {
    match paths {
        [] | [_] => {
            anyhow::bail!("kiln mv needs OLD and NEW, or several sources and a destination folder")
        }
        [sources @ .., dest] => Ok(MoveRequest::from_arguments(root, sources, dest)),
    }
}

/// What `kiln mv` moves files with: a checker alone (the command, and `kiln
/// watch` answering one, see [`CheckerMover`]), or the open editor, which makes
/// the move one step of its undo history.
pub trait Mover {
    /// The checker the move is planned on.
    fn checker(&mut self) -> anyhow::Result<&mut Checker>;
    /// Applies `plan`. A `CheckerError::Changed` (a file saved since it was
    /// read) makes the move read the disk again and plan again.
    fn apply(&mut self, plan: &ops::MovePlan) -> anyhow::Result<()>;
    /// Brings the checker up to date with the disk.
    fn reread(&mut self) -> anyhow::Result<()>;
}

/// A checker as a [`Mover`]: the move is applied without an undo step, and
/// `reread` says how the checker catches up with the disk.
pub struct CheckerMover<'a, R> {
    /// The checker.
    pub checker: &'a mut Checker,
    /// How it catches up with the disk.
    pub reread: R,
}

impl<R> std::fmt::Debug for CheckerMover<'_, R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckerMover").finish_non_exhaustive()
    }
}

impl<R: FnMut(&mut Checker) -> anyhow::Result<()>> Mover for CheckerMover<'_, R> {
    fn checker(&mut self) -> anyhow::Result<&mut Checker> {
        Ok(self.checker)
    }
    fn apply(&mut self, plan: &ops::MovePlan) -> anyhow::Result<()> {
        ops::apply_without_undo(self.checker, plan)?;
        Ok(())
    }
    fn reread(&mut self) -> anyhow::Result<()> {
        (self.reread)(self.checker)
    }
}

/// How `kiln mv` runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MoveOptions {
    /// Print the plan and change nothing.
    pub dry_run: bool,
    /// Machine-readable output.
    pub as_json: bool,
}

/// `kiln mv` through `mover`, printing its result on `out` and notes on `err`.
/// When a file changed while the move was planned, the mover reads the disk
/// again and the move is planned again.
pub fn mv_with(
    mover: &mut dyn Mover,
    paths: &[String],
    MoveOptions { dry_run, as_json }: MoveOptions,
    (out, err): (&mut dyn Write, &mut dyn Write),
) -> anyhow::Result<Outcome> {
    let checker = mover.checker()?;
    let request = move_request(checker.project().root(), paths)?;
    let mut plan = ops::plan(checker, &request)?;
    let apply = !dry_run && !plan.is_empty();
    // Another process (a second `kiln mv`, an editor saving) may change a file to
    // patch between planning and applying; the apply then refuses, changing nothing,
    // and the move is planned again from what is on disk now.
    if apply {
        ops::apply_planning_again(
            mover,
            &mut plan,
            |mover, plan| mover.apply(plan),
            |mover, stale| {
                writeln!(err, "{}", planning_again(stale, "move"))?;
                mover.reread()?;
                Ok(ops::plan(mover.checker()?, &request)?)
            },
            |e: &anyhow::Error| e.downcast_ref::<dependency_checker::CheckerError>(),
        )?;
    }
    if !as_json {
        print_plan(&plan, out)?;
    }
    if as_json {
        write_move_report(&plan, dry_run, apply, out)?;
    } else if !plan.is_empty() {
        let verb = if dry_run { "would move" } else { "moved" };
        writeln!(
            out,
            "{verb} {} files and patch{} {} references in {} files",
            plan.moves.len(),
            if dry_run { "" } else { "ed" },
            plan.change_count(),
            plan.edits.len()
        )?;
        if !plan.skipped.is_empty() {
            writeln!(
                out,
                "{} ambiguous references were left as they are (listed above)",
                plan.skipped.len()
            )?;
        }
    }
    Ok(Outcome::Done)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::checker_commands::open_checker_with;
    use kiln_core::registry::Registry;
    use std::sync::Arc;

    /// A project whose references are resolved, missing and ambiguous, one of them
    /// under a key with a line break and a quote in it (escaped in the output).
    fn project() -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        for (path, content) in [
            ("kiln.project", "{}"),
            ("meshes/rock.mesh", "{}"),
            ("meshes/rock.json", "{}"),
            ("meshes/tree.mesh", "{}"),
            (
                "levels/a.level",
                r#"{"entities": [{"id": "e", "components": {"mesh": {"mesh": "meshes/rock"}}}, {"id": "f", "components": {"mesh": {"mesh": "meshes/tree"}}}, {"id": "g", "components": {"mesh": {"mesh": "meshes/gone"}}}]}"#,
            ),
            (
                "data.json",
                r#"{"a\nb\"": "meshes/rock", "c": "meshes/tree.mesh", "d": "meshes/rock.json"}"#,
            ),
        ] {
            let full = tmp.path().join(path);
            std::fs::create_dir_all(full.parent().unwrap()).unwrap();
            std::fs::write(full, content).unwrap();
        }
        tmp
    }

    fn printed(run: impl FnOnce(&mut Vec<u8>) -> anyhow::Result<Outcome>) -> String {
        let mut out = Vec::new();
        run(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// What the report was when it was built whole and printed by serde_json.
    fn whole(schema: &str, resource: &str, lists: &[(&str, Vec<ReferenceView>)]) -> String {
        let mut report = serde_json::Map::new();
        report.insert("schema".into(), json!(schema));
        report.insert("resource".into(), json!(resource));
        for (name, list) in lists {
            let items: Vec<Value> = list.iter().map(reference_json).collect();
            report.insert((*name).into(), Value::Array(items));
        }
        format!("{}\n", serde_json::to_string_pretty(&report).unwrap())
    }

    #[test]
    fn streamed_json_reports_are_the_reports_printed_whole() {
        let tmp = project();
        let checker = open_checker_with(tmp.path(), Arc::new(Registry::with_builtins())).unwrap();
        for resource in [
            "meshes",
            "meshes/rock.json",
            "meshes/rock.mesh",
            "data.json",
        ] {
            let refs = checker.references_to(resource);
            let maybe = checker.ambiguous_references_to(resource);
            let expected = whole(
                "kiln-refs/1",
                resource,
                &[("references", refs), ("ambiguous", maybe)],
            );
            let streamed = printed(|out| refs_with(&checker, resource, true, out));
            assert_eq!(streamed, expected, "refs {resource}");
        }
        for resource in ["levels", "data.json", "meshes/rock.mesh", "."] {
            let deps = checker.dependencies_of(resource);
            let expected = whole("kiln-deps/1", resource, &[("references", deps)]);
            if resource == "." {
                // Not a file or folder of the project: refused before printing.
                assert!(deps_with(&checker, resource, true, &mut Vec::new()).is_err());
                continue;
            }
            let streamed = printed(|out| deps_with(&checker, resource, true, out));
            assert_eq!(streamed, expected, "deps {resource}");
        }
        // The lists are not empty where it matters: a folder's references, an
        // ambiguous one, a file's dependencies.
        assert_eq!(checker.references_to("meshes").len(), 4);
        assert_eq!(checker.ambiguous_references_to("meshes/rock.json").len(), 1);
        assert_eq!(checker.dependencies_of("levels").len(), 3);
    }

    #[test]
    fn the_streamed_move_report_is_the_report_printed_whole() {
        let tmp = project();
        let mut checker =
            open_checker_with(tmp.path(), Arc::new(Registry::with_builtins())).unwrap();
        let pairs = |v: &[(String, String)]| -> Vec<Value> {
            v.iter()
                .map(|(from, to)| json!({"from": from, "to": to}))
                .collect()
        };
        let mut seen = (false, false, false);
        for paths in [
            ["meshes", "art/meshes"],
            ["meshes/rock.mesh", "meshes/stone.mesh"],
            ["meshes/tree.mesh", "meshes/tree.mesh"],
        ] {
            let paths = paths.map(str::to_owned);
            let request = move_request(tmp.path(), &paths).unwrap();
            let plan = ops::plan(&checker, &request).unwrap();
            seen.0 |= !plan.edits.is_empty() && !plan.renames.is_empty();
            seen.1 |= !plan.skipped.is_empty();
            seen.2 |= !plan.unchanged.is_empty();
            let report = json!({
                "schema": "kiln-mv/1",
                "dry_run": true,
                "applied": false,
                "renames": pairs(&plan.renames),
                "moves": pairs(&plan.moves),
                "patches": patches_json(&plan).collect::<Vec<_>>(),
                "skipped": plan.skipped.iter().map(skipped_json).collect::<Vec<_>>(),
                "unchanged": plan.unchanged,
            });
            let expected = format!("{}\n", serde_json::to_string_pretty(&report).unwrap());
            let options = MoveOptions {
                dry_run: true,
                as_json: true,
            };
            let streamed = printed(|out| {
                let mut mover = CheckerMover {
                    checker: &mut checker,
                    reread: |_: &mut Checker| Ok(()),
                };
                mv_with(&mut mover, &paths, options, (out, &mut Vec::new()))
            });
            assert_eq!(streamed, expected, "mv {paths:?}");
        }
        // Every list of the report was written with items in it by some move.
        assert_eq!(seen, (true, true, true));
    }

    #[test]
    fn the_streamed_check_report_is_the_report_printed_whole() {
        let tmp = project();
        // A stale path for `--fix` to patch: the log moved rock.mesh away.
        std::fs::rename(
            tmp.path().join("meshes/rock.mesh"),
            tmp.path().join("meshes/stone.mesh"),
        )
        .unwrap();
        std::fs::write(
            tmp.path().join("kiln.redirects"),
            "meshes/rock.mesh -> meshes/stone.mesh\n",
        )
        .unwrap();
        let mut checker =
            open_checker_with(tmp.path(), Arc::new(Registry::with_builtins())).unwrap();
        for (fix, plugin_errors) in [(false, vec![]), (true, vec!["a plugin failed".to_owned()])] {
            let findings = checker.findings();
            let mut report = json!({
                "schema": "kiln-check/1",
                "files": checker.index().len(),
                "errors": findings.iter().filter(|f| f.is_error()).count() + plugin_errors.len(),
                "warnings": findings.iter().filter(|f| !f.is_error()).count(),
                "findings": findings.iter().map(finding_json).collect::<Vec<_>>(),
            });
            if !plugin_errors.is_empty() {
                report["plugins"] = json!(plugin_errors);
            }
            if fix {
                let plan = ops::plan_redirect_fixes(&checker);
                assert_eq!(plan.change_count(), 1, "{plan:?}");
                report["fix"] =
                    json!({"dry_run": true, "patches": patches_json(&plan).collect::<Vec<_>>()});
            }
            let expected = format!("{}\n", serde_json::to_string_pretty(&report).unwrap());
            let options = CheckOptions {
                fix,
                dry_run: true,
                json: true,
                deny_warnings: false,
            };
            let streamed = printed(|out| {
                check_with(
                    &mut checker,
                    &PluginReport {
                        errors: plugin_errors.clone(),
                        ..Default::default()
                    },
                    options,
                    (out, &mut std::io::sink()),
                )
            });
            assert_eq!(streamed, expected, "fix: {fix}");
            assert!(!findings.is_empty());
        }
    }
}

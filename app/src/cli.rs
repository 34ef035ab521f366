//! Command-line parsing and dispatch.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::outcome::Outcome;
use crate::query_service::Query;

/// Kiln: level editor and data compiler.
#[derive(Debug, Parser)]
#[command(
    name = "kiln",
    version = env!("KILN_VERSION_LONG"),
    about,
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    /// What to do; without one, the editor opens (on PROJECT, or the last project,
    /// or its start page).
    #[command(subcommand)]
    pub tool: Option<Tool>,
    /// The project to open in the editor: its folder, or its kiln.project (what
    /// the desktop entry passes for a double-clicked file).
    #[arg(value_name = "PROJECT")]
    pub open: Option<PathBuf>,
    /// Trust the project: build and load its plugins (code that runs in Kiln)
    /// without asking. Without it (or KILN_TRUST=1), only a project trusted in the
    /// editor loads its plugins.
    #[arg(long, global = true)]
    pub trust: bool,
}

/// `kiln new --template`: the command line's names of the templates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TemplateArg {
    /// A level with a ground and a box, two meshes, two materials and the folders.
    Empty,
    /// The demo: two levels, nested prefabs, materials, meshes, textures, glTF art,
    /// and two plugins (Rust and C, prebuilt for Linux).
    Demo,
}

impl From<TemplateArg> for crate::new_project::Template {
    fn from(arg: TemplateArg) -> Self {
        match arg {
            TemplateArg::Empty => crate::new_project::Template::Empty,
            TemplateArg::Demo => crate::new_project::Template::Demo,
        }
    }
}

/// The subcommands (tools), named `Tool` so that "command" means only the editor's
/// [`crate::editor::UiCommand`].
#[derive(Debug, Subcommand)]
pub enum Tool {
    /// Start a project: write a template into a new or empty folder.
    New {
        /// The folder to make the project in (made if it does not exist).
        dir: PathBuf,
        /// What to start from.
        #[arg(long, value_enum, default_value_t = TemplateArg::Empty)]
        template: TemplateArg,
        /// The project's name (default: the folder's name).
        #[arg(long)]
        name: Option<String>,
    },
    /// Open the editor on a project.
    Edit {
        /// The project folder (holding kiln.project).
        project: Option<PathBuf>,
    },
    /// Compile levels into binary blobs under OUT/build/.
    Compile {
        /// The project folder (holding kiln.project).
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Where to put build/ (default: the project folder).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Leave out components whose type is not loaded (a plugin that failed to
        /// build or load), with a warning each, instead of refusing the level.
        #[arg(long)]
        skip_unknown_components: bool,
        /// Write blobs even with a plugin whose prebuilt library was built from
        /// other sources than its folder holds (otherwise refused: the blobs would
        /// carry old plugin code's behaviour).
        #[arg(long)]
        allow_stale_plugins: bool,
        /// Levels to compile, as project paths (levels/forest or levels/forest.level).
        /// Default: every level of the project.
        levels: Vec<String>,
    },
    /// Compile every level, then recompile the levels each change affects, until
    /// stopped (one line per rebuild).
    Watch {
        /// The project folder (holding kiln.project).
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Where to put build/ (default: the project folder).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Compile nothing: only keep the index current and answer `kiln check`,
        /// `refs`, `deps` and `mv` run beside it.
        #[arg(long, conflicts_with = "out")]
        no_build: bool,
    },
    /// Report missing, unused, ambiguous, stale and non-canonical references.
    /// Exit status 0 with no errors (warnings are printed), 1 with errors, 2 when the
    /// check could not run.
    Check {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Patch references that still use a path the redirect log moved (the
        /// patches are listed first, as `kiln mv --dry-run` lists them).
        #[arg(long)]
        fix: bool,
        /// With --fix: list the patches and change nothing.
        #[arg(long, requires = "fix")]
        dry_run: bool,
        /// Exit with status 1 on warnings too.
        #[arg(long)]
        deny_warnings: bool,
        /// Machine-readable output (schema kiln-check/1, see docs/json-output.md).
        #[arg(long)]
        json: bool,
    },
    /// List every place that references RESOURCE (a file with its extension, or a folder).
    Refs {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// e.g. materials/bark.material
        resource: String,
    },
    /// List what RESOURCE references.
    Deps {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// e.g. levels/forest.level
        resource: String,
    },
    /// List the journals of interrupted operations that could not be rolled back
    /// whole (set aside with their backups) and what applying each would do; apply
    /// or discard one. Exit status 1 while any is left.
    Recover {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Put back what the set-aside journal FOLDER can still reach (as listed,
        /// e.g. .kiln/journal.rejected-1764350000-0).
        #[arg(long, value_name = "FOLDER", conflicts_with = "discard")]
        apply: Option<String>,
        /// Delete the set-aside journal FOLDER, backups and all.
        #[arg(long, value_name = "FOLDER")]
        discard: Option<String>,
    },
    /// Say how each of the project's plugins loads on this machine, or prebuild them
    /// for teammates who have no compiler.
    Plugins {
        /// The project folder.
        #[arg(long, default_value = ".", global = true)]
        project: PathBuf,
        /// What to do (default: status).
        #[command(subcommand)]
        action: Option<PluginsAction>,
    },
    /// Merge three versions of a Kiln file as a git merge driver (git passes
    /// %O %A %B %P): the result goes into OURS; exit status 0 when clean, 1 with
    /// conflicts. `kiln setup-git` registers it.
    Merge {
        /// The common ancestor's version.
        base: PathBuf,
        /// Ours: the merged file is written here.
        ours: PathBuf,
        /// Theirs.
        theirs: PathBuf,
        /// The file's path in the project (its type is its extension).
        #[arg(long)]
        path: Option<String>,
    },
    /// Say what changed between two versions of a Kiln file, by what it means:
    /// entities added, removed, moved; components and fields changed. Exit status 1
    /// when something did.
    Diff {
        /// The old version.
        old: PathBuf,
        /// The new version.
        new: PathBuf,
        /// The file's path in the project (default: NEW's name).
        #[arg(long)]
        path: Option<String>,
    },
    /// Register Kiln's merge and diff with the git repository the project is in
    /// (.gitattributes, git config, and hooks that follow moves after a merge or a
    /// rebase); running it again changes nothing.
    SetupGit {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Say what is installed and what is missing or out of date; change
        /// nothing (exit status 1 when something is).
        #[arg(long)]
        check: bool,
    },
    /// What git's external diff runs (installed by setup-git).
    #[command(hide = true)]
    GitDiff {
        /// PATH OLD-FILE OLD-HEX OLD-MODE NEW-FILE NEW-HEX NEW-MODE, as git passes them.
        args: Vec<String>,
    },
    /// What the hooks run after a merge, rebase, cherry-pick or revert: point
    /// references at the files the merged redirect log moved, and find what the
    /// merge broke across files (before a merge commit, stop it).
    #[command(hide = true)]
    AfterMerge {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// The git hook it runs in (default: post-merge, which only mends).
        #[arg(long, value_enum, default_value = "post-merge")]
        hook: crate::merge_check::Hook,
    },
    /// Write the man pages and shell completions, made from these definitions, below
    /// OUT (what packaging/package.sh ships): man/man1/, bash-completion/completions/,
    /// zsh/site-functions/, fish/vendor_completions.d/.
    #[command(hide = true)]
    GenerateDocs {
        /// The folder (a `share/` of the install) to write below.
        #[arg(long)]
        out: PathBuf,
    },
    /// Spawn LEVEL with the project's plugins and simulate it headless for N frames,
    /// as the editor's Play does; then print the world pose of each entity, and
    /// what the plugins logged frame by frame, as JSON (to test a plugin's behaviour)
    Play {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Frames to simulate.
        #[arg(long, default_value_t = 60)]
        frames: u32,
        /// Seconds each frame advances.
        #[arg(long, default_value_t = 1.0 / 60.0)]
        dt: f32,
        /// The most seconds of wall-clock time one frame may take: a plugin over
        /// it (an endless loop) is stopped and named, the frames completed are
        /// written, and the exit status is 1.
        #[arg(long, default_value_t = crate::play_command::DEFAULT_FRAME_BUDGET)]
        frame_budget: f32,
        /// Write the JSON to FILE instead of stdout.
        #[arg(long, value_name = "FILE")]
        dump: Option<PathBuf>,
        /// The level, as a project path with or without `.level`.
        level: String,
    },
    /// Move or rename a file or folder and patch every reference to it
    /// (`kiln mv OLD NEW`), or move several into a folder (`kiln mv A B FOLDER/`).
    Mv {
        /// The project folder.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// Print the plan and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// Machine-readable output.
        #[arg(long)]
        json: bool,
        /// OLD NEW, or SOURCE... FOLDER (files with extension, or folders).
        #[arg(required = true, num_args = 2..)]
        paths: Vec<String>,
    },
}

/// What `kiln plugins` does.
#[derive(Debug, Clone, Copy, Subcommand)]
pub enum PluginsAction {
    /// How each plugin loads here: the library built here, a prebuilt one, or built
    /// first (exit status 1 if one cannot be loaded).
    Status,
    /// Build each plugin and write its library, with a stamp of the sources it came
    /// from, to <plugin>/prebuilt/<platform>/: commit those folders, and teammates
    /// without a compiler load them.
    Prebuild,
}

/// Parses the process arguments and runs the command.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            let asked = if e.use_stderr() {
                Outcome::Failed
            } else {
                Outcome::Done
            };
            return ExitCode::from(asked.exit_status());
        }
    };
    // As ripgrep does: line by line to a terminal, in blocks to a pipe or a file.
    // A folder move prints a line per patched reference, and a write per line was
    // a quarter of moving a folder of 22,000 files (270,000 writes). `watch`
    // prints a log that is read as it happens, wherever it goes.
    let stdout = std::io::stdout();
    let live = stdout.is_terminal() || matches!(cli.tool, Some(Tool::Watch { .. }));
    if live {
        return ExitCode::from(run(cli, &mut stdout.lock()).exit_status());
    }
    let mut out = std::io::BufWriter::with_capacity(64 << 10, stdout.lock());
    let outcome = match (run(cli, &mut out), std::io::Write::flush(&mut out)) {
        (outcome, Ok(())) => outcome,
        // `kiln refs X | head`: the reader has all it wanted.
        (outcome, Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => outcome,
        (_, Err(e)) => {
            eprintln!("error: writing the output: {e}");
            Outcome::Failed
        }
    };
    ExitCode::from(outcome.exit_status())
}

/// Runs a parsed command, printing to `out`; an error is printed here, once.
pub fn run(cli: Cli, out: &mut dyn std::io::Write) -> Outcome {
    if cli.trust {
        crate::trust::trust_every_project_in_this_process();
    }
    let opened = cli.open.map(|path| project_folder_of(&path));
    let result = match cli.tool.unwrap_or(Tool::Edit { project: opened }) {
        Tool::New {
            dir,
            template,
            name,
        } => {
            let template = crate::new_project::Template::from(template);
            crate::new_project::create(&dir, template, name.as_deref()).and_then(|made| {
            writeln!(
                out,
                "created \"{}\" from the {} template in {} ({} files)\nopen it in the editor: kiln edit {}",
                made.name,
                template.label().to_lowercase(),
                made.root.display(),
                made.files,
                crate::shell::shell_quoted(&made.root),
            )?;
            Ok(Outcome::Done)
            })
        }
        // Without a project: the last one, or the start page (never one the user
        // did not choose, such as a demo found near the working folder).
        Tool::Edit { project } => crate::editor::run_editor(project).map(|()| Outcome::Done),
        Tool::Compile {
            project,
            out: out_dir,
            skip_unknown_components,
            allow_stale_plugins,
            levels,
        } => {
            let options = kiln_core::CompileOptions {
                skip_unknown_components,
            };
            crate::compile_command::run(
                &project,
                out_dir.as_deref(),
                &levels,
                crate::compile_command::Options {
                    compile: options,
                    allow_stale_plugins,
                },
                out,
            )
        }
        Tool::Watch {
            project,
            out: out_dir,
            no_build,
        } => crate::watch_command::run(&project, out_dir.as_deref(), !no_build, out),
        Tool::Check {
            project,
            fix,
            dry_run,
            deny_warnings,
            json,
        } => {
            let options = crate::checker_reports::CheckOptions {
                fix,
                dry_run,
                json,
                deny_warnings,
            };
            served_or(&project, Query::Check(options), out, |out| {
                crate::checker_commands::check(&project, options, out)
            })
        }
        Tool::Refs {
            project,
            json,
            resource,
        } => {
            let query = Query::Refs {
                resource: resource.clone(),
                json,
            };
            served_or(&project, query, out, |out| {
                crate::checker_commands::refs(&project, &resource, json, out)
            })
        }
        Tool::Deps {
            project,
            json,
            resource,
        } => {
            let query = Query::Deps {
                resource: resource.clone(),
                json,
            };
            served_or(&project, query, out, |out| {
                crate::checker_commands::deps(&project, &resource, json, out)
            })
        }
        Tool::Recover {
            project,
            apply,
            discard,
        } => {
            use crate::recover_command::RecoverAction;
            let action = match (&apply, &discard) {
                (Some(folder), _) => RecoverAction::Apply(folder),
                (None, Some(folder)) => RecoverAction::Discard(folder),
                (None, None) => RecoverAction::Show,
            };
            crate::recover_command::recover(&project, action, out)
        }
        Tool::Merge {
            base,
            ours,
            theirs,
            path,
        } => crate::git_commands::merge(
            &base,
            &ours,
            &theirs,
            path.as_deref(),
            &mut std::io::stderr(),
        ),
        Tool::Diff { old, new, path } => {
            crate::git_commands::diff(&old, &new, path.as_deref(), out)
        }
        Tool::GitDiff { args } => crate::git_commands::git_diff(&args, out),
        Tool::SetupGit { project, check } => {
            if check {
                crate::git_commands::check_setup(&project, out)
            } else {
                crate::git_commands::setup_git(&project, out)
            }
        }
        Tool::AfterMerge { project, hook } => crate::merge_check::run(&project, hook, out),
        Tool::GenerateDocs { out: folder } => {
            crate::generated_docs::write(&folder).map(|()| Outcome::Done)
        }
        Tool::Plugins { project, action } => match action.unwrap_or(PluginsAction::Status) {
            PluginsAction::Status => crate::plugins::status(&project, out),
            PluginsAction::Prebuild => crate::plugins::prebuild(&project, out),
        },
        Tool::Play {
            project,
            frames,
            dt,
            frame_budget,
            dump,
            level,
        } => crate::play_command::run(
            &project,
            &level,
            crate::play_command::PlayOptions {
                frames,
                dt,
                frame_budget,
            },
            dump.as_deref(),
            out,
        ),
        Tool::Mv {
            project,
            dry_run,
            json,
            paths,
        } => {
            let options = crate::checker_reports::MoveOptions {
                dry_run,
                as_json: json,
            };
            let query = Query::Mv {
                paths: paths.clone(),
                options,
            };
            served_or(&project, query, out, |out| {
                crate::checker_commands::mv(&project, &paths, dry_run, json, out)
            })
        }
    };
    match result {
        Ok(outcome) => outcome,
        // The reader went away (`kiln refs X | head`): stop quietly, as Unix tools do.
        Err(e) if is_broken_pipe(&e) => Outcome::Done,
        Err(e) => {
            eprintln!("error: {e:#}");
            Outcome::Failed
        }
    }
}

/// Has a running `kiln watch` answer `query` (see [`crate::query_service`]), or
/// runs `alone` when none does.
fn served_or(
    project: &std::path::Path,
    query: Query,
    out: &mut dyn std::io::Write,
    alone: impl FnOnce(&mut dyn std::io::Write) -> anyhow::Result<Outcome>,
) -> anyhow::Result<Outcome> {
    match crate::query_service::ask(project, &query)? {
        Some(answer) => {
            eprint!("{}", answer.stderr);
            out.write_all(answer.stdout.as_bytes())?;
            Ok(Outcome::from_exit_status(answer.status))
        }
        None => alone(out),
    }
}

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The demo project next to the executable's source tree, when `kiln` runs with no
/// project and none was opened before (`cargo run` at the repository root).
/// The project folder `path` names: itself, or the folder of a `kiln.project`.
fn project_folder_of(path: &std::path::Path) -> PathBuf {
    let is_project_file = path
        .file_name()
        .is_some_and(|n| n == kiln_core::project::PROJECT_FILE)
        && !path.is_dir();
    match path.parent() {
        Some(folder) if is_project_file => {
            if folder.as_os_str().is_empty() {
                PathBuf::from(".")
            } else {
                folder.to_owned()
            }
        }
        _ => path.to_owned(),
    }
}

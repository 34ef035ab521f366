//! Choosing files and folders: the desktop's own dialog where there is one (an XDG
//! desktop portal or zenity, through `rfd`), else a dialog inside the window, so
//! that File > Import…, Open project… and New project's Browse… never do nothing.
//!
//! Hand-written rather than `egui-file-dialog` or `egui_file`: both are built on
//! egui 0.36 as of this writing (Kiln is on 0.37), and what is needed here is a
//! folder listing, a path field and a choice, about two hundred lines.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::actions::Action;

/// What the files are chosen for, and so what the choice does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Purpose {
    /// Files to copy into the project folder `folder` (`""`: the root).
    Import {
        /// The project folder they go in.
        folder: String,
    },
    /// A project folder to open.
    OpenProject,
    /// The folder New project makes the project's folder in.
    ProjectLocation,
}

impl Purpose {
    fn title(&self) -> &'static str {
        match self {
            Purpose::Import { .. } => "Import files into the project",
            Purpose::OpenProject => "Open a Kiln project",
            Purpose::ProjectLocation => "Where to make the project",
        }
    }

    /// Whether files are chosen (several), rather than one folder.
    fn picks_files(&self) -> bool {
        matches!(self, Purpose::Import { .. })
    }
}

/// Which dialog the window uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileDialogs {
    /// The desktop's where one is found, else the window's own.
    #[default]
    Auto,
    /// Always the window's own (`KILN_FILE_DIALOG=builtin`).
    Builtin,
    /// Always the desktop's (`KILN_FILE_DIALOG=system`).
    System,
}

impl FileDialogs {
    /// As `KILN_FILE_DIALOG` says (`builtin`, `system`), else [`FileDialogs::Auto`].
    pub fn from_env() -> Self {
        match std::env::var("KILN_FILE_DIALOG").as_deref() {
            Ok("builtin") => FileDialogs::Builtin,
            Ok("system") => FileDialogs::System,
            _ => FileDialogs::Auto,
        }
    }

    /// Whether to ask the desktop's dialog first.
    fn system_first(self) -> bool {
        match self {
            FileDialogs::Builtin => false,
            FileDialogs::System => true,
            FileDialogs::Auto => desktop_dialog_present(),
        }
    }
}

/// Whether this desktop has a file dialog service `rfd` can use: always on Windows
/// and macOS; on Linux and BSD an XDG desktop portal on a session bus, or zenity.
fn desktop_dialog_present() -> bool {
    if cfg!(any(target_os = "windows", target_os = "macos")) {
        return true;
    }
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|paths| std::env::split_paths(&paths).any(|p| p.join(name).is_file()))
    };
    let bus = std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_some();
    let portal = [
        "/usr/libexec/xdg-desktop-portal",
        "/usr/lib/xdg-desktop-portal",
    ]
    .iter()
    .any(|p| Path::new(p).is_file());
    on_path("zenity") || (bus && portal)
}

/// A desktop dialog that answers this fast was not shown: nobody cancels a dialog
/// in a tenth of a second.
const TOO_FAST_TO_BE_SEEN: Duration = Duration::from_millis(100);

/// What choosing led to: the result at once (the desktop's dialog), or the window's
/// own dialog to show.
#[derive(Debug)]
pub enum Chosen {
    /// The action the choice leads to (`None`: cancelled).
    Done(Option<Action>),
    /// The window's own dialog, to show until it is answered.
    InWindow(FilePicker),
}

/// Asks for files or a folder for `purpose`, starting in `start`.
pub fn choose(purpose: Purpose, start: &Path, dialogs: FileDialogs) -> Chosen {
    if dialogs.system_first() {
        let asked = Instant::now();
        let dialog = rfd::FileDialog::new()
            .set_title(purpose.title())
            .set_directory(start);
        let picked: Option<Vec<PathBuf>> = if purpose.picks_files() {
            dialog.pick_files()
        } else {
            dialog.pick_folder().map(|d| vec![d])
        };
        match picked {
            Some(paths) if !paths.is_empty() => return Chosen::Done(purpose.action(paths)),
            // Cancelled by a person, or never shown (no service after all).
            _ if dialogs == FileDialogs::System || asked.elapsed() > TOO_FAST_TO_BE_SEEN => {
                return Chosen::Done(None);
            }
            _ => {}
        }
    }
    Chosen::InWindow(FilePicker::new(purpose, start))
}

impl Purpose {
    /// The action choosing `paths` leads to.
    fn action(&self, mut paths: Vec<PathBuf>) -> Option<Action> {
        match self {
            Purpose::Import { folder } => Some(Action::ImportFiles {
                sources: paths,
                folder: folder.clone(),
                on_conflict: None,
            }),
            Purpose::OpenProject => paths.pop().map(Action::OpenProject),
            Purpose::ProjectLocation => paths.pop().map(Action::SetProjectLocation),
        }
    }
}

/// One entry of the folder shown.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    name: String,
    is_dir: bool,
}

/// At most this many entries of one folder are listed (a folder of a million files
/// must not stop the window).
const MAX_ENTRIES: usize = 5_000;

/// The window's own file dialog.
#[derive(Debug, Clone)]
pub struct FilePicker {
    purpose: Purpose,
    dir: PathBuf,
    typed: String,
    entries: Vec<Entry>,
    chosen: Vec<String>,
    error: Option<String>,
}

impl FilePicker {
    /// The dialog for `purpose`, showing `start` (or the home folder, or `/`).
    pub fn new(purpose: Purpose, start: &Path) -> Self {
        let mut picker = FilePicker {
            purpose,
            dir: PathBuf::new(),
            typed: String::new(),
            entries: Vec::new(),
            chosen: Vec::new(),
            error: None,
        };
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let fallback = home.unwrap_or_else(|| PathBuf::from("/"));
        if !picker.go(start) {
            picker.go(&fallback);
        }
        picker
    }

    /// Shows `dir`; false (and says why) when it cannot be read.
    fn go(&mut self, dir: &Path) -> bool {
        match list(dir) {
            Ok(entries) => {
                self.dir = dir.to_owned();
                self.typed = dir.display().to_string();
                self.entries = entries;
                self.chosen.clear();
                self.error = None;
                true
            }
            Err(e) => {
                self.error = Some(format!("{}: {e}", dir.display()));
                false
            }
        }
    }
}

/// The folders, then the files, of `dir`, by name (hidden ones left out).
fn list(dir: &Path) -> std::io::Result<Vec<Entry>> {
    let mut entries: Vec<Entry> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .take(MAX_ENTRIES)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let is_dir = e.file_type().ok()?.is_dir()
                || (e.file_type().ok()?.is_symlink() && e.path().is_dir());
            (!name.starts_with('.')).then_some(Entry { name, is_dir })
        })
        .collect();
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    Ok(entries)
}

/// Shows the window's own dialog while it is open; the choice becomes an action.
pub fn show(ctx: &egui::Context, open: &mut Option<FilePicker>, actions: &mut Vec<Action>) {
    let Some(picker) = open else { return };
    let mut close = false;
    let mut go_to: Option<PathBuf> = None;
    egui::Modal::new(egui::Id::unique("kiln file picker")).show(ctx, |ui| {
        ui.set_width(560.0);
        ui.heading(picker.purpose.title());
        ui.weak("No file dialog service was found on this desktop (an XDG desktop portal or zenity), so Kiln shows its own.");
        ui.horizontal(|ui| {
            if ui
                .button("⬆")
                .on_hover_text("The folder above")
                .clicked()
                && let Some(up) = picker.dir.parent()
            {
                go_to = Some(up.to_owned());
            }
            let field = ui.add(
                egui::TextEdit::singleline(&mut picker.typed)
                    .desired_width(f32::INFINITY),
            );
            field.widget_info(|| {
                egui::WidgetInfo::labeled(egui::Role::TextInput, true, "Folder path")
            });
            if field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                go_to = Some(PathBuf::from(picker.typed.trim()));
            }
        });
        if let Some(e) = &picker.error {
            ui.colored_label(egui::Color32::from_rgb(220, 80, 70), e);
        }
        let files = picker.purpose.picks_files();
        egui::ScrollArea::vertical()
            .max_height(320.0)
            .auto_shrink([false, true])
            .show(ui, |ui| {
                for entry in &picker.entries {
                    let text = if entry.is_dir {
                        format!("📁 {}", entry.name)
                    } else {
                        entry.name.clone()
                    };
                    let chosen = picker.chosen.contains(&entry.name);
                    let row = ui.add_enabled(
                        entry.is_dir || files,
                        egui::Button::selectable(chosen, text),
                    );
                    if entry.is_dir && row.double_clicked() {
                        go_to = Some(picker.dir.join(&entry.name));
                    } else if row.clicked() && !entry.is_dir {
                        let several = ui.input(|i| i.modifiers.command || i.modifiers.shift);
                        if !several {
                            picker.chosen.clear();
                        }
                        if chosen && several {
                            picker.chosen.retain(|c| *c != entry.name);
                        } else {
                            picker.chosen.push(entry.name.clone());
                        }
                    } else if row.clicked() && entry.is_dir && !files {
                        go_to = Some(picker.dir.join(&entry.name));
                    }
                }
                if picker.entries.is_empty() {
                    ui.weak("(empty)");
                }
            });
        ui.separator();
        ui.horizontal(|ui| {
            let (label, ready) = if files {
                let n = picker.chosen.len();
                (
                    format!("Import {n} file{}", if n == 1 { "" } else { "s" }),
                    n > 0,
                )
            } else {
                ("Choose this folder".to_owned(), true)
            };
            if ui.add_enabled(ready, egui::Button::new(label)).clicked() {
                let paths = if files {
                    picker.chosen.iter().map(|c| picker.dir.join(c)).collect()
                } else {
                    vec![picker.dir.clone()]
                };
                actions.extend(picker.purpose.action(paths));
                close = true;
            }
            if ui.button("Cancel").clicked() || ui.input(|i| i.key_pressed(egui::Key::Escape)) {
                close = true;
            }
        });
    });
    if let Some(dir) = go_to {
        picker.go(&dir);
    }
    if close {
        *open = None;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn a_folder_lists_its_folders_first_then_its_files_without_hidden_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("zeta")).unwrap();
        std::fs::write(dir.path().join("alpha.png"), b"x").unwrap();
        std::fs::write(dir.path().join(".hidden"), b"x").unwrap();
        let names: Vec<(String, bool)> = list(dir.path())
            .unwrap()
            .into_iter()
            .map(|e| (e.name, e.is_dir))
            .collect();
        assert_eq!(names, [("zeta".into(), true), ("alpha.png".into(), false)]);
        // A folder that cannot be read is said, and the picker stays where it was.
        let mut picker = FilePicker::new(Purpose::OpenProject, dir.path());
        assert!(!picker.go(&dir.path().join("missing")));
        assert_eq!(picker.dir, dir.path());
        assert!(picker.error.as_deref().unwrap().contains("missing"));
    }

    #[test]
    fn the_choice_becomes_the_purposes_action() {
        let files = vec![PathBuf::from("/tmp/a.png")];
        let import = Purpose::Import {
            folder: "textures".into(),
        };
        assert_eq!(
            import.action(files.clone()),
            Some(Action::ImportFiles {
                sources: files,
                folder: "textures".into(),
                on_conflict: None
            })
        );
        assert_eq!(
            Purpose::OpenProject.action(vec![PathBuf::from("/p")]),
            Some(Action::OpenProject(PathBuf::from("/p")))
        );
        assert_eq!(Purpose::ProjectLocation.action(Vec::new()), None);
    }
}

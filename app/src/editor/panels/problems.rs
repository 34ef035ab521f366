//! The problems list: the level's compile error and every finding of the dependency
//! checker, live. Double-click jumps to the place; stale paths can be fixed at once.

use dependency_checker::check::Finding;

use kiln_core::ResourcePath;

use crate::editor::actions::{Action, UiCommand};
use crate::editor::model::Editor;

/// Which problems the list shows: by severity, and by the file they are in
/// (part of its path, any case).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProblemsFilter {
    /// Show errors.
    pub errors: bool,
    /// Show warnings.
    pub warnings: bool,
    /// Show only problems in files whose path holds this.
    pub file: String,
}

impl Default for ProblemsFilter {
    fn default() -> Self {
        ProblemsFilter {
            errors: true,
            warnings: true,
            file: String::new(),
        }
    }
}

impl ProblemsFilter {
    /// Whether a problem of this severity in `file` (`None`: not about one file)
    /// is shown.
    pub fn shows(&self, error: bool, file: Option<&str>) -> bool {
        let severity = if error { self.errors } else { self.warnings };
        let wanted = self.file.trim().to_lowercase();
        severity && (wanted.is_empty() || file.is_some_and(|f| f.to_lowercase().contains(&wanted)))
    }
}

/// What a finding's fix button does.
enum Fix {
    /// Rewrite a reference to its canonical spelling.
    Reference(dependency_checker::check::Place, String, String),
    /// Rename a file to its canonical name (previewed first).
    RenameFile(String, String),
    /// A level no boot level reaches: make it one.
    BootLevel(String),
}

fn fix_for(f: &Finding) -> Option<Fix> {
    match f {
        Finding::InvalidReference { place, text, .. } => {
            let suggestion = ResourcePath::parse(text).err()?.suggestion?;
            Some(Fix::Reference(place.clone(), text.clone(), suggestion))
        }
        Finding::NonCanonicalName { file, .. } => {
            let suggestion = ResourcePath::split_file(file).err()?.suggestion?;
            Some(Fix::RenameFile(file.clone(), suggestion))
        }
        // The reference is right; the file's name is not: renaming the file to its
        // canonical name patches this reference and every other one.
        Finding::NonCanonicalReference { target, .. } => {
            let suggestion = ResourcePath::split_file(target).err()?.suggestion?;
            Some(Fix::RenameFile(target.clone(), suggestion))
        }
        Finding::Unused { file } if file.ends_with(".level") => Some(Fix::BootLevel(file.clone())),
        _ => None,
    }
}

/// Shows the problems list; `drawing` lists the textures and models that could not
/// be drawn (file, message).
pub fn show(
    ui: &mut egui::Ui,
    editor: &Editor,
    state: &mut super::PanelState,
    drawing: &[(String, String)],
    actions: &mut Vec<Action>,
) {
    let red = egui::Color32::from_rgb(220, 80, 70);
    let yellow = egui::Color32::from_rgb(220, 170, 60);
    let filter = state.problems_filter.clone();
    let (rows, _) = finding_rows(editor.files().findings(), state.show_unused, &filter);
    let assets = &mut state.assets;
    ui.horizontal(|ui| {
        if ui
            .button("Refresh")
            .on_hover_text("Re-index the project")
            .clicked()
        {
            actions.push(Action::Run(UiCommand::RefreshProblems));
        }
        let stale = editor
            .files()
            .findings()
            .iter()
            .filter(|f| matches!(f, Finding::StaleRedirect { .. }))
            .count();
        if stale > 0 && ui.button(format!("Fix {stale} stale paths")).clicked() {
            actions.push(Action::FixStalePaths);
        }
        let count = |error: bool| {
            (editor.files().findings().iter())
                .filter(|f| {
                    f.is_error() == error
                        && (state.show_unused || !matches!(f, Finding::Unused { .. }))
                })
                .count()
        };
        let (errors, warnings) = (count(true), count(false));
        ui.toggle_value(
            &mut state.problems_filter.errors,
            format!("⛔ Errors ({errors})"),
        )
        .on_hover_text("Show the errors");
        ui.toggle_value(
            &mut state.problems_filter.warnings,
            format!("⚠ Warnings ({warnings})"),
        )
        .on_hover_text("Show the warnings");
        ui.add(
            egui::TextEdit::singleline(&mut state.problems_filter.file)
                .hint_text("Filter by file")
                .desired_width(160.0),
        )
        .widget_info(|| {
            egui::WidgetInfo::labeled(egui::Role::TextInput, true, "Filter problems by file")
        });
        let unused = editor.files().unused_files();
        if unused > 0 {
            ui.checkbox(
                &mut state.show_unused,
                format!(
                    "Show {unused} unused file{}",
                    if unused == 1 { "" } else { "s" }
                ),
            )
            .on_hover_text("Files no boot level reaches: kiln check lists them as warnings");
        }
    });
    egui::ScrollArea::vertical()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            for folder in editor.plugins().building() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label(format!("building plugin {folder}…"));
                });
            }
            // A plugin's problems are about no one file: shown while no file is asked.
            let (errors_shown, warnings_shown) = (filter.shows(true, None), filter.shows(false, None));
            for e in editor.plugins().errors().iter().filter(|_| errors_shown) {
                ui.colored_label(red, format!("⛔ {e}"));
            }
            for w in editor.plugins().warnings().iter().filter(|_| warnings_shown) {
                ui.colored_label(yellow, format!("⚠ {w}"));
            }
            let compile_error = editor.preview_state().compile_error().filter(|e| {
                filter.shows(true, Some(&e.to_string()))
            });
            if let Some(e) = compile_error {
                let r = ui.add(
                    egui::Label::new(egui::RichText::new(format!("⛔ {e}")).color(red))
                        .sense(egui::Sense::click()),
                );
                if let Some(jump) = error_jump(e) {
                    let r = r.on_hover_text(jump.hover);
                    if r.double_clicked() {
                        actions.push(jump.action);
                    }
                }
            }
            for e in (editor.preview_state().left_out().iter())
                .filter(|e| filter.shows(false, Some(&e.to_string())))
            {
                let r = ui
                    .add(
                        egui::Label::new(
                            egui::RichText::new(format!("⚠ {e} (left out of the preview)"))
                                .color(yellow),
                        )
                        .sense(egui::Sense::click()),
                    )
                    .on_hover_text(
                        "The rest of the level is drawn; `kiln compile` refuses the level until the type is loaded. Double-click to select the entity",
                    );
                if r.double_clicked()
                    && let kiln_core::CompileError::Component { entity, .. } = e
                {
                    actions.push(Action::Select(vec![entity.clone()]));
                }
            }
            for (file, message) in editor.preview_state().resources().errors.iter() {
                if !filter.shows(true, Some(file.as_str())) {
                    continue;
                }
                ui.colored_label(red, format!("⛔ {message}"))
                    .on_hover_text("The viewport draws its last good version until it is fixed");
            }
            for (file, message) in drawing {
                if !filter.shows(true, Some(file)) {
                    continue;
                }
                ui.colored_label(red, format!("⛔ cannot draw {message}"))
                    .on_hover_text("The viewport shows a magenta checker in its place");
            }
            if rows.is_empty()
                && editor.preview_state().compile_error().is_none()
                && editor.preview_state().left_out().is_empty()
                && editor.plugins().errors().is_empty()
                && editor.plugins().warnings().is_empty()
                && editor.preview_state().resources().errors.is_empty()
                && drawing.is_empty()
            {
                ui.label("No problems.");
            }
            let mut fix = None;
            for f in rows {
                let (color, mark) = if f.is_error() {
                    (red, "⛔")
                } else {
                    (yellow, "⚠")
                };
                let r = ui
                    .horizontal(|ui| {
                        if let Some(candidate) = fix_for(f) {
                            let label = match &candidate {
                                Fix::Reference(_, _, new) => format!("Fix: use \"{new}\""),
                                Fix::RenameFile(_, new) => format!("Fix: rename to {new}"),
                                Fix::BootLevel(_) => "Make it a boot level".to_owned(),
                            };
                            if ui.small_button(label).clicked() {
                                fix = Some(candidate);
                            }
                        }
                        ui.add(
                            egui::Label::new(
                                egui::RichText::new(format!("{mark} {f}")).color(color),
                            )
                            .sense(egui::Sense::click()),
                        )
                    })
                    .inner;
                if r.on_hover_text("Double-click to open the file's level and select the entity")
                    .double_clicked()
                {
                    let file = f.file().to_owned();
                    if file.ends_with(".level") {
                        actions.push(Action::OpenLevel(file));
                        if let Some(place) = f.place()
                            && let Some(e) = &place.entity
                        {
                            actions.push(Action::Select(vec![e.to_string()]));
                        }
                    }
                }
            }
            match fix {
                Some(Fix::Reference(place, old, new)) => {
                    actions.push(Action::FixReference { place, old, new })
                }
                Some(Fix::RenameFile(old, new)) => assets.open_rename(editor, &old, &new),
                Some(Fix::BootLevel(level)) => actions.push(Action::MakeBootLevel(level)),
                None => {}
            }
        });
}

/// The checker's findings as the list shows them: errors first, then warnings,
/// each in the checker's order, as `filter` lets through; the files no boot level
/// reaches ("unused") left out unless `show_unused` (`kiln check` reports them
/// either way). Also how many unused ones were left out.
pub fn finding_rows<'a>(
    findings: &'a [Finding],
    show_unused: bool,
    filter: &ProblemsFilter,
) -> (Vec<&'a Finding>, usize) {
    let is_unused = |f: &&Finding| matches!(f, Finding::Unused { .. });
    let shown =
        |f: &&Finding| (show_unused || !is_unused(f)) && filter.shows(f.is_error(), Some(f.file()));
    let errors = findings.iter().filter(|f| f.is_error()).filter(shown);
    let warnings = findings.iter().filter(|f| !f.is_error()).filter(shown);
    let rows: Vec<&Finding> = errors.chain(warnings).collect();
    let left_out = if show_unused {
        0
    } else {
        findings.iter().filter(is_unused).count()
    };
    (rows, left_out)
}

/// Where a double-click on a compile error goes, and what the row's hover says.
struct ErrorJump {
    action: Action,
    hover: String,
}

/// The entity (selected, its component shown in the inspector) or the file (shown
/// in the asset browser) a compile error is about.
fn error_jump(error: &crate::editor::preview::PreviewError) -> Option<ErrorJump> {
    use crate::editor::preview::ErrorPlace;
    Some(match error.place()? {
        ErrorPlace::Entity {
            entity,
            component,
            field,
        } => ErrorJump {
            action: Action::Select(vec![entity.to_owned()]),
            hover: match (component, field) {
                (Some(c), Some(f)) => format!("Double-click to select {entity} ({c}.{f})"),
                (Some(c), None) => format!("Double-click to select {entity} ({c})"),
                _ => format!("Double-click to select {entity}"),
            },
        },
        ErrorPlace::Text { file, line, column } => ErrorJump {
            action: Action::RevealFile(file.to_owned()),
            hover: format!(
                "Line {line}, column {column} of {file}: fix it in a text editor; double-click to show the file"
            ),
        },
        ErrorPlace::File(file) => ErrorJump {
            action: Action::RevealFile(file.to_owned()),
            hover: format!("Double-click to show {file}"),
        },
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use kiln_core::CompileError;
    use kiln_core::level::SyntaxError;

    use super::*;
    use crate::editor::preview::PreviewError;

    #[test]
    fn errors_come_first_and_unused_files_only_when_asked() {
        let unused = Finding::Unused {
            file: "materials/spare.material".into(),
        };
        let non_canonical = Finding::NonCanonicalName {
            file: "Textures/A.png".into(),
            reason: "upper case".into(),
        };
        let broken = Finding::ParseError {
            file: "levels/b.level".into(),
            line: 1,
            column: 2,
            message: "expected value".into(),
        };
        assert!(broken.is_error() && !unused.is_error() && !non_canonical.is_error());
        let findings = [unused.clone(), non_canonical.clone(), broken.clone()];
        let all = ProblemsFilter::default();
        let (rows, left_out) = finding_rows(&findings, false, &all);
        assert_eq!(
            rows,
            [&broken, &non_canonical],
            "the error first, unused left out"
        );
        assert_eq!(left_out, 1);
        let (rows, left_out) = finding_rows(&findings, true, &all);
        assert_eq!(
            rows,
            [&broken, &unused, &non_canonical],
            "warnings keep their order"
        );
        assert_eq!(left_out, 0);
        // By severity, and by file (part of its path, any case).
        let warnings = ProblemsFilter {
            errors: false,
            ..ProblemsFilter::default()
        };
        assert_eq!(
            finding_rows(&findings, false, &warnings).0,
            [&non_canonical]
        );
        let in_levels = ProblemsFilter {
            file: "LEVELS/".into(),
            ..ProblemsFilter::default()
        };
        assert_eq!(finding_rows(&findings, true, &in_levels).0, [&broken]);
        // An unused level can be made a boot level from its row.
        let level = Finding::Unused {
            file: "levels/cave.level".into(),
        };
        assert!(matches!(fix_for(&level), Some(Fix::BootLevel(l)) if l == "levels/cave.level"));
        assert!(fix_for(&unused).is_none());
    }

    #[test]
    fn a_compile_error_jumps_to_its_entity_or_its_file() {
        let field = PreviewError::Compile(CompileError::Field {
            file: "levels/a.level".into(),
            entity: "lamp_2/head".into(),
            component: "transform".into(),
            field: "position".into(),
            message: "expected 3 numbers".into(),
        });
        let jump = error_jump(&field).unwrap();
        assert_eq!(jump.action, Action::Select(vec!["lamp_2/head".into()]));
        assert_eq!(
            jump.hover,
            "Double-click to select lamp_2/head (transform.position)"
        );

        let syntax = PreviewError::Compile(CompileError::Syntax(SyntaxError {
            file: "units/lamp.unit".into(),
            line: 4,
            column: 12,
            message: "expected `:`".into(),
        }));
        let jump = error_jump(&syntax).unwrap();
        assert_eq!(jump.action, Action::RevealFile("units/lamp.unit".into()));
        assert!(
            jump.hover
                .starts_with("Line 4, column 12 of units/lamp.unit"),
            "{}",
            jump.hover
        );

        let cycle = PreviewError::Compile(CompileError::PrefabCycle {
            cycle: vec![
                "units/a.unit".into(),
                "units/b.unit".into(),
                "units/a.unit".into(),
            ],
        });
        assert_eq!(
            error_jump(&cycle).unwrap().action,
            Action::RevealFile("units/a.unit".into())
        );
        // A world that did not spawn has no place to go.
        assert!(error_jump(&PreviewError::Spawn("refused".into())).is_none());
    }
}

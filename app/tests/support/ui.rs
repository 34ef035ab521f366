//! Driving the real editor headless with egui_kittest.

use std::path::Path;

use egui_kittest::Harness;
use kiln::editor::{Editor, KilnApp};

/// The editor in a 1600x900 window on the project at `dir`, after its first frames.
pub fn open(dir: &Path) -> Harness<'static, KilnApp> {
    // Plugins are built and run in the projects the tests open.
    kiln::trust::trust_every_project_in_this_process();
    let dir = dir.to_owned();
    let mut harness = Harness::builder()
        .with_size([1600.0, 900.0])
        .build_eframe(move |cc| KilnApp::new(cc, Some(dir)));
    harness.run_steps(4);
    harness
}

/// The open project's editor state.
pub fn editor<'a>(h: &'a Harness<'_, KilnApp>) -> &'a Editor {
    h.state().editor.as_ref().expect("the project opens")
}

/// Drags with the primary button from `from` to `to`, in small steps, as a hand does.
pub fn drag(h: &mut Harness<'_, KilnApp>, from: egui::Pos2, to: egui::Pos2) {
    h.drag_at(from);
    h.run_steps(2);
    for k in 1..=8 {
        h.hover_at(from + (to - from) * (k as f32 / 8.0));
        h.run_steps(1);
    }
    h.drop_at(to);
    h.run_steps(4);
}

/// Runs frames until `done`, as an idle window woken by a background job would; the
/// log and the plugins' errors are in the failure's message.
pub fn until(h: &mut Harness<'_, KilnApp>, what: &str, secs: u64, done: impl Fn(&Editor) -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done(editor(h)) {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for: {what}; log: {:#?}; problems: {:?}",
            editor(h).log(),
            editor(h).plugins().errors()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
        h.run_steps(1);
    }
}

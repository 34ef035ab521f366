//! Driving the real editor headless with egui_kittest.

use std::path::Path;

use egui_kittest::Harness;
use kiln::editor::{Editor, KilnApp};

/// The editor in a 1600x900 window on the project at `dir`, after its first frames.
pub fn open(dir: &Path) -> Harness<'static, KilnApp> {
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

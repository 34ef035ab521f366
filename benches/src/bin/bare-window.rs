//! The floor any eframe editor stands on, the editor's peer in
//! `editor-latency`: eframe's window with one label, on the renderer Kiln picks
//! (`KILN_RENDERER=glow|wgpu`, wgpu by default), with the fonts and features
//! Kiln's build has. It writes `frame N` lines to `KILN_FRAME_LOG` as the editor
//! does, so its launch and memory are measured the same way.
use std::io::Write as _;

fn main() -> eframe::Result {
    let renderer = match std::env::var("KILN_RENDERER").as_deref() {
        Ok("glow") => eframe::Renderer::Glow,
        _ => eframe::Renderer::Wgpu,
    };
    let options = eframe::NativeOptions {
        renderer,
        viewport: egui::ViewportBuilder::default()
            .with_inner_size([1280.0, 800.0])
            .with_app_id("kiln-bare-window"),
        ..Default::default()
    };
    let log = std::env::var_os("KILN_FRAME_LOG").and_then(|path| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .ok()
    });
    eframe::run_native(
        "bare window",
        options,
        Box::new(|_| Ok(Box::new(Bare { log, frames: 0 }))),
    )
}

struct Bare {
    log: Option<std::fs::File>,
    frames: u64,
}

impl eframe::App for Bare {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        egui::CentralPanel::default().show(ui, |ui| ui.label("A bare eframe window."));
        self.frames += 1;
        if let Some(log) = &mut self.log {
            let at = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_micros());
            let _ = writeln!(log, "frame {} world 1 at {at}", self.frames);
        }
    }
}

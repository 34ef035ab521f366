//! The GPU-rendered view in egui: the scene renderer draws into its offscreen
//! target on eframe's wgpu device, and the panel shows that texture.

use egui::{Color32, Rect, pos2};

use crate::render::assets::{AssetCache, AssetVersions};
use crate::render::gpu::{SceneRenderer, View};
use crate::render::resources::Resources;
use crate::render::scene::DrawList;

/// The renderer and the egui texture it draws into.
pub struct GpuView {
    render_state: egui_wgpu::RenderState,
    renderer: SceneRenderer,
    /// The registered texture and the output generation it shows.
    texture: Option<(egui::TextureId, u64)>,
}

impl std::fmt::Debug for GpuView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuView")
            .field("renderer", &self.renderer)
            .finish_non_exhaustive()
    }
}

impl GpuView {
    /// A renderer on eframe's device.
    pub fn new(render_state: &egui_wgpu::RenderState) -> Self {
        GpuView {
            renderer: SceneRenderer::with_samples(
                &render_state.device,
                &render_state.queue,
                crate::render::gpu::samples_for(&render_state.adapter.get_info()),
            ),
            render_state: render_state.clone(),
            texture: None,
        }
    }

    /// How many pictures the renderer has drawn.
    pub fn pictures_drawn(&self) -> u64 {
        self.renderer.pictures_drawn()
    }

    /// Renders the scene for `rect` and paints it there.
    #[allow(clippy::too_many_arguments)]
    pub fn paint(
        &mut self,
        painter: &egui::Painter,
        rect: Rect,
        view: &View,
        list: &DrawList,
        list_changed: bool,
        resources: &Resources,
        assets: &mut AssetCache,
        versions: &AssetVersions,
    ) {
        let ppp = painter.ctx().pixels_per_point();
        let size = [
            (rect.width() * ppp).round().max(1.0) as u32,
            (rect.height() * ppp).round().max(1.0) as u32,
        ];
        self.renderer
            .render(size, view, list, list_changed, resources, assets, versions);
        let Some((output, generation)) = self.renderer.output() else {
            return;
        };
        let id = match self.texture {
            Some((id, shown)) if shown == generation => id,
            Some((id, _)) => {
                self.render_state
                    .renderer
                    .write()
                    .update_egui_texture_from_wgpu_texture(
                        &self.render_state.device,
                        output,
                        egui_wgpu::wgpu::FilterMode::Linear,
                        id,
                    );
                id
            }
            None => self.render_state.renderer.write().register_native_texture(
                &self.render_state.device,
                output,
                egui_wgpu::wgpu::FilterMode::Linear,
            ),
        };
        self.texture = Some((id, generation));
        painter.image(
            id,
            rect,
            Rect::from_min_max(pos2(0.0, 0.0), pos2(1.0, 1.0)),
            Color32::WHITE,
        );
    }
}

impl Drop for GpuView {
    fn drop(&mut self) {
        if let Some((id, _)) = self.texture.take() {
            self.render_state.renderer.write().free_texture(&id);
        }
    }
}

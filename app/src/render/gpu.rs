//! Drawing the scene with wgpu into an offscreen colour and depth target (4x MSAA
//! resolved into a texture the viewport shows; one sample on a software renderer), one instanced draw per batch and
//! model part. The same renderer draws into eframe's device in the editor and into
//! a headless device in tests, benchmarks and thumbnails.

use std::collections::HashMap;
use std::sync::Arc;

use egui_wgpu::wgpu;
use egui_wgpu::wgpu::util::DeviceExt;
use glam::{Mat4, Vec3};
use kiln_core::ResourceId;

use super::assets::{AssetCache, AssetVersions, ModelKey};
use super::model::{Model, Texture};
use super::resources::Resources;
use super::scene::{DrawList, InstanceData};

/// The colour format of the offscreen target (linear in the shader, sRGB stored).
pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8UnormSrgb;
/// The depth format (reversed: 1 near, 0 far).
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Samples per pixel on a GPU.
pub const SAMPLES: u32 = 4;

/// Samples per pixel for an adapter: [`SAMPLES`], but one on a software renderer
/// (Mesa's llvmpipe, a machine or virtual machine without a GPU), where every
/// sample is rasterised on the CPU. There the 4x colour and depth targets of a
/// 1000 x 600 viewport were 19 MB, and each picture took 60 to 150 ms of CPU;
/// a designer on such a machine needs the frame sooner more than smooth edges.
pub fn samples_for(adapter: &wgpu::AdapterInfo) -> u32 {
    if adapter.device_type == wgpu::DeviceType::Cpu {
        1
    } else {
        SAMPLES
    }
}

/// Where the camera is.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    /// World -> clip space, reversed depth.
    pub view_projection: Mat4,
    /// The camera's position.
    pub eye: Vec3,
    /// Draw the ground grid.
    pub grid: bool,
    /// The distance at which the grid has faded out.
    pub grid_fade: f32,
    /// The sun casts shadows (one shadow map over the whole scene).
    pub shadows: bool,
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Globals {
    view_projection: [[f32; 4]; 4],
    eye: [f32; 4],
    sun: [f32; 4],
    /// World -> the shadow map's clip space (depth 0 near the sun, 1 far).
    light_view_projection: [[f32; 4]; 4],
    /// x: shadows on (1) or off (0); y: one texel of the map in its uv; z: depth
    /// bias; w: how far along the normal a surface is looked up (world units).
    shadow: [f32; 4],
}

/// The shadow map's size in texels, each way: one map over the whole scene. 2048
/// would sharpen shadows on a large level at four times the memory (on a software
/// renderer, the process's own).
pub const SHADOW_MAP_SIZE: u32 = 1024;
/// The shadow map's depth: 16 bits are a millimetre over a 60 m scene, and half the
/// memory of 32 (2 MB).
const SHADOW_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth16Unorm;

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct MaterialUniform {
    base_color: [f32; 4],
    params: [f32; 4],
}

#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct LineVertex {
    position: [f32; 3],
    color: [f32; 4],
}

/// The direction towards the sun.
pub const SUN: Vec3 = Vec3::new(0.45, 0.8, 0.35);

/// The background: egui's dark panel grey, in linear values.
const CLEAR: wgpu::Color = wgpu::Color {
    r: 0.019,
    g: 0.021,
    b: 0.027,
    a: 1.0,
};

struct Targets {
    size: [u32; 2],
    /// The multisampled colour target, resolved into `resolved`; none with one
    /// sample (the picture is drawn into `resolved` itself).
    color: Option<wgpu::TextureView>,
    depth: wgpu::TextureView,
    resolved: wgpu::Texture,
    resolved_view: wgpu::TextureView,
    /// The resolved texture seen as plain bytes: egui samples textures as
    /// gamma-encoded values, which is what the sRGB target stores.
    gamma_view: wgpu::TextureView,
}

struct GpuPart {
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
    closed: bool,
}

struct GpuModel {
    model: Arc<Model>,
    parts: Vec<GpuPart>,
}

struct GpuTexture {
    source: Arc<Texture>,
    view: wgpu::TextureView,
}

/// What one material bind group is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum MaterialKey {
    /// A `.material` resource.
    Resource(ResourceId),
    /// A model's own material for one part.
    Part(ModelKey, usize),
}

/// What the last frame cost on the CPU side.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrameStats {
    /// Draw calls issued.
    pub draws: u32,
    /// Instance bytes written to the GPU.
    pub uploaded: u64,
}

/// The scene renderer: pipelines, GPU copies of models and textures, the instance
/// buffer and the offscreen targets.
pub struct SceneRenderer {
    device: wgpu::Device,
    queue: wgpu::Queue,
    closed_pipeline: wgpu::RenderPipeline,
    open_pipeline: wgpu::RenderPipeline,
    line_pipeline: wgpu::RenderPipeline,
    /// Depth from the sun into the shadow map.
    shadow_pipeline: wgpu::RenderPipeline,
    shadow_map: wgpu::TextureView,
    /// The globals alone, for the shadow pass (which writes the map the main
    /// pass's globals read).
    shadow_bind: wgpu::BindGroup,
    globals: wgpu::Buffer,
    globals_bind: wgpu::BindGroup,
    material_layout: wgpu::BindGroupLayout,
    sampler: wgpu::Sampler,
    white: wgpu::TextureView,
    checker: wgpu::TextureView,
    models: HashMap<ModelKey, GpuModel>,
    textures: HashMap<String, GpuTexture>,
    materials: HashMap<MaterialKey, wgpu::BindGroup>,
    /// Resources and assets generations the material bind groups were made for.
    materials_made_for: (u64, u64),
    instances: wgpu::Buffer,
    instance_capacity: usize,
    uploaded: Vec<InstanceData>,
    grid: wgpu::Buffer,
    grid_vertices: u32,
    targets: Option<Targets>,
    /// Bumped when the output texture is recreated (the viewport re-registers it).
    output_generation: u64,
    /// Bumped each time the draw list changes.
    list_revision: u64,
    /// The inputs of the picture in the output texture: a frame with the same
    /// ones keeps it instead of drawing it again. egui builds frames for many
    /// reasons that do not touch the scene (a hover, a toast, a dialog), and on a
    /// software renderer (Mesa's llvmpipe, a machine without a GPU) each scene
    /// draw took about 100 ms of CPU: seven frames at startup were most of the
    /// 0.4 s before the window appeared.
    drawn: Option<DrawnKey>,
    /// How many pictures were drawn (frames that kept the last one not counted).
    pictures: u64,
    /// What the last frame cost.
    pub stats: FrameStats,
    /// Samples per pixel.
    samples: u32,
    /// The sun's view for the shadow map, and the (draw list, resources, assets)
    /// revisions it was fitted to.
    light: Option<((u64, u64, u64), Option<LightFrame>)>,
}

/// The sun's view-projection for the shadow map, and the width it covers.
type LightFrame = (Mat4, f32);

/// What a scene picture depends on (see [`SceneRenderer::render`]).
#[derive(Debug, Clone, Copy, PartialEq)]
struct DrawnKey {
    size: [u32; 2],
    view_projection: [f32; 16],
    eye: [f32; 3],
    grid: bool,
    grid_fade: f32,
    shadows: bool,
    list_revision: u64,
    resources: u64,
    assets: u64,
    files_changed: u64,
}

impl std::fmt::Debug for SceneRenderer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SceneRenderer")
            .field("models", &self.models.len())
            .field("textures", &self.textures.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl SceneRenderer {
    /// How many pictures it has drawn: a frame whose inputs are the last one's
    /// keeps the picture and draws none.
    pub fn pictures_drawn(&self) -> u64 {
        self.pictures
    }

    /// Creates the pipelines on `device`, drawing with [`SAMPLES`] samples.
    pub fn new(device: &wgpu::Device, queue: &wgpu::Queue) -> Self {
        Self::with_samples(device, queue, SAMPLES)
    }

    /// Creates the pipelines on `device`, drawing with `samples` samples per
    /// pixel (see [`samples_for`]).
    pub fn with_samples(device: &wgpu::Device, queue: &wgpu::Queue, samples: u32) -> Self {
        let shader = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("kiln scene"),
            source: wgpu::ShaderSource::Wgsl(include_str!("scene.wgsl").into()),
        });
        let globals_entry = wgpu::BindGroupLayoutEntry {
            binding: 0,
            visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
            ty: uniform_binding(),
            count: None,
        };
        let globals_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kiln globals"),
            entries: &[
                globals_entry,
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Depth,
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Comparison),
                    count: None,
                },
            ],
        });
        let shadow_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kiln shadow globals"),
            entries: &[globals_entry],
        });
        let material_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("kiln material"),
            entries: &[
                wgpu::BindGroupLayoutEntry {
                    binding: 0,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: uniform_binding(),
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: true },
                        view_dimension: wgpu::TextureViewDimension::D2,
                        multisampled: false,
                    },
                    count: None,
                },
                wgpu::BindGroupLayoutEntry {
                    binding: 2,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
                    count: None,
                },
            ],
        });
        let mesh_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("kiln mesh"),
            bind_group_layouts: &[Some(&globals_layout), Some(&material_layout)],
            immediate_size: 0,
        });
        let line_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("kiln lines"),
            bind_group_layouts: &[Some(&globals_layout)],
            immediate_size: 0,
        });
        let mesh_buffers = [
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<super::geometry::Vertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32x2],
            }),
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<InstanceData>() as u64,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &wgpu::vertex_attr_array![3 => Float32x4, 4 => Float32x4, 5 => Float32x4, 6 => Float32x4, 7 => Float32x4],
            }),
        ];
        let mesh_pipeline = |cull: Option<wgpu::Face>, label: &str| {
            pipeline(
                device,
                &shader,
                &PipelineSpec {
                    label,
                    layout: &mesh_layout,
                    entry: "mesh",
                    buffers: &mesh_buffers,
                    topology: wgpu::PrimitiveTopology::TriangleList,
                    cull,
                    // Opaque surfaces write depth; nearer is larger (reversed).
                    depth_write: true,
                    depth_compare: wgpu::CompareFunction::Greater,
                    blend: None,
                    samples,
                },
            )
        };
        let closed_pipeline = mesh_pipeline(Some(wgpu::Face::Back), "kiln closed meshes");
        let open_pipeline = mesh_pipeline(None, "kiln open meshes");
        let line_pipeline = pipeline(
            device,
            &shader,
            &PipelineSpec {
                label: "kiln grid",
                layout: &line_layout,
                entry: "line",
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<LineVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4],
                })],
                topology: wgpu::PrimitiveTopology::LineList,
                cull: None,
                // The grid is hidden by what stands on it and hides nothing.
                depth_write: false,
                depth_compare: wgpu::CompareFunction::GreaterEqual,
                blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                samples,
            },
        );
        let globals = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("kiln globals"),
            size: std::mem::size_of::<Globals>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let shadow_map = device
            .create_texture(&wgpu::TextureDescriptor {
                label: Some("kiln shadow map"),
                size: wgpu::Extent3d {
                    width: SHADOW_MAP_SIZE,
                    height: SHADOW_MAP_SIZE,
                    depth_or_array_layers: 1,
                },
                mip_level_count: 1,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: SHADOW_FORMAT,
                usage: wgpu::TextureUsages::RENDER_ATTACHMENT
                    | wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            })
            .create_view(&Default::default());
        let shadow_sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("kiln shadow map"),
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            compare: Some(wgpu::CompareFunction::LessEqual),
            ..Default::default()
        });
        let globals_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("kiln globals"),
            layout: &globals_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: globals.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&shadow_map),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(&shadow_sampler),
                },
            ],
        });
        let shadow_bind = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("kiln shadow globals"),
            layout: &shadow_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: globals.as_entire_binding(),
            }],
        });
        let shadow_pipeline = shadow_pipeline(device, &shader, &shadow_layout, &mesh_buffers);
        let sampler = device.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("kiln textures"),
            address_mode_u: wgpu::AddressMode::Repeat,
            address_mode_v: wgpu::AddressMode::Repeat,
            address_mode_w: wgpu::AddressMode::Repeat,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            mipmap_filter: wgpu::MipmapFilterMode::Linear,
            ..Default::default()
        });
        let white = upload_texture(device, queue, &Texture::solid([255; 4]), "kiln white");
        let checker = upload_texture(
            device,
            queue,
            &Texture::placeholder(),
            "kiln missing texture",
        );
        let grid_lines = grid_lines();
        let grid = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("kiln grid"),
            contents: bytemuck::cast_slice(&grid_lines),
            usage: wgpu::BufferUsages::VERTEX,
        });
        let instance_capacity = 1024;
        SceneRenderer {
            device: device.clone(),
            queue: queue.clone(),
            closed_pipeline,
            open_pipeline,
            line_pipeline,
            shadow_pipeline,
            shadow_map,
            shadow_bind,
            globals,
            globals_bind,
            material_layout,
            sampler,
            white,
            checker,
            models: HashMap::new(),
            textures: HashMap::new(),
            materials: HashMap::new(),
            materials_made_for: (u64::MAX, u64::MAX),
            instances: instance_buffer(device, instance_capacity),
            instance_capacity,
            uploaded: Vec::new(),
            grid,
            grid_vertices: grid_lines.len() as u32,
            targets: None,
            output_generation: 0,
            list_revision: 0,
            drawn: None,
            pictures: 0,
            stats: FrameStats::default(),
            samples,
            light: None,
        }
    }

    /// The texture the last frame was resolved into, viewed as gamma-encoded bytes
    /// (as egui samples its textures), and a number that changes when that texture
    /// is replaced (a new size).
    pub fn output(&self) -> Option<(&wgpu::TextureView, u64)> {
        self.targets
            .as_ref()
            .map(|t| (&t.gamma_view, self.output_generation))
    }

    /// Draws `list` as seen from `view` into a `size` pixel target and submits it.
    /// `list_changed` says whether `list` differs from the last frame's (when it does
    /// not, no instance data is compared or uploaded).
    #[allow(clippy::too_many_arguments)]
    pub fn render(
        &mut self,
        size: [u32; 2],
        view: &View,
        list: &DrawList,
        list_changed: bool,
        resources: &Resources,
        assets: &mut AssetCache,
        versions: &AssetVersions,
    ) {
        let size = [size[0].max(1), size[1].max(1)];
        if list_changed {
            self.list_revision += 1;
        }
        let key = DrawnKey {
            size,
            view_projection: view.view_projection.to_cols_array(),
            eye: view.eye.to_array(),
            grid: view.grid,
            grid_fade: view.grid_fade,
            shadows: view.shadows,
            list_revision: self.list_revision,
            resources: resources.generation,
            assets: assets.generation(),
            files_changed: versions.changes(),
        };
        // A kept picture costs nothing: the stats say so.
        self.stats = FrameStats::default();
        if self.drawn == Some(key) && self.targets.is_some() {
            return;
        }
        self.ensure_targets(size);
        if list_changed || self.uploaded.len() != list.instances.len() {
            self.upload_instances(&list.instances);
        }
        let made_for = (resources.generation, assets.generation());
        if self.materials_made_for != made_for {
            self.materials.clear();
            self.materials_made_for = made_for;
        }
        let sun = SUN.normalize();
        // The sun's frame follows the scene's box, not the camera: found again
        // only when what is drawn changed (orbiting redraws every frame, and the
        // box walks every instance).
        let light = if view.shadows {
            let made_for = (
                self.list_revision,
                resources.generation,
                assets.generation(),
            );
            match self.light {
                Some((key, light)) if key == made_for => light,
                _ => {
                    let light =
                        scene_bounds(list, |mesh| assets.mesh_model(resources, mesh, versions))
                            .map(|b| light_frame(sun, b));
                    self.light = Some((made_for, light));
                    light
                }
            }
        } else {
            None
        };
        let (light_view_projection, light_size) = light.unwrap_or((Mat4::IDENTITY, 1.0));
        let texel = 1.0 / SHADOW_MAP_SIZE as f32;
        self.queue.write_buffer(
            &self.globals,
            0,
            bytemuck::bytes_of(&Globals {
                view_projection: view.view_projection.to_cols_array_2d(),
                eye: view.eye.extend(view.grid_fade).to_array(),
                sun: sun.extend(0.0).to_array(),
                light_view_projection: light_view_projection.to_cols_array_2d(),
                // Offsets of about one texel of the map, in its depth and along the
                // normal, keep surfaces from shadowing themselves (acne).
                shadow: [
                    f32::from(u8::from(light.is_some())),
                    texel,
                    0.0015,
                    light_size * texel * 1.5,
                ],
            }),
        );

        // Everything each batch needs, made before the pass borrows it.
        let mut draws: Vec<Draw> = Vec::new();
        for batch in &list.batches {
            let Some((key, model)) = assets.mesh_model(resources, batch.mesh, versions) else {
                continue;
            };
            self.ensure_model(&key, &model);
            for part in 0..model.parts.len() {
                // A mesh component's material overrides the model's own.
                let material = if resources.materials.contains_key(&batch.material) {
                    MaterialKey::Resource(batch.material)
                } else {
                    MaterialKey::Part(key.clone(), part)
                };
                if !self.materials.contains_key(&material) {
                    let bind = self.make_material(&material, &model, resources, assets, versions);
                    self.materials.insert(material.clone(), bind);
                }
                draws.push(Draw {
                    model: key.clone(),
                    part,
                    material,
                    instances: batch.first..batch.first + batch.count,
                });
            }
        }

        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("kiln scene"),
            });
        let Some(targets) = &self.targets else { return };
        // The shadow map: depth as the sun sees the scene. With shadows off it is
        // neither drawn nor read (the shader skips the lookup).
        if light.is_some() {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("kiln shadow map"),
                color_attachments: &[],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &self.shadow_map,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                occlusion_query_set: None,
                timestamp_writes: None,
                multiview_mask: None,
            });
            pass.set_pipeline(&self.shadow_pipeline);
            pass.set_bind_group(0, &self.shadow_bind, &[]);
            pass.set_vertex_buffer(1, self.instances.slice(..));
            for draw in &draws {
                let Some(part) =
                    (self.models.get(&draw.model)).and_then(|m| m.parts.get(draw.part))
                else {
                    continue;
                };
                pass.set_vertex_buffer(0, part.vertices.slice(..));
                pass.set_index_buffer(part.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..part.index_count, 0, draw.instances.clone());
                self.stats.draws += 1;
            }
        }
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("kiln scene"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: targets.color.as_ref().unwrap_or(&targets.resolved_view),
                    resolve_target: targets.color.as_ref().map(|_| &targets.resolved_view),
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(CLEAR),
                        store: if targets.color.is_some() {
                            wgpu::StoreOp::Discard
                        } else {
                            wgpu::StoreOp::Store
                        },
                    },
                    depth_slice: None,
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &targets.depth,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(0.0),
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                occlusion_query_set: None,
                timestamp_writes: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, &self.globals_bind, &[]);
            pass.set_vertex_buffer(1, self.instances.slice(..));
            for draw in &draws {
                let Some(part) = self
                    .models
                    .get(&draw.model)
                    .and_then(|m| m.parts.get(draw.part))
                else {
                    continue;
                };
                let Some(material) = self.materials.get(&draw.material) else {
                    continue;
                };
                pass.set_pipeline(if part.closed {
                    &self.closed_pipeline
                } else {
                    &self.open_pipeline
                });
                pass.set_bind_group(1, material, &[]);
                pass.set_vertex_buffer(0, part.vertices.slice(..));
                pass.set_index_buffer(part.indices.slice(..), wgpu::IndexFormat::Uint32);
                pass.draw_indexed(0..part.index_count, 0, draw.instances.clone());
                self.stats.draws += 1;
            }
            if view.grid {
                pass.set_pipeline(&self.line_pipeline);
                pass.set_vertex_buffer(0, self.grid.slice(..));
                pass.draw(0..self.grid_vertices, 0..1);
                self.stats.draws += 1;
            }
        }
        self.queue.submit(std::iter::once(encoder.finish()));
        self.drawn = Some(key);
        self.pictures += 1;
    }

    fn ensure_targets(&mut self, size: [u32; 2]) {
        if self.targets.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        let extent = wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        };
        let make = |label: &str, format, samples, usage| {
            self.device.create_texture(&wgpu::TextureDescriptor {
                label: Some(label),
                size: extent,
                mip_level_count: 1,
                sample_count: samples,
                dimension: wgpu::TextureDimension::D2,
                format,
                usage,
                view_formats: if format == COLOR_FORMAT {
                    &[wgpu::TextureFormat::Rgba8Unorm]
                } else {
                    &[]
                },
            })
        };
        let color = (self.samples > 1).then(|| {
            make(
                "kiln scene msaa",
                COLOR_FORMAT,
                self.samples,
                wgpu::TextureUsages::RENDER_ATTACHMENT,
            )
        });
        let depth = make(
            "kiln scene depth",
            DEPTH_FORMAT,
            self.samples,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        let resolved = make(
            "kiln scene",
            COLOR_FORMAT,
            1,
            wgpu::TextureUsages::RENDER_ATTACHMENT
                | wgpu::TextureUsages::TEXTURE_BINDING
                | wgpu::TextureUsages::COPY_SRC,
        );
        self.targets = Some(Targets {
            size,
            color: color.map(|c| c.create_view(&Default::default())),
            depth: depth.create_view(&Default::default()),
            resolved_view: resolved.create_view(&Default::default()),
            gamma_view: resolved.create_view(&wgpu::TextureViewDescriptor {
                format: Some(wgpu::TextureFormat::Rgba8Unorm),
                ..Default::default()
            }),
            resolved,
        });
        self.output_generation += 1;
    }

    /// Uploads what changed since the last upload, in runs of instances.
    fn upload_instances(&mut self, instances: &[InstanceData]) {
        if instances.len() > self.instance_capacity {
            self.instance_capacity = instances.len().next_power_of_two();
            self.instances = instance_buffer(&self.device, self.instance_capacity);
            self.uploaded.clear();
        }
        let stride = std::mem::size_of::<InstanceData>() as u64;
        if self.uploaded.len() != instances.len() {
            if !instances.is_empty() {
                self.queue
                    .write_buffer(&self.instances, 0, bytemuck::cast_slice(instances));
            }
            self.stats.uploaded += instances.len() as u64 * stride;
            self.uploaded = instances.to_vec();
            return;
        }
        const RUN: usize = 256;
        for (k, (new, old)) in instances
            .chunks(RUN)
            .zip(self.uploaded.chunks_mut(RUN))
            .enumerate()
        {
            if new != old {
                self.queue.write_buffer(
                    &self.instances,
                    (k * RUN) as u64 * stride,
                    bytemuck::cast_slice(new),
                );
                old.copy_from_slice(new);
                self.stats.uploaded += new.len() as u64 * stride;
            }
        }
    }

    fn ensure_model(&mut self, key: &ModelKey, model: &Arc<Model>) {
        if self
            .models
            .get(key)
            .is_some_and(|m| Arc::ptr_eq(&m.model, model))
        {
            return;
        }
        let parts = model
            .parts
            .iter()
            .map(|p| GpuPart {
                vertices: self
                    .device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("kiln mesh vertices"),
                        contents: bytemuck::cast_slice(&p.geometry.vertices),
                        usage: wgpu::BufferUsages::VERTEX,
                    }),
                indices: self
                    .device
                    .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                        label: Some("kiln mesh indices"),
                        contents: bytemuck::cast_slice(&p.geometry.indices),
                        usage: wgpu::BufferUsages::INDEX,
                    }),
                index_count: p.geometry.indices.len() as u32,
                closed: p.geometry.closed,
            })
            .collect();
        self.models.insert(
            key.clone(),
            GpuModel {
                model: model.clone(),
                parts,
            },
        );
        // Its parts' materials point at the old model's textures.
        self.materials
            .retain(|k, _| !matches!(k, MaterialKey::Part(m, _) if m == key));
    }

    /// The texture view for `texture`: uploaded once per loaded copy.
    fn texture_view(&mut self, name: &str, texture: &Arc<Texture>) -> wgpu::TextureView {
        if let Some(t) = self.textures.get(name)
            && Arc::ptr_eq(&t.source, texture)
        {
            return t.view.clone();
        }
        let view = upload_texture(&self.device, &self.queue, texture, name);
        self.textures.insert(
            name.to_owned(),
            GpuTexture {
                source: texture.clone(),
                view: view.clone(),
            },
        );
        view
    }

    fn make_material(
        &mut self,
        key: &MaterialKey,
        model: &Model,
        resources: &Resources,
        assets: &mut AssetCache,
        versions: &AssetVersions,
    ) -> wgpu::BindGroup {
        let (color, roughness, metallic, view) = match key {
            MaterialKey::Resource(id) => {
                let look = resources.materials.get(id);
                // A `.material` colour is what its swatch shows: sRGB.
                let color = linear_from_srgb(look.map_or(glam::Vec4::splat(0.8), |m| m.color));
                let roughness = look.map_or(0.5, |m| m.roughness);
                let view = match look.and_then(|m| m.texture.as_deref()) {
                    None => self.white.clone(),
                    Some(path) => match assets.image(path, versions.of(path)) {
                        Some(t) => self.texture_view(path, &t),
                        None if assets.error(path).is_some() => self.checker.clone(),
                        // Still loading: plain until it arrives.
                        None => self.white.clone(),
                    },
                };
                (color, roughness, 0.0, view)
            }
            MaterialKey::Part(model_key, k) => {
                let Some(part) = model.parts.get(*k) else {
                    return self.material_bind(glam::Vec4::ONE, 0.5, 0.0, &self.checker.clone());
                };
                let view = match part.texture.map(|i| model.images.get(i)) {
                    None => self.white.clone(),
                    Some(Some(Ok(t))) => {
                        let name = format!("{model_key}#{}", part.texture.unwrap_or(0));
                        self.texture_view(&name, t)
                    }
                    Some(_) => self.checker.clone(),
                };
                (part.base_color, part.roughness, part.metallic, view)
            }
        };
        self.material_bind(color, roughness, metallic, &view)
    }

    fn material_bind(
        &self,
        color: glam::Vec4,
        roughness: f32,
        metallic: f32,
        view: &wgpu::TextureView,
    ) -> wgpu::BindGroup {
        let uniform = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("kiln material"),
                contents: bytemuck::bytes_of(&MaterialUniform {
                    base_color: color.to_array(),
                    params: [roughness, metallic, 0.0, 0.0],
                }),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("kiln material"),
            layout: &self.material_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: uniform.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(view),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: wgpu::BindingResource::Sampler(&self.sampler),
                },
            ],
        })
    }

    /// Reads the last frame back (tests, thumbnails): RGBA, sRGB.
    pub fn read_output(&self) -> Result<image::RgbaImage, String> {
        let targets = self.targets.as_ref().ok_or("nothing was rendered")?;
        read_texture(&self.device, &self.queue, &targets.resolved)
    }
}

/// What differs between the renderer's pipelines.
struct PipelineSpec<'a> {
    label: &'a str,
    layout: &'a wgpu::PipelineLayout,
    /// `vs_<entry>` and `fs_<entry>` in `scene.wgsl`.
    entry: &'a str,
    buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    topology: wgpu::PrimitiveTopology,
    cull: Option<wgpu::Face>,
    depth_write: bool,
    depth_compare: wgpu::CompareFunction,
    blend: Option<wgpu::BlendState>,
    samples: u32,
}

/// A pipeline drawing into the offscreen target (colour, reversed depth, as many
/// samples as the target has).
fn pipeline(
    device: &wgpu::Device,
    shader: &wgpu::ShaderModule,
    spec: &PipelineSpec,
) -> wgpu::RenderPipeline {
    let vertex_entry = format!("vs_{}", spec.entry);
    let fragment_entry = format!("fs_{}", spec.entry);
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(spec.label),
        layout: Some(spec.layout),
        vertex: wgpu::VertexState {
            module: shader,
            entry_point: Some(vertex_entry.as_str()),
            compilation_options: Default::default(),
            buffers: spec.buffers,
        },
        primitive: wgpu::PrimitiveState {
            topology: spec.topology,
            front_face: wgpu::FrontFace::Ccw,
            cull_mode: spec.cull,
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(spec.depth_write),
            depth_compare: Some(spec.depth_compare),
            stencil: Default::default(),
            bias: Default::default(),
        }),
        multisample: wgpu::MultisampleState {
            count: spec.samples,
            ..Default::default()
        },
        fragment: Some(wgpu::FragmentState {
            module: shader,
            entry_point: Some(fragment_entry.as_str()),
            compilation_options: Default::default(),
            targets: &[Some(wgpu::ColorTargetState {
                format: COLOR_FORMAT,
                blend: spec.blend,
                write_mask: wgpu::ColorWrites::ALL,
            })],
        }),
        multiview_mask: None,
        cache: None,
    })
}

/// The pipeline that draws depth from the sun into the shadow map: the mesh
/// vertices only, both faces (thin and open surfaces cast shadows too), standard
/// depth (0 near the sun), a slope bias against acne.
fn shadow_pipeline(
    device: &wgpu::Device,
    shader: &wgpu::ShaderModule,
    globals: &wgpu::BindGroupLayout,
    buffers: &[Option<wgpu::VertexBufferLayout>],
) -> wgpu::RenderPipeline {
    let layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some("kiln shadow map"),
        bind_group_layouts: &[Some(globals)],
        immediate_size: 0,
    });
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some("kiln shadow map"),
        layout: Some(&layout),
        vertex: wgpu::VertexState {
            module: shader,
            entry_point: Some("vs_shadow"),
            compilation_options: Default::default(),
            buffers,
        },
        primitive: wgpu::PrimitiveState {
            topology: wgpu::PrimitiveTopology::TriangleList,
            front_face: wgpu::FrontFace::Ccw,
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: Some(wgpu::DepthStencilState {
            format: SHADOW_FORMAT,
            depth_write_enabled: Some(true),
            depth_compare: Some(wgpu::CompareFunction::Less),
            stencil: Default::default(),
            bias: wgpu::DepthBiasState {
                constant: 2,
                slope_scale: 2.0,
                clamp: 0.0,
            },
        }),
        multisample: Default::default(),
        fragment: None,
        multiview_mask: None,
        cache: None,
    })
}

/// The world box around every instance drawn (the models' own boxes, or a unit
/// box for a model still loading).
pub fn scene_bounds(
    list: &DrawList,
    mut model: impl FnMut(ResourceId) -> Option<(ModelKey, Arc<Model>)>,
) -> Option<(Vec3, Vec3)> {
    let mut out: Option<(Vec3, Vec3)> = None;
    for batch in &list.batches {
        let (lo, hi) =
            model(batch.mesh).map_or((Vec3::splat(-0.5), Vec3::splat(0.5)), |(_, m)| m.bounds());
        let range = batch.first as usize..(batch.first + batch.count) as usize;
        for data in &list.instances[range] {
            let to_world = Mat4::from_cols_array_2d(&data.model);
            out = Some(super::placement::grow(out, &to_world, (lo, hi)));
        }
    }
    out
}

/// The sun's view of the box `bounds` for the shadow map: an orthographic
/// projection along `sun` (the direction towards it) that holds the whole box,
/// and the width it covers in world units.
pub fn light_frame(sun: Vec3, (lo, hi): (Vec3, Vec3)) -> (Mat4, f32) {
    let centre = (lo + hi) * 0.5;
    let radius = ((hi - lo).length() * 0.5).max(0.5);
    let up = if sun.normalize().y.abs() > 0.99 {
        Vec3::Z
    } else {
        Vec3::Y
    };
    let eye = centre + sun.normalize() * radius * 2.0;
    let view = glam::camera::rh::view::look_at_mat4(eye, centre, up);
    // Depth 0..1 from the sun (not reversed: the map is compared "less or equal").
    let projection = glam::camera::rh::proj::directx::orthographic(
        -radius,
        radius,
        -radius,
        radius,
        0.0,
        radius * 4.0,
    );
    (projection * view, radius * 2.0)
}

/// One instanced draw: a part of a model, with a material, for a run of instances.
struct Draw {
    model: ModelKey,
    part: usize,
    material: MaterialKey,
    instances: std::ops::Range<u32>,
}

/// sRGB-encoded RGB (alpha as is) to linear values.
pub fn linear_from_srgb(c: glam::Vec4) -> glam::Vec4 {
    let f = |v: f32| {
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    glam::Vec4::new(f(c.x), f(c.y), f(c.z), c.w)
}

fn uniform_binding() -> wgpu::BindingType {
    wgpu::BindingType::Buffer {
        ty: wgpu::BufferBindingType::Uniform,
        has_dynamic_offset: false,
        min_binding_size: None,
    }
}

fn instance_buffer(device: &wgpu::Device, capacity: usize) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("kiln instances"),
        size: (capacity * std::mem::size_of::<InstanceData>()) as u64,
        usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    })
}

fn upload_texture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &Texture,
    label: &str,
) -> wgpu::TextureView {
    let (width, height) = texture.levels.first().map_or((1, 1), |l| l.dimensions());
    let data: Vec<u8> = texture
        .levels
        .iter()
        .flat_map(|l| l.as_raw().iter().copied())
        .collect();
    device
        .create_texture_with_data(
            queue,
            &wgpu::TextureDescriptor {
                label: Some(label),
                size: wgpu::Extent3d {
                    width,
                    height,
                    depth_or_array_layers: 1,
                },
                mip_level_count: texture.levels.len().max(1) as u32,
                sample_count: 1,
                dimension: wgpu::TextureDimension::D2,
                format: COLOR_FORMAT,
                usage: wgpu::TextureUsages::TEXTURE_BINDING,
                view_formats: &[],
            },
            wgpu::util::TextureDataOrder::LayerMajor,
            &data,
        )
        .create_view(&Default::default())
}

/// The ground grid: a line every metre out to 50 m, brighter every 10 m, and the X
/// (red) and Z (blue) axes.
fn grid_lines() -> Vec<LineVertex> {
    let mut out = Vec::new();
    let extent = 50;
    let mut line = |a: Vec3, b: Vec3, color: [f32; 4]| {
        out.push(LineVertex {
            position: a.to_array(),
            color,
        });
        out.push(LineVertex {
            position: b.to_array(),
            color,
        });
    };
    let e = extent as f32;
    for i in -extent..=extent {
        let f = i as f32;
        let color = if i == 0 {
            continue;
        } else if i % 10 == 0 {
            [0.045, 0.045, 0.05, 0.9]
        } else {
            [0.018, 0.018, 0.02, 0.8]
        };
        line(Vec3::new(f, 0.0, -e), Vec3::new(f, 0.0, e), color);
        line(Vec3::new(-e, 0.0, f), Vec3::new(e, 0.0, f), color);
    }
    line(
        Vec3::new(-e, 0.0, 0.0),
        Vec3::new(e, 0.0, 0.0),
        [0.5, 0.05, 0.04, 0.9],
    );
    line(
        Vec3::new(0.0, 0.0, -e),
        Vec3::new(0.0, 0.0, e),
        [0.04, 0.1, 0.55, 0.9],
    );
    out
}

/// Copies a texture to the CPU.
pub fn read_texture(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    texture: &wgpu::Texture,
) -> Result<image::RgbaImage, String> {
    let (width, height) = (texture.width(), texture.height());
    let row = width as usize * 4;
    let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize;
    let padded = row.div_ceil(align) * align;
    let buffer = device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("kiln read back"),
        size: (padded * height as usize) as u64,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = device.create_command_encoder(&Default::default());
    encoder.copy_texture_to_buffer(
        texture.as_image_copy(),
        wgpu::TexelCopyBufferInfo {
            buffer: &buffer,
            layout: wgpu::TexelCopyBufferLayout {
                offset: 0,
                bytes_per_row: Some(padded as u32),
                rows_per_image: None,
            },
        },
        wgpu::Extent3d {
            width,
            height,
            depth_or_array_layers: 1,
        },
    );
    let index = queue.submit(std::iter::once(encoder.finish()));
    let (sender, receiver) = std::sync::mpsc::channel();
    buffer
        .slice(..)
        .map_async(wgpu::MapMode::Read, move |r| drop(sender.send(r)));
    device
        .poll(wgpu::PollType::Wait {
            submission_index: Some(index),
            timeout: Some(std::time::Duration::from_secs(30)),
        })
        .map_err(|e| format!("waiting for the GPU failed: {e}"))?;
    receiver
        .recv()
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("reading the frame back failed: {e}"))?;
    let mapped = buffer
        .slice(..)
        .get_mapped_range()
        .map_err(|e| format!("reading the frame back failed: {e}"))?;
    let pixels: Vec<u8> = mapped
        .chunks_exact(padded)
        .flat_map(|r| r[..row].iter().copied())
        .collect();
    image::RgbaImage::from_raw(width, height, pixels).ok_or_else(|| "wrong frame size".into())
}

#[cfg(test)]
mod drawn_tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A frame that changes nothing the scene shows keeps the last picture; a
    /// new camera, size or draw list draws a new one.
    #[test]
    fn the_same_inputs_keep_the_picture() {
        let Ok(gpu) = crate::render::headless::HeadlessGpu::new() else {
            // No GPU driver at all: the image tests say so; nothing to check here.
            return;
        };
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("kiln.project"), "{}").unwrap();
        let project = kiln_core::Project::open(dir.path()).unwrap();
        let mut assets = AssetCache::new(project, None);
        let resources = Resources::default();
        let versions = AssetVersions::default();
        let list = DrawList::default();
        let mut r = SceneRenderer::new(&gpu.device, &gpu.queue);
        let view = |x: f32| View {
            view_projection: Mat4::from_translation(Vec3::new(x, 0.0, 0.0)),
            eye: Vec3::new(0.0, 1.0, 5.0),
            grid: true,
            grid_fade: 40.0,
            shadows: false,
        };
        let mut draw = |r: &mut SceneRenderer, size: [u32; 2], x: f32, changed: bool| {
            r.render(
                size,
                &view(x),
                &list,
                changed,
                &resources,
                &mut assets,
                &versions,
            );
            r.pictures_drawn()
        };
        assert_eq!(draw(&mut r, [64, 48], 0.0, true), 1);
        assert_eq!(draw(&mut r, [64, 48], 0.0, false), 1, "nothing changed");
        assert_eq!(draw(&mut r, [64, 48], 0.5, false), 2, "the camera moved");
        assert_eq!(
            draw(&mut r, [80, 48], 0.5, false),
            3,
            "the view was resized"
        );
        assert_eq!(draw(&mut r, [80, 48], 0.5, true), 4, "the world changed");
        assert_eq!(draw(&mut r, [80, 48], 0.5, false), 4);
    }
}

//! A GPU device without a window: for image tests, benchmarks and thumbnails made
//! outside the editor. Prefers a software rasterizer (lavapipe, llvmpipe) where
//! there is one, so that images are the same on every machine that runs the tests.

use egui_wgpu::wgpu;

/// A device and its queue.
#[derive(Debug, Clone)]
pub struct HeadlessGpu {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// What the adapter is, for messages.
    pub adapter: String,
}

impl HeadlessGpu {
    /// Opens a device; an error says why there is none (no Vulkan or GL driver: on
    /// Debian, `apt-get install mesa-vulkan-drivers`).
    pub fn new() -> Result<Self, String> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::all()));
        // Software first (the same pixels everywhere), then Vulkan before GL.
        let adapter = adapters
            .into_iter()
            .min_by_key(|a| {
                let info = a.get_info();
                (
                    info.device_type != wgpu::DeviceType::Cpu,
                    info.backend != wgpu::Backend::Vulkan,
                )
            })
            .ok_or("no GPU adapter (on Debian: apt-get install mesa-vulkan-drivers)")?;
        let info = adapter.get_info();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("kiln headless"),
            required_limits: wgpu::Limits::downlevel_defaults().using_resolution(adapter.limits()),
            ..Default::default()
        }))
        .map_err(|e| format!("{} ({:?}): {e}", info.name, info.backend))?;
        Ok(HeadlessGpu {
            device,
            queue,
            adapter: format!("{} ({:?})", info.name, info.backend),
        })
    }

    /// Waits (up to 30 seconds) until everything submitted is done: benchmarks wait
    /// outside their timing.
    pub fn wait(&self) -> Result<(), String> {
        self.device
            .poll(wgpu::PollType::Wait {
                submission_index: None,
                timeout: Some(std::time::Duration::from_secs(30)),
            })
            .map(|_| ())
            .map_err(|e| format!("waiting for the GPU failed: {e}"))
    }
}

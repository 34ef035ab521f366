//! What the viewport draws, as plain data: every visible mesh of the runtime world
//! as an instance (its world matrix and whether it is selected), grouped into one
//! batch per mesh and material so that each batch is one instanced draw. Built
//! without a GPU, so tests and benchmarks can call it; rebuilt only when the world,
//! the selection or the resources changed (see [`SceneKey`]).

use std::collections::{HashMap, HashSet};

use glam::{Affine3A, Mat4, Vec3};
use kiln_core::{Entity, Instance, ResourceId, World};

/// One instance as the GPU reads it.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct InstanceData {
    /// Model -> world, column-major.
    pub model: [[f32; 4]; 4],
    /// x: 1 when selected.
    pub params: [f32; 4],
}

/// Instances drawn with one mesh and one material, `instances[first..first + count]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Batch {
    /// The `.mesh` resource.
    pub mesh: ResourceId,
    /// The `.material` resource ([`ResourceId::NONE`]: the model's own materials).
    pub material: ResourceId,
    /// First instance.
    pub first: u32,
    /// Number of instances.
    pub count: u32,
}

/// Everything to draw, grouped by batch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DrawList {
    /// Instances, batch after batch.
    pub instances: Vec<InstanceData>,
    /// The entity each instance draws (for picking), parallel to `instances`.
    pub owners: Vec<Entity>,
    /// The batches.
    pub batches: Vec<Batch>,
}

/// What a draw list was built from: when none of it changed, neither did the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SceneKey {
    /// Which spawn of the preview world.
    pub spawn: u64,
    /// The transform manager's change count.
    pub transforms: u64,
    /// The mesh manager's change count.
    pub meshes: u64,
    /// A hash of the selected entities.
    pub selection: u64,
    /// Which load of the mesh resources (their sizes scale instances).
    pub resources: u64,
    /// A hash of the entities hidden in the viewport.
    pub hidden: u64,
}

/// An order-independent hash of a set of entities.
fn hash_of(set: &HashSet<Entity>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut ids: Vec<Entity> = set.iter().copied().collect();
    ids.sort_unstable_by_key(|e| e.to_bits());
    let mut h = std::collections::hash_map::DefaultHasher::new();
    ids.hash(&mut h);
    h.finish()
}

impl SceneKey {
    /// The key of `world` with `selected`, spawn number and resources version.
    pub fn of(world: &World, spawn: u64, selected: &HashSet<Entity>, resources: u64) -> Self {
        SceneKey {
            spawn,
            transforms: world.transforms.change_count(),
            meshes: world.meshes.change_count(),
            selection: hash_of(selected),
            resources,
            hidden: 0,
        }
    }

    /// The key with `hidden` left out of the picture.
    pub fn hiding(self, hidden: &HashSet<Entity>) -> Self {
        SceneKey {
            hidden: if hidden.is_empty() {
                0
            } else {
                hash_of(hidden)
            },
            ..self
        }
    }
}

impl DrawList {
    /// Leaves out the instances of the entities in `hidden` (hidden in the
    /// viewport by the designer), keeping the batches' order.
    pub fn hide(&mut self, hidden: &HashSet<Entity>) {
        if hidden.is_empty() {
            return;
        }
        let mut kept = DrawList::default();
        for batch in &self.batches {
            let first = kept.instances.len();
            let range = batch.first as usize..(batch.first + batch.count) as usize;
            for (data, owner) in self.instances[range.clone()]
                .iter()
                .zip(&self.owners[range])
            {
                if !hidden.contains(owner) {
                    kept.instances.push(*data);
                    kept.owners.push(*owner);
                }
            }
            let count = kept.instances.len() - first;
            if count > 0 {
                kept.batches.push(Batch {
                    first: first as u32,
                    count: count as u32,
                    ..*batch
                });
            }
        }
        *self = kept;
    }

    /// Builds the list of `world`'s visible meshes; `size` gives each `.mesh`
    /// resource's scale (`None`: the resource is missing, nothing is drawn).
    pub fn build(
        world: &World,
        selected: &HashSet<Entity>,
        size: impl Fn(ResourceId) -> Option<Vec3>,
    ) -> DrawList {
        let meshes = &world.meshes;
        let transforms = &world.transforms;
        let n = meshes.len();
        // Pass 1: each instance's batch, and how many each batch holds.
        let mut batch_index: HashMap<(ResourceId, ResourceId), u32> = HashMap::new();
        let mut batches: Vec<Batch> = Vec::new();
        let mut sizes: Vec<Vec3> = Vec::new();
        // (mesh instance, batch, transform instance) of each drawn mesh.
        let mut drawn: Vec<(Instance, u32, Instance)> = Vec::with_capacity(n);
        for i in 0..n {
            let inst = Instance(i as u32);
            let mesh = meshes.get(inst);
            if !mesh.visible || mesh.mesh == ResourceId::NONE {
                continue;
            }
            let Some(t) = transforms.lookup(meshes.entity(inst)) else {
                continue;
            };
            let b = *batch_index
                .entry((mesh.mesh, mesh.material))
                .or_insert_with(|| {
                    batches.push(Batch {
                        mesh: mesh.mesh,
                        material: mesh.material,
                        first: 0,
                        count: 0,
                    });
                    sizes.push(size(mesh.mesh).unwrap_or(Vec3::NAN));
                    (batches.len() - 1) as u32
                });
            if sizes[b as usize].is_nan() {
                continue;
            }
            batches[b as usize].count += 1;
            drawn.push((inst, b, t));
        }
        // Pass 2: lay the batches out one after another and fill them in.
        let mut next = 0;
        for b in &mut batches {
            b.first = next;
            next += b.count;
        }
        let total = next as usize;
        let mut out = DrawList {
            instances: vec![bytemuck::Zeroable::zeroed(); total],
            owners: vec![Entity::from_bits(0); total],
            batches: Vec::new(),
        };
        let mut cursor: Vec<u32> = batches.iter().map(|b| b.first).collect();
        for (inst, b, t) in drawn {
            let owner = meshes.entity(inst);
            let model = transforms.world(t) * Affine3A::from_scale(sizes[b as usize]);
            let at = cursor[b as usize] as usize;
            cursor[b as usize] += 1;
            out.instances[at] = InstanceData {
                model: Mat4::from(model).to_cols_array_2d(),
                params: [
                    f32::from(u8::from(selected.contains(&owner))),
                    0.0,
                    0.0,
                    0.0,
                ],
            };
            out.owners[at] = owner;
        }
        // Batches of missing resources hold nothing.
        out.batches = batches.into_iter().filter(|b| b.count > 0).collect();
        out
    }
}

//! The built-in component managers. Each owns its component type's data as a
//! structure of arrays and updates all of its instances in one pass. The registry of
//! the built-in types is in `builtins.rs`: the registry (`registry.rs`) is below
//! the components, which each describe their type with it.

pub(crate) mod behaviours;
mod builtins;
pub(crate) mod debug_name;
pub(crate) mod mesh;
pub(crate) mod point_mass;
pub(crate) mod transform;

pub use behaviours::{Oscillator, OscillatorManager, Rotator, RotatorManager};
pub use debug_name::DebugNameManager;
pub use mesh::{Mesh, MeshManager};
pub use point_mass::{PointMass, PointMassManager};
pub use transform::{NewTransform, TRANSFORM_RECORD, TransformManager, trs};

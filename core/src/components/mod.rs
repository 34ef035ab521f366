//! The built-in component managers. Each owns its component type's data as a
//! structure of arrays and updates all of its instances in one pass. Each type's
//! registration (its fields, compile and spawn functions) is in `builtins/`,
//! above the registry and the world.

pub(crate) mod behaviours;
pub(crate) mod debug_name;
pub(crate) mod mesh;
pub(crate) mod point_mass;
pub(crate) mod transform;

pub use behaviours::{Oscillator, OscillatorManager, Rotator, RotatorManager};
pub use debug_name::DebugNameManager;
pub use mesh::{Mesh, MeshManager};
pub use point_mass::{PointMass, PointMassManager};
pub use transform::{NewTransform, TransformManager, trs};

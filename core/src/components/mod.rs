//! The built-in component managers. Each owns its component type's data as a
//! structure of arrays and updates all of its instances in one pass. The
//! transform manager, the scene graph every other one writes through, is
//! `transform.rs` below them (re-exported here). Each type's
//! registration (its fields, compile and spawn functions) is in `builtins/`,
//! above the registry and the world.

pub(crate) mod behaviours;
pub(crate) mod debug_name;
pub(crate) mod mesh;
pub(crate) mod point_mass;

pub use crate::transform::{NewTransform, TransformManager, trs};
pub use behaviours::{Oscillator, OscillatorManager, Rotator, RotatorManager};
pub use debug_name::DebugNameManager;
pub use mesh::{Mesh, MeshManager};
pub use point_mass::{PointMass, PointMassManager};

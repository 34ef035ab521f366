//! The built-in component managers. Each owns its component type's data as a
//! structure of arrays and updates all of its instances in one pass.

mod behaviours;
mod debug_name;
mod mesh;
mod point_mass;
mod transform;

pub use behaviours::{Oscillator, OscillatorManager, Rotator, RotatorManager};
pub use debug_name::DebugNameManager;
pub use mesh::{Mesh, MeshManager};
pub use point_mass::{PointMass, PointMassManager};
pub use transform::{NewTransform, TransformManager, trs};

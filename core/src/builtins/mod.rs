//! The registry every project starts from: the built-in component types, each
//! registered in a file of its own here, apart from its manager's storage in
//! `components/` (so that the registry, the world and the managers import only
//! downward), and the built-in resource types.

mod behaviours;
mod debug_name;
mod mesh;
mod point_mass;
mod transform;

use crate::registry::{ComponentType, Registry, builtin_resource_types};
#[cfg(test)]
pub(crate) use debug_name::spawn_debug_name;

impl Registry {
    /// The built-in component and resource types.
    pub fn with_builtins() -> Self {
        let mut r = Registry::new();
        for ty in builtin_components() {
            // Built-in names are distinct and their hashes checked by a test.
            let _ = r.register_component(ty);
        }
        for ty in builtin_resource_types() {
            let _ = r.register_resource_type(ty);
        }
        r
    }
}

fn builtin_components() -> Vec<ComponentType> {
    vec![
        transform::component_type(),
        debug_name::component_type(),
        mesh::component_type(),
        point_mass::component_type(),
        behaviours::oscillator_type(),
        behaviours::rotator_type(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegistryError;

    #[test]
    fn builtins_register_without_collisions() {
        let r = Registry::with_builtins();
        assert_eq!(r.components().len(), builtin_components().len());
        assert!(
            r.components()
                .windows(2)
                .all(|w| w[0].spawn_order <= w[1].spawn_order)
        );
        assert_eq!(r.component("transform").map(|c| c.spawn_order), Some(0));
        assert_eq!(r.resource_types().len(), builtin_resource_types().len());
    }

    #[test]
    fn duplicate_names_are_refused() {
        let mut r = Registry::with_builtins();
        let again = mesh::component_type();
        assert_eq!(
            r.register_component(again),
            Err(RegistryError::DuplicateName("mesh".into()))
        );
    }
}

//! The viewport's renderer, apart from the editor's panels: the scene as plain data
//! ([`scene`]), models and textures ([`model`], [`geometry`], loaded off the UI
//! thread by [`assets`]), picking by ray casts ([`picking`]), where placed things land ([`placement`]), the asset browser's thumbnails
//! ([`thumbnail`]) and drawing with wgpu
//! into an offscreen colour and depth target ([`gpu`]), in the editor's window or
//! headless ([`headless`]) for tests, benchmarks and thumbnails.

pub mod assets;
pub mod geometry;
pub mod gpu;
pub mod headless;
pub mod model;
pub mod picking;
pub mod placement;
pub mod resources;
pub mod scene;
pub mod thumbnail;

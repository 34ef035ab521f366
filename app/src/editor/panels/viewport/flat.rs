//! The flat view: what the viewport draws when there is no GPU renderer (eframe
//! running on OpenGL without wgpu, or a test harness without a renderer). Triangles
//! are clipped against the near plane, shaded by one light and painted far to near
//! with egui's painter; entities smaller than a few points are dots. It is an
//! approximation (no depth buffer: intersecting surfaces can overlap wrongly), and
//! the viewport says so.

use std::sync::Arc;

use egui::{Color32, Pos2, Rect};
use glam::{Mat4, Vec3, Vec4};
use kiln_core::ResourceId;

use super::to_screen;
use crate::render::model::Model;
use crate::render::scene::DrawList;

/// Entities smaller than this on screen (radius in points) are drawn as one dot.
const DOT_RADIUS: f32 = 2.5;

/// Triangles whose corners come closer than this to the eye plane are clipped there.
const NEAR_W: f32 = 0.05;

/// Buffers kept between frames, so a frame with many entities does not regrow them.
#[derive(Debug, Default)]
pub struct FlatBuffers {
    points: Vec<Pos2>,
    faces: Vec<Face>,
}

#[derive(Debug)]
struct Face {
    start: u32,
    len: u32,
    depth: f32,
    color: Color32,
}

/// Paints `list` into `rect`. `model` gives a batch's model; `color` the colour of a
/// batch's part (its material's, or the model's own).
pub fn paint(
    painter: &egui::Painter,
    rect: Rect,
    vp: &Mat4,
    list: &DrawList,
    model: &mut dyn FnMut(ResourceId) -> Option<Arc<Model>>,
    color: &dyn Fn(ResourceId, &Model, usize) -> Vec4,
    buffers: &mut FlatBuffers,
) {
    let light = Vec3::new(0.45, 0.8, 0.35).normalize();
    let FlatBuffers { points, faces } = buffers;
    points.clear();
    faces.clear();
    let to_screen = |c: Vec4| to_screen(rect, c);
    let visible_area = rect.expand(40.0);
    let mut clipped: Vec<Vec4> = Vec::with_capacity(8);
    for batch in &list.batches {
        let Some(m) = model(batch.mesh) else { continue };
        let (lo, hi) = m.bounds();
        let center_local = (lo + hi) * 0.5;
        let radius_local = (hi - lo).length() * 0.5;
        let range = batch.first as usize..(batch.first + batch.count) as usize;
        for data in &list.instances[range] {
            let model_matrix = Mat4::from_cols_array_2d(&data.model);
            let selected = data.params[0] > 0.5;
            let tint = |c: Color32| {
                if selected {
                    c.lerp_to_gamma(Color32::from_rgb(255, 150, 30), 0.55)
                } else {
                    c
                }
            };
            let mvp = *vp * model_matrix;
            let center = mvp * center_local.extend(1.0);
            let scale = model_matrix
                .x_axis
                .truncate()
                .length()
                .max(model_matrix.y_axis.truncate().length())
                .max(model_matrix.z_axis.truncate().length());
            let radius = radius_local * scale;
            if center.w < -radius {
                continue;
            }
            // Cull what is off screen, and draw what is tiny as a dot.
            if center.w > radius {
                let c = to_screen(center);
                let screen_radius = radius / center.w * rect.height() * 0.5 * vp.y_axis.y.abs();
                if !visible_area.expand(screen_radius).contains(c) {
                    continue;
                }
                if screen_radius < DOT_RADIUS {
                    let r = screen_radius.max(1.0);
                    let start = points.len() as u32;
                    points.extend([
                        c + egui::vec2(-r, -r),
                        c + egui::vec2(r, -r),
                        c + egui::vec2(r, r),
                        c + egui::vec2(-r, r),
                    ]);
                    let base = color(batch.material, &m, 0);
                    faces.push(Face {
                        start,
                        len: 4,
                        depth: center.w,
                        color: tint(to_color(base, 0.85)),
                    });
                    continue;
                }
            }
            for (k, part) in m.parts.iter().enumerate() {
                let base = color(batch.material, &m, k);
                for t in part.geometry.triangles() {
                    let world = t.map(|p| model_matrix.transform_point3(p));
                    let normal = (world[1] - world[0])
                        .cross(world[2] - world[0])
                        .normalize_or_zero();
                    clipped.clear();
                    clip_near(&t.map(|p| mvp * p.extend(1.0)), &mut clipped);
                    if clipped.len() < 3 {
                        continue;
                    }
                    let start = points.len() as u32;
                    let depth = clipped.iter().map(|c| c.w).sum::<f32>() / clipped.len() as f32;
                    points.extend(clipped.iter().map(|c| to_screen(*c)));
                    let shade = 0.45 + 0.55 * normal.dot(light).abs();
                    faces.push(Face {
                        start,
                        len: clipped.len() as u32,
                        depth,
                        color: tint(to_color(base, shade)),
                    });
                }
            }
        }
    }
    // Far to near.
    faces.sort_unstable_by(|a, b| b.depth.total_cmp(&a.depth));
    // Every face in one mesh: egui has nothing left to tessellate.
    let mut batch = egui::epaint::Mesh::default();
    batch.reserve_triangles(faces.len() * 2);
    batch.reserve_vertices(faces.len() * 4);
    for f in faces.iter() {
        let base = batch.vertices.len() as u32;
        let pts = &points[f.start as usize..(f.start + f.len) as usize];
        for p in pts {
            batch.colored_vertex(*p, f.color);
        }
        for k in 1..pts.len().saturating_sub(1) as u32 {
            batch.add_triangle(base, base + k, base + k + 1);
        }
    }
    painter.add(egui::Shape::mesh(batch));
}

/// The ground grid of the flat view: a line every metre out to 20 m.
pub fn grid(painter: &egui::Painter, rect: Rect, vp: &Mat4) {
    for i in -20..=20 {
        let f = i as f32;
        let color = if i == 0 {
            Color32::from_gray(95)
        } else {
            Color32::from_gray(60)
        };
        for (a, b) in [
            (Vec3::new(f, 0.0, -20.0), Vec3::new(f, 0.0, 20.0)),
            (Vec3::new(-20.0, 0.0, f), Vec3::new(20.0, 0.0, f)),
        ] {
            if let Some(segment) = project_segment(vp, rect, a, b) {
                painter.line_segment(segment, egui::Stroke::new(1.0, color));
            }
        }
    }
}

/// Projects a world segment, clipped to what lies in front of the camera.
fn project_segment(vp: &Mat4, rect: Rect, a: Vec3, b: Vec3) -> Option<[Pos2; 2]> {
    let (mut ca, mut cb) = (*vp * a.extend(1.0), *vp * b.extend(1.0));
    if ca.w < NEAR_W && cb.w < NEAR_W {
        return None;
    }
    // Move the endpoint behind the camera to where the segment crosses the near plane.
    if ca.w < NEAR_W {
        ca = cb + (ca - cb) * ((cb.w - NEAR_W) / (cb.w - ca.w));
    } else if cb.w < NEAR_W {
        cb = ca + (cb - ca) * ((ca.w - NEAR_W) / (ca.w - cb.w));
    }
    Some([to_screen(rect, ca), to_screen(rect, cb)])
}

/// Clips a triangle in clip space to `w >= NEAR_W` (what lies in front of the eye),
/// so that a surface passing beside or behind the camera is cut where it leaves the
/// view instead of dropped or drawn as a sliver across the screen.
fn clip_near(triangle: &[Vec4; 3], out: &mut Vec<Vec4>) {
    for k in 0..3 {
        let a = triangle[k];
        let b = triangle[(k + 1) % 3];
        let (a_in, b_in) = (a.w >= NEAR_W, b.w >= NEAR_W);
        if a_in {
            out.push(a);
        }
        if a_in != b_in {
            let t = (NEAR_W - a.w) / (b.w - a.w);
            out.push(a + (b - a) * t);
        }
    }
}

fn to_color(c: Vec4, shade: f32) -> Color32 {
    let f = |v: f32| ((v * shade).clamp(0.0, 1.0) * 255.0) as u8;
    Color32::from_rgba_unmultiplied(f(c.x), f(c.y), f(c.z), (c.w.clamp(0.0, 1.0) * 255.0) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_triangle_crossing_the_near_plane_is_cut_there_not_dropped() {
        let mut out = Vec::new();
        clip_near(
            &[
                Vec4::new(0.0, 0.0, 0.0, 1.0),
                Vec4::new(1.0, 0.0, 0.0, -1.0),
                Vec4::new(0.0, 1.0, 0.0, 1.0),
            ],
            &mut out,
        );
        assert_eq!(out.len(), 4);
        assert!(out.iter().all(|c| c.w >= NEAR_W - 1e-6));
        out.clear();
        clip_near(&[Vec4::new(0.0, 0.0, 0.0, -1.0); 3], &mut out);
        assert!(out.is_empty());
    }
}

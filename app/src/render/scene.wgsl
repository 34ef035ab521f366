// The viewport's shading: a directional sun that casts shadows (one shadow map over
// the scene, filtered over 3x3 texels), a sky/ground hemisphere ambient and a
// Blinn-Phong highlight whose sharpness follows the material's roughness. Depth is
// reversed (1 near, 0 far) for precision across a large ground; the shadow map's is
// not (0 at the sun).

struct Globals {
    view_projection: mat4x4<f32>,
    eye: vec4<f32>,
    // xyz: direction towards the sun.
    sun: vec4<f32>,
    light_view_projection: mat4x4<f32>,
    // x: shadows on, y: a texel of the map, z: depth bias, w: normal offset.
    shadow: vec4<f32>,
};
@group(0) @binding(0) var<uniform> globals: Globals;
@group(0) @binding(1) var shadow_map: texture_depth_2d;
@group(0) @binding(2) var shadow_sampler: sampler_comparison;

struct Material {
    base_color: vec4<f32>,
    // x: roughness, y: metallic.
    params: vec4<f32>,
};
@group(1) @binding(0) var<uniform> material: Material;
@group(1) @binding(1) var base_texture: texture_2d<f32>;
@group(1) @binding(2) var base_sampler: sampler;

struct MeshIn {
    @location(0) position: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) m0: vec4<f32>,
    @location(4) m1: vec4<f32>,
    @location(5) m2: vec4<f32>,
    @location(6) m3: vec4<f32>,
    @location(7) params: vec4<f32>,
};

struct MeshOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) world: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) uv: vec2<f32>,
    @location(3) selected: f32,
};

@vertex
fn vs_mesh(v: MeshIn) -> MeshOut {
    let model = mat4x4<f32>(v.m0, v.m1, v.m2, v.m3);
    let world = model * vec4<f32>(v.position, 1.0);
    // Normals transform by the inverse transpose; the cofactor matrix is that times
    // the determinant, so after normalizing only the determinant's sign is left.
    let a = v.m0.xyz;
    let b = v.m1.xyz;
    let c = v.m2.xyz;
    let cofactor = mat3x3<f32>(cross(b, c), cross(c, a), cross(a, b));
    var normal = cofactor * v.normal;
    if dot(a, cross(b, c)) < 0.0 {
        normal = -normal;
    }
    var out: MeshOut;
    out.clip = globals.view_projection * world;
    out.world = world.xyz;
    out.normal = normal;
    out.uv = v.uv;
    out.selected = v.params.x;
    return out;
}

// Depth as the sun sees it, into the shadow map.
@vertex
fn vs_shadow(v: MeshIn) -> @builtin(position) vec4<f32> {
    let model = mat4x4<f32>(v.m0, v.m1, v.m2, v.m3);
    return globals.light_view_projection * model * vec4<f32>(v.position, 1.0);
}

// How much of the sun reaches `world` (0 in shadow, 1 lit), looked up a little
// along the normal `n`, filtered over 3x3 texels for a soft edge.
fn sunlight(world: vec3<f32>, n: vec3<f32>) -> f32 {
    if globals.shadow.x < 0.5 {
        return 1.0;
    }
    let p = globals.light_view_projection * vec4<f32>(world + n * globals.shadow.w, 1.0);
    let uv = vec2<f32>(p.x * 0.5 + 0.5, 0.5 - p.y * 0.5);
    if uv.x < 0.0 || uv.x > 1.0 || uv.y < 0.0 || uv.y > 1.0 || p.z > 1.0 {
        return 1.0;
    }
    // Four taps half a texel off the middle, each filtered over 2x2 texels by the
    // comparison sampler: a 3x3 tent. Nine taps looked the same and, on a software
    // renderer, compiled into a shader that held about 1 MB more of the process.
    let h = 0.5 * globals.shadow.y;
    let depth = p.z - globals.shadow.z;
    let lit = textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(-h, -h), depth)
        + textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(h, -h), depth)
        + textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(-h, h), depth)
        + textureSampleCompareLevel(shadow_map, shadow_sampler, uv + vec2<f32>(h, h), depth);
    return lit * 0.25;
}

@fragment
fn fs_mesh(in: MeshOut, @builtin(front_facing) front: bool) -> @location(0) vec4<f32> {
    let texel = textureSample(base_texture, base_sampler, in.uv);
    let base = material.base_color * texel;
    var n = normalize(in.normal);
    // Open surfaces are lit from whichever side is seen.
    if !front {
        n = -n;
    }
    let to_eye = normalize(globals.eye.xyz - in.world);
    let sun = normalize(globals.sun.xyz);
    let lambert = max(dot(n, sun), 0.0) * sunlight(in.world, n);
    let sky = vec3<f32>(0.52, 0.58, 0.68);
    let ground = vec3<f32>(0.26, 0.23, 0.20);
    let ambient = mix(ground, sky, n.y * 0.5 + 0.5);
    let roughness = clamp(material.params.x, 0.04, 1.0);
    let metallic = clamp(material.params.y, 0.0, 1.0);
    let half_vector = normalize(sun + to_eye);
    let shininess = 2.0 / max(roughness * roughness * roughness * roughness, 1e-4) - 2.0;
    let highlight = pow(max(dot(n, half_vector), 0.0), clamp(shininess, 1.0, 2048.0));
    let specular_color = mix(vec3<f32>(0.04), base.rgb, metallic);
    let diffuse = base.rgb * (1.0 - metallic);
    var color = diffuse * (ambient * 0.75 + vec3<f32>(1.0, 0.96, 0.88) * lambert * 0.95)
        + specular_color * highlight * lambert * (1.0 - roughness) * 4.0
        + base.rgb * metallic * ambient * 0.6;
    if in.selected > 0.5 {
        // Tint and a rim towards the outline, readable on dark and bright materials.
        let rim = pow(1.0 - max(dot(n, to_eye), 0.0), 2.0);
        color = mix(color, vec3<f32>(1.0, 0.55, 0.12), 0.2 + 0.6 * rim);
    }
    return vec4<f32>(color, 1.0);
}

struct LineIn {
    @location(0) position: vec3<f32>,
    @location(1) color: vec4<f32>,
};

struct LineOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) world: vec3<f32>,
};

@vertex
fn vs_line(v: LineIn) -> LineOut {
    var out: LineOut;
    out.clip = globals.view_projection * vec4<f32>(v.position, 1.0);
    out.color = v.color;
    out.world = v.position;
    return out;
}

@fragment
fn fs_line(in: LineOut) -> @location(0) vec4<f32> {
    // The grid fades out with distance from the eye, so its far end does not alias.
    let d = length(in.world - globals.eye.xyz);
    let fade = clamp(1.5 - d / max(globals.eye.w, 1.0), 0.0, 1.0);
    return vec4<f32>(in.color.rgb, in.color.a * fade);
}

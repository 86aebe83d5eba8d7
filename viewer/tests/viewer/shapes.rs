//! Display shapes are beside the model, never in it: the slider crank with shapes has
//! the IR and the object-cache entry of the one without, and the shapes carry the
//! values the model gives them (parameters evaluated, a mesh file read).

use crate::common;

use common::{example, RAIL, SHAPES};
use fdc_driver::pipeline::{front, role_funcs, BuildOptions};
use fdc_driver::template::Template;
use fdc_lower::shapes::{Geometry, GlyphKind};
use std::path::Path;

fn printed(path: &Path) -> Vec<String> {
    let f = front(path, &[]).unwrap();
    let funcs = role_funcs(&f.lowered);
    funcs
        .iter()
        .map(|func| fdc_ir::print::print_func(&f.lowered.graph, func))
        .collect()
}

#[test]
fn shapes_change_neither_ir_nor_cache_key() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain.fd");
    let shaped = dir.path().join("shaped.fd");
    std::fs::write(&plain, example()).unwrap();
    std::fs::write(&shaped, format!("{}{SHAPES}", example())).unwrap();
    std::fs::write(dir.path().join("rail.obj"), RAIL).unwrap();

    let (a, b) = (printed(&plain), printed(&shaped));
    assert!(!a.is_empty());
    assert_eq!(a, b, "the role functions differ");

    let cache = dir.path().join("cache");
    let opts = BuildOptions {
        simplify: true,
        backend: fdc_backend::Options {
            cache: fdc_backend::CacheMode::Dir(cache),
            ..Default::default()
        },
        ..BuildOptions::default()
    };
    let cold = Template::build(&plain, &opts).unwrap();
    assert!(!cold.built.cache_hit && cold.built.shapes.is_empty());
    let warm = Template::build(&shaped, &opts).unwrap();
    assert!(warm.built.cache_hit, "the shapes changed the cache key");
    assert_eq!(cold.built.model.instances, warm.built.model.instances);

    let s = &warm.built.shapes;
    assert_eq!(s.len(), 3);
    assert_eq!(s[0].body.as_deref(), Some("crank"));
    assert_eq!(
        s[0].geometry,
        Geometry::Box {
            size: [0.1, 0.03, 0.01]
        }
    );
    assert_eq!(s[0].colour, Some([1.0, 0.0, 0.0]));
    assert_eq!(
        (s[1].at, s[1].orientation),
        ([-0.025, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0])
    );
    assert_eq!(s[2].body, None);
    assert_eq!(s[2].opacity, 0.5);
    match &s[2].geometry {
        Geometry::Mesh {
            scale, triangles, ..
        } => {
            assert_eq!(*scale, 0.5);
            // The quad as a fan of two triangles.
            assert_eq!(triangles.len(), 6);
            assert_eq!(triangles[4], [1.0, -0.12, 0.0]);
        }
        g => panic!("{g:?}"),
    }
    // The mesh is watched like the model: a change rebuilds the page.
    assert!(warm.built.inputs.iter().any(|p| p.ends_with("rail.obj")));
}

/// The glyphs the lowering gives the viewer: a joint's point and axis in its first
/// body's frame, a spring's two points in theirs (from the examples' fields and the
/// bodies' initial poses).
#[test]
fn glyphs_of_joints_and_springs() {
    let ex = |n: &str| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples")
            .join(n)
    };
    let crank = front(&ex("slider_crank.fd"), &[]).unwrap().lowered.glyphs;
    let pin = crank.iter().find(|g| g.instance == "crank_pin").unwrap();
    assert_eq!(pin.kind, GlyphKind::Joint);
    // at = [r, 0, 0] on the rod, whose centre starts at r + l/2 = 0.25.
    assert_eq!(
        pin.ends,
        vec![(Some("rod".to_string()), [0.1 - 0.25, 0.0, 0.0])]
    );
    assert_eq!(pin.axis, Some([0.0, 0.0, 1.0]));
    // `planar` joints have no point: no glyph.
    assert!(crank.iter().all(|g| g.instance != "flat_crank"));
    assert_eq!(crank.len(), 4);

    let mass = front(&ex("spring_mass.fd"), &[]).unwrap().lowered.glyphs;
    let spring = mass.iter().find(|g| g.instance == "spring").unwrap();
    assert_eq!(spring.kind, GlyphKind::Spring);
    // at_a = the block's centre, at_b = [0, 0, 1] on the ground (global).
    assert_eq!(
        spring.ends,
        vec![(Some("block".into()), [0.0; 3]), (None, [0.0, 0.0, 1.0])]
    );
}

/// Glyphs of forces at a point and of tyres, from the instances' parameters after the
/// build (defaults evaluated): a bushing's point in both bodies' frames, a constant
/// force with its value at the default point (the centre) and at a given one, and the
/// quarter car's tyre with its analytic road.
#[test]
fn glyphs_of_forces_at_a_point_and_tyres() {
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("forces.fd");
    std::fs::write(
        &model,
        "body a: rigid_body { mass = 1; inertia = [1, 1, 1]; position = [1, 0, 0]; }\n\
         body b: rigid_body { mass = 1; inertia = [1, 1, 1]; position = [2, 0, 0];\n\
             orientation = quat(0.7071067811865476, 0, 0, 0.7071067811865476); }\n\
         force bush: bushing(a, b) { at = [1.5, 0, 0]; stiffness = [1, 1, 1]; }\n\
         force push: constant_force(a) { value = [0, 0, 5]; }\n\
         force pull: constant_force(b) { value = [1, 0, 0]; at = [2, 1, 0]; }\n\
         force turn: constant_torque(a) { value = [0, 0, 1]; }\n",
    )
    .unwrap();
    let g = front(&model, &[]).unwrap().lowered.glyphs;
    let find = |n: &str| g.iter().find(|x| x.instance == n);
    let bush = find("bush").unwrap();
    assert_eq!(bush.kind, GlyphKind::Point);
    assert_eq!(bush.ends[0], (Some("a".into()), [0.5, 0.0, 0.0]));
    // b is turned 90° about z: the global −x offset is +y in its frame.
    let (name, p) = &bush.ends[1];
    assert_eq!(name.as_deref(), Some("b"));
    assert!(
        (p[0]).abs() < 1e-12 && (p[1] - 0.5).abs() < 1e-12 && p[2] == 0.0,
        "{p:?}"
    );
    assert_eq!(bush.force, None);
    let push = find("push").unwrap();
    assert_eq!(
        (push.kind, &push.ends, push.force),
        (
            GlyphKind::Point,
            &vec![(Some("a".into()), [0.0; 3])],
            Some([0.0, 0.0, 5.0])
        )
    );
    let pull = find("pull").unwrap();
    // (0, 1, 0) from b's centre, in b's frame turned by 90° about z: (1, 0, 0).
    let (name, p) = &pull.ends[0];
    assert_eq!(name.as_deref(), Some("b"));
    assert!(
        (p[0] - 1.0).abs() < 1e-12 && p[1].abs() < 1e-12 && p[2] == 0.0,
        "{p:?}"
    );
    assert_eq!(pull.force, Some([1.0, 0.0, 0.0]));
    // A torque has no point: no glyph.
    assert!(find("turn").is_none());

    let car = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/quarter_car_tyre.fd");
    let g = front(&car, &[]).unwrap().lowered.glyphs;
    let tyre = g.iter().find(|x| x.instance == "tyre").unwrap();
    assert_eq!(tyre.kind, GlyphKind::Tyre);
    // `at` defaults to the wheel's centre: the origin of its frame.
    assert_eq!(tyre.ends, vec![(Some("wheel".into()), [0.0; 3])]);
    let road = tyre.road.as_ref().unwrap();
    assert_eq!(road.plane, [0.0; 3]);
    // road_x_amp = [roughness, 0.3*roughness, 0.1*roughness] with roughness = 0.01.
    assert_eq!(
        road.x,
        [
            [0.01, 0.3 * 0.01, 0.1 * 0.01],
            [0.1, 0.5, 1.7],
            [0.0, 1.0, 2.0]
        ]
    );
    assert_eq!(road.y, [[0.0; 3]; 3]);
}

//! The fused role `res_iter`: the iteration matrix and the residual of one state in
//! one call. Its values must be those of `iter` then `res` bit for bit (the IR
//! interpreter on the lowered roles, and the compiled code, where `res` is simplified
//! and `res_iter` is not), the driver must compile the matrix once (`iter` is served
//! by `res_iter`), and a run must be the same with and without the fused pass.

use crate::common::{example_path, no_cache};
use crate::stdlib_derivatives::{stdlib_front, Lcg};
use crate::tiers::{bits, call, same_bits};
use fdc_backend::{compile, CacheMode, Options};
use fdc_diff::Role;
use fdc_driver::pipeline::{build, simplify_all, type_funcs, Built};
use fdc_driver::settings::{runtime_settings, Overrides};
use fdc_ir::interp::eval;
use fdc_ir::Slot;
use fdc_runtime::{MemorySink, Newton, Settings, System};

/// Random inputs of the sizes `func` declares.
fn inputs(func: &fdc_ir::Func, rng: &mut Lcg) -> [Vec<f64>; 8] {
    std::array::from_fn(|s| {
        let n = func.inputs.get(Slot::ALL[s]);
        (0..n).map(|_| 2.0 * rng.next()).collect()
    })
}

#[test]
fn res_iter_is_iter_then_res_bit_for_bit_in_the_interpreter_and_the_jit() {
    let f = stdlib_front("fused-bits");
    let l = &f.lowered;
    let mut rng = Lcg(19);
    let mut compared = 0;
    for ty in &l.types {
        let role = |r: Role| {
            ty.role(r)
                .unwrap_or_else(|| panic!("{}: no {r:?}", ty.name))
        };
        let (fused, fused_blocks) = role(Role::ResIter);
        let ((iter, iter_blocks), (res, res_blocks)) = (role(Role::Iter), role(Role::Res));
        assert_eq!(
            fused_blocks,
            [iter_blocks, res_blocks].concat(),
            "{}",
            ty.name
        );
        // The lowered roles, in the interpreter.
        for _ in 0..5 {
            let x = inputs(fused, &mut rng);
            let ins: [&[f64]; 8] = std::array::from_fn(|s| x[s].as_slice());
            let separate = [&iter.outputs, &res.outputs]
                .map(|o| eval(&l.graph, o, &ins).unwrap())
                .concat();
            let one = eval(&l.graph, &fused.outputs, &ins).unwrap();
            same_bits(&one, &separate, &format!("{} (interpreter)", ty.name));
        }
        // The simplified roles as the driver compiles them, each function on its own.
        let (g, funcs, _) = simplify_all(&l.graph, type_funcs(ty));
        let opts = Options {
            opt_level: 2,
            cache: CacheMode::Off,
        };
        let code = compile(&g, &funcs, &opts).expect("compiles");
        let at = |r: Role| ty.roles.iter().position(|x| x.0 == r).unwrap();
        let n = |r: Role| funcs[at(r)].outputs.len();
        for _ in 0..20 {
            let x = inputs(fused, &mut rng);
            let one = call(code.functions[at(Role::ResIter)], &x, n(Role::ResIter));
            let separate = [Role::Iter, Role::Res]
                .map(|r| call(code.functions[at(r)], &x, n(r)))
                .concat();
            same_bits(&one, &separate, &format!("{} (level 2)", ty.name));
        }
        compared += 1;
    }
    assert!(compared >= 25, "{compared} types");
}

#[test]
fn the_iteration_matrix_is_compiled_once_and_served_by_res_iter() {
    let b = build(&example_path("squeezer.fd"), &no_cache()).unwrap();
    let mut connectors = 0;
    for ty in &b.model.table.types {
        let func = |r: Role| ty.role(r).map(|rf| rf.func as usize);
        let fused = func(Role::ResIter).expect("every type has res_iter");
        assert_eq!(func(Role::Iter), Some(fused), "{}", ty.name);
        if ty.nv + ty.nl == 0 || ty.role(Role::Iter).unwrap().output_len() == 0 {
            // An output element: every role without outputs is one empty function,
            // and with an empty matrix `res_iter` is `res` (the dedup shares them).
            continue;
        }
        assert_ne!(func(Role::Res), Some(fused), "{}", ty.name);
        if !ty.owns_coordinates {
            // A connector's iter_noqv is its iter: served by res_iter too.
            assert_eq!(func(Role::IterNoqv), Some(fused), "{}", ty.name);
            connectors += 1;
        }
        // The cost the Newton policy weighs stays that of the matrix alone.
        let ops = |r: Role| ty.role(r).unwrap().ops;
        assert!(ops(Role::Iter) < ops(Role::ResIter), "{}", ty.name);
        assert!(
            ops(Role::ResIter) < ops(Role::Iter) + ops(Role::Res),
            "{}",
            ty.name
        );
    }
    assert!(connectors >= 2, "{connectors} connector types");
}

/// The rows and stats of `built` run with `tweak`, fused or not, and the number of
/// fused passes.
fn run(built: Built, fused: bool, tweak: &dyn Fn(&mut Settings)) -> (MemorySink, String, usize) {
    let mut s = runtime_settings(&built.settings, &Overrides::default()).unwrap();
    tweak(&mut s);
    let mut sys = System::new(built.model).unwrap();
    sys.set_fused_roles(fused);
    let mut sink = MemorySink::default();
    let stats = sys.run(&s, &mut sink).unwrap();
    (sink, format!("{stats:?}"), sys.fused_passes())
}

/// A named change of the run's settings.
type Tweak<'a> = (&'a str, &'a dyn Fn(&mut Settings));

#[test]
fn a_run_is_the_same_with_and_without_the_fused_pass() {
    let tweaks: [Tweak; 4] = [
        ("default", &|_| {}),
        ("noqv", &|s| s.iter_noqv = true),
        ("legacy", &|s| s.newton = Newton::Legacy),
        ("fixed(2), matrix every step", &|s| {
            s.newton = Newton::Fixed(2);
            s.keep_matrix = false;
        }),
    ];
    for model in ["squeezer.fd", "spinning_top.fd", "quarter_car_mf52.fd"] {
        let path = example_path(model);
        for (label, tweak) in tweaks {
            let what = format!("{model}, {label}");
            let (a, stats_a, fused_a) = run(build(&path, &no_cache()).unwrap(), false, tweak);
            let (b, stats_b, fused_b) = run(build(&path, &no_cache()).unwrap(), true, tweak);
            assert!(a.rows.len() > 10, "{what}: {} rows", a.rows.len());
            assert_eq!(bits(&a), bits(&b), "{what}");
            // The timing part of the stats is off in both runs.
            assert_eq!(stats_a, stats_b, "{what}");
            assert_eq!(fused_a, 0, "{what}");
            assert!(fused_b > 0, "{what}: no fused pass");
        }
    }
}

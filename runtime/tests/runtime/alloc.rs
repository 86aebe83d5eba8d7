//! A time step allocates nothing: counted with a global allocator over many steps.

use crate::common;

use std::alloc::{GlobalAlloc, Layout, System as SysAlloc};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::*;
use fdc_runtime::{Form, LinearSolverKind, MatrixRule, Newton, Settings, System};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    // Only the test thread counts: the harness's own threads allocate at any time.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

fn count() {
    if COUNTING.with(Cell::get) {
        ALLOCS.fetch_add(1, Ordering::SeqCst);
    }
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        SysAlloc.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        SysAlloc.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        SysAlloc.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steps_allocate_nothing() {
    COUNTING.with(|c| c.set(true));
    // (form, Newton, solver, matrix_steps, rule): the last three cases keep the matrix
    // across steps (by age, by counted costs on both solvers).
    let v = Newton::Velocity { tol: 1e-10 };
    let (sparse, dense) = (LinearSolverKind::Sparse, LinearSolverKind::Dense);
    let (age, cost) = (MatrixRule::Age, MatrixRule::Cost);
    let cases = [
        (Form::ArnoldBruls, Newton::Fixed(2), sparse, 1, age),
        (Form::ArnoldBruls, v, sparse, 1, age),
        (Form::Negrut, Newton::Legacy, sparse, 1, age),
        (Form::ArnoldBruls, v, dense, 1, age),
        (Form::ArnoldBruls, v, sparse, 20, age),
        (Form::ArnoldBruls, v, sparse, 1000, cost),
        (Form::ArnoldBruls, v, dense, 1000, cost),
    ];
    for (form, newton, linear, matrix_steps, matrix_rule) in cases {
        let s = Settings {
            end: 10.0,
            step: 1e-3,
            form,
            newton,
            linear,
            matrix_steps,
            matrix_rule,
            ..Settings::default()
        };
        let mut sys = System::new(chain(8)).unwrap();
        sys.initialize(&s).unwrap();
        // Warm-up: the sparse LU copies its factor patterns on the first factorization.
        for _ in 0..20 {
            sys.step(&s).unwrap();
        }
        let mut iterations = 0;
        let mut repivoted_steps = 0;
        for _ in 0..2000 {
            let full = sys.full_factorizations();
            let before = ALLOCS.load(Ordering::SeqCst);
            iterations += sys.step(&s).unwrap().newton_iterations;
            let count = ALLOCS.load(Ordering::SeqCst) - before;
            if linear == LinearSolverKind::Dense || sys.full_factorizations() == full {
                // Dense LU pivots in place; sparse with the kept pivot order (every
                // real-time step, almost every other one).
                assert_eq!(
                    count, 0,
                    "{form:?} {newton:?} {linear:?} {matrix_steps}: {count} allocations in a step"
                );
            } else {
                // A new sparse pivot order may grow the factor storage: the one exception.
                repivoted_steps += 1;
            }
        }
        eprintln!(
            "{form:?} {newton:?} {linear:?} {matrix_steps}: {repivoted_steps} of 2000 steps chose new pivots"
        );
        if matches!(newton, Newton::Fixed(_)) {
            assert_eq!(repivoted_steps, 0, "real time keeps the pivot order");
        }
        assert!(repivoted_steps < 20, "{repivoted_steps}");
        assert!(iterations >= 2000);
        // The chain really moved (the steps did work).
        assert!(sys.q()[15] < -1.0, "{}", sys.q()[15]);
    }
}

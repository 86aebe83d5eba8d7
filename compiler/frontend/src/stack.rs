//! The stack every compile runs on, whatever thread asked for it.
//!
//! The passes over expressions (checker, typing, lowering, differentiation, the IR
//! passes, the language server's walks) recurse once per nesting level. The lexer
//! bounds nesting at [`MAX_NESTING`] operators and brackets per statement, so the
//! stack they need is bounded too, but by more than a 2 MiB thread (Rust's default
//! for spawned threads, and so for test threads, the viewer's worker, sweep workers
//! and embedders' threads) holds in a debug build. Rather than make every caller size
//! its threads, each compile entry point runs its work through [`with_compile_stack`]:
//! on a thread whose stack is [`COMPILE_STACK_BYTES`], once (a nested entry point
//! already on that stack runs in place).
//!
//! The size comes from a measurement (docs/reliability.md, "Depth"): the least
//! stack on which `fdc check` and `fdc build` of a model survive, found by bisection
//! over `ulimit -s`, grows by at most 2.2 KiB per nesting level in the debug profile
//! (the fuzz-found statement of ~1000 operators: 2.1 MiB; 60 inlined functions of
//! 300 nested calls each, 18,000 levels: 34.5 MiB). A user function's body is lowered
//! inside its call, so the depth to plan for is [`MAX_NESTING`] per statement times
//! the [`MAX_CALL_DEPTH`] calls that may nest, plus the statement itself. The memory
//! is reserved, not committed: a thread touches only the pages it uses.
//!
//! [`MAX_NESTING`]: crate::lexer::MAX_NESTING

use std::cell::Cell;

/// Most user-function calls inlined inside one another: inlining recurses, so a
/// longer chain is an error (E0900 naming the function), not a stack overflow.
pub const MAX_CALL_DEPTH: usize = 64;

/// Stack bytes planned per nesting level: the measured worst (2.2 KiB, debug
/// profile) with a margin of almost 2 for other shapes of expression.
pub const FRAME_BYTES_PER_LEVEL: usize = 4 << 10;

/// The nesting levels one compile may recurse through: a statement's, inside each of
/// the calls that may nest.
pub const MAX_LEVELS: usize = crate::lexer::MAX_NESTING * (MAX_CALL_DEPTH + 1);

/// The stack of a compile thread: [`FRAME_BYTES_PER_LEVEL`] for each of the
/// [`MAX_LEVELS`] levels (254 MiB of address space), plus 8 MiB for what does not nest.
pub const COMPILE_STACK_BYTES: usize = MAX_LEVELS * FRAME_BYTES_PER_LEVEL + (8 << 20);

thread_local! {
    /// Set on a thread started by [`with_compile_stack`], so nested entry points do
    /// not start another.
    static ON_COMPILE_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on a stack of [`COMPILE_STACK_BYTES`]: in place when the calling thread is
/// already a compile thread, else on a new scoped thread that the caller waits for. A
/// panic in `f` is resumed in the caller (so `catch_unwind` around a compile still
/// sees it). If the thread cannot be started (the system is out of threads or
/// address space), `f` runs in place: as deep as the caller's stack allows.
pub fn with_compile_stack<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    if ON_COMPILE_STACK.with(Cell::get) {
        return f();
    }
    // `f` must survive a failed spawn to run in place; the thread takes it out.
    let slot = std::sync::Mutex::new(Some(f));
    let run = || {
        ON_COMPILE_STACK.with(|c| c.set(true));
        let f = slot.lock().ok().and_then(|mut s| s.take());
        f.map(|f| f())
    };
    let joined = std::thread::scope(|s| {
        let spawned = std::thread::Builder::new()
            .name("fdc-compile".into())
            .stack_size(COMPILE_STACK_BYTES)
            .spawn_scoped(s, run);
        spawned.ok().map(|h| h.join())
    });
    match joined {
        Some(Ok(Some(r))) => r,
        Some(Err(panic)) => std::panic::resume_unwind(panic),
        // Not started (or, impossibly, started without `f`): run here.
        Some(Ok(None)) | None => {
            let f = slot.into_inner().ok().flatten();
            f.expect("the compile closure runs exactly once")()
        }
    }
}

/// Frees `value` on a thread of its own (with the compile stack, since freeing a deep
/// expression recurses as building it did), so the caller does not wait for it. A
/// model's syntax tree and analysis are many small allocations: freeing those of a
/// 1,000-body model took a tenth of a warm `fdc build`, on the path to the first
/// result. If no thread can be started, the spawn drops its closure, so `value` is
/// freed in place.
pub fn drop_aside<T: Send + 'static>(value: T) {
    let _ = std::thread::Builder::new()
        .name("fdc-free".into())
        .stack_size(COMPILE_STACK_BYTES)
        .spawn(move || drop(value));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Recursion that needs far more than 2 MiB completes when started from a 2 MiB
    /// thread, and a nested call runs on the same thread (no second spawn).
    #[test]
    fn deep_recursion_from_a_small_thread_completes_on_one_compile_thread() {
        fn depth(n: usize) -> usize {
            // 1 KiB of locals per level that the optimizer cannot drop.
            let pad = std::hint::black_box([n as u8; 1024]);
            if n == 0 {
                0
            } else {
                1 + depth(n - 1) + usize::from(pad[n % 1024] != n as u8)
            }
        }
        let levels = 8 << 10; // 8 MiB of frames at least: four times the thread
        let (deep, same) = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                with_compile_stack(|| {
                    let outer = std::thread::current().id();
                    let inner = with_compile_stack(|| std::thread::current().id());
                    (depth(levels), outer == inner)
                })
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(deep, levels);
        assert!(same);
    }

    /// A panic inside comes out of the caller as the same panic.
    #[test]
    fn a_panic_inside_is_the_callers_panic() {
        let r = std::panic::catch_unwind(|| with_compile_stack(|| panic!("inside")));
        let payload = r.unwrap_err();
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"inside"));
    }
}

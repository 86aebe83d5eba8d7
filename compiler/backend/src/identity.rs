//! The cache identity: the one place where every version a cache entry depends on is
//! combined. Each part is bumped in its own crate, next to what it covers; nothing
//! else reads them for caching.
//!
//! | part | bumped in | covers |
//! |---|---|---|
//! | `fdc_abi::ABI_VERSION` | `abi/` | the native signature, roles, output blocks |
//! | [`BACKEND_VERSION`](crate::BACKEND_VERSION) | `compiler/backend` | IR → machine code |
//! | LLVM version, target triple, CPU, CPU features, optimization level | (the host) | the same |
//! | `fdc_ir::simplify::identity()`: `simplify::VERSION`, crate version, every rule | `compiler/ir` | simplified IR |
//! | `fdc_ir::simplify::Limits::default()` | `compiler/ir` | where a run stops |
//! | the caller's pipeline version (the driver's `PIPELINE_VERSION`) | `compiler/driver` | roles → the functions simplified |
//!
//! An object entry is keyed by [`Identity::object`] plus the host target and the
//! compiled IR; a source-index entry by the same plus [`Identity::recipe`] and the IR
//! before simplification. The unit test below changes each part in turn and checks
//! that the key changes.

use fdc_runtime::table::ABI_VERSION;

/// Every version that decides what the cache may return for given IR.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Identity {
    pub abi: u32,
    pub backend: String,
    pub simplifier: String,
    pub limits: String,
    pub pipeline: String,
}

impl Identity {
    /// The identity of this build, for a caller whose own transformation (roles →
    /// functions) has version `pipeline`.
    pub fn current(pipeline: &str) -> Identity {
        Identity {
            abi: ABI_VERSION,
            backend: crate::BACKEND_VERSION.to_string(),
            simplifier: fdc_ir::simplify::identity(),
            limits: format!("{:?}", fdc_ir::simplify::Limits::default()),
            pipeline: pipeline.to_string(),
        }
    }

    /// What turns compiled IR into a loadable object, besides the host target: part of
    /// every key.
    pub fn object(&self) -> String {
        object_of(&self.backend, self.abi)
    }

    /// [`Identity::object`] of this build (what the backend's own keys use).
    pub fn current_object() -> String {
        object_of(crate::BACKEND_VERSION, ABI_VERSION)
    }

    /// The recipe of a source-index entry: what turns the caller's IR into the
    /// compiled IR, with or without the simplifier.
    pub fn recipe(&self, simplify: bool) -> String {
        if simplify {
            format!(
                "{}; simplified with limits {} by\n{}",
                self.pipeline, self.limits, self.simplifier
            )
        } else {
            format!("{}; not simplified", self.pipeline)
        }
    }
}

fn object_of(backend: &str, abi: u32) -> String {
    format!("{backend}; abi {abi}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::{source_key, Key, Target};
    use fdc_ir::{Func, Graph, Slot, SlotSizes};

    fn key(id: &Identity, simplify: bool) -> Key {
        let mut g = Graph::new();
        let x = g.input(Slot::Q, 0);
        let f = Func {
            name: "f".into(),
            inputs: SlotSizes([1, 0, 0, 0, 0, 0, 0, 0]),
            outputs: vec![x],
        };
        let object = id.object();
        let target = Target {
            backend: &object,
            llvm: "14",
            triple: "x86_64",
            cpu: "generic",
            features: "",
            opt_level: 2,
        };
        source_key(&target, &id.recipe(simplify), &g, &[f], &[vec![x]])
    }

    #[test]
    fn changing_any_contributing_version_changes_the_key() {
        let base = Identity::current("driver pipeline 1");
        assert_eq!(
            key(&base, true),
            key(&Identity::current("driver pipeline 1"), true)
        );
        let changes: [fn(&mut Identity); 5] = [
            |i| i.abi += 1,
            |i| i.backend.push('x'),
            |i| i.simplifier.push('x'),
            |i| i.limits.push('x'),
            |i| i.pipeline.push('x'),
        ];
        for (k, change) in changes.iter().enumerate() {
            let mut other = base.clone();
            change(&mut other);
            assert_ne!(key(&base, true), key(&other, true), "part {k}");
        }
        // Without the simplifier, its identity does not matter, the rest does.
        let mut other = base.clone();
        other.simplifier.push('x');
        assert_eq!(key(&base, false), key(&other, false));
        other.abi += 1;
        assert_ne!(key(&base, false), key(&other, false));
        assert_ne!(key(&base, true), key(&base, false));
    }
}

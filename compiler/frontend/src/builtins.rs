//! The one table of what the language provides without a declaration: builtin
//! functions, the built-in values, the members of a body and the keys of `simulate`.
//!
//! Every consumer reads these tables — the checker (names, arity, typing, messages),
//! lowering (it matches on [`Builtin`], so a builtin without a lowering does not
//! compile), the language server (completion and hover) and a test that keeps the
//! tables of `docs/language.md` equal to them. Adding a builtin is one entry in
//! [`FUNCTIONS`], its arm in [`Builtin::result`] and its lowering.

use crate::Ty;

/// A builtin function, as lowering matches on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Builtin {
    Sin,
    Cos,
    Tan,
    Sqrt,
    Exp,
    Log,
    Tanh,
    Abs,
    Softplus,
    Atan2,
    Min,
    Max,
    Clamp,
    Step,
    Dot,
    Cross,
    Norm,
    Unit,
    Skew,
    Transpose,
    Diag,
    Quat,
    Frame,
    Rotation,
    Initial,
    AtTime,
    Rate,
    Tir,
    Crg,
    Continuous,
}

/// Whether a call's value depends on the state (coordinates or velocities), which the
/// smoothness check follows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dep {
    /// As its arguments do.
    Args,
    /// Never: the value is taken in the initial configuration (a parameter).
    Never,
    /// Always (a time derivative reads the velocities).
    Always,
}

/// One builtin function.
#[derive(Clone, Copy, Debug)]
pub struct BuiltinFn {
    pub builtin: Builtin,
    pub name: &'static str,
    pub arity: usize,
    /// How a call is written, with argument names (hover, completion).
    pub call: &'static str,
    /// The argument types it accepts, in words (the note of a type error).
    pub takes: &'static str,
    /// What it computes (hover, completion).
    pub doc: &'static str,
    /// True for exact but kinked functions: a state-dependent call warns (W0001).
    pub kinked: bool,
}

const fn f(
    builtin: Builtin,
    name: &'static str,
    arity: usize,
    call: &'static str,
    takes: &'static str,
    doc: &'static str,
) -> BuiltinFn {
    BuiltinFn {
        builtin,
        name,
        arity,
        call,
        takes,
        doc,
        kinked: false,
    }
}

const fn kinked(b: BuiltinFn) -> BuiltinFn {
    BuiltinFn { kinked: true, ..b }
}

const SCALAR: &str = "(scalar)";
const TWO_SCALARS: &str = "(scalar, scalar)";
const VEC_OR_QUAT: &str = "(vec3) or (quat)";
const NUMERIC: &str = "a scalar, vec3, mat3 or quat";

/// Every builtin function, in the order completion offers them.
pub const FUNCTIONS: &[BuiltinFn] = {
    use Builtin::*;
    &[
        f(Sin, "sin", 1, "sin(x)", SCALAR, "sine"),
        f(Cos, "cos", 1, "cos(x)", SCALAR, "cosine"),
        f(Tan, "tan", 1, "tan(x)", SCALAR, "tangent"),
        f(Sqrt, "sqrt", 1, "sqrt(x)", SCALAR, "square root"),
        f(Exp, "exp", 1, "exp(x)", SCALAR, "exponential"),
        f(Log, "log", 1, "log(x)", SCALAR, "natural logarithm"),
        f(Tanh, "tanh", 1, "tanh(x)", SCALAR, "hyperbolic tangent"),
        kinked(f(
            Abs,
            "abs",
            1,
            "abs(x)",
            SCALAR,
            "absolute value (non-smooth at 0)",
        )),
        f(
            Softplus,
            "softplus",
            1,
            "softplus(x)",
            SCALAR,
            "smooth ramp log(1 + exp(x))",
        ),
        f(
            Atan2,
            "atan2",
            2,
            "atan2(y, x)",
            TWO_SCALARS,
            "angle of the point (x, y)",
        ),
        kinked(f(
            Min,
            "min",
            2,
            "min(a, b)",
            TWO_SCALARS,
            "smaller of two scalars (non-smooth)",
        )),
        kinked(f(
            Max,
            "max",
            2,
            "max(a, b)",
            TWO_SCALARS,
            "larger of two scalars (non-smooth)",
        )),
        kinked(f(
            Clamp,
            "clamp",
            3,
            "clamp(x, lo, hi)",
            "(x, lo, hi), all scalars",
            "x limited to [lo, hi]: min(max(x, lo), hi) (non-smooth)",
        )),
        f(
            Step,
            "step",
            5,
            "step(x, x0, h0, x1, h1)",
            "(x, x0, h0, x1, h1), all scalars",
            "smooth cubic step from h0 at x0 to h1 at x1",
        ),
        f(
            Dot,
            "dot",
            2,
            "dot(a, b)",
            "(vec3, vec3) or (quat, quat)",
            "dot product of two vec3",
        ),
        f(
            Cross,
            "cross",
            2,
            "cross(a, b)",
            "(vec3, vec3)",
            "cross product of two vec3",
        ),
        f(
            Norm,
            "norm",
            1,
            "norm(v)",
            VEC_OR_QUAT,
            "Euclidean length of a vec3",
        ),
        f(
            Unit,
            "unit",
            1,
            "unit(v)",
            VEC_OR_QUAT,
            "v divided by its length",
        ),
        f(
            Skew,
            "skew",
            1,
            "skew(v)",
            "(vec3)",
            "the mat3 S with S*w = cross(v, w)",
        ),
        f(
            Transpose,
            "transpose",
            1,
            "transpose(M)",
            "(mat3)",
            "transpose of a mat3",
        ),
        f(
            Diag,
            "diag",
            1,
            "diag(v)",
            "(vec3)",
            "diagonal mat3 from a vec3",
        ),
        f(
            Quat,
            "quat",
            4,
            "quat(w, x, y, z)",
            "(scalar, scalar, scalar, scalar)",
            "a quaternion",
        ),
        f(
            Frame,
            "frame",
            1,
            "frame(n)",
            "(vec3)",
            "an orthonormal frame (mat3) with n as its z axis",
        ),
        f(
            Rotation,
            "rotation",
            1,
            "rotation(q)",
            "(quat)",
            "the rotation matrix of a quaternion",
        ),
        f(
            Initial,
            "initial",
            1,
            "initial(e)",
            NUMERIC,
            "the value of e at t = 0",
        ),
        f(
            AtTime,
            "at_time",
            2,
            "at_time(e, T)",
            "(e, T): e a scalar, vec3, mat3 or quat, T a scalar",
            "the value of e at t = T in the initial configuration",
        ),
        f(Rate, "rate", 1, "rate(e)", NUMERIC, "time derivative of e"),
        f(
            Continuous,
            "continuous",
            1,
            "continuous(r)",
            "(scalar): an angle in (−π, π]",
            "the angle r counted through any number of revolutions (element state)",
        ),
        f(
            Tir,
            "tir",
            2,
            "tir(file, name)",
            "(\"file.tir\", \"NAME\"), two string literals",
            "a coefficient of a tyre property file (.tir), read at build time",
        ),
        f(
            Crg,
            "crg",
            1,
            "crg(file)",
            "(\"road.crg\") or (\"road.crg\", \"friction.crg\"), string literals",
            "an OpenCRG data road (elevation, optional friction file) for a tyre's `road`, read at build time",
        ),
    ]
};

/// The builtin function called `name`.
pub fn function(name: &str) -> Option<&'static BuiltinFn> {
    FUNCTIONS.iter().find(|b| b.name == name)
}

impl Builtin {
    /// The entry of this builtin in [`FUNCTIONS`].
    pub fn info(self) -> &'static BuiltinFn {
        FUNCTIONS
            .iter()
            .find(|b| b.builtin == self)
            .expect("every builtin has an entry")
    }

    /// The type of a call with arguments of types `args` (as many as the arity, none
    /// of them `Error`), or `None` when the builtin cannot take them.
    pub fn result(self, args: &[Ty]) -> Option<Ty> {
        use Builtin::*;
        use Ty::{Mat3, Quat as Q, Scalar as S, Vec3 as V};
        let scalars = args.iter().all(|t| *t == S);
        match (self, args) {
            (
                Sin | Cos | Tan | Sqrt | Exp | Log | Tanh | Abs | Softplus | Atan2 | Min | Max
                | Clamp | Step,
                _,
            ) if scalars => Some(S),
            (Dot, [V, V] | [Q, Q]) => Some(S),
            (Cross, [V, V]) => Some(V),
            (Norm, [V] | [Q]) => Some(S),
            (Unit, [t @ (V | Q)]) => Some(*t),
            (Skew | Diag | Frame, [V]) => Some(Mat3),
            (Transpose, [Mat3]) => Some(Mat3),
            (Quat, [S, S, S, S]) => Some(Q),
            (Rotation, [Q]) => Some(Mat3),
            (Initial | Rate, [t]) if t.is_numeric() => Some(*t),
            (Continuous, [S]) => Some(S),
            (AtTime, [t, S]) if t.is_numeric() => Some(*t),
            (Tir, [Ty::Str, Ty::Str]) => Some(S),
            (Crg, [Ty::Str] | [Ty::Str, Ty::Str]) => Some(S),
            _ => None,
        }
    }

    /// Whether a call's value depends on the state.
    pub fn dep(self) -> Dep {
        match self {
            Builtin::Initial | Builtin::AtTime | Builtin::Tir | Builtin::Crg => Dep::Never,
            Builtin::Rate => Dep::Always,
            _ => Dep::Args,
        }
    }
}

/// The values every expression may name, with what they are (hover, completion).
pub const VALUES: &[(&str, &str)] = &[
    ("t", "scalar: simulation time"),
    ("pi", "scalar: π"),
    ("gravity", "vec3: the model's gravity vector"),
    ("ground", "body: the fixed inertial frame"),
    ("self", "the enclosing instance"),
];

/// A member of a body: a property (`b.omega`) or a method of one vec3 (`b.point(u)`).
#[derive(Clone, Copy, Debug)]
pub struct BodyMember {
    pub name: &'static str,
    /// How it is written after `b.`, with the argument's name (`point(u)`).
    pub call: &'static str,
    /// The property's type, or the method's result type.
    pub ty: Ty,
    /// True for methods (one vec3 argument).
    pub method: bool,
    /// True when the value is taken at t = 0 (a parameter, not a function of the state).
    pub initial: bool,
    pub doc: &'static str,
}

const fn prop(name: &'static str, ty: Ty, doc: &'static str) -> BodyMember {
    BodyMember {
        name,
        call: name,
        ty,
        method: false,
        initial: false,
        doc,
    }
}

const fn method(name: &'static str, call: &'static str, doc: &'static str) -> BodyMember {
    BodyMember {
        name,
        call,
        ty: Ty::Vec3,
        method: true,
        initial: false,
        doc,
    }
}

/// Every member of a body: properties first, then methods.
pub const BODY_MEMBERS: &[BodyMember] = &[
    prop(
        "position",
        Ty::Vec3,
        "reference point (centre of mass), global",
    ),
    prop("rotation", Ty::Mat3, "body components to global"),
    prop("omega", Ty::Vec3, "angular velocity, global"),
    prop("omega_body", Ty::Vec3, "angular velocity, body components"),
    prop("alpha", Ty::Vec3, "angular acceleration, global"),
    prop(
        "alpha_body",
        Ty::Vec3,
        "angular acceleration, body components",
    ),
    BodyMember {
        initial: true,
        ..prop(
            "mass",
            Ty::Scalar,
            "mass: the body type's `param mass` (a parameter)",
        )
    },
    BodyMember {
        initial: true,
        ..prop(
            "inertia",
            Ty::Vec3,
            "principal inertias, body axes: the body type's `param inertia` (a parameter)",
        )
    },
    prop(
        "inertia_global",
        Ty::Mat3,
        "inertia tensor about the centre of mass, global: A diag(inertia) Aᵀ",
    ),
    method(
        "point",
        "point(u)",
        "global position of the body-fixed point u",
    ),
    method(
        "velocity",
        "velocity(u)",
        "global velocity of the body-fixed point u",
    ),
    method(
        "acceleration",
        "acceleration(u)",
        "global acceleration of the body-fixed point u",
    ),
    method(
        "axis",
        "axis(a)",
        "the body-fixed direction a in global components",
    ),
    BodyMember {
        initial: true,
        ..method(
            "local",
            "local(p)",
            "body coordinates of the global point p at t = 0",
        )
    },
];

/// The member of a body called `name`.
pub fn body_member(name: &str) -> Option<&'static BodyMember> {
    BODY_MEMBERS.iter().find(|m| m.name == name)
}

/// Names of the body's properties, then of its methods (in messages).
pub fn body_member_names(methods: bool) -> impl Iterator<Item = &'static str> {
    BODY_MEMBERS
        .iter()
        .filter(move |m| m.method == methods)
        .map(|m| m.name)
}

/// What the value of a `simulate` key is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimValue {
    /// A scalar expression.
    Scalar,
    /// One of these names.
    Names(&'static [&'static str]),
    /// `newton`: `velocity(tol)`, `legacy` or `fixed(n)`.
    Newton,
    /// A body instance or a list `[a, b, ...]` of them.
    Bodies,
}

/// Every key of a `simulate { ... }` block and its value (`docs/language.md` §7).
pub const SIM_SETTINGS: &[(&str, SimValue)] = &[
    ("end", SimValue::Scalar),
    ("step", SimValue::Scalar),
    ("output_every", SimValue::Scalar),
    ("output_exact", SimValue::Names(&["true", "false"])),
    ("alpha", SimValue::Scalar),
    ("rho_inf", SimValue::Scalar),
    ("adaptive", SimValue::Scalar),
    ("atol", SimValue::Scalar),
    ("step_min", SimValue::Scalar),
    ("step_max", SimValue::Scalar),
    ("form", SimValue::Names(&["arnold_bruls", "negrut"])),
    ("newton", SimValue::Newton),
    ("linear_solver", SimValue::Names(&["sparse", "dense"])),
    ("assemble", SimValue::Names(&["true", "false"])),
    ("given", SimValue::Bodies),
];

/// The names of [`SIM_SETTINGS`], in order (the editor completes them).
pub const SIM_KEYS: &[&str] = &{
    let mut keys = [""; SIM_SETTINGS.len()];
    let mut i = 0;
    while i < keys.len() {
        keys[i] = SIM_SETTINGS[i].0;
        i += 1;
    }
    keys
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_info_finds_each_entry() {
        for (i, b) in FUNCTIONS.iter().enumerate() {
            assert_eq!(function(b.name).map(|e| e.builtin), Some(b.builtin));
            assert_eq!(b.builtin.info().name, b.name);
            assert!(FUNCTIONS[..i].iter().all(|o| o.name != b.name));
            assert!(b.call.starts_with(&format!("{}(", b.name)), "{}", b.name);
            assert_eq!(b.call.matches(',').count() + 1, b.arity, "{}", b.name);
        }
    }

    #[test]
    fn sim_keys_follow_the_settings() {
        let names: Vec<&str> = SIM_SETTINGS.iter().map(|s| s.0).collect();
        assert_eq!(SIM_KEYS, names.as_slice());
    }

    #[test]
    fn typing_of_a_few_calls() {
        use Ty::*;
        assert_eq!(Builtin::Clamp.result(&[Scalar; 3]), Some(Scalar));
        assert_eq!(Builtin::Clamp.result(&[Vec3, Scalar, Scalar]), None);
        assert_eq!(Builtin::Unit.result(&[Quat]), Some(Quat));
        assert_eq!(Builtin::AtTime.result(&[Mat3, Scalar]), Some(Mat3));
        assert_eq!(Builtin::Rate.dep(), Dep::Always);
    }
}

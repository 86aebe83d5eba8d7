//! The standard library of element types, written in the fd language and embedded in
//! the `fdc` binary. Adding a force law is a change to a `.fd` file here, never to Rust.
//!
//! **Architecture invariant:** this crate holds only source text; it depends on nothing.

/// Every library file: (file name, source text). The front end puts all of them in
/// scope of every model.
pub const FILES: &[(&str, &str)] = &[
    ("bodies.fd", include_str!("../bodies.fd")),
    ("joints.fd", include_str!("../joints.fd")),
    ("local.fd", include_str!("../local.fd")),
    ("forces.fd", include_str!("../forces.fd")),
    ("drivers.fd", include_str!("../drivers.fd")),
    ("sensors.fd", include_str!("../sensors.fd")),
    ("measures.fd", include_str!("../measures.fd")),
    ("roads.fd", include_str!("../roads.fd")),
    ("tyres.fd", include_str!("../tyres.fd")),
    ("mf52.fd", include_str!("../mf52.fd")),
];

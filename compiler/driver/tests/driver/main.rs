//! The integration tests of this crate, one binary (each file below was its own
//! binary once; one binary links the crate and `common` once instead of per file).
//! Run one file's tests with `cargo test --workspace --test driver <file>::`.

mod arrays;
mod assembly;
mod body_local;
mod cache_levels;
mod common;
mod energies;
mod examples;
mod fds;
mod fused;
mod given;
mod initial_rates;
mod local_drivers;
mod mf52;
mod pendulum;
mod planar;
mod point_mass;
mod quarter_car_mf52;
mod reads;
mod roles_cache;
mod runtime_models;
mod splines;
mod stdlib_derivatives;
mod stdlib_measures;
mod sweep;
mod tiers;
mod tyres;
mod vector_space;
mod vehicle;
mod vehicle_crg;

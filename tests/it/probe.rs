//! The probe and placement on the real machine: cgroups, pinning, the
//! sampler on a known process tree, client saturation, the fingerprint.

mod nginx;
mod placement;
mod sampler;
mod support;
mod work;

//! Server-side metrics sampled while a trial runs, and the environment fingerprint.

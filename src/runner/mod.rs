//! Sweeps, interleaved trials, the stopping rule and resume.

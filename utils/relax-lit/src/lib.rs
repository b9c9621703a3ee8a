//! Placeholder for the lit runner.

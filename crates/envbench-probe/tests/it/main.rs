//! The probe's tests: fake machines under tests/fixtures, and this machine itself. One test binary for the crate.

mod fixtures;
mod live;

//! Integration tests of the `cargo-convbench` binary: every subcommand run as a process, as
//! `cargo-convbench convbench <command>` (how cargo calls it) and `cargo-convbench <command>`,
//! checking stdout, files written and the exit codes of the README's contract (0 ok, 1
//! regression, 2 invalid input or usage, 3 environment, 4 verification).
//!
//! Most tests use the cpu backend with a tiny workload (lenet, batch 1, 3 samples), which
//! needs no adapter. Tests that need a GPU adapter skip with a notice when none opens, and
//! fail instead when `CONVBENCH_REQUIRE_GPU=1` (as CI sets it). The GitHub tests talk to a
//! wiremock fake of the REST API on loopback.

mod bad_input;
mod browser;
mod corpus;
mod gate;
mod git_flow;
mod github;
mod gpu;
mod listing;
mod peers;
mod readme;
mod revisions;
mod robustness;
mod run;
mod support;
mod user_kernels;

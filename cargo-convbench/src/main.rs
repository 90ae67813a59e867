//! `cargo convbench`: benchmark convolutional networks on any GPU and gate regressions in CI.
//!
//! A thin binary over the `convbench` library: it parses arguments, calls the library, owns
//! the terminal, and maps errors to the exit codes documented in the README.

mod args;
mod cli;
mod commands;
mod interrupt;
mod output;
mod progress;

fn main() -> std::process::ExitCode {
    cli::main_impl()
}

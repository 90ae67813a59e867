//! `cargo convbench`: benchmark convolutional networks on any GPU and gate regressions in CI.
//!
//! A thin binary over the `convbench` library: it parses arguments, calls the library, owns
//! the terminal, and maps errors to the exit codes documented in the README.

mod cli;
mod commands;
mod interrupt;
mod output;
mod progress;

fn main() -> std::process::ExitCode {
    quiet_vulkan_layers();
    cli::main_impl()
}

/// Mesa's implicit Vulkan layer `VK_LAYER_MESA_device_select` connects to a Wayland display
/// while devices are enumerated, and libwayland prints "XDG_RUNTIME_DIR is invalid or not set
/// in the environment" twice on stderr wherever there is none (CI, containers), even when the
/// adapter chosen is not GL. The layer only reorders devices, and convbench enumerates and
/// picks adapters itself, so the layer is turned off unless the environment says otherwise.
#[allow(
    unsafe_code,
    reason = "std::env::set_var is unsafe only while other threads may read the environment"
)]
fn quiet_vulkan_layers() {
    if std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: the first thing `main` does, before any other thread exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

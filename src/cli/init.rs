//! Flags of `cargo convbench init`.

/// Arguments of `init`.
#[derive(Debug, clap::Args)]
pub struct InitArgs {
    /// Name of the sample kernel (its variant is `user:NAME`).
    #[arg(long, default_value = "my-conv", value_name = "NAME")]
    pub kernel: String,
    /// Do not write the GitHub Actions workflows.
    #[arg(long)]
    pub no_workflows: bool,
    /// Overwrite files that exist with other contents.
    #[arg(long)]
    pub force: bool,
}

//! Flags of `cargo convbench list`.

use crate::cli::ListFormat;

/// Arguments of `list`.
#[derive(Debug, clap::Args)]
pub struct ListArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Table)]
    pub format: ListFormat,
}

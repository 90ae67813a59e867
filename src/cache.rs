//! Versioned JSON caches under the workspace's target directory (`target/convbench/`): the
//! winners of `tune` and the peaks of `adapters --calibrate`. A cache is rebuilt by a command,
//! so a missing one is `None`, and a corrupt or other-format one is an error that names the
//! file and the command that rebuilds it.

use crate::{Error, Result};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::path::Path;

/// What a cache file is, for messages.
pub(crate) struct Kind {
    /// E.g. `tune cache`.
    pub(crate) name: &'static str,
    /// The command that rebuilds it, e.g. `cargo convbench tune`.
    pub(crate) rebuild: &'static str,
    /// The format this build reads.
    pub(crate) version: u32,
}

/// Reads the cache at `path` (`None` when there is none) and checks its `format_version`.
pub(crate) fn load<T: DeserializeOwned>(
    path: &Path,
    kind: &Kind,
    format_version: impl Fn(&T) -> u32,
) -> Result<Option<T>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::io(path, e)),
    };
    let value: T = serde_json::from_str(&text).map_err(|e| {
        Error::InvalidInput(format!(
            "{} is not a {} ({e}); delete it or run `{}` again",
            path.display(),
            kind.name,
            kind.rebuild
        ))
    })?;
    let found = format_version(&value);
    if found != kind.version {
        return Err(Error::InvalidInput(format!(
            "{} has {} format {found}, this build reads {}; run `{}` again to rebuild it",
            path.display(),
            kind.name,
            kind.version,
            kind.rebuild
        )));
    }
    Ok(Some(value))
}

/// Writes `value` to `path` atomically (see [`crate::fs::write_atomically`]), creating
/// the folder.
pub(crate) fn save<T: Serialize>(path: &Path, value: &T, kind: &Kind) -> Result<()> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| Error::InvalidInput(format!("cannot serialise the {}: {e}", kind.name)))?;
    crate::fs::write_atomically(path, text.as_bytes())
}

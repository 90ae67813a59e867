//! Versioned JSON caches under the workspace's target directory (`target/convbench/`): the
//! winners of `tune` and the peaks of `adapters --calibrate`. A cache is rebuilt by a command,
//! so a missing one is `None`, and a corrupt or other-format one is an error that names the
//! file and the command that rebuilds it.

use crate::fs::FileError;
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
    let value: T = serde_json::from_str(&text).map_err(|source| FileError::CorruptCache {
        path: path.to_path_buf(),
        cache: kind.name,
        rebuild: kind.rebuild,
        source,
    })?;
    let found = format_version(&value);
    if found != kind.version {
        return Err(FileError::CacheVersion {
            path: path.to_path_buf(),
            cache: kind.name,
            found,
            expected: kind.version,
            rebuild: kind.rebuild,
        }
        .into());
    }
    Ok(Some(value))
}

/// Reads the cache at `path`, lets `change` make the new value from what is there now (`None`
/// when there is none, or it cannot be read: a cache is rebuilt, not repaired), and writes it
/// back atomically, all under an advisory lock on `path` with `.lock` appended: a concurrent
/// command waits, then changes what this one wrote, so neither loses its entries. Creates the
/// folder. Returns the value written.
pub(crate) fn update<T: Serialize + DeserializeOwned>(
    path: &Path,
    kind: &Kind,
    format_version: impl Fn(&T) -> u32,
    change: impl FnOnce(Option<T>) -> T,
) -> Result<T> {
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| Error::io(dir, source))?;
    }
    let mut lock_path = path.as_os_str().to_owned();
    lock_path.push(".lock");
    let _lock = crate::fs::lock(Path::new(&lock_path), kind.name)?;
    crate::fs::remove_stale_temporaries(path);
    let value = change(load(path, kind, format_version).ok().flatten());
    save(path, &value, kind)?;
    Ok(value)
}

/// Writes `value` to `path` atomically (see [`crate::fs::write_atomically`]), creating
/// the folder.
pub(crate) fn save<T: Serialize>(path: &Path, value: &T, kind: &Kind) -> Result<()> {
    let text = serde_json::to_string_pretty(value).map_err(|source| FileError::SerialiseCache {
        cache: kind.name,
        source,
    })?;
    crate::fs::write_atomically(path, text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct Numbers {
        format_version: u32,
        numbers: BTreeSet<u32>,
    }

    const NUMBERS: Kind = Kind {
        name: "test cache",
        rebuild: "the test",
        version: 1,
    };

    /// Two writers at once (as two `tune` runs): each change is made to what the other wrote,
    /// so every entry of both is in the file.
    #[test]
    fn concurrent_updates_keep_every_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("convbench/numbers.json");
        let writers: Vec<_> = [0u32, 1000]
            .into_iter()
            .map(|first| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for number in first..first + 40 {
                        update(
                            &path,
                            &NUMBERS,
                            |c: &Numbers| c.format_version,
                            |existing| {
                                let mut cache = existing.unwrap_or(Numbers {
                                    format_version: 1,
                                    numbers: BTreeSet::new(),
                                });
                                cache.numbers.insert(number);
                                cache
                            },
                        )
                        .expect("update");
                    }
                })
            })
            .collect();
        for writer in writers {
            writer.join().expect("a writer panicked");
        }
        let cache: Numbers = load(&path, &NUMBERS, |c: &Numbers| c.format_version)
            .expect("readable")
            .expect("present");
        assert_eq!(cache.numbers.len(), 80);
    }
}

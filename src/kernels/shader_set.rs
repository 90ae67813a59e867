//! Shader sources as a value: the WGSL a device compiles comes from a [`ShaderSet`], which is
//! the set embedded in the binary (the default), a directory of `.wgsl` files (iterate on a
//! kernel without rebuilding convbench), or the `shaders/` folder of a git revision (`ab`
//! compares the WGSL of two revisions in one process on one device).
//!
//! A set only replaces sources: the entry points, bindings and dispatch rules of every
//! registered shader stay those of [`super::registry::SHADERS`]. A replacement that breaks
//! them fails when its pipeline is created, or in verification against the f64 reference,
//! before anything is timed.

use super::KernelError;
use super::registry::{SHADERS, Shader};
use crate::baseline::{BaseRevision, GitBaselineStore};
use crate::{Error, Result};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where a [`ShaderSet`] came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShaderOrigin {
    /// Compiled into the binary (`include_str!` of `shaders/`).
    Embedded,
    /// Read from a directory.
    Directory(PathBuf),
    /// Read from a git revision.
    Revision(BaseRevision),
}

/// The WGSL source of every registered shader.
#[derive(Debug, Clone)]
pub struct ShaderSet {
    origin: ShaderOrigin,
    /// Replacements by file name; a file not here uses the embedded source.
    sources: BTreeMap<&'static str, Arc<str>>,
}

impl Default for ShaderSet {
    fn default() -> Self {
        Self::embedded()
    }
}

impl ShaderSet {
    /// The sources compiled into the binary.
    pub fn embedded() -> Self {
        Self {
            origin: ShaderOrigin::Embedded,
            sources: BTreeMap::new(),
        }
    }

    /// Whether `dir` holds every file of convbench's shaders (it is convbench's `shaders/`,
    /// not a folder of a user's own kernels).
    pub fn is_shader_dir(dir: &Path) -> bool {
        dir.is_dir() && SHADERS.iter().all(|shader| dir.join(shader.file).is_file())
    }

    /// Every registered file read from `dir` (e.g. a checkout's `shaders/`). A registered file
    /// missing from `dir` is an error naming it: a set is whole, so that what runs is what the
    /// directory says.
    pub fn from_dir(dir: &Path) -> Result<Self> {
        let mut sources = BTreeMap::new();
        for shader in SHADERS {
            let path = dir.join(shader.file);
            let text = crate::fs::read_text(&path, crate::fs::MAX_TEXT_FILE_BYTES).map_err(|error| {
                let reason = match error {
                    Error::Io { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                KernelError::UnreadableShader {
                    file: shader.file,
                    dir: dir.to_path_buf(),
                    reason,
                }
            })?;
            sources.insert(shader.file, Arc::from(text));
        }
        Ok(Self {
            origin: ShaderOrigin::Directory(dir.to_path_buf()),
            sources,
        })
    }

    /// Every registered file from the folder `dir` (inside a git working tree) as committed at
    /// `rev`, or when `rev` is `None` at the merge-base of HEAD with the default branch (with
    /// `github_base_ref` in GitHub Actions), as the baseline store resolves it.
    pub fn from_git(dir: &Path, rev: Option<&str>, github_base_ref: Option<&str>) -> Result<Self> {
        let (parent, folder) = match (dir.parent(), dir.file_name()) {
            (Some(parent), Some(folder)) => (parent, folder),
            _ => {
                return Err(KernelError::ShaderDirWithoutParent {
                    dir: dir.to_path_buf(),
                }
                .into());
            }
        };
        let parent = if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        };
        let store = GitBaselineStore::open(parent, Path::new(folder))?;
        let base = store.resolve_base_from(rev, github_base_ref)?;
        let mut sources = BTreeMap::new();
        for shader in SHADERS {
            let path = store.baseline_dir().join(shader.file);
            let bytes = store
                .read_at(&base, &path)?
                .ok_or_else(|| KernelError::ShaderMissingAtRevision {
                    path: path.clone(),
                    revision: base.description.clone(),
                })?;
            let text = String::from_utf8(bytes).map_err(|_| KernelError::ShaderNotUtf8AtRevision {
                path: path.clone(),
                revision: base.description.clone(),
            })?;
            sources.insert(shader.file, Arc::from(text));
        }
        Ok(Self {
            origin: ShaderOrigin::Revision(base),
            sources,
        })
    }

    /// The f32 source of `shader` in this set.
    pub fn source_of<'a>(&'a self, shader: &'a Shader) -> &'a str {
        self.sources.get(shader.file).map_or(shader.source, |text| text)
    }

    /// Where the set came from.
    pub fn origin(&self) -> &ShaderOrigin {
        &self.origin
    }

    /// `embedded`, `directory shaders/` or `1a2b3c4 (merge-base ...)`.
    pub fn describe(&self) -> String {
        match &self.origin {
            ShaderOrigin::Embedded => "embedded shaders".to_string(),
            ShaderOrigin::Directory(dir) => format!("shaders of {}", dir.display()),
            ShaderOrigin::Revision(base) => format!("shaders at {}", base.description),
        }
    }

    /// The files whose source differs from `other`'s, in registry order.
    pub fn differing_files(&self, other: &ShaderSet) -> Vec<&'static str> {
        SHADERS
            .iter()
            .filter(|shader| self.source_of(shader) != other.source_of(shader))
            .map(|shader| shader.file)
            .collect()
    }

    /// A 16-hex-digit digest (FNV-1a over every file name and source, in registry order) that
    /// changes whenever a source does: recorded so that a change of numbers can be traced to a
    /// change of kernels.
    pub fn digest(&self) -> String {
        let hash = crate::fnv1a64(SHADERS.iter().flat_map(|shader| {
            shader
                .file
                .bytes()
                .chain([0])
                .chain(self.source_of(shader).bytes())
                .chain([0])
        }));
        format!("{hash:016x}")
    }
}

/// Every registered file name, for messages.
pub(super) fn file_list() -> String {
    SHADERS
        .iter()
        .map(|shader| shader.file)
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shaders_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
    }

    #[test]
    fn the_checkout_directory_equals_the_embedded_set() {
        let dir = ShaderSet::from_dir(&shaders_dir()).expect("every shader is in shaders/");
        assert!(dir.differing_files(&ShaderSet::embedded()).is_empty());
        assert_eq!(dir.digest(), ShaderSet::embedded().digest());
    }

    #[test]
    fn a_changed_file_is_used_and_seen() {
        let copy = tempfile::tempdir().expect("temp dir");
        for shader in SHADERS {
            std::fs::copy(shaders_dir().join(shader.file), copy.path().join(shader.file)).expect("copy");
        }
        let relu = copy.path().join("activation.wgsl");
        let text = std::fs::read_to_string(&relu).expect("read");
        std::fs::write(&relu, format!("{text}\n// changed\n")).expect("write");
        let set = ShaderSet::from_dir(copy.path()).expect("a whole set");
        assert_eq!(set.differing_files(&ShaderSet::embedded()), ["activation.wgsl"]);
        assert_ne!(set.digest(), ShaderSet::embedded().digest());
        assert!(
            set.source_of(&super::super::registry::ACTIVATION)
                .ends_with("// changed\n")
        );
        std::fs::remove_file(copy.path().join("pool.wgsl")).expect("remove");
        let error = ShaderSet::from_dir(copy.path()).expect_err("pool.wgsl is missing");
        assert!(error.to_string().contains("pool.wgsl"), "{error}");
        assert!(matches!(
            error,
            Error::Kernel(e) if matches!(*e, KernelError::UnreadableShader { file: "pool.wgsl", .. })
        ));
    }

    #[test]
    fn the_repository_head_has_every_shader() {
        // convbench's own checkout is a git repository, in development and in CI.
        let set = ShaderSet::from_git(&shaders_dir(), Some("HEAD"), None).expect("shaders at HEAD");
        assert!(matches!(set.origin(), ShaderOrigin::Revision(_)));
        assert!(set.describe().starts_with("shaders at "), "{}", set.describe());
    }
}

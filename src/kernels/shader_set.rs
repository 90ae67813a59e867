//! Shader sources as a value: the WGSL a device compiles comes from a [`ShaderSet`], which is
//! the set embedded in the binary (the default), a directory of `.wgsl` files (iterate on a
//! kernel without rebuilding convbench), or the `shaders/` folder of a git revision (`ab`
//! compares the WGSL of two revisions in one process on one device).
//!
//! A set resolves the includes of every shader when it is made ([`super::include`]), each
//! included file read from the same place as the shader (the embedded library files, the same
//! directory, the same revision): what the set holds, compares and digests is each shader's
//! source as the device and `kernels --emit` see it.
//!
//! A set only replaces sources: the entry points, bindings and dispatch rules of every
//! registered shader stay those of [`super::registry::SHADERS`]. A replacement that breaks
//! them fails when its pipeline is created, or in verification against the f64 reference,
//! before anything is timed.

use super::KernelError;
use super::include;
use super::registry::{LIBRARIES, SHADERS, Shader, has_subgroup_blocks, specialize};
use crate::baseline::{BaseRevision, GitBaselineStore};
use crate::model::Precision;
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

impl ShaderOrigin {
    /// `embedded shaders`, `shaders of DIR` or `shaders at 1a2b3c4 (merge-base ...)`.
    fn describe(&self) -> String {
        match self {
            ShaderOrigin::Embedded => "embedded shaders".to_string(),
            ShaderOrigin::Directory(dir) => format!("shaders of {}", dir.display()),
            ShaderOrigin::Revision(base) => format!("shaders at {}", base.description),
        }
    }
}

/// The WGSL source of every registered shader, its includes resolved.
#[derive(Debug, Clone)]
pub struct ShaderSet {
    origin: ShaderOrigin,
    /// Every registered shader's source by file name.
    sources: BTreeMap<&'static str, Arc<str>>,
}

impl ShaderSet {
    /// The sources compiled into the binary. An error only when an embedded shader's include
    /// does not resolve, which the tests rule out.
    pub fn embedded() -> Result<Self> {
        Self::resolved(
            ShaderOrigin::Embedded,
            |shader| Ok(shader.source.to_string()),
            |path| {
                Ok(LIBRARIES
                    .iter()
                    .find(|library| library.file == path)
                    .map(|library| library.source.to_string()))
            },
        )
    }

    /// Whether `dir` holds every file of convbench's shaders (it is convbench's `shaders/`,
    /// not a folder of a user's own kernels).
    pub fn is_shader_dir(dir: &Path) -> bool {
        dir.is_dir() && SHADERS.iter().all(|shader| dir.join(shader.file).is_file())
    }

    /// Every registered file read from `dir` (e.g. a checkout's `shaders/`), and the files they
    /// include. A registered file missing from `dir` is an error naming it: a set is whole, so
    /// that what runs is what the directory says.
    pub fn from_dir(dir: &Path) -> Result<Self> {
        let read_shader = |shader: &Shader| {
            let path = dir.join(shader.file);
            crate::fs::read_text(&path, crate::fs::MAX_TEXT_FILE_BYTES).map_err(|error| {
                let reason = match error {
                    Error::Io { source, .. } => source.to_string(),
                    other => other.to_string(),
                };
                KernelError::UnreadableShader {
                    file: shader.file,
                    dir: dir.to_path_buf(),
                    reason,
                }
                .into()
            })
        };
        let read_include =
            |path: &str| match crate::fs::read_text(&dir.join(path), crate::fs::MAX_TEXT_FILE_BYTES) {
                Ok(text) => Ok(Some(text)),
                Err(Error::File(error))
                    if matches!(
                        *error,
                        crate::fs::FileError::NotFound {
                            dangling_link: false,
                            ..
                        }
                    ) =>
                {
                    Ok(None)
                }
                Err(error) => Err(error),
            };
        Self::resolved(
            ShaderOrigin::Directory(dir.to_path_buf()),
            read_shader,
            read_include,
        )
    }

    /// Every registered file from the folder `dir` (inside a git working tree) as committed at
    /// `rev`, or when `rev` is `None` at the merge-base of HEAD with the default branch (with
    /// `github_base_ref` in GitHub Actions), as the baseline store resolves it; and the files
    /// they include, at the same revision.
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
        let read = |file: &str| -> Result<Option<String>> {
            let path = store.baseline_dir().join(file);
            let Some(bytes) = store.read_at(&base, &path)? else {
                return Ok(None);
            };
            let text = String::from_utf8(bytes).map_err(|_| KernelError::ShaderNotUtf8AtRevision {
                path: path.clone(),
                revision: base.description.clone(),
            })?;
            Ok(Some(text))
        };
        let read_shader = |shader: &Shader| {
            read(shader.file)?.ok_or_else(|| {
                KernelError::ShaderMissingAtRevision {
                    path: store.baseline_dir().join(shader.file),
                    revision: base.description.clone(),
                }
                .into()
            })
        };
        Self::resolved(ShaderOrigin::Revision(base.clone()), read_shader, read)
    }

    /// The set from `origin` whose shaders `read_shader` reads, each with its includes
    /// resolved from the files `read_include` reads (`None` for a file the origin lacks).
    fn resolved(
        origin: ShaderOrigin,
        mut read_shader: impl FnMut(&Shader) -> Result<String>,
        mut read_include: impl FnMut(&str) -> Result<Option<String>>,
    ) -> Result<Self> {
        let description = origin.describe();
        let mut sources = BTreeMap::new();
        for shader in SHADERS {
            let text = read_shader(shader)?;
            let text = include::resolve(shader.file, &text, &description, &mut read_include)?;
            sources.insert(shader.file, Arc::from(text));
        }
        Ok(Self { origin, sources })
    }

    /// The f32 source of `shader` in this set, its includes resolved. A shader that is not
    /// registered (a user's kernel) is its source as written: includes are for convbench's own
    /// shaders.
    pub fn source_of<'a>(&'a self, shader: &'a Shader) -> &'a str {
        self.sources.get(shader.file).map_or(shader.source, |text| text)
    }

    /// The final source of `shader` in this set, as the device compiles it: at `precision`, with
    /// the subgroup blocks when `subgroups` (see [`super::registry::variant_source`]), each
    /// `(name, value)` of `constants` replacing the value of `const name: u32 = ...;` (see
    /// [`specialize`]). `None` when a name has no such declaration.
    pub fn final_source(
        &self,
        shader: &Shader,
        precision: Precision,
        subgroups: bool,
        constants: &[(&str, u32)],
    ) -> Option<String> {
        specialize(self.source_of(shader), precision, subgroups, constants)
    }

    /// Whether `shader` has a subgroup block in this set (its own or an included file's), and
    /// so a second form on devices with subgroup operations.
    pub fn has_subgroup_blocks(&self, shader: &Shader) -> bool {
        has_subgroup_blocks(self.source_of(shader))
    }

    /// Where the set came from.
    pub fn origin(&self) -> &ShaderOrigin {
        &self.origin
    }

    /// `embedded shaders`, `shaders of DIR` or `shaders at 1a2b3c4 (merge-base ...)`.
    pub fn describe(&self) -> String {
        self.origin.describe()
    }

    /// The files whose source (its includes resolved) differs from `other`'s, in registry
    /// order: a changed library file shows as the shaders that include it.
    pub fn differing_files(&self, other: &ShaderSet) -> Vec<&'static str> {
        SHADERS
            .iter()
            .filter(|shader| self.source_of(shader) != other.source_of(shader))
            .map(|shader| shader.file)
            .collect()
    }

    /// A 16-hex-digit digest (FNV-1a over every file name and source, its includes resolved, in
    /// registry order) that changes whenever a source does: recorded so that a change of
    /// numbers can be traced to a change of kernels.
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

/// The code of WGSL `source`, comments and spacing aside: each comment (`//` to the end of the
/// line, `/* */` nesting as WGSL's do) and each run of whitespace becomes one space, so two
/// sources that differ only there give the same text. WGSL has no string literals, so nothing
/// else can hold a `//` or a `/*`.
pub fn code_of(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    let mut space = false;
    while let Some(c) = chars.next() {
        let gap = match (c, chars.peek()) {
            ('/', Some('/')) => {
                // WGSL ends a line comment at any line break, not only `\n`: code after a
                // lone `\r` runs, so it must not be read as comment.
                for next in chars.by_ref() {
                    if matches!(
                        next,
                        '\n' | '\u{0B}' | '\u{0C}' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}'
                    ) {
                        break;
                    }
                }
                true
            }
            ('/', Some('*')) => {
                chars.next();
                let mut depth = 1;
                while depth > 0 {
                    match (chars.next(), chars.peek()) {
                        (Some('/'), Some('*')) => {
                            chars.next();
                            depth += 1;
                        }
                        (Some('*'), Some('/')) => {
                            chars.next();
                            depth -= 1;
                        }
                        (Some(_), _) => {}
                        (None, _) => break,
                    }
                }
                true
            }
            (c, _) => c.is_whitespace(),
        };
        if gap {
            space = true;
        } else {
            if space && !code.is_empty() {
                code.push(' ');
            }
            space = false;
            code.push(c);
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::registry::{BATCHNORM, CONV2D, REDUCE};

    fn shaders_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("shaders")
    }

    fn embedded() -> ShaderSet {
        ShaderSet::embedded().expect("the embedded includes resolve")
    }

    /// A copy of every registered shader and library file in the folder `shaders` of a new
    /// folder (the two returned).
    fn copy_of_shaders() -> (tempfile::TempDir, PathBuf) {
        let root = tempfile::tempdir().expect("temp dir");
        let copy = root.path().join("shaders");
        let files = SHADERS
            .iter()
            .map(|shader| shader.file)
            .chain(LIBRARIES.iter().map(|library| library.file));
        for file in files {
            let to = copy.join(file);
            std::fs::create_dir_all(to.parent().expect("a folder")).expect("mkdir");
            std::fs::copy(shaders_dir().join(file), to).expect("copy");
        }
        (root, copy)
    }

    #[test]
    fn the_checkout_directory_equals_the_embedded_set() {
        let dir = ShaderSet::from_dir(&shaders_dir()).expect("every shader is in shaders/");
        assert!(dir.differing_files(&embedded()).is_empty());
        assert_eq!(dir.digest(), embedded().digest());
    }

    #[test]
    fn the_embedded_includes_are_resolved() {
        let set = embedded();
        for shader in [&CONV2D, &BATCHNORM] {
            assert!(!shader.source.contains("fn reduce"), "{}", shader.file);
            let source = set.source_of(shader);
            assert!(source.contains(REDUCE.source), "{}", shader.file);
            assert!(!source.contains(super::include::INCLUDE_DIRECTIVE), "{source}");
            assert!(set.has_subgroup_blocks(shader), "{}", shader.file);
        }
    }

    #[test]
    fn a_changed_file_is_used_and_seen() {
        let (_root, copy) = copy_of_shaders();
        let relu = copy.join("activation.wgsl");
        let text = std::fs::read_to_string(&relu).expect("read");
        std::fs::write(&relu, format!("{text}\n// changed\n")).expect("write");
        let set = ShaderSet::from_dir(&copy).expect("a whole set");
        assert_eq!(set.differing_files(&embedded()), ["activation.wgsl"]);
        assert_ne!(set.digest(), embedded().digest());
        assert!(
            set.source_of(&super::super::registry::ACTIVATION)
                .ends_with("// changed\n")
        );
        std::fs::remove_file(copy.join("pool.wgsl")).expect("remove");
        let error = ShaderSet::from_dir(&copy).expect_err("pool.wgsl is missing");
        assert!(error.to_string().contains("pool.wgsl"), "{error}");
        assert!(matches!(
            error,
            Error::Kernel(e) if matches!(*e, KernelError::UnreadableShader { file: "pool.wgsl", .. })
        ));
    }

    /// A directory's shaders include the directory's library files: a changed library changes
    /// the shaders that include it, and a missing one is an error naming it.
    #[test]
    fn a_directory_resolves_its_own_includes() {
        let (_root, copy) = copy_of_shaders();
        let reduce = copy.join(REDUCE.file);
        std::fs::write(&reduce, format!("{}// changed\n", REDUCE.source)).expect("write");
        let set = ShaderSet::from_dir(&copy).expect("a whole set");
        assert_eq!(
            set.differing_files(&embedded()),
            ["conv2d.wgsl", "batchnorm.wgsl"]
        );
        assert!(set.source_of(&CONV2D).ends_with("// changed\n"));
        std::fs::remove_file(&reduce).expect("remove");
        let error = ShaderSet::from_dir(&copy).expect_err("lib/reduce.wgsl is missing");
        let message = error.to_string();
        for part in ["lib/reduce.wgsl", "conv2d.wgsl line", "shaders of"] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(matches!(
            error,
            Error::Kernel(e) if matches!(*e, KernelError::IncludeNotFound { .. })
        ));
    }

    #[test]
    fn the_repository_head_has_every_shader() {
        // convbench's own checkout is a git repository, in development and in CI.
        let set = ShaderSet::from_git(&shaders_dir(), Some("HEAD"), None).expect("shaders at HEAD");
        assert!(matches!(set.origin(), ShaderOrigin::Revision(_)));
        assert!(set.describe().starts_with("shaders at "), "{}", set.describe());
    }

    /// The shaders of a revision include the library files of that revision, not the working
    /// tree's; a revision without an included file is an error naming it and the revision.
    #[test]
    fn a_revision_resolves_includes_at_that_revision() {
        let (root, copy) = copy_of_shaders();
        let repo = git2::Repository::init(root.path()).expect("git init");
        let commit = |message: &str| {
            let mut index = repo.index().expect("index");
            index
                .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
                .expect("add");
            index.update_all(["*"], None).expect("remove the deleted files");
            index.write().expect("write index");
            let tree = repo.find_tree(index.write_tree().expect("tree")).expect("tree");
            let signature = git2::Signature::now("Test", "test@example.com").expect("signature");
            let parent = repo.head().ok().and_then(|head| head.peel_to_commit().ok());
            let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
            repo.commit(Some("HEAD"), &signature, &signature, message, &tree, &parents)
                .expect("commit")
                .to_string()
        };
        let reduce = copy.join(REDUCE.file);
        std::fs::write(&reduce, format!("{}// first\n", REDUCE.source)).expect("write");
        let first = commit("first");
        std::fs::write(&reduce, format!("{}// second\n", REDUCE.source)).expect("write");
        commit("second");
        std::fs::remove_file(&reduce).expect("remove");
        let without = commit("without the library");
        std::fs::write(&reduce, format!("{}// working tree\n", REDUCE.source)).expect("write");

        let at_first = ShaderSet::from_git(&copy, Some(&first), None).expect("first");
        assert!(at_first.source_of(&CONV2D).ends_with("// first\n"));
        let at_second = ShaderSet::from_git(&copy, Some("HEAD~1"), None).expect("second");
        assert!(at_second.source_of(&BATCHNORM).ends_with("// second\n"));
        assert_eq!(
            at_second.differing_files(&at_first),
            ["conv2d.wgsl", "batchnorm.wgsl"]
        );
        let error = ShaderSet::from_git(&copy, Some(&without), None).expect_err("no library");
        let message = error.to_string();
        for part in ["lib/reduce.wgsl", "conv2d.wgsl line", &without[..7]] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(matches!(
            error,
            Error::Kernel(e) if matches!(*e, KernelError::IncludeNotFound { .. })
        ));
    }

    #[test]
    fn code_of_drops_comments_and_spacing_only() {
        let plain = "fn f(a: f32) -> f32 {\n    return a / 2.0;\n}\n";
        let commented =
            "// header\nfn f(a: f32)  -> f32 { /* a /* nested */ comment */\n\treturn a / 2.0; // half\n}";
        assert_eq!(code_of(plain), code_of(commented));
        assert_eq!(code_of(plain), "fn f(a: f32) -> f32 { return a / 2.0; }");
        // A change of code is one.
        assert_ne!(code_of(plain), code_of(&plain.replace("2.0", "3.0")));
        assert_ne!(code_of("a - -b"), code_of("a --b"));
        // Code after a line break other than `\n` ends the comment, as in WGSL.
        for line_break in ['\r', '\u{0B}', '\u{0C}', '\u{85}', '\u{2028}', '\u{2029}'] {
            let hidden = format!("y = a; // done{line_break} y = a * 3.0;\n");
            assert_ne!(code_of(&hidden), code_of("y = a; // done\n"), "{line_break:?}");
        }
    }
}

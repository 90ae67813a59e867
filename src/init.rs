//! `cargo convbench init`: puts a workspace under convbench's gate. It writes a sample kernel
//! with its contract (`kernels/<name>.wgsl`, a plain `conv2d_forward`), declares it in the
//! configuration, and adds the three GitHub Actions workflows (`convbench.yml` benchmarks pull
//! requests with a read-only token, `comment.yml` posts the one PR comment, `baseline.yml`
//! blesses numbers on the default branch).
//!
//! It is idempotent: a file that already says the same is left alone, a file that says
//! something else is kept (and named) unless `--force`, and a kernel already declared is not
//! declared again. Nothing is ever overwritten without `--force`.

use crate::config::{CONFIG_FILE_NAME, Workspace};
use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The sample kernel: a plain one-invocation-per-output `conv2d_forward`.
const SAMPLE_KERNEL: &str = include_str!("../examples/my-kernels/kernels/conv_plain.wgsl");

/// The workflows, as this repository runs them, with convbench installed from crates.io.
const WORKFLOWS: [(&str, &str); 3] = [
    (
        "convbench.yml",
        include_str!("../.github/workflows/convbench.yml"),
    ),
    ("comment.yml", include_str!("../.github/workflows/comment.yml")),
    ("baseline.yml", include_str!("../.github/workflows/baseline.yml")),
];

/// What stops `init` before it writes anything. All are the user's input.
#[derive(Debug, thiserror::Error)]
pub enum InitError {
    /// `--kernel` is not a kernel name.
    #[error("--kernel {kernel}: a kernel name is ASCII letters, digits, `-` and `_`")]
    BadKernelName {
        /// The name given.
        kernel: String,
    },
    /// The workspace root has no `Cargo.toml` to declare the kernel in.
    #[error(
        "{} has no Cargo.toml: run `cargo convbench init` in a cargo workspace (or pass \
         --manifest-path)",
        root.display()
    )]
    NoManifest {
        /// The workspace root (the current directory outside any cargo workspace).
        root: PathBuf,
    },
    /// A path where `init` writes a file is something else (a folder), or one of the folders it
    /// writes into is a file: found before anything is written.
    #[error("{} is {found} where `init` writes {needs}: move it away{hint}", path.display())]
    InTheWay {
        /// The path in the way.
        path: PathBuf,
        /// What is there: `a folder`, `a file`, `not a regular file`.
        found: &'static str,
        /// What `init` needs there: `a file` or `a folder`.
        needs: &'static str,
        /// The flag that avoids it: `, or pass --no-workflows`, `, or pass another --kernel`.
        hint: &'static str,
    },
}

impl InitError {
    /// The exit-code category: always the user's input.
    pub fn kind(&self) -> crate::ErrorKind {
        crate::ErrorKind::InvalidInput
    }
}

/// What became of one file.
enum Outcome {
    Created,
    Unchanged,
    Kept,
    Overwritten,
}

fn write(path: &Path, text: &str, force: bool) -> Result<Outcome> {
    match std::fs::read_to_string(path) {
        Ok(existing) if existing == text => return Ok(Outcome::Unchanged),
        Ok(_) if !force => return Ok(Outcome::Kept),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::io(path, e)),
    }
    let existed = path.exists();
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    crate::fs::write_atomically(path, text.as_bytes())?;
    Ok(if existed {
        Outcome::Overwritten
    } else {
        Outcome::Created
    })
}

/// The first thing in the way of writing the file `path` under `root`: a folder between them
/// that is not a folder, or `path` itself when it is not a regular file (a symbolic link to one
/// is one). `None` when the file can be written, whether or not it exists.
fn in_the_way(root: &Path, path: &Path, hint: &'static str) -> Option<InitError> {
    let relative = path.strip_prefix(root).ok()?;
    let mut at = root.to_path_buf();
    let mut parts = relative.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        let Ok(metadata) = std::fs::metadata(&at) else {
            return None;
        };
        let last = parts.peek().is_none();
        let (fits, needs) = if last {
            (metadata.is_file(), "a file")
        } else {
            (metadata.is_dir(), "a folder")
        };
        if !fits {
            let found = if metadata.is_dir() {
                "a folder"
            } else if metadata.is_file() {
                "a file"
            } else {
                "not a regular file"
            };
            return Some(InitError::InTheWay {
                path: at,
                found,
                needs,
                hint,
            });
        }
    }
    None
}

/// The workflow text for a user's repository: convbench from crates.io at this version.
pub fn workflow_for_users(text: &str) -> String {
    text.replace(
        "cargo install --path cargo-convbench --locked",
        &format!(
            "cargo install cargo-convbench --locked --version {}",
            env!("CARGO_PKG_VERSION")
        ),
    )
}

/// Writes the sample kernel `kernel` (`kernels/<kernel>.wgsl`), declares it in the workspace's
/// configuration (`convbench.toml` when there is one, else the root `Cargo.toml`) and, with
/// `workflows`, writes the three workflows; returns what became of each file, one line each,
/// then what to do next. `force` overwrites files that say something else.
pub fn init(workspace: &Workspace, kernel: &str, workflows: bool, force: bool) -> Result<Vec<String>> {
    if !crate::kernels::user::is_kernel_name(kernel) {
        return Err(InitError::BadKernelName {
            kernel: kernel.to_string(),
        }
        .into());
    }
    let root = workspace.root.clone();
    let cargo_toml = root.join("Cargo.toml");
    if !cargo_toml.is_file() {
        return Err(InitError::NoManifest { root }.into());
    }
    let source = PathBuf::from("kernels").join(format!("{}.wgsl", kernel.replace('-', "_")));
    let mut targets = vec![(root.join(&source), ", or pass another --kernel")];
    if workflows {
        for (name, _) in WORKFLOWS {
            targets.push((
                root.join(".github/workflows").join(name),
                ", or pass --no-workflows",
            ));
        }
    }
    if let Some(error) = targets
        .iter()
        .find_map(|(path, hint)| in_the_way(&root, path, hint))
    {
        return Err(error.into());
    }
    let mut lines = Vec::new();
    let report = |path: &Path, outcome: Outcome| -> String {
        let shown = path.strip_prefix(&root).unwrap_or(path).display().to_string();
        match outcome {
            Outcome::Created => format!("created     {shown}"),
            Outcome::Unchanged => format!("unchanged   {shown}"),
            Outcome::Overwritten => format!("overwritten {shown}"),
            Outcome::Kept => format!("kept        {shown} (it differs; --force overwrites it)"),
        }
    };

    lines.push(report(
        &root.join(&source),
        write(&root.join(&source), SAMPLE_KERNEL, force)?,
    ));

    let shown_source = source.display().to_string().replace('\\', "/");
    if workspace.kernels.iter().any(|k| k.name == kernel) {
        lines.push(format!("unchanged   kernel `{}` is already declared", kernel));
    } else {
        let body =
            format!("op = \"conv2d_forward\"\nsource = \"{shown_source}\"\nentry = \"main\"\nf16 = true\n");
        let config_file = root.join(CONFIG_FILE_NAME);
        let (file, table) = if config_file.is_file() {
            (config_file, format!("kernels.{}", kernel))
        } else {
            let manifest = std::fs::read_to_string(&cargo_toml).map_err(|e| Error::io(&cargo_toml, e))?;
            let is_package = manifest.lines().any(|l| l.trim() == "[package]");
            let scope = if is_package { "package" } else { "workspace" };
            (
                cargo_toml.clone(),
                format!("{scope}.metadata.convbench.kernels.{}", kernel),
            )
        };
        let mut text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
        if !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&format!(
            "\n# A WGSL kernel under convbench's gate: `cargo convbench verify --variants`, then\n\
             # `cargo convbench run --kernel user:{}`. Its contract: `cargo convbench kernels --contract conv2d_forward`.\n[{table}]\n{body}",
            kernel
        ));
        crate::fs::write_atomically(&file, text.as_bytes())?;
        let shown = file.strip_prefix(&root).unwrap_or(&file).display().to_string();
        lines.push(format!("declared    kernel `{}` in [{table}] of {shown}", kernel));
    }

    if workflows {
        for (name, text) in WORKFLOWS {
            let path = root.join(".github/workflows").join(name);
            lines.push(report(&path, write(&path, &workflow_for_users(text), force)?));
        }
    }
    lines.push(String::new());
    lines.push(format!(
        "next: `cargo convbench verify --variants --kernel user:{0}` checks it against the reference; \
         `cargo convbench run --kernel user:{0}` times it inside the networks; \
         `cargo convbench baseline update` blesses the numbers the gate compares with",
        kernel
    ));
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outside_any_workspace(root: &Path) -> Workspace {
        Workspace {
            root: root.to_path_buf(),
            target_dir: root.join("target"),
            config: crate::config::Config::default(),
            config_path: None,
            kernels: Vec::new(),
        }
    }

    #[test]
    fn a_bad_kernel_name_or_no_manifest_stops_init_before_it_writes() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let workspace = outside_any_workspace(dir.path());
        let error = init(&workspace, "my kernel", false, false).expect_err("a space");
        assert!(
            matches!(&error, Error::Init(e) if matches!(&**e, InitError::BadKernelName { kernel } if kernel == "my kernel")),
            "{error:?}"
        );
        let error = init(&workspace, "mine", true, false).expect_err("no Cargo.toml");
        assert!(
            matches!(&error, Error::Init(e) if matches!(&**e, InitError::NoManifest { root } if root == dir.path())),
            "{error:?}"
        );
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(
            error
                .to_string()
                .contains("run `cargo convbench init` in a cargo workspace"),
            "{error}"
        );
        assert_eq!(
            std::fs::read_dir(dir.path()).expect("list").count(),
            0,
            "nothing written"
        );
    }

    #[test]
    fn a_folder_or_file_in_the_way_stops_init_before_it_writes() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let manifest = "[package]\nname = \"mine\"\nversion = \"0.1.0\"\n";
        std::fs::write(dir.path().join("Cargo.toml"), manifest).expect("write");
        let workspace = outside_any_workspace(dir.path());
        let in_the_way = dir.path().join(".github/workflows/comment.yml");
        std::fs::create_dir_all(&in_the_way).expect("mkdir");
        let error = init(&workspace, "mine", true, false).expect_err("a folder in the way");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(
            matches!(&error, Error::Init(e) if matches!(&**e, InitError::InTheWay { path, needs: "a file", .. } if *path == in_the_way)),
            "{error:?}"
        );
        assert!(
            error
                .to_string()
                .ends_with("move it away, or pass --no-workflows"),
            "{error}"
        );
        assert!(
            !dir.path().join("kernels").exists(),
            "nothing written before the check"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("Cargo.toml")).expect("read"),
            manifest
        );
        // A file where the kernels' folder goes.
        std::fs::write(dir.path().join("kernels"), "").expect("write");
        let error = init(&workspace, "mine", false, false).expect_err("a file in the way");
        assert!(
            matches!(&error, Error::Init(e) if matches!(&**e, InitError::InTheWay { path, found: "a file", needs: "a folder", .. } if *path == dir.path().join("kernels"))),
            "{error:?}"
        );
        // Out of the way, init writes everything.
        std::fs::remove_file(dir.path().join("kernels")).expect("rm");
        std::fs::remove_dir(&in_the_way).expect("rmdir");
        let lines = init(&workspace, "mine", true, false).expect("init");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("created     kernels/mine.wgsl")),
            "{lines:?}"
        );
        assert!(in_the_way.is_file());
    }
}

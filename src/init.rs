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
use crate::kernels::user::KernelConfig;
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
    /// A key on the way to the kernel's table holds something else (`kernels = "mine"`).
    #[error(
        "{}: `{key}` is {found}, not a table, so init cannot declare `[{table}]` there: make it a \
         table, or declare the kernel by hand",
        file.display()
    )]
    NotATable {
        /// The configuration file or manifest.
        file: PathBuf,
        /// The dotted key that is not a table.
        key: String,
        /// What it is (`string`, `array`, ...).
        found: &'static str,
        /// The table init declares the kernel in.
        table: String,
    },
    /// The file init declares the kernel in does not parse as TOML, or init's edit of it did not
    /// read back as the declaration it meant.
    #[error("{}: {reason}: fix the file, or declare the kernel by hand", file.display())]
    BadToml {
        /// The configuration file or manifest.
        file: PathBuf,
        /// Why.
        reason: String,
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

/// The declaration `init` writes for kernel `kernel`: a plain `conv2d_forward` in `source`.
fn expected_declaration(source: &str, f16: bool) -> KernelConfig {
    KernelConfig {
        op: "conv2d_forward".to_string(),
        source: PathBuf::from(source),
        entry: "main".to_string(),
        workgroup_size: None,
        outputs_per_invocation: None,
        outputs_per_workgroup: None,
        f16,
        only: Default::default(),
    }
}

/// Declares kernel `kernel` (source `source`) in the workspace's configuration, `convbench.toml`
/// when there is one, else the root `Cargo.toml` (`[package.metadata.convbench.kernels]` of a
/// root package, `[workspace.metadata.convbench.kernels]` of a virtual manifest): the one line
/// saying what became of the declaration. A declaration that says the same is left alone; one
/// that says something else is kept unless `force`, and one in another file (a member crate's
/// manifest) is always kept. The file is edited as TOML (`toml_edit`), so a `kernels` written as
/// an inline table, dotted keys and comments survive, and the result is checked to parse.
fn declare(workspace: &Workspace, kernel: &str, source: &str, f16: bool, force: bool) -> Result<String> {
    let root = &workspace.root;
    let config_file = root.join(CONFIG_FILE_NAME);
    let file = if config_file.is_file() {
        config_file
    } else {
        root.join("Cargo.toml")
    };
    let shown_file = |path: &Path| path.strip_prefix(root).unwrap_or(path).display().to_string();
    let expected = expected_declaration(source, f16);
    let same_file = |other: &Path| {
        other == file
            || matches!(
                (other.canonicalize(), file.canonicalize()),
                (Ok(a), Ok(b)) if a == b
            )
    };
    if let Some(declared) = workspace.kernels.iter().find(|k| k.name == kernel) {
        let shown = shown_file(&declared.file);
        if declared.config == expected {
            return Ok(format!(
                "unchanged   kernel `{kernel}` is already declared in {shown}"
            ));
        }
        if !same_file(&declared.file) {
            return Ok(format!(
                "kept        kernel `{kernel}` is declared differently in {shown} (edit it there, or pass \
                 another --kernel)"
            ));
        }
        if !force {
            return Ok(format!(
                "kept        kernel `{kernel}` is declared differently in {shown} (--force rewrites it)"
            ));
        }
    }
    let text = std::fs::read_to_string(&file).map_err(|e| Error::io(&file, e))?;
    let mut document: toml_edit::DocumentMut =
        text.parse()
            .map_err(|error: toml_edit::TomlError| InitError::BadToml {
                file: file.clone(),
                reason: error.message().to_string(),
            })?;
    let mut keys: Vec<&str> = Vec::new();
    if file.file_name() == Some(std::ffi::OsStr::new("Cargo.toml")) {
        let scope = if document.contains_key("package") {
            "package"
        } else {
            "workspace"
        };
        keys.extend([scope, "metadata", "convbench"]);
    }
    keys.push("kernels");
    let table = format!("{}.{kernel}", keys.join("."));
    let document_tables = last_position(document.as_table());
    // Comments at the very end belong to the last table (`# serde = "1"` under
    // `[dependencies]`): a table appended goes after them, not between.
    let trailing = document.trailing().as_str().unwrap_or_default().to_string();
    let move_trailing = !trailing.trim().is_empty();
    // Down the keys from the document's root (a table), creating what is missing in the form
    // of its parent (a table stays a table, an inline table takes inline ones).
    let mut item = document.as_item_mut();
    let mut walked = 0;
    let (kernels, inline) = loop {
        let (inline, found) = (item.is_inline_table(), item.type_name());
        let Some(parent) = item.as_table_like_mut() else {
            return Err(InitError::NotATable {
                file: file.clone(),
                key: keys[..walked].join("."),
                found,
                table,
            }
            .into());
        };
        let Some(key) = keys.get(walked) else {
            break (parent, inline);
        };
        walked += 1;
        let fresh = if inline {
            toml_edit::Item::Value(toml_edit::InlineTable::new().into())
        } else {
            let mut table = toml_edit::Table::new();
            table.set_implicit(true);
            toml_edit::Item::Table(table)
        };
        item = parent.entry(key).or_insert(fresh);
    };
    let mut declaration = toml_edit::Table::new();
    declaration["op"] = toml_edit::value(expected.op.as_str());
    declaration["source"] = toml_edit::value(source);
    declaration["entry"] = toml_edit::value(expected.entry.as_str());
    declaration["f16"] = toml_edit::value(f16);
    let rewritten = kernels.contains_key(kernel);
    if inline {
        kernels.insert(
            kernel,
            toml_edit::Item::Value(declaration.into_inline_table().into()),
        );
    } else {
        let before = if move_trailing { trailing.as_str() } else { "" };
        declaration.decor_mut().set_prefix(format!(
            "{before}\n# A WGSL kernel under convbench's gate: `cargo convbench verify --variants`, then\n\
             # `cargo convbench run --kernel user:{kernel}`. Its contract: `cargo convbench kernels \
             --contract conv2d_forward`.\n"
        ));
        // After everything else, as a table added by hand would be (toml_edit would otherwise
        // place it right after its parent, e.g. between `[package]` and `[dependencies]`).
        declaration.set_position(Some(document_tables + 1));
        kernels.insert(kernel, toml_edit::Item::Table(declaration));
        if move_trailing {
            document.set_trailing("");
        }
    }
    let mut written = document.to_string();
    // Line endings as the file had them (toml_edit writes `\n` for what it adds).
    if text.contains("\r\n") {
        written = written.replace("\r\n", "\n").replace('\n', "\r\n");
    }
    // What init wrote must read back as what it meant: a check, not a guess about the edit.
    let reread: toml::Table = toml::from_str(&written).map_err(|error| InitError::BadToml {
        file: file.clone(),
        reason: format!("the edit did not parse: {error}"),
    })?;
    let declared = keys
        .iter()
        .chain(std::iter::once(&kernel))
        .try_fold(&toml::Value::Table(reread), |value, key| value.get(key))
        .cloned()
        .and_then(|value| value.try_into::<KernelConfig>().ok());
    if declared.as_ref() != Some(&expected) {
        return Err(InitError::BadToml {
            file: file.clone(),
            reason: format!("the edit did not declare `[{table}]` as meant"),
        }
        .into());
    }
    crate::fs::write_atomically(&file, written.as_bytes())?;
    let f16_note = if f16 {
        ""
    } else {
        " (f16 = false: its source has no `alias T = f32;` line)"
    };
    let verb = if rewritten { "rewrote    " } else { "declared   " };
    Ok(format!(
        "{verb} kernel `{kernel}` in [{table}] of {}{f16_note}",
        shown_file(&file)
    ))
}

/// The largest document position of `table` and the tables under it (0 for none).
fn last_position(table: &toml_edit::Table) -> isize {
    table
        .iter()
        .flat_map(|(_, item)| match item {
            toml_edit::Item::Table(table) => vec![table],
            toml_edit::Item::ArrayOfTables(tables) => tables.iter().collect(),
            _ => Vec::new(),
        })
        .map(|table| table.position().unwrap_or(0).max(last_position(table)))
        .fold(table.position().unwrap_or(0), isize::max)
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
    let kernel_text =
        std::fs::read_to_string(root.join(&source)).map_err(|e| Error::io(root.join(&source), e))?;
    // A kernel file init kept (the user's own) runs in f16 only if it has the alias line that
    // becomes `alias T = f16;`: declaring `f16 = true` without it would fail every command.
    let f16 = kernel_text
        .lines()
        .any(|line| line.trim() == crate::kernels::registry::ALIAS_LINE);
    lines.push(declare(workspace, kernel, &shown_source, f16, force)?);

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
            hidden_table: None,
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

    /// The `Cargo.toml` of a package whose metadata says `tail`.
    fn package_with(dir: &Path, tail: &str) -> PathBuf {
        let manifest = dir.join("Cargo.toml");
        std::fs::write(
            &manifest,
            format!("[package]\nname = \"mine\"\nversion = \"0.1.0\"\n\n{tail}"),
        )
        .expect("write");
        manifest
    }

    /// The declaration of `kernel` in the TOML file `path`, at `keys`.
    fn declared(path: &Path, keys: &[&str]) -> KernelConfig {
        let text = std::fs::read_to_string(path).expect("read");
        let value: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        keys.iter()
            .try_fold(&value, |value, key| value.get(key))
            .unwrap_or_else(|| panic!("{keys:?} in\n{text}"))
            .clone()
            .try_into()
            .expect("a kernel declaration")
    }

    #[test]
    fn a_kernels_table_written_inline_or_dotted_gets_the_declaration_inside() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let workspace = outside_any_workspace(dir.path());
        let at = ["package", "metadata", "convbench", "kernels", "mine"];
        let expected = expected_declaration("kernels/mine.wgsl", true);
        for tail in [
            "[package.metadata]\nconvbench = { kernels = {} }\n",
            "[package.metadata.convbench]\nkernels = { other = { op = \"conv2d_forward\", source = \"o.wgsl\" } }\n",
            "[package.metadata]\nconvbench.kernels.other.op = \"conv2d_forward\"\nconvbench.kernels.other.source = \"o.wgsl\"\n",
            "# mine\n[package.metadata.convbench.kernels.other]\nop = \"conv2d_forward\"\nsource = \"o.wgsl\"\n",
        ] {
            let manifest = package_with(dir.path(), tail);
            let lines = init(&workspace, "mine", false, false).expect("init");
            assert!(
                lines.iter().any(|l| l.starts_with("declared    kernel `mine`")),
                "{lines:?}"
            );
            assert_eq!(declared(&manifest, &at), expected, "{tail}");
            let text = std::fs::read_to_string(&manifest).expect("read");
            assert!(
                text.contains(tail.lines().next().expect("a line")),
                "kept: {text}"
            );
            if tail.contains("other") {
                let other = declared(
                    &manifest,
                    &["package", "metadata", "convbench", "kernels", "other"],
                );
                assert_eq!(other.source, PathBuf::from("o.wgsl"), "{text}");
            }
        }
        // In convbench.toml, inline too.
        std::fs::write(dir.path().join(CONFIG_FILE_NAME), "kernels = {}\n").expect("write");
        init(&workspace, "mine", false, false).expect("init");
        assert_eq!(
            declared(&dir.path().join(CONFIG_FILE_NAME), &["kernels", "mine"]),
            expected
        );
        // A key that is not a table is named, and nothing is written.
        std::fs::write(dir.path().join(CONFIG_FILE_NAME), "kernels = \"mine\"\n").expect("write");
        let error = init(&workspace, "mine", false, false).expect_err("not a table");
        assert!(
            matches!(&error, Error::Init(e) if matches!(&**e, InitError::NotATable { key, found: "string", .. } if key == "kernels")),
            "{error:?}"
        );
        assert!(
            error.to_string().contains("`kernels` is string, not a table"),
            "{error}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(CONFIG_FILE_NAME)).expect("read"),
            "kernels = \"mine\"\n"
        );
    }

    /// A manifest with CRLF line endings keeps them (git would otherwise show every line
    /// changed), and a comment at its very end stays under the table it follows.
    #[test]
    fn line_endings_and_a_closing_comment_are_kept_where_they_were() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let workspace = outside_any_workspace(dir.path());
        let manifest = dir.path().join("Cargo.toml");
        std::fs::write(
            &manifest,
            "[package]\r\nname = \"p\"\r\nversion = \"0.1.0\"\r\nedition = \"2021\"\r\n\r\n[dependencies]\r\n# serde = \"1\"\r\n",
        )
        .expect("write");
        init(&workspace, "mine", true, false).expect("init");
        let text = std::fs::read_to_string(&manifest).expect("read");
        assert!(!text.replace("\r\n", "").contains('\n'), "a bare LF: {text:?}");
        let comment = text.find("# serde").expect("the comment");
        let table = text
            .find("[package.metadata.convbench.kernels.mine]")
            .expect("the table");
        assert!(comment < table, "{text}");
        assert_eq!(
            declared(
                &manifest,
                &["package", "metadata", "convbench", "kernels", "mine"]
            ),
            expected_declaration("kernels/mine.wgsl", true)
        );
    }

    #[test]
    fn a_declaration_that_differs_is_kept_unless_forced_and_a_kept_source_sets_f16() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let manifest = package_with(
            dir.path(),
            "[package.metadata.convbench.kernels.mine]\nop = \"conv2d_forward\"\nsource = \"kernels/mine.wgsl\"\nentry = \"other\"\n",
        );
        let before = std::fs::read_to_string(&manifest).expect("read");
        let mut workspace = outside_any_workspace(dir.path());
        workspace.kernels.push(crate::kernels::user::Declared {
            name: "mine".to_string(),
            config: declared(
                &manifest,
                &["package", "metadata", "convbench", "kernels", "mine"],
            ),
            base_dir: dir.path().to_path_buf(),
            file: manifest.clone(),
        });
        let lines = init(&workspace, "mine", false, false).expect("init");
        assert!(
            lines.iter().any(|l| l
                == "kept        kernel `mine` is declared differently in Cargo.toml (--force rewrites it)"),
            "{lines:?}"
        );
        assert_eq!(std::fs::read_to_string(&manifest).expect("read"), before);
        let lines = init(&workspace, "mine", false, true).expect("init --force");
        assert!(
            lines.iter().any(|l| l.starts_with("rewrote     kernel `mine`")),
            "{lines:?}"
        );
        let at = ["package", "metadata", "convbench", "kernels", "mine"];
        assert_eq!(
            declared(&manifest, &at),
            expected_declaration("kernels/mine.wgsl", true)
        );

        // Declared elsewhere (a member crate): kept even with --force.
        workspace.kernels[0].file = dir.path().join("member/Cargo.toml");
        let lines = init(&workspace, "mine", false, true).expect("init --force");
        assert!(
            lines
                .iter()
                .any(|l| l.contains("declared differently in member/Cargo.toml (edit it there")),
            "{lines:?}"
        );

        // The user's own kernel file without the alias line is kept and declared without f16.
        let other = tempfile::tempdir().expect("temporary directory");
        let manifest = package_with(other.path(), "");
        std::fs::create_dir_all(other.path().join("kernels")).expect("mkdir");
        let source = SAMPLE_KERNEL.replace(crate::kernels::registry::ALIAS_LINE, "alias T = f32; // mine");
        std::fs::write(other.path().join("kernels/mine.wgsl"), &source).expect("write");
        let lines = init(&outside_any_workspace(other.path()), "mine", false, false).expect("init");
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("kept        kernels/mine.wgsl")),
            "{lines:?}"
        );
        assert!(
            lines
                .iter()
                .any(|l| l.ends_with("(f16 = false: its source has no `alias T = f32;` line)")),
            "{lines:?}"
        );
        assert_eq!(
            declared(&manifest, &at),
            expected_declaration("kernels/mine.wgsl", false)
        );
    }
}

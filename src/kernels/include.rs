//! `// #include "PATH"`: WGSL shared by several of convbench's own shaders, written once.
//!
//! A line `// #include "lib/reduce.wgsl"` in a registered shader names a file under `shaders/`
//! by its path there (relative, `/`-separated, ending in `.wgsl`, without `.` or `..` parts).
//! Such a *library file* holds module-scope declarations only (functions, structs, constants,
//! workgroup variables; no entry points, no `enable` and no `alias T`); it is registered in
//! [`super::registry::LIBRARIES`] and validated with naga as part of every shader that includes
//! it. A library may include another one.
//!
//! [`resolve`] turns a shader as written into the one source that everything downstream sees
//! (the variants of [`super::registry`], the device, `kernels --emit`, naga and Tint): a
//! [`super::shader_set::ShaderSet`] resolves every registered shader when it is made, reading
//! each included file from where the shader came from: the embedded library files, the same
//! directory, or the same git revision. So `ab` compares the base revision's shaders with that
//! revision's libraries.
//!
//! Line numbers: WGSL lets module-scope declarations come in any order, so an included file is
//! not spliced in at the directive but appended after the including shader, behind a comment line
//! that names it. The shader's own lines keep their numbers in every compiler message (the
//! directive becomes a comment saying where the file went); a message about a library names a
//! line of the final source, which `cargo convbench kernels --emit DIR` writes, and line `N` of
//! the library is `N` lines below its header comment. A file included twice (by the shader and by
//! a library, say) is appended once.
//!
//! Errors name the file and line of the directive: a directive that is not `// #include "PATH"`
//! or names no valid path, any other unknown `// #` directive line, a file the shader set does
//! not have, and a cycle (a file that includes itself, directly or through others). Users'
//! kernels are single files: nothing of theirs is resolved.

use super::KernelError;
use super::registry::{SUBGROUPS_BEGIN, SUBGROUPS_ELSE, SUBGROUPS_END};
use crate::Result;

/// What starts an include line: `// #include "lib/reduce.wgsl"`.
pub const INCLUDE_DIRECTIVE: &str = "// #include";

/// What starts every directive line of convbench's shaders.
const DIRECTIVE_PREFIX: &str = "// #";

/// One file of a resolved source.
struct Unit {
    /// Its path under `shaders/`.
    file: String,
    /// Its text as written.
    text: String,
    /// Its include directives, in order.
    includes: Vec<Include>,
    /// The file and line (1-based) of the directive that first included it; `None` for the
    /// shader itself.
    included_by: Option<(String, usize)>,
}

/// An include directive.
#[derive(Clone)]
struct Include {
    /// Its line, 1-based.
    line: usize,
    /// The path it names.
    path: String,
}

/// The source of the shader `file` (whose text as written is `source`) with its includes
/// resolved, as described in the [module documentation](self). `read` gives the text of a file
/// of the same shader set by its path under `shaders/` (`None` when the set has no such file);
/// `shaders` says which set it is, for messages (as [`super::shader_set::ShaderSet::describe`]).
pub fn resolve(
    file: &str,
    source: &str,
    shaders: &str,
    read: &mut dyn FnMut(&str) -> Result<Option<String>>,
) -> Result<String> {
    let root = Unit {
        file: file.to_string(),
        text: source.to_string(),
        includes: directives(file, source)?,
        included_by: None,
    };
    if root.includes.is_empty() {
        return Ok(source.to_string());
    }
    let mut units = vec![root];
    let mut stack = vec![file.to_string()];
    collect(0, &mut units, &mut stack, shaders, read)?;
    Ok(assemble(&units))
}

/// The include directives of `text` (the file `file`); an error for a directive line that is
/// neither an include nor a subgroup block marker, and for an include that names no valid path.
fn directives(file: &str, text: &str) -> Result<Vec<Include>> {
    let mut includes = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if !trimmed.starts_with(DIRECTIVE_PREFIX)
            || [SUBGROUPS_BEGIN, SUBGROUPS_ELSE, SUBGROUPS_END].contains(&trimmed)
        {
            continue;
        }
        let malformed = || KernelError::MalformedDirective {
            file: file.to_string(),
            line: index + 1,
            text: trimmed.to_string(),
        };
        let path = trimmed
            .strip_prefix(INCLUDE_DIRECTIVE)
            .filter(|rest| rest.starts_with(char::is_whitespace))
            .map(str::trim)
            .and_then(|rest| rest.strip_prefix('"'))
            .and_then(|rest| rest.strip_suffix('"'))
            .filter(|path| is_valid_path(path))
            .ok_or_else(malformed)?;
        includes.push(Include {
            line: index + 1,
            path: path.to_string(),
        });
    }
    Ok(includes)
}

/// Whether `path` names a `.wgsl` file under `shaders/` and nothing outside it.
fn is_valid_path(path: &str) -> bool {
    path.ends_with(".wgsl")
        && path.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
        })
}

/// Reads, depth first, every file that `units[index]` includes and that is not read yet,
/// appending each to `units` in the order first included. `stack` holds the files being read,
/// the shader first: an include of one of them is a cycle.
fn collect(
    index: usize,
    units: &mut Vec<Unit>,
    stack: &mut Vec<String>,
    shaders: &str,
    read: &mut dyn FnMut(&str) -> Result<Option<String>>,
) -> Result<()> {
    let includer = units[index].file.clone();
    for include in units[index].includes.clone() {
        if let Some(start) = stack.iter().position(|file| *file == include.path) {
            let mut cycle = stack[start..].to_vec();
            cycle.push(include.path);
            return Err(KernelError::IncludeCycle {
                cycle,
                shaders: shaders.to_string(),
            }
            .into());
        }
        if units.iter().any(|unit| unit.file == include.path) {
            continue;
        }
        let text = read(&include.path)?.ok_or_else(|| KernelError::IncludeNotFound {
            include: include.path.clone(),
            file: includer.clone(),
            line: include.line,
            shaders: shaders.to_string(),
        })?;
        let includes = directives(&include.path, &text)?;
        units.push(Unit {
            file: include.path.clone(),
            text,
            includes,
            included_by: Some((includer.clone(), include.line)),
        });
        stack.push(include.path);
        collect(units.len() - 1, units, stack, shaders, read)?;
        stack.pop();
    }
    Ok(())
}

/// The shader (`units[0]`) followed by each included file behind a header line, every
/// directive line replaced by a comment that says at which line its file starts.
fn assemble(units: &[Unit]) -> String {
    // The line (1-based) of each unit's header; the shader's own first line for the shader.
    let mut starts = Vec::with_capacity(units.len());
    let mut next = 1;
    for (index, unit) in units.iter().enumerate() {
        let header = usize::from(index > 0);
        starts.push(next);
        next += header + unit.text.lines().count();
    }
    let start_of = |file: &str| {
        units
            .iter()
            .position(|unit| unit.file == file)
            .map_or(0, |index| starts[index])
    };
    let mut lines: Vec<String> = Vec::with_capacity(next);
    for unit in units {
        if let Some((includer, line)) = &unit.included_by {
            lines.push(format!("// {} (included by {includer} line {line})", unit.file));
        }
        let mut includes = unit.includes.iter().peekable();
        for (index, line) in unit.text.lines().enumerate() {
            match includes.next_if(|include| include.line == index + 1) {
                Some(include) => lines.push(format!(
                    "// {}: included at line {}",
                    include.path,
                    start_of(&include.path)
                )),
                None => lines.push(line.to_string()),
            }
        }
    }
    let mut text = lines.join("\n");
    text.push('\n');
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Error;
    use std::collections::BTreeMap;

    /// [`resolve`] over the files of `set`, the shader being `set[0]`.
    fn resolve_in(set: &[(&str, &str)]) -> Result<String> {
        let files: BTreeMap<&str, &str> = set.iter().copied().collect();
        let (file, source) = set[0];
        resolve(file, source, "test shaders", &mut |path| {
            Ok(files.get(path).map(|text| text.to_string()))
        })
    }

    #[test]
    fn a_shader_without_includes_is_unchanged() {
        let source = "alias T = f32;\n// #if subgroups\nfn f() {}\n// #else\nfn f() {}\n// #endif\n";
        assert_eq!(resolve_in(&[("a.wgsl", source)]).expect("resolves"), source);
    }

    #[test]
    fn an_include_is_appended_and_the_shader_keeps_its_line_numbers() {
        let shader = "alias T = f32;\nconst WG: u32 = 64u;\n// #include \"lib/sum.wgsl\"\nfn main() {}\n";
        let library = "// Sums.\nfn sum() {}\n";
        let resolved = resolve_in(&[("a.wgsl", shader), ("lib/sum.wgsl", library)]).expect("resolves");
        assert_eq!(
            resolved,
            "alias T = f32;\nconst WG: u32 = 64u;\n// lib/sum.wgsl: included at line 5\nfn main() {}\n\
             // lib/sum.wgsl (included by a.wgsl line 3)\n// Sums.\nfn sum() {}\n"
        );
        assert!(!resolved.contains("// #"), "{resolved}");
    }

    #[test]
    fn nested_includes_resolve_and_a_file_included_twice_comes_once() {
        let shader = "// #include \"lib/b.wgsl\"\n// #include \"lib/c.wgsl\"\nfn main() {}\n";
        let b = "// #include \"lib/c.wgsl\"\nfn b() {}\n";
        let c = "fn c() {}\n";
        let resolved =
            resolve_in(&[("a.wgsl", shader), ("lib/b.wgsl", b), ("lib/c.wgsl", c)]).expect("resolves");
        assert_eq!(resolved.matches("fn c()").count(), 1, "{resolved}");
        let lines: Vec<&str> = resolved.lines().collect();
        assert_eq!(lines[0], "// lib/b.wgsl: included at line 4");
        assert_eq!(lines[1], "// lib/c.wgsl: included at line 7");
        assert_eq!(lines[3], "// lib/b.wgsl (included by a.wgsl line 1)");
        assert_eq!(lines[4], "// lib/c.wgsl: included at line 7");
        assert_eq!(lines[6], "// lib/c.wgsl (included by lib/b.wgsl line 1)");
        assert_eq!(lines[7], "fn c() {}");
        assert_eq!(lines.len(), 8);
    }

    #[test]
    fn a_missing_include_names_the_file_the_includer_and_the_line() {
        let shader = "alias T = f32;\n// #include \"lib/absent.wgsl\"\n";
        let error = resolve_in(&[("conv2d.wgsl", shader)]).expect_err("nothing to include");
        let message = error.to_string();
        for part in ["lib/absent.wgsl", "conv2d.wgsl", "line 2", "test shaders"] {
            assert!(message.contains(part), "{part}: {message}");
        }
        assert!(matches!(
            error,
            Error::Kernel(e) if matches!(&*e, KernelError::IncludeNotFound { include, line: 2, .. } if include == "lib/absent.wgsl")
        ));
    }

    #[test]
    fn a_cycle_is_an_error_naming_its_files() {
        let shader = "// #include \"lib/a.wgsl\"\n";
        let a = "// #include \"lib/b.wgsl\"\n";
        let b = "// #include \"lib/a.wgsl\"\n";
        let error =
            resolve_in(&[("s.wgsl", shader), ("lib/a.wgsl", a), ("lib/b.wgsl", b)]).expect_err("a cycle");
        assert!(
            error
                .to_string()
                .contains("lib/a.wgsl -> lib/b.wgsl -> lib/a.wgsl"),
            "{error}"
        );
        let itself = resolve_in(&[("s.wgsl", "// #include \"s.wgsl\"\n")]).expect_err("a cycle");
        assert!(matches!(
            itself,
            Error::Kernel(e) if matches!(&*e, KernelError::IncludeCycle { cycle, .. } if cycle == &["s.wgsl", "s.wgsl"])
        ));
    }

    #[test]
    fn malformed_includes_and_unknown_directives_are_errors_naming_the_line() {
        for directive in [
            "// #include lib/a.wgsl",
            "// #include \"lib/a.wgsl",
            "// #include \"../a.wgsl\"",
            "// #include \"/etc/a.wgsl\"",
            "// #include \"lib/a.txt\"",
            "// #include \"lib//a.wgsl\"",
            "// #include\"lib/a.wgsl\"",
            "// #inlcude \"lib/a.wgsl\"",
            "// #if f16",
        ] {
            let shader = format!("alias T = f32;\n{directive}\n");
            let error = resolve_in(&[("s.wgsl", &shader), ("lib/a.wgsl", "")]).expect_err(directive);
            assert!(error.to_string().contains("s.wgsl line 2"), "{error}");
            assert!(matches!(
                error,
                Error::Kernel(e) if matches!(&*e, KernelError::MalformedDirective { line: 2, text, .. } if text == directive)
            ));
        }
    }

    #[test]
    fn a_read_error_is_returned_as_it_is() {
        let error = resolve(
            "s.wgsl",
            "// #include \"lib/a.wgsl\"\n",
            "test shaders",
            &mut |_| Err(Error::io("lib/a.wgsl", std::io::Error::other("unreadable"))),
        )
        .expect_err("the read fails");
        assert!(matches!(error, Error::Io { .. }), "{error}");
    }
}

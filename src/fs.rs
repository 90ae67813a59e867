//! Files a user points convbench at: reading configuration, kernel sources, shape lists and
//! records (regular files of bounded size only), and writing outputs, baselines and caches (the
//! up-front check that a path can be written, and the atomic write itself).
//!
//! A read of a FIFO blocks until something writes to it, and a device may never end: a kernel
//! `source` naming a FIFO would hang every command that reads the configuration. So a file is
//! read only when it is a regular file (a symbolic link to one is fine) no larger than a limit.
//!
//! An atomic write renames a temporary file over the path, and a rename replaces whatever is
//! there: a device node (`--out /dev/null` as root would turn `/dev/null` into a JSON file), a
//! symbolic link, a FIFO. So both the check and the write accept only a regular file or a path
//! that does not exist yet, and refuse everything else with an input error that says what the
//! path is and what to pass instead ([`FileError`]).

use crate::{Error, ErrorKind, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// An error of a file or folder convbench reads or writes: what is at the path, or what is
/// wrong with it, and what to pass instead.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// Nothing is at a path to read: a typo, not a broken machine.
    #[error(
        "cannot read {}: {}; check the path",
        path.display(),
        if *dangling_link { "it is a symbolic link to nothing" } else { "there is no such file" }
    )]
    NotFound {
        /// The path.
        path: PathBuf,
        /// Whether a symbolic link is there, pointing at nothing.
        dangling_link: bool,
    },
    /// Something other than a regular file is at a path to read.
    #[error("cannot read {}: it is {kind}, not a regular file; name a regular file", path.display())]
    NotAFile {
        /// The path.
        path: PathBuf,
        /// What is there.
        kind: FileKind,
    },
    /// A file to read is larger than convbench reads from such a file.
    #[error(
        "cannot read {}: it is {bytes} bytes, more than the {max_bytes} convbench reads from such \
         a file; check that it is the right file",
        path.display()
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size, in bytes (one past the limit when it grew while it was read).
        bytes: u64,
        /// The limit, in bytes.
        max_bytes: u64,
    },
    /// A text file to read is not UTF-8.
    #[error("cannot read {}: it is not UTF-8 text ({source}); name a text file", path.display())]
    NotUtf8 {
        /// The file.
        path: PathBuf,
        /// Where the bytes stop being UTF-8.
        #[source]
        source: std::string::FromUtf8Error,
    },
    /// Another process held a file's lock for all of [`LOCK_WAIT`].
    #[error(
        "{} has been locked by another convbench writing {what} for {waited_s} seconds; wait for \
         it to finish, or stop it, and try again",
        path.display()
    )]
    Locked {
        /// The lock file.
        path: PathBuf,
        /// What the lock guards, e.g. `baselines`.
        what: &'static str,
        /// How long convbench waited, in seconds.
        waited_s: u64,
    },
    /// A path to write names no file (`..`, `/`, a path ending in `/`).
    #[error("cannot write {}: it names a folder, not a file; name a file inside it instead", path.display())]
    NamesAFolder {
        /// The path.
        path: PathBuf,
    },
    /// A path to write whose file name is longer than file systems accept.
    #[error(
        "cannot write {}: its file name is {bytes} bytes long and file systems accept at most \
         {MAX_FILE_NAME_BYTES}; choose a shorter name",
        path.display()
    )]
    NameTooLong {
        /// The path.
        path: PathBuf,
        /// The file name's length, in bytes.
        bytes: usize,
    },
    /// The folder of a path to write does not exist, or is not a folder.
    #[error(
        "cannot write {}: {} {}",
        path.display(),
        folder.display(),
        if *exists {
            "is not a folder; choose another path"
        } else {
            "does not exist; create the folder or choose another path"
        }
    )]
    NoFolder {
        /// The path.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
        /// Whether something (not a folder) is at the folder's path.
        exists: bool,
    },
    /// No file can be created in the folder of a path to write (read-only, not permitted).
    #[error(
        "cannot write {}: cannot create a file in {} ({source}); choose another path",
        path.display(),
        folder.display()
    )]
    FolderNotWritable {
        /// The path.
        path: PathBuf,
        /// Its folder.
        folder: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A folder is at a path to write.
    #[error("cannot write {}: it is a folder; name a file inside it instead", path.display())]
    IsAFolder {
        /// The path.
        path: PathBuf,
    },
    /// A symbolic link is at a path to write: writing would replace the link, not its target.
    #[error(
        "cannot write {}: it is a symbolic link to {}, and writing would replace the link; pass \
         the path it points to, or a new path",
        path.display(),
        target.as_ref().map_or_else(|| "elsewhere".to_string(), |target| target.display().to_string())
    )]
    IsASymbolicLink {
        /// The path.
        path: PathBuf,
        /// Where the link points, when it can be read.
        target: Option<PathBuf>,
    },
    /// A device, FIFO or socket is at a path to write, which writing would replace.
    #[error(
        "cannot write {}: it is {kind}, not a regular file, and writing would replace it; pass a \
         regular file or a new path",
        path.display()
    )]
    WouldReplace {
        /// The path.
        path: PathBuf,
        /// What is there.
        kind: FileKind,
    },
    /// A path to write is also one of the command's inputs: writing would destroy what it reads.
    #[error(
        "cannot write {}: it is {}one of this command's inputs, which writing would replace; \
         choose another path",
        path.display(),
        if path == input { String::new() } else { format!("the same file as {}, ", input.display()) }
    )]
    OutputIsAnInput {
        /// The path to write.
        path: PathBuf,
        /// The input it is (the same file, under this name).
        input: PathBuf,
    },
    /// Something other than a folder (or a link to one) is at a path to write into.
    #[error("cannot write into {}: it is {kind}, not a folder; name a folder or a new path", path.display())]
    NotAFolder {
        /// The path.
        path: PathBuf,
        /// What is there.
        kind: FileKind,
    },
    /// A symbolic link to nothing is at a path to write into.
    #[error(
        "cannot write into {}: it is a symbolic link to nothing; name a folder or a new path",
        path.display()
    )]
    DanglingFolderLink {
        /// The path.
        path: PathBuf,
    },
    /// A folder to create lies under something that is not a folder.
    #[error(
        "cannot create the folder {}: {} is not a folder; choose another path",
        path.display(),
        ancestor.display()
    )]
    AncestorNotAFolder {
        /// The folder to create.
        path: PathBuf,
        /// Its nearest existing ancestor.
        ancestor: PathBuf,
    },
    /// A folder to create lies in a folder where nothing can be created.
    #[error(
        "cannot create the folder {}: cannot create anything in {} ({source}); choose another path",
        path.display(),
        ancestor.display()
    )]
    AncestorNotWritable {
        /// The folder to create.
        path: PathBuf,
        /// Its nearest existing ancestor.
        ancestor: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A folder could not be created.
    #[error("cannot create the folder {} ({source}); choose another path", path.display())]
    CreateFolder {
        /// The folder.
        path: PathBuf,
        /// What the OS said.
        #[source]
        source: std::io::Error,
    },
    /// A cache under `target/convbench/` is not what its name says.
    #[error("{} is not a {cache} ({source}); delete it or run `{rebuild}` again", path.display())]
    CorruptCache {
        /// The cache file.
        path: PathBuf,
        /// What the cache is, e.g. `tune cache`.
        cache: &'static str,
        /// The command that rebuilds it.
        rebuild: &'static str,
        /// What the JSON parser said.
        #[source]
        source: serde_json::Error,
    },
    /// A cache of a format this build does not read.
    #[error(
        "{} has {cache} format {found}, this build reads {expected}; run `{rebuild}` again to \
         rebuild it",
        path.display()
    )]
    CacheVersion {
        /// The cache file.
        path: PathBuf,
        /// What the cache is.
        cache: &'static str,
        /// The file's `format_version`.
        found: u32,
        /// The version this build reads.
        expected: u32,
        /// The command that rebuilds it.
        rebuild: &'static str,
    },
    /// A cache that parses but holds a value no measurement gives.
    #[error("{} holds {problem}; run `{rebuild}` again", path.display())]
    ImplausibleCache {
        /// The cache file.
        path: PathBuf,
        /// What the cache is, e.g. `calibration`.
        cache: &'static str,
        /// What it holds, e.g. `a peak that is not a positive number`.
        problem: &'static str,
        /// The command that rebuilds it.
        rebuild: &'static str,
    },
    /// A cache's value could not be turned into JSON.
    #[error("cannot serialise the {cache}: {source}")]
    SerialiseCache {
        /// What the cache is.
        cache: &'static str,
        /// What serde said.
        #[source]
        source: serde_json::Error,
    },
}

impl FileError {
    /// The exit-code category: a lock another convbench holds is the environment; the rest is
    /// a path or a file the user handed over.
    pub fn kind(&self) -> ErrorKind {
        match self {
            FileError::Locked { .. } => ErrorKind::Environment,
            _ => ErrorKind::InvalidInput,
        }
    }
}

/// What is at a path, for errors that say why it cannot be read or written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A folder.
    Folder,
    /// A character device, e.g. `/dev/null`.
    CharacterDevice,
    /// A block device.
    BlockDevice,
    /// A named pipe.
    Fifo,
    /// A Unix socket.
    Socket,
    /// Anything else the platform has.
    Special,
}

impl FileKind {
    /// What `file_type` is (a symbolic link itself is [`FileKind::Special`]: callers say more).
    fn of(file_type: &std::fs::FileType) -> Self {
        if file_type.is_file() {
            return FileKind::File;
        }
        if file_type.is_dir() {
            return FileKind::Folder;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if file_type.is_char_device() {
                return FileKind::CharacterDevice;
            }
            if file_type.is_block_device() {
                return FileKind::BlockDevice;
            }
            if file_type.is_fifo() {
                return FileKind::Fifo;
            }
            if file_type.is_socket() {
                return FileKind::Socket;
            }
        }
        FileKind::Special
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::File => "a file",
            FileKind::Folder => "a folder",
            FileKind::CharacterDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Fifo => "a named pipe (FIFO)",
            FileKind::Socket => "a socket",
            FileKind::Special => "a special file",
        })
    }
}

/// The longest file name (one path component) the usual file systems accept, in bytes:
/// `NAME_MAX` on Linux (ext4, xfs, btrfs, tmpfs) and macOS (APFS).
pub const MAX_FILE_NAME_BYTES: usize = 255;

/// Bytes of the target's name kept in a temporary file's name, so that the temporary name
/// (`.NAME.PID.N.tmp`) stays within [`MAX_FILE_NAME_BYTES`] whenever the target's name does.
const TEMP_NAME_PREFIX_BYTES: usize = 200;

/// The most bytes convbench reads from a text file a user names: the configuration, a kernel
/// source, a shape list (16 MiB; such files are kilobytes).
pub const MAX_TEXT_FILE_BYTES: u64 = 16 << 20;

/// The most bytes of a WGSL kernel of your own (256 KiB; convbench's largest shader is 21 KB):
/// naga's validation grows faster than linearly with a module's functions, so a source of
/// megabytes would stall every command that loads the workspace's kernels for minutes rather
/// than fail (233 KB of one-line functions loads in 4 s: debug build, `cargo convbench list`).
pub const MAX_KERNEL_SOURCE_BYTES: u64 = 256 << 10;

/// The most bytes convbench reads from a record or baseline file (4 GiB; a baseline with the
/// raw samples of a large sweep is a few hundred megabytes).
pub const MAX_RECORD_FILE_BYTES: u64 = 4 << 30;

/// Reads the text file at `path`, refusing anything but a regular file (or a link to one) and a
/// file larger than `max_bytes` with an input error that says what the path is; so is a path
/// that leads to nothing. A file that cannot be opened or read is an I/O error. The type and
/// size are checked before the file is opened: opening a FIFO for reading blocks.
pub fn read_text(path: &Path, max_bytes: u64) -> Result<String> {
    use std::io::Read;
    let metadata = std::fs::metadata(path).map_err(|source| match source.kind() {
        // The user named a path that leads nowhere: a typo, not a broken machine.
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => FileError::NotFound {
            path: path.to_path_buf(),
            dangling_link: std::fs::symlink_metadata(path).is_ok(),
        }
        .into(),
        _ => Error::io(path, source),
    })?;
    let file_type = metadata.file_type();
    if !file_type.is_file() {
        return Err(FileError::NotAFile {
            path: path.to_path_buf(),
            kind: FileKind::of(&file_type),
        }
        .into());
    }
    let too_large = |bytes: u64| -> Error {
        FileError::TooLarge {
            path: path.to_path_buf(),
            bytes,
            max_bytes,
        }
        .into()
    };
    if metadata.len() > max_bytes {
        return Err(too_large(metadata.len()));
    }
    let file = std::fs::File::open(path).map_err(|source| Error::io(path, source))?;
    let mut bytes = Vec::new();
    // At most one byte past the limit: a file that grew since it was measured is caught too.
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| Error::io(path, source))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large(bytes.len() as u64));
    }
    String::from_utf8(bytes).map_err(|source| {
        FileError::NotUtf8 {
            path: path.to_path_buf(),
            source,
        }
        .into()
    })
}

/// How long [`lock`] waits for another holder before it gives up.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(600);

/// How long [`lock`] waits before it tells the notice set by [`on_lock_wait`].
pub const LOCK_NOTICE_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

static LOCK_WAIT_NOTICE: std::sync::OnceLock<fn(&Path, &'static str)> = std::sync::OnceLock::new();

/// Sets what [`lock`] calls, once per lock and with the lock file and what it guards, when it
/// has waited [`LOCK_NOTICE_AFTER`] for another holder: the binary prints a line on stderr, so
/// that a command blocked behind another convbench (a blessing, a tune) says why it waits
/// rather than hanging silently for up to [`LOCK_WAIT`]. The library prints nothing itself;
/// the first notice set for the process stays.
pub fn on_lock_wait(notice: fn(&Path, &'static str)) {
    let _ = LOCK_WAIT_NOTICE.set(notice);
}

/// An exclusive advisory lock on a file, released when dropped, and by the operating system
/// when the process ends however it ends (so a killed convbench never leaves a stale lock).
#[derive(Debug)]
pub struct FileLock {
    _file: std::fs::File,
}

/// Takes the exclusive advisory lock on the file at `path` (created, empty, when missing; its
/// folder must exist), waiting up to [`LOCK_WAIT`] while another process or thread holds it.
/// `what` says what the lock guards, for the error when the wait runs out
/// ([`FileError::Locked`]). Every read-merge-write
/// of a shared file (baselines, the tune cache) runs under such a lock, so that two concurrent
/// writers both keep their changes.
pub fn lock(path: &Path, what: &'static str) -> Result<FileLock> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .map_err(|source| Error::io(path, source))?;
    let started = std::time::Instant::now();
    let mut told = false;
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(FileLock { _file: file }),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() < LOCK_WAIT => {
                if !told && started.elapsed() >= LOCK_NOTICE_AFTER {
                    told = true;
                    if let Some(notice) = LOCK_WAIT_NOTICE.get() {
                        notice(path, what);
                    }
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(FileError::Locked {
                    path: path.to_path_buf(),
                    what,
                    waited_s: LOCK_WAIT.as_secs(),
                }
                .into());
            }
            Err(std::fs::TryLockError::Error(source)) => return Err(Error::io(path, source)),
        }
    }
}

/// Fails unless `path` can be written by [`write_atomically`], without writing it: it names a
/// file (not a folder), its file name is not too long, nothing but a regular file is there, its
/// folder exists and a temporary file can be created in it. Call it before long work whose
/// result goes to `path`, so that a bad path fails in a second rather than after the work.
pub fn check_output_path(path: &Path) -> Result<()> {
    let name = file_name(path)?;
    let dir = parent(path);
    if !dir.is_dir() {
        return Err(FileError::NoFolder {
            path: path.to_path_buf(),
            folder: dir.to_path_buf(),
            exists: dir.exists(),
        }
        .into());
    }
    refuse_unless_regular_file(path)?;
    let (temp_path, file) = create_temp(dir, &name).map_err(|source| FileError::FolderNotWritable {
        path: path.to_path_buf(),
        folder: dir.to_path_buf(),
        source,
    })?;
    drop(file);
    std::fs::remove_file(&temp_path).map_err(|source| Error::io(&temp_path, source))
}

/// Fails when `output` is one of `inputs`: the same path, or another name of the same file (a
/// hard or symbolic link, `./x` for `x`). A missing output is none of them.
pub fn refuse_overwriting_an_input(output: &Path, inputs: &[PathBuf]) -> Result<()> {
    let Ok(written) = std::fs::metadata(output) else {
        return Ok(());
    };
    for input in inputs {
        let Ok(read) = std::fs::metadata(input) else {
            continue;
        };
        if same_file(output, &written, input, &read) {
            return Err(FileError::OutputIsAnInput {
                path: output.to_path_buf(),
                input: input.clone(),
            }
            .into());
        }
    }
    Ok(())
}

/// Whether `a` and `b` are one file: its device and inode on Unix, elsewhere the same
/// canonical path.
fn same_file(a: &Path, a_meta: &std::fs::Metadata, b: &Path, b_meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let _ = (a, b);
        a_meta.dev() == b_meta.dev() && a_meta.ino() == b_meta.ino()
    }
    #[cfg(not(unix))]
    {
        let _ = (a_meta, b_meta);
        std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()
    }
}

/// Fails unless `dir` can become the folder of outputs ([`create_output_folder`]), without
/// creating anything: a folder, or a missing path whose nearest existing ancestor is a folder in
/// which a file can be created. Call it before long work whose results go into `dir`.
pub fn check_output_folder(dir: &Path) -> Result<()> {
    if std::fs::metadata(dir).is_ok_and(|metadata| metadata.is_dir()) {
        return Ok(());
    }
    refuse_unless_folder(dir)?;
    let mut ancestor = parent(dir);
    while std::fs::symlink_metadata(ancestor).is_err() {
        ancestor = parent(ancestor);
    }
    if !ancestor.is_dir() {
        return Err(FileError::AncestorNotAFolder {
            path: dir.to_path_buf(),
            ancestor: ancestor.to_path_buf(),
        }
        .into());
    }
    let (temp_path, file) =
        create_temp(ancestor, "folder-check").map_err(|source| FileError::AncestorNotWritable {
            path: dir.to_path_buf(),
            ancestor: ancestor.to_path_buf(),
            source,
        })?;
    drop(file);
    std::fs::remove_file(&temp_path).map_err(|source| Error::io(&temp_path, source))
}

/// Makes sure `dir` is a folder that outputs can be written into, creating it (and its
/// parents) when missing: something else at the path (a file, a device, a FIFO, a link to
/// nothing) or a folder that cannot be created is an input error naming the path.
pub fn create_output_folder(dir: &Path) -> Result<()> {
    refuse_unless_folder(dir)?;
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|source| {
        FileError::CreateFolder {
            path: dir.to_path_buf(),
            source,
        }
        .into()
    })
}

/// Fails when something other than a folder (or a link to one) is at `dir`.
fn refuse_unless_folder(dir: &Path) -> Result<()> {
    match std::fs::metadata(dir) {
        Ok(metadata) if metadata.is_dir() => Ok(()),
        Ok(metadata) => Err(FileError::NotAFolder {
            path: dir.to_path_buf(),
            kind: FileKind::of(&metadata.file_type()),
        }
        .into()),
        Err(_) if std::fs::symlink_metadata(dir).is_ok() => Err(FileError::DanglingFolderLink {
            path: dir.to_path_buf(),
        }
        .into()),
        Err(_) => Ok(()),
    }
}

/// Writes `contents` to `path` through a temporary file in the same folder and a rename, so a
/// reader (or a crash) never sees half a file; the data is on disk (fsync) before the rename,
/// and a new file gets the usual mode (0666 less the umask), a replaced one keeps its own.
/// Creates missing folders. Refuses a
/// path where something other than a regular file is (see [`check_output_path`]); the
/// temporary file is removed on every error.
pub fn write_atomically(path: &Path, contents: &[u8]) -> Result<()> {
    let name = file_name(path)?;
    // A file being replaced keeps its permissions (a read-only record stays read-only).
    let kept = refuse_unless_regular_file(path)?.map(|metadata| metadata.permissions());
    let dir = parent(path);
    std::fs::create_dir_all(dir).map_err(|source| Error::io(dir, source))?;
    let (temp_path, mut file) =
        create_temp(dir, &name).map_err(|source| Error::io(dir.join(format!(".{name}.tmp")), source))?;
    let filled = file
        .write_all(contents)
        .and_then(|()| kept.map_or(Ok(()), |permissions| file.set_permissions(permissions)))
        .and_then(|()| file.sync_all())
        .map_err(|source| Error::io(&temp_path, source));
    drop(file);
    // Checked again just before the rename: something may have appeared at `path` while the
    // contents were written.
    let written = filled
        .and_then(|()| refuse_unless_regular_file(path).map(drop))
        .and_then(|()| std::fs::rename(&temp_path, path).map_err(|source| Error::io(path, source)));
    if written.is_err() {
        // Best effort: the error being reported matters more than a stray temporary file.
        let _ = std::fs::remove_file(&temp_path);
    }
    written
}

/// The file name of `path`, checked: present (not `..`, `/` or a path ending in `/`) and at
/// most [`MAX_FILE_NAME_BYTES`] long.
fn file_name(path: &Path) -> Result<String> {
    let ends_with_separator = path
        .as_os_str()
        .to_string_lossy()
        .ends_with(std::path::is_separator);
    let Some(name) = path.file_name().filter(|_| !ends_with_separator) else {
        return Err(FileError::NamesAFolder {
            path: path.to_path_buf(),
        }
        .into());
    };
    let bytes = name.as_encoded_bytes().len();
    if bytes > MAX_FILE_NAME_BYTES {
        return Err(FileError::NameTooLong {
            path: path.to_path_buf(),
            bytes,
        }
        .into());
    }
    Ok(name.to_string_lossy().into_owned())
}

/// The folder `path` is in (`.` for a bare file name).
fn parent(path: &Path) -> &Path {
    match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    }
}

/// Fails when something other than a regular file is at `path` (a symbolic link is not
/// followed: the rename would replace the link itself, not its target); the file's metadata
/// when one is there.
pub fn refuse_unless_regular_file(path: &Path) -> Result<Option<std::fs::Metadata>> {
    let metadata = match std::fs::symlink_metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(Error::io(path, source)),
    };
    let file_type = metadata.file_type();
    if file_type.is_file() {
        return Ok(Some(metadata));
    }
    let path = path.to_path_buf();
    let error = if file_type.is_dir() {
        FileError::IsAFolder { path }
    } else if file_type.is_symlink() {
        let target = std::fs::read_link(&path).ok();
        FileError::IsASymbolicLink { path, target }
    } else {
        FileError::WouldReplace {
            path,
            kind: FileKind::of(&file_type),
        }
    };
    Err(error.into())
}

/// The part of a file name its temporary files' names start with (`.STEM.PID.N.tmp`).
fn temp_stem(name: &str) -> &str {
    let mut cut = name.len().min(TEMP_NAME_PREFIX_BYTES);
    while !name.is_char_boundary(cut) {
        cut -= 1;
    }
    &name[..cut]
}

/// Removes the temporary files that writes of `path` left beside it when they were killed
/// (`.NAME.PID.N.tmp`; a SIGKILL gives no chance to clean up), so that `git add` never picks
/// one up. Call it only under a lock that every writer of `path` holds: a live writer's
/// temporary file would go too. Best effort: a file that cannot be removed stays.
pub fn remove_stale_temporaries(path: &Path) {
    let Ok(name) = file_name(path) else { return };
    let prefix = format!(".{}.", temp_stem(&name));
    let Ok(entries) = std::fs::read_dir(parent(path)) else {
        return;
    };
    for entry in entries.flatten() {
        let entry_name = entry.file_name();
        let entry_name = entry_name.to_string_lossy();
        let Some(middle) = entry_name
            .strip_prefix(&prefix)
            .and_then(|rest| rest.strip_suffix(".tmp"))
        else {
            continue;
        };
        let ours = middle
            .split_once('.')
            .is_some_and(|(pid, n)| pid.parse::<u32>().is_ok() && n.parse::<u64>().is_ok());
        if ours && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Creates a new temporary file `.NAME.PID.N.tmp` in `dir`, the name cut to keep it short.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);

    let stem = temp_stem(name);
    loop {
        let unique = COUNTER.fetch_add(1, Ordering::Relaxed);
        let candidate = dir.join(format!(".{stem}.{}.{unique}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&candidate)
        {
            Ok(file) => return Ok((candidate, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(path: &Path) -> String {
        let error = check_output_path(path).expect_err("the check must refuse this path");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput, "{error}");
        error.to_string()
    }

    /// The file error `error` is; a test fails on any other.
    fn file_error(error: Error) -> FileError {
        match error {
            Error::File(error) => *error,
            other => panic!("not a file error: {other:?}"),
        }
    }

    /// Nothing but the named files may be left in `dir`: no probe or temporary file.
    fn assert_only(dir: &Path, names: &[&str]) {
        let mut found: Vec<String> = std::fs::read_dir(dir)
            .expect("read dir")
            .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        found.sort();
        let mut expected: Vec<String> = names.iter().map(|name| name.to_string()).collect();
        expected.sort();
        assert_eq!(found, expected);
    }

    #[test]
    fn a_new_path_and_a_regular_file_pass_the_check_and_leave_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        check_output_path(&dir.path().join("new.json")).expect("a new path");
        std::fs::write(dir.path().join("old.json"), "{}").expect("write");
        check_output_path(&dir.path().join("old.json")).expect("a regular file");
        assert_only(dir.path(), &["old.json"]);
    }

    #[test]
    fn a_directory_is_refused_by_the_check() {
        let dir = tempfile::tempdir().expect("tempdir");
        let message = refused(dir.path());
        assert!(
            message.contains("it is a folder; name a file inside it"),
            "{message}"
        );
        let trailing = format!("{}/missing/", dir.path().display());
        let message = refused(Path::new(&trailing));
        assert!(message.contains("names a folder, not a file"), "{message}");
        assert_only(dir.path(), &[]);
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_is_refused_by_the_check() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("pipe");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("run mkfifo");
        assert!(status.success());
        let message = refused(&fifo);
        assert!(
            message.contains("a named pipe (FIFO), not a regular file"),
            "{message}"
        );
        let error = file_error(check_output_path(&fifo).expect_err("a FIFO"));
        assert!(
            matches!(&error, FileError::WouldReplace { path, kind: FileKind::Fifo } if *path == fifo),
            "{error:?}"
        );
        assert_only(dir.path(), &["pipe"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_refused_by_the_check_even_to_a_regular_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target.json");
        std::fs::write(&target, "{}").expect("write");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let message = refused(&link);
        assert!(message.contains("is a symbolic link to"), "{message}");
        assert!(message.contains("target.json"), "{message}");
        let dangling = dir.path().join("dangling.json");
        std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).expect("symlink");
        refused(&dangling);
        assert_only(dir.path(), &["target.json", "link.json", "dangling.json"]);
    }

    #[cfg(unix)]
    #[test]
    fn a_replaced_file_keeps_its_permissions_and_a_new_one_gets_the_usual() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let record = dir.path().join("record.json");
        std::fs::write(&record, "old").expect("write");
        std::fs::set_permissions(&record, std::fs::Permissions::from_mode(0o444)).expect("chmod");
        write_atomically(&record, b"new").expect("replace");
        let mode = std::fs::metadata(&record).expect("metadata").permissions().mode();
        assert_eq!(mode & 0o777, 0o444);
        assert_eq!(std::fs::read_to_string(&record).expect("read"), "new");
        let fresh = dir.path().join("fresh.json");
        write_atomically(&fresh, b"x").expect("new file");
        let mode = std::fs::metadata(&fresh).expect("metadata").permissions().mode();
        assert_ne!(mode & 0o200, 0, "a new file is writable by its owner");
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_under_any_of_its_names() {
        let dir = tempfile::tempdir().expect("tempdir");
        let record = dir.path().join("record.json");
        std::fs::write(&record, "{}").expect("write");
        let other = dir.path().join("other.json");
        std::fs::write(&other, "{}").expect("write");
        let inputs = [other.clone(), record.clone()];
        let same = refuse_overwriting_an_input(&record, &inputs).expect_err("the same path");
        assert!(
            same.to_string().contains("one of this command's inputs"),
            "{same}"
        );
        assert_eq!(same.kind(), ErrorKind::InvalidInput);
        let dotted = dir.path().join(".").join("record.json");
        assert!(refuse_overwriting_an_input(&dotted, &inputs).is_err());
        #[cfg(unix)]
        {
            let hard = dir.path().join("hard.json");
            std::fs::hard_link(&record, &hard).expect("hard link");
            let message = refuse_overwriting_an_input(&hard, &inputs)
                .expect_err("a hard link")
                .to_string();
            assert!(message.contains("the same file as"), "{message}");
        }
        let fresh = dir.path().join("chart.svg");
        assert!(refuse_overwriting_an_input(&fresh, &inputs).is_ok());
        assert!(refuse_overwriting_an_input(&other, &[record]).is_ok());
        assert_eq!(std::fs::read_to_string(&other).expect("read"), "{}");
    }

    /// Only the read-only check meets a real device node: a write test that failed would
    /// replace it.
    #[cfg(unix)]
    #[test]
    fn a_character_device_is_refused_by_the_check() {
        let message = refused(Path::new("/dev/null"));
        assert!(
            message.contains("a character device, not a regular file"),
            "{message}"
        );
        assert!(message.contains("pass a regular file or a new path"), "{message}");
    }

    #[cfg(unix)]
    #[test]
    fn reading_refuses_a_fifo_a_device_and_a_folder_without_blocking() {
        let dir = tempfile::tempdir().expect("tempdir");
        let fifo = dir.path().join("kernel.wgsl");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .expect("run mkfifo");
        assert!(status.success());
        for (path, kind, shown) in [
            (fifo.as_path(), FileKind::Fifo, "a named pipe (FIFO)"),
            (
                Path::new("/dev/zero"),
                FileKind::CharacterDevice,
                "a character device",
            ),
            (dir.path(), FileKind::Folder, "a folder"),
        ] {
            let error = read_text(path, MAX_TEXT_FILE_BYTES).expect_err("not a regular file");
            assert_eq!(error.kind(), crate::ErrorKind::InvalidInput, "{error}");
            assert!(error.to_string().contains(shown), "{error}");
            let error = file_error(error);
            assert!(
                matches!(&error, FileError::NotAFile { kind: found, .. } if *found == kind),
                "{error:?}"
            );
        }
    }

    #[test]
    fn reading_refuses_a_file_over_the_limit_and_reads_one_at_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("shapes.csv");
        std::fs::write(&path, "12345").expect("write");
        let error = read_text(&path, 4).expect_err("5 bytes");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(error.to_string().contains("5 bytes, more than the 4"), "{error}");
        assert_eq!(read_text(&path, 5).expect("5 bytes"), "12345");
        std::fs::write(&path, [0xff, 0xfe]).expect("write");
        assert!(
            read_text(&path, 5)
                .expect_err("not UTF-8")
                .to_string()
                .contains("not UTF-8")
        );
        let missing = read_text(&dir.path().join("missing"), 5).expect_err("missing");
        assert_eq!(missing.kind(), crate::ErrorKind::InvalidInput);
        assert!(missing.to_string().contains("no such file"), "{missing}");
        assert!(matches!(
            file_error(missing),
            FileError::NotFound {
                dangling_link: false,
                ..
            }
        ));
    }

    #[test]
    fn a_lock_excludes_another_holder_until_it_is_dropped() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("guarded.lock");
        let first = lock(&path, "a test").expect("the first lock");
        let (sender, receiver) = std::sync::mpsc::channel();
        let waiter = {
            let path = path.clone();
            std::thread::spawn(move || {
                let second = lock(&path, "a test").expect("the second lock, after the first");
                sender.send(()).expect("send");
                drop(second);
            })
        };
        assert!(
            receiver
                .recv_timeout(std::time::Duration::from_millis(300))
                .is_err(),
            "the second lock was taken while the first was held"
        );
        drop(first);
        receiver
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("the second lock once the first is dropped");
        waiter.join().expect("join");
    }

    #[test]
    fn stale_temporaries_of_a_path_are_removed_and_nothing_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("default.json");
        for name in [
            ".default.json.4242.0.tmp",
            ".default.json.17.3.tmp",
            ".default.json.notes.tmp",
            ".other.json.4242.0.tmp",
            "default.json",
        ] {
            std::fs::write(dir.path().join(name), "x").expect("write");
        }
        remove_stale_temporaries(&path);
        assert_only(
            dir.path(),
            &[
                ".default.json.notes.tmp",
                ".other.json.4242.0.tmp",
                "default.json",
            ],
        );
    }

    #[test]
    fn a_file_name_too_long_is_refused_by_the_check_and_a_long_valid_one_is_written() {
        let dir = tempfile::tempdir().expect("tempdir");
        let too_long = dir.path().join("x".repeat(MAX_FILE_NAME_BYTES + 1));
        let message = refused(&too_long);
        assert!(message.contains("256 bytes long"), "{message}");
        let error = file_error(check_output_path(&too_long).expect_err("too long"));
        assert!(
            matches!(error, FileError::NameTooLong { bytes: 256, .. }),
            "{error:?}"
        );
        // The longest valid name: its temporary file's name must not be too long either.
        let longest = dir.path().join("é".repeat(MAX_FILE_NAME_BYTES / 2));
        check_output_path(&longest).expect("the longest name");
        write_atomically(&longest, b"{}").expect("write the longest name");
        assert_eq!(std::fs::read(&longest).expect("read"), b"{}");
    }

    #[test]
    fn a_missing_folder_or_one_that_is_a_file_is_refused_by_the_check() {
        let dir = tempfile::tempdir().expect("tempdir");
        let message = refused(&dir.path().join("missing/out.json"));
        assert!(
            message.contains("missing does not exist; create the folder"),
            "{message}"
        );
        std::fs::write(dir.path().join("file"), "").expect("write");
        let message = refused(&dir.path().join("file/out.json"));
        assert!(
            message.contains("file is not a folder; choose another path"),
            "{message}"
        );
        // Nothing to create: a file is in the way.
        assert!(!message.contains("create the folder"), "{message}");
        let error = file_error(check_output_path(&dir.path().join("file/out.json")).expect_err("a file"));
        assert!(
            matches!(&error, FileError::NoFolder { folder, exists: true, .. } if *folder == dir.path().join("file")),
            "{error:?}"
        );
        assert_only(dir.path(), &["file"]);
    }

    #[test]
    fn writing_replaces_a_regular_file_and_refuses_a_folder_leaving_no_temporary_file() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("sub/out.json");
        write_atomically(&path, b"first").expect("write");
        write_atomically(&path, b"second").expect("write over");
        assert_eq!(std::fs::read(&path).expect("read"), b"second");
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).expect("mkdir");
        let error = write_atomically(&folder, b"x").expect_err("a folder");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert_only(dir.path(), &["sub", "folder"]);
        assert_only(&dir.path().join("sub"), &["out.json"]);
        assert_only(&folder, &[]);
    }

    /// A write to a symbolic link leaves the link and its target as they were (a temporary
    /// folder holds both, so a wrong fix harms nothing else).
    #[cfg(unix)]
    #[test]
    fn writing_refuses_a_symlink_and_leaves_it_and_its_target() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("target.json");
        std::fs::write(&target, "old").expect("write");
        let link = dir.path().join("link.json");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        let error = write_atomically(&link, b"new").expect_err("a symlink");
        assert_eq!(error.kind(), crate::ErrorKind::InvalidInput);
        assert!(
            std::fs::symlink_metadata(&link)
                .expect("lstat")
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read(&target).expect("read"), b"old");
        assert_only(dir.path(), &["target.json", "link.json"]);
    }
}

//! Safe output: write to a temporary file beside DST, rename over DST only on success.
//!
//! IMPLEMENTATION NOTE: a SIGINT/SIGTERM/SIGHUP would kill the process without running
//! destructors, leaving the temporary file behind. A signal thread (signal-hook) removes the
//! registered temporary file and exits with 128 + signal. The registry mutex is held across
//! the final rename, so the signal thread either sees the temporary path (and removes it; DST
//! untouched) or sees nothing (the rename is done and DST is complete).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once};

use anyhow::{Result, anyhow};
use tempfile::NamedTempFile;

/// The temporary file to remove if a signal arrives.
static PENDING: Mutex<Option<PathBuf>> = Mutex::new(None);
static HANDLER: Once = Once::new();

fn lock_pending() -> std::sync::MutexGuard<'static, Option<PathBuf>> {
    PENDING.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the signal thread once. Failure to install is not fatal (we still clean up on
/// every error that reaches us), so it is ignored.
fn install_handler() {
    HANDLER.call_once(|| {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGXFSZ};
        // Past a file-size limit (ulimit -f) the kernel would kill us with SIGXFSZ, leaving
        // the temporary file; with a handler installed the write fails with EFBIG instead and
        // the normal error path cleans up.
        let _ = signal_hook::flag::register(
            SIGXFSZ,
            std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        );
        if let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            std::thread::spawn(move || {
                if let Some(sig) = signals.forever().next() {
                    let pending = lock_pending();
                    if let Some(p) = pending.as_ref() {
                        let _ = fs::remove_file(p);
                    }
                    let name = match sig {
                        SIGINT => "SIGINT",
                        SIGTERM => "SIGTERM",
                        _ => "SIGHUP",
                    };
                    eprintln!(
                        "aesx: interrupted by {name}; no output was written (DST untouched); run the command again"
                    );
                    std::process::exit(128 + sig);
                }
            });
        }
    });
}

/// Where the result goes.
pub enum Output {
    /// `-`: streamed; on error the reader sees a partial stream and a non-zero exit status.
    Stdout(io::Stdout),
    /// An existing non-regular file (a device such as /dev/null, a FIFO), with `--force`:
    /// written directly, since it cannot be replaced by a rename.
    Direct { file: File, path: PathBuf },
    /// A regular file: a temporary file beside it, renamed over it on success.
    Temp {
        tmp: NamedTempFile,
        dst: PathBuf,
        force: bool,
        /// Declared after `tmp`, so it runs after the file is removed.
        _guard: PendingGuard,
    },
}

/// What a non-regular, non-directory file is, for messages.
fn kind(m: &fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let t = m.file_type();
    if t.is_char_device() {
        "character device"
    } else if t.is_block_device() {
        "block device"
    } else if t.is_fifo() {
        "FIFO (named pipe)"
    } else if t.is_socket() {
        "socket"
    } else {
        "special file"
    }
}

/// True when both paths name the same file (same device and inode).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

impl Output {
    /// Prepares DST. `src` is `None` for stdin. Refuses DST = SRC, and without `force` an
    /// existing DST (a regular file, a device, a FIFO or a socket) and a symbolic link to a
    /// missing file; refuses a DST whose directory cannot take a temporary file.
    pub fn create(dst: &str, src: Option<&Path>, force: bool) -> Result<Output> {
        if dst == "-" {
            return Ok(Output::Stdout(io::stdout()));
        }
        let path = PathBuf::from(dst);
        // A dangling symbolic link: `metadata` (which follows links) says "not found", but
        // the final no-clobber rename would then fail because the link itself exists.
        if !force
            && let Ok(l) = fs::symlink_metadata(&path)
            && l.file_type().is_symlink()
            && fs::metadata(&path).is_err()
        {
            let target = fs::read_link(&path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            return Err(anyhow!(
                "DST {dst} is a symbolic link to {target}, which does not exist; give the path you mean as DST, or pass --force to replace the link itself with the output"
            ));
        }
        if let Some(s) = src
            && same_file(s, &path)
        {
            return Err(anyhow!(
                "SRC and DST are the same file ({dst}); write to another DST, then rename it"
            ));
        }
        match fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                return Err(anyhow!(
                    "DST {dst} is a directory; give a file name for the output"
                ));
            }
            Ok(m) if !m.is_file() && !force => {
                return Err(anyhow!(
                    "DST {dst} is an existing {}; aesx would write into it directly, with no temporary file and no undo: pass --force to do that (or use - for stdout)",
                    kind(&m)
                ));
            }
            Ok(m) if !m.is_file() => {
                // Devices, FIFOs, sockets, with --force: write straight into them.
                let file = fs::OpenOptions::new()
                    .write(true)
                    .open(&path)
                    .map_err(|e| anyhow!("cannot open DST {dst} for writing: {e}"))?;
                return Ok(Output::Direct { file, path });
            }
            Ok(_) if !force => {
                return Err(anyhow!(
                    "DST {dst} already exists; pass --force to replace it (it is replaced only if the whole run succeeds)"
                ));
            }
            _ => {}
        }
        let dir = match path.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let base = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_string());
        install_handler();
        let mut pending = lock_pending();
        let tmp = tempfile::Builder::new()
            .prefix(&format!(".{base}."))
            .suffix(".aesx-tmp")
            .tempfile_in(&dir)
            .map_err(|e| {
                anyhow!(
                    "cannot create a temporary file in {}: {e}; check that the directory exists and is writable",
                    dir.display()
                )
            })?;
        *pending = Some(tmp.path().to_path_buf());
        Ok(Output::Temp {
            tmp,
            dst: path,
            force,
            _guard: PendingGuard,
        })
    }

    /// The writer for the result bytes.
    pub fn writer(&mut self) -> &mut (dyn Write + Send) {
        match self {
            Output::Stdout(s) => s,
            Output::Direct { file, .. } => file,
            Output::Temp { tmp, .. } => tmp.as_file_mut(),
        }
    }

    /// What to call the output in messages.
    pub fn describe(&self) -> String {
        match self {
            Output::Stdout(_) => "stdout".to_string(),
            Output::Direct { path, .. } => path.display().to_string(),
            Output::Temp { dst, .. } => format!("the temporary file beside {}", dst.display()),
        }
    }

    /// A note for error messages about what happened to DST.
    pub fn untouched_note(&self) -> &'static str {
        match self {
            Output::Temp { .. } => " (DST untouched)",
            _ => "",
        }
    }

    /// Flushes, syncs and moves the result into place.
    pub fn commit(self) -> Result<()> {
        match self {
            Output::Stdout(mut s) => s
                .flush()
                .map_err(|e| anyhow!("cannot write to stdout: {e}")),
            Output::Direct { mut file, path } => file
                .flush()
                .map_err(|e| anyhow!("cannot write to {}: {e}", path.display())),
            Output::Temp {
                tmp, dst, force, ..
            } => {
                let shown = dst.display().to_string();
                tmp.as_file().sync_all().map_err(|e| {
                    anyhow!("cannot write output for {shown}: {e}; free space or fix the disk and retry (DST untouched)")
                })?;
                if force {
                    // Keep the permissions of the file we replace.
                    if let Ok(m) = fs::metadata(&dst) {
                        let _ = fs::set_permissions(tmp.path(), m.permissions());
                    }
                }
                let mut pending = lock_pending();
                let res = if force {
                    tmp.persist(&dst)
                } else {
                    tmp.persist_noclobber(&dst)
                };
                *pending = None;
                drop(pending);
                match res {
                    Ok(_) => Ok(()),
                    Err(e) => {
                        let why = e.error;
                        // Dropping e.file removes the temporary file.
                        drop(e.file);
                        if why.kind() == io::ErrorKind::AlreadyExists {
                            // Say what is there now: a file, or a (possibly dangling) link.
                            let what = match fs::read_link(&dst) {
                                Ok(t) => {
                                    format!("a symbolic link to {} was created there", t.display())
                                }
                                Err(_) => "a file was created there".to_string(),
                            };
                            Err(anyhow!(
                                "DST {shown} did not exist when aesx started, but {what} while it ran; pass --force to replace it (nothing written)"
                            ))
                        } else {
                            Err(anyhow!("cannot move the result to {shown}: {why}"))
                        }
                    }
                }
            }
        }
    }
}

/// Clears the signal thread's registration when the temporary file goes away.
pub struct PendingGuard;

impl Drop for PendingGuard {
    fn drop(&mut self) {
        *lock_pending() = None;
    }
}

//! Whole-stream encryption and decryption with reading, sealing/opening and writing
//! overlapped: what `aesx encrypt` / `aesx decrypt` run.
//!
//! Three stages joined by bounded channels, like `std::io::copy` through the adapters but
//! overlapped:
//! - a reader thread fills batch buffers (4 MiB of plaintext, or 4 MiB + 1 KiB of records,
//!   plus one look-ahead byte) from the input;
//! - the calling thread seals or opens each batch's chunks on [`Options::threads`] threads;
//! - a writer thread writes the chunks, in order, with one vectored write per batch.
//!
//! At most [`BUFFERS`] batch buffers exist (recycled from the writer to the reader, wiped when
//! dropped), so memory stays near `BUFFERS * 4 MiB` = 16 MiB whatever the input size. The
//! bytes written are the same as through [`crate::Encryptor`] / [`crate::Decryptor`], for
//! every thread count.

use std::io::{self, Read, Write};
use std::ops::Range;
use std::sync::mpsc;

use zeroize::Zeroizing;

use crate::Options;
use crate::batch::{open_records, read_batch, write_ranges, write_sealed};
use crate::chunk::ChunkCipher;
use crate::error::Error;
use crate::header::{Header, Secret, TAG_LEN};
use crate::read::read_header;

/// Batch buffers in flight: one being read, one being sealed or opened, one being written,
/// one spare.
pub const BUFFERS: usize = 4;

/// Why a stream stopped.
#[derive(Debug)]
pub enum StreamError {
    /// Reading the input failed.
    Read(io::Error),
    /// Writing the output failed.
    Write(io::Error),
    /// The input is not a valid aesx file for this secret (or the options are bad): what and
    /// where.
    Format(Error),
}

impl std::fmt::Display for StreamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StreamError::Read(e) => write!(f, "read failed: {e}"),
            StreamError::Write(e) => write!(f, "write failed: {e}"),
            StreamError::Format(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for StreamError {}

impl From<Error> for StreamError {
    fn from(e: Error) -> StreamError {
        StreamError::Format(e)
    }
}

/// An `io::Error` from reading: a format error inside it (from [`read_header`]) is a
/// format error.
fn read_failure(e: io::Error) -> StreamError {
    match crate::error::format_error(&e) {
        Some(f) => StreamError::Format(f.clone()),
        None => StreamError::Read(e),
    }
}

type Buf = Zeroizing<Vec<u8>>;

/// Buffer length for batches of `unit`-byte pieces (chunks or records): whole units plus the
/// look-ahead byte; fewer units when `size_hint` says the input is small.
fn buffer_len(unit: usize, max_units: usize, size_hint: Option<u64>) -> usize {
    let units = match size_hint {
        Some(s) => ((s / unit as u64) as usize + 1).min(max_units),
        None => max_units,
    };
    units * unit + 1
}

/// Runs the three stages: `work` turns a batch (buffer, length, more follows, index of the
/// batch) into what the writer needs; `write` writes it. `work` returning `Err` stops the
/// stream after the writer has written everything handed to it before (and the `Some` part
/// of the error's output, if any).
fn pipeline<R, W, T>(
    mut reader: R,
    mut writer: W,
    buf_len: usize,
    mut work: impl FnMut(&mut [u8], usize, bool) -> (Option<T>, Result<bool, Error>),
    write: impl Fn(&mut W, &[u8], &T) -> io::Result<()> + Send,
) -> Result<(), StreamError>
where
    R: Read + Send,
    W: Write + Send,
    T: Send,
{
    let (free_tx, free_rx) = mpsc::channel::<Buf>();
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<(Buf, usize, bool)>>(BUFFERS);
    let (done_tx, done_rx) = mpsc::sync_channel::<(Buf, T)>(BUFFERS);
    std::thread::scope(|s| {
        let reader_thread = std::thread::Builder::new()
            .name("aesx-file-read".into())
            .spawn_scoped(s, move || {
                let mut made = 0;
                let mut carry = None;
                loop {
                    let mut buf = if made < BUFFERS {
                        made += 1;
                        Zeroizing::new(vec![0u8; buf_len])
                    } else {
                        match free_rx.recv() {
                            Ok(b) => b,
                            Err(_) => return, // the writer stopped
                        }
                    };
                    match read_batch(&mut reader, &mut buf, &mut carry) {
                        Ok((n, more)) => {
                            if full_tx.send(Ok((buf, n, more))).is_err() || !more {
                                return;
                            }
                        }
                        Err(e) => {
                            let _ = full_tx.send(Err(e));
                            return;
                        }
                    }
                }
            })
            .map_err(StreamError::Read)?;
        let writer_thread = std::thread::Builder::new()
            .name("aesx-file-write".into())
            .spawn_scoped(s, move || -> io::Result<()> {
                for (buf, item) in done_rx {
                    write(&mut writer, &buf, &item)?;
                    // The reader may be done already; then the buffer is simply dropped.
                    let _ = free_tx.send(buf);
                }
                writer.flush()
            })
            .map_err(StreamError::Write)?;

        let mut failure = None;
        while let Ok(item) = full_rx.recv() {
            let (mut buf, n, more) = match item {
                Ok(x) => x,
                Err(e) => {
                    failure = Some(StreamError::Read(e));
                    break;
                }
            };
            let (out, status) = work(&mut buf, n, more);
            if let Some(out) = out
                && done_tx.send((buf, out)).is_err()
            {
                break; // the writer failed: reported below
            }
            match status {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => {
                    failure = Some(StreamError::Format(e));
                    break;
                }
            }
        }
        drop(done_tx);
        drop(full_rx);
        let written = writer_thread
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")));
        let _ = reader_thread.join();
        match (written, failure) {
            (Err(e), _) => Err(StreamError::Write(e)),
            (Ok(()), Some(f)) => Err(f),
            (Ok(()), None) => Ok(()),
        }
    })
}

/// Encrypts everything `reader` yields into an aesx file on `writer`, overlapping reading,
/// sealing (on `opts.threads` threads) and writing. `size_hint` (the input length when
/// known) only sizes the buffers of small inputs. `progress` gets the plaintext byte count
/// of each batch once it is sealed. Returns the plaintext length.
///
/// On failure part of the output may have been written: write to a temporary file and keep
/// it only on success (the `aesx` command does).
pub fn encrypt_stream<R: Read + Send, W: Write + Send>(
    reader: R,
    mut writer: W,
    secret: &Secret,
    opts: &Options,
    size_hint: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, StreamError> {
    encrypt_stream_salted(reader, &mut writer, secret, opts, size_hint, progress, None)
}

pub(crate) fn encrypt_stream_salted<R: Read + Send, W: Write + Send>(
    reader: R,
    mut writer: W,
    secret: &Secret,
    opts: &Options,
    size_hint: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
    salts: Option<([u8; 32], [u8; 16])>,
) -> Result<u64, StreamError> {
    let (header, keys) = Header::create(
        secret,
        opts.aead,
        opts.chunk_log2,
        opts.argon2,
        opts.backend,
        salts,
    )?;
    writer
        .write_all(&header.to_bytes())
        .map_err(StreamError::Write)?;
    let cipher = ChunkCipher::new(keys, header.chunk_size(), opts.threads);
    let chunk = cipher.chunk();
    let buf_len = buffer_len(chunk, cipher.batch_chunks(), size_hint);
    let mut next = 0u64;
    let mut total = 0u64;
    pipeline(
        reader,
        writer,
        buf_len,
        |buf, n, more| match cipher.seal_batch(next, &mut buf[..n], !more) {
            Ok(tags) => {
                next += tags.len() as u64;
                total += n as u64;
                progress(n as u64);
                (Some((n, tags)), Ok(more))
            }
            Err(e) => (None, Err(e)),
        },
        |w, buf, (n, tags)| write_sealed(w, &buf[..*n], chunk, tags),
    )?;
    Ok(total)
}

/// Decrypts the aesx file `reader` yields into `writer`: reads the header, derives the keys
/// from `secret`, authenticates the header, then opens chunks (on `opts.threads` threads)
/// while reading and writing, overlapped. Only plaintext of chunks whose tag verified is
/// written; on failure the chunks before the bad one have been written, nothing after.
/// Returns the plaintext length.
pub fn decrypt_stream<R: Read + Send, W: Write + Send>(
    mut reader: R,
    writer: W,
    secret: &Secret,
    opts: &Options,
    size_hint: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, StreamError> {
    let header = read_header(&mut reader).map_err(read_failure)?;
    decrypt_stream_with_header(reader, header, writer, secret, opts, size_hint, progress)
}

/// As [`decrypt_stream`], with the header already read by [`crate::read_header`] (so the
/// caller can look at its key source first).
pub fn decrypt_stream_with_header<R: Read + Send, W: Write + Send>(
    reader: R,
    header: Header,
    writer: W,
    secret: &Secret,
    opts: &Options,
    size_hint: Option<u64>,
    progress: &(dyn Fn(u64) + Sync),
) -> Result<u64, StreamError> {
    let keys = header.unlock(secret, opts.backend)?;
    let cipher = ChunkCipher::new(keys, header.chunk_size(), opts.threads);
    let rec = cipher.chunk() + TAG_LEN;
    let buf_len = buffer_len(rec, cipher.batch_chunks(), size_hint);
    let mut next = 0u64;
    let mut total = 0u64;
    pipeline(
        reader,
        writer,
        buf_len,
        |buf, n, more| {
            let (opened, err) = open_records(&cipher, buf, n, more, next);
            next += opened.chunks;
            let bytes: u64 = opened.plain.iter().map(|r| r.len() as u64).sum();
            total += bytes;
            progress(bytes);
            let status = match err {
                Some(e) => Err(e),
                None => Ok(!opened.complete),
            };
            (Some(opened.plain), status)
        },
        |w, buf, plain: &Vec<Range<usize>>| write_ranges(w, buf, plain),
    )?;
    Ok(total)
}

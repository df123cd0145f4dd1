//! Whole-stream encryption and decryption with reading, sealing/opening and writing
//! overlapped: what `aesx encrypt` / `aesx decrypt` run.
//!
//! - a reader thread fills batch buffers (4 MiB of plaintext, or 4 MiB + 1 KiB of records,
//!   plus one look-ahead byte) from the input;
//! - [`Options::threads`] worker threads each seal or open whole batches;
//! - the calling thread writes the batches in order, with one vectored write per batch, and
//!   hands the buffers back to the reader.
//!
//! At most 4 to 8 batch buffers exist ([`BUFFERS`] with one or two threads, one more per
//! thread above two; wiped when dropped), so memory stays at 16 to 32 MiB whatever the input
//! size. A chunk's nonce depends only on its index, so the bytes written are the same as
//! through [`crate::Encryptor`] / [`crate::Decryptor`], for every thread count.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::ops::Range;
use std::sync::{Mutex, mpsc};

use crate::Options;
use crate::batch::{BatchBuf, open_records, write_ranges, write_sealed};
use crate::chunk::ChunkCipher;
use crate::error::Error;
use crate::header::{Header, Secret, TAG_LEN};
use crate::read::read_header;

/// Batch buffers in flight with one or two threads: one being read, one or two being sealed
/// or opened, one being written (more threads get one more each, up to twice this).
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

/// Batch size for batches of `unit`-byte pieces (chunks or records): whole units, fewer
/// when `size_hint` says the input is small.
fn batch_len(unit: usize, max_units: usize, size_hint: Option<u64>) -> usize {
    let units = match size_hint {
        Some(s) => ((s / unit as u64) as usize + 1).min(max_units),
        None => max_units,
    };
    units * unit
}

/// Batch buffers in flight for `threads` workers: one being read, one being written, one
/// per worker, at least 4 and at most 8 (32 MiB).
fn buffers(threads: usize) -> usize {
    (threads + 2).clamp(BUFFERS, 2 * BUFFERS)
}

/// From the reader to the workers: batch `k` (and whether input follows it), or the read
/// error that stopped the input at batch `k`.
enum Job {
    Batch(u64, BatchBuf, bool),
    Failed(u64, io::Error),
}

/// From the workers to the writer, for batch `k`.
enum Done<T> {
    /// Sealed or opened: write `T` from the buffer; `more` = batches follow.
    Batch(u64, BatchBuf, T, bool),
    /// Failed: write the part of `T` that is good (if any), then stop with the error.
    Failed(u64, Option<(BatchBuf, T)>, StreamError),
}

impl<T> Done<T> {
    fn index(&self) -> u64 {
        match self {
            Done::Batch(k, ..) | Done::Failed(k, ..) => *k,
        }
    }
}

/// Runs the three stages. A reader thread fills batch buffers; `threads` worker threads
/// each take a whole batch and run `work` on it (batch index, its bytes, whether input
/// follows), so batches are sealed or opened in parallel with no thread started per batch;
/// the calling thread writes the results in batch order with `write` (a few batches may wait
/// for an earlier one) and hands the buffers back to the reader.
fn pipeline<R, W, T>(
    mut reader: R,
    mut writer: W,
    batch: usize,
    threads: usize,
    work: impl Fn(u64, &mut [u8], bool) -> (T, Result<(), Error>) + Sync,
    mut write: impl FnMut(&mut W, &[u8], &T) -> io::Result<()>,
) -> Result<(), StreamError>
where
    R: Read + Send,
    W: Write,
    T: Send,
{
    let threads = threads.max(1);
    let buffers = buffers(threads);
    let (free_tx, free_rx) = mpsc::channel::<BatchBuf>();
    let (job_tx, job_rx) = mpsc::sync_channel::<Job>(buffers);
    let job_rx = Mutex::new(job_rx);
    let (done_tx, done_rx) = mpsc::channel::<Done<T>>();
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("aesx-file-read".into())
            .spawn_scoped(s, move || {
                let mut carry = None;
                for k in 0u64.. {
                    let mut buf = if k < buffers as u64 {
                        BatchBuf::new(batch)
                    } else {
                        match free_rx.recv() {
                            Ok(b) => b,
                            Err(_) => return, // the writer stopped
                        }
                    };
                    let job = match buf.read(&mut reader, &mut carry) {
                        Ok(more) => Job::Batch(k, buf, more),
                        Err(e) => Job::Failed(k, e),
                    };
                    let last = !matches!(job, Job::Batch(_, _, true));
                    if job_tx.send(job).is_err() || last {
                        return;
                    }
                }
            })
            .map_err(StreamError::Read)?;
        let mut started = 0;
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            let (job_rx, work) = (&job_rx, &work);
            let spawned = std::thread::Builder::new()
                .name("aesx-file-seal".into())
                .spawn_scoped(s, move || {
                    loop {
                        // The lock is held only while waiting for the next job.
                        let job = job_rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                        let done = match job {
                            Ok(Job::Batch(k, mut buf, more)) => {
                                let (out, status) = work(k, buf.data_mut(), more);
                                match status {
                                    Ok(()) => Done::Batch(k, buf, out, more),
                                    Err(e) => {
                                        Done::Failed(k, Some((buf, out)), StreamError::Format(e))
                                    }
                                }
                            }
                            Ok(Job::Failed(k, e)) => Done::Failed(k, None, StreamError::Read(e)),
                            Err(_) => return, // no more input
                        };
                        if done_tx.send(done).is_err() {
                            return; // the writer stopped
                        }
                    }
                });
            if spawned.is_ok() {
                started += 1;
            }
        }
        drop(done_tx);
        if started == 0 {
            return Err(StreamError::Read(io::Error::other(
                "cannot start a worker thread",
            )));
        }

        // The writer: batches in order.
        let mut pending = BTreeMap::new();
        let mut next = 0u64;
        for d in done_rx.iter() {
            pending.insert(d.index(), d);
            while let Some(d) = pending.remove(&next) {
                match d {
                    Done::Batch(_, buf, out, more) => {
                        write(&mut writer, buf.data(), &out).map_err(StreamError::Write)?;
                        if !more {
                            return writer.flush().map_err(StreamError::Write);
                        }
                        // The reader may be done already; then the buffer is simply dropped.
                        let _ = free_tx.send(buf);
                        next += 1;
                    }
                    Done::Failed(_, good, e) => {
                        if let Some((buf, out)) = good {
                            write(&mut writer, buf.data(), &out).map_err(StreamError::Write)?;
                        }
                        writer.flush().map_err(StreamError::Write)?;
                        return Err(e);
                    }
                }
            }
        }
        Err(StreamError::Read(io::Error::other(
            "the input stopped without an end (a worker thread failed)",
        )))
    })
}

/// Encrypts everything `reader` yields into an aesx file on `writer`, overlapping reading,
/// sealing (on `opts.threads` threads) and writing. `size_hint` (the input length when
/// known) only sizes the buffers of small inputs. `progress` gets the plaintext byte count
/// of each batch once it is written. Returns the plaintext length.
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
    // Parallel across batches: each worker seals a whole batch on its own thread.
    let cipher = ChunkCipher::new(keys, header.chunk_size(), 1);
    let chunk = cipher.chunk();
    let batch = batch_len(chunk, cipher.batch_chunks(), size_hint);
    let per_batch = (batch / chunk) as u64;
    let mut total = 0u64;
    pipeline(
        reader,
        writer,
        batch,
        opts.threads,
        |k, data, more| match cipher.seal_batch(k * per_batch, data, !more) {
            Ok(tags) => (tags, Ok(())),
            Err(e) => (Vec::new(), Err(e)),
        },
        |w, data, tags| {
            write_sealed(w, data, chunk, tags)?;
            total += data.len() as u64;
            progress(data.len() as u64);
            Ok(())
        },
    )?;
    Ok(total)
}

/// Decrypts the aesx file `reader` yields into `writer`: reads the header, derives the keys
/// from `secret`, authenticates the header, then opens chunks (on `opts.threads` threads)
/// while reading and writing, overlapped. Only plaintext of chunks whose tag verified is
/// written; on failure the chunks before the bad one have been written, nothing after.
/// `progress` gets the plaintext byte count of each batch once it is written (so their sum
/// is what was released). Returns the plaintext length.
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
    let cipher = ChunkCipher::new(keys, header.chunk_size(), 1);
    let rec = cipher.chunk() + TAG_LEN;
    let batch = batch_len(rec, cipher.batch_chunks(), size_hint);
    let per_batch = (batch / rec) as u64;
    let mut total = 0u64;
    pipeline(
        reader,
        writer,
        batch,
        opts.threads,
        |k, data, more| {
            let (opened, err) = open_records(&cipher, data, more, k * per_batch);
            (opened.plain, err.map_or(Ok(()), Err))
        },
        |w, data, plain: &Vec<Range<usize>>| {
            write_ranges(w, data, plain)?;
            let bytes: u64 = plain.iter().map(|r| r.len() as u64).sum();
            total += bytes;
            progress(bytes);
            Ok(())
        },
    )?;
    Ok(total)
}

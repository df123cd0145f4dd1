//! Multi-threaded CTR for `aesx encrypt/decrypt --threads N`: read, encrypt, write, overlapped.
//!
//! Three stages joined by bounded channels:
//! - a reader thread fills chunks of up to [`CHUNK`] bytes from SRC;
//! - the calling thread applies the keystream to each chunk at its byte offset in the stream,
//!   on N threads ([`aesx::Aes::ctr_xor_at_threads`]);
//! - a writer thread writes the chunks, in order, to the output.
//!
//! Chunks are processed one after another, so order is kept without sequence numbers; the
//! parallelism inside a chunk comes from the library, and the overlap comes from the reader and
//! writer working on the neighbouring chunks. At most [`BUFFERS`] chunk buffers exist (they are
//! recycled from the writer back to the reader and wiped when dropped: they hold plaintext),
//! so memory stays at `BUFFERS * CHUNK` = 16 MiB whatever the file size.
//!
//! CTR is seekable, so the result is byte-identical to the single-threaded path for every N.
//!
//! Dependencies point one way: the command (`crypt`) uses this module; this module knows
//! nothing of the command (its arguments, messages or output handling).

use std::io::{self, Read, Write};
use std::sync::mpsc;

use aesx::Aes;
use zeroize::Zeroizing;

/// Bytes per chunk: large enough that the library splits each chunk across all threads
/// (`aesx::parallel::PAR_THRESHOLD` is 1 MiB) and that one read or write syscall moves a lot.
/// Measured (1 GiB on /dev/shm, 2 vCPUs, best of 8 alternated runs): 1, 2, 4 and 8 MiB chunks
/// all take 0.42-0.48 s, within noise of each other; the run is bound by the kernel writing to
/// tmpfs (dd of 1 GiB from /dev/zero alone: 0.40 s), not by AES.
pub const CHUNK: usize = 4 << 20;
/// Chunk buffers in flight: one being read, one being encrypted, one being written, one spare.
pub const BUFFERS: usize = 4;

/// What went wrong, so the caller can word the message (SRC or the output).
#[derive(Debug)]
pub enum Failure {
    Read(io::Error),
    Write(io::Error),
}

/// Fills `buf` (up to its length) from `r`; returns the bytes read (less only at EOF).
pub fn fill(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

type Buf = Zeroizing<Vec<u8>>;

/// One chunk: the buffer, how many bytes of it are data, and whether it is the last one.
type Chunk = (Buf, usize, bool);

/// Streams `reader` through AES-CTR (counter block `iv`, starting at stream position 0) into
/// `out` on `threads` threads, in chunks of at most `max_chunk` bytes (a multiple of 16;
/// [`CHUNK`] in the CLI). `size`, when known, only sizes the buffers of small inputs.
/// `progress` is called with the byte count of each chunk once it is encrypted.
#[allow(clippy::too_many_arguments)]
pub fn ctr(
    mut reader: Box<dyn Read + Send>,
    out: &mut (dyn Write + Send),
    aes: &Aes,
    iv: &[u8; 16],
    threads: usize,
    size: Option<u64>,
    max_chunk: usize,
    progress: &dyn Fn(u64),
) -> Result<(), Failure> {
    let max_chunk = max_chunk.max(16) / 16 * 16;
    // A small input needs one small buffer: size + 1 so the first read already sees the end.
    let chunk = match size {
        Some(s) if s < max_chunk as u64 => (s as usize + 1).next_multiple_of(16),
        _ => max_chunk,
    };
    // Writer -> reader: emptied buffers for reuse.
    let (free_tx, free_rx) = mpsc::channel::<Buf>();
    // Reader -> encryption, encryption -> writer. Bounded; with the buffer limit below, at
    // most BUFFERS chunks exist in total.
    let (full_tx, full_rx) = mpsc::sync_channel::<io::Result<Chunk>>(BUFFERS);
    let (done_tx, done_rx) = mpsc::sync_channel::<Chunk>(BUFFERS);

    // IMPLEMENTATION NOTE: the reader is a detached thread, not a scoped one, so that a write
    // failure is reported at once even while the reader is blocked on a slow stdin; it stops
    // by itself at its next send (the receiver is gone) and the process exits right after.
    std::thread::Builder::new()
        .name("aesx-read".into())
        .spawn(move || {
            let mut made = 0;
            loop {
                // Buffers are made on demand (a small file needs one), then recycled.
                let mut buf = if made < BUFFERS {
                    made += 1;
                    Zeroizing::new(vec![0u8; chunk])
                } else {
                    match free_rx.recv() {
                        Ok(b) => b,
                        Err(_) => return, // the writer stopped
                    }
                };
                match fill(&mut *reader, &mut buf) {
                    Ok(n) => {
                        let last = n < buf.len();
                        if full_tx.send(Ok((buf, n, last))).is_err() || last {
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
        .map_err(Failure::Read)?;

    std::thread::scope(|s| {
        let writer = std::thread::Builder::new()
            .name("aesx-write".into())
            .spawn_scoped(s, move || -> io::Result<()> {
                for (buf, n, last) in done_rx {
                    out.write_all(&buf[..n])?;
                    if last {
                        break;
                    }
                    // The reader may be done already; then the buffer is simply dropped.
                    let _ = free_tx.send(buf);
                }
                Ok(())
            })
            .map_err(Failure::Write)?;

        let mut pos = 0u64;
        let mut read_failure = None;
        while let Ok(item) = full_rx.recv() {
            match item {
                Ok((mut buf, n, last)) => {
                    aes.ctr_xor_at_threads(iv, pos, &mut buf[..n], threads);
                    pos += n as u64;
                    progress(n as u64);
                    // A send fails only when the writer stopped on an error (reported below).
                    if done_tx.send((buf, n, last)).is_err() || last {
                        break;
                    }
                }
                Err(e) => {
                    read_failure = Some(e);
                    break;
                }
            }
        }
        // Let the writer finish what it has, then see how it ended.
        drop(done_tx);
        drop(full_rx);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the writer thread panicked")));
        match (written, read_failure) {
            (Err(e), _) => Err(Failure::Write(e)),
            (Ok(()), Some(e)) => Err(Failure::Read(e)),
            (Ok(()), None) => Ok(()),
        }
    })
}

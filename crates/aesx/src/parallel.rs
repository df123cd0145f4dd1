//! Multi-threaded CTR: the keystream of a large buffer is generated on every core.
//!
//! CTR blocks are independent, so a buffer is cut at block boundaries into pieces and each
//! piece is processed by the stateless seekable kernel ([`Aes::ctr_xor_at`]) at its own byte
//! offset: the output is identical to the single-threaded path for every thread count and
//! every split.
//!
//! Lessons from HPN-SSH's threaded AES-CTR, and what this module does about them:
//! - *Threads lost across `fork()`* (the child hangs waiting for workers that do not exist
//!   there): the pool remembers the process id that started it; a call from another process
//!   (a forked child) starts a fresh pool and abandons the parent's.
//! - *Start-up cost and surprise threads*: nothing is started at load time; the pool starts on
//!   the first parallel call that is large enough to use it.
//! - *A penalty on one core or for small buffers*: below [`PAR_THRESHOLD`] bytes, or when only
//!   one thread is available or requested, the call is exactly the single-threaded path.
//! - *Deadlocks*: workers only run CTR on disjoint pieces and never wait on each other; the
//!   caller joins them through a rayon scope.
#![forbid(unsafe_code)]

use std::format;
use std::sync::{Arc, Mutex};

use crate::mode::ctr::stream_end;
use crate::{Aes, Ctr, Error};

/// Below this many bytes the parallel calls do the work on the calling thread.
///
/// Measured on the 2-vCPU Zen 4 VM (AES-128, vaes512, one thread vs two, best of 40
/// interleaved trials, scratch harness): 256 KiB 0.87x (waking and joining a worker costs
/// more than it saves), 512 KiB 1.17x, 1 MiB 1.45x, 2 MiB 1.41x, 16 MiB 1.86x. 1 MiB keeps a
/// clear margin on a noisy VM; `aesx bench --ops ctr,ctr-mt` re-measures it (README).
pub const PAR_THRESHOLD: usize = 1024 * 1024;

/// Each piece handed to a worker is at least this long (and a multiple of 16 bytes), so a
/// piece costs far more than the hand-off and work stealing can still balance a noisy VM.
const MIN_PIECE: usize = 64 * 1024;

struct Pool {
    pid: u32,
    threads: usize,
    pool: Arc<rayon_core::ThreadPool>,
}

static POOL: Mutex<Option<Pool>> = Mutex::new(None);

/// The number of threads parallel calls use by default: the cores available to this process,
/// read once (the lookup reads affinity and cgroup files, ~27 us, far too slow per call).
pub fn default_threads() -> usize {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static THREADS: AtomicUsize = AtomicUsize::new(0);
    match THREADS.load(Ordering::Relaxed) {
        0 => {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            THREADS.store(n, Ordering::Relaxed);
            n
        }
        n => n,
    }
}

/// The pool for `threads` workers in this process, started on first use (or again after a
/// fork, or when a different size is asked for).
fn pool(threads: usize) -> Option<Arc<rayon_core::ThreadPool>> {
    let pid = std::process::id();
    let mut guard = POOL.lock().unwrap_or_else(|e| e.into_inner());
    match guard.as_ref() {
        Some(p) if p.pid == pid && p.threads == threads => return Some(p.pool.clone()),
        Some(p) if p.pid != pid => {
            // A forked child: the parent's worker threads do not exist here. Dropping the
            // pool would only signal them; leak it instead of touching its state.
            let stale = guard.take().expect("checked above");
            std::mem::forget(stale);
        }
        _ => {}
    }
    let pool = rayon_core::ThreadPoolBuilder::new()
        .num_threads(threads)
        .thread_name(|i| format!("aesx-ctr-{i}"))
        .build()
        .ok()?;
    let pool = Arc::new(pool);
    *guard = Some(Pool {
        pid,
        threads,
        pool: pool.clone(),
    });
    Some(pool)
}

impl Aes {
    /// [`Aes::ctr_xor_at`] on every available core (see [`Aes::ctr_xor_at_threads`]).
    ///
    /// # Panics
    /// Where [`Aes::ctr_xor_at`] does (`pos + buf.len()` past `u64::MAX`; `buf` untouched).
    pub fn ctr_xor_at_par(&self, iv: &[u8; 16], pos: u64, buf: &mut [u8]) {
        if let Err(e) = self.try_ctr_xor_at_par(iv, pos, buf) {
            panic!("{e}");
        }
    }

    /// [`Aes::ctr_xor_at_par`], returning [`crate::ErrorKind::LengthLimit`] where it panics.
    pub fn try_ctr_xor_at_par(&self, iv: &[u8; 16], pos: u64, buf: &mut [u8]) -> Result<(), Error> {
        let threads = if buf.len() < PAR_THRESHOLD {
            1
        } else {
            default_threads()
        };
        self.try_ctr_xor_at_threads(iv, pos, buf, threads)
    }

    /// [`Aes::ctr_xor_at`] on up to `threads` threads: identical output for any thread count.
    /// Runs on the calling thread alone when `threads <= 1` or `buf` is shorter than
    /// [`PAR_THRESHOLD`]; if a thread pool cannot be started it also falls back to that.
    ///
    /// # Panics
    /// Where [`Aes::ctr_xor_at`] does (`pos + buf.len()` past `u64::MAX`; `buf` untouched).
    pub fn ctr_xor_at_threads(&self, iv: &[u8; 16], pos: u64, buf: &mut [u8], threads: usize) {
        if let Err(e) = self.try_ctr_xor_at_threads(iv, pos, buf, threads) {
            panic!("{e}");
        }
    }

    /// [`Aes::ctr_xor_at_threads`], returning [`crate::ErrorKind::LengthLimit`] (with `buf`
    /// untouched) where it panics.
    pub fn try_ctr_xor_at_threads(
        &self,
        iv: &[u8; 16],
        pos: u64,
        buf: &mut [u8],
        threads: usize,
    ) -> Result<(), Error> {
        // Checked once for the whole buffer, before any piece is touched: every piece offset
        // below is then at most `pos + buf.len()`, which fits.
        stream_end(pos, buf.len())?;
        if threads <= 1 || buf.len() < PAR_THRESHOLD {
            return self.try_ctr_xor_at(iv, pos, buf);
        }
        let Some(pool) = pool(threads) else {
            return self.try_ctr_xor_at(iv, pos, buf);
        };
        // Pieces: several per thread so stealing can even out a preempted vCPU, each a
        // multiple of 16 bytes so every piece but the first starts on a block boundary.
        let pieces = (threads * 4).min(buf.len() / MIN_PIECE).max(threads);
        let piece = buf.len().div_ceil(pieces).next_multiple_of(16);
        pool.scope(|s| {
            let mut at = pos;
            for chunk in buf.chunks_mut(piece) {
                let len = chunk.len();
                s.spawn(move |_| {
                    self.try_ctr_xor_at(iv, at, chunk)
                        .expect("piece lies inside the checked range")
                });
                at += len as u64;
            }
        });
        Ok(())
    }
}

impl Ctr<'_> {
    /// [`Ctr::apply_keystream`] on every available core for buffers of at least
    /// [`PAR_THRESHOLD`] bytes; identical output.
    ///
    /// # Panics
    /// Where [`Ctr::apply_keystream`] does (past the stream's end; `buf` untouched).
    pub fn apply_keystream_par(&mut self, buf: &mut [u8]) {
        if let Err(e) = self.try_apply_keystream_par(buf) {
            panic!("{e}");
        }
    }

    /// [`Ctr::apply_keystream_par`], returning [`crate::ErrorKind::LengthLimit`] where it
    /// panics.
    pub fn try_apply_keystream_par(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        let threads = if buf.len() < PAR_THRESHOLD {
            1
        } else {
            default_threads()
        };
        self.try_apply_keystream_threads(buf, threads)
    }

    /// [`Ctr::apply_keystream`] on up to `threads` threads; identical output.
    ///
    /// # Panics
    /// Where [`Ctr::apply_keystream`] does (past the stream's end; `buf` untouched).
    pub fn apply_keystream_threads(&mut self, buf: &mut [u8], threads: usize) {
        if let Err(e) = self.try_apply_keystream_threads(buf, threads) {
            panic!("{e}");
        }
    }

    /// [`Ctr::apply_keystream_threads`], returning [`crate::ErrorKind::LengthLimit`] (with
    /// `buf` and the position untouched) where it panics.
    pub fn try_apply_keystream_threads(
        &mut self,
        buf: &mut [u8],
        threads: usize,
    ) -> Result<(), Error> {
        if threads <= 1 || buf.len() < PAR_THRESHOLD {
            return self.try_apply_keystream(buf);
        }
        let pos = self.position();
        let end = stream_end(pos, buf.len())?;
        self.cipher()
            .try_ctr_xor_at_threads(&self.iv(), pos, buf, threads)?;
        self.seek(end);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Backend;
    use std::vec::Vec;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 7 + (i >> 9)) as u8).collect()
    }

    #[test]
    fn identical_for_every_thread_count_split_and_carry() {
        let key = [0x42u8; 16];
        // Every hardware backend, plus `soft` (slow: fewer cases) so the generic code is
        // covered on any machine.
        for b in Backend::available() {
            let aes = Aes::with_backend(&key, b).unwrap();
            let light = b == Backend::Soft;
            // Counters where the low 32/64 bits and the whole 128 bits wrap inside the buffer.
            for iv in [
                0u128,
                (1 << 32) - 300,
                u64::MAX as u128 - 5000,
                u128::MAX - 7000,
            ] {
                if light && iv != u128::MAX - 7000 {
                    continue;
                }
                let iv = iv.to_be_bytes();
                for len in [PAR_THRESHOLD - 1, PAR_THRESHOLD + 17, 3 * MIN_PIECE * 8 + 5] {
                    let src = pattern(len);
                    let mut want = src.clone();
                    aes.ctr_xor_at(&iv, 0, &mut want);
                    for threads in 1..=8 {
                        if light && threads != 3 {
                            continue;
                        }
                        for pos in [0u64, 5, 16 * 1000 + 3] {
                            let mut got = src.clone();
                            aes.ctr_xor_at_threads(&iv, pos, &mut got, threads);
                            let mut one = src.clone();
                            aes.ctr_xor_at(&iv, pos, &mut one);
                            assert_eq!(got, one, "{b} threads={threads} len={len} pos={pos}");
                        }
                    }
                    // Streaming, with a misaligned start, equals one shot.
                    let mut got = src.clone();
                    let mut ctr = Ctr::new(&aes, &iv);
                    ctr.apply_keystream(&mut got[..3]);
                    ctr.apply_keystream_threads(&mut got[3..], 3);
                    assert_eq!(ctr.position(), len as u64);
                    assert_eq!(got, want, "{b} streaming len={len}");
                }
            }
        }
    }
}

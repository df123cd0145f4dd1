//! Proof that aesx served a call: per-algorithm counters (context inits, data calls, bytes).
//!
//! Two copies are kept:
//! - this process's own counters, read in-process through the provider parameter
//!   `aesx-stats` (`OSSL_PROVIDER_get_params`);
//! - optionally a file shared by every process that loads the provider with
//!   `AESX_PROVIDER_STATS=FILE` in its environment: a fixed-size binary file mapped with
//!   `MAP_SHARED` when the provider is initialised. Counting is then a plain store into that
//!   mapping: no system call, no file write, no thread. That is what makes it safe in sshd's
//!   pre-authentication sandbox (seccomp kills the process on any unlisted system call;
//!   `RLIMIT_FSIZE` 0 turns any write that grows a file into SIGXFSZ): the file is opened,
//!   sized and mapped before the sandbox exists (at provider init, in the parent), and a
//!   forked child only stores into memory. A process that starts with a small `RLIMIT_FSIZE`
//!   never creates or grows the file.
//!
//! Never key material: only names and counts. The file is created with mode 0600; the
//! variable is read with `secure_getenv`, so a setuid program (ssh-keysign) ignores it.
//!
//! File layout (all integers little-endian u64; 64-byte records):
//! - record 0: `MAGIC` (ASCII, NUL-padded to 48 bytes), then u64 version (1), u64 record
//!   count N;
//! - records 1..=N: algorithm name (ASCII, NUL-padded to 32 bytes), then encrypt inits,
//!   decrypt inits, data calls (update/cipher/final), bytes in.
//!
//! Counts are updated with relaxed load + store, not locked read-modify-write: two processes
//! counting the same algorithm at the same instant may lose an increment. A context collects
//! its data calls in a [`Pending`] and hands them over in batches. They are evidence, not
//! billing.

use core::sync::atomic::{AtomicPtr, AtomicU64, Ordering::Relaxed};
use std::ffi::CStr;
use std::sync::Once;

/// The algorithms counted, in file order. The provider's algorithm index is the position here.
pub const ALGS: [&str; 15] = [
    "AES-128-ECB",
    "AES-192-ECB",
    "AES-256-ECB",
    "AES-128-CBC",
    "AES-192-CBC",
    "AES-256-CBC",
    "AES-128-CTR",
    "AES-192-CTR",
    "AES-256-CTR",
    "AES-128-GCM",
    "AES-192-GCM",
    "AES-256-GCM",
    "reserved-12",
    "reserved-13",
    "reserved-14",
];

pub const MAGIC: &[u8] = b"aesx-provider-stats\n";
const NAME_LEN: usize = 32;
const N: usize = ALGS.len();

#[repr(C, align(64))]
struct Slot {
    name: [u8; NAME_LEN],
    counts: [AtomicU64; 4],
}

#[repr(C, align(64))]
struct Header {
    magic: [u8; 48],
    version: AtomicU64,
    records: AtomicU64,
}

#[repr(C)]
struct Block {
    header: Header,
    slots: [Slot; N],
}

const FILE_SIZE: usize = core::mem::size_of::<Block>();
const _: () = assert!(FILE_SIZE == 64 * (N + 1));

const fn padded<const L: usize>(s: &[u8]) -> [u8; L] {
    let mut out = [0u8; L];
    let mut i = 0;
    while i < s.len() && i < L {
        out[i] = s[i];
        i += 1;
    }
    out
}

const fn initial() -> Block {
    let mut slots = [const {
        Slot {
            name: [0; NAME_LEN],
            counts: [const { AtomicU64::new(0) }; 4],
        }
    }; N];
    let mut i = 0;
    while i < N {
        slots[i].name = padded::<NAME_LEN>(ALGS[i].as_bytes());
        i += 1;
    }
    Block {
        header: Header {
            magic: padded::<48>(MAGIC),
            version: AtomicU64::new(1),
            records: AtomicU64::new(N as u64),
        },
        slots,
    }
}

static LOCAL: Block = initial();
static SHARED: AtomicPtr<Block> = AtomicPtr::new(core::ptr::null_mut());

/// Which counter of a slot.
#[derive(Clone, Copy)]
#[repr(usize)]
pub enum Kind {
    EncInit = 0,
    DecInit = 1,
    Calls = 2,
    Bytes = 3,
}

#[inline(always)]
fn add(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed).wrapping_add(n), Relaxed);
}

#[inline(always)]
fn bump_in(b: &Block, alg: usize, kind: Kind, n: u64) {
    if let Some(s) = b.slots.get(alg) {
        add(&s.counts[kind as usize], n);
    }
}

/// Counts one event for algorithm index `alg`.
#[inline(always)]
pub fn bump(alg: usize, kind: Kind, n: u64) {
    bump_in(&LOCAL, alg, kind, n);
    let p = SHARED.load(Relaxed);
    if !p.is_null() {
        // SAFETY: once set, SHARED points to a live MAP_SHARED mapping of FILE_SIZE bytes that is
        // never unmapped (it lives as long as the process).
        bump_in(unsafe { &*p }, alg, kind, n);
    }
}

#[inline(always)]
fn data_in(b: &Block, alg: usize, calls: u64, bytes: u64) {
    if let Some(s) = b.slots.get(alg) {
        add(&s.counts[Kind::Calls as usize], calls);
        add(&s.counts[Kind::Bytes as usize], bytes);
    }
}

/// `calls` data calls of `bytes` input bytes in all.
#[inline(always)]
fn data(alg: usize, calls: u64, bytes: u64) {
    data_in(&LOCAL, alg, calls, bytes);
    let p = SHARED.load(Relaxed);
    if !p.is_null() {
        // SAFETY: as in `bump`.
        data_in(unsafe { &*p }, alg, calls, bytes);
    }
}

/// A context's data calls not yet added to the process and file counters.
///
/// IMPLEMENTATION NOTE: adding to the shared counters on every call cost a measurable share of
/// a 16-byte `EVP_EncryptUpdate` (two read-modify-writes on a line other processes may also
/// write); a context counts into itself and hands its counts over every 64 KiB or 256 calls,
/// at every init and when it is freed, so at most that much is ever missing from a live
/// process's counts.
#[derive(Clone, Copy, Default)]
pub struct Pending {
    calls: u64,
    bytes: u64,
}

impl Pending {
    #[inline(always)]
    pub fn add(&mut self, alg: usize, bytes: usize) {
        self.calls += 1;
        self.bytes += bytes as u64;
        if self.bytes >= 1 << 16 || self.calls >= 256 {
            self.flush(alg);
        }
    }

    #[inline(never)]
    pub fn flush(&mut self, alg: usize) {
        if self.calls != 0 {
            data(alg, self.calls, self.bytes);
            *self = Pending::default();
        }
    }
}

/// This process's counters as text, one line per algorithm that was used:
/// `AES-128-CTR enc_inits=1 dec_inits=0 calls=3 bytes=4096`.
pub fn local_text() -> String {
    let mut s = String::new();
    for (i, slot) in LOCAL.slots.iter().enumerate() {
        let c: [u64; 4] = core::array::from_fn(|k| slot.counts[k].load(Relaxed));
        if c.iter().any(|&x| x != 0) {
            s.push_str(&format!(
                "{} enc_inits={} dec_inits={} calls={} bytes={}\n",
                ALGS[i], c[0], c[1], c[2], c[3]
            ));
        }
    }
    s
}

/// Maps the file named by `AESX_PROVIDER_STATS`, once per process. Any failure leaves only the
/// in-process counters; it never fails provider initialisation.
pub fn init_from_env() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let Some(path) = crate::secure_env(c"AESX_PROVIDER_STATS") else {
            return;
        };
        if let Some(p) = map_file(&path) {
            SHARED.store(p, Relaxed);
        }
    });
}

/// Opens (creating and sizing it if it is new and empty) and maps the stats file.
fn map_file(path: &CStr) -> Option<*mut Block> {
    // SAFETY: plain system calls on a path we own a copy of, an fd we own and close, and a
    // buffer of FILE_SIZE bytes; every result is checked.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_RDWR | libc::O_CREAT | libc::O_CLOEXEC | libc::O_NOCTTY,
            0o600,
        );
        if fd < 0 {
            return None;
        }
        let result = (|| {
            // Serialise creation between processes starting at the same time. Never wait
            // long: a foreign lock holder must not hang OpenSSL's initialisation (after ~2 s
            // this process just goes without the shared counters).
            let mut tries = 0;
            while libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) != 0 {
                tries += 1;
                if tries > 200 {
                    return None;
                }
                let ts = libc::timespec {
                    tv_sec: 0,
                    tv_nsec: 10_000_000,
                };
                libc::nanosleep(&ts, core::ptr::null_mut());
            }
            let mut st: libc::stat = core::mem::zeroed();
            if libc::fstat(fd, &mut st) != 0 || (st.st_mode & libc::S_IFMT) != libc::S_IFREG {
                return None;
            }
            if st.st_size == 0 {
                // A new file: write the header and names, unless this process may not grow a
                // file that far (RLIMIT_FSIZE; exceeding it raises SIGXFSZ).
                let mut lim: libc::rlimit = core::mem::zeroed();
                if libc::getrlimit(libc::RLIMIT_FSIZE, &mut lim) != 0
                    || (lim.rlim_cur != libc::RLIM_INFINITY
                        && lim.rlim_cur < FILE_SIZE as libc::rlim_t)
                {
                    return None;
                }
                let init = initial();
                let bytes = core::slice::from_raw_parts((&raw const init).cast::<u8>(), FILE_SIZE);
                if libc::pwrite(fd, bytes.as_ptr().cast(), FILE_SIZE, 0) != FILE_SIZE as isize {
                    return None;
                }
            } else if st.st_size as usize != FILE_SIZE {
                return None; // not our file: leave it alone
            }
            let mut head = [0u8; 48];
            if libc::pread(fd, head.as_mut_ptr().cast(), 48, 0) != 48
                || head[..MAGIC.len()] != *MAGIC
            {
                return None;
            }
            let p = libc::mmap(
                core::ptr::null_mut(),
                FILE_SIZE,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            );
            if p == libc::MAP_FAILED {
                return None;
            }
            Some(p.cast::<Block>())
        })();
        // Unlock explicitly: the mapping keeps the open file description (and so a flock on
        // it) alive after close, which would block every other process forever.
        libc::flock(fd, libc::LOCK_UN);
        libc::close(fd);
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_and_local_text() {
        assert_eq!(FILE_SIZE, 1024);
        let before = local_text();
        bump(6, Kind::EncInit, 1);
        let mut p = Pending::default();
        p.add(6, 100);
        p.flush(6);
        let t = local_text();
        assert_ne!(before, t);
        let line = t.lines().find(|l| l.starts_with("AES-128-CTR ")).unwrap();
        assert!(
            line.contains("enc_inits=") && line.contains("bytes="),
            "{line}"
        );
        bump(99, Kind::Calls, 1); // out of range: ignored, no panic
    }
}

//! Helpers shared by the fuzz targets: reading structured choices from the fuzzer's bytes,
//! and the reference computations (the `soft` backend, and plain-Rust models) the targets
//! compare against.

use aesx::{Aes, Backend};
pub use libfuzzer_sys::arbitrary::{Result, Unstructured};

/// Every AES backend this CPU runs (the first is `soft`, the oracle).
pub fn backends() -> &'static [Backend] {
    static B: std::sync::OnceLock<Vec<Backend>> = std::sync::OnceLock::new();
    B.get_or_init(Backend::available)
}

/// A key of 16, 24 or 32 bytes.
pub fn key(u: &mut Unstructured<'_>) -> Result<Vec<u8>> {
    let len = *u.choose(&[16usize, 24, 32])?;
    Ok(u.bytes(len)?.to_vec())
}

/// A 16-byte block.
pub fn block(u: &mut Unstructured<'_>) -> Result<[u8; 16]> {
    let mut b = [0u8; 16];
    u.fill_buffer(&mut b)?;
    Ok(b)
}

/// A 128-bit counter block near a carry: within a few thousand blocks below 2^32, 2^64 or
/// 2^128 (or anywhere), so a message crosses the carry.
pub fn counter_near_carry(u: &mut Unstructured<'_>) -> Result<[u8; 16]> {
    let below: u128 = u.int_in_range(0..=4096u32)?.into();
    let high: u128 = u.arbitrary()?;
    let c = match u.int_in_range(0..=3u8)? {
        // Low 32 bits about to wrap; the rest arbitrary.
        0 => (high & !0xffff_ffff) | (0xffff_ffffu128.wrapping_sub(below) & 0xffff_ffff),
        // Low 64 bits about to wrap.
        1 => (high & !(u64::MAX as u128)) | (u64::MAX as u128).wrapping_sub(below),
        // The whole counter about to wrap.
        2 => u128::MAX.wrapping_sub(below),
        _ => high,
    };
    Ok(c.to_be_bytes())
}

/// A byte position: small, or near 2^64 (the end of a CTR stream), or anywhere.
pub fn position(u: &mut Unstructured<'_>) -> Result<u64> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => u.int_in_range(0..=4096u64)?,
        1 => u64::MAX - u.int_in_range(0..=4096u64)?,
        2 => (1u64 << 36) - u.int_in_range(0..=4096u64)?,
        _ => u.arbitrary()?,
    })
}

/// Splits `len` into pieces of arbitrary sizes (0 included), summing to `len`.
pub fn pieces(u: &mut Unstructured<'_>, len: usize) -> Result<Vec<usize>> {
    pieces_up_to(u, len, 100)
}

/// [`pieces`] of at most `max` bytes each (but the last, which takes what is left when the
/// input runs out).
pub fn pieces_up_to(u: &mut Unstructured<'_>, len: usize, max: usize) -> Result<Vec<usize>> {
    let mut v = Vec::new();
    let mut left = len;
    while left > 0 {
        let n = if u.is_empty() {
            left
        } else {
            u.int_in_range(0..=left.min(max))?
        };
        v.push(n);
        left -= n;
    }
    Ok(v)
}

/// The same key on `soft`, the reference every other backend is compared against.
pub fn soft(key: &[u8]) -> Aes {
    Aes::with_backend(key, Backend::Soft).expect("valid key on soft")
}

/// PKCS#7 validity, written the obvious way (not constant time): the model `pkcs7_unpad` is
/// compared against.
pub fn pkcs7_unpad_model(data: &[u8]) -> Option<usize> {
    if data.is_empty() || !data.len().is_multiple_of(16) {
        return None;
    }
    let p = *data.last()? as usize;
    if !(1..=16).contains(&p) {
        return None;
    }
    data[data.len() - p..]
        .iter()
        .all(|&b| b as usize == p)
        .then(|| data.len() - p)
}

/// A reader that hands out `data` in pieces of the given sizes (then the rest), the way a
/// pipe or a slow disk does.
pub struct ChoppyReader {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
    next: usize,
}

impl ChoppyReader {
    pub fn new(data: Vec<u8>, sizes: Vec<usize>) -> ChoppyReader {
        ChoppyReader {
            data,
            at: 0,
            sizes,
            next: 0,
        }
    }
}

impl std::io::Read for ChoppyReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.data.len() - self.at;
        let want = match self.sizes.get(self.next) {
            // A 0 here would read as EOF; make it 1.
            Some(&n) => n.max(1),
            None => left,
        };
        self.next += 1;
        let n = want.min(left).min(buf.len());
        buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// The key of the aesx files the format targets make (and a second, wrong one).
pub const FILE_KEY: [u8; 32] = [0x42; 32];
pub const WRONG_KEY: [u8; 32] = [0x43; 32];
/// The chunk size of those files: the smallest the format allows (1 KiB), so a few KiB of
/// input span several chunks.
pub const FILE_CHUNK_LOG2: u8 = aesx_file::MIN_CHUNK_LOG2;

/// aesx-file options for `threads` threads on `backend` (1 KiB chunks, AES-256-GCM), built
/// field by field: `Options::default()` asks the OS for the core count (reads cgroup files),
/// which cost about 3% of each `file_read` execution.
pub fn file_options(threads: usize, backend: Backend) -> aesx_file::Options {
    aesx_file::Options {
        aead: aesx_file::Aead::Aes256Gcm,
        chunk_log2: FILE_CHUNK_LOG2,
        argon2: aesx_file::Argon2Params::default(),
        threads,
        backend: Some(backend),
    }
}

/// One aesx file case: a plaintext, the file [`FILE_KEY`] makes of it (1 KiB chunks,
/// AES-256-GCM or AES-128-GCM, salts from the fuzzer), and that file after a few edits the
/// fuzzer chose (bit flips, truncation, appended bytes, chunks moved, dropped or duplicated,
/// header bytes set), or the fuzzer's bytes as the whole file.
pub struct FileCase {
    pub plain: Vec<u8>,
    pub file: Vec<u8>,
    pub edited: Vec<u8>,
}

impl FileCase {
    /// Plaintext bytes per chunk.
    pub const CHUNK: usize = 1 << FILE_CHUNK_LOG2;
    /// Bytes per sealed chunk (a record).
    pub const RECORD: usize = Self::CHUNK + aesx_file::TAG_LEN;

    /// True when the edits left the file as it was.
    pub fn intact(&self) -> bool {
        self.edited == self.file
    }

    /// `got` is what a reader may release: whole chunks of the plaintext from its start, or
    /// all of it.
    pub fn check_released(&self, got: &[u8], who: &str) {
        assert!(
            got.len() <= self.plain.len() && got == &self.plain[..got.len()],
            "{who} released {} bytes that are not the plaintext's start",
            got.len()
        );
        assert!(
            got.len() == self.plain.len() || got.len().is_multiple_of(Self::CHUNK),
            "{who} released part of a chunk ({} bytes)",
            got.len()
        );
    }
}

/// A position in `len` bytes: anywhere, or near a chunk boundary or the header's end.
fn file_pos(u: &mut Unstructured<'_>, len: usize) -> Result<usize> {
    Ok(if u.arbitrary()? {
        let k = u.int_in_range(0..=6usize)?;
        let d = u.int_in_range(0..=4usize)?;
        (aesx_file::HEADER_LEN + k * FileCase::RECORD + d).saturating_sub(2)
    } else {
        u.int_in_range(0..=len)?
    }
    .min(len))
}

/// Reads a [`FileCase`] from the fuzzer's bytes.
pub fn file_case(u: &mut Unstructured<'_>) -> Result<FileCase> {
    use std::io::Write;
    let c = FileCase::CHUNK;
    let len = match u.int_in_range(0..=2u8)? {
        0 => u.int_in_range(0..=40usize)?,
        1 => (u.int_in_range(0..=4usize)? * c + u.int_in_range(0..=4usize)?).saturating_sub(2),
        _ => u.int_in_range(0..=5 * c)?,
    };
    let seed: u8 = u.arbitrary()?;
    let plain: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(131).wrapping_add(seed) ^ (i >> 8) as u8)
        .collect();
    let opts = aesx_file::Options {
        aead: *u.choose(&[aesx_file::Aead::Aes256Gcm, aesx_file::Aead::Aes128Gcm])?,
        ..file_options(1, Backend::Soft)
    };
    let mut file_salt = [0u8; 32];
    file_salt[0] = u.arbitrary()?;
    let secret = aesx_file::Secret::key(&FILE_KEY);
    let mut e =
        aesx_file::testing::encryptor_with_salts(Vec::new(), &secret, &opts, file_salt, [0; 16])
            .expect("writer");
    e.write_all(&plain).expect("encrypt");
    let file = e.finish().expect("finish");
    let mut edited = file.clone();
    if u.ratio(1u8, 8u8)? {
        // The fuzzer's bytes as the whole file (header parsing on anything).
        edited = u.bytes(u.len())?.to_vec();
        return Ok(FileCase {
            plain,
            file,
            edited,
        });
    }
    for _ in 0..u.int_in_range(0..=3u8)? {
        let n = edited.len();
        match u.int_in_range(0..=6u8)? {
            0 if n > 0 => {
                let at = file_pos(u, n - 1)?;
                edited[at] ^= 1 << u.int_in_range(0..=7u8)?;
            }
            1 => {
                let at = file_pos(u, n)?;
                edited.truncate(at);
            }
            2 => {
                let k = u.int_in_range(1..=32usize)?;
                edited.extend_from_slice(u.bytes(k.min(u.len()))?);
                if edited.len() == n {
                    edited.push(0);
                }
            }
            3 => {
                // Copy a range over another place (a chunk moved or swapped in).
                let from = file_pos(u, n)?;
                let to = file_pos(u, n)?;
                let k = u.int_in_range(0..=2 * FileCase::RECORD)?;
                let k = k.min(n - from).min(n - to);
                let piece = edited[from..from + k].to_vec();
                edited[to..to + k].copy_from_slice(&piece);
            }
            4 => {
                // Drop a range (a chunk dropped).
                let from = file_pos(u, n)?;
                let k = u.int_in_range(0..=2 * FileCase::RECORD)?.min(n - from);
                edited.drain(from..from + k);
            }
            5 => {
                // Insert a copy of a range (a chunk duplicated).
                let from = file_pos(u, n)?;
                let k = u.int_in_range(0..=2 * FileCase::RECORD)?.min(n - from);
                let at = file_pos(u, n)?;
                let piece = edited[from..from + k].to_vec();
                edited.splice(at..at, piece);
            }
            6 if n > 0 => {
                // Set a header byte (a field changed).
                let at = u.int_in_range(0..=aesx_file::HEADER_LEN - 1)?.min(n - 1);
                edited[at] = u.arbitrary()?;
            }
            _ => {}
        }
    }
    Ok(FileCase {
        plain,
        file,
        edited,
    })
}

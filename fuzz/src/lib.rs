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
    let mut v = Vec::new();
    let mut left = len;
    while left > 0 {
        let n = if u.is_empty() {
            left
        } else {
            u.int_in_range(0..=left.min(100))?
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

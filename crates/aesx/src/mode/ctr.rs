//! CTR with a 128-bit big-endian counter incremented mod 2^128 (SSH `aes*-ctr`, PuTTY's SDCTR,
//! NIST SP 800-38A).
//!
//! The counter block may be secret (SSH derives it from the key exchange), so nothing here
//! branches on it: every backend kernel increments its counters mod 2^128 branch-free (the
//! AES-NI/VAES kernels per batch from an aligned base and a per-call selector, see
//! `backend::aesni`, "CTR counter blocks"), and this module never
//! splits a call at a carry. Partial blocks and the buffered keystream live here.

use zeroize::Zeroize;

use crate::{Aes, Error, ErrorKind, backend};

/// A stream holds byte positions `0..=u64::MAX - 1`: the position after a call must still be a
/// `u64`. Returns that position, or [`ErrorKind::LengthLimit`] if `pos + len` would pass
/// `u64::MAX`. IMPLEMENTATION NOTE: every entry point checks this *before* touching the
/// buffer; a wrapped position would silently reuse the keystream of position 0 onwards.
pub(crate) fn stream_end(pos: u64, len: usize) -> Result<u64, Error> {
    u64::try_from(len)
        .ok()
        .and_then(|l| pos.checked_add(l))
        .ok_or(Error::new(ErrorKind::LengthLimit))
}

/// XORs whole blocks with E(ctr), E(ctr+1), ... (mod 2^128); returns the next counter.
fn xor_blocks(aes: &Aes, ctr: u128, buf: &mut [u8]) -> u128 {
    let (b, keys) = aes.kernels();
    debug_assert!(buf.len().is_multiple_of(16));
    backend::ctr_xor(b, keys, ctr, buf);
    ctr.wrapping_add((buf.len() / 16) as u128)
}

fn keystream_block(aes: &Aes, ctr: u128) -> [u8; 16] {
    let mut ks = [0u8; 16];
    let (b, keys) = aes.kernels();
    backend::ctr_xor(b, keys, ctr, &mut ks);
    ks
}

fn xor_into(dst: &mut [u8], src: &[u8]) {
    dst.iter_mut().zip(src).for_each(|(d, s)| *d ^= s);
}

/// Stateless seekable CTR (see [`Aes::try_ctr_xor_at`]).
pub(crate) fn xor_at(aes: &Aes, iv: u128, pos: u64, buf: &mut [u8]) -> Result<(), Error> {
    let mut ctr = Ctr {
        aes,
        iv,
        pos: 0,
        ks: 0,
    };
    ctr.seek(pos);
    ctr.try_apply_keystream(buf)
}

/// Stateless seekable CTR from `input` into `output` (see [`Aes::try_ctr_xor_at_b2b`]).
pub(crate) fn xor_at_b2b(
    aes: &Aes,
    iv: u128,
    pos: u64,
    input: &[u8],
    output: &mut [u8],
) -> Result<(), Error> {
    let mut ctr = Ctr {
        aes,
        iv,
        pos: 0,
        ks: 0,
    };
    check_b2b(input.len(), output.len())?;
    stream_end(pos, input.len())?;
    ctr.seek(pos);
    ctr.apply_checked_b2b(input, output);
    Ok(())
}

/// A CTR keystream position: streaming, seekable, any chunking gives the same bytes.
///
/// Borrows an expanded key, so starting a new message costs nothing beyond the first block.
///
/// A stream is at most 2^64 - 1 bytes long (positions `0..u64::MAX`): a call that would move
/// the position past `u64::MAX` processes nothing and fails ([`Ctr::try_apply_keystream`]) or
/// panics ([`Ctr::apply_keystream`]); the position never wraps, so keystream is never reused.
pub struct Ctr<'a> {
    aes: &'a Aes,
    iv: u128,
    pos: u64,
    /// Keystream of the block holding `pos` (big-endian bytes), valid when `pos % 16 != 0`.
    /// A `u128` so that zeroizing it is one volatile store rather than sixteen.
    ks: u128,
}

impl Drop for Ctr<'_> {
    fn drop(&mut self) {
        self.ks.zeroize();
    }
}

impl<'a> Ctr<'a> {
    /// A stream at position 0 whose first counter block is `iv`.
    pub fn new(aes: &'a Aes, iv: &[u8; 16]) -> Ctr<'a> {
        Ctr {
            aes,
            iv: u128::from_be_bytes(*iv),
            pos: 0,
            ks: 0,
        }
    }

    /// Like [`Ctr::new`], with an IV slice that must be 16 bytes.
    pub fn try_new(aes: &'a Aes, iv: &[u8]) -> Result<Ctr<'a>, crate::Error> {
        let iv: &[u8; 16] = iv
            .try_into()
            .map_err(|_| crate::Error::new(crate::ErrorKind::InvalidIvLength))?;
        Ok(Ctr::new(aes, iv))
    }

    /// The current byte position in the keystream.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// Moves to any byte position (the next call must still end at or before `u64::MAX`).
    pub fn seek(&mut self, pos: u64) {
        self.pos = pos;
        if !pos.is_multiple_of(16) {
            self.ks = u128::from_be_bytes(keystream_block(self.aes, self.block_ctr()));
        }
    }

    /// The cipher this stream runs on.
    pub fn cipher(&self) -> &'a Aes {
        self.aes
    }

    /// The first counter block of the stream (position 0).
    pub fn iv(&self) -> [u8; 16] {
        self.iv.to_be_bytes()
    }

    /// The counter block that covers the current position.
    pub fn counter(&self) -> [u8; 16] {
        self.block_ctr().to_be_bytes()
    }

    fn block_ctr(&self) -> u128 {
        self.iv.wrapping_add((self.pos / 16) as u128)
    }

    /// Encrypts or decrypts `buf` in place and advances the position by `buf.len()`.
    ///
    /// # Panics
    /// If `position() + buf.len()` would pass `u64::MAX` (the stream's end); `buf` is then
    /// untouched. [`Ctr::try_apply_keystream`] returns an error instead.
    pub fn apply_keystream(&mut self, buf: &mut [u8]) {
        if let Err(e) = self.try_apply_keystream(buf) {
            panic!("{e}");
        }
    }

    /// Encrypts or decrypts `buf` in place and advances the position by `buf.len()`;
    /// [`ErrorKind::LengthLimit`] (with `buf` and the position untouched) if that would pass
    /// the stream's end at `u64::MAX`.
    pub fn try_apply_keystream(&mut self, buf: &mut [u8]) -> Result<(), Error> {
        stream_end(self.pos, buf.len())?;
        self.apply_checked(buf);
        Ok(())
    }

    /// The body of [`Ctr::try_apply_keystream`], after its limit check: no addition to `pos`
    /// below can overflow.
    fn apply_checked(&mut self, mut buf: &mut [u8]) {
        let off = (self.pos % 16) as usize;
        if off != 0 {
            let n = (16 - off).min(buf.len());
            let (head, rest) = buf.split_at_mut(n);
            xor_into(head, &self.ks.to_be_bytes()[off..off + n]);
            self.pos += n as u64;
            buf = rest;
        }
        if buf.is_empty() {
            return;
        }
        let whole = buf.len() / 16 * 16;
        let (body, tail) = buf.split_at_mut(whole);
        let ctr = xor_blocks(self.aes, self.block_ctr(), body);
        self.pos += whole as u64;
        if !tail.is_empty() {
            let ks = keystream_block(self.aes, ctr);
            xor_into(tail, &ks);
            self.ks = u128::from_be_bytes(ks);
            self.pos += tail.len() as u64;
        }
    }

    /// Buffer-to-buffer form of [`Ctr::try_apply_keystream`]: `output` receives `input` XOR
    /// the keystream and the position advances by `input.len()`; `input` is not modified.
    /// The same bytes as copying `input` into `output` and applying the keystream there, in
    /// one pass over the data (on `aesni` and `vaes256` the kernel reads `input` and writes
    /// `output` directly). The two slices must have the same length:
    /// [`ErrorKind::OutputTooSmall`] if `output` is shorter, [`ErrorKind::InvalidLength`] if
    /// it is longer, [`ErrorKind::LengthLimit`] past the stream's end; on any error nothing
    /// is written and the position does not move.
    pub fn apply_keystream_b2b(
        &mut self,
        input: &[u8],
        output: &mut [u8],
    ) -> Result<(), crate::Error> {
        check_b2b(input.len(), output.len())?;
        stream_end(self.pos, input.len())?;
        self.apply_checked_b2b(input, output);
        Ok(())
    }

    /// The body of [`Ctr::apply_keystream_b2b`] after its checks (equal lengths, the
    /// stream's end not passed).
    fn apply_checked_b2b(&mut self, mut input: &[u8], mut output: &mut [u8]) {
        let off = (self.pos % 16) as usize;
        if off != 0 {
            let n = (16 - off).min(input.len());
            let (head, rest) = core::mem::take(&mut output).split_at_mut(n);
            xor_from(head, &input[..n], &self.ks.to_be_bytes()[off..off + n]);
            self.pos += n as u64;
            input = &input[n..];
            output = rest;
        }
        if input.is_empty() {
            return;
        }
        let whole = input.len() / 16 * 16;
        let (body_in, tail_in) = input.split_at(whole);
        let (body_out, tail_out) = output.split_at_mut(whole);
        let (b, keys) = self.aes.kernels();
        let ctr = self.block_ctr();
        backend::ctr_xor_b2b(b, keys, ctr, body_in, body_out);
        self.pos += whole as u64;
        if !tail_in.is_empty() {
            let ks = keystream_block(self.aes, ctr.wrapping_add((whole / 16) as u128));
            xor_from(tail_out, tail_in, &ks);
            self.ks = u128::from_be_bytes(ks);
            self.pos += tail_in.len() as u64;
        }
    }
}

/// `dst[i] = src[i] ^ ks[i]` over `dst.len()` bytes.
fn xor_from(dst: &mut [u8], src: &[u8], ks: &[u8]) {
    dst.iter_mut()
        .zip(src.iter().zip(ks))
        .for_each(|(d, (s, k))| *d = s ^ k);
}

/// Buffer-to-buffer calls need `output.len() == input.len()`.
pub(crate) fn check_b2b(input: usize, output: usize) -> Result<(), Error> {
    match output.cmp(&input) {
        core::cmp::Ordering::Less => Err(Error::new(ErrorKind::OutputTooSmall)),
        core::cmp::Ordering::Greater => Err(Error::new(ErrorKind::InvalidLength)),
        core::cmp::Ordering::Equal => Ok(()),
    }
}

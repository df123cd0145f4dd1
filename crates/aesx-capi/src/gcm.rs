//! The `aesx_gcm_*` C API: AES-GCM keys, one-shot seal/open with a detached tag, and streams.
//!
//! Same conventions as [`crate::api`] (status return, NULL only with length 0, `in == out` for
//! in place, other overlaps refused, out-pointers set to NULL first), with one documented
//! exception: when `aesx_gcm_open` returns `AESX_ERR_AUTH`, its output buffer has been zeroed
//! (no unauthenticated plaintext is released; with `in == out` the ciphertext is gone too).

#![allow(non_camel_case_types)]

use std::sync::Arc;

use aesx::{AesGcm, GcmDecryptor, GcmEncryptor};

use crate::aesx_status::{self, *};

use crate::{aesx_backend, backend_from_id, default_backend, error_status, guard, with_inout};

/// An AES-GCM key: the AES schedule plus the GHASH key powers, and a tag length. Immutable
/// after creation and safe to share between threads. Create with `aesx_gcm_new`, release with
/// `aesx_gcm_free` (key material is zeroized when the last user is gone).
pub struct aesx_gcm {
    gcm: Arc<AesGcm>,
}

enum Stream {
    Seal(GcmEncryptor<Arc<AesGcm>>),
    Open(GcmDecryptor<Arc<AesGcm>>),
    Done,
}

/// One GCM message being encrypted or decrypted in pieces: AAD first (`aesx_gcm_stream_aad`),
/// then data (`aesx_gcm_stream_update`), then `aesx_gcm_stream_tag` (encryption) or
/// `aesx_gcm_stream_verify` (decryption). Holds its own reference to the key. Use from one
/// thread at a time; free with `aesx_gcm_stream_free`.
///
/// A decrypting stream releases plaintext before the tag is checked: do not use it until
/// `aesx_gcm_stream_verify` returns `AESX_OK`.
pub struct aesx_gcm_stream {
    st: Stream,
}

/// Reads `len` bytes at `p` (NULL allowed only for `len == 0`).
///
/// # Safety
/// A non-NULL `p` must be readable for `len` bytes.
unsafe fn slice<'a>(p: *const u8, len: usize) -> Result<&'a [u8], aesx_status> {
    if len == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(AESX_ERR_NULL_POINTER);
    }
    if len > isize::MAX as usize {
        return Err(AESX_ERR_LENGTH_LIMIT);
    }
    // SAFETY: non-NULL, readable for `len <= isize::MAX` bytes by the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// # Safety
/// A non-NULL `p` must point to a live `aesx_gcm`.
unsafe fn key<'a>(p: *const aesx_gcm) -> Result<&'a aesx_gcm, aesx_status> {
    // SAFETY: the caller promises a non-NULL `p` is a live key that no one mutates.
    unsafe { p.as_ref() }.ok_or(AESX_ERR_NULL_POINTER)
}

/// Creates an AES-GCM key from a 16-, 24- or 32-byte AES key on `backend`
/// (`AESX_BACKEND_AUTO` for the default) with tags of `tag_len` bytes (16; or 12..15, 8, 4
/// where a protocol asks for them) and stores it in `*out` (NULL on failure).
///
/// # Safety
/// `key` NULL or readable for `key_len` bytes; `out` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_new(
    key: *const u8,
    key_len: usize,
    tag_len: usize,
    backend: aesx_backend,
    out: *mut *mut aesx_gcm,
) -> aesx_status {
    guard(|| {
        if out.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        // SAFETY: non-NULL and valid for a write by contract.
        unsafe { out.write(std::ptr::null_mut()) };
        if key.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        if !matches!(key_len, 16 | 24 | 32) {
            return Err(AESX_ERR_KEY_LENGTH);
        }
        let b = backend_from_id(backend)?.unwrap_or_else(default_backend);
        // SAFETY: non-NULL, readable for `key_len` (at most 32) bytes by contract.
        let k = unsafe { std::slice::from_raw_parts(key, key_len) };
        let gcm = AesGcm::with_backend(k, b)
            .and_then(|g| g.with_tag_len(tag_len))
            .map_err(error_status)?;
        let ctx = Box::new(aesx_gcm { gcm: Arc::new(gcm) });
        // SAFETY: as above.
        unsafe { out.write(Box::into_raw(ctx)) };
        Ok(())
    })
}

/// Frees a key (NULL is a no-op); its material is zeroized once no stream uses it. Always
/// returns `AESX_OK`.
///
/// # Safety
/// `gcm` NULL or a live key from `aesx_gcm_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_free(gcm: *mut aesx_gcm) -> aesx_status {
    guard(|| {
        if !gcm.is_null() {
            // SAFETY: made by `Box::into_raw` in `aesx_gcm_new`, freed once (contract).
            drop(unsafe { Box::from_raw(gcm) });
        }
        Ok(())
    })
}

/// Encrypts `len` bytes from `in` to `out` (`in == out` for in place) under `nonce`
/// (`nonce_len >= 1`; 12 is the fast path) with associated data `aad`, and writes the tag
/// (`tag_len` must equal the key's tag length) to `tag`. Errors: `AESX_ERR_NONCE_LENGTH`,
/// `AESX_ERR_TAG_LENGTH`, `AESX_ERR_LENGTH_LIMIT` (more than 2^32 - 2 blocks, or AAD over
/// 2^61 - 1 bytes); nothing is written on failure.
///
/// # Safety
/// `gcm` NULL or live; `nonce`, `aad`, `in` NULL or readable, `out` and `tag` NULL or writable,
/// for their lengths (`tag` must not overlap `out`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_seal(
    gcm: *const aesx_gcm,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
    tag: *mut u8,
    tag_len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let g = unsafe { key(gcm) }?;
        // SAFETY: forwarded caller contract.
        let (nonce, aad) = unsafe { (slice(nonce, nonce_len)?, slice(aad, aad_len)?) };
        if tag.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        if tag_len != g.gcm.tag_len() {
            return Err(AESX_ERR_TAG_LENGTH);
        }
        precheck(nonce.len(), aad.len() as u64, len as u64)?;
        let mut t = None;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(r#in, out, len, |buf| {
                t = Some(
                    g.gcm
                        .seal_in_place_detached(nonce, aad, buf)
                        .map_err(error_status)?,
                );
                Ok(())
            })
        }?;
        let t = t.ok_or(AESX_ERR_INTERNAL)?;
        // SAFETY: non-NULL and writable for `tag_len` bytes by contract.
        unsafe { std::ptr::copy_nonoverlapping(t.as_bytes().as_ptr(), tag, tag_len) };
        Ok(())
    })
}

/// Checks the length rules before anything is written (so a failed call writes nothing).
fn precheck(nonce_len: usize, aad_len: u64, msg_len: u64) -> Result<(), aesx_status> {
    if nonce_len == 0 {
        return Err(AESX_ERR_NONCE_LENGTH);
    }
    if aad_len > aesx::mode::gcm::MAX_AAD_LEN || msg_len > aesx::mode::gcm::MAX_MESSAGE_LEN {
        return Err(AESX_ERR_LENGTH_LIMIT);
    }
    Ok(())
}

/// Decrypts `len` bytes from `in` to `out` (`in == out` for in place) if `tag` (`tag_len`
/// bytes, the key's tag length) authenticates nonce, AAD and ciphertext. Returns
/// `AESX_ERR_AUTH` on a wrong tag, and then `out` holds `len` zero bytes: no unauthenticated
/// plaintext is released. Other errors write nothing.
///
/// # Safety
/// As for `aesx_gcm_seal` (`tag` readable).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_open(
    gcm: *const aesx_gcm,
    nonce: *const u8,
    nonce_len: usize,
    aad: *const u8,
    aad_len: usize,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
    tag: *const u8,
    tag_len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let g = unsafe { key(gcm) }?;
        // SAFETY: forwarded caller contract.
        let (nonce, aad) = unsafe { (slice(nonce, nonce_len)?, slice(aad, aad_len)?) };
        if tag.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        if tag_len != g.gcm.tag_len() {
            return Err(AESX_ERR_TAG_LENGTH);
        }
        // Copied first: `tag` may alias the input or output buffer.
        let mut t = [0u8; 16];
        // SAFETY: non-NULL and readable for `tag_len` (at most 16) bytes by contract.
        unsafe { std::ptr::copy_nonoverlapping(tag, t.as_mut_ptr(), tag_len) };
        precheck(nonce.len(), aad.len() as u64, len as u64)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(r#in, out, len, |buf| {
                g.gcm
                    .open_in_place_detached(nonce, aad, buf, &t[..tag_len])
                    .map_err(error_status)
            })
        }
    })
}

/// # Safety
/// A non-NULL `p` must be a live stream not used concurrently.
unsafe fn stream<'a>(p: *mut aesx_gcm_stream) -> Result<&'a mut aesx_gcm_stream, aesx_status> {
    // SAFETY: the caller promises exclusive access to a live stream.
    unsafe { p.as_mut() }.ok_or(AESX_ERR_NULL_POINTER)
}

/// Starts a GCM message under `nonce` (`nonce_len >= 1`): `decrypt` 0 to encrypt, non-zero to
/// decrypt. Stores the stream in `*out` (NULL on failure). The stream holds its own reference
/// to the key, which may be freed first.
///
/// # Safety
/// `gcm` NULL or live; `nonce` NULL or readable for `nonce_len` bytes; `out` NULL or valid for
/// a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_stream_new(
    gcm: *const aesx_gcm,
    decrypt: i32,
    nonce: *const u8,
    nonce_len: usize,
    out: *mut *mut aesx_gcm_stream,
) -> aesx_status {
    guard(|| {
        if out.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        // SAFETY: non-NULL and valid for a write by contract.
        unsafe { out.write(std::ptr::null_mut()) };
        // SAFETY: forwarded caller contract.
        let g = unsafe { key(gcm) }?;
        // SAFETY: forwarded caller contract.
        let nonce = unsafe { slice(nonce, nonce_len) }?;
        let k = Arc::clone(&g.gcm);
        let st = if decrypt != 0 {
            Stream::Open(GcmDecryptor::new(k, nonce).map_err(error_status)?)
        } else {
            Stream::Seal(GcmEncryptor::new(k, nonce).map_err(error_status)?)
        };
        let s = Box::new(aesx_gcm_stream { st });
        // SAFETY: as above.
        unsafe { out.write(Box::into_raw(s)) };
        Ok(())
    })
}

/// Adds associated data; only before the first `aesx_gcm_stream_update` with data
/// (`AESX_ERR_STATE` after it, or after the stream finished).
///
/// # Safety
/// `s` NULL or a live stream used by this thread only; `aad` NULL or readable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_stream_aad(
    s: *mut aesx_gcm_stream,
    aad: *const u8,
    len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { stream(s) }?;
        // SAFETY: forwarded caller contract.
        let aad = unsafe { slice(aad, len) }?;
        match &mut s.st {
            Stream::Seal(e) => e.aad(aad),
            Stream::Open(d) => d.aad(aad),
            Stream::Done => return Err(AESX_ERR_STATE),
        }
        .map_err(error_status)
    })
}

/// Encrypts or decrypts the next `len` bytes from `in` to `out` (`in == out` for in place).
/// Decrypted data is unauthenticated until `aesx_gcm_stream_verify` returns `AESX_OK`.
///
/// # Safety
/// `s` NULL or a live stream used by this thread only; `in` NULL or readable and `out` NULL
/// or writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_stream_update(
    s: *mut aesx_gcm_stream,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { stream(s) }?;
        let (done, msg) = match &s.st {
            Stream::Seal(e) => (false, e.lengths().1),
            Stream::Open(d) => (false, d.lengths().1),
            Stream::Done => (true, 0),
        };
        if done {
            return Err(AESX_ERR_STATE);
        }
        if msg
            .checked_add(len as u64)
            .is_none_or(|t| t > aesx::mode::gcm::MAX_MESSAGE_LEN)
        {
            return Err(AESX_ERR_LENGTH_LIMIT);
        }
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(r#in, out, len, |buf| {
                match &mut s.st {
                    Stream::Seal(e) => e.update(buf),
                    Stream::Open(d) => d.update(buf),
                    Stream::Done => return Err(AESX_ERR_STATE),
                }
                .map_err(error_status)
            })
        }
    })
}

/// Ends an encrypting stream and writes its tag (`tag_len` = the key's tag length) to `tag`.
/// `AESX_ERR_STATE` for a decrypting or finished stream.
///
/// # Safety
/// `s` NULL or a live stream used by this thread only; `tag` NULL or writable for `tag_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_stream_tag(
    s: *mut aesx_gcm_stream,
    tag: *mut u8,
    tag_len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { stream(s) }?;
        let Stream::Seal(e) = &s.st else {
            return Err(AESX_ERR_STATE);
        };
        if tag.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        if tag_len != e.key().tag_len() {
            return Err(AESX_ERR_TAG_LENGTH);
        }
        let Stream::Seal(e) = std::mem::replace(&mut s.st, Stream::Done) else {
            return Err(AESX_ERR_INTERNAL);
        };
        let t = e.finish();
        // SAFETY: non-NULL and writable for `tag_len` bytes by contract.
        unsafe { std::ptr::copy_nonoverlapping(t.as_bytes().as_ptr(), tag, tag_len) };
        Ok(())
    })
}

/// Ends a decrypting stream: `AESX_OK` if `tag` (`tag_len` = the key's tag length) is valid,
/// `AESX_ERR_AUTH` if not (then discard everything the stream produced). `AESX_ERR_STATE` for
/// an encrypting or finished stream.
///
/// # Safety
/// `s` NULL or a live stream used by this thread only; `tag` NULL or readable for `tag_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_stream_verify(
    s: *mut aesx_gcm_stream,
    tag: *const u8,
    tag_len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { stream(s) }?;
        let Stream::Open(d) = &s.st else {
            return Err(AESX_ERR_STATE);
        };
        if tag.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        // SAFETY: forwarded caller contract.
        let t = unsafe { slice(tag, tag_len) }?;
        if tag_len != d.key().tag_len() {
            return Err(AESX_ERR_TAG_LENGTH);
        }
        let Stream::Open(d) = std::mem::replace(&mut s.st, Stream::Done) else {
            return Err(AESX_ERR_INTERNAL);
        };
        d.finish(t).map_err(error_status)
    })
}

/// Frees a stream (NULL is a no-op); its state is zeroized. Always returns `AESX_OK`.
///
/// # Safety
/// `s` NULL or a live stream from `aesx_gcm_stream_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_gcm_stream_free(s: *mut aesx_gcm_stream) -> aesx_status {
    guard(|| {
        if !s.is_null() {
            // SAFETY: made by `Box::into_raw` in `aesx_gcm_stream_new`, freed once (contract).
            drop(unsafe { Box::from_raw(s) });
        }
        Ok(())
    })
}

//! The `aesx_*` C API: cipher contexts, ECB, CBC, streaming CTR and backend selection.
//!
//! Conventions for every function:
//! * the return value is an [`aesx_status`]; on failure no data buffer has been written;
//! * every out-parameter (`T **out`, `aesx_backend *out`, ...) is written first, before anything
//!   else is checked: NULL for a pointer, 0 for a number. On success it then receives the
//!   result, so after a failed call it holds NULL or 0, never a stale value or whatever the
//!   caller's variable held before;
//! * data pointers may be NULL only when the length is 0;
//! * `in == out` (exactly) encrypts or decrypts in place; buffers that overlap in any other way
//!   are rejected with `AESX_ERR_OVERLAP`;
//! * an `aesx_cipher` is immutable after creation and may be shared between threads; an
//!   `aesx_ctr` holds a stream position and must be used by one thread at a time.

#![allow(non_camel_case_types)]

use std::ffi::{CStr, c_char, c_int};
use std::sync::Arc;

use aesx::{Aes, Backend};

use crate::aesx_status::{self, *};
use crate::{
    AESX_BACKEND_AUTO, aesx_backend, backend_from_id, backend_id, default_backend, error_status,
    guard, set_default_backend, with_inout,
};

/// An expanded AES key bound to one backend. Opaque; create with `aesx_cipher_new`, release
/// with `aesx_cipher_free` (the key schedule is zeroized when the last user is gone).
pub struct aesx_cipher {
    aes: Arc<Aes>,
}

/// A CTR stream (128-bit big-endian counter, SSH / SP 800-38A style) at a byte position.
/// Opaque; create with `aesx_ctr_new`, release with `aesx_ctr_free`. It keeps its own
/// reference to the key, so the `aesx_cipher` it came from may be freed first.
pub struct aesx_ctr {
    aes: Arc<Aes>,
    iv: [u8; 16],
    pos: u64,
}

/// Writes `v` through an out-pointer, or reports NULL.
///
/// # Safety
/// A non-NULL `out` must be valid for a write of `T`.
unsafe fn put<T>(out: *mut T, v: T) -> Result<(), aesx_status> {
    if out.is_null() {
        return Err(AESX_ERR_NULL_POINTER);
    }
    // SAFETY: non-NULL and valid for writes by the caller's contract; `write` does not drop
    // whatever the caller's memory held.
    unsafe { out.write(v) };
    Ok(())
}

/// Writes the "no result" value (NULL or 0) through an out-parameter, if it is not NULL: the
/// first thing every function with an out-parameter does.
///
/// # Safety
/// A non-NULL `out` must be valid for a write of `T`.
unsafe fn clear<T>(out: *mut T, none: T) {
    if !out.is_null() {
        // SAFETY: non-NULL and valid for writes by the caller's contract.
        unsafe { out.write(none) };
    }
}

/// # Safety
/// A non-NULL `p` must point to a live object of type `T` made by this library.
unsafe fn obj<'a, T>(p: *const T) -> Result<&'a T, aesx_status> {
    // SAFETY: the caller promises a non-NULL `p` is a live object that no one mutates now.
    unsafe { p.as_ref() }.ok_or(AESX_ERR_NULL_POINTER)
}

/// Reads a 16-byte IV or counter block.
///
/// # Safety
/// A non-NULL `p` must be readable for 16 bytes.
unsafe fn block16(p: *const u8) -> Result<[u8; 16], aesx_status> {
    if p.is_null() {
        return Err(AESX_ERR_NULL_POINTER);
    }
    // SAFETY: non-NULL and readable for 16 bytes by contract; u8 has no alignment.
    Ok(unsafe { p.cast::<[u8; 16]>().read() })
}

fn check_blocks(len: usize) -> Result<(), aesx_status> {
    if len.is_multiple_of(16) {
        Ok(())
    } else {
        Err(AESX_ERR_NOT_BLOCK_ALIGNED)
    }
}

/// A short English description of a status value (a static string; never NULL). Takes an
/// `int` so that any value is safe to pass.
#[unsafe(no_mangle)]
pub extern "C" fn aesx_status_str(status: c_int) -> *const c_char {
    let s: &'static CStr = match status {
        0 => c"ok",
        1 => c"NULL pointer argument",
        2 => c"AES key must be 16, 24 or 32 bytes",
        3 => c"data length must be a multiple of the 16-byte AES block",
        4 => c"input and output overlap without being identical",
        5 => c"unknown backend",
        6 => c"backend not available on this CPU",
        7 => c"length or stream position too large",
        8 => c"internal error in libaesx",
        9 => c"authentication failed (wrong key, nonce, associated data or tag, or modified data)",
        10 => c"GCM nonce must be at least 1 byte",
        11 => c"GCM tag length not allowed or not the key's tag length",
        12 => c"GCM stream call out of order",
        _ => c"unknown status",
    };
    s.as_ptr()
}

/// Sets `*out` to the fastest backend this CPU runs (never `AESX_BACKEND_AUTO`).
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_backend_detect(out: *mut aesx_backend) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, 0) };
    // SAFETY: forwarded caller contract.
    guard(|| unsafe { put(out, backend_id(Backend::detect())) })
}

/// `AESX_OK` if this CPU runs `backend` (`AESX_BACKEND_AUTO` always runs),
/// `AESX_ERR_BACKEND_UNAVAILABLE` if not, `AESX_ERR_UNKNOWN_BACKEND` for unknown values.
#[unsafe(no_mangle)]
pub extern "C" fn aesx_backend_check(backend: aesx_backend) -> aesx_status {
    guard(|| match backend_from_id(backend)? {
        Some(b) if !b.is_available() => Err(AESX_ERR_BACKEND_UNAVAILABLE),
        _ => Ok(()),
    })
}

/// Sets `*name` to the backend's name ("auto", "soft", "vpaes", "aesni", "vaes256",
/// "vaes512"), a static NUL-terminated string; NULL for an unknown backend.
///
/// # Safety
/// `name` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_backend_name(
    backend: aesx_backend,
    name: *mut *const c_char,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(name, std::ptr::null()) };
    guard(|| {
        let s: &'static CStr = match backend_from_id(backend)? {
            None => c"auto",
            Some(Backend::Soft) => c"soft",
            Some(Backend::Vpaes) => c"vpaes",
            Some(Backend::Aesni) => c"aesni",
            Some(Backend::Vaes256) => c"vaes256",
            Some(Backend::Vaes512) => c"vaes512",
            Some(_) => return Err(AESX_ERR_UNKNOWN_BACKEND),
        };
        // SAFETY: forwarded caller contract.
        unsafe { put(name, s.as_ptr()) }
    })
}

/// Parses a backend name (case-insensitive; "auto" gives `AESX_BACKEND_AUTO`) into `*out`.
/// Does not check availability. On failure `*out` is 0.
///
/// # Safety
/// `name` must be NULL or a NUL-terminated string; `out` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_backend_from_name(
    name: *const c_char,
    out: *mut aesx_backend,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, 0) };
    guard(|| {
        if name.is_null() || out.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        // SAFETY: non-NULL and NUL-terminated by the caller's contract.
        let s = unsafe { CStr::from_ptr(name) };
        let s = s.to_str().map_err(|_| AESX_ERR_UNKNOWN_BACKEND)?;
        let id = if s.trim().eq_ignore_ascii_case("auto") {
            AESX_BACKEND_AUTO
        } else {
            backend_id(s.parse::<Backend>().map_err(error_status)?)
        };
        // SAFETY: `out` checked non-NULL; valid for a write by contract.
        unsafe { put(out, id) }
    })
}

/// Chooses the backend used by `AESX_BACKEND_AUTO` and by the SuiteB_FFI functions, for the
/// whole process (`AESX_BACKEND_AUTO` restores detection). For tests and benchmarks; the
/// default is the fastest available. Fails, changing nothing, if the backend is unknown or
/// unavailable.
#[unsafe(no_mangle)]
pub extern "C" fn aesx_set_default_backend(backend: aesx_backend) -> aesx_status {
    guard(|| {
        if let Some(b) = backend_from_id(backend)?
            && !b.is_available()
        {
            return Err(AESX_ERR_BACKEND_UNAVAILABLE);
        }
        set_default_backend(backend);
        Ok(())
    })
}

/// Sets `*out` to the backend `AESX_BACKEND_AUTO` currently means (never `AUTO` itself).
///
/// # Safety
/// `out` must be NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_default_backend(out: *mut aesx_backend) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, 0) };
    // SAFETY: forwarded caller contract.
    guard(|| unsafe { put(out, backend_id(default_backend())) })
}

/// Expands a 16-, 24- or 32-byte key for `backend` (`AESX_BACKEND_AUTO` for the default) and
/// stores a new context in `*out` (set to NULL on failure). Free it with `aesx_cipher_free`.
///
/// # Safety
/// `key` must be NULL or readable for `key_len` bytes; `out` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_cipher_new(
    key: *const u8,
    key_len: usize,
    backend: aesx_backend,
    out: *mut *mut aesx_cipher,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, std::ptr::null_mut()) };
    guard(|| {
        if out.is_null() || key.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        if !matches!(key_len, 16 | 24 | 32) {
            return Err(AESX_ERR_KEY_LENGTH);
        }
        let b = backend_from_id(backend)?.unwrap_or_else(default_backend);
        // SAFETY: `key` is non-NULL and readable for `key_len` (at most 32) bytes by contract.
        let key = unsafe { std::slice::from_raw_parts(key, key_len) };
        let aes = Aes::with_backend(key, b).map_err(error_status)?;
        let ctx = Box::new(aesx_cipher { aes: Arc::new(aes) });
        // SAFETY: as above.
        unsafe { out.write(Box::into_raw(ctx)) };
        Ok(())
    })
}

/// Frees a context made by `aesx_cipher_new` and zeroizes its key schedule (unless an
/// `aesx_ctr` still uses it; then the last `aesx_ctr_free` does). `NULL` is a no-op. Always
/// returns `AESX_OK`.
///
/// # Safety
/// `cipher` must be NULL or a live context from `aesx_cipher_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_cipher_free(cipher: *mut aesx_cipher) -> aesx_status {
    guard(|| {
        if !cipher.is_null() {
            // SAFETY: made by `Box::into_raw` in `aesx_cipher_new`, freed once (contract).
            drop(unsafe { Box::from_raw(cipher) });
        }
        Ok(())
    })
}

/// Sets `*out` to the backend the context runs on (0 on failure).
///
/// # Safety
/// `cipher` must be NULL or a live context; `out` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_cipher_backend(
    cipher: *const aesx_cipher,
    out: *mut aesx_backend,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, 0) };
    guard(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { obj(cipher) }?;
        // SAFETY: forwarded caller contract.
        unsafe { put(out, backend_id(c.aes.backend())) }
    })
}

/// Sets `*out` to the key size in bits (128, 192 or 256; 0 on failure).
///
/// # Safety
/// `cipher` must be NULL or a live context; `out` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_cipher_key_bits(
    cipher: *const aesx_cipher,
    out: *mut u32,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, 0) };
    guard(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { obj(cipher) }?;
        // SAFETY: forwarded caller contract.
        unsafe { put(out, c.aes.key_bits()) }
    })
}

/// ECB-encrypts `len` bytes (a multiple of 16) from `in` to `out` (`in == out` for in place).
///
/// # Safety
/// `cipher` NULL or live; `in` NULL or readable and `out` NULL or writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ecb_encrypt(
    cipher: *const aesx_cipher,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { obj(cipher) }?;
        check_blocks(len)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(r#in, out, len, |buf| {
                c.aes.try_encrypt_blocks(buf).map_err(error_status)
            })
        }
    })
}

/// ECB-decrypts `len` bytes (a multiple of 16) from `in` to `out` (`in == out` for in place).
///
/// # Safety
/// `cipher` NULL or live; `in` NULL or readable and `out` NULL or writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ecb_decrypt(
    cipher: *const aesx_cipher,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { obj(cipher) }?;
        check_blocks(len)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(r#in, out, len, |buf| {
                c.aes.try_decrypt_blocks(buf).map_err(error_status)
            })
        }
    })
}

/// Shared body of the CBC calls: reads the IV, runs the mode, writes the chaining value back.
///
/// # Safety
/// As for `aesx_cbc_encrypt`.
unsafe fn cbc(
    cipher: *const aesx_cipher,
    iv: *mut u8,
    input: *const u8,
    output: *mut u8,
    len: usize,
    decrypt: bool,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { obj(cipher) }?;
        // SAFETY: forwarded caller contract.
        let mut chain = unsafe { block16(iv) }?;
        check_blocks(len)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(input, output, len, |buf| {
                chain = if decrypt {
                    let mut m = aesx::CbcDecryptor::new(&c.aes, &chain);
                    m.decrypt_blocks(buf).map_err(error_status)?;
                    m.iv()
                } else {
                    let mut m = aesx::CbcEncryptor::new(&c.aes, &chain);
                    m.encrypt_blocks(buf).map_err(error_status)?;
                    m.iv()
                };
                Ok(())
            })
        }?;
        // SAFETY: `iv` is non-NULL (checked by `block16`) and writable for 16 bytes by
        // contract. Written after the data, so an `iv` that aliases the data is well defined.
        unsafe { iv.cast::<[u8; 16]>().write(chain) };
        Ok(())
    })
}

/// CBC-encrypts `len` bytes (a multiple of 16) from `in` to `out` (`in == out` for in place).
/// `iv` (16 bytes) is read as the initial chaining value and, on success, overwritten with the
/// last ciphertext block, so consecutive calls continue one CBC stream.
///
/// # Safety
/// `cipher` NULL or live; `iv` NULL or readable and writable for 16 bytes; `in` NULL or
/// readable and `out` NULL or writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_cbc_encrypt(
    cipher: *const aesx_cipher,
    iv: *mut u8,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { cbc(cipher, iv, r#in, out, len, false) }
}

/// CBC-decrypts `len` bytes (a multiple of 16) from `in` to `out` (`in == out` for in place).
/// `iv` is updated as for `aesx_cbc_encrypt` (to the last ciphertext block consumed).
///
/// # Safety
/// As for `aesx_cbc_encrypt`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_cbc_decrypt(
    cipher: *const aesx_cipher,
    iv: *mut u8,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { cbc(cipher, iv, r#in, out, len, true) }
}

/// Position after processing `len` bytes from `pos`, if it stays within 2^64 - 1.
fn ctr_end(pos: u64, len: usize) -> Result<u64, aesx_status> {
    u64::try_from(len)
        .ok()
        .and_then(|l| pos.checked_add(l))
        .ok_or(AESX_ERR_LENGTH_LIMIT)
}

/// Stateless CTR: XORs `len` bytes from `in` into `out` with the keystream starting `pos`
/// bytes into the stream whose first counter block is `iv` (16 bytes, a 128-bit big-endian
/// integer incremented mod 2^128). Encryption and decryption are the same call. Any split of a
/// message into (pos, piece) calls gives the same bytes as one call.
///
/// # Safety
/// `cipher` NULL or live; `iv` NULL or readable for 16 bytes; `in` NULL or readable and `out`
/// NULL or writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ctr_xor_at(
    cipher: *const aesx_cipher,
    iv: *const u8,
    pos: u64,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: forwarded caller contract.
        let c = unsafe { obj(cipher) }?;
        // SAFETY: forwarded caller contract.
        let iv = unsafe { block16(iv) }?;
        ctr_end(pos, len)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(r#in, out, len, |buf| {
                c.aes.ctr_xor_at(&iv, pos, buf);
                Ok(())
            })
        }
    })
}

/// Starts a CTR stream at position 0 with first counter block `iv` (16 bytes, 128-bit
/// big-endian, incremented mod 2^128) and stores it in `*out` (NULL on failure). The stream
/// holds its own reference to the key: `cipher` may be freed before the stream.
///
/// # Safety
/// `cipher` NULL or live; `iv` NULL or readable for 16 bytes; `out` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ctr_new(
    cipher: *const aesx_cipher,
    iv: *const u8,
    out: *mut *mut aesx_ctr,
) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, std::ptr::null_mut()) };
    guard(|| {
        if out.is_null() {
            return Err(AESX_ERR_NULL_POINTER);
        }
        // SAFETY: forwarded caller contract.
        let c = unsafe { obj(cipher) }?;
        // SAFETY: forwarded caller contract.
        let iv = unsafe { block16(iv) }?;
        let ctr = Box::new(aesx_ctr {
            aes: Arc::clone(&c.aes),
            iv,
            pos: 0,
        });
        // SAFETY: as above.
        unsafe { out.write(Box::into_raw(ctr)) };
        Ok(())
    })
}

/// Encrypts or decrypts the next `len` bytes of the stream (any length, any chunking) from
/// `in` to `out` (`in == out` for in place) and advances the position by `len`.
///
/// # Safety
/// `ctr` NULL or a live stream not used concurrently; `in` NULL or readable and `out` NULL or
/// writable for `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ctr_xor(
    ctr: *mut aesx_ctr,
    r#in: *const u8,
    out: *mut u8,
    len: usize,
) -> aesx_status {
    guard(|| {
        // SAFETY: a non-NULL `ctr` is a live stream that no one else uses now (contract).
        let s = unsafe { ctr.as_mut() }.ok_or(AESX_ERR_NULL_POINTER)?;
        let end = ctr_end(s.pos, len)?;
        // SAFETY: forwarded caller contract.
        unsafe {
            with_inout(r#in, out, len, |buf| {
                s.aes.ctr_xor_at(&s.iv, s.pos, buf);
                Ok(())
            })
        }?;
        s.pos = end;
        Ok(())
    })
}

/// Moves the stream to byte position `pos`.
///
/// # Safety
/// `ctr` NULL or a live stream not used concurrently.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ctr_seek(ctr: *mut aesx_ctr, pos: u64) -> aesx_status {
    guard(|| {
        // SAFETY: as in `aesx_ctr_xor`.
        let s = unsafe { ctr.as_mut() }.ok_or(AESX_ERR_NULL_POINTER)?;
        s.pos = pos;
        Ok(())
    })
}

/// Sets `*out` to the stream's byte position (0 on failure).
///
/// # Safety
/// `ctr` NULL or a live stream; `out` NULL or valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ctr_position(ctr: *const aesx_ctr, out: *mut u64) -> aesx_status {
    // SAFETY: forwarded caller contract.
    unsafe { clear(out, 0) };
    guard(|| {
        // SAFETY: forwarded caller contract.
        let s = unsafe { obj(ctr) }?;
        // SAFETY: forwarded caller contract.
        unsafe { put(out, s.pos) }
    })
}

/// Frees a stream (NULL is a no-op); drops its key reference, zeroizing the schedule if it
/// was the last. Always returns `AESX_OK`.
///
/// # Safety
/// `ctr` must be NULL or a live stream from `aesx_ctr_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn aesx_ctr_free(ctr: *mut aesx_ctr) -> aesx_status {
    guard(|| {
        if !ctr.is_null() {
            // SAFETY: made by `Box::into_raw` in `aesx_ctr_new`, freed once (contract).
            drop(unsafe { Box::from_raw(ctr) });
        }
        Ok(())
    })
}

//! AES-128/192/256-GCM: its own context type and dispatch table, with the default provider's
//! semantics (`ciphercommon_gcm.c` in OpenSSL 3.0), the GCM work done by `aesx::AesGcm`:
//!
//! - the IV is buffered at init and the GCM message starts at the first use (AAD, data,
//!   `tlsivgen`); init with only a key keeps the IV; `ivlen` may be set before the IV;
//! - AAD through update with a NULL output; data through update; final computes the tag
//!   (encrypt) or checks the tag set with `tag` (decrypt: failure returns 0, so `EVP_Cipher`,
//!   which OpenSSH uses, returns -1 on a forged packet, and `EVP_DecryptFinal_ex` 0);
//! - `OSSL_FUNC_CIPHER_CIPHER` is implemented, with `(NULL, in)` as AAD and `(NULL, NULL, 0)` as
//!   final, exactly as OpenSSH's `aes*-gcm@openssh.com` drive it;
//! - TLS 1.2 (`tlsaad` with the 13-byte record header, `tlsivfixed` with the 4-byte implicit
//!   part then a random or received invocation field, whole records in place:
//!   explicit IV || payload || tag) and OpenSSH's IV handling (`tlsivfixed` with length -1 =
//!   the whole IV, `tlsivgen` returns the IV's tail and increments its last 8 bytes,
//!   `tlsivinv` sets the invocation field on decryption).
//!
//! Differences: decryption accepts the tag lengths SP 800-38D allows (16, 15, 14, 13, 12, 8
//! and 4 bytes; OpenSSL also accepts 1-3, 5-7 and 9-11, which no TLS or SSH suite uses: with
//! aesx such a tag fails at final, never passes); a context in the middle of a message cannot
//! be copied (`dupctx` fails; copies between messages work).

use core::ffi::{CStr, c_int, c_void};
use core::ptr;
use std::sync::Arc;

use aesx::{AesGcm, GcmDecryptor, GcmEncryptor};
use zeroize::Zeroize;

use crate::error::{Reason, guard, raise, status};
use crate::ffi::*;
use crate::params::Params;
use crate::stats;

/// `GCM_IV_MAX_SIZE` (OpenSSL: 1024 bits).
const IV_MAX: usize = 128;
const TAG_LEN: usize = 16;
const TLS_AAD_LEN: usize = 13;
const TLS_EXPLICIT_IV: usize = 8;
const TLS_FIXED_IV: usize = 4;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum IvState {
    Uninitialised,
    /// Set but no message started with it yet.
    Buffered,
    /// A message runs with it.
    Copied,
    /// Its message ended (final): it must not be used again.
    Finished,
}

enum Stream {
    Enc(GcmEncryptor<Arc<AesGcm>>),
    Dec(GcmDecryptor<Arc<AesGcm>>),
}

pub struct GcmCtx {
    /// Stats index (9, 10, 11).
    alg: usize,
    backend: aesx::Backend,
    keylen: usize,
    key: Option<Arc<AesGcm>>,
    /// The bytes `key` was built from (zeroized on drop): a re-init with the same key keeps
    /// the schedule and GHASH powers instead of rebuilding them (`openssl speed` and some
    /// programs pass the key with every message).
    key_bytes: [u8; 32],
    enc: bool,
    ivlen: usize,
    iv: [u8; IV_MAX],
    iv_state: IvState,
    iv_gen: bool,
    iv_gen_rand: bool,
    /// Decrypt: the expected tag's length once set; encrypt: 16 once computed.
    taglen: Option<usize>,
    tag: [u8; TAG_LEN],
    tls_aad: Option<[u8; TLS_AAD_LEN]>,
    tls_aad_pad: usize,
    tls_enc_records: u64,
    stream: Option<Stream>,
    pending: stats::Pending,
}

impl Drop for GcmCtx {
    fn drop(&mut self) {
        self.pending.flush(self.alg);
        self.iv.zeroize();
        self.tag.zeroize();
        self.key_bytes.zeroize();
        if let Some(a) = &mut self.tls_aad {
            a.zeroize();
        }
    }
}

fn random(buf: &mut [u8]) -> Result<(), Reason> {
    if crate::random_bytes(buf) {
        Ok(())
    } else {
        Err(Reason::OP_FAILED)
    }
}

/// Whether two keys are equal, without a data-dependent branch or early exit while comparing.
/// (Whether the schedule is then rebuilt shows in the time the init takes: that tells only
/// whether a context got the key it already had.)
fn same_key(a: &[u8], b: &[u8]) -> bool {
    let mut d = 0u8;
    for (x, y) in a.iter().zip(b) {
        d |= x ^ y;
    }
    a.len() == b.len() && core::hint::black_box(d) == 0
}

/// Adds 1 to the big-endian 64-bit integer in `c` (OpenSSL's `ctr64_inc`).
fn ctr64_inc(c: &mut [u8]) {
    let v = u64::from_be_bytes(c[..8].try_into().unwrap()).wrapping_add(1);
    c[..8].copy_from_slice(&v.to_be_bytes());
}

/// Whether `len` bytes at `input` and at `out` are separate, non-overlapping memory (and
/// neither is NULL).
fn disjoint(input: *const u8, out: *mut u8, len: usize) -> bool {
    let (i, o) = (input as usize, out as usize);
    i != 0
        && o != 0
        && (i.checked_add(len).is_some_and(|e| e <= o)
            || o.checked_add(len).is_some_and(|e| e <= i))
}

impl GcmCtx {
    fn new(alg: usize, backend: aesx::Backend) -> GcmCtx {
        GcmCtx {
            alg,
            backend,
            keylen: 16 + 8 * (alg - 9),
            key: None,
            key_bytes: [0; 32],
            enc: false,
            ivlen: 12,
            iv: [0; IV_MAX],
            iv_state: IvState::Uninitialised,
            iv_gen: false,
            iv_gen_rand: false,
            taglen: None,
            tag: [0; TAG_LEN],
            tls_aad: None,
            tls_aad_pad: 0,
            tls_enc_records: 0,
            stream: None,
            pending: stats::Pending::default(),
        }
    }

    fn dup(&self) -> Result<GcmCtx, Reason> {
        if self.stream.is_some() {
            // aesx's GCM streams cannot be copied halfway through a message.
            return Err(Reason::OP_FAILED);
        }
        Ok(GcmCtx {
            key: self.key.clone(),
            stream: None,
            pending: stats::Pending::default(),
            ..*self
        })
    }

    fn init(
        &mut self,
        enc: bool,
        key: Option<&[u8]>,
        iv: Option<&[u8]>,
        params: Params,
    ) -> Result<(), Reason> {
        self.enc = enc;
        self.pending.flush(self.alg);
        stats::bump(
            self.alg,
            if enc {
                stats::Kind::EncInit
            } else {
                stats::Kind::DecInit
            },
            1,
        );
        if let Some(iv) = iv {
            if iv.is_empty() || iv.len() > IV_MAX {
                return Err(Reason::IV_LEN);
            }
            self.iv_gen_rand = false;
            self.ivlen = iv.len();
            self.iv[..iv.len()].copy_from_slice(iv);
            self.iv_state = IvState::Buffered;
        }
        if let Some(key) = key {
            if key.len() != self.keylen {
                return Err(Reason::KEY_LEN);
            }
            self.stream = None;
            self.tls_enc_records = 0;
            if self.key.is_some() && same_key(&self.key_bytes[..key.len()], key) {
                // The same key again: its schedule and GHASH powers are already here.
                return self.set_params(params);
            }
            let k = AesGcm::with_backend(key, self.backend).map_err(|_| Reason::KEY_LEN)?;
            self.key_bytes[..key.len()].copy_from_slice(key);
            // Re-keying (every record in some programs): reuse the allocation when no copy of
            // this context shares the key.
            match self.key.as_mut().and_then(Arc::get_mut) {
                Some(slot) => *slot = k,
                None => self.key = Some(Arc::new(k)),
            }
            self.tls_enc_records = 0;
        }
        self.set_params(params)
    }

    /// Starts a message with the current IV (OpenSSL's `hw->setiv`).
    fn start(&mut self) -> Result<(), Reason> {
        let key = self.key.clone().ok_or(Reason::NO_KEY_SET)?;
        let nonce = &self.iv[..self.ivlen];
        self.stream = Some(if self.enc {
            Stream::Enc(GcmEncryptor::new(key, nonce).map_err(|_| Reason::IV_LEN)?)
        } else {
            Stream::Dec(GcmDecryptor::new(key, nonce).map_err(|_| Reason::IV_LEN)?)
        });
        Ok(())
    }

    /// `tlsivgen`: start a message with the IV, hand out its last `n` bytes, then count the
    /// invocation field (the IV's last 8 bytes) up by one.
    fn ivgen(&mut self, out: &mut [u8]) -> Result<(), Reason> {
        // A 0-byte buffer (OpenSSL writes the whole IV past its end) or an IV shorter than the
        // 8-byte invocation field (OpenSSL counts bytes before its IV buffer): aesx refuses.
        if !self.iv_gen || self.key.is_none() || out.is_empty() || self.ivlen < 8 {
            return Err(Reason::SILENT);
        }
        self.start()?;
        let n = if out.len() > self.ivlen {
            self.ivlen
        } else {
            out.len()
        };
        out[..n].copy_from_slice(&self.iv[self.ivlen - n..self.ivlen]);
        ctr64_inc(&mut self.iv[self.ivlen - 8..self.ivlen]);
        self.iv_state = IvState::Copied;
        Ok(())
    }

    /// `tlsivinv`: the invocation field received with a record (decryption).
    fn ivinv(&mut self, inv: &[u8]) -> Result<(), Reason> {
        if !self.iv_gen || self.key.is_none() || self.enc || inv.len() > self.ivlen {
            return Err(Reason::SILENT);
        }
        let l = self.ivlen;
        self.iv[l - inv.len()..l].copy_from_slice(inv);
        self.start()?;
        self.iv_state = IvState::Copied;
        Ok(())
    }

    /// `tlsivfixed`: the fixed IV part (TLS: 4 bytes; OpenSSH: length -1, the whole IV).
    fn iv_fixed(&mut self, data: *const u8, len: usize) -> Result<(), Reason> {
        if data.is_null() {
            return Err(Reason::GET_PARAM);
        }
        if len == usize::MAX {
            // SAFETY: with length -1 the caller passes a whole IV (OpenSSH's contract with
            // OpenSSL: `EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_SET_IV_FIXED, -1, iv)`).
            let iv = unsafe { core::slice::from_raw_parts(data, self.ivlen) };
            self.iv[..self.ivlen].copy_from_slice(iv);
            self.iv_gen = true;
            self.iv_state = IvState::Buffered;
            return Ok(());
        }
        if len < TLS_FIXED_IV || len > self.ivlen || self.ivlen - len < TLS_EXPLICIT_IV {
            return Err(Reason::GET_PARAM);
        }
        // SAFETY: an OCTET_STRING parameter of `len` bytes.
        let fixed = unsafe { core::slice::from_raw_parts(data, len) };
        self.iv[..len].copy_from_slice(fixed);
        if self.enc {
            random(&mut self.iv[len..self.ivlen]).map_err(|_| Reason::GET_PARAM)?;
            self.iv_gen_rand = true;
        }
        self.iv_gen = true;
        self.iv_state = IvState::Buffered;
        Ok(())
    }

    fn set_params(&mut self, params: Params) -> Result<(), Reason> {
        if params.is_empty() {
            return Ok(());
        }
        if let Some(p) = params.locate(c"tag") {
            let t = p.get_octets().ok_or(Reason::GET_PARAM)?;
            if t.len() > TAG_LEN {
                return Err(Reason::GET_PARAM);
            }
            if t.is_empty() || self.enc {
                return Err(Reason(PROV_R_INVALID_TAG));
            }
            self.tag[..t.len()].copy_from_slice(t);
            self.taglen = Some(t.len());
        }
        if let Some(p) = params.locate(c"ivlen") {
            let n = p.get_size_t().ok_or(Reason::GET_PARAM)?;
            if n == 0 || n > IV_MAX {
                return Err(Reason::IV_LEN);
            }
            if n != self.ivlen {
                if self.iv_state != IvState::Uninitialised {
                    self.iv_state = IvState::Finished;
                }
                self.ivlen = n;
            }
        }
        if let Some(p) = params.locate(c"tlsaad") {
            let a = p.get_octets().ok_or(Reason::GET_PARAM)?;
            self.tls_aad_pad = self.tls_init(a).ok_or(Reason(PROV_R_INVALID_AAD))?;
        }
        if let Some(p) = params.locate(c"tlsivfixed") {
            let (data, len) = p.raw_octets().ok_or(Reason::GET_PARAM)?;
            self.iv_fixed(data, len)?;
        }
        if let Some(p) = params.locate(c"tlsivinv") {
            let v = p
                .get_octets()
                .filter(|v| !v.is_empty())
                .ok_or(Reason::SILENT)?;
            self.ivinv(v)?;
        }
        Ok(())
    }

    /// `tlsaad`: keep the record header, with its length corrected for the explicit IV and
    /// (decrypting) the tag. Returns the tag length libssl must add to the record.
    fn tls_init(&mut self, aad: &[u8]) -> Option<usize> {
        let mut a: [u8; TLS_AAD_LEN] = aad.try_into().ok()?;
        self.tls_aad = Some(a);
        let mut len = u16::from_be_bytes([a[11], a[12]]) as usize;
        len = len.checked_sub(TLS_EXPLICIT_IV)?;
        if !self.enc {
            len = len.checked_sub(TAG_LEN)?;
        }
        a[11..].copy_from_slice(&(len as u16).to_be_bytes());
        self.tls_aad = Some(a);
        Some(TAG_LEN)
    }

    fn get_params(&mut self, params: Params) -> Result<(), Reason> {
        let ok = |b: bool| if b { Ok(()) } else { Err(Reason::SET_PARAM) };
        if let Some(p) = params.locate(c"ivlen") {
            ok(p.set_size_t(self.ivlen))?;
        }
        if let Some(p) = params.locate(c"keylen") {
            ok(p.set_size_t(self.keylen))?;
        }
        if let Some(p) = params.locate(c"taglen") {
            ok(p.set_size_t(self.taglen.unwrap_or(TAG_LEN)))?;
        }
        for key in [c"iv", c"updated-iv"] {
            if let Some(p) = params.locate(key) {
                if self.iv_state == IvState::Uninitialised {
                    return Err(Reason::SILENT);
                }
                if p.data_size() < self.ivlen {
                    return Err(Reason::IV_LEN);
                }
                ok(p.set_octets_or_ptr(self.iv.as_ptr(), self.ivlen))?;
            }
        }
        if let Some(p) = params.locate(c"tlsaadpad") {
            ok(p.set_size_t(self.tls_aad_pad))?;
        }
        if let Some(p) = params.locate(c"tag") {
            let n = p.data_size();
            if n == 0 || n > TAG_LEN || !self.enc || self.taglen.is_none() {
                return Err(Reason(PROV_R_INVALID_TAG));
            }
            let t = self.tag;
            ok(p.set_octets(&t[..n]))?;
        }
        if let Some(p) = params.locate(c"tlsivgen") {
            let out = p.octets_mut().ok_or(Reason::SILENT)?;
            self.ivgen(out)?;
        }
        Ok(())
    }

    /// What every data call goes through (OpenSSL's `gcm_cipher_internal`): `out` NULL with
    /// input = AAD; no input = final. Returns the output length.
    fn cipher_internal(
        &mut self,
        out: *mut u8,
        input: *const u8,
        len: usize,
    ) -> Result<usize, Reason> {
        if self.tls_aad.is_some() {
            return self.tls_cipher(out, input, len);
        }
        if self.key.is_none() || self.iv_state == IvState::Finished {
            return Err(Reason::SILENT);
        }
        if self.iv_state == IvState::Uninitialised {
            if !self.enc || self.ivlen < 12 {
                return Err(Reason::SILENT);
            }
            let l = self.ivlen;
            random(&mut self.iv[..l])?;
            self.iv_gen_rand = true;
            self.iv_state = IvState::Buffered;
        }
        if self.iv_state == IvState::Buffered {
            self.start()?;
            self.iv_state = IvState::Copied;
        }
        if !input.is_null() {
            let stream = self.stream.as_mut().ok_or(Reason::SILENT)?;
            if out.is_null() {
                // SAFETY: OpenSSL passes `len` readable bytes at `input`.
                let aad = unsafe { core::slice::from_raw_parts(input, len) };
                let r = match stream {
                    Stream::Enc(s) => s.aad(aad),
                    Stream::Dec(s) => s.aad(aad),
                };
                r.map_err(|_| Reason::SILENT)?;
            } else if disjoint(input, out, len) {
                // Separate buffers (OpenSSH's packets): read one, write the other, no copy.
                // SAFETY: `input` holds `len` readable bytes and `out` at least `len` writable
                // ones (the callers check outsize); the two ranges were just found disjoint.
                let (src, dst) = unsafe {
                    (
                        core::slice::from_raw_parts(input, len),
                        core::slice::from_raw_parts_mut(out, len),
                    )
                };
                let r = match stream {
                    Stream::Enc(s) => s.update_b2b(src, dst),
                    Stream::Dec(s) => s.update_b2b(src, dst),
                };
                r.map_err(|_| Reason::SILENT)?;
            } else {
                // SAFETY: `out` holds at least `len` writable bytes (the callers check outsize);
                // ptr::copy allows in == out.
                let data = unsafe {
                    if !ptr::eq(input, out) {
                        ptr::copy(input, out, len);
                    }
                    core::slice::from_raw_parts_mut(out, len)
                };
                let r = match stream {
                    Stream::Enc(s) => s.update(data),
                    Stream::Dec(s) => s.update(data),
                };
                r.map_err(|_| Reason::SILENT)?;
            }
            return Ok(len);
        }
        // Final.
        if !self.enc && self.taglen.is_none() {
            return Err(Reason(PROV_R_TAG_NOT_SET));
        }
        let stream = self.stream.take().ok_or(Reason::SILENT)?;
        self.iv_state = IvState::Finished;
        match stream {
            Stream::Enc(s) => {
                self.tag.copy_from_slice(s.finish().as_ref());
                self.taglen = Some(TAG_LEN);
            }
            Stream::Dec(s) => {
                let n = self.taglen.unwrap_or(TAG_LEN);
                // The tag check's result is public; aesx compares in constant time. A tag of
                // 16, 15, 14, 13, 12, 8 or 4 bytes is checked against the computed tag's
                // leading bytes; other lengths fail (SP 800-38D allows no others).
                s.finish_truncated(&self.tag[..n])
                    .map_err(|_| Reason::SILENT)?;
            }
        }
        Ok(0)
    }

    /// A whole TLS 1.2 record in place: explicit IV (8) || payload || tag (16).
    fn tls_cipher(&mut self, out: *mut u8, input: *const u8, len: usize) -> Result<usize, Reason> {
        let r = self.tls_record(out, input, len);
        self.iv_state = IvState::Finished;
        self.tls_aad = None;
        self.stream = None;
        r
    }

    fn tls_record(&mut self, out: *mut u8, input: *const u8, len: usize) -> Result<usize, Reason> {
        let key = self.key.clone().ok_or(Reason::SILENT)?;
        if out.is_null() || !ptr::eq(input, out) || len < TLS_EXPLICIT_IV + TAG_LEN {
            return Err(Reason::SILENT);
        }
        if self.enc {
            self.tls_enc_records = self.tls_enc_records.wrapping_add(1);
            if self.tls_enc_records == 0 {
                return Err(Reason(PROV_R_TOO_MANY_RECORDS));
            }
        }
        // SAFETY: libssl passes the record in place, `len` bytes.
        let rec = unsafe { core::slice::from_raw_parts_mut(out, len) };
        let (explicit, rest) = rec.split_at_mut(TLS_EXPLICIT_IV);
        let nonce: [u8; IV_MAX] = {
            if self.enc {
                self.ivgen(explicit)?;
                // ivgen counted the invocation field up: the record used the value before.
                let mut n = self.iv;
                let l = self.ivlen;
                n[l - TLS_EXPLICIT_IV..l].copy_from_slice(explicit);
                n
            } else {
                self.ivinv(explicit)?;
                self.iv
            }
        };
        let nonce = &nonce[..self.ivlen];
        let aad = self.tls_aad.ok_or(Reason::SILENT)?;
        // Once the IV is in place OpenSSL's record path sets the tag length to 16 (whatever
        // was set before, even if the tag then fails); `taglen` reads report that (found by
        // the `provider` fuzz target).
        self.taglen = Some(TAG_LEN);
        let plen = len - TLS_EXPLICIT_IV - TAG_LEN;
        let (payload, tag) = rest.split_at_mut(plen);
        if self.enc {
            let t = key
                .seal_in_place_detached(nonce, &aad, payload)
                .map_err(|_| Reason::SILENT)?;
            tag.copy_from_slice(t.as_ref());
            Ok(len)
        } else {
            // On a bad tag aesx zeroes the payload (OpenSSL cleanses it too).
            key.open_in_place_detached(nonce, &aad, payload, tag)
                .map_err(|_| Reason::SILENT)?;
            Ok(plen)
        }
    }
}

// ---------------------------------------------------------------------------------------
// Entry points.

/// # Safety
/// `p` is NULL or a context made by this module.
unsafe fn ctx_mut<'a>(p: *mut c_void) -> Result<&'a mut GcmCtx, Reason> {
    // SAFETY: caller's contract.
    unsafe { (p as *mut GcmCtx).as_mut() }.ok_or(Reason::NULL)
}

unsafe extern "C" fn newctx<const ALG: usize>(provctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        Box::into_raw(Box::new(GcmCtx::new(ALG, crate::backend_of(provctx)))).cast()
    })
}

unsafe extern "C" fn freectx(vctx: *mut c_void) {
    guard((), || {
        if !vctx.is_null() {
            // SAFETY: made by Box::into_raw here; freed once.
            drop(unsafe { Box::from_raw(vctx as *mut GcmCtx) });
        }
    })
}

unsafe extern "C" fn dupctx(vctx: *mut c_void) -> *mut c_void {
    guard(ptr::null_mut(), || {
        // SAFETY: one of our contexts.
        match unsafe { ctx_mut(vctx) }.and_then(|c| c.dup()) {
            Ok(d) => Box::into_raw(Box::new(d)).cast(),
            Err(r) => {
                raise(r);
                ptr::null_mut()
            }
        }
    })
}

/// # Safety
/// As OpenSSL calls `OSSL_FUNC_cipher_encrypt_init`.
unsafe fn init_common(
    vctx: *mut c_void,
    enc: bool,
    key: *const u8,
    keylen: usize,
    iv: *const u8,
    ivlen: usize,
    params: *const OsslParam,
) -> c_int {
    status(|| {
        // SAFETY: our context, key/IV of the given lengths or NULL, a terminated array.
        unsafe {
            let ctx = ctx_mut(vctx)?;
            let key = (!key.is_null()).then(|| core::slice::from_raw_parts(key, keylen));
            let iv = (!iv.is_null()).then(|| core::slice::from_raw_parts(iv, ivlen));
            ctx.init(enc, key, iv, Params::new(params))
        }
    })
}

unsafe extern "C" fn einit(
    vctx: *mut c_void,
    key: *const u8,
    keylen: usize,
    iv: *const u8,
    ivlen: usize,
    params: *const OsslParam,
) -> c_int {
    // SAFETY: forwarded from OpenSSL.
    unsafe { init_common(vctx, true, key, keylen, iv, ivlen, params) }
}

unsafe extern "C" fn dinit(
    vctx: *mut c_void,
    key: *const u8,
    keylen: usize,
    iv: *const u8,
    ivlen: usize,
    params: *const OsslParam,
) -> c_int {
    // SAFETY: forwarded from OpenSSL.
    unsafe { init_common(vctx, false, key, keylen, iv, ivlen, params) }
}

unsafe extern "C" fn update(
    vctx: *mut c_void,
    out: *mut u8,
    outl: *mut usize,
    outsize: usize,
    input: *const u8,
    inl: usize,
) -> c_int {
    status(|| {
        if outl.is_null() {
            return Err(Reason::NULL);
        }
        // SAFETY: our context.
        let ctx = unsafe { ctx_mut(vctx) }?;
        ctx.pending.add(ctx.alg, inl);
        if inl == 0 {
            // SAFETY: checked non-NULL.
            unsafe { *outl = 0 };
            return Ok(());
        }
        if input.is_null() {
            return Err(Reason::NULL);
        }
        if outsize < inl {
            return Err(Reason::OUT_SMALL);
        }
        let r = ctx.cipher_internal(out, input, inl);
        // SAFETY: checked non-NULL.
        unsafe { *outl = *r.as_ref().unwrap_or(&0) };
        r.map(|_| ()).map_err(|e| {
            if e != Reason::SILENT {
                raise(e);
            }
            Reason::OP_FAILED
        })
    })
}

unsafe extern "C" fn final_(
    vctx: *mut c_void,
    _out: *mut u8,
    outl: *mut usize,
    _outsize: usize,
) -> c_int {
    status(|| {
        if outl.is_null() {
            return Err(Reason::NULL);
        }
        // SAFETY: our context.
        let ctx = unsafe { ctx_mut(vctx) }?;
        ctx.pending.add(ctx.alg, 0);
        ctx.cipher_internal(ptr::null_mut(), ptr::null(), 0)?;
        // SAFETY: checked non-NULL.
        unsafe { *outl = 0 };
        Ok(())
    })
}

/// `EVP_Cipher`: 0 here becomes -1 there; OpenSSH rejects a packet only on a negative result,
/// so a bad tag must fail this call.
unsafe extern "C" fn cipher(
    vctx: *mut c_void,
    out: *mut u8,
    outl: *mut usize,
    outsize: usize,
    input: *const u8,
    inl: usize,
) -> c_int {
    status(|| {
        if outl.is_null() {
            return Err(Reason::NULL);
        }
        // SAFETY: our context.
        let ctx = unsafe { ctx_mut(vctx) }?;
        ctx.pending.add(ctx.alg, inl);
        if outsize < inl {
            return Err(Reason::OUT_SMALL);
        }
        if input.is_null() && inl != 0 {
            return Err(Reason::NULL);
        }
        // (A TLS record with a NULL output fails inside, which also ends the record's
        // state, as OpenSSL does.)
        ctx.cipher_internal(out, input, inl)?;
        // SAFETY: checked non-NULL.
        unsafe { *outl = inl };
        Ok(())
    })
}

unsafe extern "C" fn get_ctx_params(vctx: *mut c_void, params: *mut OsslParam) -> c_int {
    status(|| {
        // SAFETY: our context and a terminated (or NULL) array.
        unsafe { ctx_mut(vctx)?.get_params(Params::new(params)) }
    })
}

unsafe extern "C" fn set_ctx_params(vctx: *mut c_void, params: *const OsslParam) -> c_int {
    status(|| {
        // SAFETY: our context and a terminated (or NULL) array.
        unsafe { ctx_mut(vctx)?.set_params(Params::new(params)) }
    })
}

unsafe extern "C" fn get_params<const ALG: usize>(params: *mut OsslParam) -> c_int {
    status(|| {
        // SAFETY: a terminated (or NULL) array.
        let ps = unsafe { Params::new(params) };
        let ok = |b: bool| if b { Ok(()) } else { Err(Reason::SET_PARAM) };
        if let Some(p) = ps.locate(c"mode") {
            ok(p.set_uint(EVP_CIPH_GCM_MODE))?;
        }
        for (key, v) in [
            (c"aead", 1),
            (c"custom-iv", 1),
            (c"cts", 0),
            (c"tls-multi", 0),
            (c"has-randkey", 0),
        ] {
            if let Some(p) = ps.locate(key) {
                ok(p.set_int(v))?;
            }
        }
        if let Some(p) = ps.locate(c"keylen") {
            ok(p.set_size_t(16 + 8 * (ALG - 9)))?;
        }
        if let Some(p) = ps.locate(c"blocksize") {
            ok(p.set_size_t(1))?;
        }
        if let Some(p) = ps.locate(c"ivlen") {
            ok(p.set_size_t(12))?;
        }
        Ok(())
    })
}

const SZ: usize = core::mem::size_of::<usize>();

static GETTABLE_CTX_PARAMS: Table<[OsslParam; 9]> = Table([
    param_defn(c"keylen", OSSL_PARAM_UNSIGNED_INTEGER, SZ),
    param_defn(c"ivlen", OSSL_PARAM_UNSIGNED_INTEGER, SZ),
    param_defn(c"taglen", OSSL_PARAM_UNSIGNED_INTEGER, SZ),
    param_defn(c"iv", OSSL_PARAM_OCTET_STRING, 0),
    param_defn(c"updated-iv", OSSL_PARAM_OCTET_STRING, 0),
    param_defn(c"tag", OSSL_PARAM_OCTET_STRING, 0),
    param_defn(c"tlsaadpad", OSSL_PARAM_UNSIGNED_INTEGER, SZ),
    param_defn(c"tlsivgen", OSSL_PARAM_OCTET_STRING, 0),
    PARAM_END,
]);

static SETTABLE_CTX_PARAMS: Table<[OsslParam; 6]> = Table([
    param_defn(c"ivlen", OSSL_PARAM_UNSIGNED_INTEGER, SZ),
    param_defn(c"tag", OSSL_PARAM_OCTET_STRING, 0),
    param_defn(c"tlsaad", OSSL_PARAM_OCTET_STRING, 0),
    param_defn(c"tlsivfixed", OSSL_PARAM_OCTET_STRING, 0),
    param_defn(c"tlsivinv", OSSL_PARAM_OCTET_STRING, 0),
    PARAM_END,
]);

unsafe extern "C" fn gettable_ctx_params(_c: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    GETTABLE_CTX_PARAMS.0.as_ptr()
}
unsafe extern "C" fn settable_ctx_params(_c: *mut c_void, _p: *mut c_void) -> *const OsslParam {
    SETTABLE_CTX_PARAMS.0.as_ptr()
}

type NewCtx = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type FreeCtx = unsafe extern "C" fn(*mut c_void);
type Init = unsafe extern "C" fn(
    *mut c_void,
    *const u8,
    usize,
    *const u8,
    usize,
    *const OsslParam,
) -> c_int;
type Update =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize, *const u8, usize) -> c_int;
type Final = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
type GetParams = unsafe extern "C" fn(*mut OsslParam) -> c_int;
type GetCtxParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type SetCtxParams = unsafe extern "C" fn(*mut c_void, *const OsslParam) -> c_int;
type Gettable = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
type CtxGettable = unsafe extern "C" fn(*mut c_void, *mut c_void) -> *const OsslParam;

/// The dispatch table of GCM algorithm `ALG` (9, 10, 11 = AES-128/192/256-GCM).
pub const fn dispatch<const ALG: usize>() -> [OsslDispatch; 15] {
    [
        dispatch_fn!(OSSL_FUNC_CIPHER_NEWCTX, newctx::<ALG> as NewCtx),
        dispatch_fn!(OSSL_FUNC_CIPHER_ENCRYPT_INIT, einit as Init),
        dispatch_fn!(OSSL_FUNC_CIPHER_DECRYPT_INIT, dinit as Init),
        dispatch_fn!(OSSL_FUNC_CIPHER_UPDATE, update as Update),
        dispatch_fn!(OSSL_FUNC_CIPHER_FINAL, final_ as Final),
        dispatch_fn!(OSSL_FUNC_CIPHER_CIPHER, cipher as Update),
        dispatch_fn!(OSSL_FUNC_CIPHER_FREECTX, freectx as FreeCtx),
        dispatch_fn!(OSSL_FUNC_CIPHER_DUPCTX, dupctx as NewCtx),
        dispatch_fn!(OSSL_FUNC_CIPHER_GET_PARAMS, get_params::<ALG> as GetParams),
        dispatch_fn!(
            OSSL_FUNC_CIPHER_GET_CTX_PARAMS,
            get_ctx_params as GetCtxParams
        ),
        dispatch_fn!(
            OSSL_FUNC_CIPHER_SET_CTX_PARAMS,
            set_ctx_params as SetCtxParams
        ),
        dispatch_fn!(
            OSSL_FUNC_CIPHER_GETTABLE_PARAMS,
            crate::cipher::gettable_params as Gettable
        ),
        dispatch_fn!(
            OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS,
            gettable_ctx_params as CtxGettable
        ),
        dispatch_fn!(
            OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS,
            settable_ctx_params as CtxGettable
        ),
        DISPATCH_END,
    ]
}

pub const NAMES: [&CStr; 3] = [
    c"AES-128-GCM:id-aes128-GCM:2.16.840.1.101.3.4.1.6",
    c"AES-192-GCM:id-aes192-GCM:2.16.840.1.101.3.4.1.26",
    c"AES-256-GCM:id-aes256-GCM:2.16.840.1.101.3.4.1.46",
];

pub const DESCRIPTIONS: [&CStr; 3] = [
    c"aesx aes-128-gcm",
    c"aesx aes-192-gcm",
    c"aesx aes-256-gcm",
];

pub static D9: Table<[OsslDispatch; 15]> = Table(dispatch::<9>());
pub static D10: Table<[OsslDispatch; 15]> = Table(dispatch::<10>());
pub static D11: Table<[OsslDispatch; 15]> = Table(dispatch::<11>());

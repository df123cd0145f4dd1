//! AES-GCM on every backend, against `soft` and RustCrypto `aes-gcm` as oracles, through the
//! Rust API and the C ABI (`aesx_gcm_*`):
//!
//! - one-shot seal = streaming seal with fuzzer-chosen AAD and data chunking (in place and
//!   buffer-to-buffer) = `soft` = `aes-gcm` (12-, 8- and 16-byte nonces; a shorter tag is a
//!   prefix of the 16-byte one), and the same through `aesx_gcm_seal` / `aesx_gcm_stream_*`;
//! - the genuine message opens (one-shot, streaming in other pieces, C ABI);
//! - a mutated message (a flipped bit in the ciphertext, tag, AAD or nonce, a truncated or
//!   extended ciphertext) or an arbitrary ciphertext/tag is refused with `AuthenticationFailed`
//!   / `AESX_ERR_AUTH`, and the output buffer holds only zeros: no plaintext is left;
//!   arbitrary input that does open must be exactly what sealing its plaintext gives back;
//! - a tag of the wrong length is `InvalidTagLength` and leaves the buffer as it was; AAD after
//!   data is `AadAfterData`; no call panics (a panic is a crash here);
//! - every software GHASH kernel the CPU has (`hazmat::ghash`) agrees on the message.
#![no_main]

use std::ptr::{null, null_mut};

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aesx::{AesGcm, Backend, ErrorKind};
use aesx_capi::aesx_status::{self, *};
use aesx_capi::gcm::*;
use aesx_fuzz::{Result, Unstructured, backends, key, pieces};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});

static KEY_BYTES: [u8; 64] = [7u8; 64];

const TAG_LENS: [usize; 7] = [16, 15, 14, 13, 12, 8, 4];

fn bytes(u: &mut Unstructured<'_>, len: usize) -> Vec<u8> {
    let take = len.min(u.len());
    let mut m = u.bytes(take).unwrap_or(&[]).to_vec();
    m.extend((m.len()..len).map(|i| (i as u8).wrapping_mul(29).wrapping_add(7)));
    m
}

/// RustCrypto `aes-gcm` with a nonce of `N` bytes: seal (ciphertext || 16-byte tag), or open
/// (`Some(Ok(pt))`, `Some(Err(()))`); `None` when the nonce is not `N` bytes.
fn rc_with<C: KeyInit + Aead>(
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    msg: &[u8],
    seal: bool,
) -> Option<std::result::Result<Vec<u8>, ()>> {
    let n = aes_gcm::aead::Nonce::<C>::try_from(nonce).ok()?;
    let c = C::new_from_slice(key).expect("key length");
    let p = Payload { msg, aad };
    Some(
        if seal {
            c.encrypt(&n, p)
        } else {
            c.decrypt(&n, p)
        }
        .map_err(|_| ()),
    )
}

fn rc(
    key: &[u8],
    nonce: &[u8],
    aad: &[u8],
    msg: &[u8],
    seal: bool,
) -> Option<std::result::Result<Vec<u8>, ()>> {
    use aes_gcm::AesGcm as G;
    use aes_gcm::aead::consts::{U8, U12, U16};
    use aes_gcm::aes::{Aes128, Aes192, Aes256};
    macro_rules! by_nonce {
        ($aes:ty) => {
            match nonce.len() {
                12 => rc_with::<G<$aes, U12>>(key, nonce, aad, msg, seal),
                8 => rc_with::<G<$aes, U8>>(key, nonce, aad, msg, seal),
                16 => rc_with::<G<$aes, U16>>(key, nonce, aad, msg, seal),
                _ => None,
            }
        };
    }
    match key.len() {
        16 => by_nonce!(Aes128),
        24 => by_nonce!(Aes192),
        _ => by_nonce!(Aes256),
    }
}

/// Streaming seal in the given pieces; `b2b` alternates buffer-to-buffer updates.
fn stream_seal(
    g: &AesGcm,
    nonce: &[u8],
    aad: &[u8],
    aad_cuts: &[usize],
    msg: &[u8],
    cuts: &[usize],
    b2b: bool,
) -> (Vec<u8>, Vec<u8>) {
    let mut e = g.encryptor(nonce).unwrap();
    let mut at = 0;
    for &n in aad_cuts {
        e.aad(&aad[at..at + n]).unwrap();
        at += n;
    }
    let mut out = msg.to_vec();
    let mut at = 0;
    for (i, &n) in cuts.iter().enumerate() {
        if b2b && i % 2 == 1 {
            let mut o = vec![0u8; n + (i % 3)];
            e.update_b2b(&msg[at..at + n], &mut o).unwrap();
            out[at..at + n].copy_from_slice(&o[..n]);
        } else {
            e.update(&mut out[at..at + n]).unwrap();
        }
        at += n;
    }
    if !msg.is_empty() {
        assert_eq!(e.aad(b"late").unwrap_err().kind(), ErrorKind::AadAfterData);
    }
    assert_eq!(e.lengths(), (aad.len() as u64, msg.len() as u64));
    (out, e.finish().as_bytes().to_vec())
}

/// Streaming open in the given pieces: the plaintext it released and the verdict.
fn stream_open(
    g: &AesGcm,
    nonce: &[u8],
    aad: &[u8],
    aad_cuts: &[usize],
    ct: &[u8],
    cuts: &[usize],
    tag: &[u8],
) -> (Vec<u8>, bool) {
    let mut d = g.decryptor(nonce).unwrap();
    let mut at = 0;
    for &n in aad_cuts {
        d.aad(&aad[at..at + n]).unwrap();
        at += n;
    }
    let mut out = ct.to_vec();
    let mut at = 0;
    for &n in cuts {
        d.update(&mut out[at..at + n]).unwrap();
        at += n;
    }
    (out, d.finish(tag).is_ok())
}

/// `aesx_gcm_seal` (in place or buffer to buffer) and `aesx_gcm_open` through the C ABI.
struct CKey(*mut aesx_gcm);

impl CKey {
    fn new(key: &[u8], tag_len: usize, backend: Backend) -> CKey {
        let id = match backend {
            Backend::Soft => aesx_capi::AESX_BACKEND_SOFT,
            Backend::Vpaes => aesx_capi::AESX_BACKEND_VPAES,
            Backend::Aesni => aesx_capi::AESX_BACKEND_AESNI,
            Backend::Vaes256 => aesx_capi::AESX_BACKEND_VAES256,
            _ => aesx_capi::AESX_BACKEND_VAES512,
        };
        let mut h = null_mut();
        // SAFETY: key readable for its length; `h` a valid out-pointer.
        let st = unsafe { aesx_gcm_new(key.as_ptr(), key.len(), tag_len, id, &mut h) };
        assert_eq!(st, AESX_OK);
        assert!(!h.is_null());
        CKey(h)
    }

    fn seal(&self, nonce: &[u8], aad: &[u8], msg: &[u8], in_place: bool) -> (Vec<u8>, Vec<u8>) {
        let mut out = if in_place {
            msg.to_vec()
        } else {
            vec![0xeeu8; msg.len()]
        };
        let mut tag = vec![0u8; 16];
        let tl = self.tag_len();
        let inp = if in_place { out.as_ptr() } else { msg.as_ptr() };
        // SAFETY: every pointer is valid for its length; `in == out` or disjoint.
        let st = unsafe {
            aesx_gcm_seal(
                self.0,
                nonce.as_ptr(),
                nonce.len(),
                aad.as_ptr(),
                aad.len(),
                inp,
                out.as_mut_ptr(),
                msg.len(),
                tag.as_mut_ptr(),
                tl,
            )
        };
        assert_eq!(st, AESX_OK);
        tag.truncate(tl);
        (out, tag)
    }

    fn open(&self, nonce: &[u8], aad: &[u8], ct: &[u8], tag: &[u8]) -> (aesx_status, Vec<u8>) {
        let mut out = vec![0xeeu8; ct.len()];
        // SAFETY: every pointer is valid for its length; buffers disjoint.
        let st = unsafe {
            aesx_gcm_open(
                self.0,
                nonce.as_ptr(),
                nonce.len(),
                aad.as_ptr(),
                aad.len(),
                ct.as_ptr(),
                out.as_mut_ptr(),
                ct.len(),
                tag.as_ptr(),
                tag.len(),
            )
        };
        (st, out)
    }

    fn tag_len(&self) -> usize {
        // The C ABI has no getter; the key was made with it, so ask a zero-length seal.
        for t in TAG_LENS {
            let mut tag = [0u8; 16];
            // SAFETY: NULL data with length 0 is allowed; the tag buffer holds 16 bytes.
            let st = unsafe {
                aesx_gcm_seal(
                    self.0,
                    [0u8; 12].as_ptr(),
                    12,
                    null(),
                    0,
                    null(),
                    null_mut(),
                    0,
                    tag.as_mut_ptr(),
                    t,
                )
            };
            if st == AESX_OK {
                return t;
            }
            assert_eq!(st, AESX_ERR_TAG_LENGTH);
        }
        unreachable!("no tag length accepted")
    }

    /// A C stream over the pieces; returns (output, status of tag/verify).
    fn stream(
        &self,
        decrypt: bool,
        nonce: &[u8],
        aad: &[u8],
        aad_cuts: &[usize],
        msg: &[u8],
        cuts: &[usize],
        tag_io: &mut [u8],
    ) -> (Vec<u8>, aesx_status) {
        let mut s = null_mut();
        // SAFETY: a live key, the nonce readable, `s` a valid out-pointer.
        let st = unsafe {
            aesx_gcm_stream_new(self.0, decrypt as i32, nonce.as_ptr(), nonce.len(), &mut s)
        };
        assert_eq!(st, AESX_OK);
        let mut at = 0;
        for &n in aad_cuts {
            // SAFETY: a live stream; the piece is readable.
            let st = unsafe { aesx_gcm_stream_aad(s, aad[at..].as_ptr(), n) };
            assert_eq!(st, AESX_OK);
            at += n;
        }
        let mut out = msg.to_vec();
        let mut at = 0;
        for &n in cuts {
            let p = out[at..].as_mut_ptr();
            // SAFETY: in place on `n` bytes of `out`.
            let st = unsafe { aesx_gcm_stream_update(s, p, p, n) };
            assert_eq!(st, AESX_OK);
            at += n;
        }
        // SAFETY: a live stream; the tag buffer valid for its length.
        let fin = unsafe {
            if decrypt {
                aesx_gcm_stream_verify(s, tag_io.as_ptr(), tag_io.len())
            } else {
                aesx_gcm_stream_tag(s, tag_io.as_mut_ptr(), tag_io.len())
            }
        };
        // Finished: any further call is out of order.
        // SAFETY: a live stream.
        unsafe {
            assert_eq!(
                aesx_gcm_stream_update(s, null(), null_mut(), 0),
                AESX_ERR_STATE
            );
            assert_eq!(aesx_gcm_stream_free(s), AESX_OK);
        }
        (out, fin)
    }
}

impl Drop for CKey {
    fn drop(&mut self) {
        // SAFETY: a live key from aesx_gcm_new, freed once.
        assert_eq!(unsafe { aesx_gcm_free(self.0) }, AESX_OK);
    }
}

/// One misuse of the C ABI, chosen by the fuzzer, on a live key: NULLs, empty nonces, wrong
/// tag lengths, overlapping buffers, lengths beyond PTRDIFF_MAX, out-of-order stream calls, a
/// tag inside the data. Each must return its status, set out-pointers to NULL and leave the
/// caller's memory as it was (or, for the legal tag-in-data aliasing, give the right result).
fn c_misuse(
    u: &mut Unstructured<'_>,
    ck: &CKey,
    g: &AesGcm,
    nonce: &[u8],
    aad: &[u8],
    msg: &[u8],
) -> Result<()> {
    let tl = g.tag_len();
    let len = msg.len();
    let mut arena = msg.to_vec();
    arena.extend_from_slice(&[0x5a; 32]);
    let before = arena.clone();
    let mut tag = [0xc3u8; 16];
    let sentinel = std::ptr::NonNull::<aesx_gcm>::dangling().as_ptr();
    let huge = isize::MAX as usize + 1 + u.int_in_range(0..=1000usize)?;
    let kind = u.int_in_range(0..=13u8)?;
    let seal = |nonce: *const u8,
                nl: usize,
                inp: *const u8,
                out: *mut u8,
                l: usize,
                tag: *mut u8,
                t: usize|
     -> aesx_status {
        // SAFETY: every non-NULL pointer is valid for its length, or the length is beyond
        // PTRDIFF_MAX (refused before any access), or the call is refused for its other
        // arguments first (the cases below say which).
        unsafe {
            aesx_gcm_seal(
                ck.0,
                nonce,
                nl,
                aad.as_ptr(),
                aad.len(),
                inp,
                out,
                l,
                tag,
                t,
            )
        }
    };
    let p = arena.as_mut_ptr();
    let st = match kind {
        0 | 1 | 2 | 3 => {
            let (k, kl, t, be): (*const u8, usize, usize, u32) = match kind {
                0 => (null(), 16, 16, 0),
                1 => {
                    let kl = u.int_in_range(0..=40usize)?;
                    if matches!(kl, 16 | 24 | 32) {
                        return Ok(());
                    }
                    (KEY_BYTES.as_ptr(), kl, 16, 0)
                }
                2 => {
                    let t: usize = u.int_in_range(0..=64)?;
                    if TAG_LENS.contains(&t) {
                        return Ok(());
                    }
                    (KEY_BYTES.as_ptr(), 32, t, 0)
                }
                _ => (KEY_BYTES.as_ptr(), 32, 16, u.int_in_range(6..=u32::MAX)?),
            };
            let mut out = sentinel;
            // SAFETY: `k` NULL or readable for `kl` bytes (at most 40, KEY_BYTES has 64).
            let st = unsafe { aesx_gcm_new(k, kl, t, be, &mut out) };
            assert!(
                out.is_null(),
                "aesx_gcm_new misuse {kind}: status {st:?}, *out not NULL"
            );
            let want = [
                AESX_ERR_NULL_POINTER,
                AESX_ERR_KEY_LENGTH,
                AESX_ERR_TAG_LENGTH,
                AESX_ERR_UNKNOWN_BACKEND,
            ][kind as usize];
            assert_eq!(st, want, "aesx_gcm_new misuse {kind}");
            st
        }
        // An empty nonce.
        4 => {
            let st = seal(nonce.as_ptr(), 0, p, p, len, tag.as_mut_ptr(), tl);
            assert_eq!(st, AESX_ERR_NONCE_LENGTH);
            st
        }
        // NULL key.
        5 => {
            // SAFETY: refused at the NULL key, before any other pointer is used.
            let st = unsafe {
                aesx_gcm_open(
                    null(),
                    nonce.as_ptr(),
                    nonce.len(),
                    null(),
                    0,
                    p,
                    p,
                    len,
                    tag.as_ptr(),
                    tl,
                )
            };
            assert_eq!(st, AESX_ERR_NULL_POINTER);
            st
        }
        // Overlapping, not identical, input and output.
        6 => {
            if len < 3 {
                return Ok(());
            }
            // [p, p + len - d) and [p + d, p + len) intersect when d < len - d.
            let d = u.int_in_range(1..=(len - 1) / 2)?;
            let (inp, out) = if u.arbitrary()? {
                (p as *const u8, p.wrapping_add(d))
            } else {
                (p.wrapping_add(d) as *const u8, p)
            };
            let st = seal(
                nonce.as_ptr(),
                nonce.len(),
                inp,
                out,
                len - d,
                tag.as_mut_ptr(),
                tl,
            );
            assert_eq!(st, AESX_ERR_OVERLAP);
            st
        }
        // NULL data with a length, NULL tag.
        7 => {
            let which = u.int_in_range(0..=2u8)?;
            let l = len.max(1);
            let st = match which {
                0 => seal(
                    nonce.as_ptr(),
                    nonce.len(),
                    null(),
                    p,
                    l,
                    tag.as_mut_ptr(),
                    tl,
                ),
                1 => seal(
                    nonce.as_ptr(),
                    nonce.len(),
                    p,
                    null_mut(),
                    l,
                    tag.as_mut_ptr(),
                    tl,
                ),
                _ => seal(nonce.as_ptr(), nonce.len(), p, p, len, null_mut(), tl),
            };
            assert_eq!(st, AESX_ERR_NULL_POINTER);
            st
        }
        // A tag length that is not the key's.
        8 => {
            let t = u.int_in_range(0..=16usize)?;
            if t == tl {
                return Ok(());
            }
            let st = seal(nonce.as_ptr(), nonce.len(), p, p, len, tag.as_mut_ptr(), t);
            assert_eq!(st, AESX_ERR_TAG_LENGTH);
            // SAFETY: as above; open reads at most 16 tag bytes, the tag buffer has 16.
            let st2 = unsafe {
                aesx_gcm_open(
                    ck.0,
                    nonce.as_ptr(),
                    nonce.len(),
                    null(),
                    0,
                    p,
                    p,
                    len,
                    tag.as_ptr(),
                    t,
                )
            };
            assert_eq!(st2, AESX_ERR_TAG_LENGTH);
            st
        }
        // A length beyond PTRDIFF_MAX (message, nonce or AAD).
        9 => {
            let st = match u.int_in_range(0..=2u8)? {
                0 => seal(
                    nonce.as_ptr(),
                    nonce.len(),
                    p,
                    p,
                    huge,
                    tag.as_mut_ptr(),
                    tl,
                ),
                1 => seal(nonce.as_ptr(), huge, p, p, len, tag.as_mut_ptr(), tl),
                _ => {
                    // SAFETY: the AAD length is refused before the pointer is read.
                    unsafe {
                        aesx_gcm_seal(
                            ck.0,
                            nonce.as_ptr(),
                            nonce.len(),
                            p,
                            huge,
                            p,
                            p,
                            len,
                            tag.as_mut_ptr(),
                            tl,
                        )
                    }
                }
            };
            assert_eq!(st, AESX_ERR_LENGTH_LIMIT);
            st
        }
        // The tag inside the data, in place (legal: the tag is read before the data is
        // written): the same verdict and bytes as the Rust API on copies.
        10 => {
            if len < tl {
                return Ok(());
            }
            let off = u.int_in_range(0..=len - tl)?;
            let t = arena[off..off + tl].to_vec();
            let mut want = msg.to_vec();
            let r = g.open_in_place_detached(nonce, aad, &mut want, &t);
            // SAFETY: in place on the arena's first `len` bytes; the tag is `tl` bytes inside.
            let st = unsafe {
                aesx_gcm_open(
                    ck.0,
                    nonce.as_ptr(),
                    nonce.len(),
                    aad.as_ptr(),
                    aad.len(),
                    p,
                    p,
                    len,
                    p.wrapping_add(off),
                    tl,
                )
            };
            assert_eq!(st == AESX_OK, r.is_ok());
            assert_eq!(&arena[..len], &want[..], "tag-in-data open");
            assert_eq!(&arena[len..], &before[len..]);
            return Ok(());
        }
        // Stream calls out of order, and stream_new misuse.
        _ => {
            let mut s = null_mut();
            if kind == 11 {
                let mut out = std::ptr::NonNull::<aesx_gcm_stream>::dangling().as_ptr();
                // SAFETY: an empty nonce is refused; `out` is a valid out-pointer.
                let st = unsafe { aesx_gcm_stream_new(ck.0, 0, nonce.as_ptr(), 0, &mut out) };
                assert!(st == AESX_ERR_NONCE_LENGTH && out.is_null());
                // SAFETY: a NULL out-pointer is refused.
                let st = unsafe {
                    aesx_gcm_stream_new(ck.0, 1, nonce.as_ptr(), nonce.len(), null_mut())
                };
                assert_eq!(st, AESX_ERR_NULL_POINTER);
                return Ok(());
            }
            let dec = kind == 13;
            // SAFETY: a live key, a valid nonce and out-pointer.
            let st = unsafe {
                aesx_gcm_stream_new(ck.0, dec as i32, nonce.as_ptr(), nonce.len(), &mut s)
            };
            assert_eq!(st, AESX_OK);
            // SAFETY: a live stream; every buffer valid for its length.
            unsafe {
                let upd = len.max(1).min(arena.len());
                assert_eq!(aesx_gcm_stream_update(s, p, p, upd), AESX_OK);
                // AAD after data, and the wrong finishing call for the direction.
                assert_eq!(aesx_gcm_stream_aad(s, b"x".as_ptr(), 1), AESX_ERR_STATE);
                if dec {
                    assert_eq!(aesx_gcm_stream_tag(s, tag.as_mut_ptr(), tl), AESX_ERR_STATE);
                } else {
                    assert_eq!(aesx_gcm_stream_verify(s, tag.as_ptr(), tl), AESX_ERR_STATE);
                }
                assert_eq!(
                    aesx_gcm_stream_update(null_mut(), p, p, 1),
                    AESX_ERR_NULL_POINTER
                );
                assert_eq!(aesx_gcm_stream_free(s), AESX_OK);
                assert_eq!(aesx_gcm_stream_free(null_mut()), AESX_OK);
            }
            return Ok(());
        }
    };
    assert_ne!(st, AESX_OK);
    assert_eq!(
        arena, before,
        "a refused call wrote to the caller's buffer (misuse {kind})"
    );
    assert_eq!(
        tag, [0xc3u8; 16],
        "a refused call wrote the tag (misuse {kind})"
    );
    Ok(())
}

fn ghash_kernels_agree(msg: &[u8], nonce: &[u8]) {
    use aesx::hazmat::ghash::{KERNELS, available, ghash_with};
    let h: [u8; 16] = std::array::from_fn(|i| nonce.get(i).copied().unwrap_or(i as u8) ^ 0x5a);
    let y0: [u8; 16] = std::array::from_fn(|i| msg.get(i).copied().unwrap_or(0));
    let whole = &msg[..msg.len() / 16 * 16];
    let mut first: Option<(&str, [u8; 16])> = None;
    for k in KERNELS.into_iter().filter(|k| available(k)) {
        let mut y = y0;
        ghash_with(k, &h, &mut y, whole).expect("available kernel, whole blocks");
        match first {
            None => first = Some((k, y)),
            Some((k0, y1)) => assert_eq!(y, y1, "GHASH {k} vs {k0}, {} blocks", whole.len() / 16),
        }
    }
}

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let key = key(&mut u)?;
    let tag_len = if u.ratio(3, 4)? {
        16
    } else {
        *u.choose(&TAG_LENS)?
    };
    let nonce_len = match u.int_in_range(0..=5u8)? {
        0..=2 => 12,
        3 => *u.choose(&[8usize, 16])?,
        4 => u.int_in_range(1..=11usize)?,
        _ => u.int_in_range(13..=80usize)?,
    };
    let nonce = bytes(&mut u, nonce_len);
    let aad_len = u.int_in_range(0..=300usize)?;
    // Mostly short messages (the short-message kernels, partial blocks, and fast executions),
    // sometimes long enough for several 8- and 16-block kernel iterations, and now and then
    // past 4 KiB: with a 12-byte nonce the counter's last byte first carries after 254 blocks,
    // where the kernels that branch on a public counter take their carrying batches.
    let msg_len = match u.int_in_range(0..=15u8)? {
        0 => u.int_in_range(3800..=9000usize)?,
        1..=4 => u.int_in_range(0..=2100usize)?,
        _ => u.int_in_range(0..=300usize)?,
    };
    let aad_cuts = pieces(&mut u, aad_len)?;
    let cuts = pieces(&mut u, msg_len)?;
    let cuts2 = pieces(&mut u, msg_len)?;
    let b2b = u.arbitrary::<bool>()?;
    let mutation = u.int_in_range(0..=7u8)?;
    let where_: usize = u.arbitrary()?;
    let flip = u.int_in_range(1..=255u8)?;
    let aad = bytes(&mut u, aad_len);
    let msg = bytes(&mut u, msg_len);
    // The C ABI misuse choices come from their own 16 bytes.
    let misuse_bytes = bytes(&mut u, 16);
    let mut misuse = Unstructured::new(&misuse_bytes);
    // Whatever is left: an arbitrary "ciphertext || tag" to open.
    let rest = u.bytes(u.len())?.to_vec();

    // Every software GHASH kernel this CPU has (whichever `soft`/`vpaes` would pick: the
    // 32- and 16-stream byte-shuffle paths from 64 and 32 blocks) gives the same state, with
    // H and the starting state from the message's first bytes.
    ghash_kernels_agree(&msg, &nonce);

    // The reference: soft, and RustCrypto where it takes this nonce length.
    let soft = AesGcm::with_backend(&key, Backend::Soft)
        .unwrap()
        .with_tag_len(tag_len)
        .unwrap();
    let mut want = msg.clone();
    let want_tag = soft
        .seal_in_place_detached(&nonce, &aad, &mut want)
        .unwrap()
        .as_bytes()
        .to_vec();
    assert_eq!(want_tag.len(), tag_len);
    if let Some(r) = rc(&key, &nonce, &aad, &msg, true) {
        let r = r.expect("aes-gcm seal");
        assert_eq!(&r[..msg_len], &want[..], "ciphertext vs aes-gcm");
        assert_eq!(
            &r[msg_len..msg_len + tag_len],
            &want_tag[..],
            "tag vs aes-gcm"
        );
    }

    // The mutated message: exactly one thing differs from the genuine one.
    let (mut m_nonce, mut m_aad, mut m_ct, mut m_tag) =
        (nonce.clone(), aad.clone(), want.clone(), want_tag.clone());
    match mutation {
        0 if msg_len > 0 => m_ct[where_ % msg_len] ^= flip,
        1 if aad_len > 0 => m_aad[where_ % aad_len] ^= flip,
        2 => m_nonce[where_ % nonce_len] ^= flip,
        3 if msg_len > 0 => {
            // Truncated ciphertext (the tag kept).
            m_ct.truncate(where_ % msg_len);
        }
        4 => m_ct.push(flip),
        5 => m_aad.push(flip),
        _ => m_tag[where_ % tag_len] ^= flip,
    }

    // Whether the mutated message happens to be authentic (a short tag can collide): its
    // ciphertext decrypts (unauthenticated, on soft) to some p', and sealing p' gives the one
    // tag that opens it.
    let m_valid = {
        let mut p = m_ct.clone();
        let mut d = soft.decryptor(&m_nonce).unwrap();
        d.aad(&m_aad).unwrap();
        d.update(&mut p).unwrap();
        soft.seal_in_place_detached(&m_nonce, &m_aad, &mut p)
            .unwrap()
            .as_bytes()
            == &m_tag[..]
    };
    assert!(tag_len < 16 || !m_valid, "a 16-byte tag collided");

    for &b in backends() {
        let g = AesGcm::with_backend(&key, b)
            .unwrap()
            .with_tag_len(tag_len)
            .unwrap();

        // One-shot seal.
        let mut ct = msg.clone();
        let tag = g.seal_in_place_detached(&nonce, &aad, &mut ct).unwrap();
        assert_eq!(ct, want, "seal ciphertext {b}");
        assert_eq!(tag.as_bytes(), &want_tag[..], "seal tag {b}");
        assert_eq!(
            g.seal(&nonce, &aad, &msg).unwrap(),
            [&want[..], &want_tag[..]].concat()
        );

        // Streaming seal in the fuzzer's pieces.
        let (sct, stag) = stream_seal(&g, &nonce, &aad, &aad_cuts, &msg, &cuts, b2b);
        assert_eq!(sct, want, "stream ciphertext {b}");
        assert_eq!(stag, want_tag, "stream tag {b}");

        // The genuine message opens: one shot, Vec, and streaming in other pieces.
        let mut pt = want.clone();
        g.open_in_place_detached(&nonce, &aad, &mut pt, &want_tag)
            .unwrap();
        assert_eq!(pt, msg, "open {b}");
        let sealed = [&want[..], &want_tag[..]].concat();
        assert_eq!(g.open(&nonce, &aad, &sealed).unwrap(), msg);
        let (spt, ok) = stream_open(&g, &nonce, &aad, &aad_cuts, &want, &cuts2, &want_tag);
        assert!(ok && spt == msg, "stream open {b}");

        // The mutated message is refused and leaves only zeros.
        let mut buf = m_ct.clone();
        match g.open_in_place_detached(&m_nonce, &m_aad, &mut buf, &m_tag) {
            Ok(()) => assert!(m_valid, "a mutated message opened {b}"),
            Err(e) => {
                assert!(!m_valid, "an authentic message was refused {b}");
                assert_eq!(e.kind(), ErrorKind::AuthenticationFailed, "mutated {b}");
                assert!(
                    buf.iter().all(|&x| x == 0),
                    "plaintext left after a failed open {b}"
                );
            }
        }
        let m_sealed = [&m_ct[..], &m_tag[..]].concat();
        assert_eq!(g.open(&m_nonce, &m_aad, &m_sealed).is_ok(), m_valid);
        if m_ct.len() == msg_len {
            let (_, ok) = stream_open(&g, &m_nonce, &m_aad, &[m_aad.len()], &m_ct, &cuts2, &m_tag);
            assert_eq!(ok, m_valid, "stream verdict on a mutated message {b}");
        }

        // A tag of another length: refused before anything is touched.
        let other = vec![0u8; if tag_len == 16 { 12 } else { 16 }];
        let mut buf = want.clone();
        let e = g
            .open_in_place_detached(&nonce, &aad, &mut buf, &other)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidTagLength);
        assert_eq!(buf, want, "a refused tag length changed the buffer {b}");

        // Arbitrary "ciphertext || tag": opens only if it is what sealing its plaintext gives.
        if rest.len() >= tag_len {
            let (c, t) = rest.split_at(rest.len() - tag_len);
            let mut buf = c.to_vec();
            match g.open_in_place_detached(&nonce, &aad, &mut buf, t) {
                Ok(()) => {
                    let mut again = buf.clone();
                    let t2 = g.seal_in_place_detached(&nonce, &aad, &mut again).unwrap();
                    assert!(again == c && t2.as_bytes() == t, "forged open {b}");
                }
                Err(e) => {
                    assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
                    assert!(buf.iter().all(|&x| x == 0), "arbitrary open left bytes {b}");
                }
            }
            if tag_len == 16
                && let Some(r) = rc(&key, &nonce, &aad, &rest, false)
            {
                assert_eq!(
                    r.is_ok(),
                    g.open(&nonce, &aad, &rest).is_ok(),
                    "vs aes-gcm {b}"
                );
            }
        }

        // The C ABI on the same key and backend.
        let ck = CKey::new(&key, tag_len, b);
        assert_eq!(ck.tag_len(), tag_len);
        let (cct, ctag) = ck.seal(&nonce, &aad, &msg, b2b);
        assert!(cct == want && ctag == want_tag, "aesx_gcm_seal {b}");
        let (st, cpt) = ck.open(&nonce, &aad, &want, &want_tag);
        assert!(st == AESX_OK && cpt == msg, "aesx_gcm_open {b}");
        let (st, cpt) = ck.open(&m_nonce, &m_aad, &m_ct, &m_tag);
        if !m_valid {
            assert_eq!(st, AESX_ERR_AUTH, "aesx_gcm_open mutated {b}");
            assert!(
                cpt.iter().all(|&x| x == 0),
                "aesx_gcm_open left plaintext {b}"
            );
        }
        let mut t = vec![0u8; tag_len];
        let (sct, st) = ck.stream(false, &nonce, &aad, &aad_cuts, &msg, &cuts, &mut t);
        assert!(
            st == AESX_OK && sct == want && t == want_tag,
            "C stream seal {b}"
        );
        let mut t = want_tag.clone();
        let (spt, st) = ck.stream(true, &nonce, &aad, &aad_cuts, &want, &cuts2, &mut t);
        assert!(st == AESX_OK && spt == msg, "C stream open {b}");
        if m_ct.len() == msg_len {
            let mut t = m_tag.clone();
            let (_, st) = ck.stream(
                true,
                &m_nonce,
                &m_aad,
                &[m_aad.len()],
                &m_ct,
                &cuts2,
                &mut t,
            );
            assert_eq!(
                st == AESX_OK,
                m_valid,
                "C stream verify on a mutated message {b}"
            );
        }
        c_misuse(&mut misuse, &ck, &g, &nonce, &aad, &msg)?;
    }
    Ok(())
}

//! Every exported C function of libaesx (the `aesx_*` API and the SuiteB_FFI symbols), called
//! in arbitrary sequences with arbitrary lengths, offsets, aliasing (in place, overlapping,
//! an IV inside the data) and NULLs, on one shared byte arena. A model written here from the
//! header's contract predicts each call's status and the whole arena afterwards; the data
//! comes from the `aesx` crate on `soft`. Lengths are either inside the arena or beyond
//! `PTRDIFF_MAX` (which every function must refuse before touching memory): a length in
//! between would break the caller's side of the contract, not the library's.
#![no_main]

use std::ffi::{CStr, CString, c_char};
use std::ptr::{null, null_mut};

use aesx::{Aes, Backend, Ctr};
use aesx_capi::aesx_status::{self, *};
use aesx_capi::api::*;
use aesx_capi::suiteb::*;
use aesx_fuzz::{Result, Unstructured, soft};
use libfuzzer_sys::fuzz_target;

const ARENA: usize = 320;

fuzz_target!(|data: &[u8]| {
    let mut s = State::default();
    let _ = run(&mut s, data);
    s.free_all();
});

struct Cipher {
    h: *mut aesx_cipher,
    key: Vec<u8>,
}

struct Stream {
    h: *mut aesx_ctr,
    key: Vec<u8>,
    iv: [u8; 16],
    pos: u64,
}

#[derive(Default)]
struct State {
    arena: Vec<u8>,
    ciphers: Vec<Cipher>,
    streams: Vec<Stream>,
}

impl State {
    fn free_all(&mut self) {
        for c in self.ciphers.drain(..) {
            // SAFETY: a live handle from aesx_cipher_new, freed once.
            assert_eq!(unsafe { aesx_cipher_free(c.h) }, AESX_OK);
        }
        for s in self.streams.drain(..) {
            // SAFETY: a live handle from aesx_ctr_new, freed once.
            assert_eq!(unsafe { aesx_ctr_free(s.h) }, AESX_OK);
        }
        // The process-wide default goes back to detection for the next input.
        assert_eq!(aesx_set_default_backend(0), AESX_OK);
    }

    fn at(&mut self, off: Option<usize>) -> *mut u8 {
        match off {
            None => null_mut(),
            Some(o) => self.arena.as_mut_ptr().wrapping_add(o),
        }
    }
}

/// NULL (`None`) or an offset into the arena.
fn place(u: &mut Unstructured<'_>) -> Result<Option<usize>> {
    Ok(if u.ratio(1, 12)? {
        None
    } else {
        Some(u.int_in_range(0..=ARENA)?)
    })
}

/// A length that keeps every non-NULL buffer inside the arena, or one beyond PTRDIFF_MAX.
fn length(u: &mut Unstructured<'_>, offs: &[Option<usize>]) -> Result<usize> {
    if u.ratio(1, 16)? {
        return Ok(*u.choose(&[
            usize::MAX,
            usize::MAX - 15,
            isize::MAX as usize + 1,
            isize::MAX as usize + 17,
        ])?);
    }
    let room = offs
        .iter()
        .flatten()
        .map(|&o| ARENA - o)
        .min()
        .unwrap_or(ARENA);
    let len = u.int_in_range(0..=room)?;
    Ok(if u.ratio(3, 4)? { len / 16 * 16 } else { len })
}

fn overlap(a: Option<usize>, b: Option<usize>, len: usize) -> bool {
    matches!((a, b), (Some(a), Some(b)) if a != b && a < b + len && b < a + len)
}

/// The status `with_inout` gives for in/out/len (after the function's own checks).
fn inout_status(i: Option<usize>, o: Option<usize>, len: usize) -> aesx_status {
    if len == 0 {
        AESX_OK
    } else if i.is_none() || o.is_none() {
        AESX_ERR_NULL_POINTER
    } else if len > isize::MAX as usize {
        AESX_ERR_LENGTH_LIMIT
    } else if overlap(i, o, len) {
        AESX_ERR_OVERLAP
    } else {
        AESX_OK
    }
}

fn pick<T>(u: &mut Unstructured<'_>, v: &[T]) -> Result<Option<usize>> {
    // Mostly a live handle, sometimes NULL.
    if v.is_empty() || u.ratio(1, 10)? {
        Ok(None)
    } else {
        Ok(Some(u.choose_index(v.len())?))
    }
}

fn run(s: &mut State, data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    s.arena = u.bytes(ARENA.min(u.len()))?.to_vec();
    s.arena.resize(ARENA, 0x5c);
    let mut steps = 0;
    while !u.is_empty() && steps < 64 {
        steps += 1;
        step(s, &mut u)?;
    }
    Ok(())
}

fn step(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    match u.int_in_range(0..=17u8)? {
        0 => cipher_new(s, u),
        1 => {
            // aesx_cipher_free of a live handle (streams keep their own key reference) or NULL.
            let i = pick(u, &s.ciphers)?;
            let h = i.map_or(null_mut(), |i| s.ciphers.remove(i).h);
            // SAFETY: NULL or a live handle, removed from the list so never used again.
            assert_eq!(unsafe { aesx_cipher_free(h) }, AESX_OK);
            Ok(())
        }
        2 => cipher_query(s, u),
        3 | 4 => ecb(s, u),
        5 | 6 => cbc(s, u),
        7 | 8 => ctr_xor_at(s, u),
        9 => ctr_new(s, u),
        10 | 11 => ctr_xor(s, u),
        12 => ctr_seek_position_free(s, u),
        13 => backends(u),
        14 => {
            let st: i32 = u.arbitrary()?;
            let p = aesx_status_str(st);
            assert!(!p.is_null());
            // SAFETY: a static NUL-terminated string.
            assert!(!unsafe { CStr::from_ptr(p) }.to_bytes().is_empty());
            assert_eq!(aesx_clear_thread_cache(), AESX_OK);
            Ok(())
        }
        15 => suiteb_expand(s, u),
        _ => suiteb_blocks(s, u),
    }
}

fn cipher_new(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let key_len = if u.ratio(1, 4)? {
        *u.choose(&[0usize, 1, 15, 17, 31, 33, 64, usize::MAX])?
    } else {
        *u.choose(&[16usize, 24, 32])?
    };
    let valid_len = matches!(key_len, 16 | 24 | 32);
    let key_off = if u.ratio(1, 12)? {
        None
    } else {
        Some(u.int_in_range(0..=ARENA - 32)?)
    };
    let backend: u32 = if u.ratio(1, 8)? {
        u.arbitrary()?
    } else {
        u.int_in_range(0..=5)?
    };
    let out_null = u.ratio(1, 16)?;
    let mut h: *mut aesx_cipher = 0x10 as *mut aesx_cipher;
    let out = if out_null { null_mut() } else { &raw mut h };
    let key = s.at(key_off);
    let before = s.arena.clone();
    // SAFETY: `key` is NULL or inside the arena with 32 bytes to spare; `out` NULL or valid.
    let st = unsafe { aesx_cipher_new(key, key_len, backend, out) };
    assert_eq!(s.arena, before, "cipher_new wrote the key");
    let want = if out_null || key_off.is_none() {
        AESX_ERR_NULL_POINTER
    } else if !valid_len {
        AESX_ERR_KEY_LENGTH
    } else if backend > 5 {
        AESX_ERR_UNKNOWN_BACKEND
    } else if backend != 0 && aesx_backend_check(backend) != AESX_OK {
        AESX_ERR_BACKEND_UNAVAILABLE
    } else {
        AESX_OK
    };
    assert_eq!(st, want, "cipher_new len {key_len} backend {backend}");
    if out_null {
        return Ok(());
    }
    if st != AESX_OK {
        assert!(h.is_null(), "failed cipher_new left *out = {h:p}");
        return Ok(());
    }
    assert!(!h.is_null());
    let o = key_off.unwrap();
    let key = s.arena[o..o + key_len].to_vec();
    if s.ciphers.len() >= 4 {
        // SAFETY: a live handle just made.
        assert_eq!(unsafe { aesx_cipher_free(h) }, AESX_OK);
    } else {
        s.ciphers.push(Cipher { h, key });
    }
    Ok(())
}

fn cipher_query(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let i = pick(u, &s.ciphers)?;
    let h = i.map_or(null(), |i| s.ciphers[i].h.cast_const());
    let out_null = u.ratio(1, 8)?;
    let (mut b, mut bits) = (77u32, 77u32);
    let (pb, pbits) = if out_null {
        (null_mut(), null_mut())
    } else {
        (&raw mut b, &raw mut bits)
    };
    // SAFETY: NULL or live handle; NULL or valid outs.
    let (s1, s2) = unsafe { (aesx_cipher_backend(h, pb), aesx_cipher_key_bits(h, pbits)) };
    match (i, out_null) {
        (Some(i), false) => {
            assert_eq!((s1, s2), (AESX_OK, AESX_OK));
            assert_eq!(bits as usize, s.ciphers[i].key.len() * 8);
            assert!((1..=5).contains(&b) && aesx_backend_check(b) == AESX_OK);
        }
        (None, false) => {
            assert_eq!((s1, s2), (AESX_ERR_NULL_POINTER, AESX_ERR_NULL_POINTER));
            assert_eq!((b, bits), (0, 0), "outs not cleared");
        }
        (_, true) => assert_eq!((s1, s2), (AESX_ERR_NULL_POINTER, AESX_ERR_NULL_POINTER)),
    }
    Ok(())
}

fn ecb(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let decrypt = u.arbitrary::<bool>()?;
    let ci = pick(u, &s.ciphers)?;
    let i = place(u)?;
    let o = if u.ratio(1, 3)? { i } else { place(u)? };
    let len = length(u, &[i, o])?;
    let before = s.arena.clone();
    let h = ci.map_or(null(), |c| s.ciphers[c].h.cast_const());
    let (pi, po) = (s.at(i), s.at(o));
    // SAFETY: NULL or live handle; buffers inside the arena for `len` or len > PTRDIFF_MAX.
    let st = unsafe {
        if decrypt {
            aesx_ecb_decrypt(h, pi, po, len)
        } else {
            aesx_ecb_encrypt(h, pi, po, len)
        }
    };
    let want = match ci {
        None => AESX_ERR_NULL_POINTER,
        Some(_) if len % 16 != 0 => AESX_ERR_NOT_BLOCK_ALIGNED,
        Some(_) => inout_status(i, o, len),
    };
    assert_eq!(st, want, "ecb len {len} in {i:?} out {o:?}");
    let mut expect = before.clone();
    if st == AESX_OK && len > 0 {
        let (i, o) = (i.unwrap(), o.unwrap());
        let mut buf = before[i..i + len].to_vec();
        let aes = soft(&s.ciphers[ci.unwrap()].key);
        if decrypt {
            aes.decrypt_blocks(&mut buf);
        } else {
            aes.encrypt_blocks(&mut buf);
        }
        expect[o..o + len].copy_from_slice(&buf);
    }
    assert!(s.arena == expect, "ecb: arena differs (status {st:?})");
    Ok(())
}

fn cbc(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let decrypt = u.arbitrary::<bool>()?;
    let ci = pick(u, &s.ciphers)?;
    let iv = if u.ratio(1, 12)? {
        None
    } else {
        Some(u.int_in_range(0..=ARENA - 16)?)
    };
    let i = place(u)?;
    let o = if u.ratio(1, 3)? { i } else { place(u)? };
    let len = length(u, &[i, o])?;
    let before = s.arena.clone();
    let h = ci.map_or(null(), |c| s.ciphers[c].h.cast_const());
    let (pv, pi, po) = (s.at(iv), s.at(i), s.at(o));
    // SAFETY: as in `ecb`; `iv` NULL or 16 bytes inside the arena (it may alias the data).
    let st = unsafe {
        if decrypt {
            aesx_cbc_decrypt(h, pv, pi, po, len)
        } else {
            aesx_cbc_encrypt(h, pv, pi, po, len)
        }
    };
    let want = match (ci, iv) {
        (None, _) | (_, None) => AESX_ERR_NULL_POINTER,
        _ if len % 16 != 0 => AESX_ERR_NOT_BLOCK_ALIGNED,
        _ => inout_status(i, o, len),
    };
    assert_eq!(st, want, "cbc len {len}");
    let mut expect = before.clone();
    if st == AESX_OK {
        let v = iv.unwrap();
        let chain0: [u8; 16] = before[v..v + 16].try_into().unwrap();
        let aes = soft(&s.ciphers[ci.unwrap()].key);
        let mut chain = chain0;
        if len > 0 {
            let (i, o) = (i.unwrap(), o.unwrap());
            let input = &before[i..i + len];
            let mut buf = input.to_vec();
            if decrypt {
                aes.cbc_decrypt(&chain0, &mut buf).unwrap();
                chain.copy_from_slice(&input[len - 16..]);
            } else {
                aes.cbc_encrypt(&chain0, &mut buf).unwrap();
                chain.copy_from_slice(&buf[len - 16..]);
            }
            expect[o..o + len].copy_from_slice(&buf);
        }
        // The chaining value is written after the data.
        expect[v..v + 16].copy_from_slice(&chain);
    }
    assert!(s.arena == expect, "cbc: arena differs (status {st:?})");
    Ok(())
}

fn ctr_keystream(key: &[u8], iv: &[u8; 16], pos: u64, buf: &mut [u8]) {
    let aes = soft(key);
    let mut c = Ctr::new(&aes, iv);
    c.seek(pos);
    c.apply_keystream(buf);
}

fn pos_choice(u: &mut Unstructured<'_>) -> Result<u64> {
    aesx_fuzz::position(u)
}

fn ctr_xor_at(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let ci = pick(u, &s.ciphers)?;
    let iv = if u.ratio(1, 12)? {
        None
    } else {
        Some(u.int_in_range(0..=ARENA - 16)?)
    };
    let pos = pos_choice(u)?;
    let i = place(u)?;
    let o = if u.ratio(1, 3)? { i } else { place(u)? };
    let len = length(u, &[i, o])?;
    let before = s.arena.clone();
    let h = ci.map_or(null(), |c| s.ciphers[c].h.cast_const());
    let (pv, pi, po) = (s.at(iv), s.at(i), s.at(o));
    // SAFETY: as in `cbc`.
    let st = unsafe { aesx_ctr_xor_at(h, pv, pos, pi, po, len) };
    let fits = pos.checked_add(len as u64).is_some();
    let want = match (ci, iv) {
        (None, _) | (_, None) => AESX_ERR_NULL_POINTER,
        _ if !fits => AESX_ERR_LENGTH_LIMIT,
        _ => inout_status(i, o, len),
    };
    assert_eq!(st, want, "ctr_xor_at pos {pos} len {len}");
    let mut expect = before.clone();
    if st == AESX_OK && len > 0 {
        let v = iv.unwrap();
        let ivb: [u8; 16] = before[v..v + 16].try_into().unwrap();
        let (i, o) = (i.unwrap(), o.unwrap());
        let mut buf = before[i..i + len].to_vec();
        ctr_keystream(&s.ciphers[ci.unwrap()].key, &ivb, pos, &mut buf);
        expect[o..o + len].copy_from_slice(&buf);
    }
    assert!(
        s.arena == expect,
        "ctr_xor_at: arena differs (status {st:?})"
    );
    Ok(())
}

fn ctr_new(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let ci = pick(u, &s.ciphers)?;
    let iv = if u.ratio(1, 12)? {
        None
    } else {
        Some(u.int_in_range(0..=ARENA - 16)?)
    };
    let out_null = u.ratio(1, 16)?;
    let mut h: *mut aesx_ctr = 0x20 as *mut aesx_ctr;
    let out = if out_null { null_mut() } else { &raw mut h };
    let c = ci.map_or(null(), |c| s.ciphers[c].h.cast_const());
    let pv = s.at(iv);
    // SAFETY: NULL or live cipher; `iv` NULL or 16 bytes in the arena; `out` NULL or valid.
    let st = unsafe { aesx_ctr_new(c, pv, out) };
    let ok = !out_null && ci.is_some() && iv.is_some();
    assert_eq!(st, if ok { AESX_OK } else { AESX_ERR_NULL_POINTER });
    if out_null {
        return Ok(());
    }
    if !ok {
        assert!(h.is_null(), "failed ctr_new left *out = {h:p}");
        return Ok(());
    }
    let v = iv.unwrap();
    let stream = Stream {
        h,
        key: s.ciphers[ci.unwrap()].key.clone(),
        iv: s.arena[v..v + 16].try_into().unwrap(),
        pos: 0,
    };
    if s.streams.len() >= 4 {
        // SAFETY: a live handle just made.
        assert_eq!(unsafe { aesx_ctr_free(h) }, AESX_OK);
    } else {
        s.streams.push(stream);
    }
    Ok(())
}

fn ctr_xor(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let si = pick(u, &s.streams)?;
    let i = place(u)?;
    let o = if u.ratio(1, 3)? { i } else { place(u)? };
    let len = length(u, &[i, o])?;
    let before = s.arena.clone();
    let h = si.map_or(null_mut(), |k| s.streams[k].h);
    let (pi, po) = (s.at(i), s.at(o));
    // SAFETY: NULL or a live stream; buffers as in `ecb`.
    let st = unsafe { aesx_ctr_xor(h, pi, po, len) };
    let want = match si {
        None => AESX_ERR_NULL_POINTER,
        Some(k) if s.streams[k].pos.checked_add(len as u64).is_none() => AESX_ERR_LENGTH_LIMIT,
        Some(_) => inout_status(i, o, len),
    };
    assert_eq!(st, want, "ctr_xor len {len}");
    let mut expect = before.clone();
    if st == AESX_OK {
        let k = si.unwrap();
        let m = &mut s.streams[k];
        if len > 0 {
            let (i, o) = (i.unwrap(), o.unwrap());
            let mut buf = before[i..i + len].to_vec();
            ctr_keystream(&m.key, &m.iv, m.pos, &mut buf);
            expect[o..o + len].copy_from_slice(&buf);
        }
        m.pos += len as u64;
    }
    assert!(s.arena == expect, "ctr_xor: arena differs (status {st:?})");
    // The stream's position is the model's (also after a failure).
    if let Some(k) = si {
        let mut p = 7u64;
        // SAFETY: a live stream, a valid out.
        assert_eq!(
            unsafe { aesx_ctr_position(s.streams[k].h, &mut p) },
            AESX_OK
        );
        assert_eq!(p, s.streams[k].pos);
    }
    Ok(())
}

fn ctr_seek_position_free(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let si = pick(u, &s.streams)?;
    let h = si.map_or(null_mut(), |k| s.streams[k].h);
    match u.int_in_range(0..=2u8)? {
        0 => {
            let pos = pos_choice(u)?;
            // SAFETY: NULL or a live stream.
            let st = unsafe { aesx_ctr_seek(h, pos) };
            match si {
                Some(k) => {
                    assert_eq!(st, AESX_OK);
                    s.streams[k].pos = pos;
                }
                None => assert_eq!(st, AESX_ERR_NULL_POINTER),
            }
        }
        1 => {
            let out_null = u.ratio(1, 6)?;
            let mut p = 77u64;
            let out = if out_null { null_mut() } else { &raw mut p };
            // SAFETY: NULL or a live stream; NULL or valid out.
            let st = unsafe { aesx_ctr_position(h, out) };
            match (si, out_null) {
                (Some(k), false) => {
                    assert_eq!(st, AESX_OK);
                    assert_eq!(p, s.streams[k].pos);
                }
                (None, false) => {
                    assert_eq!(st, AESX_ERR_NULL_POINTER);
                    assert_eq!(p, 0, "position out not cleared");
                }
                (_, true) => assert_eq!(st, AESX_ERR_NULL_POINTER),
            }
        }
        _ => {
            if let Some(k) = si {
                s.streams.remove(k);
            }
            // SAFETY: NULL or a live stream, removed from the list.
            assert_eq!(unsafe { aesx_ctr_free(h) }, AESX_OK);
        }
    }
    Ok(())
}

fn backends(u: &mut Unstructured<'_>) -> Result<()> {
    let id: u32 = if u.ratio(1, 3)? {
        u.arbitrary()?
    } else {
        u.int_in_range(0..=6)?
    };
    let known = id <= 5;
    let avail = aesx_backend_check(id);
    assert_eq!(
        avail == AESX_ERR_UNKNOWN_BACKEND,
        !known,
        "backend_check({id})"
    );
    let mut name: *const c_char = c"stale".as_ptr();
    // SAFETY: a valid out.
    let st = unsafe { aesx_backend_name(id, &mut name) };
    if known {
        assert_eq!(st, AESX_OK);
        // SAFETY: a static NUL-terminated string.
        let n = unsafe { CStr::from_ptr(name) };
        let mut back = 99u32;
        // SAFETY: NUL-terminated name, valid out.
        assert_eq!(
            unsafe { aesx_backend_from_name(n.as_ptr(), &mut back) },
            AESX_OK
        );
        assert_eq!(back, id);
    } else {
        assert_eq!(st, AESX_ERR_UNKNOWN_BACKEND);
        assert!(name.is_null(), "backend_name out not cleared");
    }
    // An arbitrary name: a known backend or 0.
    let n = u.int_in_range(0..=12usize)?.min(u.len());
    let raw: Vec<u8> = u.bytes(n)?.to_vec();
    let text = CString::new(raw.into_iter().filter(|&c| c != 0).collect::<Vec<u8>>()).unwrap();
    let mut b = 99u32;
    // SAFETY: NUL-terminated, valid out.
    let st = unsafe { aesx_backend_from_name(text.as_ptr(), &mut b) };
    match st {
        AESX_OK => assert!(b <= 5),
        AESX_ERR_UNKNOWN_BACKEND => assert_eq!(b, 0),
        other => panic!("from_name gave {other:?}"),
    }
    let want_name = text.to_str().ok().and_then(|t| {
        if t.trim().eq_ignore_ascii_case("auto") {
            Some(0)
        } else {
            t.parse::<Backend>()
                .ok()
                .map(|b| Backend::ALL.iter().position(|&x| x == b).unwrap() as u32 + 1)
        }
    });
    assert_eq!(st == AESX_OK, want_name.is_some(), "{text:?}");
    if let Some(w) = want_name {
        assert_eq!(b, w, "{text:?}");
    }
    // NULLs.
    // SAFETY: NULL arguments are allowed and refused.
    unsafe {
        assert_eq!(
            aesx_backend_from_name(null(), &mut b),
            AESX_ERR_NULL_POINTER
        );
        assert_eq!(b, 0);
        assert_eq!(
            aesx_backend_from_name(text.as_ptr(), null_mut()),
            AESX_ERR_NULL_POINTER
        );
        assert_eq!(aesx_backend_detect(null_mut()), AESX_ERR_NULL_POINTER);
        assert_eq!(aesx_default_backend(null_mut()), AESX_ERR_NULL_POINTER);
        let want = if known {
            AESX_ERR_NULL_POINTER
        } else {
            AESX_ERR_UNKNOWN_BACKEND
        };
        assert_eq!(aesx_backend_name(id, null_mut()), want);
    }
    // Forcing the default: it takes exactly the available known backends.
    let mut before = 0u32;
    // SAFETY: valid out.
    assert_eq!(unsafe { aesx_default_backend(&mut before) }, AESX_OK);
    let st = aesx_set_default_backend(id);
    let mut after = 0u32;
    // SAFETY: valid out.
    assert_eq!(unsafe { aesx_default_backend(&mut after) }, AESX_OK);
    if avail == AESX_OK {
        assert_eq!(st, AESX_OK);
        let mut detected = 0u32;
        // SAFETY: valid out.
        assert_eq!(unsafe { aesx_backend_detect(&mut detected) }, AESX_OK);
        assert_eq!(after, if id == 0 { detected } else { id });
    } else {
        assert_eq!(st, avail);
        assert_eq!(after, before, "a refused default changed the default");
    }
    Ok(())
}

/// FIPS-197 words (first byte most significant) of round keys, split as SuiteB_FFI does.
fn words(keys: &[[u8; 16]]) -> Vec<u32> {
    keys.iter()
        .flat_map(|k| {
            k.chunks_exact(4)
                .map(|w| u32::from_be_bytes(w.try_into().unwrap()))
        })
        .collect()
}

struct Sched {
    init: [u32; 4],
    mid: [u32; 52],
    fin: [u32; 4],
}

impl Sched {
    fn filled(v: u32) -> Sched {
        Sched {
            init: [v; 4],
            mid: [v; 52],
            fin: [v; 4],
        }
    }
    fn ptrs(&mut self, null: u8) -> (*mut u32, *mut u32, *mut u32) {
        (
            if null == 1 {
                null_mut()
            } else {
                self.init.as_mut_ptr()
            },
            if null == 2 {
                null_mut()
            } else {
                self.mid.as_mut_ptr()
            },
            if null == 3 {
                null_mut()
            } else {
                self.fin.as_mut_ptr()
            },
        )
    }
    fn flat(&self, k: usize) -> Vec<u32> {
        let mut v = self.init.to_vec();
        v.extend_from_slice(&self.mid[..4 * (k + 5)]);
        v.extend_from_slice(&self.fin);
        v
    }
}

fn suiteb_expand(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    let k = *u.choose(&[4usize, 6, 8])?;
    let key_off = u.int_in_range(0..=ARENA - 32)?;
    let key_null = u.ratio(1, 10)?;
    let null_at = if u.ratio(1, 6)? {
        u.int_in_range(1..=3u8)?
    } else {
        0
    };
    let which = u.int_in_range(0..=2u8)?; // enc, dec, both
    let key = s.arena[key_off..key_off + 4 * k].to_vec();
    let pk = if key_null {
        null()
    } else {
        s.at(Some(key_off)).cast_const()
    };
    let (mut e, mut d) = (Sched::filled(0xa5a5_a5a5), Sched::filled(0x5a5a_5a5a));
    let (ei, em, ef) = e.ptrs(null_at);
    let (di, dm, df) = d.ptrs(0);
    // SAFETY: NULL or arrays of the documented sizes for `k`; the key NULL or 4k bytes.
    unsafe {
        match (which, k) {
            (0, 4) => aesniExpandEncrypt128(pk, ei, em, ef),
            (0, 6) => aesniExpandEncrypt192(pk, ei, em, ef),
            (0, _) => aesniExpandEncrypt256(pk, ei, em, ef),
            (1, 4) => aesniExpandDecrypt128(pk, ei, em, ef),
            (1, 6) => aesniExpandDecrypt192(pk, ei, em, ef),
            (1, _) => aesniExpandDecrypt256(pk, ei, em, ef),
            (_, 4) => aesniExpandEncryptDecrypt128(pk, ei, em, ef, di, dm, df),
            (_, 6) => aesniExpandEncryptDecrypt192(pk, ei, em, ef, di, dm, df),
            (_, _) => aesniExpandEncryptDecrypt256(pk, ei, em, ef, di, dm, df),
        }
    }
    let untouched = |x: &Sched, v: u32| x.flat(k).iter().all(|&w| w == v);
    if key_null || null_at != 0 {
        assert!(untouched(&e, 0xa5a5_a5a5), "expand with a NULL wrote");
        assert!(untouched(&d, 0x5a5a_5a5a), "expand with a NULL wrote");
        return Ok(());
    }
    let rk = aesx::hazmat::expand_key(&key).unwrap();
    let enc = words(rk.as_slice());
    if which != 1 {
        assert_eq!(e.flat(k), enc, "encrypt schedule k={k}");
    }
    // A decrypt schedule decrypts what the encrypt schedule encrypts (through the block calls).
    let dec = if which == 1 { &mut e } else { &mut d };
    if which != 0 {
        let mut blk = [0u8; 16];
        blk.copy_from_slice(&s.arena[..16]);
        let mut want = blk;
        soft(&key).decrypt_block(&mut want);
        let (i, m, f) = dec.ptrs(0);
        // SAFETY: a full schedule for `k`; distinct 16-byte blocks.
        unsafe { aesniDecryptBlock(k, i, m, f, blk.as_ptr(), blk.as_mut_ptr()) };
        assert_eq!(blk, want, "decrypt schedule k={k}");
    }
    Ok(())
}

fn suiteb_blocks(s: &mut State, u: &mut Unstructured<'_>) -> Result<()> {
    // Encrypt with an arbitrary schedule (any words are a valid schedule), or decrypt with the
    // one expanded from a key; any overlap of in and out; bad k, NULLs, n * 16 overflowing.
    let decrypt = u.arbitrary::<bool>()?;
    let k = if u.ratio(1, 10)? {
        *u.choose(&[0usize, 3, 5, 7, 9, 16, usize::MAX])?
    } else {
        *u.choose(&[4usize, 6, 8])?
    };
    let kk = if matches!(k, 4 | 6 | 8) { k } else { 4 };
    let mut sched = Sched::filled(0);
    let key = u.bytes(4 * kk)?.to_vec();
    let aes: Aes = if decrypt {
        let (i, m, f) = sched.ptrs(0);
        // SAFETY: a key of 4*kk bytes and full arrays.
        unsafe {
            match kk {
                4 => aesniExpandDecrypt128(key.as_ptr(), i, m, f),
                6 => aesniExpandDecrypt192(key.as_ptr(), i, m, f),
                _ => aesniExpandDecrypt256(key.as_ptr(), i, m, f),
            }
        }
        soft(&key)
    } else {
        for w in sched
            .init
            .iter_mut()
            .chain(&mut sched.mid[..4 * (kk + 5)])
            .chain(&mut sched.fin)
        {
            *w = u.arbitrary()?;
        }
        let rk: Vec<[u8; 16]> = sched
            .flat(kk)
            .chunks_exact(4)
            .map(|c| {
                let mut b = [0u8; 16];
                for (j, w) in c.iter().enumerate() {
                    b[4 * j..4 * j + 4].copy_from_slice(&w.to_be_bytes());
                }
                b
            })
            .collect();
        Aes::from_round_keys(&rk, Backend::Soft).unwrap()
    };
    let null_at = if u.ratio(1, 8)? {
        u.int_in_range(1..=5u8)?
    } else {
        0
    };
    let single = u.ratio(1, 4)?;
    let i = u.int_in_range(0..=ARENA - 16)?;
    let o = u.int_in_range(0..=ARENA - 16)?;
    let n = if single {
        1
    } else if u.ratio(1, 12)? {
        *u.choose(&[usize::MAX / 8, usize::MAX / 16, usize::MAX / 16 + 1])?
    } else {
        u.int_in_range(0..=(ARENA - i.max(o)) / 16)?
    };
    let before = s.arena.clone();
    let (pi, pm, pf) = sched.ptrs(if null_at <= 3 { null_at } else { 0 });
    let pin = if null_at == 4 {
        null()
    } else {
        s.at(Some(i)).cast_const()
    };
    let pout = if null_at == 5 {
        null_mut()
    } else {
        s.at(Some(o))
    };
    let (pi, pm, pf) = (pi.cast_const(), pm.cast_const(), pf.cast_const());
    // SAFETY: schedule arrays full for `kk`; in/out inside the arena for n blocks, or n so
    // large that n * 16 overflows or exceeds PTRDIFF_MAX (refused before any access).
    unsafe {
        match (decrypt, single) {
            (false, true) => aesniEncryptBlock(k, pi, pm, pf, pin, pout),
            (true, true) => aesniDecryptBlock(k, pi, pm, pf, pin, pout),
            (false, false) => aesniEncryptBlocks(k, n, pi, pm, pf, pin, pout),
            (true, false) => aesniDecryptBlocks(k, n, pi, pm, pf, pin, pout),
        }
    }
    let mut expect = before.clone();
    let runs = matches!(k, 4 | 6 | 8)
        && null_at == 0
        && n > 0
        && n.checked_mul(16).is_some_and(|l| l <= isize::MAX as usize);
    if runs {
        let mut buf = before[i..i + 16 * n].to_vec();
        if decrypt {
            aes.decrypt_blocks(&mut buf);
        } else {
            aes.encrypt_blocks(&mut buf);
        }
        expect[o..o + 16 * n].copy_from_slice(&buf);
    }
    assert!(
        s.arena == expect,
        "suiteb blocks k={k} n={n} null {null_at}"
    );
    Ok(())
}

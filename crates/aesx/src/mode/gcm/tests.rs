//! Unit tests that need the internals: the per-nonce limit and the 32-bit counter wrap with a
//! chosen J0, both against a bit-by-bit reference written from SP 800-38D (Algorithms 1-5),
//! independent of the POLYVAL formulation the kernels use.
use super::*;
use alloc::vec;
use alloc::vec::Vec;

/// SP 800-38D Algorithm 1: X * Y in GF(2^128), bit-reflected, right shifts.
fn ref_mul(x: u128, y: u128) -> u128 {
    const R: u128 = 0xe1 << 120;
    let mut z = 0u128;
    let mut v = y;
    for i in 0..128 {
        if (x >> (127 - i)) & 1 == 1 {
            z ^= v;
        }
        v = if v & 1 == 1 { (v >> 1) ^ R } else { v >> 1 };
    }
    z
}

fn ref_ghash(h: u128, data: &[u8]) -> u128 {
    let mut y = 0u128;
    for c in data.chunks(16) {
        let mut b = [0u8; 16];
        b[..c.len()].copy_from_slice(c);
        y = ref_mul(y ^ u128::from_be_bytes(b), h);
    }
    y
}

fn pad16(v: &[u8]) -> Vec<u8> {
    let mut p = v.to_vec();
    p.resize(v.len().div_ceil(16) * 16, 0);
    p
}

/// GCM-AE from SP 800-38D with an explicit J0 (so any counter start can be tested).
fn ref_seal_j0(aes: &Aes, j0: [u8; 16], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    let mut hb = [0u8; 16];
    aes.encrypt_block(&mut hb);
    let h = u128::from_be_bytes(hb);
    let mut ct = pt.to_vec();
    let mut cb = j0;
    for chunk in ct.chunks_mut(16) {
        let c = u32::from_be_bytes(cb[12..].try_into().unwrap()).wrapping_add(1);
        cb[12..].copy_from_slice(&c.to_be_bytes());
        let mut ks = cb;
        aes.encrypt_block(&mut ks);
        chunk.iter_mut().zip(ks).for_each(|(d, k)| *d ^= k);
    }
    let mut s_in = pad16(aad);
    s_in.extend(pad16(&ct));
    s_in.extend_from_slice(&((aad.len() as u64 * 8).to_be_bytes()));
    s_in.extend_from_slice(&((pt.len() as u64 * 8).to_be_bytes()));
    let s = ref_ghash(h, &s_in).to_be_bytes();
    let mut t = j0;
    aes.encrypt_block(&mut t);
    t.iter_mut().zip(s).for_each(|(a, b)| *a ^= b);
    (ct, t)
}

fn ref_j0(aes: &Aes, nonce: &[u8]) -> [u8; 16] {
    if nonce.len() == 12 {
        let mut j = [0u8; 16];
        j[..12].copy_from_slice(nonce);
        j[15] = 1;
        return j;
    }
    let mut hb = [0u8; 16];
    aes.encrypt_block(&mut hb);
    let mut d = pad16(nonce);
    d.extend_from_slice(&[0u8; 8]);
    d.extend_from_slice(&((nonce.len() as u64 * 8).to_be_bytes()));
    ref_ghash(u128::from_be_bytes(hb), &d).to_be_bytes()
}

fn data(n: usize, seed: u32) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9e37_79b9) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect()
}

/// Seals `pt` with a stream whose J0 is forced (internal API), in the given chunks.
fn stream_seal_j0(
    gcm: &AesGcm,
    j0: [u8; 16],
    aad: &[u8],
    pt: &[u8],
    chunk: usize,
) -> (Vec<u8>, [u8; 16]) {
    let mut st = Stream::new(gcm, &[0u8; 12]).unwrap();
    st.j0 = j0;
    st.ctr = inc32(&j0, 1);
    st.aad(gcm, aad).unwrap();
    let mut ct = pt.to_vec();
    for c in ct.chunks_mut(chunk.max(1)) {
        st.update(gcm, c, true).unwrap();
    }
    (ct, st.finish(gcm))
}

#[test]
fn reference_agrees_with_one_shot_on_every_backend_and_nonce_length() {
    for b in Backend::available() {
        for kl in [16, 24, 32] {
            let key = data(kl, kl as u32);
            let gcm = AesGcm::with_backend(&key, b).unwrap();
            for (i, nlen) in [1usize, 8, 12, 13, 16, 17, 64].into_iter().enumerate() {
                let nonce = data(nlen, 100 + i as u32);
                let aad = data(i * 7, 200);
                let pt = data(i * 37 + 5, 300);
                let j0 = ref_j0(gcm.cipher(), &nonce);
                let (ct, tag) = ref_seal_j0(gcm.cipher(), j0, &aad, &pt);
                let mut buf = pt.clone();
                let t = gcm.seal_in_place_detached(&nonce, &aad, &mut buf).unwrap();
                assert_eq!(buf, ct, "{b} key={kl} nonce={nlen}");
                assert_eq!(t.as_bytes(), &tag, "{b} key={kl} nonce={nlen}");
            }
        }
    }
}

#[test]
fn counter_low_word_wraps_mod_2_32_on_every_backend() {
    for b in Backend::available() {
        for kl in [16, 32] {
            let gcm = AesGcm::with_backend(&data(kl, 7), b).unwrap();
            for start in [0xffff_fffdu32, 0xffff_fff0, 0xffff_ffff, 0xffff_ff00] {
                let mut j0: [u8; 16] = data(16, start).try_into().unwrap();
                j0[12..].copy_from_slice(&start.to_be_bytes());
                // Long enough to cross the wrap inside a fused 8-block batch and in the tail.
                let pt = data(16 * 40 + 9, start ^ 5);
                let (ct, tag) = ref_seal_j0(gcm.cipher(), j0, b"aad", &pt);
                for chunk in [1, 15, 16, 17, 100, 128, 1000] {
                    let (c, t) = stream_seal_j0(&gcm, j0, b"aad", &pt, chunk);
                    assert_eq!(c, ct, "{b} start={start:x} chunk={chunk}");
                    assert_eq!(t, tag, "{b} start={start:x} chunk={chunk}");
                }
                // The SSH-style 128-bit counter carries into the nonce part at the wrap: the
                // blocks before it agree, the rest differ.
                let first = start.wrapping_add(1) as u64;
                let before = ((1u64 << 32) - first) as usize;
                let mut c128 = pt.clone();
                gcm.cipher().ctr_xor_at(&inc32(&j0, 1), 0, &mut c128);
                if 16 * before < pt.len() {
                    assert_eq!(c128[..16 * before], ct[..16 * before]);
                    assert_ne!(c128[16 * before..], ct[16 * before..]);
                } else {
                    assert_eq!(c128, ct, "no wrap inside the message");
                }
            }
        }
    }
}

#[test]
fn message_limit_is_enforced_before_anything_is_written() {
    let gcm = AesGcm::with_backend(&[1u8; 16], Backend::Soft).unwrap();
    assert_eq!(MAX_MESSAGE_LEN, 68_719_476_704);
    // One-shot: the check is on the length alone.
    assert!(AesGcm::check_lengths(0, MAX_MESSAGE_LEN as usize).is_ok());
    assert_eq!(
        AesGcm::check_lengths(0, MAX_MESSAGE_LEN as usize + 1)
            .unwrap_err()
            .kind(),
        ErrorKind::MessageTooLong
    );
    assert_eq!(
        AesGcm::check_lengths(MAX_AAD_LEN as usize + 1, 0)
            .unwrap_err()
            .kind(),
        ErrorKind::AadTooLong
    );
    // Streaming: a stream 20 bytes short of the limit takes 20 bytes and refuses one more,
    // leaving the refused buffer untouched.
    let mut st = Stream::new(&gcm, &[0u8; 12]).unwrap();
    assert_eq!(st.end_aad(), None); // no AAD: nothing left to hash
    st.msg_len = MAX_MESSAGE_LEN - 20;
    let mut buf = vec![0x55u8; 21];
    assert_eq!(
        st.update(&gcm, &mut buf, true).unwrap_err().kind(),
        ErrorKind::MessageTooLong
    );
    assert_eq!(buf, vec![0x55u8; 21]);
    st.update(&gcm, &mut buf[..20], true).unwrap();
    assert_eq!(st.msg_len, MAX_MESSAGE_LEN);
    assert_eq!(
        st.update(&gcm, &mut buf[20..], true).unwrap_err().kind(),
        ErrorKind::MessageTooLong
    );
    assert!(st.update(&gcm, &mut [], true).is_ok());
    // AAD likewise.
    let mut st = Stream::new(&gcm, &[0u8; 12]).unwrap();
    st.aad_len = MAX_AAD_LEN - 1;
    st.aad(&gcm, b"x").unwrap();
    assert_eq!(
        st.aad(&gcm, b"y").unwrap_err().kind(),
        ErrorKind::AadTooLong
    );
}

#[test]
fn tag_matches_is_exact() {
    let t: [u8; 16] = data(16, 1).try_into().unwrap();
    for n in [4, 8, 12, 13, 14, 15, 16] {
        assert_eq!(tag_matches(&t, &t[..n]), 1);
        // Bytes of `expected` past the length do not count.
        let mut e = t;
        e[n..].iter_mut().for_each(|b| *b ^= 0x5a);
        assert_eq!(tag_matches(&e, &t[..n]), 1);
        for i in 0..n {
            for bit in 0..8 {
                let mut g = t[..n].to_vec();
                g[i] ^= 1 << bit;
                assert_eq!(tag_matches(&t, &g), 0);
            }
        }
    }
}

#[test]
fn finish_truncated_checks_the_leading_bytes() {
    let gcm = AesGcm::new(&data(16, 2)).unwrap();
    let nonce = data(12, 3);
    let mut ct = data(100, 4);
    let full = {
        let mut e = gcm.encryptor(&nonce).unwrap();
        e.aad(b"aad").unwrap();
        e.update(&mut ct).unwrap();
        e.finish()
    };
    let dec = || {
        let mut d = gcm.decryptor(&nonce).unwrap();
        d.aad(b"aad").unwrap();
        d.update(&mut ct.clone()).unwrap();
        d
    };
    for n in 0..=17 {
        let t = &full.as_bytes()[..n.min(16)];
        let r = dec().finish_truncated(t);
        if matches!(n, 4 | 8 | 12..=16) {
            assert!(r.is_ok(), "{n}");
            let mut bad = t.to_vec();
            bad[n - 1] ^= 0x80;
            assert_eq!(
                dec().finish_truncated(&bad).unwrap_err().kind(),
                ErrorKind::AuthenticationFailed
            );
        } else if n <= 16 {
            assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidTagLength, "{n}");
        }
    }
}

/// `partial_value` and `fill_blocks` against copying into a zeroed buffer, for every length of
/// a partial block and of a short-message buffer, with bytes that differ from their neighbours
/// (an overlapping word placed one byte off changes the result).
#[test]
fn partial_blocks_read_exactly_their_bytes() {
    let src: Vec<u8> = (0..80u8)
        .map(|i| i.wrapping_mul(37).wrapping_add(11))
        .collect();
    for n in 0..=16 {
        for off in [0, 1, 7] {
            let s = &src[off..off + n];
            let mut want = [0u8; 16];
            want[..n].copy_from_slice(s);
            assert_eq!(
                partial_value(s),
                u128::from_be_bytes(want),
                "{n} bytes at {off}"
            );
        }
    }
    for n in 0..=80 {
        let mut want = [0u8; 80];
        want[..n].copy_from_slice(&src[..n]);
        let mut got = [0u8; 80];
        fill_blocks(&mut got[..n.div_ceil(16) * 16], &src[..n]);
        assert_eq!(got, want, "{n} bytes");
    }
}

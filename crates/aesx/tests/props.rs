//! Properties on every backend: decryption inverts encryption (ECB, CBC, CTR, PKCS#7), and
//! streaming equals one-shot for any chunking (CTR any sizes plus seeking, CBC whole blocks),
//! in place and buffer to buffer. Random cases come from proptest; the fixed chunk-size matrix
//! {0,1,2,5,15,16,17,31,32,33,63,64,65,512} runs in full every time.

mod common;

use aesx::{
    Aes, Backend, CbcDecryptor, CbcEncryptor, Ctr, cbc_decrypt_pkcs7, cbc_encrypt_pkcs7, pkcs7_pad,
    pkcs7_unpad,
};
use common::{Rng, assert_bytes_eq, backends};
use proptest::prelude::*;

const CHUNKS: [usize; 14] = [0, 1, 2, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 512];

fn keyed(key: &[u8]) -> Vec<Aes> {
    backends()
        .into_iter()
        .map(|b| Aes::with_backend(key, b).unwrap())
        .collect()
}

fn key_strategy() -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(vec![16usize, 24, 32])
        .prop_flat_map(|n| prop::collection::vec(any::<u8>(), n))
}

/// IVs: mostly random, often a few blocks below a carry boundary (2^32, 2^64, 2^96, 2^128).
fn iv_strategy() -> impl Strategy<Value = [u8; 16]> {
    prop_oneof![
        any::<[u8; 16]>(),
        (0usize..4, 1u128..80, any::<u128>()).prop_map(|(k, d, hi)| {
            let shift = 32 * (k as u32 + 1);
            // Random bits above the boundary, zeros below it, then step back d blocks.
            let base = if shift == 128 { 0 } else { hi << shift };
            base.wrapping_sub(d).to_be_bytes()
        }),
    ]
}

/// Splits `len` into the piece lengths given by `sizes` (cycled); 0-length pieces are kept
/// (empty calls must be harmless); the remainder goes in one last piece.
fn pieces(len: usize, sizes: &[usize]) -> Vec<usize> {
    let mut out = Vec::new();
    let mut left = len;
    let sum: usize = sizes.iter().sum();
    let rounds = len.checked_div(sum).map_or(1, |r| r + 1);
    for &s in sizes.iter().cycle().take(rounds * sizes.len()) {
        if left == 0 {
            break;
        }
        let n = s.min(left);
        out.push(n);
        left -= n;
    }
    out.push(left);
    out
}

/// CTR over `data` in the given pieces, in place and b2b, both compared with one-shot.
fn ctr_streamed(
    aes: &Aes,
    iv: &[u8; 16],
    data: &[u8],
    sizes: &[usize],
    one_shot: &[u8],
    what: &str,
) {
    let b = aes.backend();
    let mut buf = data.to_vec();
    let mut c = Ctr::new(aes, iv);
    let mut at = 0;
    for n in pieces(data.len(), sizes) {
        c.apply_keystream(&mut buf[at..at + n]);
        at += n;
        assert_eq!(c.position(), at as u64, "{b}: {what}: position");
    }
    assert_bytes_eq(
        &buf,
        one_shot,
        format_args!("{b}: {what}: streamed in place"),
    );

    let mut out = vec![0u8; data.len()];
    let mut c = Ctr::new(aes, iv);
    let mut at = 0;
    for n in pieces(data.len(), sizes) {
        c.apply_keystream_b2b(&data[at..at + n], &mut out[at..at + n])
            .unwrap();
        at += n;
    }
    assert_bytes_eq(&out, one_shot, format_args!("{b}: {what}: streamed b2b"));

    let mut buf = data.to_vec();
    let mut at = 0;
    for n in pieces(data.len(), sizes) {
        aes.ctr_xor_at(iv, at as u64, &mut buf[at..at + n]);
        at += n;
    }
    assert_bytes_eq(
        &buf,
        one_shot,
        format_args!("{b}: {what}: ctr_xor_at pieces"),
    );
}

/// CBC over whole blocks, fed `sizes` blocks per call (cycled), vs one-shot; chaining value
/// checked after every call.
fn cbc_streamed(aes: &Aes, iv: &[u8; 16], data: &[u8], sizes: &[usize], what: &str) {
    let b = aes.backend();
    let mut ct = data.to_vec();
    aes.cbc_encrypt(iv, &mut ct).unwrap();
    let blocks: Vec<usize> = pieces(data.len() / 16, sizes);

    let mut buf = data.to_vec();
    let mut enc = CbcEncryptor::new(aes, iv);
    let mut at = 0;
    for n in &blocks {
        let end = at + 16 * n;
        enc.encrypt_blocks(&mut buf[at..end]).unwrap();
        at = end;
        let want_iv = if at == 0 {
            *iv
        } else {
            ct[at - 16..at].try_into().unwrap()
        };
        assert_eq!(
            enc.iv(),
            want_iv,
            "{b}: {what}: CbcEncryptor::iv after {at} bytes"
        );
    }
    assert_bytes_eq(
        &buf,
        &ct,
        format_args!("{b}: {what}: CbcEncryptor streamed"),
    );

    let mut dec = CbcDecryptor::new(aes, iv);
    let mut at = 0;
    for n in &blocks {
        let end = at + 16 * n;
        dec.decrypt_blocks(&mut buf[at..end]).unwrap();
        at = end;
        let want_iv = if at == 0 {
            *iv
        } else {
            ct[at - 16..at].try_into().unwrap()
        };
        assert_eq!(
            dec.iv(),
            want_iv,
            "{b}: {what}: CbcDecryptor::iv after {at} bytes"
        );
    }
    assert_bytes_eq(
        &buf,
        data,
        format_args!("{b}: {what}: CbcDecryptor streamed"),
    );
}

proptest! {
    #[test]
    fn ecb_round_trip_and_backends_agree(key in key_strategy(), nblocks in 0usize..40, seed in any::<u64>()) {
        let data = Rng::new(seed).bytes(16 * nblocks);
        let mut first: Option<Vec<u8>> = None;
        for aes in keyed(&key) {
            let b = aes.backend();
            let mut buf = data.clone();
            aes.encrypt_blocks(&mut buf);
            if let Some(f) = &first {
                assert_bytes_eq(&buf, f, format_args!("{b}: ECB differs from soft"));
            }
            aes.decrypt_blocks(&mut buf);
            assert_bytes_eq(&buf, &data, format_args!("{b}: ECB decrypt(encrypt(x))"));
            if b == Backend::Soft {
                let mut c = data.clone();
                aes.encrypt_blocks(&mut c);
                first = Some(c);
            }
        }
    }

    #[test]
    fn cbc_round_trip_and_streaming(
        key in key_strategy(),
        iv in any::<[u8; 16]>(),
        nblocks in 0usize..40,
        seed in any::<u64>(),
        sizes in prop::collection::vec(0usize..12, 1..8),
    ) {
        let data = Rng::new(seed).bytes(16 * nblocks);
        for aes in keyed(&key) {
            let mut buf = data.clone();
            aes.cbc_encrypt(&iv, &mut buf).unwrap();
            aes.cbc_decrypt(&iv, &mut buf).unwrap();
            assert_bytes_eq(&buf, &data, format_args!("{}: CBC decrypt(encrypt(x))", aes.backend()));
            cbc_streamed(&aes, &iv, &data, &sizes, &format!("CBC chunks {sizes:?} blocks"));
        }
    }

    #[test]
    fn ctr_round_trip_and_streaming(
        key in key_strategy(),
        iv in iv_strategy(),
        len in 0usize..700,
        seed in any::<u64>(),
        sizes in prop::collection::vec(0usize..100, 1..10),
    ) {
        let data = Rng::new(seed).bytes(len);
        let mut want = data.clone();
        common::rc_ctr(&key, &iv, 0, &mut want);
        for aes in keyed(&key) {
            let b = aes.backend();
            let mut buf = data.clone();
            Ctr::new(&aes, &iv).apply_keystream(&mut buf);
            assert_bytes_eq(&buf, &want, format_args!("{b}: CTR iv {} vs RustCrypto", hex::encode(iv)));
            Ctr::new(&aes, &iv).apply_keystream(&mut buf);
            assert_bytes_eq(&buf, &data, format_args!("{b}: CTR twice is the identity"));
            ctr_streamed(&aes, &iv, &data, &sizes, &want, &format!("CTR iv {} chunks {sizes:?}", hex::encode(iv)));
        }
    }

    /// Seek anywhere (forward, backward, far) and apply: the same bytes as that slice of a
    /// one-shot, and as RustCrypto seeking to the same byte position.
    #[test]
    fn ctr_seek_matches_one_shot(
        key in key_strategy(),
        iv in iv_strategy(),
        len in 1usize..400,
        seeks in prop::collection::vec((any::<prop::sample::Index>(), 0usize..80), 1..6),
        far in any::<u64>(),
    ) {
        let mut one_shot = vec![0u8; len];
        common::rc_ctr(&key, &iv, 0, &mut one_shot);
        let far_len = 37;
        let mut far_want = vec![0u8; far_len];
        common::rc_ctr(&key, &iv, far, &mut far_want);
        for aes in keyed(&key) {
            let b = aes.backend();
            let mut c = Ctr::new(&aes, &iv);
            // Touch the stream first so seeking has state to discard.
            c.apply_keystream(&mut [0u8; 3]);
            for (idx, n) in &seeks {
                let pos = idx.index(len);
                let n = (*n).min(len - pos);
                c.seek(pos as u64);
                assert_eq!(c.position(), pos as u64);
                let mut buf = vec![0u8; n];
                c.apply_keystream(&mut buf);
                assert_bytes_eq(&buf, &one_shot[pos..pos + n], format_args!("{b}: seek({pos}) then {n} bytes"));
                let mut buf = vec![0u8; n];
                aes.ctr_xor_at(&iv, pos as u64, &mut buf);
                assert_bytes_eq(&buf, &one_shot[pos..pos + n], format_args!("{b}: ctr_xor_at({pos}) {n} bytes"));
            }
            let mut buf = vec![0u8; far_len];
            c.seek(far);
            c.apply_keystream(&mut buf);
            assert_bytes_eq(&buf, &far_want, format_args!("{b}: seek({far}) vs RustCrypto"));
            let mut buf = vec![0u8; far_len];
            aes.ctr_xor_at(&iv, far, &mut buf);
            assert_bytes_eq(&buf, &far_want, format_args!("{b}: ctr_xor_at({far}) vs RustCrypto"));
        }
    }

    #[test]
    fn pkcs7_round_trip(key in key_strategy(), iv in any::<[u8; 16]>(), msg in prop::collection::vec(any::<u8>(), 0..100)) {
        for aes in keyed(&key) {
            let b = aes.backend();
            let ct = cbc_encrypt_pkcs7(&aes, &iv, &msg);
            assert_eq!(ct.len(), msg.len() / 16 * 16 + 16, "{b}: padded length");
            let pt = cbc_decrypt_pkcs7(&aes, &iv, &ct).unwrap_or_else(|e| panic!("{b}: {e}"));
            assert_bytes_eq(&pt, &msg, format_args!("{b}: pkcs7 decrypt(encrypt(m))"));
            // The helpers agree with pad + raw CBC.
            let whole = msg.len() / 16 * 16;
            let mut raw = msg[..whole].to_vec();
            raw.extend_from_slice(&pkcs7_pad(&msg[whole..]).unwrap());
            aes.cbc_encrypt(&iv, &mut raw).unwrap();
            assert_bytes_eq(&raw, &ct, format_args!("{b}: pkcs7_pad + cbc_encrypt"));
        }
        let whole = msg.len() / 16 * 16;
        let mut padded = msg[..whole].to_vec();
        padded.extend_from_slice(&pkcs7_pad(&msg[whole..]).unwrap());
        prop_assert_eq!(pkcs7_unpad(&padded), Ok(msg.len()));
    }
}

/// The fixed chunk-size matrix: each size used for every call, in place and b2b, on every
/// backend and key size. CTR runs on 1500 bytes from an IV 40 blocks below 2^64, so the
/// streams cross the carry; CBC and ECB use the same sizes counted in blocks.
#[test]
fn fixed_chunk_sizes_match_one_shot() {
    let mut rng = Rng::new(0xc4_0c5);
    for kl in [16, 24, 32] {
        let key = rng.bytes(kl);
        let ctr_iv = (1u128 << 64).wrapping_sub(40).to_be_bytes();
        let cbc_iv = rng.block();
        let data = rng.bytes(1500);
        let mut ctr_want = data.clone();
        common::rc_ctr(&key, &ctr_iv, 0, &mut ctr_want);
        let blocks = rng.bytes(16 * 150);
        for aes in keyed(&key) {
            let b = aes.backend();
            let mut ecb_want = blocks.clone();
            aes.encrypt_blocks(&mut ecb_want);
            for c in CHUNKS {
                let what = format!("AES-{} chunk {c}", kl * 8);
                ctr_streamed(&aes, &ctr_iv, &data, &[c], &ctr_want, &what);
                cbc_streamed(&aes, &cbc_iv, &blocks, &[c], &format!("{what} blocks"));

                let mut buf = blocks.clone();
                let mut out = vec![0u8; blocks.len()];
                let mut at = 0;
                for n in pieces(blocks.len() / 16, &[c]) {
                    let end = at + 16 * n;
                    aes.try_encrypt_blocks(&mut buf[at..end]).unwrap();
                    aes.encrypt_blocks_b2b(&blocks[at..end], &mut out[at..end])
                        .unwrap();
                    at = end;
                }
                assert_bytes_eq(&buf, &ecb_want, format_args!("{b}: {what}: ECB in place"));
                assert_bytes_eq(&out, &ecb_want, format_args!("{b}: {what}: ECB b2b"));
            }
        }
    }
}

#[test]
fn pieces_covers_the_input() {
    for len in [0, 1, 15, 16, 100, 1500] {
        for c in CHUNKS {
            let p = pieces(len, &[c]);
            assert_eq!(p.iter().sum::<usize>(), len, "len {len} chunk {c}");
            if c > 0 {
                assert!(p.iter().all(|&n| n <= c), "len {len} chunk {c}: {p:?}");
                assert_eq!(
                    p.iter().filter(|&&n| n == c).count(),
                    len / c,
                    "len {len} chunk {c}: {p:?}"
                );
            }
        }
    }
}

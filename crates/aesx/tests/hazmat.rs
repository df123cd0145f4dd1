//! The round-key interface: `hazmat::expand_key` against FIPS-197 Appendix A/C, the AES-NI
//! key-expansion variants against each other, and `Aes::from_round_keys` against
//! `Aes::with_backend` on every backend.

mod common;

use aesx::hazmat::{RoundKeys, expand_key};
use aesx::{Aes, Backend, Ctr, ErrorKind};
use common::{Rng, assert_bytes_eq, backends};

/// Word `i` of the FIPS-197 key schedule `w[]`, as hex.
fn word(rk: &RoundKeys, i: usize) -> String {
    hex::encode(&rk.keys[i / 4][4 * (i % 4)..4 * (i % 4) + 4])
}

#[test]
fn expand_key_matches_fips197_appendix_a() {
    // (key, rounds, [(i, w[i])]): Appendix A.1, A.2, A.3; the first derived words, a middle
    // round and the last round key.
    type Case = (&'static str, usize, &'static [(usize, &'static str)]);
    let cases: [Case; 3] = [
        (
            "2b7e151628aed2a6abf7158809cf4f3c",
            10,
            &[
                (0, "2b7e1516"),
                (3, "09cf4f3c"),
                (4, "a0fafe17"),
                (5, "88542cb1"),
                (6, "23a33939"),
                (7, "2a6c7605"),
                (20, "d4d1c6f8"),
                (23, "11f915bc"),
                (40, "d014f9a8"),
                (41, "c9ee2589"),
                (42, "e13f0cc8"),
                (43, "b6630ca6"),
            ],
        ),
        (
            "8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
            12,
            &[
                (5, "522c6b7b"),
                (6, "fe0c91f7"),
                (7, "2402f5a5"),
                (8, "ec12068e"),
                (9, "6c827f6b"),
                (20, "a448f6d9"),
                (23, "113b30e6"),
                (48, "e98ba06f"),
                (49, "448c773c"),
                (50, "8ecc7204"),
                (51, "01002202"),
            ],
        ),
        (
            "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
            14,
            &[
                (7, "0914dff4"),
                (8, "9ba35411"),
                (9, "8e6925af"),
                (10, "a51a8b5f"),
                (11, "2067fcde"),
                (20, "b5a9328a"),
                (23, "2f6c79b3"),
                (56, "fe4890d1"),
                (57, "e6188d0b"),
                (58, "046df344"),
                (59, "706c631e"),
            ],
        ),
    ];
    for (key, rounds, words) in cases {
        let rk = expand_key(&hex::decode(key).unwrap()).unwrap();
        assert_eq!(rk.rounds, rounds, "AES-{}: rounds", key.len() * 4);
        assert_eq!(
            rk.as_slice().len(),
            rounds + 1,
            "AES-{}: as_slice",
            key.len() * 4
        );
        for &(i, w) in words {
            assert_eq!(word(&rk, i), w, "AES-{} w[{i}]", key.len() * 4);
        }
    }
}

#[test]
fn expand_key_last_round_key_matches_fips197_appendix_c() {
    let key: Vec<u8> = (0u8..32).collect();
    for (kl, last) in [
        (16, "13111d7fe3944a17f307a78b4d2b30c5"),
        (24, "a4970a331a78dc09c418c271e3a41d5d"),
        (32, "24fc79ccbf0979e9371ac23c6d68de36"),
    ] {
        let rk = expand_key(&key[..kl]).unwrap();
        assert_eq!(
            hex::encode(rk.as_slice().last().unwrap()),
            last,
            "AES-{}",
            kl * 8
        );
        assert_eq!(
            hex::encode(rk.as_slice()[0]),
            hex::encode(&key[..16]),
            "AES-{}",
            kl * 8
        );
    }
}

#[test]
fn expand_key_rejects_bad_lengths() {
    for n in [0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64] {
        let e = expand_key(&vec![0u8; n]).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidKeyLength, "{n}-byte key");
    }
}

#[cfg(target_arch = "x86_64")]
#[test]
fn keysetup_variants_agree() {
    use aesx::hazmat::keysetup;
    let names: Vec<&str> = keysetup::variants().map(|(n, _)| n).collect();
    if Backend::Aesni.is_available() {
        assert_eq!(
            names,
            [
                "aeskeygenassist",
                "aesenclast-pshufb",
                "aeskeygenassist-inline",
                "aesenclast-pshufb-inline"
            ]
        );
        assert!(
            names.contains(&keysetup::preferred()),
            "preferred {}",
            keysetup::preferred()
        );
    } else {
        assert!(names.is_empty());
    }
    let mut rng = Rng::new(0x6e7);
    let mut keys: Vec<Vec<u8>> = vec![
        hex::decode("2b7e151628aed2a6abf7158809cf4f3c").unwrap(),
        (0u8..24).collect(),
        (0u8..32).collect(),
        vec![0xff; 32],
        vec![0; 24],
    ];
    for _ in 0..20 {
        for kl in [16, 24, 32] {
            keys.push(rng.bytes(kl));
        }
    }
    for key in &keys {
        let want = expand_key(key).unwrap();
        for name in [
            "aeskeygenassist",
            "aesenclast-pshufb",
            "aeskeygenassist-inline",
            "aesenclast-pshufb-inline",
        ] {
            let got = keysetup::expand_with(name, key);
            if !names.contains(&name) {
                assert!(got.is_none(), "{name} without AES-NI");
                continue;
            }
            let got = got.unwrap();
            assert_eq!(got.rounds, want.rounds, "{name} AES-{}", key.len() * 8);
            for (r, (g, w)) in got.as_slice().iter().zip(want.as_slice()).enumerate() {
                assert_eq!(
                    hex::encode(g),
                    hex::encode(w),
                    "{name} AES-{} round key {r}",
                    key.len() * 8
                );
            }
            // The measurement hooks run on the same keys without trouble.
            let f = keysetup::variants().find(|(n, _)| *n == name).unwrap().1;
            let _ = f(key);
        }
    }
    assert!(keysetup::expand_with("no-such-variant", &keys[0]).is_none());
    for name in &names {
        assert!(
            keysetup::expand_with(name, &[0u8; 20]).is_none(),
            "{name}: 20-byte key"
        );
    }
}

/// `from_round_keys(expand_key(k))` is the same cipher as `with_backend(k)` on every backend:
/// ECB, CBC and CTR on a multi-batch buffer.
#[test]
fn from_round_keys_behaves_like_with_backend() {
    let mut rng = Rng::new(0xf00d);
    for kl in [16, 24, 32] {
        for _ in 0..3 {
            let key = rng.bytes(kl);
            let iv = rng.block();
            let data = rng.bytes(16 * 67 + 9);
            let whole = &data[..16 * 67];
            let rk = expand_key(&key).unwrap();
            for b in backends() {
                let a = Aes::with_backend(&key, b).unwrap();
                let r = Aes::from_round_keys(rk.as_slice(), b).unwrap();
                let what = format!("{b}: AES-{}", kl * 8);
                assert_eq!((r.backend(), r.key_bits()), (b, kl as u32 * 8), "{what}");
                let run = |aes: &Aes| {
                    let mut ecb = whole.to_vec();
                    aes.encrypt_blocks(&mut ecb);
                    let mut ecb_dec = whole.to_vec();
                    aes.decrypt_blocks(&mut ecb_dec);
                    let mut cbc = whole.to_vec();
                    aes.cbc_encrypt(&iv, &mut cbc).unwrap();
                    let mut cbc_dec = whole.to_vec();
                    aes.cbc_decrypt(&iv, &mut cbc_dec).unwrap();
                    let mut ctr = data.clone();
                    Ctr::new(aes, &iv).apply_keystream(&mut ctr);
                    [ecb, ecb_dec, cbc, cbc_dec, ctr]
                };
                let (x, y) = (run(&a), run(&r));
                for (i, op) in ["ECB enc", "ECB dec", "CBC enc", "CBC dec", "CTR"]
                    .iter()
                    .enumerate()
                {
                    assert_bytes_eq(&y[i], &x[i], format_args!("{what}: from_round_keys {op}"));
                }
                // And against the independent oracle, so "both equally wrong" cannot pass.
                let mut want = whole.to_vec();
                common::rc_ecb_encrypt(&key, &mut want);
                assert_bytes_eq(
                    &y[0],
                    &want,
                    format_args!("{what}: from_round_keys ECB vs RustCrypto"),
                );
            }
        }
    }
}

#[test]
fn from_round_keys_rejects_bad_input() {
    let rk = expand_key(&[7u8; 16]).unwrap();
    for n in [0, 1, 10, 12, 14, 16] {
        let keys = vec![[0u8; 16]; n];
        let e = Aes::from_round_keys(&keys, Backend::Soft).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidKeyLength, "{n} round keys");
    }
    for b in Backend::ALL {
        let r = Aes::from_round_keys(rk.as_slice(), b);
        if b.is_available() {
            assert!(r.is_ok(), "{b}");
        } else {
            assert_eq!(r.unwrap_err().kind(), ErrorKind::BackendUnavailable, "{b}");
        }
    }
}

#[test]
fn round_keys_debug_hides_key_material() {
    let rk = expand_key(&[0xabu8; 32]).unwrap();
    let s = format!("{rk:?}");
    assert!(
        !s.contains("171") && !s.contains("ab"),
        "RoundKeys Debug leaks: {s}"
    );
    assert_eq!(rk.clone().as_slice(), rk.as_slice());
}

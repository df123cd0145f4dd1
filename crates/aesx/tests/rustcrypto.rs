//! The RustCrypto `cipher` 0.5 traits (feature `cipher`): `ctr`, `cbc`, `cmac` and `aes-gcm`
//! running over `aesx::rustcrypto::Aes{128,192,256}` (on every backend this CPU runs) must give
//! the same bytes as the same crates over RustCrypto's `aes` 0.9, on random keys, IVs and data
//! of lengths around every parallel-block boundary (the traits offer 32 blocks per call).

mod common;

use aes_gcm::aead::{Aead, Payload};
use aesx::rustcrypto::{Aes128, Aes192, Aes256};
use aesx::{Aes, Backend};
use cipher::consts::U12;
use cipher::{
    AlgorithmName, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt,
    InnerIvInit, KeyInit, KeyIvInit, KeySizeUser, StreamCipher, StreamCipherSeek,
};
use cmac::Mac;
use common::{Rng, assert_bytes_eq, backends};

/// Byte lengths: every block count from 0 to 70 (crossing the 32-block parallel width twice)
/// and one byte either side of each, plus a few large ones.
fn lengths() -> Vec<usize> {
    let mut v: Vec<usize> = (0..=70usize)
        .flat_map(|n| [(16 * n).saturating_sub(1), 16 * n, 16 * n + 1])
        .collect();
    v.extend([16 * 1024 - 1, 16 * 1024, 16 * 1024 + 5, 100_003]);
    v.sort();
    v.dedup();
    v
}

fn key_of<T: KeySizeUser>(k: &[u8]) -> cipher::Key<T> {
    k.try_into().unwrap()
}

/// `Ctr128BE` over an already expanded (backend-chosen) cipher.
fn ctr_over<C: BlockCipherEncrypt + cipher::BlockSizeUser<BlockSize = cipher::consts::U16>>(
    c: C,
    iv: &[u8; 16],
) -> ctr::Ctr128BE<C> {
    ctr::Ctr128BE::from_core(ctr::CtrCore::inner_iv_init(c, &(*iv).into()))
}

fn blocks(b: &[u8]) -> Vec<cipher::Block<Aes128>> {
    b.chunks_exact(16).map(|c| c.try_into().unwrap()).collect()
}

fn flat(b: &[cipher::Block<Aes128>]) -> Vec<u8> {
    b.iter().flat_map(|x| x.iter().copied()).collect()
}

/// The same differential suite for one aesx type and its `aes` counterpart.
macro_rules! suite {
    ($m:ident, $x:ty, $r:ty, $key:literal, $seed:literal) => {
        mod $m {
            use super::*;
            type X = $x;
            type R = $r;
            const KEY: usize = $key;

            fn x_new(key: &[u8], b: Backend) -> X {
                X::with_backend(key.try_into().unwrap(), b).unwrap()
            }

            fn block_cipher(rng: &mut Rng) {
                for b in backends() {
                    for &len in lengths().iter().filter(|l| *l % 16 == 0) {
                        let key = rng.bytes(KEY);
                        let x = x_new(&key, b);
                        let r = R::new(&key_of::<R>(&key));
                        let pt = rng.bytes(len);
                        let (xb, rb) = (blocks(&pt), blocks(&pt));
                        // In place, on the parallel path.
                        let (mut xe, mut re) = (xb.clone(), rb.clone());
                        x.encrypt_blocks(&mut xe);
                        r.encrypt_blocks(&mut re);
                        assert_bytes_eq(&flat(&xe), &flat(&re), &format!("{b} ecb enc len {len}"));
                        // Buffer to buffer (input and output distinct).
                        let mut out = vec![Default::default(); xe.len()];
                        x.decrypt_blocks_b2b(&xe, &mut out).unwrap();
                        assert_bytes_eq(&flat(&out), &pt, &format!("{b} ecb dec b2b len {len}"));
                        let mut out2 = vec![Default::default(); xe.len()];
                        x.encrypt_blocks_b2b(&xb, &mut out2).unwrap();
                        assert_bytes_eq(
                            &flat(&out2),
                            &flat(&re),
                            &format!("{b} ecb enc b2b len {len}"),
                        );
                        // Single-block calls.
                        if let Some(first) = xb.first() {
                            let mut one = *first;
                            x.encrypt_block(&mut one);
                            assert_eq!(one, re[0], "{b} single block");
                            x.decrypt_block(&mut one);
                            assert_eq!(one, *first, "{b} single block round trip");
                        }
                    }
                }
            }

            fn ctr(rng: &mut Rng) {
                for b in backends() {
                    for len in lengths() {
                        let key = rng.bytes(KEY);
                        let mut iv = rng.block();
                        // Counters about to carry out of the low 64 bits and to wrap mod 2^128.
                        match len % 3 {
                            0 => iv[8..].fill(0xff),
                            1 => iv.fill(0xff),
                            _ => {}
                        }
                        let data = rng.bytes(len);
                        let mut xs = data.clone();
                        let mut rs = data.clone();
                        ctr_over(x_new(&key, b), &iv).apply_keystream(&mut xs);
                        ctr::Ctr128BE::<R>::new(&key_of::<R>(&key), &iv.into())
                            .apply_keystream(&mut rs);
                        assert_bytes_eq(&xs, &rs, &format!("{b} ctr len {len}"));
                        if b == Backend::detect() {
                            let mut ks = data.clone();
                            ctr::Ctr128BE::<X>::new(&key_of::<X>(&key), &iv.into())
                                .apply_keystream(&mut ks);
                            assert_bytes_eq(&ks, &rs, &format!("ctr KeyIvInit len {len}"));
                        }
                        // Against aesx's own CTR too (same counter flavour).
                        let mut own = data.clone();
                        Aes::with_backend(&key, b)
                            .unwrap()
                            .ctr_xor_at(&iv, 0, &mut own);
                        assert_bytes_eq(&xs, &own, &format!("{b} ctr vs aesx len {len}"));
                        // Streaming in odd chunks and seeking gives the same stream.
                        if len > 40 {
                            let mut c = ctr_over(x_new(&key, b), &iv);
                            let mut st = data.clone();
                            let (a, rest) = st.split_at_mut(7);
                            c.apply_keystream(a);
                            let (m, z) = rest.split_at_mut(rest.len() / 2 + 3);
                            c.apply_keystream(m);
                            c.apply_keystream(z);
                            assert_bytes_eq(&st, &rs, &format!("{b} ctr chunked len {len}"));
                            c.seek(5u64);
                            let mut tail = data[5..].to_vec();
                            c.apply_keystream(&mut tail);
                            assert_bytes_eq(&tail, &rs[5..], &format!("{b} ctr seek len {len}"));
                        }
                    }
                }
            }

            fn cbc(rng: &mut Rng) {
                for b in backends() {
                    for &len in lengths().iter().filter(|l| *l % 16 == 0) {
                        let key = rng.bytes(KEY);
                        let iv = rng.block();
                        let data = rng.bytes(len);
                        let mut xe = blocks(&data);
                        let mut re = xe.clone();
                        cbc::Encryptor::<X>::inner_iv_init(x_new(&key, b), &iv.into())
                            .encrypt_blocks(&mut xe);
                        cbc::Encryptor::<R>::new(&key_of::<R>(&key), &iv.into())
                            .encrypt_blocks(&mut re);
                        assert_bytes_eq(&flat(&xe), &flat(&re), &format!("{b} cbc enc len {len}"));
                        // Decrypt a random ciphertext (not only our own output): parallel decryption path.
                        let ct = blocks(&rng.bytes(len));
                        let (mut xd, mut rd) = (ct.clone(), ct.clone());
                        cbc::Decryptor::<X>::inner_iv_init(x_new(&key, b), &iv.into())
                            .decrypt_blocks(&mut xd);
                        cbc::Decryptor::<R>::new(&key_of::<R>(&key), &iv.into())
                            .decrypt_blocks(&mut rd);
                        assert_bytes_eq(&flat(&xd), &flat(&rd), &format!("{b} cbc dec len {len}"));
                    }
                }
            }

            fn cmac_mac(rng: &mut Rng) {
                for b in backends() {
                    for len in lengths().into_iter().filter(|l| *l < 2000 || *l % 7 == 0) {
                        let key = rng.bytes(KEY);
                        let data = rng.bytes(len);
                        let mut xm = <cmac::Cmac<X> as cmac::digest::common::InnerInit>::inner_init(
                            x_new(&key, b),
                        );
                        xm.update(&data);
                        let mut rm =
                            <cmac::Cmac<R> as cmac::KeyInit>::new_from_slice(&key).unwrap();
                        rm.update(&data);
                        let (xt, rt) = (xm.finalize().into_bytes(), rm.finalize().into_bytes());
                        assert_eq!(xt, rt, "{b} cmac len {len}");
                    }
                }
            }

            fn gcm(rng: &mut Rng) {
                for b in backends() {
                    for len in lengths().into_iter().filter(|l| *l < 1200 || *l % 5 == 0) {
                        let key = rng.bytes(KEY);
                        let nonce = rng.bytes(12);
                        let aad = rng.bytes(len % 37);
                        let data = rng.bytes(len);
                        let x = aes_gcm::AesGcm::<X, U12>::from(x_new(&key, b));
                        let r = <aes_gcm::AesGcm<R, U12> as aes_gcm::KeyInit>::new_from_slice(&key)
                            .unwrap();
                        let pay = || Payload {
                            msg: &data,
                            aad: &aad,
                        };
                        let nonce = nonce.as_slice().try_into().unwrap();
                        let xc = x.encrypt(nonce, pay()).unwrap();
                        let rc = r.encrypt(nonce, pay()).unwrap();
                        assert_bytes_eq(&xc, &rc, &format!("{b} gcm len {len}"));
                        // The drop-in form: the same type expression as with `aes`, keyed by `KeyInit`.
                        let k = <aes_gcm::AesGcm<X, U12> as aes_gcm::KeyInit>::new_from_slice(&key)
                            .unwrap();
                        assert_bytes_eq(&k.encrypt(nonce, pay()).unwrap(), &rc, "gcm KeyInit");
                        let back = x
                            .decrypt(
                                nonce,
                                Payload {
                                    msg: &xc,
                                    aad: &aad,
                                },
                            )
                            .unwrap();
                        assert_bytes_eq(&back, &data, &format!("{b} gcm open len {len}"));
                        let mut bad = xc.clone();
                        let i = rng.next_u64() as usize % bad.len();
                        bad[i] ^= 1 << (rng.next_u64() % 8);
                        assert!(
                            x.decrypt(
                                nonce,
                                Payload {
                                    msg: &bad,
                                    aad: &aad
                                }
                            )
                            .is_err(),
                            "{b} gcm accepted a flipped bit at {i}"
                        );
                    }
                }
            }

            #[test]
            fn block_cipher_matches_aes() {
                block_cipher(&mut Rng::new($seed));
            }
            #[test]
            fn ctr128be_matches_aes() {
                ctr(&mut Rng::new($seed + 1));
            }
            #[test]
            fn cbc_matches_aes() {
                cbc(&mut Rng::new($seed + 2));
            }
            #[test]
            fn cmac_matches_aes() {
                cmac_mac(&mut Rng::new($seed + 3));
            }
            #[test]
            fn aes_gcm_matches_aes() {
                gcm(&mut Rng::new($seed + 4));
            }
        }
    };
}

suite!(aes128, Aes128, aes::Aes128, 16, 100);
suite!(aes192, Aes192, aes::Aes192, 24, 200);
suite!(aes256, Aes256, aes::Aes256, 32, 300);

/// Fixed vectors through the trait types, so a wrong key size mapping cannot hide behind
/// agreement with a peer: FIPS-197 Appendix C and SP 800-38B (CMAC) Example 2.
#[test]
fn known_answers() {
    let pt: [u8; 16] = hex::decode("00112233445566778899aabbccddeeff")
        .unwrap()
        .try_into()
        .unwrap();
    let k: Vec<u8> = (0u8..32).collect();
    let cases = [
        ("69c4e0d86a7b0430d8cdb78070b4c55a",),
        ("dda97ca4864cdfe06eaf70a0ec0d7191",),
        ("8ea2b7ca516745bfeafc49904b496089",),
    ];
    for b in backends() {
        let mut x = pt.into();
        Aes128::with_backend(k[..16].try_into().unwrap(), b)
            .unwrap()
            .encrypt_block(&mut x);
        assert_eq!(hex::encode(x), cases[0].0, "{b}");
        let mut x = pt.into();
        Aes192::with_backend(k[..24].try_into().unwrap(), b)
            .unwrap()
            .encrypt_block(&mut x);
        assert_eq!(hex::encode(x), cases[1].0, "{b}");
        let mut x = pt.into();
        let a = Aes256::with_backend(k[..32].try_into().unwrap(), b).unwrap();
        a.encrypt_block(&mut x);
        assert_eq!(hex::encode(x), cases[2].0, "{b}");
        a.decrypt_block(&mut x);
        assert_eq!(x, cipher::Block::<Aes256>::from(pt), "{b}");

        let key = hex::decode("2b7e151628aed2a6abf7158809cf4f3c").unwrap();
        let msg = hex::decode("6bc1bee22e409f96e93d7e117393172a").unwrap();
        let mut m = <cmac::Cmac<Aes128> as cmac::digest::common::InnerInit>::inner_init(
            Aes128::with_backend(key.as_slice().try_into().unwrap(), b).unwrap(),
        );
        m.update(&msg);
        assert_eq!(
            hex::encode(m.finalize().into_bytes()),
            "070a16b46b4d4144f79bdd9dd04a287c",
            "{b} cmac"
        );
    }
}

#[test]
fn wrappers_keep_one_schedule_and_check_sizes() {
    let key = [7u8; 24];
    let aes = Aes::new(&key).unwrap();
    let backend = aes.backend();
    assert!(Aes128::from_aes(Aes::new(&key).unwrap()).is_err());
    assert!(Aes256::from_aes(Aes::new(&key).unwrap()).is_err());
    let w = Aes192::from_aes(aes).unwrap();
    assert_eq!(w.backend(), backend);
    assert_eq!(w.as_aes().key_bits(), 192);
    assert_eq!(format!("{w:?}"), "Aes192 { .. }");
    // KeyInit::new picks the same backend as Aes::new.
    let n = <Aes192 as KeyInit>::new(&key.into());
    assert_eq!(n.backend(), Backend::detect());
    struct W;
    impl std::fmt::Display for W {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            Aes256::write_alg_name(f)
        }
    }
    assert_eq!(W.to_string(), "Aes256");
    // An unavailable backend is an error, not a panic.
    for b in Backend::ALL {
        let r = Aes128::with_backend(&[0u8; 16].into(), b);
        assert_eq!(r.is_ok(), b.is_available(), "{b}");
    }
}

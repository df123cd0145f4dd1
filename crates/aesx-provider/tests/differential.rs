//! Differential tests against OpenSSL's default provider on this machine, through the same EVP
//! calls: random operation sequences (init with key+IV / IV only / key only / nothing,
//! padding on/off, updates of random sizes, final, EVP_Cipher, IV and `num` get/set, writes
//! through `EVP_CIPHER_CTX_iv_noconst` as OpenSSH does, context copies) must give the same
//! return values, output bytes, IVs and error reasons; and OpenSSL's CTR-DRBG built on aesx
//! AES-256-CTR/ECB must produce the default provider's DRBG output bit for bit.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

use std::ffi::{c_char, c_int, c_uint, c_void};

unsafe extern "C" {
    fn EVP_CIPHER_CTX_iv_noconst(c: *mut EvpCipherCtx) -> *mut u8;
    fn EVP_RAND_fetch(
        ctx: *mut OsslLibCtx,
        name: *const c_char,
        props: *const c_char,
    ) -> *mut c_void;
    fn EVP_RAND_free(r: *mut c_void);
    fn EVP_RAND_CTX_new(r: *mut c_void, parent: *mut c_void) -> *mut c_void;
    fn EVP_RAND_CTX_free(c: *mut c_void);
    fn EVP_RAND_CTX_set_params(c: *mut c_void, params: *const OsslParam) -> c_int;
    fn EVP_RAND_instantiate(
        c: *mut c_void,
        strength: c_uint,
        pr: c_int,
        pstr: *const u8,
        pstr_len: usize,
        params: *const OsslParam,
    ) -> c_int;
    fn EVP_RAND_generate(
        c: *mut c_void,
        out: *mut u8,
        outlen: usize,
        strength: c_uint,
        pr: c_int,
        addin: *const u8,
        addin_len: usize,
    ) -> c_int;
    fn EVP_RAND_reseed(
        c: *mut c_void,
        pr: c_int,
        ent: *const u8,
        ent_len: usize,
        addin: *const u8,
        addin_len: usize,
    ) -> c_int;
}

const ALGS: [&str; 9] = [
    "AES-128-ECB",
    "AES-192-ECB",
    "AES-256-ECB",
    "AES-128-CBC",
    "AES-192-CBC",
    "AES-256-CBC",
    "AES-128-CTR",
    "AES-192-CTR",
    "AES-256-CTR",
];

/// What one operation observably did.
#[derive(Debug, PartialEq)]
enum Seen {
    Ok(Vec<u8>),
    Fail(u32),
    Int(i32),
    Bool(bool),
}

fn seen(r: Option<Vec<u8>>) -> Seen {
    match r {
        Some(v) => Seen::Ok(v),
        None => Seen::Fail(first_reason()),
    }
}

fn size(rng: &mut Rng) -> usize {
    match rng.below(10) {
        0 => 0,
        1..=5 => rng.below(40) as usize,
        6 | 7 => 16 * rng.below(5) as usize,
        8 => rng.below(600) as usize,
        _ => rng.below(40_000) as usize,
    }
}

/// A new IV for the sequence: random, or (CTR, half the time) the default provider's next
/// counter moved by -70..=70 blocks, so that the provider's keystream memo (64 blocks) is
/// re-entered after an IV change: inside it, at its end, just before it, overlapping it.
fn next_iv(rng: &mut Rng, d: &Ctx, ctr: bool) -> Vec<u8> {
    match d.updated_iv() {
        Some(cur) if ctr && rng.below(2) == 0 => {
            let delta = rng.below(141) as i128 - 70;
            let c = u128::from_be_bytes(cur).wrapping_add(delta as u128);
            c.to_be_bytes().to_vec()
        }
        _ => rng.bytes(16),
    }
}

/// One random sequence on both providers; panics at the first difference.
fn sequence(lib: &Lib, seed: u64) {
    let mut rng = Rng(seed);
    let alg = ALGS[rng.below(9) as usize];
    let (ca, cd) = (lib.fetch(alg, "aesx"), lib.fetch(alg, "default"));
    let keylen = if alg.contains("128") {
        16
    } else if alg.contains("192") {
        24
    } else {
        32
    };
    let block = !alg.ends_with("CTR");
    let mut key = rng.bytes(keylen);
    let mut iv = rng.bytes(16);
    let enc = rng.below(2) as i32;
    let (mut a, mut d) = (Ctx::new(), Ctx::new());
    let mut log = vec![format!("seed {seed} {alg} enc={enc}")];
    let r = (
        a.init(Some(&ca), Some(&key), Some(&iv), enc),
        d.init(Some(&cd), Some(&key), Some(&iv), enc),
    );
    assert_eq!(r, (true, true));
    for _ in 0..rng.below(40) + 1 {
        let op = rng.below(100);
        let (x, y, what) = match op {
            0..=44 => {
                let n = size(&mut rng);
                let data = rng.bytes(n);
                (
                    seen(a.update(&data)),
                    seen(d.update(&data)),
                    format!("update {}", data.len()),
                )
            }
            45..=51 => (seen(a.finish()), seen(d.finish()), "final".to_string()),
            52..=57 => {
                iv = next_iv(&mut rng, &d, !block);
                let r = (
                    a.init(None, None, Some(&iv), -1),
                    d.init(None, None, Some(&iv), -1),
                );
                (Seen::Bool(r.0), Seen::Bool(r.1), "init iv only".to_string())
            }
            58..=61 => {
                key = rng.bytes(keylen);
                let r = (
                    a.init(None, Some(&key), None, -1),
                    d.init(None, Some(&key), None, -1),
                );
                (
                    Seen::Bool(r.0),
                    Seen::Bool(r.1),
                    "init key only".to_string(),
                )
            }
            62..=63 => {
                let r = (a.init(None, None, None, -1), d.init(None, None, None, -1));
                (Seen::Bool(r.0), Seen::Bool(r.1), "init nothing".to_string())
            }
            64..=67 => {
                // A new direction comes with a key, as in every real program. (Switching an
                // ECB/CBC context's direction without a key is where the two differ: OpenSSL
                // keeps the other direction's key schedule and its output is neither the
                // encryption nor the decryption of the input; aesx uses the key both ways.)
                let e = rng.below(2) as i32;
                key = rng.bytes(keylen);
                let r = (
                    a.init(None, Some(&key), None, e),
                    d.init(None, Some(&key), None, e),
                );
                (
                    Seen::Bool(r.0),
                    Seen::Bool(r.1),
                    format!("init key + direction {e}"),
                )
            }
            68..=73 => {
                let p = rng.below(2) == 1;
                (
                    Seen::Bool(a.set_padding(p)),
                    Seen::Bool(d.set_padding(p)),
                    format!("padding {p}"),
                )
            }
            74..=79 => {
                let n = if block {
                    16 * rng.below(200) as usize
                } else {
                    size(&mut rng)
                };
                let data = rng.bytes(n);
                let (ra, oa) = a.cipher(&data);
                let (rd, od) = d.cipher(&data);
                assert_eq!(ra, rd, "EVP_Cipher {n}: {}", log.join("; "));
                (Seen::Ok(oa), Seen::Ok(od), format!("EVP_Cipher {n}"))
            }
            80..=83 => (
                seen(a.updated_iv().map(Vec::from)),
                seen(d.updated_iv().map(Vec::from)),
                "updated iv".into(),
            ),
            84..=85 => (
                seen(a.original_iv().map(Vec::from)),
                seen(d.original_iv().map(Vec::from)),
                "original iv".into(),
            ),
            86..=87 => (Seen::Int(a.num()), Seen::Int(d.num()), "num".into()),
            88..=89 if !block => {
                let n = rng.below(16) as u32;
                (
                    Seen::Bool(a.set_uint(c"num", n)),
                    Seen::Bool(d.set_uint(c"num", n)),
                    format!("set num {n}"),
                )
            }
            90..=93 if !alg.contains("ECB") => {
                // OpenSSH's EVP_CIPHER_CTX_set_iv compat: memcpy into EVP_CIPHER_CTX_iv_noconst.
                let v = next_iv(&mut rng, &d, !block);
                let (pa, pd) = unsafe {
                    (
                        EVP_CIPHER_CTX_iv_noconst(a.0),
                        EVP_CIPHER_CTX_iv_noconst(d.0),
                    )
                };
                assert_eq!(pa.is_null(), pd.is_null());
                if !pa.is_null() {
                    unsafe {
                        std::ptr::copy_nonoverlapping(v.as_ptr(), pa, 16);
                        std::ptr::copy_nonoverlapping(v.as_ptr(), pd, 16);
                    }
                }
                (
                    Seen::Bool(pa.is_null()),
                    Seen::Bool(pd.is_null()),
                    "write iv_noconst".into(),
                )
            }
            94..=96 => {
                let (na, nd) = (
                    a.copy().expect("copy aesx"),
                    d.copy().expect("copy default"),
                );
                a = na;
                d = nd;
                (Seen::Bool(true), Seen::Bool(true), "copy".into())
            }
            _ => (Seen::Ok(vec![]), Seen::Ok(vec![]), "noop".into()),
        };
        log.push(what.clone());
        assert_eq!(x, y, "aesx vs default differ at {what}: {}", log.join("; "));
        assert_eq!(a.lengths(), d.lengths(), "{}", log.join("; "));
    }
}

#[test]
fn random_operation_sequences_match_the_default_provider() {
    let lib = Lib::new(None);
    let n = if cfg!(debug_assertions) { 600 } else { 6000 };
    for seed in 0..n {
        sequence(&lib, seed);
    }
    let stats = lib.aesx_stats();
    for alg in ALGS {
        assert!(stats.contains(alg), "{alg} was exercised:\n{stats}");
    }
}

/// Every edge of the block/stream bookkeeping, exhaustively for small sizes: two updates of
/// sizes a and b then final, padding on and off, both directions, all modes.
#[test]
fn two_update_splits_match_the_default_provider() {
    let lib = Lib::new(None);
    let mut rng = Rng(7);
    for alg in ["AES-128-ECB", "AES-256-CBC", "AES-192-CTR"] {
        let (ca, cd) = (lib.fetch(alg, "aesx"), lib.fetch(alg, "default"));
        let key = rng.bytes(if alg.contains("128") {
            16
        } else if alg.contains("192") {
            24
        } else {
            32
        });
        let iv = rng.bytes(16);
        for enc in [1, 0] {
            for pad in [true, false] {
                for a_len in 0..50 {
                    for b_len in 0..50 {
                        let data = rng.bytes(a_len + b_len);
                        let run = |c: &Cipher| {
                            let x = Ctx::new();
                            assert!(x.init(Some(c), Some(&key), Some(&iv), enc));
                            x.set_padding(pad);
                            let r1 = seen(x.update(&data[..a_len]));
                            let r2 = seen(x.update(&data[a_len..]));
                            let r3 = seen(x.finish());
                            (r1, r2, r3, x.updated_iv())
                        };
                        assert_eq!(
                            run(&ca),
                            run(&cd),
                            "{alg} enc={enc} pad={pad} {a_len}+{b_len}"
                        );
                    }
                }
            }
        }
    }
}

fn octets(key: &'static std::ffi::CStr, v: &[u8]) -> OsslParam {
    param(key, PARAM_OCTET_STRING, v.as_ptr() as *mut c_void, v.len())
}

/// A CTR-DRBG on a fixed-entropy TEST-RAND parent, with its AES fetched from `provider`.
fn drbg_output(lib: &Lib, provider: &str, use_df: bool, script: &[(usize, usize)]) -> Vec<u8> {
    let entropy: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let nonce = [0x42u8; 64];
    unsafe {
        let test = EVP_RAND_fetch(lib.ctx, c"TEST-RAND".as_ptr(), std::ptr::null());
        assert!(!test.is_null(), "TEST-RAND: {}", errors());
        let parent = EVP_RAND_CTX_new(test, std::ptr::null_mut());
        let mut strength: c_uint = 256;
        let ps = [
            octets(c"test_entropy", &entropy),
            octets(c"test_nonce", &nonce),
            param(c"strength", PARAM_UNSIGNED, (&raw mut strength).cast(), 4),
            END,
        ];
        assert_eq!(
            EVP_RAND_CTX_set_params(parent, ps.as_ptr()),
            1,
            "{}",
            errors()
        );
        assert_eq!(
            EVP_RAND_instantiate(parent, 256, 0, std::ptr::null(), 0, std::ptr::null()),
            1,
            "{}",
            errors()
        );
        let ctr = EVP_RAND_fetch(lib.ctx, c"CTR-DRBG".as_ptr(), std::ptr::null());
        let drbg = EVP_RAND_CTX_new(ctr, parent);
        let props = std::ffi::CString::new(format!("provider={provider}")).unwrap();
        let mut df: c_int = use_df as c_int;
        let ps = [
            param(
                c"cipher",
                PARAM_UTF8_STRING,
                c"AES-256-CTR".as_ptr() as *mut c_void,
                11,
            ),
            param(
                c"properties",
                PARAM_UTF8_STRING,
                props.as_ptr() as *mut c_void,
                props.as_bytes().len(),
            ),
            param(
                c"use_derivation_function",
                PARAM_INTEGER,
                (&raw mut df).cast(),
                4,
            ),
            END,
        ];
        assert_eq!(
            EVP_RAND_CTX_set_params(drbg, ps.as_ptr()),
            1,
            "{}",
            errors()
        );
        let pers = b"aesx provider differential";
        assert_eq!(
            EVP_RAND_instantiate(drbg, 256, 0, pers.as_ptr(), pers.len(), std::ptr::null()),
            1,
            "{}",
            errors()
        );
        let mut all = Vec::new();
        for (i, &(n, addin)) in script.iter().enumerate() {
            let add: Vec<u8> = (0..addin).map(|k| (k * 7 + i) as u8).collect();
            if i % 5 == 4 {
                assert_eq!(
                    EVP_RAND_reseed(drbg, 0, std::ptr::null(), 0, add.as_ptr(), add.len()),
                    1,
                    "{}",
                    errors()
                );
            }
            let mut out = vec![0u8; n];
            assert_eq!(
                EVP_RAND_generate(drbg, out.as_mut_ptr(), n, 256, 0, add.as_ptr(), add.len()),
                1,
                "{}",
                errors()
            );
            all.extend(out);
        }
        EVP_RAND_CTX_free(drbg);
        EVP_RAND_free(ctr);
        EVP_RAND_CTX_free(parent);
        EVP_RAND_free(test);
        all
    }
}

#[test]
fn ctr_drbg_on_aesx_is_bit_exact() {
    let lib = Lib::new(None);
    let before = lib.aesx_stats();
    let script: Vec<(usize, usize)> = (0..40)
        .map(|i| {
            (
                [1usize, 16, 32, 48, 64, 100, 1000, 4096][i % 8],
                [0usize, 1, 32, 48, 17][i % 5],
            )
        })
        .collect();
    for use_df in [true, false] {
        let a = drbg_output(&lib, "aesx", use_df, &script);
        let d = drbg_output(&lib, "default", use_df, &script);
        assert_eq!(a.len(), script.iter().map(|s| s.0).sum::<usize>());
        assert!(a == d, "CTR-DRBG output differs (df={use_df})");
        assert_ne!(a[..64], a[64..128], "not constant");
    }
    let after = lib.aesx_stats();
    assert!(
        after.contains("AES-256-CTR") && after.contains("AES-256-ECB"),
        "{before}\n--\n{after}"
    );
}

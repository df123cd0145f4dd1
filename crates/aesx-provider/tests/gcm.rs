//! AES-GCM through EVP on the aesx provider: NIST CAVP and Wycheproof on every backend (IV lengths set with
//! `ivlen`, AAD through update with a NULL output, tag set/get), the security-critical bad-tag
//! results (`EVP_Cipher` returns -1 and `EVP_DecryptFinal_ex` 0, exactly as on the default
//! provider), OpenSSH's call sequence (IV-only init, `tlsivfixed` with length -1, key-only
//! init, `tlsivgen`, `EVP_Cipher` for AAD / data / final, `tlsivgen` 12 for re-keying) and
//! TLS 1.2 records (`tlsaad`, `tlsivfixed` 4, in-place records) crossed with the default
//! provider, and random messages (IV, AAD, data, tag lengths, pieces) and random operation
//! sequences compared with the default provider.
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

use std::ffi::{CStr, c_int, c_void};

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap()
}

fn name(keylen: usize) -> &'static str {
    match keylen {
        16 => "AES-128-GCM",
        24 => "AES-192-GCM",
        _ => "AES-256-GCM",
    }
}

impl Ctx {
    fn set_octets(&self, key: &'static CStr, v: &[u8]) -> bool {
        let ps = [
            param(key, PARAM_OCTET_STRING, v.as_ptr() as *mut c_void, v.len()),
            END,
        ];
        unsafe { EVP_CIPHER_CTX_set_params(self.0, ps.as_ptr()) == 1 }
    }
    /// OpenSSH's `EVP_CIPHER_CTX_ctrl(EVP_CTRL_GCM_SET_IV_FIXED, -1, iv)`.
    fn set_iv_fixed_whole(&self, iv: &[u8]) -> bool {
        let ps = [
            param(
                c"tlsivfixed",
                PARAM_OCTET_STRING,
                iv.as_ptr() as *mut c_void,
                usize::MAX,
            ),
            END,
        ];
        unsafe { EVP_CIPHER_CTX_set_params(self.0, ps.as_ptr()) == 1 }
    }
    fn set_size(&self, key: &'static CStr, v: usize) -> bool {
        let mut v = v;
        let ps = [param(key, PARAM_UNSIGNED, (&raw mut v).cast(), 8), END];
        unsafe { EVP_CIPHER_CTX_set_params(self.0, ps.as_ptr()) == 1 }
    }
    fn get_octets(&self, key: &'static CStr, n: usize) -> Option<Vec<u8>> {
        let mut b = vec![0u8; n];
        let ps = [
            param(key, PARAM_OCTET_STRING, b.as_mut_ptr().cast(), n),
            END,
        ];
        (unsafe { EVP_CIPHER_CTX_get_params(self.0, ps.as_ptr() as *mut _) } == 1).then_some(b)
    }
    /// EVP_CipherUpdate with out = NULL (AAD).
    fn aad(&self, a: &[u8]) -> bool {
        let mut n: c_int = 0;
        unsafe {
            EVP_CipherUpdate(
                self.0,
                std::ptr::null_mut(),
                &mut n,
                a.as_ptr(),
                a.len() as c_int,
            ) == 1
        }
    }
    /// EVP_Cipher(ctx, NULL, in, len): AAD through the cipher function, as OpenSSH does.
    fn cipher_aad(&self, a: &[u8]) -> i32 {
        unsafe { EVP_Cipher(self.0, std::ptr::null_mut(), a.as_ptr(), a.len() as u32) }
    }
    /// EVP_Cipher(ctx, NULL, NULL, 0): final through the cipher function.
    fn cipher_final(&self) -> i32 {
        unsafe { EVP_Cipher(self.0, std::ptr::null_mut(), std::ptr::null(), 0) }
    }
}

/// One-shot AEAD through EVP; None if anything fails (decrypt: a bad tag).
fn aead(
    c: &Cipher,
    key: &[u8],
    iv: &[u8],
    aad: &[u8],
    data: &[u8],
    tag: Option<&[u8]>,
) -> Option<(Vec<u8>, Vec<u8>)> {
    aead_t(c, key, iv, aad, data, tag, 16)
}

/// [`aead`], reading a `taglen`-byte tag when encrypting.
fn aead_t(
    c: &Cipher,
    key: &[u8],
    iv: &[u8],
    aad: &[u8],
    data: &[u8],
    tag: Option<&[u8]>,
    taglen: usize,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let x = Ctx::new();
    let enc = tag.is_none();
    if !x.init(Some(c), None, None, enc as i32) || !x.set_size(c"ivlen", iv.len()) {
        return None;
    }
    if !x.init(None, Some(key), Some(iv), -1) {
        return None;
    }
    if !aad.is_empty() && !x.aad(aad) {
        return None;
    }
    let mut out = x.update(data)?;
    if let Some(t) = tag
        && !x.set_octets(c"tag", t)
    {
        return None;
    }
    out.extend(x.finish()?);
    let t = if enc {
        x.get_octets(c"tag", taglen)?
    } else {
        vec![]
    };
    Some((out, t))
}

#[test]
fn wycheproof_gcm_on_every_backend() {
    let text = std::fs::read_to_string(testdata().join("wycheproof/aes_gcm_test.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for b in backends() {
        let lib = Lib::new(Some(&b));
        let (mut valid, mut invalid, mut refused) = (0, 0, 0);
        for g in v["testGroups"].as_array().unwrap() {
            for t in g["tests"].as_array().unwrap() {
                let f = |k: &str| h(t[k].as_str().unwrap());
                let (key, iv, aad, msg, ct, tag) =
                    (f("key"), f("iv"), f("aad"), f("msg"), f("ct"), f("tag"));
                let id = t["tcId"].as_u64().unwrap();
                let c = lib.fetch(name(key.len()), "aesx");
                let d = lib.fetch(name(key.len()), "default");
                let dec = aead(&c, &key, &iv, &aad, &ct, Some(&tag));
                assert_eq!(
                    dec.is_some(),
                    aead(&d, &key, &iv, &aad, &ct, Some(&tag)).is_some(),
                    "tc {id}: same verdict as default"
                );
                let _ = errors();
                if iv.is_empty() || iv.len() > 128 {
                    // OpenSSL's GCM takes 1..=128-byte IVs: both providers refuse the rest.
                    assert!(dec.is_none(), "tc {id}");
                    refused += 1;
                    continue;
                }
                if t["result"] == "valid" {
                    valid += 1;
                    assert_eq!(dec.unwrap().0, msg, "tc {id}");
                    let (c2, t2) = aead(&c, &key, &iv, &aad, &msg, None).unwrap();
                    assert_eq!((c2, t2), (ct.clone(), tag.clone()), "tc {id} seal");
                } else {
                    invalid += 1;
                    assert!(dec.is_none(), "tc {id} must be rejected");
                }
            }
        }
        assert!(
            valid > 200 && invalid > 60 && refused >= 6,
            "{valid} {invalid} {refused}"
        );
        let s = lib.aesx_stats();
        assert!(
            s.contains("AES-128-GCM") && s.contains("AES-256-GCM"),
            "{s}"
        );
    }
}

/// One record of a NIST CAVP `.rsp` file.
#[derive(Default)]
struct Rsp {
    key: Vec<u8>,
    iv: Vec<u8>,
    pt: Option<Vec<u8>>,
    aad: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

fn read_rsp(file: &str) -> Vec<Rsp> {
    let text = std::fs::read_to_string(testdata().join("nist-gcm").join(file)).unwrap();
    let mut out = vec![];
    let mut cur: Option<Rsp> = None;
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with('[') {
            continue;
        }
        if line == "FAIL" {
            cur.as_mut().unwrap().pt = None;
            continue;
        }
        let (k, v) = line.split_once('=').unwrap();
        if k.trim() == "Count" {
            out.extend(cur.replace(Rsp::default()));
            continue;
        }
        let v = h(v.trim());
        match k.trim() {
            "Key" => cur.as_mut().unwrap().key = v,
            "IV" => cur.as_mut().unwrap().iv = v,
            "PT" => cur.as_mut().unwrap().pt = Some(v),
            "AAD" => cur.as_mut().unwrap().aad = v,
            "CT" => cur.as_mut().unwrap().ct = v,
            "Tag" => cur.as_mut().unwrap().tag = v,
            other => panic!("{file}: unknown field {other}"),
        }
    }
    out.extend(cur);
    out
}

/// NIST CAVP GCM (SP 800-38D) through EVP on every backend: encryption (IV lengths 1 to 128
/// bytes through `ivlen`, tags of every allowed length read with `tag`) and decryption
/// (truncated tags set with `tag`, the FAIL records refused).
#[test]
fn nist_gcm_on_every_backend() {
    let enc: Vec<Rsp> = ["128", "192", "256"]
        .iter()
        .flat_map(|k| read_rsp(&format!("gcmEncryptExtIV{k}.rsp")))
        .collect();
    let dec: Vec<Rsp> = ["128", "192", "256"]
        .iter()
        .flat_map(|k| read_rsp(&format!("gcmDecrypt{k}.rsp")))
        .collect();
    assert!(
        enc.len() > 3000 && dec.len() > 3800,
        "{} {}",
        enc.len(),
        dec.len()
    );
    let ivlens: std::collections::BTreeSet<usize> = enc.iter().map(|r| r.iv.len()).collect();
    let taglens: std::collections::BTreeSet<usize> = dec.iter().map(|r| r.tag.len()).collect();
    assert!(ivlens.contains(&1) && ivlens.contains(&128) && ivlens.contains(&12));
    assert_eq!(
        taglens.into_iter().collect::<Vec<_>>(),
        [4, 8, 12, 13, 14, 15, 16]
    );
    for b in backends() {
        let lib = Lib::new(Some(&b));
        assert_eq!(lib.aesx_backend(), b);
        let ciphers: Vec<Cipher> = [16, 24, 32]
            .iter()
            .map(|&k| lib.fetch(name(k), "aesx"))
            .collect();
        let c = |k: &[u8]| &ciphers[(k.len() - 16) / 8];
        for (i, r) in enc.iter().enumerate() {
            let pt = r.pt.as_ref().unwrap();
            let (ct, tag) = aead_t(c(&r.key), &r.key, &r.iv, &r.aad, pt, None, r.tag.len())
                .unwrap_or_else(|| panic!("{b}: encrypt record {i}: {}", errors()));
            assert_eq!((ct, tag), (r.ct.clone(), r.tag.clone()), "{b}: encrypt {i}");
        }
        let (mut pass, mut fail) = (0, 0);
        for (i, r) in dec.iter().enumerate() {
            let got = aead(c(&r.key), &r.key, &r.iv, &r.aad, &r.ct, Some(&r.tag));
            let _ = errors();
            match &r.pt {
                Some(pt) => {
                    pass += 1;
                    assert_eq!(got.map(|g| g.0).as_ref(), Some(pt), "{b}: decrypt {i}")
                }
                None => {
                    fail += 1;
                    assert!(got.is_none(), "{b}: decrypt {i} must fail")
                }
            }
        }
        assert!(pass > 1000 && fail > 1000, "{pass} {fail}");
    }
}

/// The property OpenSSH's packet layer depends on: a forged packet must make `EVP_Cipher`
/// negative (OpenSSH rejects only results below 0), and `EVP_DecryptFinal_ex` must fail.
#[test]
fn bad_tag_makes_evp_cipher_negative_like_the_default_provider() {
    let lib = Lib::new(None);
    for prov in ["aesx", "default"] {
        for alg in ["AES-128-GCM", "AES-256-GCM"] {
            let c = lib.fetch(alg, prov);
            let key = vec![0x42u8; if alg.contains("128") { 16 } else { 32 }];
            let iv = [7u8; 12];
            let (ct, tag) =
                aead(&c, &key, &iv, b"hdr", b"a packet body of some length", None).unwrap();
            for flip in [None, Some(0usize), Some(15)] {
                let mut t = tag.clone();
                if let Some(i) = flip {
                    t[i] ^= 1;
                }
                // EVP_Cipher path (OpenSSH).
                let x = Ctx::new();
                assert!(x.init(Some(&c), Some(&key), Some(&iv), 0));
                assert!(x.set_octets(c"tag", &t));
                assert_eq!(x.cipher_aad(b"hdr"), 3);
                let (r, pt) = x.cipher(&ct);
                assert_eq!(r, ct.len() as i32);
                let fin = x.cipher_final();
                if flip.is_none() {
                    assert_eq!(fin, 0, "{prov} {alg}: good tag");
                    assert_eq!(pt, b"a packet body of some length");
                } else {
                    assert_eq!(
                        fin, -1,
                        "{prov} {alg}: EVP_Cipher must be negative on a bad tag"
                    );
                }
                // EVP_DecryptFinal_ex path.
                let y = Ctx::new();
                assert!(y.init(Some(&c), Some(&key), Some(&iv), 0));
                assert!(y.aad(b"hdr"));
                y.update(&ct).unwrap();
                assert!(y.set_octets(c"tag", &t));
                assert_eq!(y.finish().is_some(), flip.is_none(), "{prov} {alg} final");
                let _ = errors();
                // Final without any tag set also fails.
                let z = Ctx::new();
                assert!(z.init(Some(&c), Some(&key), Some(&iv), 0));
                z.update(&ct).unwrap();
                assert!(z.finish().is_none(), "{prov}: final without a tag");
                let _ = errors();
            }
        }
    }
}

/// OpenSSH's sequence (cipher.c + packet.c), the same on both providers, packets both ways,
/// then the re-keying handover (`tlsivgen` 12 in one context, `tlsivfixed` -1 in a new one).
fn openssh_flow(lib: &Lib, enc_prov: &str, dec_prov: &str, alg: &str) {
    let (ce, cd) = (lib.fetch(alg, enc_prov), lib.fetch(alg, dec_prov));
    let key = vec![0x11u8; if alg.contains("128") { 16 } else { 32 }];
    let iv = [0x22u8; 12];
    let setup = |c: &Cipher, enc: i32| {
        let x = Ctx::new();
        assert!(x.init(Some(c), None, Some(&iv), enc));
        assert!(x.set_iv_fixed_whole(&iv));
        assert!(
            x.init(None, Some(&key), None, -1),
            "key-only init keeps the IV"
        );
        x
    };
    let (e, d) = (setup(&ce, 1), setup(&cd, 0));
    let mut rng = Rng(3);
    for n in 0..200 {
        let len = [16usize, 32, 48, 1024, 32768][n % 5] + 16 * (n % 3);
        let len_field = (len as u32).to_be_bytes();
        let body = rng.bytes(len);
        // sender
        let mut inv = [0u8; 1];
        assert!(
            e.get_octets(c"tlsivgen", 1)
                .map(|v| inv[0] = v[0])
                .is_some()
        );
        assert_eq!(e.cipher_aad(&len_field), 4);
        let (r, ct) = e.cipher(&body);
        assert_eq!(r, len as i32);
        assert_eq!(e.cipher_final(), 0);
        let tag = e.get_octets(c"tag", 16).unwrap();
        // receiver
        assert!(d.get_octets(c"tlsivgen", 1).is_some());
        assert!(d.set_octets(c"tag", &tag));
        assert_eq!(d.cipher_aad(&len_field), 4);
        let (r, pt) = d.cipher(&ct);
        assert_eq!(r, len as i32);
        assert_eq!(d.cipher_final(), 0, "{enc_prov}->{dec_prov} packet {n}");
        assert_eq!(pt, body);
        if n == 7 {
            // A forged packet in the middle: rejected, and the stream goes on.
            assert!(e.get_octets(c"tlsivgen", 1).is_some());
            assert!(d.get_octets(c"tlsivgen", 1).is_some());
            let mut bad = tag.clone();
            bad[3] ^= 0x80;
            assert!(d.set_octets(c"tag", &bad));
            assert_eq!(d.cipher_aad(&len_field), 4);
            let _ = d.cipher(&ct);
            assert_eq!(d.cipher_final(), -1, "forged packet");
            // The sender's IV moved on too: finish its message unused.
            assert_eq!(e.cipher_aad(&len_field), 4);
            assert_eq!(e.cipher_final(), 0);
            let _ = errors();
        }
    }
    // Re-keying handover: the whole current IV out of one context, into a fresh one.
    let cur = e.get_octets(c"tlsivgen", 12).unwrap();
    let e2 = Ctx::new();
    assert!(e2.init(Some(&ce), Some(&key), None, 1));
    assert!(e2.set_iv_fixed_whole(&cur));
    let cur_d = d.get_octets(c"tlsivgen", 12).unwrap();
    assert_eq!(cur, cur_d);
    let d2 = Ctx::new();
    assert!(d2.init(Some(&cd), Some(&key), None, 0));
    assert!(d2.set_iv_fixed_whole(&cur_d));
    assert!(e2.get_octets(c"tlsivgen", 1).is_some());
    assert!(d2.get_octets(c"tlsivgen", 1).is_some());
    e2.cipher_aad(b"abcd");
    let (_, ct) = e2.cipher(b"after the handover");
    assert_eq!(e2.cipher_final(), 0);
    let tag = e2.get_octets(c"tag", 16).unwrap();
    assert!(d2.set_octets(c"tag", &tag));
    d2.cipher_aad(b"abcd");
    let (_, pt) = d2.cipher(&ct);
    assert_eq!(d2.cipher_final(), 0);
    assert_eq!(pt, b"after the handover");
}

#[test]
fn openssh_sequence_interoperates_with_the_default_provider() {
    let lib = Lib::new(None);
    for alg in ["AES-128-GCM", "AES-256-GCM"] {
        for (a, b) in [("aesx", "aesx"), ("aesx", "default"), ("default", "aesx")] {
            openssh_flow(&lib, a, b, alg);
        }
    }
}

/// TLS 1.2 GCM records as libssl builds them (13-byte AAD whose length is fixed up by the
/// provider, 4-byte implicit IV, explicit IV || payload || tag in place), crossed with the
/// default provider in both directions, including a tampered record.
#[test]
fn tls12_records_interoperate_with_the_default_provider() {
    let lib = Lib::new(None);
    let mut rng = Rng(12);
    for alg in ["AES-128-GCM", "AES-256-GCM"] {
        for (ep, dp) in [("aesx", "default"), ("default", "aesx"), ("aesx", "aesx")] {
            let key = rng.bytes(if alg.contains("128") { 16 } else { 32 });
            let fixed = rng.bytes(4);
            let mk = |p: &str, enc: i32| {
                let x = Ctx::new();
                assert!(x.init(Some(&lib.fetch(alg, p)), Some(&key), None, enc));
                assert!(x.set_octets(c"tlsivfixed", &fixed));
                x
            };
            let (e, d) = (mk(ep, 1), mk(dp, 0));
            for seq in 0u64..50 {
                let plen = rng.below(3000) as usize;
                let payload = rng.bytes(plen);
                let mut hdr = [0u8; 13];
                hdr[..8].copy_from_slice(&seq.to_be_bytes());
                hdr[8..11].copy_from_slice(&[23, 3, 3]);
                let enc_len = (plen + 8) as u16; // libssl: payload + explicit IV
                hdr[11..].copy_from_slice(&enc_len.to_be_bytes());
                assert!(e.set_octets(c"tlsaad", &hdr));
                let mut rec = vec![0u8; 8 + plen + 16];
                rec[8..8 + plen].copy_from_slice(&payload);
                let mut outl: c_int = 0;
                let n = rec.len() as c_int;
                assert_eq!(
                    unsafe { EVP_CipherUpdate(e.0, rec.as_mut_ptr(), &mut outl, rec.as_ptr(), n) },
                    1
                );
                assert_eq!(outl as usize, rec.len());
                let dec_len = (plen + 8 + 16) as u16;
                hdr[11..].copy_from_slice(&dec_len.to_be_bytes());
                let tamper = seq == 9;
                let tag_copy = rec[8 + plen..].to_vec();
                if tamper {
                    rec[8] ^= 1;
                }
                assert!(d.set_octets(c"tlsaad", &hdr));
                let r =
                    unsafe { EVP_CipherUpdate(d.0, rec.as_mut_ptr(), &mut outl, rec.as_ptr(), n) };
                if tamper {
                    assert_eq!(r, 0, "{ep}->{dp}: tampered record accepted");
                    // Like OpenSSL: the payload is wiped, the explicit IV and tag stay.
                    assert!(
                        rec[8..8 + plen].iter().all(|&b| b == 0),
                        "{dp}: plaintext of a forged record left in the buffer"
                    );
                    assert_eq!(&rec[8 + plen..], &tag_copy[..], "{dp}");
                    let _ = errors();
                    continue;
                }
                assert_eq!(r, 1, "{ep}->{dp} {alg} seq {seq}: {}", errors());
                assert_eq!(outl as usize, plen);
                assert_eq!(&rec[8..8 + plen], &payload[..]);
            }
        }
    }
}

/// Random GCM operation sequences on both providers with the same inputs: every return value,
/// output, tag and IV read must agree.
#[test]
fn random_gcm_sequences_match_the_default_provider() {
    let lib = Lib::new(None);
    let n = if cfg!(debug_assertions) { 300 } else { 3000 };
    for seed in 0..n {
        let mut rng = Rng(1000 + seed);
        let alg = ["AES-128-GCM", "AES-192-GCM", "AES-256-GCM"][rng.below(3) as usize];
        let (ca, cd) = (lib.fetch(alg, "aesx"), lib.fetch(alg, "default"));
        let keylen = if alg.contains("128") {
            16
        } else if alg.contains("192") {
            24
        } else {
            32
        };
        let key = rng.bytes(keylen);
        let enc = rng.below(2) as i32;
        let (a, d) = (Ctx::new(), Ctx::new());
        let mut log = vec![format!("seed {seed} {alg} enc={enc}")];
        let iv = rng.bytes(12);
        assert!(
            a.init(Some(&ca), Some(&key), Some(&iv), enc)
                && d.init(Some(&cd), Some(&key), Some(&iv), enc)
        );
        let mut data_seen = false;
        for _ in 0..rng.below(25) + 1 {
            let op = rng.below(100);
            let what;
            let (x, y): (String, String) = match op {
                0..=14 if !data_seen => {
                    let n = rng.below(70) as usize;
                    let m = rng.bytes(n);
                    what = format!("aad {}", m.len());
                    (format!("{}", a.aad(&m)), format!("{}", d.aad(&m)))
                }
                0..=44 => {
                    let n = match rng.below(4) {
                        0 => 0,
                        1 => rng.below(20) as usize,
                        2 => rng.below(300) as usize,
                        _ => rng.below(5000) as usize,
                    };
                    let m = rng.bytes(n);
                    data_seen |= !m.is_empty();
                    what = format!("update {}", m.len());
                    (format!("{:?}", a.update(&m)), format!("{:?}", d.update(&m)))
                }
                45..=54 => {
                    if enc == 0 {
                        let t = rng.bytes(16);
                        what = "set tag".into();
                        (
                            format!("{}", a.set_octets(c"tag", &t)),
                            format!("{}", d.set_octets(c"tag", &t)),
                        )
                    } else {
                        what = "get tag".into();
                        (
                            format!("{:?}", a.get_octets(c"tag", 16)),
                            format!("{:?}", d.get_octets(c"tag", 16)),
                        )
                    }
                }
                55..=64 => {
                    what = "final".into();
                    (format!("{:?}", a.finish()), format!("{:?}", d.finish()))
                }
                65..=74 => {
                    let v = rng.bytes(12);
                    data_seen = false;
                    what = "init iv".into();
                    (
                        format!("{}", a.init(None, None, Some(&v), -1)),
                        format!("{}", d.init(None, None, Some(&v), -1)),
                    )
                }
                75..=79 => {
                    what = "iv".into();
                    (
                        format!("{:?}", a.get_octets(c"iv", 12)),
                        format!("{:?}", d.get_octets(c"iv", 12)),
                    )
                }
                80..=84 => {
                    let n = rng.below(100) as usize;
                    let m = rng.bytes(n);
                    what = format!("EVP_Cipher {}", m.len());
                    data_seen |= !m.is_empty();
                    (format!("{:?}", a.cipher(&m)), format!("{:?}", d.cipher(&m)))
                }
                85..=89 => {
                    what = "EVP_Cipher final".into();
                    (
                        format!("{}", a.cipher_final()),
                        format!("{}", d.cipher_final()),
                    )
                }
                _ => {
                    what = "taglen/ivlen".into();
                    (format!("{:?}", a.lengths()), format!("{:?}", d.lengths()))
                }
            };
            log.push(what.clone());
            let _ = errors();
            assert_eq!(x, y, "aesx vs default at {what}: {}", log.join("; "));
            if what.contains("final") && (x == "None" || x == "-1") {
                // After a failed tag check OpenSSL goes on decrypting the same message with a
                // spoiled GHASH state; aesx ends the message. Both refused the tag: stop here.
                break;
            }
        }
    }
}

/// Random piece sizes that add up to `n` (none empty).
fn pieces(rng: &mut Rng, n: usize) -> Vec<usize> {
    let mut out = vec![];
    let mut left = n;
    while left > 0 {
        let most = [1, 15, 16, 17, 100, 4096, left][rng.below(7) as usize].min(left);
        let k = 1 + rng.below(most as u64) as usize;
        out.push(k);
        left -= k;
    }
    out
}

/// How [`gcm_message`] feeds one message.
struct Feed<'a> {
    iv: &'a [u8],
    aad: &'a [u8],
    aad_pieces: &'a [usize],
    data_pieces: &'a [usize],
    /// `EVP_Cipher` (OpenSSH's way) instead of `EVP_CipherUpdate`/`EVP_CipherFinal_ex`.
    via_cipher: bool,
    /// Decrypt: set the tag before the AAD instead of after the data.
    tag_first: bool,
    taglen: usize,
}

/// One message through EVP in the pieces `f` gives: Some((output, tag)) (the tag read with
/// `f.taglen` bytes when encrypting), None when any call fails (decrypt: the tag check).
fn gcm_message(
    c: &Cipher,
    key: &[u8],
    f: &Feed,
    data: &[u8],
    tag: Option<&[u8]>,
) -> Option<(Vec<u8>, Vec<u8>)> {
    let x = Ctx::new();
    let enc = tag.is_none();
    if !(x.init(Some(c), None, None, enc as i32)
        && x.set_size(c"ivlen", f.iv.len())
        && x.init(None, Some(key), Some(f.iv), -1))
    {
        return None;
    }
    if let Some(t) = tag
        && f.tag_first
        && !x.set_octets(c"tag", t)
    {
        return None;
    }
    let mut at = 0;
    for &k in f.aad_pieces {
        let a = &f.aad[at..at + k];
        at += k;
        let ok = if f.via_cipher {
            x.cipher_aad(a) == k as i32
        } else {
            x.aad(a)
        };
        if !ok {
            return None;
        }
    }
    let mut out = vec![];
    at = 0;
    for &k in f.data_pieces {
        let d = &data[at..at + k];
        at += k;
        if f.via_cipher {
            let (r, o) = x.cipher(d);
            if r != k as i32 {
                return None;
            }
            out.extend_from_slice(&o[..k]);
        } else {
            out.extend(x.update(d)?);
        }
    }
    if let Some(t) = tag
        && !f.tag_first
        && !x.set_octets(c"tag", t)
    {
        return None;
    }
    if f.via_cipher {
        if x.cipher_final() != 0 {
            return None;
        }
    } else if !x.finish()?.is_empty() {
        return None;
    }
    let t = if enc {
        x.get_octets(c"tag", f.taglen)?
    } else {
        vec![]
    };
    Some((out, t))
}

/// Random whole messages on both providers with the same inputs: key size, IV length (1 to
/// 128 bytes, mostly 12), AAD and data in random pieces (through update with a NULL output, or
/// through `EVP_Cipher` as OpenSSH does), tags of every allowed length, the tag set before or
/// after the data. Ciphertext and tag equal the default provider's; each provider opens both
/// providers' messages; one flipped bit in the tag, the AAD or the ciphertext fails on both.
#[test]
fn random_gcm_messages_match_the_default_provider() {
    let lib = Lib::new(None);
    let ciphers: Vec<(Cipher, Cipher)> = [16, 24, 32]
        .iter()
        .map(|&k| (lib.fetch(name(k), "aesx"), lib.fetch(name(k), "default")))
        .collect();
    let n = if cfg!(debug_assertions) { 300 } else { 3000 };
    let mut seen_taglens = std::collections::BTreeSet::new();
    for seed in 0..n {
        let mut rng = Rng(50_000 + seed);
        let ki = rng.below(3) as usize;
        let (ca, cd) = &ciphers[ki];
        let key = rng.bytes(16 + 8 * ki);
        let ivlen = match rng.below(8) {
            0 => 1 + rng.below(128) as usize,
            1 => 16,
            2 => 8,
            _ => 12,
        };
        let iv = rng.bytes(ivlen);
        let sizes = |rng: &mut Rng, big: u64| match rng.below(4) {
            0 => 0,
            1 => rng.below(20) as usize,
            2 => rng.below(300) as usize,
            _ => rng.below(big) as usize,
        };
        let aad_len = sizes(&mut rng, 2000);
        let aad = rng.bytes(aad_len);
        let data_len = sizes(&mut rng, 20_000);
        let data = rng.bytes(data_len);
        let taglen = [4, 8, 12, 13, 14, 15, 16][rng.below(7) as usize];
        seen_taglens.insert(taglen);
        let aad_pieces = pieces(&mut rng, aad.len());
        let data_pieces = pieces(&mut rng, data.len());
        let f = Feed {
            iv: &iv,
            aad: &aad,
            aad_pieces: &aad_pieces,
            data_pieces: &data_pieces,
            via_cipher: rng.below(4) == 0,
            tag_first: rng.below(2) == 0,
            taglen,
        };
        let ctx = format!(
            "seed {seed}: key {} iv {ivlen} aad {aad_len} data {data_len} tag {taglen} EVP_Cipher {} tag first {}",
            key.len(),
            f.via_cipher,
            f.tag_first
        );
        let sa = gcm_message(ca, &key, &f, &data, None);
        let sd = gcm_message(cd, &key, &f, &data, None);
        assert!(sd.is_some(), "{ctx}: default provider failed: {}", errors());
        assert_eq!(sa, sd, "{ctx}: seal");
        let (ct, tag) = sd.unwrap();
        for c in [ca, cd] {
            let o = gcm_message(c, &key, &f, &ct, Some(&tag));
            assert_eq!(o.map(|o| o.0).as_ref(), Some(&data), "{ctx}: open");
        }
        // One flipped bit somewhere the tag covers.
        let mut bad_tag = tag.clone();
        let (mut bad_aad, mut bad_ct) = (aad.clone(), ct.clone());
        match rng.below(3) {
            0 if !aad.is_empty() => bad_aad[rng.below(aad_len as u64) as usize] ^= 1,
            1 if !ct.is_empty() => bad_ct[rng.below(data_len as u64) as usize] ^= 0x40,
            _ => bad_tag[rng.below(taglen as u64) as usize] ^= 0x80,
        }
        let fb = Feed { aad: &bad_aad, ..f };
        for c in [ca, cd] {
            let o = gcm_message(c, &key, &fb, &bad_ct, Some(&bad_tag));
            assert!(o.is_none(), "{ctx}: forged message accepted");
            let _ = errors();
        }
    }
    assert_eq!(seen_taglens.len(), 7);
}

/// Tag lengths SP 800-38D does not allow (1-3, 5-7, 9-11 bytes): OpenSSL's default provider
/// checks them; aesx refuses them at final, even when they match. Never a pass for a wrong tag.
#[test]
fn odd_tag_lengths_fail_closed() {
    let lib = Lib::new(None);
    let (ca, cd) = (
        lib.fetch("AES-128-GCM", "aesx"),
        lib.fetch("AES-128-GCM", "default"),
    );
    let (key, iv) = ([3u8; 16], [4u8; 12]);
    let (ct, tag) = aead(&cd, &key, &iv, b"a", b"some data", None).unwrap();
    for n in [1, 2, 3, 5, 6, 7, 9, 10, 11] {
        assert!(aead(&cd, &key, &iv, b"a", &ct, Some(&tag[..n])).is_some());
        assert!(aead(&ca, &key, &iv, b"a", &ct, Some(&tag[..n])).is_none());
        let _ = errors();
        let mut bad = tag[..n].to_vec();
        bad[0] ^= 1;
        assert!(aead(&ca, &key, &iv, b"a", &ct, Some(&bad)).is_none());
        assert!(aead(&cd, &key, &iv, b"a", &ct, Some(&bad)).is_none());
        let _ = errors();
    }
    // Encryption hands out any prefix of the tag, as the default provider does.
    for n in 1..=16 {
        assert_eq!(
            aead_t(&ca, &key, &iv, b"a", b"some data", None, n),
            aead_t(&cd, &key, &iv, b"a", b"some data", None, n),
            "{n}"
        );
    }
}

/// A TLS record call that fails (here: `EVP_Cipher` with a NULL output after `tlsaad`) ends
/// the record state as on the default provider: after a new IV the context takes AAD again.
/// (Found by the `provider` fuzz target: aesx used to keep the record header.)
#[test]
fn failed_tls_record_call_resets_like_the_default_provider() {
    let lib = Lib::new(None);
    for prov in ["aesx", "default"] {
        let x = Ctx::new();
        assert!(x.init(
            Some(&lib.fetch("AES-128-GCM", prov)),
            Some(&[1u8; 16]),
            Some(&[2u8; 12]),
            0
        ));
        assert!(x.set_octets(c"tlsivfixed", &[3u8; 4]));
        let mut hdr = [0u8; 13];
        hdr[11..].copy_from_slice(&100u16.to_be_bytes());
        assert!(x.set_octets(c"tlsaad", &hdr));
        assert_eq!(x.cipher_aad(&[0u8; 48]), -1, "{prov}");
        let _ = errors();
        assert!(x.init(None, None, Some(&[4u8; 12]), -1));
        assert_eq!(x.cipher_aad(&[0u8; 465]), 465, "{prov}: {}", errors());
    }
}

/// One context re-initialised with a key per message (as `openssl speed` does): the same key
/// again (aesx keeps its schedule), another key, the first key back, key-only and key+IV inits,
/// both directions; every ciphertext and tag equal to the default provider's.
#[test]
fn rekeying_one_context_matches_the_default_provider() {
    let lib = Lib::new(None);
    let mut rng = Rng(77);
    for alg in ["AES-128-GCM", "AES-192-GCM", "AES-256-GCM"] {
        let keylen = if alg.contains("128") {
            16
        } else if alg.contains("192") {
            24
        } else {
            32
        };
        let keys: Vec<Vec<u8>> = (0..3).map(|_| rng.bytes(keylen)).collect();
        // Keys differing in only the last byte, too.
        let mut last = keys[0].clone();
        last[keylen - 1] ^= 1;
        let plan = [0usize, 0, 1, 0, 2, 2, 3, 0, 1, 1];
        let run = |prov: &str| {
            let c = lib.fetch(alg, prov);
            let x = Ctx::new();
            assert!(x.init(Some(&c), None, None, 1));
            let mut out = vec![];
            for (i, &k) in plan.iter().enumerate() {
                let key = if k == 3 { &last } else { &keys[k] };
                let iv = [i as u8; 12];
                if i % 2 == 0 {
                    assert!(x.init(None, Some(key), Some(&iv), 1));
                } else {
                    assert!(x.init(None, Some(key), None, 1));
                    assert!(x.init(None, None, Some(&iv), 1));
                }
                assert!(x.aad(b"aad"));
                out.push(x.update(&[i as u8; 40]).unwrap());
                assert_eq!(x.finish(), Some(vec![]));
                out.push(x.get_octets(c"tag", 16).unwrap());
            }
            // Decrypt the first message after all that, with its key given again.
            let y = Ctx::new();
            assert!(y.init(Some(&c), Some(&keys[0]), Some(&[0u8; 12]), 0));
            assert!(y.init(None, Some(&keys[0]), Some(&[0u8; 12]), 0));
            assert!(y.aad(b"aad"));
            let pt = y.update(&out[0]).unwrap();
            assert!(y.set_octets(c"tag", &out[1]));
            assert_eq!(y.finish(), Some(vec![]));
            assert_eq!(pt, vec![0u8; 40]);
            out
        };
        assert_eq!(run("aesx"), run("default"), "{alg}");
    }
}

/// `EVP_Cipher` with 0 bytes of data between two AAD pieces is no data: the AAD stays one
/// string and the tag is GCM's (the default provider given the joined AAD in one call is the
/// reference). OpenSSL 3.0's own provider pads the AAD at that call and still takes more, a
/// tag no GCM reproduces (README, known differences; found by the `provider` fuzz target,
/// which leaves that case out).
#[test]
fn empty_evp_cipher_call_between_aad_pieces_keeps_the_aad_whole() {
    let lib = Lib::new(None);
    for keylen in [16, 24, 32] {
        let key = vec![0x11u8; keylen];
        let iv = [0x22u8; 12];
        let x = Ctx::new();
        assert!(x.init(
            Some(&lib.fetch(name(keylen), "aesx")),
            Some(&key),
            Some(&iv),
            1
        ));
        assert!(x.aad(b"first piece"));
        assert!(x.cipher(&[]).0 >= 0, "{}", errors());
        assert!(x.aad(b", and the second"));
        let ct = x.update(b"the message").unwrap();
        assert_eq!(x.finish(), Some(vec![]));
        let tag = x.get_octets(c"tag", 16).unwrap();
        let want = aead(
            &lib.fetch(name(keylen), "default"),
            &key,
            &iv,
            b"first piece, and the second",
            b"the message",
            None,
        )
        .unwrap();
        assert_eq!((ct, tag), want, "{}", name(keylen));
    }
}

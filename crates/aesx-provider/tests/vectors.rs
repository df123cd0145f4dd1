//! Standard vectors through EVP, fetched from `provider=aesx`, on every backend this CPU runs
//! (one library context per backend, each loading the module with `backend = NAME`):
//! NIST CAVP KAT, MMT and Monte Carlo (ECB, CBC), SP 800-38A (ECB, CBC, CTR), RFC 3686 CTR,
//! PuTTY CBC/SDCTR (with the 128-bit counter wrap) and Wycheproof AES-CBC-PKCS5 (including
//! every bad-padding case, which must fail in EVP_CipherFinal).
#![allow(clippy::undocumented_unsafe_blocks)]

mod common;
use common::*;

use std::collections::HashMap;

fn h(s: &str) -> Vec<u8> {
    hex::decode(s).unwrap_or_else(|e| panic!("hex {s}: {e}"))
}

fn cipher_name(mode: &str, key_len: usize) -> String {
    format!("AES-{}-{}", key_len * 8, mode)
}

/// Runs one record in both directions, in one piece and in chunks of several sizes.
fn check_record(lib: &Lib, mode: &str, rec: &HashMap<String, String>, what: &str) {
    let key = h(&rec["KEY"]);
    let iv = rec.get("IV").map(|s| h(s));
    let pt = h(&rec["PLAINTEXT"]);
    let ct = h(&rec["CIPHERTEXT"]);
    let c = lib.fetch(&cipher_name(mode, key.len()), "aesx");
    for (enc, input, want) in [(true, &pt, &ct), (false, &ct, &pt)] {
        let got = oneshot(&c, &key, iv.as_deref(), enc, false, input);
        assert_eq!(
            got.as_ref(),
            Some(want),
            "{what} enc={enc} one-shot: {}",
            errors()
        );
        for chunk in [1usize, 3, 15, 16, 17, 31, 33, 64] {
            let ctx = Ctx::new();
            assert!(ctx.init(Some(&c), Some(&key), iv.as_deref(), enc as i32));
            assert!(ctx.set_padding(false));
            let mut out = Vec::new();
            for piece in input.chunks(chunk) {
                out.extend(ctx.update(piece).expect("update"));
            }
            out.extend(ctx.finish().expect("final"));
            assert_eq!(&out, want, "{what} enc={enc} chunk={chunk}");
        }
    }
}

fn run_rsp_files(lib: &Lib, files: &[(&str, &str)]) -> usize {
    let mut n = 0;
    for (file, mode) in files {
        for (_, rec) in rsp(&testdata().join(file)) {
            if rec.contains_key("KEY") && rec.contains_key("PLAINTEXT") {
                check_record(lib, mode, &rec, &format!("{file} COUNT={}", rec["COUNT"]));
                n += 1;
            }
        }
    }
    n
}

fn kat_files() -> Vec<(String, &'static str)> {
    let mut v = Vec::new();
    for mode in ["ECB", "CBC"] {
        for kind in ["GFSbox", "KeySbox", "VarKey", "VarTxt"] {
            for bits in [128, 192, 256] {
                v.push((format!("nist-kat/{mode}{kind}{bits}.rsp"), mode));
            }
        }
        for bits in [128, 192, 256] {
            v.push((format!("nist-mmt/{mode}MMT{bits}.rsp"), mode));
        }
    }
    v
}

#[test]
fn nist_sp800_rfc_putty_on_every_backend() {
    for b in backends() {
        let lib = Lib::new(Some(&b));
        assert_eq!(
            lib.aesx_backend(),
            b,
            "the provider runs the backend asked for"
        );
        let before = lib.aesx_stats();
        let kat = kat_files();
        let kat: Vec<(&str, &str)> = kat.iter().map(|(f, m)| (f.as_str(), *m)).collect();
        let mut n = run_rsp_files(&lib, &kat);
        n += run_rsp_files(
            &lib,
            &[
                ("sp800-38a/SP800-38A-ECB.rsp", "ECB"),
                ("sp800-38a/SP800-38A-CBC.rsp", "CBC"),
                ("sp800-38a/SP800-38A-CTR.rsp", "CTR"),
                ("rfc3686-ctr/aes-128-ctr.txt", "CTR"),
                ("rfc3686-ctr/aes-192-ctr.txt", "CTR"),
                ("rfc3686-ctr/aes-256-ctr.txt", "CTR"),
                ("putty/putty-aes-cbc.rsp", "CBC"),
                ("putty/putty-aes-sdctr.rsp", "CTR"),
                ("putty/sdctr-carry-generated.rsp", "CTR"),
            ],
        );
        assert!(n > 3000, "only {n} records found");
        let after = lib.aesx_stats();
        assert_ne!(before, after, "the aesx counters moved");
        for alg in ["AES-128-ECB", "AES-256-CBC", "AES-192-CTR"] {
            assert!(after.contains(alg), "{alg} counted:\n{after}");
        }
        eprintln!("{b}: {n} records");
    }
}

/// AESAVS Monte Carlo: 1000 chained EVP calls per record (streaming CBC through one context).
#[test]
fn nist_monte_carlo_on_every_backend() {
    let all = backends();
    // Debug builds are ~30x slower: there, the fastest backend only.
    let bs: Vec<String> = if cfg!(debug_assertions) {
        all.last().cloned().into_iter().collect()
    } else {
        all
    };
    for b in bs {
        let lib = Lib::new(Some(&b));
        for mode in ["ECB", "CBC"] {
            for bits in [128, 192, 256] {
                let file = format!("nist-mct/{mode}MCT{bits}.rsp");
                let recs = rsp(&testdata().join(&file));
                assert_eq!(recs.len(), 200, "{file}");
                for (section, rec) in recs {
                    let enc = section == "ENCRYPT";
                    let key = h(&rec["KEY"]);
                    let c = lib.fetch(&cipher_name(mode, key.len()), "aesx");
                    let (input, want) = if enc {
                        (h(&rec["PLAINTEXT"]), h(&rec["CIPHERTEXT"]))
                    } else {
                        (h(&rec["CIPHERTEXT"]), h(&rec["PLAINTEXT"]))
                    };
                    let iv = rec.get("IV").map(|s| h(s));
                    let ctx = Ctx::new();
                    assert!(ctx.init(Some(&c), Some(&key), iv.as_deref(), enc as i32));
                    assert!(ctx.set_padding(false));
                    let mut x = input.clone();
                    let mut prev: Vec<u8> = iv.clone().unwrap_or_default();
                    let mut out = Vec::new();
                    for j in 0..1000 {
                        out = ctx.update(&x).unwrap();
                        assert_eq!(out.len(), 16);
                        if mode == "ECB" {
                            x = out.clone();
                        } else {
                            // CBC: next input is the IV (j = 0), then the output two steps back.
                            let next = if j == 0 {
                                iv.clone().unwrap()
                            } else {
                                prev.clone()
                            };
                            prev = out.clone();
                            x = next;
                        }
                    }
                    assert_eq!(out, want, "{b} {file} {section} COUNT={}", rec["COUNT"]);
                }
            }
        }
    }
}

#[test]
fn wycheproof_cbc_pkcs5_on_every_backend() {
    let text =
        std::fs::read_to_string(testdata().join("wycheproof/aes_cbc_pkcs5_test.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    for b in backends() {
        let lib = Lib::new(Some(&b));
        let (mut valid, mut invalid) = (0, 0);
        for g in v["testGroups"].as_array().unwrap() {
            for t in g["tests"].as_array().unwrap() {
                let key = h(t["key"].as_str().unwrap());
                let iv = h(t["iv"].as_str().unwrap());
                let msg = h(t["msg"].as_str().unwrap());
                let ct = h(t["ct"].as_str().unwrap());
                let id = t["tcId"].as_u64().unwrap();
                let c = lib.fetch(&cipher_name("CBC", key.len()), "aesx");
                let dec = oneshot(&c, &key, Some(&iv), false, true, &ct);
                match t["result"].as_str().unwrap() {
                    "valid" => {
                        valid += 1;
                        assert_eq!(
                            oneshot(&c, &key, Some(&iv), true, true, &msg),
                            Some(ct.clone()),
                            "tc {id}"
                        );
                        assert_eq!(dec, Some(msg), "tc {id}");
                    }
                    _ => {
                        invalid += 1;
                        assert_eq!(dec, None, "tc {id} must be rejected");
                        let _ = errors();
                    }
                }
            }
        }
        assert_eq!((valid, invalid), (72, 144), "{b}");
    }
}

//! AES-GCM on every backend: the NIST CAVP GCM files (every IV and tag length, every FAIL
//! record), Wycheproof `aes_gcm_test.json` (valid and invalid), differential tests against
//! OpenSSL (any nonce length) and RustCrypto `aes-gcm` (12-byte nonces), every backend against
//! `soft`, streaming in any chunking, the 32-bit counter wrap through a real nonce, and
//! tampering anywhere.

mod common;

use aesx::{AesGcm, Backend, ErrorKind, GcmDecryptor, GcmEncryptor};
use common::{Rng, assert_bytes_eq, backends, read_text};
use openssl::symm::{Cipher, decrypt_aead, encrypt_aead};

// ---------------------------------------------------------------------------------------------
// Oracles

fn ossl_cipher(key_len: usize) -> Cipher {
    match key_len {
        16 => Cipher::aes_128_gcm(),
        24 => Cipher::aes_192_gcm(),
        _ => Cipher::aes_256_gcm(),
    }
}

/// OpenSSL EVP AES-GCM seal: (ciphertext, 16-byte tag).
fn ossl_seal(key: &[u8], nonce: &[u8], aad: &[u8], pt: &[u8]) -> (Vec<u8>, [u8; 16]) {
    let mut tag = [0u8; 16];
    let ct = encrypt_aead(ossl_cipher(key.len()), key, Some(nonce), aad, pt, &mut tag)
        .expect("OpenSSL GCM seal");
    (ct, tag)
}

/// RustCrypto `aes-gcm` 0.11 (12-byte nonce): ciphertext || tag.
fn rc_seal(key: &[u8], nonce: &[u8; 12], aad: &[u8], pt: &[u8]) -> Vec<u8> {
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    let p = Payload { msg: pt, aad };
    let n = nonce.into();
    match key.len() {
        16 => aes_gcm::Aes128Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(n, p),
        24 => {
            aes_gcm::AesGcm::<aes_gcm::aes::Aes192, aes_gcm::aead::consts::U12>::new_from_slice(key)
                .unwrap()
                .encrypt(n, p)
        }
        _ => aes_gcm::Aes256Gcm::new_from_slice(key)
            .unwrap()
            .encrypt(n, p),
    }
    .expect("RustCrypto GCM seal")
}

// ---------------------------------------------------------------------------------------------
// NIST CAVP GCM files

/// One record of a NIST GCM `.rsp` file with its group's tag length.
#[derive(Debug)]
struct GcmRecord {
    at: String,
    key: Vec<u8>,
    iv: Vec<u8>,
    pt: Option<Vec<u8>>, // None: a FAIL record
    aad: Vec<u8>,
    ct: Vec<u8>,
    tag: Vec<u8>,
}

/// Parses `gcmEncryptExtIV*.rsp` / `gcmDecrypt*.rsp`: `[Name = N]` group headers, records of
/// `Name = hex` lines, a bare `FAIL` line in refused decrypt records. Strict: an unknown line
/// fails the test.
fn parse_gcm_rsp(rel: &str) -> Vec<GcmRecord> {
    let text = read_text(rel);
    let mut out = Vec::new();
    let mut taglen_bits = None::<usize>;
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut fail = false;
    let mut start = 0;
    let mut flush =
        |fields: &mut Vec<(String, String)>, fail: &mut bool, line: usize, tl: Option<usize>| {
            if fields.is_empty() {
                return;
            }
            let get = |n: &str| -> Vec<u8> {
                let v = &fields
                    .iter()
                    .find(|(k, _)| k == n)
                    .unwrap_or_else(|| panic!("{rel}:{line}: no {n}"))
                    .1;
                hex::decode(v).unwrap_or_else(|e| panic!("{rel}:{line}: {n} not hex: {e}"))
            };
            let tag = get("Tag");
            assert_eq!(
                Some(tag.len() * 8),
                tl,
                "{rel}:{line}: tag length vs [Taglen]"
            );
            let pt = if *fail { None } else { Some(get("PT")) };
            out.push(GcmRecord {
                at: format!("{rel}:{line}"),
                key: get("Key"),
                iv: get("IV"),
                pt,
                aad: get("AAD"),
                ct: get("CT"),
                tag,
            });
            fields.clear();
            *fail = false;
        };
    for (i, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw).trim();
        if line.is_empty() {
            flush(&mut fields, &mut fail, start, taglen_bits);
            continue;
        }
        if line.starts_with('#') {
            continue;
        }
        if let Some(h) = line.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            let (k, v) = h.split_once('=').expect("[Name = N]");
            if k.trim() == "Taglen" {
                taglen_bits = Some(v.trim().parse().unwrap());
            }
            continue;
        }
        if line == "FAIL" {
            fail = true;
            continue;
        }
        let (k, v) = line
            .split_once('=')
            .unwrap_or_else(|| panic!("{rel}:{}: unexpected line {line:?}", i + 1));
        if fields.is_empty() {
            start = i + 1;
        }
        fields.push((k.trim().to_string(), v.trim().to_string()));
    }
    flush(&mut fields, &mut fail, start, taglen_bits);
    out
}

#[test]
fn nist_cavp_gcm_vectors_on_every_backend() {
    let mut counts = [0usize; 3]; // encrypt, decrypt pass, decrypt FAIL
    let mut iv_lens = std::collections::BTreeSet::new();
    let mut tag_lens = std::collections::BTreeSet::new();
    for bits in [128, 192, 256] {
        let enc = parse_gcm_rsp(&format!("nist-gcm/gcmEncryptExtIV{bits}.rsp"));
        let dec = parse_gcm_rsp(&format!("nist-gcm/gcmDecrypt{bits}.rsp"));
        assert!(
            enc.len() >= 1000 && dec.len() >= 1000,
            "vector files truncated?"
        );
        for b in backends() {
            for r in &enc {
                let gcm = AesGcm::with_backend(&r.key, b)
                    .unwrap()
                    .with_tag_len(r.tag.len())
                    .unwrap();
                let pt = r.pt.as_ref().expect("encrypt records have PT");
                let mut buf = pt.clone();
                let tag = gcm.seal_in_place_detached(&r.iv, &r.aad, &mut buf).unwrap();
                assert_bytes_eq(&buf, &r.ct, format!("{b} {} CT", r.at));
                assert_bytes_eq(tag.as_ref(), &r.tag, format!("{b} {} Tag", r.at));
                gcm.open_in_place_detached(&r.iv, &r.aad, &mut buf, tag.as_ref())
                    .unwrap();
                assert_eq!(&buf, pt);
                if b == Backend::Soft {
                    counts[0] += 1;
                    iv_lens.insert(r.iv.len());
                    tag_lens.insert(r.tag.len());
                }
            }
            for r in &dec {
                let gcm = AesGcm::with_backend(&r.key, b)
                    .unwrap()
                    .with_tag_len(r.tag.len())
                    .unwrap();
                let mut buf = r.ct.clone();
                let res = gcm.open_in_place_detached(&r.iv, &r.aad, &mut buf, &r.tag);
                match &r.pt {
                    Some(pt) => {
                        res.unwrap_or_else(|e| panic!("{b} {}: valid record refused: {e}", r.at));
                        assert_bytes_eq(&buf, pt, format!("{b} {} PT", r.at));
                    }
                    None => {
                        let e = res.expect_err(&format!("{b} {}: FAIL record accepted", r.at));
                        assert_eq!(e.kind(), ErrorKind::AuthenticationFailed);
                        assert!(buf.iter().all(|&x| x == 0), "{b} {}: plaintext left", r.at);
                    }
                }
                if b == Backend::Soft {
                    counts[1 + r.pt.is_none() as usize] += 1;
                }
            }
        }
    }
    // Every IV length (8, 96, 1024 bits) and tag length (32..128 bits) of the files ran.
    assert_eq!(iv_lens.into_iter().collect::<Vec<_>>(), [1, 12, 128]);
    assert_eq!(
        tag_lens.into_iter().collect::<Vec<_>>(),
        [4, 8, 12, 13, 14, 15, 16]
    );
    assert!(counts[1] > 1000 && counts[2] > 1000, "{counts:?}");
    eprintln!(
        "NIST GCM: {} encrypt, {} decrypt, {} FAIL records per backend",
        counts[0], counts[1], counts[2]
    );
}

// ---------------------------------------------------------------------------------------------
// Wycheproof

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WpTest {
    tc_id: u32,
    flags: Vec<String>,
    key: String,
    iv: String,
    aad: String,
    msg: String,
    ct: String,
    tag: String,
    result: String,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WpGroup {
    tag_size: usize,
    tests: Vec<WpTest>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct WpFile {
    number_of_tests: usize,
    test_groups: Vec<WpGroup>,
}

#[test]
fn wycheproof_aes_gcm_on_every_backend() {
    let f: WpFile = serde_json::from_str(&read_text("wycheproof/aes_gcm_test.json")).unwrap();
    let n: usize = f.test_groups.iter().map(|g| g.tests.len()).sum();
    assert_eq!(n, f.number_of_tests);
    let (mut valid, mut invalid) = (0, 0);
    for b in backends() {
        for g in &f.test_groups {
            assert_eq!(g.tag_size, 128);
            for t in &g.tests {
                let h = |s: &str| hex::decode(s).unwrap();
                let (key, iv, aad, msg, ct, tag) = (
                    h(&t.key),
                    h(&t.iv),
                    h(&t.aad),
                    h(&t.msg),
                    h(&t.ct),
                    h(&t.tag),
                );
                let id = format!("{b} tcId {} {:?}", t.tc_id, t.flags);
                let gcm = AesGcm::with_backend(&key, b).unwrap();
                let mut buf = ct.clone();
                let r = gcm.open_in_place_detached(&iv, &aad, &mut buf, &tag);
                match t.result.as_str() {
                    "valid" => {
                        r.unwrap_or_else(|e| panic!("{id}: refused: {e}"));
                        assert_bytes_eq(&buf, &msg, &id);
                        let mut s = msg.clone();
                        let t2 = gcm.seal_in_place_detached(&iv, &aad, &mut s).unwrap();
                        assert_bytes_eq(&s, &ct, &id);
                        assert_bytes_eq(t2.as_ref(), &tag, &id);
                        valid += (b == Backend::Soft) as usize;
                    }
                    "invalid" => {
                        let e = r.expect_err(&format!("{id}: accepted"));
                        if iv.is_empty() {
                            assert_eq!(e.kind(), ErrorKind::InvalidNonceLength, "{id}");
                            assert_eq!(buf, ct, "{id}: buffer touched on a nonce error");
                            let mut s = msg.clone();
                            assert!(gcm.seal_in_place_detached(&iv, &aad, &mut s).is_err());
                        } else {
                            assert_eq!(e.kind(), ErrorKind::AuthenticationFailed, "{id}");
                            assert!(buf.iter().all(|&x| x == 0), "{id}: plaintext left");
                        }
                        invalid += (b == Backend::Soft) as usize;
                    }
                    other => panic!("{id}: result {other}"),
                }
            }
        }
    }
    assert_eq!((valid, invalid), (229, 87));
}

// ---------------------------------------------------------------------------------------------
// Differential

/// Lengths around every batch size (8-block xmm batches, 16-block zmm, 32-block generic
/// chunks) and the partial-block cases, up to several KiB.
fn lengths() -> Vec<usize> {
    let mut v = vec![];
    for blocks in [
        0usize, 1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 23, 24, 25, 31, 32, 33, 63, 64, 65, 127, 128, 129,
        300,
    ] {
        for d in [-1i64, 0, 1, 7, 15] {
            let n = 16 * blocks as i64 + d;
            if n >= 0 {
                v.push(n as usize);
            }
        }
    }
    v.sort();
    v.dedup();
    v
}

#[test]
fn differential_against_openssl_and_rustcrypto() {
    let mut rng = Rng::new(0x6763_6d31);
    let lens = lengths();
    let bs = backends();
    let mut cases = 0;
    for (i, &len) in lens.iter().enumerate() {
        for rep in 0..3 {
            let kl = [16, 24, 32][(rng.next_u64() % 3) as usize];
            let key = rng.bytes(kl);
            // Nonce lengths 1..=128, 12 every third case.
            let nl = if rep == 0 {
                12
            } else {
                1 + (rng.next_u64() % 128) as usize
            };
            let nonce = rng.bytes(nl);
            let aad_len = [0, 1, 13, 16, 17, 100, 128, 129, 1000, 4100][(i + rep) % 10];
            let aad = rng.bytes(aad_len);
            let pt = rng.bytes(len);
            let (ct, tag) = ossl_seal(&key, &nonce, &aad, &pt);
            if nl == 12 {
                let mut both = ct.clone();
                both.extend_from_slice(&tag);
                assert_eq!(
                    rc_seal(&key, &nonce.clone().try_into().unwrap(), &aad, &pt),
                    both
                );
            }
            for &b in &bs {
                let id = format!("{b} key={kl} nonce={nl} aad={aad_len} len={len}");
                let gcm = AesGcm::with_backend(&key, b).unwrap();
                let sealed = gcm.seal(&nonce, &aad, &pt).unwrap();
                assert_bytes_eq(&sealed[..len], &ct, &id);
                assert_bytes_eq(&sealed[len..], &tag, &id);
                let opened = gcm.open(&nonce, &aad, &sealed).unwrap();
                assert_bytes_eq(&opened, &pt, &id);
                // OpenSSL opens what aesx sealed (and checks the tag).
                let back = decrypt_aead(
                    ossl_cipher(kl),
                    &key,
                    Some(&nonce),
                    &aad,
                    &sealed[..len],
                    &sealed[len..],
                )
                .expect("OpenSSL refused aesx's tag");
                assert_eq!(back, pt, "{id}");
                // Streaming in random chunks, in place, equals one-shot.
                let mut enc = gcm.encryptor(&nonce).unwrap();
                for c in random_chunks(&mut rng, &aad) {
                    enc.aad(c).unwrap();
                }
                let mut buf = pt.clone();
                for c in random_chunks_mut(&mut rng, &mut buf) {
                    enc.update(c).unwrap();
                }
                assert_eq!(enc.finish().as_ref(), &tag, "{id} stream tag");
                assert_bytes_eq(&buf, &ct, format!("{id} stream"));
                let mut dec = gcm.decryptor(&nonce).unwrap();
                dec.aad(&aad).unwrap();
                for c in random_chunks_mut(&mut rng, &mut buf) {
                    dec.update(c).unwrap();
                }
                dec.finish(&tag).unwrap();
                assert_bytes_eq(&buf, &pt, format!("{id} stream open"));
                cases += 1;
            }
        }
    }
    assert!(cases >= lens.len() * 3 * bs.len());
}

/// Splits `v` into random pieces (empty ones included).
fn random_chunks<'a>(rng: &mut Rng, mut v: &'a [u8]) -> Vec<&'a [u8]> {
    let mut out = vec![];
    while !v.is_empty() {
        let n = (rng.next_u64() % 300) as usize % (v.len() + 1);
        let (a, b) = v.split_at(n);
        out.push(a);
        v = b;
    }
    out.push(v);
    out
}

fn random_chunks_mut<'a>(rng: &mut Rng, mut v: &'a mut [u8]) -> Vec<&'a mut [u8]> {
    let mut out = vec![];
    while !v.is_empty() {
        let r = rng.next_u64() as usize;
        let n = if r.is_multiple_of(4) {
            (r >> 8) % 17
        } else {
            (r >> 8) % 600
        } % (v.len() + 1);
        let (a, b) = v.split_at_mut(n);
        out.push(a);
        v = b;
    }
    out
}

#[test]
fn every_backend_matches_soft_on_random_inputs() {
    let mut rng = Rng::new(77);
    for _ in 0..60 {
        let kl = [16, 24, 32][(rng.next_u64() % 3) as usize];
        let key = rng.bytes(kl);
        let (nl, al, ml) = (
            rng.next_u64() % 40,
            rng.next_u64() % 700,
            rng.next_u64() % 5000,
        );
        let nonce = rng.bytes(1 + nl as usize);
        let aad = rng.bytes(al as usize);
        let pt = rng.bytes(ml as usize);
        let want = AesGcm::with_backend(&key, Backend::Soft)
            .unwrap()
            .seal(&nonce, &aad, &pt)
            .unwrap();
        for b in backends() {
            let got = AesGcm::with_backend(&key, b)
                .unwrap()
                .seal(&nonce, &aad, &pt)
                .unwrap();
            assert_bytes_eq(&got, &want, format!("{b} vs soft"));
        }
    }
}

/// Chunk sizes of STYLE habit 7: streaming equals one-shot, in place and buffer to buffer.
#[test]
fn streaming_equals_one_shot_for_every_chunk_size() {
    let mut rng = Rng::new(5);
    let sizes = [0usize, 1, 2, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 512];
    for b in backends() {
        let gcm = AesGcm::with_backend(&rng.bytes(16), b).unwrap();
        let nonce = rng.bytes(12);
        let aad = rng.bytes(77);
        let pt = rng.bytes(16 * 70 + 3);
        let want = gcm.seal(&nonce, &aad, &pt).unwrap();
        for &c in &sizes {
            let step = c.max(1);
            // In place, AAD in pieces of the same size.
            let mut enc = gcm.encryptor(&nonce).unwrap();
            for a in aad.chunks(step) {
                enc.aad(a).unwrap();
                if c == 0 {
                    enc.aad(&[]).unwrap();
                }
            }
            let mut buf = pt.clone();
            for p in buf.chunks_mut(step) {
                enc.update(p).unwrap();
                if c == 0 {
                    enc.update(&mut []).unwrap();
                }
            }
            assert_eq!(enc.lengths(), (aad.len() as u64, pt.len() as u64));
            let tag = enc.finish();
            assert_eq!(buf, want[..pt.len()], "{b} chunk {c}");
            assert_eq!(tag.as_ref(), &want[pt.len()..], "{b} chunk {c}");
            // Buffer to buffer, decrypting.
            let mut dec = gcm.decryptor(&nonce).unwrap();
            dec.aad(&aad).unwrap();
            let mut out = vec![0u8; pt.len()];
            for (i, p) in want[..pt.len()].chunks(step).enumerate() {
                dec.update_b2b(p, &mut out[i * step..]).unwrap();
            }
            dec.finish(tag.as_ref()).unwrap();
            assert_eq!(out, pt, "{b} chunk {c} b2b");
        }
    }
}

/// `update_b2b` from one buffer into another at the sizes where the fused VAES kernels read the
/// input and write the output in one pass (`vaes512` with either vendor's tuning from 256
/// bytes, Intel's with a 12-byte nonce and 4 KiB or more after a head that aligns the counter;
/// `vaes256`, and `vaes512` below 256 bytes, on ymm): every backend, key size, a 12- and a 16-byte
/// nonce (a public and a secret counter), the first update ending inside a block or on a
/// block boundary, against the one-shot seal; the bytes after the output stay untouched.
#[test]
fn streaming_b2b_matches_one_shot_at_kernel_sizes() {
    let mut rng = Rng::new(11);
    for b in backends() {
        for kl in [16, 24, 32] {
            let gcm = AesGcm::with_backend(&rng.bytes(kl), b).unwrap();
            for nl in [12, 16] {
                let nonce = rng.bytes(nl);
                let aad = rng.bytes(21);
                for len in [256, 300, 1024 + 53, 4096 + 16 * 14 + 7, 8192 + 16 * 17] {
                    let pt = rng.bytes(len);
                    let want = gcm.seal(&nonce, &aad, &pt).unwrap();
                    let (ct, tag) = want.split_at(len);
                    for split in [0, 5, 16, 33] {
                        let what = format!("{b} AES-{} nonce {nl} len {len} split {split}", kl * 8);
                        let mut enc = gcm.encryptor(&nonce).unwrap();
                        enc.aad(&aad[..7]).unwrap();
                        enc.aad(&aad[7..]).unwrap();
                        let mut out = vec![0xa5u8; len + 32];
                        enc.update_b2b(&pt[..split], &mut out[..split]).unwrap();
                        enc.update_b2b(&pt[split..], &mut out[split..]).unwrap();
                        assert_bytes_eq(&out[..len], ct, format!("{what}: seal"));
                        assert_eq!(enc.finish().as_ref(), tag, "{what}: tag");
                        assert_eq!(out[len..], [0xa5; 32], "{what}: seal wrote past");
                        let mut dec = gcm.decryptor(&nonce).unwrap();
                        dec.aad(&aad).unwrap();
                        let mut back = vec![0x5au8; len + 32];
                        dec.update_b2b(&ct[..split], &mut back[..split]).unwrap();
                        dec.update_b2b(&ct[split..], &mut back[split..]).unwrap();
                        dec.finish(tag).unwrap();
                        assert_bytes_eq(&back[..len], &pt, format!("{what}: open"));
                        assert_eq!(back[len..], [0x5a; 32], "{what}: open wrote past");
                    }
                }
            }
        }
    }
}

#[test]
fn owned_streams_and_call_order() {
    let gcm = std::sync::Arc::new(AesGcm::new(&[9u8; 32]).unwrap());
    let nonce = [3u8; 12];
    let mut enc = GcmEncryptor::new(gcm.clone(), &nonce).unwrap();
    enc.aad(b"hdr").unwrap();
    let mut buf = *b"streamed through an Arc";
    enc.update(&mut buf).unwrap();
    assert_eq!(
        enc.aad(b"late").unwrap_err().kind(),
        ErrorKind::AadAfterData
    );
    let tag = enc.finish();
    let mut dec = GcmDecryptor::new(gcm.clone(), &nonce).unwrap();
    dec.aad(b"hdr").unwrap();
    dec.update(&mut buf).unwrap();
    dec.finish(tag.as_ref()).unwrap();
    assert_eq!(&buf, b"streamed through an Arc");
    assert_eq!(
        GcmEncryptor::new(&*gcm, &[]).unwrap_err().kind(),
        ErrorKind::InvalidNonceLength
    );
    // A wrong tag length is refused as such (not as a forgery), also when streaming.
    let dec = gcm.decryptor(&nonce).unwrap();
    assert_eq!(
        dec.finish(&tag.as_ref()[..12]).unwrap_err().kind(),
        ErrorKind::InvalidTagLength
    );
}

// ---------------------------------------------------------------------------------------------
// Counter wrap through a real nonce

/// GF(2^128) multiplication as SP 800-38D Algorithm 1 (bit-reflected), independent of aesx.
fn gf_mul(x: u128, y: u128) -> u128 {
    let mut z = 0u128;
    let mut v = y;
    for i in 0..128 {
        if (x >> (127 - i)) & 1 == 1 {
            z ^= v;
        }
        v = if v & 1 == 1 {
            (v >> 1) ^ (0xe1 << 120)
        } else {
            v >> 1
        };
    }
    z
}

fn gf_pow(mut x: u128, mut e: u128) -> u128 {
    let mut r = 1u128 << 127; // the field's 1 in GCM's bit order
    while e != 0 {
        if e & 1 == 1 {
            r = gf_mul(r, x);
        }
        x = gf_mul(x, x);
        e >>= 1;
    }
    r
}

/// A 16-byte nonce whose J0 = GHASH_H(nonce || 0^64 || [128]_64) equals `j0`:
/// J0 = N*H^2 + L*H, so N = (J0 + L*H) * H^-2 (H^-1 = H^(2^128 - 2)).
fn nonce_for_j0(key: &[u8], j0: u128) -> [u8; 16] {
    let mut hb = [0u8; 16];
    aesx::Aes::with_backend(key, Backend::Soft)
        .unwrap()
        .encrypt_block(&mut hb);
    let h = u128::from_be_bytes(hb);
    let l = 128u128; // [0]_64 || [128 bits]_64
    let hinv = gf_pow(h, u128::MAX - 1);
    gf_mul(j0 ^ gf_mul(l, h), gf_mul(hinv, hinv)).to_be_bytes()
}

#[test]
fn counter_wraps_at_2_32_through_a_constructed_nonce() {
    for kl in [16, 24, 32] {
        let key: Vec<u8> = (0..kl as u8).map(|i| i.wrapping_mul(29) ^ 0x5a).collect();
        // Low counter word of J0 = 2^32 - 3: the data counters are fffffffe, ffffffff, 0, 1, ...
        let j0 = (0x0123_4567_89ab_cdef_0011_2233u128 << 32) | 0xffff_fffd;
        let nonce = nonce_for_j0(&key, j0);
        let aad = b"wrap";
        for len in [16 * 3, 16 * 9 + 5, 16 * 40 + 1, 4096] {
            let pt: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let (ct, tag) = ossl_seal(&key, &nonce, aad, &pt);
            // Sanity: the wrap happens. Block 2 uses counter 0 with the same upper 96 bits,
            // which a 128-bit counter (carrying into the upper bits) would not.
            let mut ctr0 = (j0 >> 32 << 32).to_be_bytes();
            let aes = aesx::Aes::with_backend(&key, Backend::Soft).unwrap();
            aes.encrypt_block(&mut ctr0);
            let ks2: Vec<u8> = ct[32..48]
                .iter()
                .zip(&pt[32..48])
                .map(|(c, p)| c ^ p)
                .collect();
            assert_eq!(ks2, ctr0, "block 2 must use counter ...00000000");
            for b in backends() {
                let gcm = AesGcm::with_backend(&key, b).unwrap();
                let sealed = gcm.seal(&nonce, aad, &pt).unwrap();
                assert_bytes_eq(&sealed[..len], &ct, format!("{b} key={kl} len={len}"));
                assert_bytes_eq(&sealed[len..], &tag, format!("{b} key={kl} len={len} tag"));
                let mut enc = gcm.encryptor(&nonce).unwrap();
                enc.aad(aad).unwrap();
                let mut buf = pt.clone();
                for c in buf.chunks_mut(37) {
                    enc.update(c).unwrap();
                }
                assert_eq!(enc.finish().as_ref(), &tag);
                assert_eq!(buf, ct);
                assert_eq!(gcm.open(&nonce, aad, &sealed).unwrap(), pt);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Tampering, tag lengths, errors

#[test]
fn any_flipped_bit_is_refused_and_no_plaintext_is_left() {
    for b in backends() {
        for (nl, len) in [(12usize, 37usize), (7, 16 * 9), (12, 0), (16, 200)] {
            let gcm = AesGcm::with_backend(&[0x42u8; 24], b).unwrap();
            let nonce: Vec<u8> = (0..nl as u8).collect();
            let aad = b"associated data!xyz".to_vec();
            let pt: Vec<u8> = (0..len).map(|i| i as u8 | 1).collect();
            let mut ct = pt.clone();
            let tag = gcm.seal_in_place_detached(&nonce, &aad, &mut ct).unwrap();
            let tag = tag.as_ref().to_vec();
            let check = |n: &[u8], a: &[u8], c: &[u8], t: &[u8], what: String| {
                let mut buf = c.to_vec();
                let e = gcm.open_in_place_detached(n, a, &mut buf, t).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::AuthenticationFailed, "{b} {what}");
                assert!(buf.iter().all(|&x| x == 0), "{b} {what}: plaintext left");
                let mut v = c.to_vec();
                v.extend_from_slice(t);
                assert!(gcm.open_in_place(n, a, &mut v).is_err());
                assert!(v.is_empty(), "{b} {what}: Vec not emptied");
                // The streaming decryptor refuses too (its plaintext is the caller's to drop).
                let mut d = gcm.decryptor(n).unwrap();
                d.aad(a).unwrap();
                let mut buf = c.to_vec();
                d.update(&mut buf).unwrap();
                assert_eq!(
                    d.finish(t).unwrap_err().kind(),
                    ErrorKind::AuthenticationFailed
                );
            };
            for i in 0..nl * 8 {
                let mut n = nonce.clone();
                n[i / 8] ^= 1 << (i % 8);
                check(&n, &aad, &ct, &tag, format!("nonce bit {i}"));
            }
            for i in 0..aad.len() * 8 {
                let mut a = aad.clone();
                a[i / 8] ^= 1 << (i % 8);
                check(&nonce, &a, &ct, &tag, format!("aad bit {i}"));
            }
            for i in 0..ct.len() * 8 {
                let mut c = ct.clone();
                c[i / 8] ^= 1 << (i % 8);
                check(&nonce, &aad, &c, &tag, format!("ct bit {i}"));
            }
            for i in 0..128 {
                let mut t = tag.clone();
                t[i / 8] ^= 1 << (i % 8);
                check(&nonce, &aad, &ct, &t, format!("tag bit {i}"));
            }
            // Lengths changed: AAD or ciphertext one byte shorter or longer, nonce extended.
            check(&nonce, &aad[1..], &ct, &tag, "aad shortened".into());
            let mut longer = ct.clone();
            longer.push(0);
            check(&nonce, &aad, &longer, &tag, "ct extended".into());
            let mut n2 = nonce.clone();
            n2.push(0);
            check(&n2, &aad, &ct, &tag, "nonce extended".into());
            // And the untouched message opens.
            let mut buf = ct.clone();
            gcm.open_in_place_detached(&nonce, &aad, &mut buf, &tag)
                .unwrap();
            assert_eq!(buf, pt);
        }
    }
}

#[test]
fn tag_lengths() {
    let nonce = [1u8; 12];
    for n in 0..=20usize {
        let r = AesGcm::new(&[5u8; 16]).unwrap().with_tag_len(n);
        assert_eq!(r.is_ok(), matches!(n, 4 | 8 | 12..=16), "tag length {n}");
    }
    let full = AesGcm::new(&[5u8; 16]).unwrap();
    let t16 = full.seal(&nonce, b"a", b"msg").unwrap();
    for n in [4usize, 8, 12, 13, 14, 15, 16] {
        let g = AesGcm::new(&[5u8; 16]).unwrap().with_tag_len(n).unwrap();
        let s = g.seal(&nonce, b"a", b"msg").unwrap();
        assert_eq!(s.len(), 3 + n);
        assert_eq!(
            s[..],
            t16[..3 + n],
            "a truncated tag is a prefix of the full tag"
        );
        assert_eq!(g.open(&nonce, b"a", &s).unwrap(), b"msg");
        // A tag of another length is refused with InvalidTagLength, the buffer untouched.
        let mut buf = s[..3].to_vec();
        let other = if n == 16 { &t16[3..15] } else { &t16[3..] };
        assert_eq!(
            g.open_in_place_detached(&nonce, b"a", &mut buf, other)
                .unwrap_err()
                .kind(),
            ErrorKind::InvalidTagLength
        );
        assert_eq!(buf, s[..3]);
    }
    // Too short to hold a tag.
    assert_eq!(
        full.open(&nonce, b"", &[0u8; 15]).unwrap_err().kind(),
        ErrorKind::AuthenticationFailed
    );
}

#[test]
fn keys_and_debug() {
    assert_eq!(
        AesGcm::new(&[0u8; 15]).unwrap_err().kind(),
        ErrorKind::InvalidKeyLength
    );
    let g = AesGcm::from(aesx::Aes::new(&[1u8; 32]).unwrap());
    assert_eq!(g.key_bits(), 256);
    let s = format!("{g:?}");
    assert!(s.starts_with("AesGcm") && !s.contains("0101"), "{s}");
    // The GHASH kernel follows the CPU, not just the AES backend.
    let f = aesx::cpu::features();
    for b in backends() {
        let g = AesGcm::with_backend(&[1u8; 16], b).unwrap();
        let want =
            if matches!(b, Backend::Vaes256 | Backend::Vaes512) && f.vpclmulqdq && f.pclmulqdq {
                "vclmul"
            } else if !matches!(b, Backend::Soft | Backend::Vpaes) && f.pclmulqdq {
                "clmul"
            } else if f.avx2 {
                "avx2"
            } else {
                "soft"
            };
        assert_eq!(g.ghash_kernel(), want, "{b}");
    }
    // A key is shareable across threads.
    fn sync<T: Sync + Send>() {}
    sync::<AesGcm>();
}

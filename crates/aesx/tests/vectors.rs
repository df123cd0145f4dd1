//! Published known-answer vectors on every available backend: FIPS-197, NIST CAVP KAT and MMT,
//! SP 800-38A, RFC 3686, PuTTY's CBC/SDCTR vectors, the generated SDCTR carry set and
//! Wycheproof CBC-PKCS#5. Each vector goes through every public path of its mode (one-shot,
//! block at a time, streaming, buffer-to-buffer) in both directions.

mod common;

use aesx::{
    Aes, Backend, CbcDecryptor, CbcEncryptor, Ctr, ErrorKind, cbc_decrypt_pkcs7, cbc_encrypt_pkcs7,
    pkcs7_pad, pkcs7_unpad,
};
use common::{Record, assert_bytes_eq, backends, parse_rsp, read_wycheproof};

/// ECB both ways through `encrypt_blocks`, `try_*`, `*_b2b` and the single-block calls.
fn check_ecb(aes: &Aes, pt: &[u8], ct: &[u8], what: &str) {
    let b = aes.backend();
    let mut buf = pt.to_vec();
    aes.encrypt_blocks(&mut buf);
    assert_bytes_eq(&buf, ct, format_args!("{b}: {what}: encrypt_blocks"));
    aes.decrypt_blocks(&mut buf);
    assert_bytes_eq(&buf, pt, format_args!("{b}: {what}: decrypt_blocks"));

    let mut buf = pt.to_vec();
    aes.try_encrypt_blocks(&mut buf).unwrap();
    assert_bytes_eq(&buf, ct, format_args!("{b}: {what}: try_encrypt_blocks"));
    aes.try_decrypt_blocks(&mut buf).unwrap();
    assert_bytes_eq(&buf, pt, format_args!("{b}: {what}: try_decrypt_blocks"));

    // Output one block longer than needed: the extra bytes must stay untouched.
    let mut out = vec![0x5au8; pt.len() + 16];
    aes.encrypt_blocks_b2b(pt, &mut out).unwrap();
    assert_bytes_eq(
        &out[..pt.len()],
        ct,
        format_args!("{b}: {what}: encrypt_blocks_b2b"),
    );
    assert!(
        out[pt.len()..].iter().all(|&x| x == 0x5a),
        "{b}: {what}: b2b wrote past input length"
    );
    aes.decrypt_blocks_b2b(ct, &mut out).unwrap();
    assert_bytes_eq(
        &out[..pt.len()],
        pt,
        format_args!("{b}: {what}: decrypt_blocks_b2b"),
    );

    for (i, (p, c)) in pt.chunks(16).zip(ct.chunks(16)).enumerate() {
        let mut blk: [u8; 16] = p.try_into().unwrap();
        aes.encrypt_block(&mut blk);
        assert_bytes_eq(&blk, c, format_args!("{b}: {what}: encrypt_block #{i}"));
        aes.decrypt_block(&mut blk);
        assert_bytes_eq(&blk, p, format_args!("{b}: {what}: decrypt_block #{i}"));
    }
}

/// CBC both ways: one-shot, and streamed one block per call with the chaining value checked.
fn check_cbc(aes: &Aes, iv: &[u8; 16], pt: &[u8], ct: &[u8], what: &str) {
    let b = aes.backend();
    let mut buf = pt.to_vec();
    aes.cbc_encrypt(iv, &mut buf).unwrap();
    assert_bytes_eq(&buf, ct, format_args!("{b}: {what}: cbc_encrypt"));
    aes.cbc_decrypt(iv, &mut buf).unwrap();
    assert_bytes_eq(&buf, pt, format_args!("{b}: {what}: cbc_decrypt"));

    let mut enc = CbcEncryptor::new(aes, iv);
    let mut dec = CbcDecryptor::new(aes, iv);
    for (i, (p, c)) in pt.chunks(16).zip(ct.chunks(16)).enumerate() {
        let mut blk = p.to_vec();
        enc.encrypt_blocks(&mut blk).unwrap();
        assert_bytes_eq(
            &blk,
            c,
            format_args!("{b}: {what}: CbcEncryptor block #{i}"),
        );
        assert_eq!(
            enc.iv(),
            c,
            "{b}: {what}: CbcEncryptor::iv after block #{i}"
        );
        dec.decrypt_blocks(&mut blk).unwrap();
        assert_bytes_eq(
            &blk,
            p,
            format_args!("{b}: {what}: CbcDecryptor block #{i}"),
        );
        assert_eq!(
            dec.iv(),
            c,
            "{b}: {what}: CbcDecryptor::iv after block #{i}"
        );
    }
}

/// CTR (encryption = decryption): `Ctr` one-shot, byte at a time and b2b, and `ctr_xor_at`
/// in every two-piece split.
fn check_ctr(aes: &Aes, iv: &[u8; 16], pt: &[u8], ct: &[u8], what: &str) {
    let b = aes.backend();
    for (input, want, dir) in [(pt, ct, "encrypt"), (ct, pt, "decrypt")] {
        let mut buf = input.to_vec();
        let mut c = Ctr::new(aes, iv);
        c.apply_keystream(&mut buf);
        assert_bytes_eq(
            &buf,
            want,
            format_args!("{b}: {what}: {dir}: Ctr::apply_keystream"),
        );
        assert_eq!(
            c.position(),
            input.len() as u64,
            "{b}: {what}: Ctr::position"
        );

        let mut buf = input.to_vec();
        let mut c = Ctr::new(aes, iv);
        for byte in buf.chunks_mut(1) {
            c.apply_keystream(byte);
        }
        assert_bytes_eq(
            &buf,
            want,
            format_args!("{b}: {what}: {dir}: byte at a time"),
        );

        let mut out = vec![0u8; input.len()];
        Ctr::new(aes, iv)
            .apply_keystream_b2b(input, &mut out)
            .unwrap();
        assert_bytes_eq(
            &out,
            want,
            format_args!("{b}: {what}: {dir}: apply_keystream_b2b"),
        );

        for split in 0..=input.len() {
            let mut buf = input.to_vec();
            let (x, y) = buf.split_at_mut(split);
            aes.ctr_xor_at(iv, 0, x);
            aes.ctr_xor_at(iv, split as u64, y);
            assert_bytes_eq(
                &buf,
                want,
                format_args!("{b}: {what}: {dir}: ctr_xor_at split {split}"),
            );
        }
    }
}

fn key_of(r: &Record, b: Backend) -> Aes {
    Aes::with_backend(&r.hex("KEY"), b).unwrap_or_else(|e| panic!("{b}: {r}: with_backend: {e}"))
}

/// Runs every record of `files` (ECB or CBC chosen by the file name) on every backend and
/// returns how many records there were.
fn run_block_mode_files(files: &[String]) -> usize {
    let mut n = 0;
    for file in files {
        let recs = parse_rsp(file);
        let cbc = file.to_ascii_uppercase().contains("CBC");
        for b in backends() {
            for r in &recs {
                let aes = key_of(r, b);
                let (pt, ct) = (r.hex("PLAINTEXT"), r.hex("CIPHERTEXT"));
                assert!(
                    !pt.is_empty() && pt.len() % 16 == 0,
                    "{r}: bad PLAINTEXT length"
                );
                let what = r.to_string();
                if cbc {
                    check_cbc(&aes, &r.block("IV"), &pt, &ct, &what);
                } else {
                    assert!(r.get("IV").is_none(), "{r}: ECB record with an IV");
                    check_ecb(&aes, &pt, &ct, &what);
                }
            }
        }
        n += recs.len();
    }
    n
}

#[test]
fn fips197_appendix_c() {
    let key: Vec<u8> = (0u8..32).collect();
    let pt: [u8; 16] = hex::decode("00112233445566778899aabbccddeeff")
        .unwrap()
        .try_into()
        .unwrap();
    let want = [
        (16, "69c4e0d86a7b0430d8cdb78070b4c55a"),
        (24, "dda97ca4864cdfe06eaf70a0ec0d7191"),
        (32, "8ea2b7ca516745bfeafc49904b496089"),
    ];
    for b in backends() {
        for (kl, ct) in want {
            let aes = Aes::with_backend(&key[..kl], b).unwrap();
            assert_eq!(aes.backend(), b);
            assert_eq!(aes.key_bits() as usize, kl * 8, "{b}: key_bits");
            check_ecb(
                &aes,
                &pt,
                &hex::decode(ct).unwrap(),
                &format!("FIPS-197 C AES-{}", kl * 8),
            );
        }
    }
}

#[test]
fn nist_kat_ecb_and_cbc() {
    let mut files = Vec::new();
    for mode in ["ECB", "CBC"] {
        for kind in ["GFSbox", "KeySbox", "VarKey", "VarTxt"] {
            for bits in [128, 192, 256] {
                files.push(format!("nist-kat/{mode}{kind}{bits}.rsp"));
            }
        }
    }
    // SOURCE.md: GFSbox 14/12/10, KeySbox 42/48/32, VarKey 256/384/512, VarTxt 256 each,
    // for ECB and for CBC.
    let want = 2 * (14 + 12 + 10 + 42 + 48 + 32 + 256 + 384 + 512 + 3 * 256);
    assert_eq!(run_block_mode_files(&files), want, "number of KAT records");
}

#[test]
fn nist_mmt_ecb_and_cbc() {
    let mut files = Vec::new();
    for mode in ["ECB", "CBC"] {
        for bits in [128, 192, 256] {
            files.push(format!("nist-mmt/{mode}MMT{bits}.rsp"));
        }
    }
    assert_eq!(
        run_block_mode_files(&files),
        6 * 20,
        "number of MMT records"
    );
}

#[test]
fn sp800_38a_ecb_and_cbc() {
    let files = [
        "sp800-38a/SP800-38A-ECB.rsp".to_string(),
        "sp800-38a/SP800-38A-CBC.rsp".to_string(),
    ];
    assert_eq!(run_block_mode_files(&files), 12);
}

/// Runs a CTR vector file (IV = initial 128-bit counter block) on every backend.
fn run_ctr_file(file: &str) -> usize {
    let recs = parse_rsp(file);
    for b in backends() {
        for r in &recs {
            let aes = key_of(r, b);
            let (pt, ct) = (r.hex("PLAINTEXT"), r.hex("CIPHERTEXT"));
            assert_eq!(
                pt.len(),
                ct.len(),
                "{r}: PLAINTEXT and CIPHERTEXT lengths differ"
            );
            check_ctr(&aes, &r.block("IV"), &pt, &ct, &r.to_string());
        }
    }
    recs.len()
}

#[test]
fn sp800_38a_ctr() {
    assert_eq!(run_ctr_file("sp800-38a/SP800-38A-CTR.rsp"), 6);
}

#[test]
fn rfc3686_ctr() {
    let n: usize = ["aes-128-ctr.txt", "aes-192-ctr.txt", "aes-256-ctr.txt"]
        .iter()
        .map(|f| run_ctr_file(&format!("rfc3686-ctr/{f}")))
        .sum();
    assert_eq!(n, 9);
}

#[test]
fn putty_cbc() {
    assert_eq!(
        run_block_mode_files(&["putty/putty-aes-cbc.rsp".to_string()]),
        6
    );
}

#[test]
fn putty_sdctr() {
    let file = "putty/putty-aes-sdctr.rsp";
    // The IV fffffffffffffffffffffffffffffffe records wrap the counter through 2^128.
    let wraps = parse_rsp(file)
        .iter()
        .filter(|r| r.get("IV") == Some("fffffffffffffffffffffffffffffffe"))
        .count();
    assert_eq!(
        wraps, 3,
        "{file}: expected one 2^128-wrap record per key size"
    );
    assert_eq!(run_ctr_file(file), 9);
}

/// Generated two-block SDCTR vectors whose IVs sit at every 32-bit carry boundary. Besides the
/// record itself, the same keystream is reached by starting blocks earlier and seeking, and by
/// the single-block ECB encryptions of IV and IV+1.
#[test]
fn sdctr_carry_generated() {
    let file = "putty/sdctr-carry-generated.rsp";
    let recs = parse_rsp(file);
    assert_eq!(recs.len(), 3 * 81);
    assert_eq!(run_ctr_file(file), 3 * 81);
    for b in backends() {
        for r in &recs {
            let aes = key_of(r, b);
            let iv = r.block("IV");
            let ct = r.hex("CIPHERTEXT");
            assert!(
                r.hex("PLAINTEXT").iter().all(|&x| x == 0) && ct.len() == 32,
                "{r}: layout"
            );
            // ECB of the counter blocks is the keystream.
            let mut ecb = [iv, common::ctr_add(&iv, 1)].concat();
            aes.encrypt_blocks(&mut ecb);
            assert_bytes_eq(&ecb, &ct, format_args!("{b}: {r}: ECB(IV || IV+1)"));
            // Start `back` blocks earlier and seek (or stream) over them.
            for back in [1u128, 2, 3, 7, 8, 9, 16, 17, 33] {
                let early = common::ctr_add(&iv, back.wrapping_neg());
                let skip = 16 * back as usize;
                let mut c = Ctr::new(&aes, &early);
                c.seek(skip as u64);
                let mut buf = vec![0u8; 32];
                c.apply_keystream(&mut buf);
                assert_bytes_eq(
                    &buf,
                    &ct,
                    format_args!("{b}: {r}: seek {back} blocks from IV-{back}"),
                );

                let mut buf = vec![0u8; skip + 32];
                Ctr::new(&aes, &early).apply_keystream(&mut buf);
                assert_bytes_eq(
                    &buf[skip..],
                    &ct,
                    format_args!("{b}: {r}: one call from IV-{back}"),
                );
            }
        }
    }
}

#[test]
fn wycheproof_cbc_pkcs5() {
    let file = "wycheproof/aes_cbc_pkcs5_test.json";
    let w = read_wycheproof(file);
    assert_eq!(w.algorithm, "AES-CBC-PKCS5");
    let (mut valid, mut invalid) = (0, 0);
    for b in backends() {
        (valid, invalid) = (0, 0);
        for g in &w.test_groups {
            assert_eq!(
                (g.kind.as_str(), g.iv_size),
                ("IndCpaTest", 128),
                "{file}: group layout"
            );
            for t in &g.tests {
                let what = format!("{b}: {file} tcId {} ({})", t.tc_id, t.comment);
                let key = hex::decode(&t.key).unwrap();
                assert_eq!(key.len() * 8, g.key_size as usize, "{what}: key size");
                let aes = Aes::with_backend(&key, b).unwrap();
                let iv: [u8; 16] = hex::decode(&t.iv).unwrap().try_into().unwrap();
                let msg = hex::decode(&t.msg).unwrap();
                let ct = hex::decode(&t.ct).unwrap();
                match t.result.as_str() {
                    "valid" => {
                        valid += 1;
                        let got = cbc_encrypt_pkcs7(&aes, &iv, &msg);
                        assert_bytes_eq(&got, &ct, format_args!("{what}: cbc_encrypt_pkcs7"));
                        let got = cbc_decrypt_pkcs7(&aes, &iv, &ct)
                            .unwrap_or_else(|e| panic!("{what}: cbc_decrypt_pkcs7: {e}"));
                        assert_bytes_eq(&got, &msg, format_args!("{what}: cbc_decrypt_pkcs7"));
                        // The same through the building blocks.
                        let whole = msg.len() / 16 * 16;
                        let mut buf = msg[..whole].to_vec();
                        buf.extend_from_slice(&pkcs7_pad(&msg[whole..]).unwrap());
                        aes.cbc_encrypt(&iv, &mut buf).unwrap();
                        assert_bytes_eq(&buf, &ct, format_args!("{what}: pkcs7_pad + cbc_encrypt"));
                        aes.cbc_decrypt(&iv, &mut buf).unwrap();
                        assert_eq!(pkcs7_unpad(&buf), Ok(msg.len()), "{what}: pkcs7_unpad");
                    }
                    "invalid" => {
                        invalid += 1;
                        assert!(
                            t.flags
                                .iter()
                                .any(|f| f == "BadPadding" || f == "NoPadding"),
                            "{what}: unexpected flags {:?}",
                            t.flags
                        );
                        let err = cbc_decrypt_pkcs7(&aes, &iv, &ct)
                            .expect_err(&format!("{what}: invalid padding accepted"));
                        assert_eq!(err.kind(), ErrorKind::BadPadding, "{what}");
                    }
                    other => panic!("{what}: unknown result {other:?}"),
                }
            }
        }
    }
    assert_eq!((valid, invalid), (72, 144), "{file}: valid/invalid counts");
}

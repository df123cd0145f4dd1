//! Bad input gives the right `ErrorKind` (or, for the documented panicking calls, a panic),
//! leaves buffers and stream state untouched, and never shows key bytes.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use aesx::{
    Aes, Backend, CbcDecryptor, CbcEncryptor, Ctr, Error, ErrorKind, cbc_decrypt_pkcs7,
    cbc_encrypt_pkcs7, pkcs7_pad, pkcs7_unpad,
};
use common::backends;

const UNALIGNED: [usize; 8] = [1, 2, 15, 17, 31, 33, 255, 1023];

#[test]
fn backend_list_is_consistent() {
    let list = Backend::available();
    assert_eq!(list.first(), Some(&Backend::Soft));
    let want: Vec<Backend> = Backend::ALL
        .into_iter()
        .filter(|b| b.is_available())
        .collect();
    assert_eq!(list, want);
    assert!(
        list.windows(2).all(|w| w[0] < w[1]),
        "slowest first: {list:?}"
    );
    assert_eq!(Backend::detect(), *list.last().unwrap());
    assert_eq!(Aes::new(&[0u8; 16]).unwrap().backend(), Backend::detect());
    for b in Backend::ALL {
        assert_eq!(b.name().parse::<Backend>().unwrap(), b);
        assert_eq!(b.to_string(), b.name());
    }
    // AES-NI is the floor for the VAES backends (they share its key layout).
    if Backend::Vaes256.is_available() || Backend::Vaes512.is_available() {
        assert!(Backend::Aesni.is_available());
    }
    if Backend::Vaes512.is_available() {
        assert!(Backend::Vaes256.is_available());
    }
}

#[test]
fn bad_key_length_on_every_backend() {
    for n in [0, 1, 8, 15, 17, 20, 23, 25, 31, 33, 48, 64] {
        let key = vec![0x42u8; n];
        assert_eq!(
            Aes::new(&key).unwrap_err().kind(),
            ErrorKind::InvalidKeyLength,
            "Aes::new {n}"
        );
        for b in Backend::ALL {
            // Key length is checked first, so unavailable backends report it too.
            let e = Aes::with_backend(&key, b).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidKeyLength, "{b}: {n}-byte key");
        }
    }
}

#[test]
fn unavailable_backends_are_refused() {
    let mut refused = 0;
    for b in Backend::ALL {
        let r = Aes::with_backend(&[1u8; 16], b);
        if b.is_available() {
            assert_eq!(r.unwrap().backend(), b);
        } else {
            refused += 1;
            assert_eq!(r.unwrap_err().kind(), ErrorKind::BackendUnavailable, "{b}");
        }
    }
    assert_eq!(refused, Backend::ALL.len() - Backend::available().len());
    assert_eq!(
        "nope".parse::<Backend>().unwrap_err().kind(),
        ErrorKind::UnknownBackend
    );
}

#[test]
fn unaligned_ecb() {
    for b in backends() {
        let aes = Aes::with_backend(&[3u8; 24], b).unwrap();
        for n in UNALIGNED {
            let orig: Vec<u8> = (0..n as u8).collect();
            let mut buf = orig.clone();
            let e = aes.try_encrypt_blocks(&mut buf).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::NotBlockAligned,
                "{b}: try_encrypt_blocks {n}"
            );
            let e = aes.try_decrypt_blocks(&mut buf).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::NotBlockAligned,
                "{b}: try_decrypt_blocks {n}"
            );
            assert_eq!(buf, orig, "{b}: rejected call changed the buffer");

            let mut out = vec![0u8; n + 16];
            let e = aes.encrypt_blocks_b2b(&orig, &mut out).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::NotBlockAligned,
                "{b}: encrypt_blocks_b2b {n}"
            );
            let e = aes.decrypt_blocks_b2b(&orig, &mut out).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::NotBlockAligned,
                "{b}: decrypt_blocks_b2b {n}"
            );

            let r = catch_unwind(AssertUnwindSafe(|| aes.encrypt_blocks(&mut buf)));
            assert!(r.is_err(), "{b}: encrypt_blocks on {n} bytes must panic");
            let r = catch_unwind(AssertUnwindSafe(|| aes.decrypt_blocks(&mut buf)));
            assert!(r.is_err(), "{b}: decrypt_blocks on {n} bytes must panic");
        }
        // Output too small for the input.
        let input = [0u8; 32];
        let mut out = [0u8; 16];
        let e = aes.encrypt_blocks_b2b(&input, &mut out).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::OutputTooSmall,
            "{b}: encrypt_blocks_b2b"
        );
        let e = aes.decrypt_blocks_b2b(&input, &mut out).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::OutputTooSmall,
            "{b}: decrypt_blocks_b2b"
        );
    }
}

#[test]
fn unaligned_cbc_leaves_state_alone() {
    let iv = [9u8; 16];
    for b in backends() {
        let aes = Aes::with_backend(&[4u8; 32], b).unwrap();
        let mut want = vec![0x33u8; 64];
        aes.cbc_encrypt(&iv, &mut want).unwrap();
        for n in UNALIGNED {
            let orig = vec![0x33u8; n];
            let mut buf = orig.clone();
            let e = aes.cbc_encrypt(&iv, &mut buf).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::NotBlockAligned, "{b}: cbc_encrypt {n}");
            let e = aes.cbc_decrypt(&iv, &mut buf).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::NotBlockAligned, "{b}: cbc_decrypt {n}");
            assert_eq!(buf, orig, "{b}: rejected CBC call changed the buffer");

            // A rejected streaming call must not advance the chain.
            let mut enc = CbcEncryptor::new(&aes, &iv);
            let mut out = vec![0x33u8; 64];
            enc.encrypt_blocks(&mut out[..32]).unwrap();
            let e = enc.encrypt_blocks(&mut buf).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::NotBlockAligned,
                "{b}: CbcEncryptor {n}"
            );
            assert_eq!(
                enc.iv(),
                want[16..32],
                "{b}: CbcEncryptor iv moved after error"
            );
            enc.encrypt_blocks(&mut out[32..]).unwrap();
            assert_eq!(out, want, "{b}: CbcEncryptor after a rejected call");

            let mut dec = CbcDecryptor::new(&aes, &iv);
            let mut back = want.clone();
            dec.decrypt_blocks(&mut back[..32]).unwrap();
            let e = dec.decrypt_blocks(&mut buf).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::NotBlockAligned,
                "{b}: CbcDecryptor {n}"
            );
            assert_eq!(
                dec.iv(),
                want[16..32],
                "{b}: CbcDecryptor iv moved after error"
            );
            dec.decrypt_blocks(&mut back[32..]).unwrap();
            assert_eq!(
                back,
                vec![0x33u8; 64],
                "{b}: CbcDecryptor after a rejected call"
            );
        }
    }
}

#[test]
fn padding_errors() {
    assert_eq!(
        pkcs7_pad(&[0u8; 16]).unwrap_err().kind(),
        ErrorKind::NotBlockAligned
    );
    assert_eq!(
        pkcs7_pad(&[0u8; 40]).unwrap_err().kind(),
        ErrorKind::NotBlockAligned
    );
    for bad in [&[][..], &[1u8; 15], &[1u8; 17], &[0u8; 16], &[17u8; 16]] {
        assert_eq!(
            pkcs7_unpad(bad).unwrap_err().kind(),
            ErrorKind::BadPadding,
            "{bad:?}"
        );
    }
    let iv = [0u8; 16];
    for b in backends() {
        let aes = Aes::with_backend(&[5u8; 16], b).unwrap();
        for n in [0, 1, 15, 17, 31] {
            let e = cbc_decrypt_pkcs7(&aes, &iv, &vec![0u8; n]).unwrap_err();
            assert_eq!(
                e.kind(),
                ErrorKind::BadPadding,
                "{b}: cbc_decrypt_pkcs7 of {n} bytes"
            );
        }
        // 21 bytes: the last block ends in eleven 0x0b. Flipping the low bit of the previous
        // ciphertext block's last byte turns the final 0x0b into 0x0a: invalid padding.
        let ct = cbc_encrypt_pkcs7(&aes, &iv, b"twenty-one bytes here");
        let mut bad = ct.clone();
        bad[15] ^= 0x01;
        let e = cbc_decrypt_pkcs7(&aes, &iv, &bad).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::BadPadding,
            "{b}: corrupted padding accepted"
        );
        // Wrong key: bad padding with probability ~255/256; for this fixed pair it is.
        let other = Aes::with_backend(&[6u8; 16], b).unwrap();
        assert_eq!(
            cbc_decrypt_pkcs7(&other, &iv, &ct).unwrap_err().kind(),
            ErrorKind::BadPadding
        );
    }
}

#[test]
fn ctr_errors_leave_state_alone() {
    for b in backends() {
        let aes = Aes::with_backend(&[8u8; 16], b).unwrap();
        for n in [0, 1, 15, 17, 32] {
            let e = Ctr::try_new(&aes, &vec![0u8; n])
                .err()
                .expect("bad IV accepted");
            assert_eq!(e.kind(), ErrorKind::InvalidIvLength, "{b}: {n}-byte IV");
        }
        let iv = [0xeeu8; 16];
        let mut c = Ctr::try_new(&aes, &iv).unwrap();
        let mut head = [0u8; 5];
        c.apply_keystream(&mut head);
        let mut out = [0u8; 3];
        let e = c.apply_keystream_b2b(&[0u8; 4], &mut out).unwrap_err();
        assert_eq!(
            e.kind(),
            ErrorKind::OutputTooSmall,
            "{b}: apply_keystream_b2b"
        );
        assert_eq!(c.position(), 5, "{b}: position moved after a rejected call");
        let mut rest = [0u8; 27];
        c.apply_keystream(&mut rest);
        let mut want = [0u8; 32];
        Ctr::new(&aes, &iv).apply_keystream(&mut want);
        assert_eq!(
            [&head[..], &rest[..]].concat(),
            want,
            "{b}: stream after a rejected call"
        );
    }
}

#[test]
fn messages_and_debug_show_no_key_bytes() {
    let key = [0xc7u8; 32];
    for b in backends() {
        let aes = Aes::with_backend(&key, b).unwrap();
        let s = format!("{aes:?}");
        assert!(s.starts_with("Aes {") && s.ends_with(".. }"), "{s}");
        assert!(
            !s.contains("199") && !s.to_lowercase().contains("c7"),
            "Aes Debug leaks: {s}"
        );
    }
    for kind in [
        ErrorKind::InvalidKeyLength,
        ErrorKind::InvalidIvLength,
        ErrorKind::NotBlockAligned,
        ErrorKind::BadPadding,
        ErrorKind::BackendUnavailable,
        ErrorKind::OutputTooSmall,
        ErrorKind::UnknownBackend,
    ] {
        let e = Error::from(kind);
        assert_eq!(e.kind(), kind);
        assert!(e.to_string().len() > 10, "{kind:?}: message too terse");
    }
}

//! The `aead` feature: aesx's `Aes128Gcm`/`Aes192Gcm`/`Aes256Gcm` behind RustCrypto's traits
//! give the same bytes as the `aes-gcm` crate's types of the same names, through the same
//! generic code (so switching crates is changing one `use`).
#![cfg(feature = "aead")]

use aead::consts::U12;
use aead::{Aead, AeadCore, AeadInOut, KeyInit, Nonce, Payload};

/// Seals and opens through the traits only, for any implementation.
fn run<A: Aead + AeadInOut + KeyInit + AeadCore<NonceSize = U12>>(
    key: &[u8],
    nonce: &[u8; 12],
    aad: &[u8],
    msg: &[u8],
) -> Vec<u8> {
    let c = A::new_from_slice(key).unwrap();
    let n = &Nonce::<A>::from(*nonce);
    let ct = c.encrypt(n, Payload { msg, aad }).unwrap();
    assert_eq!(c.decrypt(n, Payload { msg: &ct, aad }).unwrap(), msg);
    // Detached, in place.
    let mut buf = msg.to_vec();
    let tag = c
        .encrypt_inout_detached(n, aad, buf.as_mut_slice().into())
        .unwrap();
    assert_eq!(&buf[..], &ct[..msg.len()]);
    assert_eq!(&tag[..], &ct[msg.len()..]);
    // A forged tag is refused.
    let mut bad = ct.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert!(c.decrypt(n, Payload { msg: &bad, aad }).is_err());
    ct
}

#[test]
fn same_bytes_as_aes_gcm_through_the_same_traits() {
    for len in [0usize, 1, 15, 16, 17, 100, 1000, 4099] {
        let msg: Vec<u8> = (0..len).map(|i| (i * 13 + 5) as u8).collect();
        let aad = &msg[..len.min(21)];
        let nonce = [len as u8; 12];
        assert_eq!(
            run::<aesx::Aes128Gcm>(&[1u8; 16], &nonce, aad, &msg),
            run::<aes_gcm::Aes128Gcm>(&[1u8; 16], &nonce, aad, &msg)
        );
        assert_eq!(
            run::<aesx::Aes192Gcm>(&[2u8; 24], &nonce, aad, &msg),
            run::<aes_gcm::AesGcm<aes_gcm::aes::Aes192, aes_gcm::aead::consts::U12>>(
                &[2u8; 24], &nonce, aad, &msg
            )
        );
        assert_eq!(
            run::<aesx::Aes256Gcm>(&[3u8; 32], &nonce, aad, &msg),
            run::<aes_gcm::Aes256Gcm>(&[3u8; 32], &nonce, aad, &msg)
        );
    }
}

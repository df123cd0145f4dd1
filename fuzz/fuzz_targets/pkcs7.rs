//! PKCS#7: `pkcs7_unpad` and the branch-free `pkcs7_check` against the obvious model on
//! arbitrary data; pad then unpad round trips; CBC decryption with unpadding on every backend
//! against soft + the model.
#![no_main]

use aesx::hazmat::pkcs7_check;
use aesx::{Aes, pkcs7_pad, pkcs7_unpad};
use aesx_fuzz::{Result, Unstructured, backends, block, key, pkcs7_unpad_model, soft};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The raw input as decrypted data.
    assert_eq!(pkcs7_unpad(data).ok(), pkcs7_unpad_model(data), "{data:?}");
    if data.len() >= 16 {
        let last: &[u8; 16] = data[data.len() - 16..].try_into().unwrap();
        let c = pkcs7_check(last);
        let model = pkcs7_unpad_model(last);
        assert_eq!(c.valid == 1, model.is_some(), "{last:?}");
        assert!(c.valid <= 1);
        if let Some(n) = model {
            assert_eq!(16 - c.pad as usize, n);
        }
    }
    let _ = structured(data);
});

fn structured(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    // Padding round trip for every tail length.
    let tail_len = u.int_in_range(0..=16usize)?;
    let tail = u.bytes(tail_len.min(u.len()))?;
    match pkcs7_pad(tail) {
        Ok(p) => {
            assert!(tail.len() < 16);
            assert_eq!(&p[..tail.len()], tail);
            assert_eq!(pkcs7_unpad(&p), Ok(tail.len()));
        }
        Err(_) => assert_eq!(tail.len(), 16),
    }
    // Arbitrary ciphertext through CBC + unpadding, every backend against soft + the model.
    let key = key(&mut u)?;
    let iv = block(&mut u)?;
    let n = u.int_in_range(0..=8usize)? * 16;
    let ct = u.bytes(n.min(u.len() / 16 * 16))?;
    let mut plain = ct.to_vec();
    soft(&key).cbc_decrypt(&iv, &mut plain).unwrap();
    let want = pkcs7_unpad_model(&plain).map(|m| plain[..m].to_vec());
    for &b in backends() {
        let aes = Aes::with_backend(&key, b).unwrap();
        assert_eq!(aesx::cbc_decrypt_pkcs7(&aes, &iv, ct).ok(), want, "{b}");
    }
    Ok(())
}

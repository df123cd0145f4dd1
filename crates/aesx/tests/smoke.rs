use aesx::{Aes, Backend};
#[test]
fn fips197() {
    let key =
        hex::decode("000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f").unwrap();
    let pt: [u8; 16] = hex::decode("00112233445566778899aabbccddeeff")
        .unwrap()
        .try_into()
        .unwrap();
    let want = [
        "69c4e0d86a7b0430d8cdb78070b4c55a",
        "dda97ca4864cdfe06eaf70a0ec0d7191",
        "8ea2b7ca516745bfeafc49904b496089",
    ];
    for b in Backend::available() {
        for (i, kl) in [16, 24, 32].into_iter().enumerate() {
            let aes = Aes::with_backend(&key[..kl], b).unwrap();
            let mut x = pt;
            aes.encrypt_block(&mut x);
            assert_eq!(hex::encode(x), want[i], "{b} {kl}");
            aes.decrypt_block(&mut x);
            assert_eq!(x, pt);
            let mut big = vec![7u8; 16 * 37];
            let orig = big.clone();
            aes.encrypt_blocks(&mut big);
            aes.decrypt_blocks(&mut big);
            assert_eq!(big, orig);
        }
    }
}

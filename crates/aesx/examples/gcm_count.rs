//! N one-shot GCM calls of one shape, for counting instructions where timers are noisy:
//! `valgrind --tool=callgrind target/release/examples/gcm_count seal|open SIZE KEY_BYTES N`
//! for two values of N; the difference of the totals over the difference of N is the cost of
//! one call (12-byte nonce, 13 bytes of AAD, as `aesx bench --ops gcm-enc,gcm-dec`). `open`
//! copies the sealed message back in before each call (a 16-byte copy at 16 B: about 5
//! instructions). Under valgrind, which has no VAES, the backend is `aesni` or below.
use std::hint::black_box;

use aesx::{AesGcm, Backend};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 || !matches!(args[1].as_str(), "seal" | "open") {
        eprintln!("usage: gcm_count seal|open SIZE KEY_BYTES N");
        std::process::exit(2);
    }
    let seal = args[1] == "seal";
    let size: usize = args[2].parse().expect("SIZE");
    let key_len: usize = args[3].parse().expect("KEY_BYTES");
    let n: usize = args[4].parse().expect("N");
    let g = AesGcm::with_backend(&vec![7u8; key_len], Backend::detect()).expect("key");
    let (nonce, aad) = ([1u8; 12], [3u8; 13]);
    let mut buf = vec![5u8; size];
    let mut sealed = buf.clone();
    let tag = g.seal_in_place_detached(&nonce, &aad, &mut sealed).unwrap();
    for _ in 0..n {
        if seal {
            black_box(
                g.seal_in_place_detached(&nonce, &aad, black_box(&mut buf))
                    .unwrap(),
            );
        } else {
            buf.copy_from_slice(&sealed);
            let r = g.open_in_place_detached(&nonce, &aad, black_box(&mut buf), tag.as_ref());
            assert!(black_box(r).is_ok(), "open refused a valid tag");
        }
    }
}

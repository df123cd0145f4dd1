//! The time of one CTR call as a user's crate makes it: `Aes::new` on the fastest backend (or
//! `AESX_BACKEND`), then `Aes::ctr_xor_at` on one buffer over and over, best of 200 trials of
//! 20000 calls. The per-call costs beside the AES work (dispatch, stack wipes) show here as
//! they do in a program, where `aesx bench` interleaves its peers between trials. The machine
//! can be slow for a whole process (see the README): run it a few times and keep the best.
//! The buffer starts `offset` bytes past a 64-byte boundary (default 0).
//! `cargo run --release -p aesx --example ctr_call -- [bytes] [key bits] [offset]`
use std::hint::black_box;
use std::time::Instant;

use aesx::{Aes, Backend};

fn main() {
    let mut args = std::env::args().skip(1);
    let size: usize = args.next().map_or(1024, |s| s.parse().expect("bytes"));
    let bits: usize = args.next().map_or(128, |s| s.parse().expect("key bits"));
    let key = vec![7u8; bits / 8];
    let aes = match std::env::var("AESX_BACKEND") {
        Ok(name) => {
            let b: Backend = name.parse().expect("backend name");
            Aes::with_backend(&key, b).expect("backend available")
        }
        Err(_) => Aes::new(&key).expect("valid key"),
    };
    let offset: usize = args.next().map_or(0, |s| s.parse().expect("offset"));
    let iv = [0u8; 16];
    let mut storage = vec![0u8; size + 128 + offset];
    let start = storage.as_ptr().align_offset(64) + offset;
    let buf = &mut storage[start..start + size];
    let calls = 20_000;
    let mut best = f64::INFINITY;
    for _ in 0..200 {
        let t = Instant::now();
        for _ in 0..calls {
            aes.ctr_xor_at(black_box(&iv), 0, black_box(&mut *buf));
        }
        best = best.min(t.elapsed().as_nanos() as f64 / calls as f64);
    }
    println!(
        "{} AES-{bits} CTR {size} B: {best:.1} ns a call, {:.2} GB/s",
        aes.backend().name(),
        size as f64 / best
    );
}

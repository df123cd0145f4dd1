//! Where a short GCM message sits in memory, and how fast it is sealed: one `AesGcm` (the
//! fastest backend), a 16-byte message with 13 bytes of AAD (a TLS record's shape) sealed in
//! place at every 64-byte offset of a page, best of 30 rounds over all offsets of 2000 calls each; prints the
//! offsets more than 5% slower than the fastest. A probe for issue 11/15-style placement
//! effects (the answer changes from process to process: run it several times).
//! `cargo run --release -p aesx --example gcm_placement -- [message bytes]`
use std::hint::black_box;
use std::time::Instant;

use aesx::AesGcm;

fn main() {
    let len: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("message bytes"))
        .unwrap_or(16);
    let g = AesGcm::new(&[7u8; 16]).expect("valid key");
    let mut page = vec![0u8; 3 * 4096 + len];
    let base = page.as_ptr() as usize;
    let first = 4096 - base % 4096;
    let (nonce, aad) = ([1u8; 12], [2u8; 13]);
    // Rounds over every offset, best per offset: a slow period of the machine then touches
    // every offset alike instead of a run of neighbouring ones.
    let mut res: Vec<(usize, f64)> = (0..4096).step_by(64).map(|o| (o, f64::INFINITY)).collect();
    for _ in 0..30 {
        for (off, best) in res.iter_mut() {
            let buf = &mut page[first + *off..first + *off + len];
            let t = Instant::now();
            for _ in 0..2000 {
                let tag = g
                    .seal_in_place_detached(&nonce, black_box(&aad), black_box(&mut *buf))
                    .expect("seal");
                black_box(tag);
            }
            *best = best.min(t.elapsed().as_nanos() as f64 / 2000.0);
        }
    }
    let min = res.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
    let slow: Vec<_> = res.iter().filter(|r| r.1 > 1.05 * min).collect();
    println!(
        "{len} B seal on {}: fastest {min:.1} ns; {} of {} page offsets more than 5% slower \
         (key at page offset {}, a stack variable at {})",
        g.backend(),
        slow.len(),
        res.len(),
        &g as *const _ as usize % 4096,
        &res as *const _ as usize % 4096
    );
    for (off, t) in slow {
        println!("  offset {off:4}: {t:.1} ns ({:.2}x)", t / min);
    }
}

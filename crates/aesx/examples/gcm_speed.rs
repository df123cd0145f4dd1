//! Quick GCM throughput probe for kernel work (the real benchmark is `aesx bench --ops
//! gcm-enc,gcm-dec`): best of many interleaved trials per backend.
//! `cargo run --release -p aesx --example gcm_speed -- [size] [key bytes]`
use std::time::Instant;

use aesx::{AesGcm, Backend};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(16384);
    let kl: usize = args.get(2).map(|s| s.parse().unwrap()).unwrap_or(16);
    let backends = Backend::available();
    let keys: Vec<AesGcm> = backends
        .iter()
        .map(|&b| AesGcm::with_backend(&vec![7u8; kl], b).unwrap())
        .collect();
    let mut buf = vec![0u8; size];
    let nonce = [1u8; 12];
    let mut best = vec![[f64::MAX; 2]; keys.len()];
    let reps = (1 << 22) / size.max(64) + 1;
    for _ in 0..30 {
        for (i, g) in keys.iter().enumerate() {
            let t = Instant::now();
            let mut tag = g.seal_in_place_detached(&nonce, b"", &mut buf).unwrap();
            for _ in 1..reps {
                tag = g.seal_in_place_detached(&nonce, b"", &mut buf).unwrap();
            }
            best[i][0] = best[i][0].min(t.elapsed().as_secs_f64() / reps as f64);
            // Open what was just sealed (the last seal's output).
            let t = Instant::now();
            for _ in 0..reps {
                let r = aesx::hazmat::gcm_open_ct(g, &nonce, b"", &mut buf, tag.as_ref());
                std::hint::black_box(r.unwrap());
            }
            best[i][1] = best[i][1].min(t.elapsed().as_secs_f64() / reps as f64);
        }
    }
    // GHASH alone: the buffer as associated data of an empty message.
    let mut gh = vec![f64::MAX; keys.len()];
    for _ in 0..10 {
        for (i, g) in keys.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..reps {
                std::hint::black_box(g.seal_in_place_detached(&nonce, &buf, &mut []).unwrap());
            }
            gh[i] = gh[i].min(t.elapsed().as_secs_f64() / reps as f64);
        }
    }
    for (i, b) in backends.iter().enumerate() {
        println!(
            "{:8} GHASH {:7.3} GB/s",
            b.name(),
            size as f64 / gh[i] / 1e9
        );
    }
    for (i, b) in backends.iter().enumerate() {
        println!(
            "{:8} {:>8} B AES-{}: seal {:7.3} GB/s ({:8.1} ns)  open {:7.3} GB/s ({:8.1} ns)",
            b.name(),
            size,
            kl * 8,
            size as f64 / best[i][0] / 1e9,
            best[i][0] * 1e9,
            size as f64 / best[i][1] / 1e9,
            best[i][1] * 1e9
        );
    }
}

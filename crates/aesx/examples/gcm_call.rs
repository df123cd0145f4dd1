//! The time of one AES-128-GCM seal as a user's crate makes it, 13 bytes of AAD and a 12-byte
//! nonce: one-shot (`AesGcm::seal_in_place_detached`) and streamed (`GcmEncryptor`: new, aad,
//! update, finish, as the OpenSSL provider runs it), best of 30 trials per size. The probe
//! behind the README's session-22 per-message numbers; with sizes of 4 KiB and more it also
//! fits the one-shot time to a fixed cost plus a cost per KiB.
//! `cargo run --release -p aesx --example gcm_call -- [bytes ...]`
use std::hint::black_box;
use std::time::Instant;

use aesx::{AesGcm, GcmEncryptor};

fn main() {
    let mut sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|s| s.parse().expect("bytes"))
        .collect();
    if sizes.is_empty() {
        sizes = vec![16, 20, 100, 512, 1000, 1024, 4096, 16384, 32768];
    }
    let g = AesGcm::new(&[7u8; 16]).expect("valid key");
    let (nonce, aad) = ([1u8; 12], [2u8; 13]);
    let mut buf = vec![0u8; sizes.iter().copied().max().unwrap_or(0)];
    let mut one = vec![f64::INFINITY; sizes.len()];
    let mut stream = vec![f64::INFINITY; sizes.len()];
    for _ in 0..30 {
        for (i, &s) in sizes.iter().enumerate() {
            let reps = 1_000_000 / s.max(64) + 100;
            let t = Instant::now();
            for _ in 0..reps {
                let b = black_box(&mut buf[..s]);
                black_box(
                    g.seal_in_place_detached(&nonce, black_box(&aad), b)
                        .expect("seal"),
                );
            }
            one[i] = one[i].min(t.elapsed().as_nanos() as f64 / reps as f64);
            let t = Instant::now();
            for _ in 0..reps {
                let mut e = GcmEncryptor::new(&g, &nonce).expect("nonce");
                e.aad(black_box(&aad)).expect("aad");
                e.update(black_box(&mut buf[..s])).expect("update");
                black_box(e.finish());
            }
            stream[i] = stream[i].min(t.elapsed().as_nanos() as f64 / reps as f64);
        }
    }
    println!("{}: one-shot / streamed seal, ns", g.backend());
    for (i, &s) in sizes.iter().enumerate() {
        println!("{s:8} B  {:8.1}  {:8.1}", one[i], stream[i]);
    }
    // Least squares over the sizes from 4 KiB: time = fixed + per_kib * KiB.
    let pts: Vec<(f64, f64)> = sizes
        .iter()
        .zip(&one)
        .filter(|(s, _)| **s >= 4096)
        .map(|(s, t)| (*s as f64 / 1024.0, *t))
        .collect();
    if pts.len() >= 2 {
        let n = pts.len() as f64;
        let (sx, sy) = pts.iter().fold((0.0, 0.0), |a, p| (a.0 + p.0, a.1 + p.1));
        let (mx, my) = (sx / n, sy / n);
        let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
        let sxy: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
        let per = sxy / sxx;
        println!(
            "one-shot from 4 KiB: {:.1} ns fixed + {per:.2} ns a KiB",
            my - per * mx
        );
    }
}

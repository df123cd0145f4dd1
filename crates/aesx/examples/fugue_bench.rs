//! Fugue throughput per backend, in TSC cycles per byte (TSC_HZ / bytes per second).
//!
//! `cargo run --release -p aesx --example fugue_bench [TSC_HZ] [trials]`
//! Trials are short (about a millisecond), interleaved across backends, and repeated; the
//! best (fastest) trial is reported, which filters out the noise of a shared machine.

use std::hint::black_box;
use std::time::Instant;

use aesx::hash::fugue::{Fugue, FugueAlg, FugueBackend, hash_many};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let tsc_hz: f64 = args.get(1).map_or(2.596e9, |s| s.parse().unwrap());
    let trials: usize = args.get(2).map_or(200, |s| s.parse().unwrap());
    let sizes = [64usize, 1024, 64 << 10, 16 << 20];
    let data: Vec<u8> = (0..16usize << 20).map(|i| (i * 131 + 7) as u8).collect();
    let backends = FugueBackend::available();
    if args.get(3).is_some_and(|a| a == "batch") {
        return batch(tsc_hz, trials, &data);
    }
    println!("cycles/byte at TSC {tsc_hz:.4e} Hz, best of {trials} interleaved trials");
    if args.get(3).is_some_and(|a| a == "stream") {
        return stream(tsc_hz, trials, &data);
    }
    for alg in [FugueAlg::Fugue256, FugueAlg::Fugue512] {
        for &size in &sizes {
            let reps = ((1usize << 18) / size).clamp(1, 20000);
            let trials = if size > 1 << 20 {
                trials / 20 + 3
            } else {
                trials
            };
            let mut best = vec![f64::INFINITY; backends.len()];
            for _ in 0..trials {
                for (bi, &b) in backends.iter().enumerate() {
                    if b == FugueBackend::Soft && size > 1024 {
                        continue;
                    }
                    let reps = if b == FugueBackend::Soft {
                        reps.div_ceil(50)
                    } else {
                        reps
                    };
                    if b == FugueBackend::Soft && best[bi] < f64::INFINITY && size >= 1024 {
                        // soft is only a reference; a few trials are enough.
                        continue;
                    }
                    let t = Instant::now();
                    for _ in 0..reps {
                        let mut h = Fugue::with_backend(alg, b).unwrap();
                        h.update(black_box(&data[..size]));
                        black_box(h.finalize());
                    }
                    let s = t.elapsed().as_secs_f64() / reps as f64;
                    best[bi] = best[bi].min(s);
                }
            }
            let row: Vec<String> = backends
                .iter()
                .zip(&best)
                .filter(|(_, s)| s.is_finite())
                .map(|(b, s)| format!("{b} {:.2}", s * tsc_hz / size as f64))
                .collect();
            println!("{alg} {size:>8} B: {}", row.join("  "));
        }
    }
}

/// Aggregate throughput of `hash_many` on 8 messages vs 8 single-message calls.
fn batch(tsc_hz: f64, trials: usize, data: &[u8]) {
    let best = FugueBackend::detect();
    println!("batch of 8 messages: cycles/byte of the 8 x len bytes, best of {trials}");
    for alg in [FugueAlg::Fugue256, FugueAlg::Fugue512] {
        for len in [32usize, 64, 80, 256, 4096] {
            let msgs: Vec<&[u8]> = (0..8).map(|i| &data[i * len..(i + 1) * len]).collect();
            let mut out = vec![0u8; 8 * alg.output_len()];
            let reps = (1usize << 17) / (8 * len) + 1;
            let (mut tb, mut ts) = (f64::INFINITY, f64::INFINITY);
            for _ in 0..trials {
                let t = Instant::now();
                for _ in 0..reps {
                    hash_many(alg, black_box(&msgs), &mut out).unwrap();
                    black_box(&out);
                }
                tb = tb.min(t.elapsed().as_secs_f64() / reps as f64);
                let t = Instant::now();
                for _ in 0..reps {
                    for m in &msgs {
                        let mut h = Fugue::with_backend(alg, best).unwrap();
                        h.update(black_box(m));
                        black_box(h.finalize());
                    }
                }
                ts = ts.min(t.elapsed().as_secs_f64() / reps as f64);
            }
            let cpb = |s: f64| s * tsc_hz / (8 * len) as f64;
            println!(
                "{alg} 8 x {len:>4} B: hash_many {:.2}  8 x single({best}) {:.2}  speed-up {:.2}x",
                cpb(tb),
                cpb(ts),
                ts / tb
            );
        }
    }
}

/// Steady-state throughput inside one 16 MiB stream: each 1 MiB `update` is timed and the
/// fastest is kept (a whole 16 MiB hash takes tens of milliseconds, long enough to be
/// interrupted on a shared machine; a 1 MiB slice usually is not).
fn stream(tsc_hz: f64, trials: usize, data: &[u8]) {
    println!("16 MiB stream, best 1 MiB update, {trials} streams");
    for alg in [FugueAlg::Fugue256, FugueAlg::Fugue512] {
        let mut row = Vec::new();
        for b in FugueBackend::available() {
            if b == FugueBackend::Soft {
                continue;
            }
            let mut best = f64::INFINITY;
            for _ in 0..trials {
                let mut h = Fugue::with_backend(alg, b).unwrap();
                for c in data.chunks(1 << 20) {
                    let t = Instant::now();
                    h.update(black_box(c));
                    best = best.min(t.elapsed().as_secs_f64());
                }
                black_box(h.finalize());
            }
            row.push(format!("{b} {:.2}", best * tsc_hz / (1 << 20) as f64));
        }
        println!("{alg} 16 MiB stream: {}", row.join("  "));
    }
}

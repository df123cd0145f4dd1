//! `ctr::Ctr128BE<aesx::rustcrypto::Aes128>` against `ctr::Ctr128BE<aes::Aes128>` (and aesx's
//! own CTR for reference), best of many interleaved trials.
//!
//! `cargo bench -p aesx --features cipher --bench rustcrypto_ctr [-- SIZE...]`
//! (sizes in bytes; default 16384). Prints one line per implementation and size, and the ratio.

use std::hint::black_box;
use std::time::{Duration, Instant};

use cipher::{BlockCipherEncrypt, BlockSizeUser, InnerIvInit, KeyInit, StreamCipher, consts::U16};

/// `Ctr128BE` over a cipher value (here a reference, so no key setup is timed).
fn ctr_over<C: BlockCipherEncrypt + BlockSizeUser<BlockSize = U16>>(
    c: C,
    iv: &[u8; 16],
) -> ctr::Ctr128BE<C> {
    ctr::Ctr128BE::from_core(ctr::CtrCore::inner_iv_init(c, &(*iv).into()))
}

const TRIALS: usize = 400;
const TRIAL_TIME: Duration = Duration::from_millis(2);

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .filter_map(|a| a.parse().ok())
        .collect();
    let sizes = if sizes.is_empty() { vec![16384] } else { sizes };
    let key = [0x42u8; 16];
    let iv = [0x24u8; 16];
    let ax = aesx::rustcrypto::Aes128::new(&key.into());
    let native = aesx::Aes::new(&key).unwrap();
    let ar = aes::Aes128::new(&key.into());
    println!(
        "aesx backend {}; {} trials of ~{} ms each, best kept; loadavg {}",
        ax.backend(),
        TRIALS,
        TRIAL_TIME.as_millis(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for size in sizes {
        let mut buf = vec![0u8; size];
        // Calibrate iterations per trial on the slowest candidate (the reference).
        let mut iters = 1usize;
        loop {
            let t = Instant::now();
            for _ in 0..iters {
                let mut c = ctr_over(&ar, &iv);
                c.apply_keystream(black_box(&mut buf));
            }
            if t.elapsed() >= TRIAL_TIME / 4 {
                iters = (iters * 4).max(1);
                break;
            }
            iters *= 2;
        }
        let mut blocks = vec![cipher::Block::<aes::Aes128>::default(); size / 16];
        let src = blocks.clone();
        let mut best = [f64::MAX; 7];
        for _ in 0..TRIALS {
            // Each candidate starts a new message per iteration, as a protocol would.
            let t = Instant::now();
            for _ in 0..iters {
                let mut c = ctr_over(&ax, &iv);
                c.apply_keystream(black_box(&mut buf));
            }
            best[0] = best[0].min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for _ in 0..iters {
                let mut c = ctr_over(&ar, &iv);
                c.apply_keystream(black_box(&mut buf));
            }
            best[1] = best[1].min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for _ in 0..iters {
                native.ctr_xor_at(&iv, 0, black_box(&mut buf));
            }
            best[2] = best[2].min(t.elapsed().as_secs_f64());
            // The block-cipher traits alone (what cbc decryption and other batching modes use).
            let t = Instant::now();
            for _ in 0..iters {
                ax.encrypt_blocks(black_box(&mut blocks));
            }
            best[3] = best[3].min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for _ in 0..iters {
                ar.encrypt_blocks(black_box(&mut blocks));
            }
            best[4] = best[4].min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for _ in 0..iters {
                ax.encrypt_blocks_b2b(black_box(&src), &mut blocks).unwrap();
            }
            best[5] = best[5].min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            for _ in 0..iters {
                ar.encrypt_blocks_b2b(black_box(&src), &mut blocks).unwrap();
            }
            best[6] = best[6].min(t.elapsed().as_secs_f64());
        }
        let gbs = |s: f64| (size * iters) as f64 / s / 1e9;
        println!(
            "{size:>8} B  Ctr128BE<aesx::rustcrypto::Aes128> {:6.2} GB/s",
            gbs(best[0])
        );
        println!(
            "{size:>8} B  Ctr128BE<aes::Aes128>              {:6.2} GB/s",
            gbs(best[1])
        );
        println!(
            "{size:>8} B  aesx Aes::ctr_xor_at (native)      {:6.2} GB/s",
            gbs(best[2])
        );
        println!(
            "{size:>8} B  ratio aesx-traits / aes = {:.2}x",
            best[1] / best[0]
        );
        if size >= 16 && size.is_multiple_of(16) {
            println!(
                "{size:>8} B  encrypt_blocks in place: aesx {:6.2} GB/s, aes {:6.2} GB/s ({:.2}x)",
                gbs(best[3]),
                gbs(best[4]),
                best[4] / best[3]
            );
            println!(
                "{size:>8} B  encrypt_blocks_b2b:      aesx {:6.2} GB/s, aes {:6.2} GB/s ({:.2}x)",
                gbs(best[5]),
                gbs(best[6]),
                best[6] / best[5]
            );
        }
    }
}

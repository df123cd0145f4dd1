//! `aesx-bench`: aesx measured the way a user's crate calls it, with RustCrypto in the same run.
//!
//! This package depends on `aesx` by path like any user would, so nothing inlines across the
//! crate boundary that would not inline in a user's build. Build it with the `xbench` profile
//! (release + fat LTO + one codegen unit, what a performance-minded user ships):
//!
//! ```text
//! cargo run --profile xbench -p aesx-bench -- keysetup
//! cargo run --profile xbench -p aesx-bench -- small
//! cargo run --profile xbench -p aesx-bench -- bulk --size 16K --backends aesni,vaes256
//! ```
//!
//! Method: every implementation runs a trial of `--calls` calls (or about 1 ms of bulk work),
//! implementations alternate trial by trial, and the best of `--trials` trials is kept (the
//! least disturbed by other processes). Ratios are computed from the same run.
//!
//! - `keysetup`: `Aes::new(&key)` + drop (the fastest backend, detected as `Aes::new` does)
//!   against RustCrypto `Aes128::new` / `Aes256::new` + drop (both expand the encryption and
//!   decryption schedules); ns per key. Also, as a diagnostic, `Aes::new` without the drop
//!   (`mem::forget`: the schedule is not wiped), which shows what the wipe costs. Each
//!   implementation's loop of calls runs inside its closure (the call inlined into the loop,
//!   as in a user's function that sets up keys one after another), not one `dyn` call per key.
//! - `small`: one fresh CTR message per call: `Ctr::new(&aes, &iv).apply_keystream(msg)` on a
//!   borrowed, pre-expanded key, against RustCrypto `Ctr128BE<&Aes128>` over a borrowed key;
//!   16, 32, 48 and 64 bytes, on every available backend; ns per message (the loop of calls
//!   inside each closure, as for `keysetup`).
//! - `bulk`: CTR, ECB encrypt/decrypt and CBC decrypt of one in-place message per call (CTR and
//!   CBC from a fresh IV each call), every backend given and RustCrypto; GB/s (10^9 B/s).

use std::hint::black_box;
use std::time::Instant;

use aes::cipher::array::Array;
use aes::cipher::{
    BlockCipherDecrypt, BlockCipherEncrypt, InnerIvInit, KeyInit, StreamCipher, consts::U16,
};
use aesx::{Aes, Backend, Ctr};

const KEY: [u8; 32] = [
    0x60, 0x3d, 0xeb, 0x10, 0x15, 0xca, 0x71, 0xbe, 0x2b, 0x73, 0xae, 0xf0, 0x85, 0x7d, 0x77, 0x81,
    0x1f, 0x35, 0x2c, 0x07, 0x3b, 0x61, 0x08, 0xd7, 0x2d, 0x98, 0x10, 0xa3, 0x09, 0x14, 0xdf, 0xf4,
];
const IV: [u8; 16] = [
    0xf0, 0xf1, 0xf2, 0xf3, 0xf4, 0xf5, 0xf6, 0xf7, 0xf8, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff,
];

struct Opts {
    cmd: String,
    trials: usize,
    calls: usize,
    size: usize,
    keys: Vec<u32>,
    backends: Vec<Backend>,
    ops: Vec<String>,
}

fn parse_size(s: &str) -> usize {
    let s = s.trim();
    let (n, m) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1024),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1024 * 1024),
        _ => (s, 1),
    };
    n.parse::<usize>()
        .expect("size: a number with optional K or M")
        * m
}

fn parse() -> Opts {
    let mut a = std::env::args().skip(1);
    let mut o = Opts {
        cmd: a.next().unwrap_or_else(|| "help".into()),
        trials: 25,
        calls: 100_000,
        size: 16 * 1024,
        keys: vec![128, 256],
        backends: Backend::available(),
        ops: ["ctr", "ecb-enc", "ecb-dec", "cbc-dec"]
            .map(String::from)
            .to_vec(),
    };
    while let Some(flag) = a.next() {
        let v = a.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--trials" => o.trials = v.parse().expect("--trials N"),
            "--calls" => o.calls = v.parse().expect("--calls N"),
            "--size" => o.size = parse_size(&v),
            "--keys" => o.keys = v.split(',').map(|k| k.parse().expect("--keys")).collect(),
            "--backends" => {
                o.backends = v
                    .split(',')
                    .map(|b| b.parse().expect("--backends: unknown backend"))
                    .filter(|b: &Backend| b.is_available())
                    .collect()
            }
            "--ops" => o.ops = v.split(',').map(String::from).collect(),
            _ => panic!("unknown flag {flag}"),
        }
    }
    o
}

/// Runs every closure `trials` times, alternating, each trial `calls` calls; returns the best
/// ns per call of each. One indirect call per call: for the `bulk` calls (microseconds each),
/// where that costs nothing measurable; the nanosecond calls use [`race_loops`].
fn race(trials: usize, calls: usize, fs: &mut [&mut dyn FnMut()]) -> Vec<f64> {
    let mut loops: Vec<Box<dyn FnMut(usize) + '_>> = fs
        .iter_mut()
        .map(|f| {
            Box::new(move |n: usize| {
                for _ in 0..n {
                    f();
                }
            }) as Box<dyn FnMut(usize) + '_>
        })
        .collect();
    let mut refs: Vec<&mut dyn FnMut(usize)> = loops
        .iter_mut()
        .map(|f| &mut **f as &mut dyn FnMut(usize))
        .collect();
    race_loops(trials, calls, &mut refs)
}

/// Runs every closure `trials` times (plus a warm-up trial), alternating; `f(calls)` runs
/// `calls` calls with the loop inside the closure, so the call under test is inlined into its
/// loop as in a user's code, with no indirect call per call (which costs every implementation
/// the same few nanoseconds and so compresses ratios). Returns the best ns per call of each.
fn race_loops(trials: usize, calls: usize, fs: &mut [&mut dyn FnMut(usize)]) -> Vec<f64> {
    let mut best = vec![f64::INFINITY; fs.len()];
    for t in 0..trials + 1 {
        for (i, f) in fs.iter_mut().enumerate() {
            let start = Instant::now();
            f(calls);
            let ns = start.elapsed().as_nanos() as f64 / calls as f64;
            // Trial 0 warms caches, branch predictors and the CPU clock.
            if t > 0 && ns < best[i] {
                best[i] = ns;
            }
        }
    }
    best
}

fn keysetup(o: &Opts) {
    println!(
        "keysetup, ns per key (best of {} trials of {} calls), backend {}; load {}",
        o.trials,
        o.calls,
        Backend::detect(),
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for &bits in &o.keys {
        let key = &KEY[..bits as usize / 8];
        let mut aesx = |n: usize| {
            for _ in 0..n {
                let a = Aes::new(black_box(key)).expect("valid key");
                black_box(&a);
            }
        };
        // Diagnostic only: the same without the drop (no wipe of the schedule), to show what
        // the wipe costs. Never do this with a real key.
        let mut aesx_nodrop = |n: usize| {
            for _ in 0..n {
                let a = Aes::new(black_box(key)).expect("valid key");
                black_box(&a);
                std::mem::forget(a);
            }
        };
        let res = match bits {
            128 => race_loops(
                o.trials,
                o.calls,
                &mut [&mut aesx, &mut aesx_nodrop, &mut |n: usize| {
                    for _ in 0..n {
                        let c = aes::Aes128::new_from_slice(black_box(key)).unwrap();
                        black_box(&c);
                    }
                }],
            ),
            192 => race_loops(
                o.trials,
                o.calls,
                &mut [&mut aesx, &mut aesx_nodrop, &mut |n: usize| {
                    for _ in 0..n {
                        let c = aes::Aes192::new_from_slice(black_box(key)).unwrap();
                        black_box(&c);
                    }
                }],
            ),
            _ => race_loops(
                o.trials,
                o.calls,
                &mut [&mut aesx, &mut aesx_nodrop, &mut |n: usize| {
                    for _ in 0..n {
                        let c = aes::Aes256::new_from_slice(black_box(key)).unwrap();
                        black_box(&c);
                    }
                }],
            ),
        };
        println!(
            "AES-{bits}: aesx Aes::new {:.1} ns, RustCrypto Aes{bits}::new {:.1} ns, speedup {:.2}x (aesx without drop/wipe, diagnostic: {:.1} ns)",
            res[0],
            res[2],
            res[2] / res[0],
            res[1]
        );
    }
}

/// One fresh RustCrypto CTR message over a borrowed key.
fn rc_ctr<C>(c: &C, iv: &[u8; 16], buf: &mut [u8])
where
    C: BlockCipherEncrypt<BlockSize = U16>,
{
    let core = ctr::CtrCore::<&C, ctr::flavors::Ctr128BE>::inner_iv_init(c, &Array::from(*iv));
    ctr::Ctr128BE::<&C>::from_core(core).apply_keystream(buf);
}

fn small(o: &Opts) {
    println!(
        "small CTR messages, ns per message (Ctr::new + apply_keystream on a borrowed key; best of {} trials of {} calls); load {}",
        o.trials,
        o.calls,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for &bits in &o.keys {
        let key = &KEY[..bits as usize / 8];
        for len in [16usize, 32, 48, 64] {
            let mut line = format!("AES-{bits} {len:>2} B:");
            let aes: Vec<Aes> = o
                .backends
                .iter()
                .map(|&b| Aes::with_backend(key, b).unwrap())
                .collect();
            let rc128 = aes::Aes128::new_from_slice(&KEY[..16]).unwrap();
            let rc192 = aes::Aes192::new_from_slice(&KEY[..24]).unwrap();
            let rc256 = aes::Aes256::new_from_slice(&KEY).unwrap();
            // Each closure owns its message and IV; a new IV per message (a fresh nonce).
            // Each loop of calls runs inside its closure (see `race_loops`).
            let mut fs: Vec<Box<dyn FnMut(usize) + '_>> = Vec::new();
            for a in &aes {
                let (mut buf, mut iv) = ([0u8; 64], IV);
                fs.push(Box::new(move |n| {
                    for _ in 0..n {
                        iv[15] = iv[15].wrapping_add(1);
                        Ctr::new(black_box(a), black_box(&iv)).apply_keystream(&mut buf[..len]);
                        black_box(&buf);
                    }
                }));
            }
            let (r128, r192, r256) = (&rc128, &rc192, &rc256);
            let (mut buf, mut iv) = ([0u8; 64], IV);
            fs.push(Box::new(move |n| {
                for _ in 0..n {
                    iv[15] = iv[15].wrapping_add(1);
                    match bits {
                        128 => rc_ctr(black_box(r128), &iv, &mut buf[..len]),
                        192 => rc_ctr(black_box(r192), &iv, &mut buf[..len]),
                        _ => rc_ctr(black_box(r256), &iv, &mut buf[..len]),
                    }
                    black_box(&buf);
                }
            }));
            let mut refs: Vec<&mut dyn FnMut(usize)> = fs
                .iter_mut()
                .map(|f| &mut **f as &mut dyn FnMut(usize))
                .collect();
            let res = race_loops(o.trials, o.calls, &mut refs);
            let rc = res[res.len() - 1];
            for (b, ns) in o.backends.iter().zip(&res) {
                line += &format!("  {b} {ns:.1} ({:.2}x)", rc / ns);
            }
            line += &format!("  rustcrypto {rc:.1}");
            println!("{line}");
        }
    }
}

fn bulk(o: &Opts) {
    let size = o.size;
    assert!(size.is_multiple_of(16), "--size must be whole blocks");
    // About 1 ms of work per trial at ~10 GB/s.
    let calls = (10_000_000 / size).max(1);
    println!(
        "bulk, GB/s at {size} B (best of {} trials of {calls} calls; load {})",
        o.trials,
        std::fs::read_to_string("/proc/loadavg")
            .unwrap_or_default()
            .trim()
    );
    for op in &o.ops {
        for &bits in &o.keys {
            let key = &KEY[..bits as usize / 8];
            let r128 = aes::Aes128::new_from_slice(&KEY[..16]).unwrap();
            let r192 = aes::Aes192::new_from_slice(&KEY[..24]).unwrap();
            let r256 = aes::Aes256::new_from_slice(&KEY).unwrap();
            let mut bufs: Vec<Vec<u8>> = (0..=o.backends.len()).map(|_| vec![0x5a; size]).collect();
            let aes: Vec<Aes> = o
                .backends
                .iter()
                .map(|&b| Aes::with_backend(key, b).unwrap())
                .collect();
            let mut fs: Vec<Box<dyn FnMut() + '_>> = Vec::new();
            let (rc_bufs, x_bufs) = bufs.split_last_mut().unwrap();
            for (a, buf) in aes.iter().zip(x_bufs.iter_mut()) {
                let op = op.clone();
                fs.push(Box::new(move || match op.as_str() {
                    "ctr" => Ctr::new(a, &IV).apply_keystream(buf),
                    "ecb-enc" => a.encrypt_blocks(buf),
                    "ecb-dec" => a.decrypt_blocks(buf),
                    "cbc-dec" => a.cbc_decrypt(&IV, buf).unwrap(),
                    "cbc-enc" => a.cbc_encrypt(&IV, buf).unwrap(),
                    _ => panic!("unknown op {op}"),
                }));
            }
            fn rc<C>(c: &C, op: &str, buf: &mut [u8])
            where
                C: BlockCipherEncrypt<BlockSize = U16> + BlockCipherDecrypt<BlockSize = U16>,
            {
                match op {
                    "ctr" => rc_ctr(c, &IV, buf),
                    "ecb-enc" => c.encrypt_blocks(Array::slice_as_chunks_mut(buf).0),
                    "ecb-dec" => c.decrypt_blocks(Array::slice_as_chunks_mut(buf).0),
                    _ => {
                        // cbc: not a RustCrypto dependency here; ECB of the same size stands in.
                        c.decrypt_blocks(Array::slice_as_chunks_mut(buf).0)
                    }
                }
            }
            {
                let op = op.clone();
                let (r128, r192, r256) = (&r128, &r192, &r256);
                fs.push(Box::new(move || match bits {
                    128 => rc(r128, &op, rc_bufs),
                    192 => rc(r192, &op, rc_bufs),
                    _ => rc(r256, &op, rc_bufs),
                }));
            }
            let mut refs: Vec<&mut dyn FnMut()> = fs
                .iter_mut()
                .map(|f| &mut **f as &mut dyn FnMut())
                .collect();
            let res = race(o.trials, calls, &mut refs);
            let mut line = format!("{op:>8} AES-{bits}:");
            for (name, ns) in o
                .backends
                .iter()
                .map(|b| b.name())
                .chain(["rustcrypto"])
                .zip(&res)
            {
                line += &format!("  {name} {:.2}", size as f64 / ns);
            }
            println!("{line}");
        }
    }
}

fn main() {
    let o = parse();
    match o.cmd.as_str() {
        "keysetup" => keysetup(&o),
        "small" => small(&o),
        "bulk" => bulk(&o),
        _ => {
            eprintln!(
                "usage: aesx-bench keysetup|small|bulk [--trials N] [--calls N] [--size 16K] [--keys 128,256] [--backends LIST] [--ops ctr,ecb-enc,ecb-dec,cbc-dec]"
            );
            std::process::exit(2);
        }
    }
}

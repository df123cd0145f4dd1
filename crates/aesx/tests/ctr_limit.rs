//! The end of a CTR stream. Byte positions are `u64`, so a stream holds positions
//! `0..=u64::MAX - 1` and a call must end at or before `u64::MAX`. Before this was checked, a
//! call crossing 2^64 wrapped the position and reused the keystream of position 0 onwards
//! (issue 14, finding 1). Every entry point is tried at 2^64 - 1, - 16 and - 17 on every
//! backend: in range it must give exactly the keystream an independent implementation
//! (RustCrypto `aes`, block by block) gives; past the end it must refuse (or panic, for the
//! documented panicking twins) with the buffer and the stream position untouched.

mod common;

use std::panic::{AssertUnwindSafe, catch_unwind};

use aesx::{Aes, Ctr, ErrorKind};
use common::{assert_bytes_eq, backends, ctr_add, rc_ecb_encrypt};
use proptest::prelude::*;

const KEY: [u8; 16] = *b"stream end test!";
/// Low bits all ones, so the 128-bit counter also carries somewhere in the ranges tested.
const IV: [u8; 16] = [
    0x0f, 0xee, 0xdd, 0xcc, 0xbb, 0xaa, 0x99, 0x88, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xf0,
];
const END: u64 = u64::MAX;

/// The keystream bytes at positions `pos..pos + len`, from RustCrypto AES on counter blocks.
fn reference(key: &[u8], iv: &[u8; 16], pos: u64, len: usize) -> Vec<u8> {
    (0..len as u64)
        .map(|i| {
            let p = pos + i;
            let mut block = ctr_add(iv, (p / 16) as u128);
            rc_ecb_encrypt(key, &mut block);
            block[(p % 16) as usize]
        })
        .collect()
}

fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i * 37 + 11) as u8).collect()
}

/// XORs `data` with the reference keystream.
fn expected(pos: u64, data: &[u8]) -> Vec<u8> {
    let ks = reference(&KEY, &IV, pos, data.len());
    data.iter().zip(ks).map(|(d, k)| d ^ k).collect()
}

/// (position, length, fits): lengths around the end of the stream.
fn cases() -> Vec<(u64, usize, bool)> {
    vec![
        (END - 1, 0, true),
        (END - 1, 1, true),
        (END - 1, 2, false),
        (END, 0, true),
        (END, 1, false),
        (END - 16, 15, true),
        (END - 16, 16, true),
        (END - 16, 17, false),
        (END - 16, 32, false),
        (END - 17, 16, true),
        (END - 17, 17, true),
        (END - 17, 18, false),
        (END - 1000, 2000, false),
        (0, 100, true),
    ]
}

#[test]
fn ctr_xor_at_refuses_to_pass_the_end() {
    for b in backends() {
        let aes = Aes::with_backend(&KEY, b).unwrap();
        for (pos, len, fits) in cases() {
            let src = pattern(len);
            let mut buf = src.clone();
            let r = aes.try_ctr_xor_at(&IV, pos, &mut buf);
            if fits {
                r.unwrap_or_else(|e| panic!("{b} pos={pos} len={len}: {e}"));
                assert_bytes_eq(&buf, &expected(pos, &src), format_args!("{b} {pos}+{len}"));
            } else {
                assert_eq!(
                    r.unwrap_err().kind(),
                    ErrorKind::LengthLimit,
                    "{b} {pos}+{len}"
                );
                assert_eq!(buf, src, "{b} {pos}+{len}: buffer touched on error");
                // The panicking twin panics, also leaving the buffer alone.
                let mut buf2 = src.clone();
                let p = catch_unwind(AssertUnwindSafe(|| aes.ctr_xor_at(&IV, pos, &mut buf2)));
                assert!(p.is_err(), "{b} {pos}+{len}: ctr_xor_at did not panic");
                assert_eq!(buf2, src);
            }
        }
    }
}

#[test]
fn streaming_ctr_refuses_to_pass_the_end() {
    for b in backends() {
        let aes = Aes::with_backend(&KEY, b).unwrap();
        for (pos, len, fits) in cases() {
            let src = pattern(len);
            let mut buf = src.clone();
            let mut c = Ctr::new(&aes, &IV);
            c.seek(pos);
            let r = c.try_apply_keystream(&mut buf);
            if fits {
                r.unwrap_or_else(|e| panic!("{b} pos={pos} len={len}: {e}"));
                assert_eq!(c.position(), pos + len as u64);
                assert_bytes_eq(&buf, &expected(pos, &src), format_args!("{b} {pos}+{len}"));
            } else {
                assert_eq!(
                    r.unwrap_err().kind(),
                    ErrorKind::LengthLimit,
                    "{b} {pos}+{len}"
                );
                assert_eq!(buf, src, "{b} {pos}+{len}: buffer touched on error");
                assert_eq!(c.position(), pos, "{b}: position moved on error");
                let mut buf2 = src.clone();
                let p = catch_unwind(AssertUnwindSafe(|| c.apply_keystream(&mut buf2)));
                assert!(p.is_err(), "{b} {pos}+{len}: apply_keystream did not panic");
                assert_eq!(buf2, src);
                assert_eq!(c.position(), pos);
                // Buffer-to-buffer: an error, and the output buffer untouched.
                let mut out = vec![0x5a; len];
                let e = c.apply_keystream_b2b(&src, &mut out).unwrap_err();
                assert_eq!(e.kind(), ErrorKind::LengthLimit);
                assert!(out.iter().all(|&x| x == 0x5a), "{b}: b2b output touched");
            }
        }
    }
}

/// The exact scenario of the finding: seek to 2^64 - 16, ask for 32 bytes. Before the fix the
/// position wrapped to 16 and the next 16 bytes reused the keystream of position 16.
#[test]
fn the_reported_wrap_is_refused() {
    for b in backends() {
        let aes = Aes::with_backend(&KEY, b).unwrap();
        let mut c = Ctr::new(&aes, &IV);
        c.seek(END - 16);
        let mut buf = [0u8; 32];
        assert_eq!(
            c.try_apply_keystream(&mut buf).unwrap_err().kind(),
            ErrorKind::LengthLimit
        );
        assert_eq!(c.position(), END - 16);
        // The last 16 bytes still work, in any split, and the stream then stops for good.
        let mut last = [0u8; 16];
        c.try_apply_keystream(&mut last[..15]).unwrap();
        assert_eq!(c.position(), END - 1);
        c.try_apply_keystream(&mut last[15..]).unwrap();
        assert_eq!(last.to_vec(), reference(&KEY, &IV, END - 16, 16));
        assert_eq!(c.position(), END);
        assert!(c.try_apply_keystream(&mut [0u8; 1]).is_err());
        c.try_apply_keystream(&mut []).unwrap();
    }
}

#[cfg(feature = "rayon")]
mod threads {
    use super::*;

    const MIB: usize = 1 << 20;

    /// The finding's multi-threaded case: 4 MiB at 2^64 - 1 MiB on 2 threads used to differ
    /// from the single-threaded result from byte 1 MiB on, with the keystream of position 0.
    #[test]
    fn parallel_entry_points_refuse_to_pass_the_end() {
        for b in backends() {
            if b == aesx::Backend::Soft {
                continue; // 4 MiB at a time is slow in soft; the limit check is generic code.
            }
            let aes = Aes::with_backend(&KEY, b).unwrap();
            let src = pattern(4 * MIB);
            for threads in [2, 3] {
                for (pos, fits) in [
                    (END - MIB as u64, false),
                    (END - 4 * MIB as u64 + 1, false),
                    (END - 4 * MIB as u64, true),
                    (END - 4 * MIB as u64 - 17, true),
                ] {
                    let mut got = src.clone();
                    let r = aes.try_ctr_xor_at_threads(&IV, pos, &mut got, threads);
                    let mut c = Ctr::new(&aes, &IV);
                    c.seek(pos);
                    let mut got2 = src.clone();
                    let r2 = c.try_apply_keystream_threads(&mut got2, threads);
                    if fits {
                        r.unwrap();
                        r2.unwrap();
                        let mut one = src.clone();
                        aes.try_ctr_xor_at(&IV, pos, &mut one).unwrap();
                        assert!(got == one, "{b} threads={threads} pos={pos}: differs");
                        assert!(
                            got2 == one,
                            "{b} threads={threads} pos={pos}: stream differs"
                        );
                        assert_eq!(c.position(), pos + src.len() as u64);
                        // Spot-check the independent reference at both ends.
                        let n = src.len();
                        assert_eq!(got[..40], expected(pos, &src[..40])[..]);
                        assert_eq!(
                            got[n - 40..],
                            expected(pos + (n - 40) as u64, &src[n - 40..])[..]
                        );
                    } else {
                        assert_eq!(r.unwrap_err().kind(), ErrorKind::LengthLimit);
                        assert_eq!(r2.unwrap_err().kind(), ErrorKind::LengthLimit);
                        assert!(got == src && got2 == src, "{b}: buffer touched on error");
                        assert_eq!(c.position(), pos);
                        let p = catch_unwind(AssertUnwindSafe(|| {
                            aes.ctr_xor_at_threads(&IV, pos, &mut got, threads)
                        }));
                        assert!(p.is_err() && got == src);
                        let p = catch_unwind(AssertUnwindSafe(|| {
                            aes.ctr_xor_at_par(&IV, pos, &mut got)
                        }));
                        assert!(p.is_err() && got == src);
                        let p = catch_unwind(AssertUnwindSafe(|| c.apply_keystream_par(&mut got)));
                        assert!(p.is_err() && got == src);
                    }
                }
            }
        }
    }
}

/// One random operation on a stream: seek somewhere (often near the end), then process `len`.
#[derive(Debug, Clone)]
struct Op {
    from_end: bool,
    at: u64,
    len: usize,
    stateless: bool,
}

fn op() -> impl Strategy<Value = Op> {
    (any::<bool>(), any::<u64>(), 0usize..80, any::<bool>()).prop_map(
        |(from_end, at, len, stateless)| Op {
            from_end,
            at: if from_end { at % 200 } else { at },
            len,
            stateless,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Under one key and IV, every keystream block any call hands out is the one for its
    /// position, and no keystream block is ever handed out for two different block positions.
    #[test]
    fn no_keystream_block_is_used_at_two_positions(ops in prop::collection::vec(op(), 1..24)) {
        for b in backends() {
            let aes = Aes::with_backend(&KEY, b).unwrap();
            let mut c = Ctr::new(&aes, &IV);
            // keystream block -> block position where it was seen
            let mut seen: std::collections::HashMap<[u8; 16], u64> = Default::default();
            for o in &ops {
                let pos = if o.from_end { END - o.at } else { o.at };
                let mut buf = vec![0u8; o.len];
                let r = if o.stateless {
                    aes.try_ctr_xor_at(&IV, pos, &mut buf)
                } else {
                    c.seek(pos);
                    c.try_apply_keystream(&mut buf)
                };
                let fits = pos.checked_add(o.len as u64).is_some();
                prop_assert_eq!(r.is_ok(), fits, "{} {:?}", b, o);
                if !fits {
                    prop_assert!(buf.iter().all(|&x| x == 0));
                    continue;
                }
                prop_assert_eq!(&buf, &reference(&KEY, &IV, pos, o.len), "{} {:?}", b, o);
                // Whole blocks inside this output: record them by block position.
                let first = pos.div_ceil(16);
                let mut blk = first;
                while blk.checked_mul(16).and_then(|s| s.checked_add(16)).is_some_and(|e| e <= pos + o.len as u64) {
                    let s = (blk * 16 - pos) as usize;
                    let ks: [u8; 16] = buf[s..s + 16].try_into().unwrap();
                    if let Some(&other) = seen.get(&ks) {
                        prop_assert_eq!(other, blk, "{}: same keystream block at two positions", b);
                    }
                    seen.insert(ks, blk);
                    blk += 1;
                }
            }
        }
    }
}

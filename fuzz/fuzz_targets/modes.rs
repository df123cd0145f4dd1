//! ECB, CBC and CTR on every backend this CPU runs, against `soft` as the oracle: arbitrary
//! keys and lengths, streaming in arbitrary pieces, counters a few blocks below the 2^32,
//! 2^64 and 2^128 carries, and CTR positions anywhere up to the 2^64 - 1 byte limit. Most
//! messages are up to 2 KiB; one in four up to 24 KiB, streamed in pieces of up to 8 KiB, so
//! that the long-call kernels run too (on `vaes512` on AMD, CTR calls from 6 KiB take the
//! first-round-table loop, 256-block windows of 4 KiB, and the short tails after it).
#![no_main]

use aesx::{Aes, CbcDecryptor, CbcEncryptor, Ctr, ErrorKind};
use aesx_fuzz::{
    Result, Unstructured, backends, counter_near_carry, key, pieces_up_to, position, soft,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});

/// Every backend but `soft`, the oracle.
fn others() -> impl Iterator<Item = &'static aesx::Backend> {
    backends().iter().filter(|&&b| b != aesx::Backend::Soft)
}

fn message(u: &mut Unstructured<'_>, len: usize) -> Vec<u8> {
    let take = len.min(u.len());
    let mut m = u.bytes(take).unwrap_or(&[]).to_vec();
    m.extend((m.len()..len).map(|i| (i as u8).wrapping_mul(31)));
    m
}

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let key = key(&mut u)?;
    let iv = counter_near_carry(&mut u)?;
    let op = u.int_in_range(0..=4u8)?;
    let long = u.ratio(1, 4)?;
    let len = u.int_in_range(0..=if long { 24576usize } else { 2048 })?;
    let cuts = pieces_up_to(&mut u, len, if long { 8192 } else { 100 })?;
    let pos = position(&mut u)?;
    let msg = message(&mut u, len);
    let oracle = soft(&key);
    let blocks = &msg[..len / 16 * 16];
    match op {
        // ECB: every backend matches soft, and decrypts back.
        0 | 1 => {
            let mut want = blocks.to_vec();
            if op == 0 {
                oracle.encrypt_blocks(&mut want);
            } else {
                oracle.decrypt_blocks(&mut want);
            }
            for &b in others() {
                let aes = Aes::with_backend(&key, b).unwrap();
                let mut got = blocks.to_vec();
                if op == 0 {
                    aes.encrypt_blocks(&mut got);
                    assert_eq!(got, want, "ecb encrypt {b}");
                    aes.decrypt_blocks(&mut got);
                } else {
                    aes.decrypt_blocks(&mut got);
                    assert_eq!(got, want, "ecb decrypt {b}");
                    aes.encrypt_blocks(&mut got);
                }
                assert_eq!(got, blocks, "ecb round trip {b}");
                // Not whole blocks: refused, nothing written.
                if len % 16 != 0 {
                    let mut odd = msg.clone();
                    assert!(aes.try_encrypt_blocks(&mut odd).is_err());
                    assert!(aes.try_decrypt_blocks(&mut odd).is_err());
                    assert_eq!(odd, msg);
                }
            }
        }
        // CBC, streamed in whole-block pieces, against soft in one call.
        2 | 3 => {
            let mut want = blocks.to_vec();
            if op == 2 {
                oracle.cbc_encrypt(&iv, &mut want).unwrap();
            } else {
                oracle.cbc_decrypt(&iv, &mut want).unwrap();
            }
            for &b in others() {
                let aes = Aes::with_backend(&key, b).unwrap();
                let mut got = blocks.to_vec();
                let mut rest = &mut got[..];
                let mut enc = CbcEncryptor::new(&aes, &iv);
                let mut dec = CbcDecryptor::new(&aes, &iv);
                for &c in &cuts {
                    let n = (c / 16 * 16).min(rest.len());
                    let (head, tail) = rest.split_at_mut(n);
                    if op == 2 {
                        enc.encrypt_blocks(head).unwrap();
                    } else {
                        dec.decrypt_blocks(head).unwrap();
                    }
                    rest = tail;
                }
                if op == 2 {
                    enc.encrypt_blocks(rest).unwrap();
                } else {
                    dec.decrypt_blocks(rest).unwrap();
                }
                assert_eq!(got, want, "cbc {op} {b}");
            }
        }
        // CTR: seekable one-shot, streaming (seek, then arbitrary pieces) and the threaded
        // call on every backend against soft. A stream ends at byte 2^64 - 1: a call that
        // would pass it must fail with LengthLimit, leaving the data and position alone.
        _ => {
            let fits = pos.checked_add(len as u64).is_some();
            let mut want = msg.clone();
            let r = oracle.try_ctr_xor_at(&iv, pos, &mut want);
            assert_eq!(r.is_ok(), fits, "soft try_ctr_xor_at pos {pos} len {len}");
            if let Err(e) = r {
                assert_eq!(e.kind(), ErrorKind::LengthLimit);
                assert_eq!(want, msg, "refused call wrote");
            }
            for &b in others() {
                let aes = Aes::with_backend(&key, b).unwrap();
                let mut got = msg.clone();
                assert_eq!(aes.try_ctr_xor_at(&iv, pos, &mut got).is_ok(), fits);
                assert_eq!(got, want, "try_ctr_xor_at {b} pos {pos}");
                let mut got = msg.clone();
                assert_eq!(
                    aes.try_ctr_xor_at_threads(&iv, pos, &mut got, 3).is_ok(),
                    fits
                );
                assert_eq!(got, want, "try_ctr_xor_at_threads {b}");
                // Streaming: every piece either fits (and advances) or is refused (and
                // changes nothing); the bytes that fit match the one-shot keystream.
                let mut got = msg.clone();
                let mut ctr = Ctr::new(&aes, &iv);
                ctr.seek(pos);
                let mut at = 0usize;
                let mut refused = false;
                for &c in cuts
                    .iter()
                    .chain(std::iter::once(&(len - cuts.iter().sum::<usize>())))
                {
                    let piece = &mut got[at..at + c];
                    let before = piece.to_vec();
                    let p0 = ctr.position();
                    match ctr.try_apply_keystream(piece) {
                        Ok(()) => assert_eq!(ctr.position(), p0 + c as u64),
                        Err(e) => {
                            assert_eq!(e.kind(), ErrorKind::LengthLimit);
                            assert!(p0.checked_add(c as u64).is_none());
                            assert_eq!(ctr.position(), p0);
                            assert_eq!(piece, &before[..]);
                            refused = true;
                            break;
                        }
                    }
                    at += c;
                }
                assert_eq!(refused, !fits, "{b} pos {pos} len {len} cuts {cuts:?}");
                if fits {
                    assert_eq!(ctr.position(), pos + len as u64, "{b}");
                    assert_eq!(got, want, "ctr stream {b} pos {pos} cuts {cuts:?}");
                } else {
                    // What was processed before the refusal is the keystream at those
                    // positions (compare against soft over the same prefix).
                    let mut w = msg[..at].to_vec();
                    oracle.try_ctr_xor_at(&iv, pos, &mut w).unwrap();
                    assert_eq!(&got[..at], &w[..], "{b} prefix before the end");
                }
            }
        }
    }
    Ok(())
}

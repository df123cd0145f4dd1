//! TLS CBC record padding and MAC removal, which OpenSSL 3 asks the cipher provider to do.
//!
//! With a provider cipher, libssl sets `tls-version` and `tls-mac-size` on the CBC context and
//! hands each whole record to one update call; on decryption the provider must strip the
//! explicit IV (TLS 1.1+), check and remove the padding and cut out the MAC, all in constant
//! time with respect to the decrypted bytes (Lucky Thirteen, CVE-2013-0169), and return the
//! MAC through the `tls-mac` parameter. With a bad padding the MAC handed back is random, so
//! libssl's MAC check fails exactly as it does for a bad MAC, with no timing difference. This
//! is the algorithm OpenSSL's `ssl/record/tls_pad.c` describes (same observable results); the
//! MAC extraction here uses the fully masked rotation (no secret-indexed load at all).
//!
//! Nothing here branches on or indexes by decrypted data: record lengths, the MAC size and the
//! TLS version are public; the padding length byte and the padding/MAC bytes are secret.

use crate::ffi::*;

/// The largest MAC libssl asks for (`EVP_MAX_MD_SIZE`).
pub const MAX_MAC: usize = 64;

#[inline(always)]
fn msb(x: usize) -> usize {
    0usize.wrapping_sub(x >> (usize::BITS - 1))
}
/// All ones if a < b, else 0.
#[inline(always)]
fn lt(a: usize, b: usize) -> usize {
    msb(a ^ ((a ^ b) | (a.wrapping_sub(b) ^ b)))
}
/// All ones if a >= b, else 0.
#[inline(always)]
fn ge(a: usize, b: usize) -> usize {
    !lt(a, b)
}
/// All ones if x == 0, else 0.
#[inline(always)]
fn is_zero(x: usize) -> usize {
    msb(!x & x.wrapping_sub(1))
}
#[inline(always)]
fn eq(a: usize, b: usize) -> usize {
    is_zero(a ^ b)
}

/// What a decrypted record leaves behind.
#[derive(Debug, PartialEq, Eq)]
pub struct Unpadded {
    /// Offset of the payload in the decrypted buffer (the explicit IV's length, or 0).
    pub offset: usize,
    /// Payload length (the padding and MAC removed when the padding was good).
    pub len: usize,
}

/// Removes the explicit IV (TLS 1.1+), the padding and the MAC from a decrypted record `rec`
/// (a whole number of `block`-byte blocks). The MAC goes to `mac[..mac_size]`.
///
/// `Err(())` only when the record is publicly invalid (too short), or, with no MAC
/// (encrypt-then-MAC, where the MAC was already checked), when the padding is bad: what
/// OpenSSL's provider reports as a failed update.
pub fn remove_padding_and_mac(
    version: u32,
    rec: &[u8],
    block: usize,
    mac_size: usize,
    mac: &mut [u8; MAX_MAC],
    random: impl FnOnce(&mut [u8]) -> bool,
) -> Result<Unpadded, ()> {
    if mac_size > MAX_MAC {
        return Err(());
    }
    let (offset, body) = match version {
        SSL3_VERSION | TLS1_VERSION => (0, rec),
        TLS1_1_VERSION | TLS1_2_VERSION | DTLS1_VERSION | DTLS1_2_VERSION | DTLS1_BAD_VER => {
            if rec.len() < block {
                return Err(());
            }
            (block, &rec[block..])
        }
        _ => return Err(()),
    };
    let overhead = 1 + mac_size;
    if overhead > body.len() {
        return Err(());
    }
    let reclen = body.len();
    let pad = body[reclen - 1] as usize;
    let good = if version == SSL3_VERSION {
        // SSLv3: only the length byte is defined, and the padding must be minimal.
        ge(reclen, pad + overhead) & ge(block, pad + 1)
    } else {
        let mut good = ge(reclen, overhead + pad);
        // Check the largest possible padding (256 bytes with the length byte, or the whole
        // record), so the work done does not depend on the padding length.
        let to_check = reclen.min(256);
        for i in 0..to_check {
            let in_pad = ge(pad, i);
            let b = body[reclen - 1 - i] as usize;
            good &= !(in_pad & (pad ^ b));
        }
        eq(0xff, good & 0xff)
    };
    let good = core::hint::black_box(good);
    let len = reclen - (good & (pad + 1));
    if mac_size == 0 {
        // No MAC in the record (encrypt-then-MAC): the MAC was verified before decryption,
        // so a bad padding is a public failure.
        return if good == 0 {
            Err(())
        } else {
            Ok(Unpadded { offset, len })
        };
    }
    copy_mac(&body[..reclen], len, mac_size, good, mac, random)?;
    Ok(Unpadded {
        offset,
        len: len - mac_size,
    })
}

/// Copies the `mac_size` bytes that end at secret position `mac_end` out of `rec` into
/// `out`, in time independent of `mac_end` (which varies over a window of at most 256 bytes
/// below the public record length). If `good` is 0 the MAC handed back is random.
fn copy_mac(
    rec: &[u8],
    mac_end: usize,
    mac_size: usize,
    good: usize,
    out: &mut [u8; MAX_MAC],
    random: impl FnOnce(&mut [u8]) -> bool,
) -> Result<(), ()> {
    let mut randmac = [0u8; MAX_MAC];
    if !random(&mut randmac[..mac_size]) {
        return Err(());
    }
    let mac_start = mac_end.wrapping_sub(mac_size);
    // The MAC can only start in the last mac_size + 256 bytes: scanning from there is public.
    let scan_start = rec.len().saturating_sub(mac_size + 256);
    let mut rotated = [0u8; MAX_MAC];
    let mut in_mac = 0usize;
    let mut rotate = 0usize;
    let mut j = 0usize;
    for (i, &b) in rec.iter().enumerate().skip(scan_start) {
        let started = eq(i, mac_start);
        let ended = lt(i, mac_end);
        in_mac |= started;
        in_mac &= ended;
        rotate |= j & started;
        // j < mac_size always (masked below), so this index is public-bounded and its value
        // sequence (0, 1, ..., mac_size-1, 0, ...) does not depend on secrets.
        rotated[j] |= b & in_mac as u8;
        j += 1;
        j &= lt(j, mac_size);
    }
    // Rotate left by the secret `rotate` with masked selects only (no secret-indexed load).
    out[..mac_size].fill(0);
    let mut r = mac_size.wrapping_sub(rotate);
    r &= lt(r, mac_size);
    for &v in rotated.iter().take(mac_size) {
        for (k, o) in out.iter_mut().take(mac_size).enumerate() {
            *o |= v & eq(k, r) as u8;
        }
        r += 1;
        r &= lt(r, mac_size);
    }
    let keep = core::hint::black_box(good as u8);
    for (o, &rnd) in out.iter_mut().zip(&randmac).take(mac_size) {
        *o = (*o & keep) | (rnd & !keep);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A TLS 1.2 record body: payload || mac || padding (pad+1 bytes of value pad).
    fn record(explicit_iv: bool, payload: &[u8], mac: &[u8], pad: u8) -> Vec<u8> {
        let mut r = Vec::new();
        if explicit_iv {
            r.extend_from_slice(&[0xee; 16]);
        }
        r.extend_from_slice(payload);
        r.extend_from_slice(mac);
        r.extend(std::iter::repeat_n(pad, pad as usize + 1));
        r
    }

    fn no_random(b: &mut [u8]) -> bool {
        b.fill(0x5a);
        true
    }

    #[test]
    fn good_records_give_payload_and_mac() {
        for &ms in &[0usize, 20, 32, 48] {
            for plen in 0..40usize {
                let payload: Vec<u8> = (0..plen as u8).collect();
                let mac: Vec<u8> = (0..ms).map(|i| 0x80 | i as u8).collect();
                // every padding that makes whole blocks, minimal and a few longer ones
                let base = (plen + ms + 1) % 16;
                let minpad = if base == 0 { 0 } else { 16 - base };
                for pad in [minpad, minpad + 16, minpad + 32] {
                    let rec = record(true, &payload, &mac, pad as u8);
                    assert_eq!(rec.len() % 16, 0);
                    let mut out = [0u8; MAX_MAC];
                    let u =
                        remove_padding_and_mac(TLS1_2_VERSION, &rec, 16, ms, &mut out, no_random)
                            .unwrap();
                    assert_eq!(
                        u,
                        Unpadded {
                            offset: 16,
                            len: plen
                        },
                        "ms={ms} plen={plen} pad={pad}"
                    );
                    assert_eq!(&out[..ms], &mac[..]);
                    let rec = record(false, &payload, &mac, pad as u8);
                    let u = remove_padding_and_mac(TLS1_VERSION, &rec, 16, ms, &mut out, no_random)
                        .unwrap();
                    assert_eq!(
                        u,
                        Unpadded {
                            offset: 0,
                            len: plen
                        }
                    );
                    assert_eq!(&out[..ms], &mac[..]);
                }
            }
        }
    }

    #[test]
    fn bad_padding_gives_random_mac_or_error() {
        let mac = [7u8; 20];
        let mut rec = record(true, b"hello world!", &mac, 11);
        let n = rec.len();
        rec[n - 3] ^= 1; // one padding byte wrong
        let mut out = [0u8; MAX_MAC];
        let u = remove_padding_and_mac(TLS1_2_VERSION, &rec, 16, 20, &mut out, no_random).unwrap();
        assert_eq!(&out[..20], &[0x5a; 20], "random MAC on bad padding");
        assert_eq!(u.len, rec.len() - 16 - 20, "nothing but the MAC removed");
        // Without a MAC (encrypt-then-MAC) a bad padding is an error.
        assert!(remove_padding_and_mac(TLS1_2_VERSION, &rec, 16, 0, &mut out, no_random).is_err());
        // Padding longer than the record.
        let mut rec = vec![0u8; 32];
        rec[31] = 200;
        assert!(remove_padding_and_mac(TLS1_2_VERSION, &rec, 16, 0, &mut out, no_random).is_err());
        // Publicly too short.
        assert!(
            remove_padding_and_mac(TLS1_2_VERSION, &[0u8; 16], 16, 20, &mut out, no_random)
                .is_err()
        );
        assert!(remove_padding_and_mac(TLS1_2_VERSION, &[], 16, 0, &mut out, no_random).is_err());
        assert!(remove_padding_and_mac(0x9999, &[0u8; 32], 16, 0, &mut out, no_random).is_err());
        // A failing random source is an error, not a predictable MAC.
        let rec = record(true, b"x", &mac, 10);
        assert!(remove_padding_and_mac(TLS1_2_VERSION, &rec, 16, 20, &mut out, |_| false).is_err());
    }

    #[test]
    fn masks() {
        for a in [0usize, 1, 2, 255, 256, usize::MAX - 1, usize::MAX] {
            for b in [0usize, 1, 2, 255, 256, usize::MAX - 1, usize::MAX] {
                assert_eq!(lt(a, b), if a < b { usize::MAX } else { 0 });
                assert_eq!(ge(a, b), if a >= b { usize::MAX } else { 0 });
                assert_eq!(eq(a, b), if a == b { usize::MAX } else { 0 });
            }
        }
    }
}

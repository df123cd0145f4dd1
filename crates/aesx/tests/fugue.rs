//! Fugue: published vectors on every backend, backends against `soft`, streaming splits,
//! long messages, bit-length input and the batch API.

use aesx::hash::fugue::{Fugue, FugueAlg, FugueBackend, hash_bits};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/fugue/");

struct Rec {
    bits: u64,
    msg: Vec<u8>,
    md: Vec<u8>,
}

fn short_msg(alg: FugueAlg) -> Vec<Rec> {
    let size = &alg.name()[5..];
    let path = format!("{DIR}sphlib_nist_ShortMsg_fugue{size}.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut out = Vec::new();
    let (mut bits, mut msg) = (None, None);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("Len = ") {
            bits = Some(v.trim().parse::<u64>().unwrap());
        } else if let Some(v) = line.strip_prefix("Msg = ") {
            msg = Some(hex::decode(v.trim()).unwrap());
        } else if let Some(v) = line.strip_prefix("MD = ") {
            let b = bits.take().unwrap();
            let mut m = msg.take().unwrap();
            m.truncate(b.div_ceil(8) as usize);
            out.push(Rec {
                bits: b,
                msg: m,
                md: hex::decode(v.trim()).unwrap(),
            });
        }
    }
    out
}

fn alg_of_bits(bits: &str) -> FugueAlg {
    format!("fugue{bits}").parse().unwrap()
}

#[test]
fn nist_short_msg_all_backends() {
    for alg in FugueAlg::ALL {
        let recs = short_msg(alg);
        assert_eq!(recs.len(), 2048, "{alg}");
        for b in FugueBackend::available() {
            for r in &recs {
                let got = hash_bits(alg, b, &r.msg, r.bits).unwrap();
                assert_eq!(got, r.md, "{alg} {b} Len = {}", r.bits);
            }
        }
    }
}

#[test]
fn sphlib_java_vectors_all_backends() {
    let text = std::fs::read_to_string(format!("{DIR}sphlib_java_TestDigest_fugue.txt")).unwrap();
    let mut n = 0;
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 3, "{line}");
        let alg = alg_of_bits(f[0]);
        let msg = if f[1] == "-" {
            vec![]
        } else {
            hex::decode(f[1]).unwrap()
        };
        let md = hex::decode(f[2]).unwrap();
        for b in FugueBackend::available() {
            let mut h = Fugue::with_backend(alg, b).unwrap();
            h.update(&msg);
            assert_eq!(h.finalize(), md, "{alg} {b} {line}");
        }
        n += 1;
    }
    assert_eq!(n, 4 * 17);
}

/// xorshift64*: deterministic test data without a dependency.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn split_hash(alg: FugueAlg, b: FugueBackend, msg: &[u8], rng: &mut Rng) -> Vec<u8> {
    let mut h = Fugue::with_backend(alg, b).unwrap();
    let mut rest = msg;
    while !rest.is_empty() {
        let n = match rng.below(4) {
            0 => rng.below(4),
            1 => rng.below(70),
            _ => rng.below(rest.len() + 1),
        }
        .min(rest.len());
        h.update(&rest[..n]);
        rest = &rest[n..];
    }
    h.finalize()
}

#[test]
fn backends_match_soft_on_random_lengths_and_splits() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..60 {
        let len = if round < 40 {
            rng.below(300)
        } else {
            rng.below(5000)
        };
        let msg = rng.bytes(len);
        let nbits = rng.below(8) as u32;
        let last = rng.next() as u8;
        for alg in FugueAlg::ALL {
            let mut h = Fugue::with_backend(alg, FugueBackend::Soft).unwrap();
            h.update(&msg);
            let want = h.finalize_bits(last, nbits).unwrap();
            for b in FugueBackend::available() {
                let mut h = Fugue::with_backend(alg, b).unwrap();
                h.update(&msg);
                assert_eq!(
                    h.finalize_bits(last, nbits).unwrap(),
                    want,
                    "{alg} {b} {len}"
                );
                let mut s = Rng(len as u64 + 1);
                if nbits == 0 {
                    assert_eq!(split_hash(alg, b, &msg, &mut s), want, "{alg} {b} split");
                }
            }
        }
    }
}

#[test]
fn streaming_chunk_sizes_match_one_shot() {
    let mut rng = Rng(7);
    let msg = rng.bytes(1000);
    for alg in FugueAlg::ALL {
        let want = aesx::hash::fugue::hash(alg, &msg);
        for b in FugueBackend::available() {
            for chunk in [1, 2, 3, 4, 5, 7, 8, 15, 16, 17, 63, 64, 65, 512] {
                let mut h = Fugue::with_backend(alg, b).unwrap();
                for c in msg.chunks(chunk) {
                    h.update(c);
                }
                h.update(&[]);
                assert_eq!(h.finalize(), want, "{alg} {b} chunk {chunk}");
            }
        }
    }
}

#[test]
fn long_message_one_update_equals_many() {
    let mut rng = Rng(99);
    let msg = rng.bytes(3 << 20 | 3);
    for alg in [FugueAlg::Fugue256, FugueAlg::Fugue512] {
        let mut fast = Vec::new();
        for b in FugueBackend::available()
            .into_iter()
            .filter(|b| *b != FugueBackend::Soft)
        {
            let mut one = Fugue::with_backend(alg, b).unwrap();
            one.update(&msg);
            let one = one.finalize();
            let mut many = Fugue::with_backend(alg, b).unwrap();
            for c in msg.chunks(4093) {
                many.update(c);
            }
            assert_eq!(one, many.finalize(), "{alg} {b}");
            fast.push(one);
        }
        assert!(fast.windows(2).all(|w| w[0] == w[1]), "{alg}");
    }
}

#[test]
fn one_shot_helpers_and_names() {
    let m = b"abc";
    assert_eq!(
        aesx::hash::fugue224(m).to_vec(),
        aesx::hash::fugue::hash(FugueAlg::Fugue224, m)
    );
    assert_eq!(
        aesx::hash::fugue256(m).to_vec(),
        aesx::hash::fugue::hash(FugueAlg::Fugue256, m)
    );
    assert_eq!(
        aesx::hash::fugue384(m).to_vec(),
        aesx::hash::fugue::hash(FugueAlg::Fugue384, m)
    );
    assert_eq!(
        aesx::hash::fugue512(m).to_vec(),
        aesx::hash::fugue::hash(FugueAlg::Fugue512, m)
    );
    for a in FugueAlg::ALL {
        assert_eq!(a.name().parse::<FugueAlg>().unwrap(), a);
        assert_eq!(a.output_len() * 8, a.name()[5..].parse::<usize>().unwrap());
    }
    assert_eq!("Fugue-256".parse::<FugueAlg>().unwrap(), FugueAlg::Fugue256);
    assert!("fugue255".parse::<FugueAlg>().is_err());
    for b in FugueBackend::ALL {
        assert_eq!(b.name().parse::<FugueBackend>().unwrap(), b);
    }
    let h = Fugue::with_backend(FugueAlg::Fugue256, FugueBackend::Soft).unwrap();
    assert!(h.clone().finalize_bits(0, 8).is_err());
    let mut small = [0u8; 31];
    assert!(h.finalize_into(&mut small).is_err());
}

#[test]
fn batch_equals_single_message_results() {
    use aesx::hash::fugue::{hash_many, hash_many_with_backend};
    let mut rng = Rng(2024);
    for alg in FugueAlg::ALL {
        let olen = alg.output_len();
        for len in [0usize, 1, 3, 4, 5, 31, 32, 33, 64, 80, 127, 200, 1000] {
            for count in [1usize, 7, 8, 9, 16, 19] {
                let data: Vec<Vec<u8>> = (0..count).map(|_| rng.bytes(len)).collect();
                let msgs: Vec<&[u8]> = data.iter().map(|m| m.as_slice()).collect();
                let mut want = Vec::new();
                for m in &msgs {
                    let mut h = Fugue::with_backend(alg, FugueBackend::Soft).unwrap();
                    h.update(m);
                    want.extend(h.finalize());
                }
                let mut out = vec![0u8; count * olen];
                hash_many(alg, &msgs, &mut out).unwrap();
                assert_eq!(out, want, "{alg} len {len} count {count}");
                for b in FugueBackend::available() {
                    out.fill(0);
                    hash_many_with_backend(alg, b, &msgs, &mut out).unwrap();
                    assert_eq!(out, want, "{alg} {b} len {len} count {count}");
                }
            }
        }
    }
    let a = [0u8; 5];
    let b = [0u8; 6];
    let mut out = [0u8; 64];
    let alg = FugueAlg::Fugue256;
    assert!(hash_many(alg, &[&a, &b], &mut out).is_err());
    assert!(hash_many(alg, &[&a, &a, &a], &mut out).is_err());
    assert!(hash_many(alg, &[], &mut out).is_ok());
}

/// A single `update` of more than 512 MiB (where a 32-bit bit counter would wrap) equals the
/// same message fed in 1 MiB pieces. Slow (about 1.3 GB hashed), so run it on request:
/// `cargo test --release -p aesx --test fugue -- --ignored`.
#[test]
#[ignore]
fn huge_single_update_equals_pieces() {
    let msg = vec![0u8; (600 << 20) + 3];
    let b = FugueBackend::detect();
    let mut one = Fugue::with_backend(FugueAlg::Fugue256, b).unwrap();
    one.update(&msg);
    let mut many = Fugue::with_backend(FugueAlg::Fugue256, b).unwrap();
    for c in msg.chunks(1 << 20) {
        many.update(c);
    }
    assert_eq!(one.finalize(), many.finalize());
}

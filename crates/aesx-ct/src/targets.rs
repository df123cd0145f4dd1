//! What gets checked: a list of targets, each a list of cases.
//!
//! A **case** is one operation whose whole input is secret: `run(secret, out)` must compute
//! its result into `out` (fixed length) and may check it (return `Err` on a wrong answer).
//! Both parts use the same cases: the taint part marks `secret` undefined under memcheck; the
//! timing part feeds `secret` from a fixed class and a random class.
//!
//! Adding a target (for example the Fugue hash once `aesx::hash` lands) is one entry in
//! [`targets`]: a name, what is expected of it, and a function that builds its cases.
#![forbid(unsafe_code)]

use aesx::hash::{Fugue, FugueAlg, FugueBackend};
use aesx::{Aes, AesGcm, Backend, Ctr};

use crate::planted::{Leak, LeakyAes};
use crate::vg;

/// The result an operation reports for a case: `Err` says what was wrong (never secret bytes).
pub type CaseResult = Result<(), String>;

/// `run(secret, out)`: computes the case's result from its secret input.
pub type CaseFn = Box<dyn Fn(&[u8], &mut [u8]) -> CaseResult>;

/// One operation on a secret input.
pub struct Case {
    pub name: String,
    pub secret_len: usize,
    pub out_len: usize,
    pub run: CaseFn,
    /// Overrides the target's taint expectation for this case (e.g. `Info` for a leak that is
    /// understood and accepted; say why next to it).
    pub taint_expect: Option<Expect>,
    /// Overrides the target's timing expectation for this case.
    pub timing_expect: Option<Expect>,
}

impl Case {
    fn new(
        name: impl Into<String>,
        secret_len: usize,
        out_len: usize,
        run: impl Fn(&[u8], &mut [u8]) -> CaseResult + 'static,
    ) -> Case {
        Case {
            name: name.into(),
            secret_len,
            out_len,
            run: Box::new(run),
            taint_expect: None,
            timing_expect: None,
        }
    }

    fn timing(mut self, e: Expect) -> Case {
        self.timing_expect = Some(e);
        self
    }
}

/// Which check the cases are built for: the taint part uses long inputs (every batch path of
/// every kernel); the timing part short ones (many measurements per second).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Taint,
    Timing,
}

/// What a check must conclude about a target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Expect {
    /// A real implementation: being flagged fails the run.
    Clean,
    /// A planted leak: NOT being flagged fails the run (the check would be blind).
    Leak,
    /// Reported, never fails the run (a leak this check is not expected to see).
    Info,
}

pub struct Target {
    pub name: String,
    /// Whether this CPU (and, under valgrind, the emulated CPU) can run it.
    pub available: bool,
    pub taint: Expect,
    pub timing: Expect,
    pub cases: Box<dyn Fn(Part) -> Vec<Case>>,
}

/// Every target, real backends first, then the planted leaks.
pub fn targets() -> Vec<Target> {
    let mut v: Vec<Target> = Backend::ALL
        .into_iter()
        .map(|b| Target {
            name: b.name().into(),
            available: b.is_available(),
            taint: Expect::Clean,
            timing: Expect::Clean,
            cases: Box::new(move |p| aes_cases(b, p)),
        })
        .collect();
    v.push(Target {
        name: "planted-table".into(),
        available: true,
        taint: Expect::Leak,
        // A 256-byte table stays in L1: the timing test is not expected to see this leak.
        timing: Expect::Info,
        cases: Box::new(|p| planted_cases(Leak::Table, p)),
    });
    v.push(Target {
        name: "planted-branch".into(),
        available: true,
        taint: Expect::Leak,
        timing: Expect::Leak,
        cases: Box::new(|p| planted_cases(Leak::TableAndBranch, p)),
    });
    // The RustCrypto trait path (feature `cipher`): on aesni and vaes256 its own inlined
    // backends (`rustcrypto/x86.rs`), elsewhere the whole-block kernels.
    v.extend(Backend::ALL.into_iter().map(|b| Target {
        name: format!("cipher-{}", b.name()),
        available: b.is_available(),
        taint: Expect::Clean,
        timing: Expect::Clean,
        cases: Box::new(move |p| cipher_cases(b, p)),
    }));
    // PKCS#7 unpadding on its own, and the same cases through a planted early-exit unpad:
    // the real one must be silent with no suppression, the planted one must be flagged.
    v.push(Target {
        name: "pkcs7".into(),
        available: true,
        taint: Expect::Clean,
        timing: Expect::Clean,
        cases: Box::new(|p| unpad_cases(unpad, p)),
    });
    v.push(Target {
        name: "planted-unpad".into(),
        available: true,
        taint: Expect::Leak,
        // Its exits depend on the padding bytes, which the fixed (all-zero) and random
        // classes rarely reach: the timing test is not expected to see it.
        timing: Expect::Info,
        cases: Box::new(|p| unpad_cases(crate::planted::pkcs7_unpad_early_exit, p)),
    });
    // The software GHASH kernels on their own (`hazmat::ghash`): `soft` and `vpaes` run the
    // one this CPU's features pick, so the others would go unchecked here.
    v.extend(aesx::hazmat::ghash::KERNELS.into_iter().map(|k| Target {
        name: format!("ghash-{k}"),
        available: aesx::hazmat::ghash::available(k),
        taint: Expect::Clean,
        timing: Expect::Clean,
        cases: Box::new(move |p| ghash_cases(k, p)),
    }));
    v.extend(FugueBackend::ALL.into_iter().map(|b| Target {
        name: format!("fugue-{}", b.name()),
        available: b.is_available(),
        taint: Expect::Clean,
        timing: Expect::Clean,
        cases: Box::new(move |p| fugue_cases(b, p)),
    }));
    v
}

/// Fugue on one backend: every output size over a few secret message lengths (public),
/// streamed in two pieces, plus the eight-lane `hash_many` batch.
/// GHASH with one software kernel, key (subkey `H`, so its powers and tables are built under
/// taint), starting state and data all secret: 5 blocks (the short path), 69 (the stream
/// paths of `avx2`, from 64 blocks, and `ssse3`, from 32, each with blocks after the last
/// whole batch).
fn ghash_cases(kernel: &'static str, part: Part) -> Vec<Case> {
    let blocks: &[usize] = match part {
        Part::Taint => &[5, 69],
        Part::Timing => &[69],
    };
    blocks
        .iter()
        .map(|&n| {
            Case::new(format!("ghash-{n}blk"), 32 + 16 * n, 16, move |s, out| {
                let (h, rest) = s.split_at(16);
                let (y, data) = rest.split_at(16);
                let mut y: [u8; 16] = y.try_into().unwrap();
                aesx::hazmat::ghash::ghash_with(kernel, h.try_into().unwrap(), &mut y, data)
                    .ok_or_else(|| err("kernel unavailable"))?;
                out.copy_from_slice(&y);
                Ok(())
            })
        })
        .collect()
}

fn fugue_cases(b: FugueBackend, part: Part) -> Vec<Case> {
    // Timing: one 64-byte message for two sizes (224 and 384 share code with 256 and 512).
    let (lens, algs): (&[usize], &[FugueAlg]) = match part {
        Part::Taint => (&[1, 4, 63, 301], &FugueAlg::ALL),
        Part::Timing => (&[64], &[FugueAlg::Fugue256, FugueAlg::Fugue512]),
    };
    let mut v = Vec::new();
    for &alg in algs {
        let olen = alg.output_len();
        for &len in lens {
            v.push(Case::new(
                format!("{alg}-{len}"),
                len,
                olen,
                move |s, out| {
                    let mut h = Fugue::with_backend(alg, b).map_err(|e| format!("{e}"))?;
                    let (a, rest) = s.split_at(len / 3);
                    h.update(a);
                    h.update(rest);
                    h.finalize_into(out).map_err(|e| format!("{e}"))
                },
            ));
        }
        // The eight-lane batch kernel exists only on gfni; elsewhere it is the loop above.
        if b != FugueBackend::Gfni && part == Part::Timing {
            continue;
        }
        let len = 64;
        v.push(Case::new(
            format!("{alg}-many-9x{len}"),
            9 * len,
            9 * olen,
            move |s, out| {
                let msgs: Vec<&[u8]> = s.chunks_exact(len).collect();
                aesx::hash::fugue::hash_many_with_backend(alg, b, &msgs, out)
                    .map_err(|e| format!("{e}"))
            },
        ));
    }
    v
}

fn err(what: &str) -> String {
    what.to_string()
}

/// Splits `s` at the given lengths.
fn split<const N: usize>(mut s: &[u8], lens: [usize; N]) -> [&[u8]; N] {
    lens.map(|n| {
        let (a, b) = s.split_at(n);
        s = b;
        a
    })
}

/// The fixed key of the timing cases that vary only the data (any value will do).
fn fixed_key(len: usize) -> Vec<u8> {
    let mut k = vec![0u8; len];
    crate::rng::Rng::new(0x6b65_7921).fill(&mut k);
    k
}

fn iv16(b: &[u8]) -> [u8; 16] {
    b.try_into().expect("16-byte IV")
}

/// The cases for one aesx backend: key expansion, ECB both ways, CBC both ways, PKCS#7 and CTR,
/// for every key size.
fn aes_cases(b: Backend, part: Part) -> Vec<Case> {
    // Taint: 37 blocks go through every batch size a kernel has (32/16/8/4 lanes and singles)
    // and, on `aesni`, three iterations of the 12-block inline-assembly CTR loop (valgrind
    // cannot run VAES, so the taint part never sees the ymm loops); 69 blocks (the CTR cases'
    // second call then has 1 KiB or more) for every backend but `soft`, so that on Intel the
    // `aesni` CTR selector loop runs under valgrind too.
    // Timing: 85 blocks for the fast backends: the inline-assembly CTR and CBC-decrypt loops of
    // `vaes256` run from three iterations of 24 blocks (72) up, so a shorter message would
    // time only the intrinsic kernels; 85 = 3 x 24 + 13 also times a tail after the loop. 9
    // for `soft`, whose ~80k cycles per block would leave too few measurements in the budget.
    let (blocks, key_sizes): (usize, &[usize]) = match part {
        Part::Taint if b == Backend::Soft => (37, &[16, 24, 32]),
        Part::Taint => (69, &[16, 24, 32]),
        Part::Timing if b == Backend::Soft => (9, &[16, 32]),
        Part::Timing => (85, &[16, 32]),
    };
    let n = 16 * blocks;
    let mut v = Vec::new();
    let aes = move |key: &[u8]| Aes::with_backend(key, b).map_err(|e| format!("{e}"));
    for &kl in key_sizes {
        let bits = kl * 8;
        // Key expansion, observed through one encryption of a public block.
        v.push(Case::new(
            format!("keyexp-{bits}"),
            kl,
            16,
            move |s, out| {
                let mut blk = [0u8; 16];
                aes(s)?.encrypt_block(&mut blk);
                out.copy_from_slice(&blk);
                Ok(())
            },
        ));
        if part == Part::Timing {
            // Timing isolates the data path: a fixed key, expanded once (its expansion is
            // measured by keyexp), and the plaintext or counter as the varying secret.
            let Ok(k) = aes(&fixed_key(kl)) else {
                continue; // backend unavailable: the target is skipped anyway
            };
            let k = std::rc::Rc::new(k);
            let (k2, k3, k4, k5) = (k.clone(), k.clone(), k.clone(), k.clone());
            v.push(Case::new(
                format!("ecb-encrypt-{bits}"),
                n,
                n,
                move |s, out| k.encrypt_blocks_b2b(s, out).map_err(|e| format!("{e}")),
            ));
            v.push(Case::new(
                format!("ecb-decrypt-{bits}"),
                n,
                n,
                move |s, out| k3.decrypt_blocks_b2b(s, out).map_err(|e| format!("{e}")),
            ));
            v.push(Case::new(
                format!("cbc-decrypt-{bits}"),
                16 + n,
                n,
                move |s, out| {
                    let [iv, ct] = split(s, [16, n]);
                    out.copy_from_slice(ct);
                    k4.cbc_decrypt(&iv16(iv), out).map_err(|e| format!("{e}"))
                },
            ));
            // Up to 20 blocks take the small-message paths of the hardware backends
            // (`aesni::decrypt4` up to four, `decrypt12` from nine, chunks of twelve from 13),
            // which the 85-block case never reaches; 28 (4 left over from 24) the two 8-block
            // heads of `aesni`'s AES-256 assembly (the 85-block case, 1 left over, does too).
            for small in [3, 9, 17, 28] {
                let k5 = k5.clone();
                v.push(Case::new(
                    format!("cbc-decrypt-{small}blk-{bits}"),
                    16 + 16 * small,
                    16 * small,
                    move |s, out| {
                        let [iv, ct] = split(s, [16, 16 * small]);
                        out.copy_from_slice(ct);
                        k5.cbc_decrypt(&iv16(iv), out).map_err(|e| format!("{e}"))
                    },
                ));
            }
            // CTR at `n`, and (but on `soft`) at 8 KiB + 3 blocks: long enough for the
            // round-1-table CTR of `vaes512` on AMD (`ctr_asm::zmm_r1`, from 6 KiB), whose
            // table is built from the counter's low byte, with a tail short enough for the xmm
            // code it hands to (`aesni::ctr_small`, up to 4 blocks); the counter (IV) is the
            // secret that varies. (`n` times the masked tail of `zmm_sel`.)
            let mut ctr_lens = vec![("ctr", n)];
            if b != Backend::Soft {
                ctr_lens.push(("ctr-8k", 8192 + 48));
            }
            for (name, m) in ctr_lens {
                let k = k2.clone();
                v.push(Case::new(
                    format!("{name}-{bits}"),
                    16 + m,
                    m,
                    move |s, out| {
                        let [iv, pt] = split(s, [16, m]);
                        out.copy_from_slice(pt);
                        Ctr::new(&k, &iv16(iv)).apply_keystream(out);
                        Ok(())
                    },
                ));
            }
            continue;
        }
        v.push(Case::new(
            format!("ecb-encrypt-{bits}"),
            kl + n,
            n,
            move |s, out| {
                let [key, pt] = split(s, [kl, n]);
                aes(key)?
                    .encrypt_blocks_b2b(pt, out)
                    .map_err(|e| format!("{e}"))
            },
        ));
        v.push(Case::new(
            format!("ecb-decrypt-{bits}"),
            kl + n,
            n,
            move |s, out| {
                let [key, ct] = split(s, [kl, n]);
                aes(key)?
                    .decrypt_blocks_b2b(ct, out)
                    .map_err(|e| format!("{e}"))
            },
        ));
        v.push(Case::new(
            format!("cbc-encrypt-{bits}"),
            kl + 16 + n,
            n,
            move |s, out| {
                let [key, iv, pt] = split(s, [kl, 16, n]);
                out.copy_from_slice(pt);
                aes(key)?
                    .cbc_encrypt(&iv16(iv), out)
                    .map_err(|e| format!("{e}"))
            },
        ));
        v.push(Case::new(
            format!("cbc-decrypt-{bits}"),
            kl + 16 + n,
            n,
            move |s, out| {
                let [key, iv, ct] = split(s, [kl, 16, n]);
                out.copy_from_slice(ct);
                aes(key)?
                    .cbc_decrypt(&iv16(iv), out)
                    .map_err(|e| format!("{e}"))
            },
        ));
        // Up to 20 blocks: the small-message paths of the hardware backends
        // (`aesni::decrypt4` up to four, `decrypt12` from nine, chunks of twelve from 13;
        // AESIMC of each round key on the fly); 28 (4 left over from 24): the two 8-block
        // heads of `aesni`'s AES-256 CBC-decryption assembly, which 69 blocks (9 over) do not
        // reach.
        for small in [3, 9, 17, 28] {
            v.push(Case::new(
                format!("cbc-decrypt-{small}blk-{bits}"),
                kl + 16 + 16 * small,
                16 * small,
                move |s, out| {
                    let [key, iv, ct] = split(s, [kl, 16, 16 * small]);
                    out.copy_from_slice(ct);
                    aes(key)?
                        .cbc_decrypt(&iv16(iv), out)
                        .map_err(|e| format!("{e}"))
                },
            ));
        }
        // CTR over a length with a partial tail, in two calls that split a block, so the
        // buffered-keystream paths run too.
        let m = n + 5;
        v.push(Case::new(
            format!("ctr-{bits}"),
            kl + 16 + m,
            m,
            move |s, out| {
                let [key, iv, pt] = split(s, [kl, 16, m]);
                out.copy_from_slice(pt);
                let aes = aes(key)?;
                let mut c = Ctr::new(&aes, &iv16(iv));
                let (a, rest) = out.split_at_mut(7);
                c.apply_keystream(a);
                c.apply_keystream(rest);
                Ok(())
            },
        ));
        v.push(Case::new(
            format!("ctr-seek-{bits}"),
            kl + 16 + m,
            m,
            move |s, out| {
                let [key, iv, pt] = split(s, [kl, 16, m]);
                out.copy_from_slice(pt);
                aes(key)?.ctr_xor_at(&iv16(iv), 1000 * 16 + 3, out);
                Ok(())
            },
        ));
        // PKCS#7 round trip: a secret message of public length is padded, CBC-encrypted,
        // decrypted and unpadded. Only the validity and the length are declassified (by
        // `unpad`, between the branch-free check and the branch on it): they are public by
        // design (the caller learns the message length and whether it was valid).
        let msg = 5 * 16 + 7;
        v.push(Case::new(
            format!("cbc-pkcs7-{bits}"),
            kl + 16 + msg,
            msg,
            move |s, out| {
                let [key, iv, m] = split(s, [kl, 16, msg]);
                let aes = aes(key)?;
                let iv = iv16(iv);
                let whole = msg / 16 * 16;
                let mut buf = m[..whole].to_vec();
                buf.extend_from_slice(&aesx::pkcs7_pad(&m[whole..]).map_err(|e| format!("{e}"))?);
                aes.cbc_encrypt(&iv, &mut buf).map_err(|e| format!("{e}"))?;
                aes.cbc_decrypt(&iv, &mut buf).map_err(|e| format!("{e}"))?;
                let len = unpad(&buf).ok_or_else(|| err("valid padding refused"))?;
                if len != msg {
                    return Err(err("unpadded length is wrong"));
                }
                out.copy_from_slice(&buf[..msg]);
                Ok(())
            },
        ));
        // Unpadding a secret block whose padding is almost always invalid (random input).
        v.push(Case::new(
            format!("pkcs7-unpad-random-{bits}"),
            kl + 16 + n,
            n,
            move |s, out| {
                let [key, iv, ct] = split(s, [kl, 16, n]);
                out.copy_from_slice(ct);
                aes(key)?
                    .cbc_decrypt(&iv16(iv), out)
                    .map_err(|e| format!("{e}"))?;
                std::hint::black_box(unpad(out).is_some());
                Ok(())
            },
        ));
    }
    // GCM under taint: 72 blocks, so that `aesni` decryption with a 12-byte nonce takes its
    // aligned head (6 blocks) and the batches after it (from 70 whole blocks).
    let gcm_blocks = if part == Part::Taint && b != Backend::Soft {
        72
    } else {
        blocks
    };
    v.extend(gcm_cases(b, part, gcm_blocks, key_sizes));
    if b == Backend::Aesni && part == Part::Taint {
        // Both AES-NI key-expansion variants, whichever this CPU's vendor prefers.
        for (name, _) in aesx::hazmat::keysetup::variants() {
            for &kl in key_sizes {
                v.push(Case::new(
                    format!("keyexp-{name}-{}", kl * 8),
                    kl,
                    16 * (kl / 4 + 7),
                    move |s, out| {
                        let rk = aesx::hazmat::keysetup::expand_with(name, s)
                            .ok_or_else(|| err("variant unavailable"))?;
                        out.copy_from_slice(rk.as_slice().as_flattened());
                        Ok(())
                    },
                ));
            }
        }
    }
    v
}

/// AES-GCM on one backend: GHASH alone (associated data only), seal and open one-shot and
/// streamed, with a 12-byte nonce and a 20-byte one (J0 through GHASH, so the counter itself is
/// secret). The tag check is the branch-free core (`hazmat::gcm_open_ct` /
/// `gcm_finish_ct`); only its valid/invalid result is declassified, by the checker, before
/// the one public branch on it. No suppression is involved.
fn gcm_cases(b: Backend, part: Part, blocks: usize, key_sizes: &[usize]) -> Vec<Case> {
    let mut v = Vec::new();
    let gcm = move |key: &[u8]| AesGcm::with_backend(key, b).map_err(|e| format!("{e}"));
    let e = |e: aesx::Error| format!("{e}");
    // Message: every batch width plus a partial block; AAD: a partial block too.
    let (m, a) = (16 * blocks + 5, 23);
    for &kl in key_sizes {
        let bits = kl * 8;
        if part == Part::Timing {
            // A fixed key; the nonce, AAD and data (or ciphertext and tag) vary.
            let Ok(g) = gcm(&fixed_key(kl)) else {
                continue;
            };
            let g = std::rc::Rc::new(g);
            // The 20-byte nonce and GHASH-only cases for one key size (the budget is per case).
            let nls: &[usize] = if kl == 16 { &[12, 20] } else { &[12] };
            for &nl in nls {
                let g1 = g.clone();
                v.push(Case::new(
                    format!("gcm-seal-n{nl}-{bits}"),
                    nl + a + m,
                    m + 16,
                    move |s, out| {
                        let [n, aad, pt] = split(s, [nl, a, m]);
                        out[..m].copy_from_slice(pt);
                        let t = g1
                            .seal_in_place_detached(n, aad, &mut out[..m])
                            .map_err(e)?;
                        out[m..].copy_from_slice(t.as_ref());
                        Ok(())
                    },
                ));
            }
            let g2 = g.clone();
            // Random (so almost surely forged) ciphertexts through the public open: both
            // classes take the refusal path; its time must not depend on the data.
            v.push(Case::new(
                format!("gcm-open-{bits}"),
                12 + a + m + 16,
                m,
                move |s, out| {
                    let [n, aad, ct, tag] = split(s, [12, a, m, 16]);
                    out.copy_from_slice(ct);
                    let r = g2.open_in_place_detached(n, aad, out, tag);
                    std::hint::black_box(r.is_ok());
                    Ok(())
                },
            ));
            if kl != 16 {
                continue;
            }
            let g3 = g.clone();
            v.push(Case::new(
                format!("ghash-aad-{bits}"),
                12 + m,
                16,
                move |s, out| {
                    let [n, aad] = split(s, [12, m]);
                    let t = g3.seal_in_place_detached(n, aad, &mut []).map_err(e)?;
                    out.copy_from_slice(t.as_ref());
                    Ok(())
                },
            ));
            continue;
        }
        // Taint: the key is secret too (H and its powers are computed under taint).
        v.push(Case::new(
            format!("ghash-aad-{bits}"),
            kl + 12 + m,
            16,
            move |s, out| {
                let [key, n, aad] = split(s, [kl, 12, m]);
                let t = gcm(key)?
                    .seal_in_place_detached(n, aad, &mut [])
                    .map_err(e)?;
                out.copy_from_slice(t.as_ref());
                Ok(())
            },
        ));
        for nl in [12usize, 20] {
            v.push(Case::new(
                format!("gcm-seal-n{nl}-{bits}"),
                kl + nl + a + m,
                m + 16,
                move |s, out| {
                    let [key, n, aad, pt] = split(s, [kl, nl, a, m]);
                    out[..m].copy_from_slice(pt);
                    let t = gcm(key)?
                        .seal_in_place_detached(n, aad, &mut out[..m])
                        .map_err(e)?;
                    out[m..].copy_from_slice(t.as_ref());
                    Ok(())
                },
            ));
            // Seal, then open the result (valid) and a copy with one flipped bit (invalid):
            // the checker declassifies only the two validity results.
            v.push(Case::new(
                format!("gcm-open-n{nl}-{bits}"),
                kl + nl + a + m,
                m,
                move |s, out| {
                    let [key, n, aad, pt] = split(s, [kl, nl, a, m]);
                    let g = gcm(key)?;
                    let mut ct = pt.to_vec();
                    let tag = g.seal_in_place_detached(n, aad, &mut ct).map_err(e)?;
                    let mut bad = ct.clone();
                    bad[m / 2] ^= 4;
                    let mut ok = aesx::hazmat::gcm_open_ct(&g, n, aad, &mut ct, tag.as_ref());
                    let mut forged = aesx::hazmat::gcm_open_ct(&g, n, aad, &mut bad, tag.as_ref());
                    vg::declassify_val(&mut ok);
                    vg::declassify_val(&mut forged);
                    if ok != Ok(1) || forged != Ok(0) {
                        return Err(err("tag check gave the wrong answer"));
                    }
                    out.copy_from_slice(&ct);
                    Ok(())
                },
            ));
        }
        // Streaming both ways in uneven pieces (partial-block buffers, AAD split).
        v.push(Case::new(
            format!("gcm-stream-{bits}"),
            kl + 12 + a + m,
            m + 16,
            move |s, out| {
                let [key, n, aad, pt] = split(s, [kl, 12, a, m]);
                let g = gcm(key)?;
                let mut enc = g.encryptor(n).map_err(e)?;
                enc.aad(&aad[..5]).map_err(e)?;
                enc.aad(&aad[5..]).map_err(e)?;
                let mut ct = pt.to_vec();
                let (x, rest) = ct.split_at_mut(7);
                let (y, z) = rest.split_at_mut(16 * 3 + 2);
                for piece in [x, y, z] {
                    enc.update(piece).map_err(e)?;
                }
                let tag = enc.finish();
                let mut dec = g.decryptor(n).map_err(e)?;
                dec.aad(aad).map_err(e)?;
                let mut back = ct.clone();
                let (x, y) = back.split_at_mut(33);
                dec.update(x).map_err(e)?;
                dec.update(y).map_err(e)?;
                let mut ok = aesx::hazmat::gcm_finish_ct(dec, tag.as_ref());
                vg::declassify_val(&mut ok);
                if ok != Ok(1) {
                    return Err(err("streamed tag refused"));
                }
                out[..m].copy_from_slice(&back);
                out[m..].copy_from_slice(tag.as_ref());
                Ok(())
            },
        ));
    }
    v
}

/// `aesx::pkcs7_unpad` as the checker runs it: the same code, with the hook between the
/// branch-free validity check and the one branch on it marking the result public for memcheck
/// (a no-op natively). Nothing else is declassified, and no suppression applies, so any
/// secret-dependent branch or address inside is reported.
pub fn unpad(data: &[u8]) -> Option<usize> {
    aesx::hazmat::pkcs7_unpad_declassify(data, vg::declassify_val).ok()
}

/// PKCS#7 unpadding of secret data, through `unpad` (the real one or a planted one): random
/// blocks (almost always invalid), and (taint only) correctly padded secret messages whose
/// padding bytes are secret too, as after a real decryption: the padded block is encrypted and
/// decrypted again under a secret key (`soft`, any CPU).
fn unpad_cases(unpad: fn(&[u8]) -> Option<usize>, part: Part) -> Vec<Case> {
    let mut v = Vec::new();
    let n = match part {
        Part::Taint => 48,
        Part::Timing => 16,
    };
    v.push(Case::new("unpad-random", n, n, move |s, out| {
        out.copy_from_slice(s);
        std::hint::black_box(unpad(out));
        Ok(())
    }));
    if part == Part::Timing {
        return v;
    }
    for msg in [1usize, 5, 15, 16 + 7] {
        v.push(Case::new(
            format!("unpad-valid-{msg}"),
            16 + msg,
            msg,
            move |s, out| {
                let [key, m] = split(s, [16, msg]);
                let aes = Aes::with_backend(key, Backend::Soft).map_err(|e| format!("{e}"))?;
                let whole = msg / 16 * 16;
                let mut buf = m[..whole].to_vec();
                buf.extend_from_slice(&aesx::pkcs7_pad(&m[whole..]).map_err(|e| format!("{e}"))?);
                aes.encrypt_blocks(&mut buf);
                aes.decrypt_blocks(&mut buf);
                if unpad(&buf) != Some(msg) {
                    return Err(err("valid padding refused or wrong length"));
                }
                out.copy_from_slice(&buf[..msg]);
                Ok(())
            },
        ));
    }
    v
}

/// The `cipher` traits on one backend: blocks both ways through `BlockCipherEncrypt` /
/// `BlockCipherDecrypt` (in place and buffer to buffer, so the parallel, tail and single-block
/// methods all run), for AES-128 and AES-256.
fn cipher_cases(b: Backend, part: Part) -> Vec<Case> {
    use aesx::rustcrypto::{Aes128, Aes256};
    use cipher::{Array, BlockCipherDecrypt, BlockCipherEncrypt};

    // 37 blocks: two 16-block parallel calls and 5 singles on vaes256, four 8-block calls and
    // 5 singles on aesni, one 32-block call and 5 tail blocks elsewhere.
    let blocks = if part == Part::Timing && b == Backend::Soft {
        9
    } else {
        37
    };
    let n = 16 * blocks;
    fn as_blocks(b: &[u8]) -> Vec<Array<u8, cipher::consts::U16>> {
        b.chunks_exact(16)
            .map(|c| Array::try_from(c).unwrap())
            .collect()
    }
    fn flat_into(b: &[Array<u8, cipher::consts::U16>], out: &mut [u8]) {
        for (o, c) in out.chunks_exact_mut(16).zip(b) {
            o.copy_from_slice(c);
        }
    }
    let mut v = Vec::new();
    macro_rules! cases {
        ($ty:ty, $kl:literal) => {{
            let bits = $kl * 8;
            let new = move |k: &[u8]| {
                <$ty>::with_backend(k.try_into().map_err(|_| err("key length"))?, b)
                    .map_err(|e| format!("{e}"))
            };
            if part == Part::Timing {
                let Ok(k) = new(&fixed_key($kl)) else {
                    return v;
                };
                let k = std::rc::Rc::new(k);
                let k2 = k.clone();
                v.push(Case::new(format!("encrypt-{bits}"), n, n, move |s, out| {
                    let mut x = as_blocks(s);
                    k.encrypt_blocks(&mut x);
                    flat_into(&x, out);
                    Ok(())
                }));
                v.push(Case::new(
                    format!("decrypt-b2b-{bits}"),
                    n,
                    n,
                    move |s, out| {
                        let x = as_blocks(s);
                        let mut y = x.clone();
                        k2.decrypt_blocks_b2b(&x, &mut y)
                            .map_err(|_| err("lengths"))?;
                        flat_into(&y, out);
                        Ok(())
                    },
                ));
            } else {
                v.push(Case::new(
                    format!("encrypt-{bits}"),
                    $kl + n,
                    n,
                    move |s, out| {
                        let [key, pt] = split(s, [$kl, n]);
                        let mut x = as_blocks(pt);
                        new(key)?.encrypt_blocks(&mut x);
                        flat_into(&x, out);
                        Ok(())
                    },
                ));
                v.push(Case::new(
                    format!("decrypt-b2b-{bits}"),
                    $kl + n,
                    n,
                    move |s, out| {
                        let [key, ct] = split(s, [$kl, n]);
                        let x = as_blocks(ct);
                        let mut y = x.clone();
                        new(key)?
                            .decrypt_blocks_b2b(&x, &mut y)
                            .map_err(|_| err("lengths"))?;
                        flat_into(&y, out);
                        Ok(())
                    },
                ));
            }
        }};
    }
    cases!(Aes128, 16);
    cases!(Aes256, 32);
    v
}

/// The planted leak: key expansion and ECB through the insecure table AES.
fn planted_cases(leak: Leak, part: Part) -> Vec<Case> {
    let n = 16
        * match part {
            Part::Taint => 3,
            Part::Timing => 9,
        };
    let mut v = Vec::new();
    for kl in [16usize, 32] {
        let bits = kl * 8;
        // The planted branch lives in MixColumns; key expansion leaks through the table only,
        // which the timing test is not expected to see.
        v.push(
            Case::new(
                format!("keyexp-{bits}"),
                kl,
                16 * (kl / 4 + 7),
                move |s, out| {
                    out.copy_from_slice(LeakyAes::new(s, leak).round_keys().as_flattened());
                    Ok(())
                },
            )
            .timing(Expect::Info),
        );
        if part == Part::Timing {
            let a = LeakyAes::new(&fixed_key(kl), leak);
            v.push(Case::new(
                format!("ecb-encrypt-{bits}"),
                n,
                n,
                move |s, out| {
                    out.copy_from_slice(s);
                    for blk in out.chunks_exact_mut(16) {
                        a.encrypt_block(blk.try_into().unwrap());
                    }
                    Ok(())
                },
            ));
            continue;
        }
        v.push(Case::new(
            format!("ecb-encrypt-{bits}"),
            kl + n,
            n,
            move |s, out| {
                let [key, pt] = split(s, [kl, n]);
                let a = LeakyAes::new(key, leak);
                out.copy_from_slice(pt);
                for blk in out.chunks_exact_mut(16) {
                    a.encrypt_block(blk.try_into().unwrap());
                }
                Ok(())
            },
        ));
        v.push(Case::new(
            format!("ecb-decrypt-{bits}"),
            kl + n,
            n,
            move |s, out| {
                let [key, ct] = split(s, [kl, n]);
                let a = LeakyAes::new(key, leak);
                out.copy_from_slice(ct);
                for blk in out.chunks_exact_mut(16) {
                    a.decrypt_block(blk.try_into().unwrap());
                }
                Ok(())
            },
        ));
    }
    v
}

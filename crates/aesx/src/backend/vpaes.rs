//! Vector-permute AES with SSSE3 `pshufb`, after Mike Hamburg, "Accelerating AES with Vector
//! Permute Instructions" (CHES 2009). No table is indexed by secret data: every lookup is a
//! 16-entry `pshufb` over a whole register, which runs in fixed time whatever the indices.
//!
//! How it works (the paper's technique; the code and constants here are our own):
//! * Each state byte x is held as M(x), its image in the tower field
//!   `GF(16)[t] / (t^2 + a t + a)`, high nibble = coefficient of t. M is a GF(2)-linear field
//!   isomorphism, so inverting there inverts the AES byte.
//! * The GF(2^8) inverse is five nibble lookups in GF(16) (1/i, a/k, 1/(i^k), and two more on
//!   their sums), with 1/0 represented as 0x80 so that `pshufb` yields 0 for it.
//! * The two resulting nibbles index output tables that fold in the S-box affine map, the
//!   MixColumns multiplier (x1 and x2 for encryption, x9/x11/x13/x14 for decryption) and the
//!   change back into the tower basis, so a round is 12 (encryption) or 16 (decryption)
//!   `pshufb`s. MixColumns' row rotations are `pshufb`s too.
//! * ShiftRows is never done: the byte order drifts by one ShiftRows per round, the rotation
//!   shuffles and the stored round keys follow it (period 4), and one shuffle at the end
//!   restores the standard order.
//! * The key schedule runs in the tower basis (SubWord is the same inversion, RotWord a byte
//!   shuffle, the round constants mapped by M); the S-box constant 0x63 is folded into the
//!   round keys. Decryption uses the equivalent inverse cipher, whose round keys go through
//!   InvMixColumns with the same tables.
//!
//! The field, M and every table are produced and checked by `vpaes/gen_tables.py`, which
//! simulates the whole cipher with `pshufb` semantics against a reference AES.
//!
//! Kernels: one body (`enc_body!`, `dec_body!`, `kernels!`) instantiated three times and
//! picked at run time by [`width`]:
//! * `x1`: xmm, SSSE3, 5 blocks in flight;
//! * `x2`: ymm, AVX2, 4 vectors = 8 blocks (`vpshufb` shuffles within 128-bit lanes, which is
//!   exactly one block's table lookup);
//! * `x3`: zmm, AVX-512BW, 4 vectors = 16 blocks, three-input XORs as one `vpternlogq`.
//!
//! CBC encryption is serial and always runs on xmm with a lower-latency round.
//!
//! Measured on the project machine (AMD Zen 4 VM, 16 KiB buffers, MB/s, best of 90
//! interleaved 2 ms trials; each width forced in its own build; OpenSSL 3.0 through the
//! `openssl` crate with AES-NI masked by `OPENSSL_ia32cap="~0x200000200000000"`, i.e. its
//! own vpaes (ECB, CBC) and bsaes (CTR) code, in the same processes):
//!
//! | | ECB-128 enc | ECB-128 dec | CTR-128 | CBC-128 enc | CBC-128 dec | CTR-256 |
//! |---|---|---|---|---|---|---|
//! | vpaes zmm (chosen on this CPU) | 1667 | 1374 | 1656 | 303 | 1350 | 1182 |
//! | vpaes ymm | 1376 | 1107 | 1369 | 302 | 1100 | 977 |
//! | vpaes xmm | 717 | 555 | 708 | 303 | 556 | 506 |
//! | OpenSSL, AES-NI masked | 354 | 273 | 756 | 302 | 656 | 553 |
//!
//! Constant time: all loads, stores, branches and loop bounds depend only on lengths, the
//! round count and the CPU's features, never on key or data bytes.

use core::arch::x86_64::*;

use zeroize::Zeroize;

mod tables;
use tables::*;

pub(crate) const BUILT: bool = true;

/// Round keys in the kernel layout (see the module docs): `enc[0..=rounds]` tower-basis keys in
/// drifted byte order (the last one in the standard basis), `dec[0..=rounds]` the same for the
/// equivalent inverse cipher.
#[repr(C, align(16))]
pub(crate) struct Keys {
    enc: [[u8; 16]; 15],
    dec: [[u8; 16]; 15],
    rounds: usize,
}

impl Keys {
    /// 10, 12 or 14.
    pub(crate) fn rounds(&self) -> usize {
        self.rounds
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        self.enc.zeroize();
        self.dec.zeroize();
    }
}

#[inline(always)]
fn load(b: &[u8; 16]) -> __m128i {
    // SAFETY: `b` is 16 readable bytes; the load is unaligned (SSE2 is part of x86_64).
    unsafe { _mm_loadu_si128(b.as_ptr().cast()) }
}

#[inline(always)]
fn store(b: &mut [u8; 16], v: __m128i) {
    // SAFETY: `b` is 16 writable bytes; the store is unaligned (SSE2 is part of x86_64).
    unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), v) }
}

/// A 16-byte table constant (byte n of the table = byte n of the little-endian u128).
#[inline]
#[target_feature(enable = "ssse3")]
fn c128(x: u128) -> __m128i {
    _mm_set_epi64x((x >> 64) as i64, x as i64)
}

// ---------------------------------------------------------------------------------------------
// Key schedule (xmm, SSSE3).

#[inline]
#[target_feature(enable = "ssse3")]
fn nib_lin(p: [u128; 2], x: __m128i) -> __m128i {
    let m = c128(NIB);
    let lo = _mm_and_si128(x, m);
    let hi = _mm_and_si128(_mm_srli_epi32::<4>(x), m);
    _mm_xor_si128(
        _mm_shuffle_epi8(c128(p[0]), lo),
        _mm_shuffle_epi8(c128(p[1]), hi),
    )
}

/// The S-box on every byte, tower basis in and out.
#[inline]
#[target_feature(enable = "ssse3")]
fn sub_bytes_m(z: __m128i) -> __m128i {
    let m = c128(NIB);
    let inv = c128(INV);
    let k = _mm_and_si128(z, m);
    let i = _mm_and_si128(_mm_srli_epi32::<4>(z), m);
    let ak = _mm_shuffle_epi8(c128(INVA), k);
    let j = _mm_xor_si128(i, k);
    let iak = _mm_xor_si128(_mm_shuffle_epi8(inv, i), ak);
    let jak = _mm_xor_si128(_mm_shuffle_epi8(inv, j), ak);
    let io = _mm_xor_si128(_mm_shuffle_epi8(inv, iak), j);
    let jo = _mm_xor_si128(_mm_shuffle_epi8(inv, jak), i);
    let s = _mm_xor_si128(
        _mm_shuffle_epi8(c128(SB1[0]), io),
        _mm_shuffle_epi8(c128(SB1[1]), jo),
    );
    _mm_xor_si128(s, _mm_set1_epi8(M63 as i8))
}

/// [x0, x0^x1, x0^x1^x2, x0^x1^x2^x3] on 32-bit words.
#[inline]
#[target_feature(enable = "ssse3")]
fn prefix_xor(x: __m128i) -> __m128i {
    let x = _mm_xor_si128(x, _mm_slli_si128::<4>(x));
    _mm_xor_si128(x, _mm_slli_si128::<8>(x))
}

/// `pshufb` index that broadcasts word `w` of a register, rotated left by `rot` bytes.
const fn word_bcast(w: u8, rot: u8) -> u128 {
    let mut v = 0u128;
    let mut n = 0;
    while n < 16 {
        let b = 4 * w + (n as u8 + rot) % 4;
        v |= (b as u128) << (8 * n);
        n += 1;
    }
    v
}

/// Tower-basis round keys for `key` (FIPS-197 key expansion with every word mapped by M).
#[inline]
#[target_feature(enable = "ssse3")]
fn expand_m(key: &[u8], mk: &mut [__m128i; 15]) {
    let rot3 = c128(word_bcast(3, 1));
    let bc3 = c128(word_bcast(3, 0));
    let rot0 = c128(word_bcast(0, 1));
    let rc = |i: usize| _mm_set1_epi32(MRCON[i] as i32);
    match key.len() {
        16 => {
            let mut k = nib_lin(IPT, load(key.try_into().unwrap()));
            mk[0] = k;
            for (i, slot) in mk[1..11].iter_mut().enumerate() {
                let f = _mm_xor_si128(sub_bytes_m(_mm_shuffle_epi8(k, rot3)), rc(i));
                k = _mm_xor_si128(prefix_xor(k), f);
                *slot = k;
            }
        }
        32 => {
            let mut a = nib_lin(IPT, load(key[..16].try_into().unwrap()));
            let mut b = nib_lin(IPT, load(key[16..].try_into().unwrap()));
            mk[0] = a;
            mk[1] = b;
            for i in 0..7 {
                let f = _mm_xor_si128(sub_bytes_m(_mm_shuffle_epi8(b, rot3)), rc(i));
                a = _mm_xor_si128(prefix_xor(a), f);
                mk[2 + 2 * i] = a;
                if i < 6 {
                    let g = sub_bytes_m(_mm_shuffle_epi8(a, bc3));
                    b = _mm_xor_si128(prefix_xor(b), g);
                    mk[3 + 2 * i] = b;
                }
            }
        }
        24 => {
            // AES-192: 52 words, six per step; done on a flat array of tower-basis words.
            let mut w = [0u8; 16 * 13 + 16];
            let mut tmp = [0u8; 16];
            tmp[..8].copy_from_slice(&key[16..24]);
            store(
                (&mut w[..16]).try_into().unwrap(),
                nib_lin(IPT, load(key[..16].try_into().unwrap())),
            );
            let hi = nib_lin(IPT, load(&tmp));
            store(&mut tmp, hi);
            w[16..24].copy_from_slice(&tmp[..8]);
            for i in 0..8 {
                let base = 24 * i;
                // f = SubWord(RotWord(w[6i+5])) ^ rcon, then the six-word recurrence.
                tmp[..4].copy_from_slice(&w[base + 20..base + 24]);
                let f = _mm_xor_si128(sub_bytes_m(_mm_shuffle_epi8(load(&tmp), rot0)), rc(i));
                store(&mut tmp, f);
                let n = if i == 7 { 4 } else { 6 };
                for j in 0..n {
                    let o = base + 24 + 4 * j;
                    for b in 0..4 {
                        let prev = if j == 0 { tmp[b] } else { w[o - 4 + b] };
                        w[o + b] = w[o - 24 + b] ^ prev;
                    }
                }
            }
            for (i, slot) in mk.iter_mut().take(13).enumerate() {
                *slot = load(w[16 * i..16 * i + 16].try_into().unwrap());
            }
            w.zeroize();
            tmp.zeroize();
        }
        _ => unreachable!("key length checked by Aes::with_backend"),
    }
}

/// Fills the kernel layout from tower-basis round keys `mk[0..=nr]`.
#[inline]
#[target_feature(enable = "ssse3")]
fn convert(mk: &[__m128i; 15], nr: usize, k: &mut Keys) {
    let m63 = _mm_set1_epi8(M63 as i8);
    let db63 = _mm_set1_epi8(DB63 as i8);
    let s63 = _mm_set1_epi8(0x63);
    store(&mut k.enc[0], mk[0]);
    for r in 1..nr {
        let v = _mm_xor_si128(mk[r], m63);
        store(&mut k.enc[r], _mm_shuffle_epi8(v, c128(ENC_Q[r % 4])));
    }
    let last = _mm_xor_si128(nib_lin(KOUT, mk[nr]), s63);
    store(&mut k.enc[nr], _mm_shuffle_epi8(last, c128(ENC_Q[nr % 4])));

    let first = nib_lin(DIPT, nib_lin(KOUT, mk[nr]));
    store(&mut k.dec[0], _mm_xor_si128(first, db63));
    for r in 1..nr {
        let y = mk[nr - r];
        let p = DEC_KEYPERM[r % 4];
        let mut acc = db63;
        for (m, t) in [KDEC14, KDEC11, KDEC13, KDEC9].into_iter().enumerate() {
            acc = _mm_xor_si128(acc, _mm_shuffle_epi8(nib_lin(t, y), c128(p[m])));
        }
        store(&mut k.dec[r], acc);
    }
    let k0 = nib_lin(KOUT, mk[0]);
    store(&mut k.dec[nr], _mm_shuffle_epi8(k0, c128(DEC_Q[nr % 4])));
}

#[target_feature(enable = "ssse3")]
fn expand_ssse3(key: &[u8], k: &mut Keys) {
    let mut mk = [_mm_setzero_si128(); 15];
    expand_m(key, &mut mk);
    convert(&mk, k.rounds, k);
    mk = [_mm_setzero_si128(); 15];
    // Keep the wipe of the register copies from being optimised away.
    core::hint::black_box(&mut mk);
}

#[target_feature(enable = "ssse3")]
fn from_round_keys_ssse3(enc: &[[u8; 16]], k: &mut Keys) {
    let mut mk = [_mm_setzero_si128(); 15];
    for (m, e) in mk.iter_mut().zip(enc) {
        *m = nib_lin(IPT, load(e));
    }
    convert(&mk, k.rounds, k);
    mk = [_mm_setzero_si128(); 15];
    core::hint::black_box(&mut mk);
}

/// An all-zero schedule: the placeholder [`expand_into`] and [`from_round_keys_into`] fill.
pub(crate) const ZERO: Keys = Keys {
    enc: [[0; 16]; 15],
    dec: [[0; 16]; 15],
    rounds: 10,
};

#[cfg(test)]
pub(crate) fn expand(key: &[u8]) -> Keys {
    let mut k = ZERO;
    expand_into(key, &mut k);
    k
}

/// The schedule of `key`, written into `k` where it lives. IMPLEMENTATION NOTE (session 25):
/// built by value and then boxed, the 488-byte schedule was returned through a temporary in
/// the caller's frame that nothing wiped (`tests/residue.rs` found AES-192's last decryption
/// key, which is round key 0 itself, on the stack after key setup).
pub(crate) fn expand_into(key: &[u8], k: &mut Keys) {
    k.rounds = key.len() / 4 + 6;
    // SAFETY: this module is reached only through `Backend::Vpaes`, whose availability (SSSE3)
    // `Aes::with_backend` checked.
    unsafe { expand_ssse3(key, k) };
}

#[cfg(test)]
pub(crate) fn from_round_keys(enc: &[[u8; 16]]) -> Keys {
    let mut k = ZERO;
    from_round_keys_into(enc, &mut k);
    k
}

/// [`expand_into`] from standard (FIPS-197) encryption round keys.
pub(crate) fn from_round_keys_into(enc: &[[u8; 16]], k: &mut Keys) {
    k.rounds = enc.len() - 1;
    // SAFETY: as in `expand_into`: reached only for `Backend::Vpaes`, which requires SSSE3.
    unsafe { from_round_keys_ssse3(enc, k) };
}

// ---------------------------------------------------------------------------------------------
// Block kernels, written once and instantiated for xmm (SSSE3) and ymm (AVX2).
//
// Each instantiation provides `V` (the vector type), `B` (blocks per vector), and `splat`,
// `bcast`, `xor`, `and`, `srl4`, `shuf`, `load_v`, `store_v`, `chain`, `ctr_init`, `ctr_step`,
// `bswap` helpers with its target feature.

/// Runs `$f::<NR, ...>` with `NR` bound to the schedule's round count as a const.
macro_rules! by_rounds {
    ($rounds:expr, $f:ident ( $($a:expr),* )) => {
        match $rounds {
            10 => $f::<10>($($a),*),
            12 => $f::<12>($($a),*),
            _ => $f::<14>($($a),*),
        }
    };
}

/// Encrypts an array of vectors with the kernel helpers in scope (`[V; 15]` round keys `$rk`).
/// (A macro, not a function: `#[inline(always)]` cannot be combined with
/// `#[target_feature]`, and the hot loops must not call per batch.)
macro_rules! enc_body {
    ($nr:ident, $rk:expr, $x:expr) => {{
        let t = inv_tables();
        let ipt = pair(IPT);
        let sb1 = pair(SB1);
        let sb2 = pair(SB2);
        let mut z = $x;
        for v in z.iter_mut() {
            *v = xor(lin(&t, &ipt, *v), $rk[0]);
        }
        for r in 1..$nr {
            let mc1 = splat(ENC_MC1[r % 4]);
            let mc3 = splat(ENC_MC3[r % 4]);
            for v in z.iter_mut() {
                let (io, jo) = invert(&t, *v);
                let s1 = out(&sb1, io, jo);
                // MixColumns: 2s + 3 rot1(s) + rot2(s) + rot3(s)
                //           = (2s + rot1 s) + rot1(2s + rot1 s) + rot3(s).
                let a = xor3(shuf(sb2[0], io), shuf(sb2[1], jo), shuf(s1, mc1));
                *v = xor3(a, shuf(a, mc1), xor(shuf(s1, mc3), $rk[r]));
            }
        }
        let sbo = pair(SBO);
        let fix = splat(ENC_QI[$nr % 4]);
        for v in z.iter_mut() {
            let (io, jo) = invert(&t, *v);
            *v = shuf(xor(out(&sbo, io, jo), $rk[$nr]), fix);
        }
        z
    }};
}

/// Decrypts an array of vectors (equivalent inverse cipher); like `enc_body`.
/// (A macro, not a function: `#[inline(always)]` cannot be combined with
/// `#[target_feature]`, and the hot loops must not call per batch.)
macro_rules! dec_body {
    ($nr:ident, $rk:expr, $x:expr) => {{
        let t = inv_tables();
        let dipt = pair(DIPT);
        let (d9, d11, d13, d14) = (pair(DSB9), pair(DSB11), pair(DSB13), pair(DSB14));
        let mut z = $x;
        for v in z.iter_mut() {
            *v = xor(lin(&t, &dipt, *v), $rk[0]);
        }
        for r in 1..$nr {
            let p = splat(DEC_MC1[r % 4]);
            for v in z.iter_mut() {
                let (io, jo) = invert(&t, *v);
                // InvMixColumns by Horner: 14s + rot1(11s + rot1(13s + rot1(9s))).
                let mut a = out(&d9, io, jo);
                a = xor3(shuf(d13[0], io), shuf(d13[1], jo), shuf(a, p));
                a = xor3(shuf(d11[0], io), shuf(d11[1], jo), shuf(a, p));
                let d = xor(shuf(d14[0], io), $rk[r]);
                *v = xor3(d, shuf(d14[1], jo), shuf(a, p));
            }
        }
        let dsbo = pair(DSBO);
        let fix = splat(DEC_QI[$nr % 4]);
        for v in z.iter_mut() {
            let (io, jo) = invert(&t, *v);
            *v = shuf(xor(out(&dsbo, io, jo), $rk[$nr]), fix);
        }
        z
    }};
}

macro_rules! kernels {
    ($feat:literal, $lanes:expr) => {
        /// Vectors processed together by the parallel kernels.
        const LANES: usize = $lanes;
        /// Blocks per main-loop iteration.
        #[cfg(test)]
        pub(super) const BATCH: usize = B * LANES;

        /// The nibble mask and GF(16) inversion tables.
        #[derive(Clone, Copy)]
        struct Inv {
            nib: V,
            inv: V,
            inva: V,
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn inv_tables() -> Inv {
            Inv {
                nib: splat(NIB),
                inv: splat(INV),
                inva: splat(INVA),
            }
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn pair(p: [u128; 2]) -> [V; 2] {
            [splat(p[0]), splat(p[1])]
        }

        /// Low and high nibble of each byte.
        #[inline]
        #[target_feature(enable = $feat)]
        fn split(t: &Inv, z: V) -> (V, V) {
            (and(z, t.nib), and(srl4(z), t.nib))
        }

        /// The nibble inversion: returns (io, jo) for tower-basis bytes z.
        #[inline]
        #[target_feature(enable = $feat)]
        fn invert(t: &Inv, z: V) -> (V, V) {
            let (k, i) = split(t, z);
            let ak = shuf(t.inva, k);
            let j = xor(i, k);
            let iak = xor(shuf(t.inv, i), ak);
            let jak = xor(shuf(t.inv, j), ak);
            (xor(shuf(t.inv, iak), j), xor(shuf(t.inv, jak), i))
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn out(p: &[V; 2], io: V, jo: V) -> V {
            xor(shuf(p[0], io), shuf(p[1], jo))
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn lin(t: &Inv, p: &[V; 2], x: V) -> V {
            let (lo, hi) = split(t, x);
            out(p, lo, hi)
        }

        #[inline]
        #[target_feature(enable = $feat)]
        fn round_keys<const NR: usize>(rk: &[[u8; 16]; 15]) -> [V; 15] {
            let mut k = [splat(0); 15];
            for i in 0..=NR {
                k[i] = bcast(&rk[i]);
            }
            k
        }

        /// Encrypts N vectors (N * B blocks).
        #[inline]
        #[target_feature(enable = $feat)]
        fn enc_n<const NR: usize, const N: usize>(rk: &[V; 15], x: [V; N]) -> [V; N] {
            enc_body!(NR, rk, x)
        }

        /// Decrypts N vectors (equivalent inverse cipher).
        #[inline]
        #[target_feature(enable = $feat)]
        fn dec_n<const NR: usize, const N: usize>(rk: &[V; 15], x: [V; N]) -> [V; N] {
            dec_body!(NR, rk, x)
        }

        #[target_feature(enable = $feat)]
        fn ecb_enc<const NR: usize>(k: &Keys, buf: &mut [u8]) {
            let rk = round_keys::<NR>(&k.enc);
            let mut chunks = buf.chunks_exact_mut(16 * B * LANES);
            for c in &mut chunks {
                let x: [V; LANES] = core::array::from_fn(|i| load_v(c, i));
                for (i, v) in enc_body!(NR, rk, x).into_iter().enumerate() {
                    store_v(c, i, v);
                }
            }
            each_vector(chunks.into_remainder(), |c, _| {
                store_v(c, 0, enc_n::<NR, 1>(&rk, [load_v(c, 0)])[0])
            });
        }

        #[target_feature(enable = $feat)]
        fn ecb_dec<const NR: usize>(k: &Keys, buf: &mut [u8]) {
            let rk = round_keys::<NR>(&k.dec);
            let mut chunks = buf.chunks_exact_mut(16 * B * LANES);
            for c in &mut chunks {
                let x: [V; LANES] = core::array::from_fn(|i| load_v(c, i));
                for (i, v) in dec_body!(NR, rk, x).into_iter().enumerate() {
                    store_v(c, i, v);
                }
            }
            each_vector(chunks.into_remainder(), |c, _| {
                store_v(c, 0, dec_n::<NR, 1>(&rk, [load_v(c, 0)])[0])
            });
        }

        #[target_feature(enable = $feat)]
        fn cbc_dec<const NR: usize>(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
            let rk = round_keys::<NR>(&k.dec);
            // `prev` holds the ciphertext block before the current vector in its last lane.
            let mut prev = bcast(iv);
            let mut chunks = buf.chunks_exact_mut(16 * B * LANES);
            for c in &mut chunks {
                let ct: [V; LANES] = core::array::from_fn(|i| load_v(c, i));
                let pt: [V; LANES] = dec_body!(NR, rk, ct);
                for i in 0..LANES {
                    let before = if i == 0 { prev } else { ct[i - 1] };
                    store_v(c, i, xor(pt[i], chain(before, ct[i])));
                }
                prev = ct[LANES - 1];
            }
            each_vector(chunks.into_remainder(), |c, n| {
                let ct = load_v(c, 0);
                let pt = dec_n::<NR, 1>(&rk, [ct])[0];
                store_v(c, 0, xor(pt, chain(prev, ct)));
                // A part-filled vector holds n blocks in its first lanes.
                prev = if n == B { ct } else { to_last(ct, n) };
            });
            last_block(prev, iv);
        }

        #[target_feature(enable = $feat)]
        fn ctr<const NR: usize>(k: &Keys, ctr: u128, buf: &mut [u8]) {
            let rk = round_keys::<NR>(&k.enc);
            let bs = bswap();
            // Little-endian 128-bit counters (low 64 bits in the low lane), one per block of a
            // vector, incremented with a branch-free carry (the counter may be secret).
            let mut c = ctr_init(ctr);
            let mut chunks = buf.chunks_exact_mut(16 * B * LANES);
            for ch in &mut chunks {
                let x: [V; LANES] = core::array::from_fn(|_| {
                    let v = shuf(c, bs);
                    c = ctr_step(c);
                    v
                });
                for (i, v) in enc_body!(NR, rk, x).into_iter().enumerate() {
                    store_v(ch, i, xor(v, load_v(ch, i)));
                }
            }
            each_vector(chunks.into_remainder(), |ch, _| {
                let ks = enc_n::<NR, 1>(&rk, [shuf(c, bs)])[0];
                store_v(ch, 0, xor(ks, load_v(ch, 0)));
                c = ctr_step(c);
            });
        }

        pub(super) fn encrypt_blocks(k: &Keys, buf: &mut [u8]) {
            // SAFETY: the `vpaes` entry points call this instantiation only on a CPU with its
            // target feature: SSSE3 was checked by `Aes::with_backend` for `Backend::Vpaes`,
            // AVX2 / AVX-512BW by `width()` before choosing the ymm / zmm kernels.
            unsafe { by_rounds!(k.rounds, ecb_enc(k, buf)) }
        }

        pub(super) fn decrypt_blocks(k: &Keys, buf: &mut [u8]) {
            // SAFETY: the `vpaes` entry points call this instantiation only on a CPU with its
            // target feature: SSSE3 was checked by `Aes::with_backend` for `Backend::Vpaes`,
            // AVX2 / AVX-512BW by `width()` before choosing the ymm / zmm kernels.
            unsafe { by_rounds!(k.rounds, ecb_dec(k, buf)) }
        }

        pub(super) fn cbc_decrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
            // SAFETY: the `vpaes` entry points call this instantiation only on a CPU with its
            // target feature: SSSE3 was checked by `Aes::with_backend` for `Backend::Vpaes`,
            // AVX2 / AVX-512BW by `width()` before choosing the ymm / zmm kernels.
            unsafe { by_rounds!(k.rounds, cbc_dec(k, iv, buf)) }
        }

        pub(super) fn ctr_xor(k: &Keys, c: u128, buf: &mut [u8]) {
            // SAFETY: the `vpaes` entry points call this instantiation only on a CPU with its
            // target feature: SSSE3 was checked by `Aes::with_backend` for `Backend::Vpaes`,
            // AVX2 / AVX-512BW by `width()` before choosing the ymm / zmm kernels.
            unsafe { by_rounds!(k.rounds, ctr(k, c, buf)) }
        }
    };
}

/// One block per xmm register, SSSE3.
mod x1 {
    use core::arch::x86_64::*;

    use super::tables::*;
    use super::{Keys, c128, load, store};

    type V = __m128i;
    const B: usize = 1;

    #[inline]
    #[target_feature(enable = "ssse3")]
    fn splat(x: u128) -> V {
        c128(x)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn bcast(b: &[u8; 16]) -> V {
        load(b)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn xor(a: V, b: V) -> V {
        _mm_xor_si128(a, b)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn and(a: V, b: V) -> V {
        _mm_and_si128(a, b)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn srl4(a: V) -> V {
        _mm_srli_epi32::<4>(a)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn shuf(t: V, i: V) -> V {
        _mm_shuffle_epi8(t, i)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn load_v(buf: &[u8], i: usize) -> V {
        load(buf[16 * i..16 * i + 16].try_into().unwrap())
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn store_v(buf: &mut [u8], i: usize, v: V) {
        store((&mut buf[16 * i..16 * i + 16]).try_into().unwrap(), v)
    }
    /// The CBC chaining value for vector `cur`, given the vector before it.
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn chain(before: V, _cur: V) -> V {
        before
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn last_block(v: V, out: &mut [u8; 16]) {
        store(out, v)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn bswap() -> V {
        _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn ctr_init(c: u128) -> V {
        _mm_set_epi64x((c >> 64) as i64, c as i64)
    }
    /// c + 1 mod 2^128 without branches: the low half carried iff it is now zero (SSSE3 has
    /// no 64-bit compare; both 32-bit halves zero is the same test).
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn ctr_step(c: V) -> V {
        let s = _mm_add_epi64(c, _mm_set_epi64x(0, 1));
        let z = _mm_cmpeq_epi32(s, _mm_setzero_si128());
        let z64 = _mm_and_si128(z, _mm_shuffle_epi32::<0b10_11_00_01>(z));
        // All-ones (-1) moved from the low lane to the high lane: subtracting it adds the carry.
        _mm_sub_epi64(s, _mm_slli_si128::<8>(z64))
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn xor3(a: V, b: V, c: V) -> V {
        xor(xor(a, b), c)
    }
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn to_last(v: V, _n: usize) -> V {
        v
    }
    /// Calls `f(vector, 1)` on each vector of `rest` (fewer than LANES of them).
    #[inline]
    #[target_feature(enable = "ssse3")]
    fn each_vector(rest: &mut [u8], mut f: impl FnMut(&mut [u8], usize)) {
        for c in rest.chunks_exact_mut(16) {
            f(c, 1)
        }
    }

    kernels!("ssse3", 5);

    /// CBC encryption is serial: one block at a time, so latency is all that counts.
    /// IMPLEMENTATION NOTE: the round is written out here (a call per block cost ~20%), and
    /// MixColumns is 2s + rot1(2s) + rot1(s) + rot2(s) + rot3(s) with the four rotations side
    /// by side and an XOR tree, two steps shorter than the chained form of `enc_n`.
    #[target_feature(enable = "ssse3")]
    fn cbc_enc<const NR: usize>(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
        let rk = round_keys::<NR>(&k.enc);
        let t = inv_tables();
        let (ipt, sb1, sb2, sbo) = (pair(IPT), pair(SB1), pair(SB2), pair(SBO));
        let mc: [[V; 3]; 4] =
            core::array::from_fn(|r| [splat(ENC_MC1[r]), splat(ENC_MC2[r]), splat(ENC_MC3[r])]);
        let fix = splat(ENC_QI[NR % 4]);
        let mut c = load(iv);
        for blk in buf.chunks_exact_mut(16) {
            let blk: &mut [u8; 16] = blk.try_into().unwrap();
            let mut z = xor(lin(&t, &ipt, xor(load(blk), c)), rk[0]);
            for r in 1..NR {
                let [m1, m2, m3] = mc[r % 4];
                let (io, jo) = invert(&t, z);
                let s1 = out(&sb1, io, jo);
                let s2 = out(&sb2, io, jo);
                let a = xor(shuf(s1, m1), shuf(s2, m1));
                let b = xor(shuf(s1, m2), shuf(s1, m3));
                z = xor(xor(a, b), xor(s2, rk[r]));
            }
            let (io, jo) = invert(&t, z);
            c = shuf(xor(out(&sbo, io, jo), rk[NR]), fix);
            store(blk, c);
        }
        store(iv, c);
    }

    pub(super) fn cbc_encrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
        // SAFETY: reached only through `Backend::Vpaes`, whose availability (SSSE3)
        // `Aes::with_backend` checked.
        unsafe { by_rounds!(k.rounds, cbc_enc(k, iv, buf)) }
    }
}

/// Two blocks per ymm register, AVX2 (`vpshufb` shuffles within each 128-bit lane).
mod x2 {
    use core::arch::x86_64::*;

    use super::tables::*;
    use super::{Keys, load, store};
    use zeroize::Zeroize;

    type V = __m256i;
    const B: usize = 2;

    #[inline]
    #[target_feature(enable = "avx2")]
    fn splat(x: u128) -> V {
        let (hi, lo) = ((x >> 64) as i64, x as i64);
        _mm256_set_epi64x(hi, lo, hi, lo)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn bcast(b: &[u8; 16]) -> V {
        _mm256_broadcastsi128_si256(load(b))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn xor(a: V, b: V) -> V {
        _mm256_xor_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn and(a: V, b: V) -> V {
        _mm256_and_si256(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn srl4(a: V) -> V {
        _mm256_srli_epi32::<4>(a)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn shuf(t: V, i: V) -> V {
        _mm256_shuffle_epi8(t, i)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn load_v(buf: &[u8], i: usize) -> V {
        let b: &[u8; 32] = buf[32 * i..32 * i + 32].try_into().unwrap();
        // SAFETY: `b` is 32 readable bytes; the load is unaligned.
        unsafe { _mm256_loadu_si256(b.as_ptr().cast()) }
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn store_v(buf: &mut [u8], i: usize, v: V) {
        let b: &mut [u8; 32] = (&mut buf[32 * i..32 * i + 32]).try_into().unwrap();
        // SAFETY: `b` is 32 writable bytes; the store is unaligned.
        unsafe { _mm256_storeu_si256(b.as_mut_ptr().cast(), v) }
    }
    /// The CBC chaining values for vector `cur`: [last block of `before`, first of `cur`].
    #[inline]
    #[target_feature(enable = "avx2")]
    fn chain(before: V, cur: V) -> V {
        _mm256_permute2x128_si256::<0x03>(cur, before)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn xor3(a: V, b: V, c: V) -> V {
        xor(xor(a, b), c)
    }
    /// Moves block `n - 1` (here always 0) to the last lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn to_last(v: V, _n: usize) -> V {
        _mm256_permute2x128_si256::<0x00>(v, v)
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn last_block(v: V, out: &mut [u8; 16]) {
        store(out, _mm256_extracti128_si256::<1>(v))
    }
    #[inline]
    #[target_feature(enable = "avx2")]
    fn bswap() -> V {
        splat(0x000102030405060708090a0b0c0d0e0f)
    }
    /// Counters c and c + 1 (mod 2^128), little-endian, one per lane.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn ctr_init(c: u128) -> V {
        let d = c.wrapping_add(1);
        _mm256_set_epi64x((d >> 64) as i64, d as i64, (c >> 64) as i64, c as i64)
    }
    /// Each lane + 2 mod 2^128 without branches: carry where the new low half is below 2
    /// (unsigned compare through the sign-flip trick), moved into the high half.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn ctr_step(c: V) -> V {
        let k = _mm256_set_epi64x(0, 2, 0, 2);
        let s = _mm256_add_epi64(c, k);
        let flip = _mm256_set1_epi64x(i64::MIN);
        let carry = _mm256_cmpgt_epi64(_mm256_xor_si256(k, flip), _mm256_xor_si256(s, flip));
        _mm256_sub_epi64(s, _mm256_slli_si256::<8>(carry))
    }
    /// Calls `f(vector, blocks)` on each vector of `rest` (fewer than LANES of them); a final
    /// single block is passed in the first lane of a zero-padded copy.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn each_vector(rest: &mut [u8], mut f: impl FnMut(&mut [u8], usize)) {
        let mut it = rest.chunks_exact_mut(32);
        for c in &mut it {
            f(c, 2)
        }
        let tail = it.into_remainder();
        if !tail.is_empty() {
            let mut tmp = [0u8; 32];
            tmp[..16].copy_from_slice(tail);
            f(&mut tmp, 1);
            tail.copy_from_slice(&tmp[..16]);
            tmp.zeroize();
        }
    }

    kernels!("avx2", 4);
}

/// Four blocks per zmm register, AVX-512BW; three-input XORs are one `vpternlogq`.
mod x3 {
    use core::arch::x86_64::*;

    use super::tables::*;
    use super::{Keys, c128, load, store};
    use zeroize::Zeroize;

    type V = __m512i;
    const B: usize = 4;

    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn splat(x: u128) -> V {
        _mm512_broadcast_i32x4(c128(x))
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn bcast(b: &[u8; 16]) -> V {
        _mm512_broadcast_i32x4(load(b))
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn xor(a: V, b: V) -> V {
        _mm512_xor_si512(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn xor3(a: V, b: V, c: V) -> V {
        _mm512_ternarylogic_epi64::<0x96>(a, b, c)
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn and(a: V, b: V) -> V {
        _mm512_and_si512(a, b)
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn srl4(a: V) -> V {
        _mm512_srli_epi32::<4>(a)
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn shuf(t: V, i: V) -> V {
        _mm512_shuffle_epi8(t, i)
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn load_v(buf: &[u8], i: usize) -> V {
        let b: &[u8; 64] = buf[64 * i..64 * i + 64].try_into().unwrap();
        // SAFETY: `b` is 64 readable bytes; the load is unaligned.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn store_v(buf: &mut [u8], i: usize, v: V) {
        let b: &mut [u8; 64] = (&mut buf[64 * i..64 * i + 64]).try_into().unwrap();
        // SAFETY: `b` is 64 writable bytes; the store is unaligned.
        unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), v) }
    }
    /// The CBC chaining values for vector `cur`: [last block of `before`, blocks 0..3 of `cur`].
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn chain(before: V, cur: V) -> V {
        _mm512_alignr_epi64::<6>(cur, before)
    }
    /// Moves block `n - 1` to the last lane (n = 1..3; a length, not a secret).
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn to_last(v: V, n: usize) -> V {
        match n {
            1 => _mm512_shuffle_i64x2::<0x00>(v, v),
            2 => _mm512_shuffle_i64x2::<0x55>(v, v),
            _ => _mm512_shuffle_i64x2::<0xaa>(v, v),
        }
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn last_block(v: V, out: &mut [u8; 16]) {
        store(out, _mm512_extracti32x4_epi32::<3>(v))
    }
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn bswap() -> V {
        splat(0x000102030405060708090a0b0c0d0e0f)
    }
    /// Counters c .. c + 3 (mod 2^128), little-endian, one per lane.
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn ctr_init(c: u128) -> V {
        let l = |d: u128| {
            let v = c.wrapping_add(d);
            [(v >> 64) as i64, v as i64]
        };
        let ([h3, l3], [h2, l2], [h1, l1], [h0, l0]) = (l(3), l(2), l(1), l(0));
        _mm512_set_epi64(h3, l3, h2, l2, h1, l1, h0, l0)
    }
    /// Each lane + 4 mod 2^128 without branches: an unsigned compare finds the lanes whose low
    /// half wrapped, and a masked add carries into their high halves.
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn ctr_step(c: V) -> V {
        let k = _mm512_set_epi64(0, 4, 0, 4, 0, 4, 0, 4);
        let s = _mm512_add_epi64(c, k);
        let wrapped = _mm512_cmplt_epu64_mask(s, k) & 0x55;
        _mm512_mask_add_epi64(s, wrapped << 1, s, _mm512_set1_epi64(1))
    }
    /// Calls `f(vector, blocks)` on each vector of `rest` (fewer than LANES of them); a final
    /// 1..3 blocks are passed in the first lanes of a zero-padded copy.
    #[inline]
    #[target_feature(enable = "avx512bw")]
    fn each_vector(rest: &mut [u8], mut f: impl FnMut(&mut [u8], usize)) {
        let mut it = rest.chunks_exact_mut(64);
        for c in &mut it {
            f(c, 4)
        }
        let tail = it.into_remainder();
        if !tail.is_empty() {
            let mut tmp = [0u8; 64];
            tmp[..tail.len()].copy_from_slice(tail);
            f(&mut tmp, tail.len() / 16);
            tail.copy_from_slice(&tmp[..tail.len()]);
            tmp.zeroize();
        }
    }

    kernels!("avx512bw", 4);
}

/// The widest kernels this CPU runs: zmm with AVX-512BW, ymm with AVX2, else xmm.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Width {
    X1,
    X2,
    X3,
}

#[inline]
fn width() -> Width {
    let f = crate::cpu::features();
    if f.avx512f && f.avx512bw && f.avx2 {
        Width::X3
    } else if f.avx2 {
        Width::X2
    } else {
        Width::X1
    }
}

// IMPLEMENTATION NOTE: a buffer shorter than one wide vector goes to narrower kernels: a
// zero-padded zmm for one block costs ~1.8x the xmm kernel's time (16 B CTR: 106 vs 60 ns).
macro_rules! entry {
    ($( fn $name:ident( $($arg:ident : $ty:ty),* ) on $buf:ident; )*) => {$(
        pub(crate) fn $name(k: &Keys, $($arg: $ty),*) {
            match width() {
                Width::X3 if $buf.len() >= 64 => x3::$name(k, $($arg),*),
                Width::X3 | Width::X2 if $buf.len() >= 32 => x2::$name(k, $($arg),*),
                _ => x1::$name(k, $($arg),*),
            }
        }
    )*};
}

entry! {
    fn encrypt_blocks(buf: &mut [u8]) on buf;
    fn decrypt_blocks(buf: &mut [u8]) on buf;
    fn cbc_decrypt(iv: &mut [u8; 16], buf: &mut [u8]) on buf;
    fn ctr_xor(c: u128, buf: &mut [u8]) on buf;
}

pub(crate) fn cbc_encrypt(k: &Keys, iv: &mut [u8; 16], buf: &mut [u8]) {
    x1::cbc_encrypt(k, iv, buf)
}

#[cfg(test)]
mod tests;

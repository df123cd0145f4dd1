//! DELIBERATELY INSECURE AES, compiled only into this checker, never into `aesx`.
//!
//! A textbook byte-oriented AES whose S-box is a 256-byte table indexed by state and key bytes
//! (a secret-dependent memory address), in two flavours:
//!
//! * [`Leak::Table`]: only the table lookups leak. Memcheck must report them ("Use of
//!   uninitialised value of size 8"); a timing test on a quiet L1 usually cannot see them,
//!   because the whole 256-byte table stays in cache.
//! * [`Leak::TableAndBranch`]: the same, plus the classic branchy `xtime` in MixColumns
//!   (`if a & 0x80 != 0 { (a << 1) ^ 0x1b }`), a secret-dependent branch that both memcheck
//!   ("Conditional jump or move depends on uninitialised value") and the timing test must flag.
//!
//! These exist to prove that both checks can fail. They compute correct AES (checked against
//! `aesx` in the tests), so a check that passes them would be a check that sees nothing.
#![forbid(unsafe_code)]

use core::hint::black_box;

/// Which leak is planted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leak {
    Table,
    TableAndBranch,
}

const fn gmul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0u8;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
        b >>= 1;
    }
    p
}

const fn affine(y: u8) -> u8 {
    y ^ y.rotate_left(1) ^ y.rotate_left(2) ^ y.rotate_left(3) ^ y.rotate_left(4) ^ 0x63
}

/// The S-box, generated at compile time from its definition (inverse in GF(2^8), then the
/// affine map), and its inverse. Walks the powers of the generator 3 (p) together with the
/// powers of its inverse 0xf6 (q), so q = p^-1 at every step.
const fn tables() -> ([u8; 256], [u8; 256]) {
    let mut s = [0u8; 256];
    let mut inv = [0u8; 256];
    s[0] = affine(0);
    let (mut p, mut q) = (1u8, 1u8);
    let mut i = 0;
    while i < 255 {
        s[p as usize] = affine(q);
        p = gmul(p, 3);
        q = gmul(q, 0xf6);
        i += 1;
    }
    let mut x = 0;
    while x < 256 {
        inv[s[x] as usize] = x as u8;
        x += 1;
    }
    (s, inv)
}

static SBOX: [u8; 256] = tables().0;
static INV_SBOX: [u8; 256] = tables().1;

/// A key schedule of the insecure AES.
pub struct LeakyAes {
    rk: [[u8; 16]; 15],
    rounds: usize,
    leak: Leak,
}

impl LeakyAes {
    /// Table-driven FIPS-197 key expansion (the S-box lookups leak the key).
    pub fn new(key: &[u8], leak: Leak) -> LeakyAes {
        assert!(matches!(key.len(), 16 | 24 | 32), "AES key length");
        let nk = key.len() / 4;
        let rounds = nk + 6;
        let mut w = [[0u8; 4]; 60];
        for (i, c) in key.chunks_exact(4).enumerate() {
            w[i].copy_from_slice(c);
        }
        let mut rcon = 1u8;
        for i in nk..4 * (rounds + 1) {
            let mut t = w[i - 1];
            if i % nk == 0 {
                t = [
                    SBOX[t[1] as usize] ^ rcon,
                    SBOX[t[2] as usize],
                    SBOX[t[3] as usize],
                    SBOX[t[0] as usize],
                ];
                rcon = gmul(rcon, 2);
            } else if nk > 6 && i % nk == 4 {
                t = t.map(|b| SBOX[b as usize]);
            }
            for j in 0..4 {
                w[i][j] = w[i - nk][j] ^ t[j];
            }
        }
        let mut rk = [[0u8; 16]; 15];
        for (r, k) in rk.iter_mut().enumerate().take(rounds + 1) {
            for c in 0..4 {
                k[4 * c..4 * c + 4].copy_from_slice(&w[4 * r + c]);
            }
        }
        LeakyAes { rk, rounds, leak }
    }

    /// The encryption round keys (rounds + 1 of them), flattened.
    pub fn round_keys(&self) -> &[[u8; 16]] {
        &self.rk[..=self.rounds]
    }

    fn xtime(&self, a: u8) -> u8 {
        match self.leak {
            // Branch-free doubling: only the table lookups leak.
            Leak::Table => (a << 1) ^ (0u8.wrapping_sub(a >> 7) & 0x1b),
            // The classic leak. `black_box` keeps the compiler from turning the branch into a
            // select, so the generated code really branches on the secret bit.
            Leak::TableAndBranch => {
                if a & 0x80 != 0 {
                    black_box((a << 1) ^ 0x1b)
                } else {
                    a << 1
                }
            }
        }
    }

    fn mul(&self, a: u8, b: u8) -> u8 {
        // b is a public MixColumns constant (1, 2, 3, 9, 11, 13, 14).
        let mut p = 0;
        let mut a = a;
        let mut b = b;
        while b != 0 {
            if b & 1 != 0 {
                p ^= a;
            }
            a = self.xtime(a);
            b >>= 1;
        }
        p
    }

    fn mix(&self, s: &mut [u8; 16], m: [u8; 4]) {
        for c in 0..4 {
            let a = [s[4 * c], s[4 * c + 1], s[4 * c + 2], s[4 * c + 3]];
            for r in 0..4 {
                s[4 * c + r] = (0..4).fold(0, |acc, j| acc ^ self.mul(a[(r + j) % 4], m[j]));
            }
        }
    }

    /// Encrypts one block.
    pub fn encrypt_block(&self, b: &mut [u8; 16]) {
        add(b, &self.rk[0]);
        for r in 1..=self.rounds {
            let t = *b;
            for c in 0..4 {
                for row in 0..4 {
                    b[4 * c + row] = SBOX[t[4 * ((c + row) % 4) + row] as usize];
                }
            }
            if r != self.rounds {
                self.mix(b, [2, 3, 1, 1]);
            }
            add(b, &self.rk[r]);
        }
    }

    /// Decrypts one block.
    pub fn decrypt_block(&self, b: &mut [u8; 16]) {
        add(b, &self.rk[self.rounds]);
        for r in (0..self.rounds).rev() {
            let t = *b;
            for c in 0..4 {
                for row in 0..4 {
                    b[4 * ((c + row) % 4) + row] = INV_SBOX[t[4 * c + row] as usize];
                }
            }
            add(b, &self.rk[r]);
            if r != 0 {
                self.mix(b, [14, 11, 13, 9]);
            }
        }
    }
}

fn add(s: &mut [u8; 16], k: &[u8; 16]) {
    s.iter_mut().zip(k).for_each(|(a, b)| *a ^= b);
}

/// DELIBERATELY LEAKY PKCS#7 unpadding, the same shape as `aesx::pkcs7_unpad` (a validity
/// check, the validity declassified, one branch on it) but with the check written the naive
/// way: a range test and a `while` loop that stops at the first wrong byte, so the number of
/// iterations and the exits depend on the secret padding. Memcheck must report it; the old
/// function-wide `fun:*pkcs7_unpad*` suppression hid exactly this (its name matches).
pub fn pkcs7_unpad_early_exit(data: &[u8]) -> Option<usize> {
    if data.is_empty() || !data.len().is_multiple_of(16) {
        return None;
    }
    let last = &data[data.len() - 16..];
    let p = last[15] as usize;
    let mut ok = (1..=16).contains(&p);
    let mut i = 0;
    while ok && i < p {
        ok = last[15 - i] as usize == p;
        i += 1;
    }
    let mut check = aesx::hazmat::Pkcs7Check {
        valid: ok as u32,
        pad: p as u32,
    };
    crate::vg::declassify_val(&mut check);
    (check.valid == 1).then(|| data.len() - check.pad as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn planted_aes_is_correct_aes() {
        // FIPS-197 Appendix C vectors, key 00 01 .. and plaintext 00 11 22 .. ff.
        let key: Vec<u8> = (0u8..32).collect();
        let pt: [u8; 16] = core::array::from_fn(|i| (i as u8) * 0x11);
        let want = [
            "69c4e0d86a7b0430d8cdb78070b4c55a",
            "dda97ca4864cdfe06eaf70a0ec0d7191",
            "8ea2b7ca516745bfeafc49904b496089",
        ];
        for leak in [Leak::Table, Leak::TableAndBranch] {
            for (kl, want) in [16, 24, 32].into_iter().zip(want) {
                let a = LeakyAes::new(&key[..kl], leak);
                let mut b = pt;
                a.encrypt_block(&mut b);
                let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
                assert_eq!(hex, want, "{leak:?} {kl}");
                a.decrypt_block(&mut b);
                assert_eq!(b, pt);
            }
        }
    }
}

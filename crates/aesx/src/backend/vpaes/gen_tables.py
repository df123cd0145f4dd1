#!/usr/bin/env python3
"""Generates tables.rs for the vpaes backend and checks every table by simulating the whole
cipher (with PSHUFB semantics) against a plain reference AES.

Run: python3 gen_tables.py > tables.rs && cargo fmt   (from this folder)

The construction (Hamburg, "Accelerating AES with Vector Permute Instructions", CHES 2009):
a byte x of the AES state is held as M(x), its image in the tower field
GF(16)[t] / (t^2 + a t + a), high nibble = coefficient of t, low nibble = constant term.
M is a GF(2)-linear field isomorphism, so inverting in the tower inverts the AES byte.
With i = high nibble, k = low nibble, j = i ^ k, and 1/0 represented as 0x80 (PSHUFB then
returns 0 for that lane):
    iak = 1/i ^ a/k      jak = 1/j ^ a/k
    io  = 1/iak ^ j      jo  = 1/jak ^ i
and for X = i t + k with norm N = a i^2 + a i k + k^2:
    1/io = (a i + k) / N                     = low coordinate of X^-1
    1/jo = (a i + (1 + a) k) / N             = (1 + a) low + a^2 high
so the inverse is a GF(2)-linear function of (1/io, 1/jo), and each output table is
T[io] ^ U[jo] with the linear layer (S-box affine map, MixColumns multiplier, next basis) folded
in. The byte order drifts by ShiftRows every round, which the MixColumns rotations and the
stored round keys absorb; one shuffle at the end restores the order.
"""

import random
import sys

# ---------------------------------------------------------------- fields


def gf16_mul(x, y):
    r = 0
    for _ in range(4):
        if y & 1:
            r ^= x
        y >>= 1
        x <<= 1
        if x & 0x10:
            x ^= 0x13  # x^4 + x + 1
    return r


def gf16_inv(x):
    return next(y for y in range(16) if gf16_mul(x, y) == 1)


def gf256_mul(x, y):
    r = 0
    for _ in range(8):
        if y & 1:
            r ^= x
        y >>= 1
        x <<= 1
        if x & 0x100:
            x ^= 0x11B
    return r


def gf256_inv(x):
    if x == 0:
        return 0
    return next(y for y in range(256) if gf256_mul(x, y) == 1)


def irreducible(a):
    return all(gf16_mul(x, x) ^ gf16_mul(a, x) ^ a for x in range(16))


# Smallest a (not 0 or 1) for which t^2 + a t + a is irreducible over GF(16).
A = next(a for a in range(2, 16) if irreducible(a))


def tmul(x, y):
    """Multiply in the tower: x = h t + l with t^2 = a t + a."""
    h1, l1, h2, l2 = x >> 4, x & 15, y >> 4, y & 15
    hh = gf16_mul(h1, h2)
    hi = gf16_mul(hh, A) ^ gf16_mul(h1, l2) ^ gf16_mul(l1, h2)
    lo = gf16_mul(hh, A) ^ gf16_mul(l1, l2)
    return hi << 4 | lo


def tpow(x, n):
    r = 0x01
    for _ in range(n):
        r = tmul(r, x)
    return r


# A root beta of the AES polynomial in the tower; M maps bit n (= x^n) to beta^n.
def aes_poly(b):
    v = 0
    for n in (8, 4, 3, 1, 0):
        v ^= tpow(b, n)
    return v


BETA = next(b for b in range(2, 256) if aes_poly(b) == 0)
MCOL = [tpow(BETA, n) for n in range(8)]


def lin(cols, x):
    r = 0
    for n in range(8):
        if x >> n & 1:
            r ^= cols[n]
    return r


def M(x):
    return lin(MCOL, x)


MINV_T = [0] * 256
for _x in range(256):
    MINV_T[M(_x)] = _x
assert sorted(MINV_T) == list(range(256))
for _x in range(256):
    for _y in range(0, 256, 7):
        assert M(gf256_mul(_x, _y)) == tmul(M(_x), M(_y))


def Minv(y):
    return MINV_T[y]


def affine(x):
    """The S-box affine map without its constant 0x63."""
    r = 0
    for n in range(8):
        b = 0
        for s in (0, 4, 5, 6, 7):
            b ^= x >> ((n + s) % 8) & 1
        r |= b << n
    return r


AINV_T = [0] * 256
for _x in range(256):
    AINV_T[affine(_x)] = _x


def Ainv(x):
    return AINV_T[x]


SBOX = [affine(gf256_inv(x)) ^ 0x63 for x in range(256)]
assert SBOX[0x00] == 0x63 and SBOX[0x53] == 0xED
ISBOX = [0] * 256
for _x in range(256):
    ISBOX[SBOX[_x]] = _x

# ---------------------------------------------------------------- PSHUFB model

INF = 0x80


def look(table, v):
    """One PSHUFB lane: table[v & 15], or 0 when bit 7 of the index is set."""
    return 0 if v & 0x80 else table[v & 15]


INV = [INF] + [gf16_inv(x) for x in range(1, 16)]
INVA = [INF] + [gf16_mul(A, gf16_inv(x)) for x in range(1, 16)]


def invert_parts(z):
    """The nibble part of the round: returns (io, jo) for a tower byte z."""
    k = z & 15
    i = z >> 4
    ak = look(INVA, k)
    j = i ^ k
    iak = look(INV, i) ^ ak
    jak = look(INV, j) ^ ak
    io = look(INV, iak) ^ j
    jo = look(INV, jak) ^ i
    return io, jo


A2INV = gf16_inv(gf16_mul(A, A))


def part_io(io):
    """Tower byte that io contributes to the inverse (io in 1..15)."""
    if io == 0:
        return 0
    lo = gf16_inv(io)
    hi = gf16_mul(A2INV, gf16_mul(1 ^ A, lo))
    return hi << 4 | lo


def part_jo(jo):
    if jo == 0:
        return 0
    return gf16_mul(A2INV, gf16_inv(jo)) << 4


def out_pair(f):
    """Tables (T, U) with T[io] ^ U[jo] = f(tower inverse) for linear f on tower bytes."""
    return [f(part_io(n)) for n in range(16)], [f(part_jo(n)) for n in range(16)]


def tower_inverse(z):
    io, jo = invert_parts(z)
    return part_io_l(io) ^ part_jo_l(jo)


def part_io_l(io):
    return 0 if io & 0x80 else part_io(io & 15)


def part_jo_l(jo):
    return 0 if jo & 0x80 else part_jo(jo & 15)


for _z in range(256):
    assert tower_inverse(_z) == M(gf256_inv(Minv(_z))), hex(_z)


def lin_pair(f):
    """Nibble tables (LO, HI) with LO[x & 15] ^ HI[x >> 4] = f(x) for GF(2)-linear f."""
    return [f(n) for n in range(16)], [f(n << 4) for n in range(16)]


def DB(x):
    """Decryption basis: M A^-1."""
    return M(Ainv(x))


def check_linear(f):
    for x in range(256):
        for y in (1, 2, 4, 8, 16, 32, 64, 128):
            assert f(x ^ y) == f(x) ^ f(y)


# Input transforms.
IPT = lin_pair(M)
DIPT = lin_pair(DB)
# Output tables: enc middle rounds (x1, x2 into M), enc last (A into the standard basis),
# dec middle rounds (x9, x11, x13, x14 into M A^-1), dec last (standard basis).
SB1 = out_pair(lambda t: M(affine(Minv(t))))
SB2 = out_pair(lambda t: M(gf256_mul(2, affine(Minv(t)))))
SBO = out_pair(lambda t: affine(Minv(t)))
DSB = {c: out_pair(lambda t, c=c: DB(gf256_mul(c, Minv(t)))) for c in (9, 11, 13, 14)}
DSBO = out_pair(Minv)
# Key conversion from M-basis words: M^-1 (last encryption key) and M A^-1 (c x M^-1(.))
# (decryption keys through InvMixColumns).
KOUT = lin_pair(Minv)
KDEC = {c: lin_pair(lambda y, c=c: DB(gf256_mul(c, Minv(y)))) for c in (9, 11, 13, 14)}
for f in (M, DB, Minv, lambda y: DB(gf256_mul(9, Minv(y)))):
    check_linear(f)

M63 = M(0x63)
DB63 = DB(0x63)
RCON = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1B, 0x36]
MRCON = [M(r) for r in RCON]

# ---------------------------------------------------------------- byte permutations
# State byte n = 4 c + r (column c, row r). An operator maps a 16-vector to a 16-vector;
# its PSHUFB index vector is the operator applied to [0..16).


def op_sr(v):
    return [v[4 * ((n // 4 + n % 4) % 4) + n % 4] for n in range(16)]


def op_isr(v):
    return [v[4 * ((n // 4 - n % 4) % 4) + n % 4] for n in range(16)]


def op_rot(v, m):
    return [v[4 * (n // 4) + (n % 4 + m) % 4] for n in range(16)]


def power(op, n):
    def f(v):
        for _ in range(n):
            v = op(v)
        return v

    return f


def compose(*ops):
    """compose(f, g)(v) = f(g(v))."""

    def h(v):
        for op in reversed(ops):
            v = op(v)
        return v

    return h


def idx(op):
    return op(list(range(16)))


def gather(v, g):
    return [look(v, x) for x in g]


# Stored order after r rounds: enc Q_r = SR^-r, dec Q_r = SR^r (period 4).
ENC_Q = [power(op_isr, r) for r in range(4)]
ENC_QI = [power(op_sr, r) for r in range(4)]
DEC_Q = [power(op_sr, r) for r in range(4)]
DEC_QI = [power(op_isr, r) for r in range(4)]


def rot(m):
    return lambda v: op_rot(v, m)


# MixColumns rotation in stored order for the round that ends with Q_r:
# Q_r R_m SR Q_{r-1}^-1 (enc), Q_r R_m ISR Q_{r-1}^-1 (dec).
ENC_MC1 = [idx(compose(ENC_Q[r], rot(1), op_sr, ENC_QI[(r - 1) % 4])) for r in range(4)]
ENC_MC2 = [idx(compose(ENC_Q[r], rot(2), op_sr, ENC_QI[(r - 1) % 4])) for r in range(4)]
ENC_MC3 = [idx(compose(ENC_Q[r], rot(3), op_sr, ENC_QI[(r - 1) % 4])) for r in range(4)]
DEC_MC1 = [idx(compose(DEC_Q[r], rot(1), op_isr, DEC_QI[(r - 1) % 4])) for r in range(4)]
for r in range(4):
    # The identity term must really be the identity.
    assert idx(compose(ENC_Q[r], op_sr, ENC_QI[(r - 1) % 4])) == list(range(16))
    assert idx(compose(DEC_Q[r], op_isr, DEC_QI[(r - 1) % 4])) == list(range(16))
ENC_QIDX = [idx(q) for q in ENC_Q]
ENC_QIIDX = [idx(q) for q in ENC_QI]
DEC_QIDX = [idx(q) for q in DEC_Q]
DEC_QIIDX = [idx(q) for q in DEC_QI]
# Decryption keys: Q_r R_m for the InvMixColumns terms.
DEC_KEYPERM = [[idx(compose(DEC_Q[r], rot(m))) for m in range(4)] for r in range(4)]

# ---------------------------------------------------------------- reference AES


def ref_expand(key):
    nk = len(key) // 4
    nr = nk + 6
    w = [list(key[4 * i : 4 * i + 4]) for i in range(nk)]
    for i in range(nk, 4 * (nr + 1)):
        t = list(w[i - 1])
        if i % nk == 0:
            t = [SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= RCON[i // nk - 1]
        elif nk > 6 and i % nk == 4:
            t = [SBOX[b] for b in t]
        w.append([a ^ b for a, b in zip(w[i - nk], t)])
    return [sum(w[4 * r : 4 * r + 4], []) for r in range(nr + 1)]


def ref_mc(s):
    out = []
    for c in range(4):
        col = s[4 * c : 4 * c + 4]
        for r in range(4):
            out.append(
                gf256_mul(2, col[r])
                ^ gf256_mul(3, col[(r + 1) % 4])
                ^ col[(r + 2) % 4]
                ^ col[(r + 3) % 4]
            )
    return out


def ref_encrypt(rk, pt):
    s = [a ^ b for a, b in zip(pt, rk[0])]
    nr = len(rk) - 1
    for r in range(1, nr + 1):
        s = op_sr([SBOX[b] for b in s])
        if r < nr:
            s = ref_mc(s)
        s = [a ^ b for a, b in zip(s, rk[r])]
    return s


def ref_inv_mc(s):
    out = []
    for c in range(4):
        col = s[4 * c : 4 * c + 4]
        for r in range(4):
            out.append(
                gf256_mul(14, col[r])
                ^ gf256_mul(11, col[(r + 1) % 4])
                ^ gf256_mul(13, col[(r + 2) % 4])
                ^ gf256_mul(9, col[(r + 3) % 4])
            )
    return out


# ---------------------------------------------------------------- the simulated kernels


def vlin(pair, v):
    lo, hi = pair
    return [look(lo, b & 15) ^ look(hi, b >> 4) for b in v]


def vout(pair, io, jo):
    t, u = pair
    return [look(t, a) ^ look(u, b) for a, b in zip(io, jo)]


def vinv(v):
    parts = [invert_parts(b) for b in v]
    return [p[0] for p in parts], [p[1] for p in parts]


def xor(*vs):
    return [
        __import__("functools").reduce(lambda a, b: a ^ b, col) for col in zip(*vs)
    ]


def sim_keys(rk):
    """Round keys in the kernel layout, from standard round keys (as the Rust code does:
    std -> M basis, then the per-round conversion)."""
    nr = len(rk) - 1
    mk = [vlin(IPT, k) for k in rk]
    enc = [mk[0]]
    for r in range(1, nr):
        enc.append(gather([b ^ M63 for b in mk[r]], ENC_QIDX[r % 4]))
    enc.append(gather([b ^ 0x63 for b in vlin(KOUT, mk[nr])], ENC_QIDX[nr % 4]))
    dec = [[b ^ DB63 for b in vlin(DIPT, rk[nr])]]
    for r in range(1, nr):
        k = mk[nr - r]
        terms = [
            gather(vlin(KDEC[c], k), DEC_KEYPERM[r % 4][m])
            for m, c in enumerate((14, 11, 13, 9))
        ]
        dec.append([b ^ DB63 for b in xor(*terms)])
    dec.append(gather(vlin(KOUT, mk[0]), DEC_QIDX[nr % 4]))
    return enc, dec


def sim_encrypt(enc, pt):
    nr = len(enc) - 1
    z = xor(vlin(IPT, pt), enc[0])
    for r in range(1, nr):
        io, jo = vinv(z)
        s1 = vout(SB1, io, jo)
        s2 = vout(SB2, io, jo)
        x = xor(s2, gather(s1, ENC_MC1[r % 4]))
        z = xor(x, gather(x, ENC_MC1[r % 4]), gather(s1, ENC_MC3[r % 4]), enc[r])
        # The shallower form used for serial (CBC) encryption gives the same state.
        z2 = xor(
            s2,
            gather(s1, ENC_MC1[r % 4]),
            gather(s2, ENC_MC1[r % 4]),
            gather(s1, ENC_MC2[r % 4]),
            gather(s1, ENC_MC3[r % 4]),
            enc[r],
        )
        assert z2 == z
    io, jo = vinv(z)
    w = xor(vout(SBO, io, jo), enc[nr])
    return gather(w, ENC_QIIDX[nr % 4])


def sim_decrypt(dec, ct):
    nr = len(dec) - 1
    z = xor(vlin(DIPT, ct), dec[0])
    for r in range(1, nr):
        io, jo = vinv(z)
        p = DEC_MC1[r % 4]
        acc = vout(DSB[9], io, jo)
        acc = xor(vout(DSB[13], io, jo), gather(acc, p))
        acc = xor(vout(DSB[11], io, jo), gather(acc, p))
        acc = xor(vout(DSB[14], io, jo), gather(acc, p))
        z = xor(acc, dec[r])
    io, jo = vinv(z)
    w = xor(vout(DSBO, io, jo), dec[nr])
    return gather(w, DEC_QIIDX[nr % 4])


def sim_expand_m(key):
    """Key expansion in the M basis, word by word (what the Rust code does)."""
    nk = len(key) // 4
    nr = nk + 6
    mkey = vlin(IPT, list(key))
    w = [mkey[4 * i : 4 * i + 4] for i in range(nk)]

    def subword_m(t):
        io, jo = vinv(t)
        return [b ^ M63 for b in vout(SB1, io, jo)]

    for i in range(nk, 4 * (nr + 1)):
        t = list(w[i - 1])
        if i % nk == 0:
            t = subword_m(t[1:] + t[:1])
            t[0] ^= MRCON[i // nk - 1]
        elif nk > 6 and i % nk == 4:
            t = subword_m(t)
        w.append([a ^ b for a, b in zip(w[i - nk], t)])
    return [sum(w[4 * r : 4 * r + 4], []) for r in range(nr + 1)]


def self_test():
    k = bytes(range(16))
    pt = list(bytes.fromhex("00112233445566778899aabbccddeeff"))
    assert bytes(ref_encrypt(ref_expand(k), pt)).hex() == "69c4e0d86a7b0430d8cdb78070b4c55a"
    rng = random.Random(1)
    for klen in (16, 24, 32):
        for _ in range(20):
            key = bytes(rng.randrange(256) for _ in range(klen))
            rk = ref_expand(key)
            assert sim_expand_m(key) == [vlin(IPT, k) for k in rk]
            enc, dec = sim_keys(rk)
            pt = [rng.randrange(256) for _ in range(16)]
            ct = ref_encrypt(rk, pt)
            assert sim_encrypt(enc, pt) == ct
            assert sim_decrypt(dec, ct) == pt


# ---------------------------------------------------------------- output


def u128(v):
    assert len(v) == 16 and all(0 <= b < 256 for b in v)
    return "0x" + "".join("%02x" % b for b in reversed(v))


def emit():
    o = []
    p = o.append
    p("// @generated by gen_tables.py in this folder; do not edit by hand.")
    p("//")
    p("// Each table is 16 bytes as a little-endian u128 (byte n = PSHUFB index n).")
    p(
        "// Tower field GF(16)[t]/(t^2 + %#x t + %#x) over GF(16) = GF(2)[x]/(x^4 + x + 1); M maps"
        % (A, A)
    )
    p("// the AES generator x to %#04x." % BETA)
    p("")
    p("/// Low-nibble mask.")
    p("pub(super) const NIB: u128 = %s;" % u128([15] * 16))
    p("/// 1/x in GF(16); 1/0 = 0x80 (PSHUFB yields 0 for it).")
    p("pub(super) const INV: u128 = %s;" % u128(INV))
    p("/// a/x in GF(16); a/0 = 0x80.")
    p("pub(super) const INVA: u128 = %s;" % u128(INVA))

    def pair(name, doc, tabs):
        p("/// %s" % doc)
        p("pub(super) const %s: [u128; 2] = [%s, %s];" % (name, u128(tabs[0]), u128(tabs[1])))

    pair("IPT", "Input transform M (standard -> tower basis): [low nibble, high nibble].", IPT)
    pair("DIPT", "Decryption input transform M A^-1: [low nibble, high nibble].", DIPT)
    pair("SB1", "Encryption output M(A(1/x)): [by io, by jo].", SB1)
    pair("SB2", "Encryption output M(2 A(1/x)): [by io, by jo].", SB2)
    pair("SBO", "Last encryption round, A(1/x) in the standard basis: [by io, by jo].", SBO)
    for c in (9, 11, 13, 14):
        pair(
            "DSB%d" % c,
            "Decryption output M A^-1(%d 1/x): [by io, by jo]." % c,
            DSB[c],
        )
    pair("DSBO", "Last decryption round, 1/x in the standard basis: [by io, by jo].", DSBO)
    pair("KOUT", "M^-1 (tower -> standard basis): [low nibble, high nibble].", KOUT)
    for c in (9, 11, 13, 14):
        pair(
            "KDEC%d" % c,
            "Key conversion y -> M A^-1(%d M^-1(y)): [low nibble, high nibble]." % c,
            KDEC[c],
        )
    p("/// M(0x63): the S-box constant in the tower basis.")
    p("pub(super) const M63: u8 = %#04x;" % M63)
    p("/// M A^-1 (0x63): the S-box constant in the decryption basis.")
    p("pub(super) const DB63: u8 = %#04x;" % DB63)
    p("/// Round constants in the tower basis.")
    p("pub(super) const MRCON: [u8; 10] = [%s];" % ", ".join("%#04x" % r for r in MRCON))

    def perms(name, doc, v):
        p("/// %s" % doc)
        p("pub(super) const %s: [u128; 4] = [%s];" % (name, ", ".join(u128(x) for x in v)))

    perms("ENC_MC1", "Encryption MixColumns rotation by one row, in the order of round r % 4.", ENC_MC1)
    perms("ENC_MC2", "Encryption MixColumns rotation by two rows, round r % 4.", ENC_MC2)
    perms("ENC_MC3", "Encryption MixColumns rotation by three rows, round r % 4.", ENC_MC3)
    perms("DEC_MC1", "Decryption InvMixColumns rotation by one row, round r % 4.", DEC_MC1)
    perms("ENC_Q", "Encryption byte order after r % 4 rounds (for the round keys).", ENC_QIDX)
    perms("ENC_QI", "Restores the standard byte order after r % 4 encryption rounds.", ENC_QIIDX)
    perms("DEC_Q", "Decryption byte order after r % 4 rounds.", DEC_QIDX)
    perms("DEC_QI", "Restores the standard byte order after r % 4 decryption rounds.", DEC_QIIDX)
    p("/// Decryption round key r % 4: order Q_r composed with a rotation by m rows, m = 0..4")
    p("/// (the InvMixColumns terms 14, 11, 13, 9).")
    p(
        "pub(super) const DEC_KEYPERM: [[u128; 4]; 4] = [%s];"
        % ", ".join("[%s]" % ", ".join(u128(x) for x in row) for row in DEC_KEYPERM)
    )
    return "\n".join(o) + "\n"


if __name__ == "__main__":
    self_test()
    sys.stdout.write(emit())

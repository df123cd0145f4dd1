//! Pieces of inline-assembly text shared by the hand-written loops ([`super::ctr_asm`],
//! [`super::cbc_asm`]): one macro per instruction shape, with `x` (legacy SSE on xmm, for the
//! `aesni` backend, which needs no AVX) or `y` (VEX on ymm) as the first argument.

/// `dst = dst OP src` on registers (asm text).
macro_rules! op2 {
    (x, $op:literal, $d:literal, $s:literal) => {
        concat!($op, " xmm", $d, ", xmm", $s, "\n")
    };
    (y, $op:literal, $d:literal, $s:literal) => {
        concat!("v", $op, " ymm", $d, ", ymm", $d, ", ymm", $s, "\n")
    };
}

/// Unaligned load / store of register `i` of a batch at `base`.
macro_rules! ld {
    (x, $d:literal, $base:literal, $i:literal) => {
        concat!(
            "movdqu xmm",
            $d,
            ", xmmword ptr [",
            $base,
            " + 16*",
            $i,
            "]\n"
        )
    };
    (y, $d:literal, $base:literal, $i:literal) => {
        concat!(
            "vmovdqu ymm",
            $d,
            ", ymmword ptr [",
            $base,
            " + 32*",
            $i,
            "]\n"
        )
    };
}
macro_rules! st {
    (x, $s:literal, $base:literal, $i:literal) => {
        concat!(
            "movdqu xmmword ptr [",
            $base,
            " + 16*",
            $i,
            "], xmm",
            $s,
            "\n"
        )
    };
    (y, $s:literal, $base:literal, $i:literal) => {
        concat!(
            "vmovdqu ymmword ptr [",
            $base,
            " + 32*",
            $i,
            "], ymm",
            $s,
            "\n"
        )
    };
}

/// A round key (16 bytes at `addr`) into register `d`, broadcast on ymm.
macro_rules! key {
    (x, $d:literal, $addr:expr) => {
        concat!("movdqu xmm", $d, ", xmmword ptr [", $addr, "]\n")
    };
    (y, $d:literal, $addr:expr) => {
        concat!("vbroadcasti128 ymm", $d, ", xmmword ptr [", $addr, "]\n")
    };
}

//! Pieces of inline-assembly text shared by the hand-written loops ([`super::ctr_asm`],
//! [`super::cbc_asm`], [`super::ecb_asm`], [`super::gcm_ymm`], [`super::gcm_zmm`]): one macro
//! per instruction shape, with `x` (legacy SSE on xmm, for the `aesni` backend, which needs no
//! AVX), `y` (VEX on ymm) or `z` (EVEX on zmm; only the shapes the zmm loops use) as the first
//! argument.

/// `dst = dst OP src` on registers (asm text).
macro_rules! op2 {
    (x, $op:literal, $d:literal, $s:literal) => {
        concat!($op, " xmm", $d, ", xmm", $s, "\n")
    };
    (y, $op:literal, $d:literal, $s:literal) => {
        concat!("v", $op, " ymm", $d, ", ymm", $d, ", ymm", $s, "\n")
    };
    // EVEX has no element-size-free PXOR: VPXORQ.
    (z, "pxor", $d:literal, $s:literal) => {
        concat!("vpxorq zmm", $d, ", zmm", $d, ", zmm", $s, "\n")
    };
    (z, $op:literal, $d:literal, $s:literal) => {
        concat!("v", $op, " zmm", $d, ", zmm", $d, ", zmm", $s, "\n")
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
    (z, $d:literal, $base:literal, $i:literal) => {
        concat!(
            "vmovdqu64 zmm",
            $d,
            ", zmmword ptr [",
            $base,
            " + 64*",
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
    (z, $s:literal, $base:literal, $i:literal) => {
        concat!(
            "vmovdqu64 zmmword ptr [",
            $base,
            " + 64*",
            $i,
            "], zmm",
            $s,
            "\n"
        )
    };
}

/// Counter register `i` of a GCM batch ([`super::gcm_ymm`], [`super::gcm_zmm`]): the
/// byte-reversed counters of register 0 (r14) plus register `i`'s offset (at `{c}` + one
/// register width `* (i + 1)`), byte-swapped (the mask at `{c}`) and whitened with round key 0
/// (r8).
macro_rules! gcm_ctr {
    (y, $i:literal) => {
        concat!(
            "vpaddd ymm",
            $i,
            ", ymm14, ymmword ptr [{c} + 32 + 32*",
            $i,
            "]\n",
            "vpshufb ymm",
            $i,
            ", ymm",
            $i,
            ", ymmword ptr [{c}]\n",
            op2!(y, "pxor", $i, "8"),
        )
    };
    (z, $i:literal) => {
        concat!(
            "vpaddd zmm",
            $i,
            ", zmm14, zmmword ptr [{c} + 64 + 64*",
            $i,
            "]\n",
            "vpshufb zmm",
            $i,
            ", zmm",
            $i,
            ", zmmword ptr [{c}]\n",
            op2!(z, "pxor", $i, "8"),
        )
    };
}

/// Round 0 of a GCM batch: counter registers 0-7 (`gcm_ctr!`), then the counters of
/// register 0 (r14) advanced by one batch (8 registers' worth of blocks, at `{c}` + 9
/// register widths).
macro_rules! gcm_counters {
    ($w:ident) => {
        concat!(
            gcm_ctr!($w, "0"),
            gcm_ctr!($w, "1"),
            gcm_ctr!($w, "2"),
            gcm_ctr!($w, "3"),
            gcm_ctr!($w, "4"),
            gcm_ctr!($w, "5"),
            gcm_ctr!($w, "6"),
            gcm_ctr!($w, "7"),
            gcm_counters!(@step $w),
        )
    };
    (@step y) => {
        "vpaddd ymm14, ymm14, ymmword ptr [{c} + 288]\n"
    };
    (@step z) => {
        "vpaddd zmm14, zmm14, zmmword ptr [{c} + 576]\n"
    };
}

/// Round 0 of a ymm GCM batch whose inc32 word is public (a 12-byte nonce: it is the block
/// index plus 2), in the loop of [`super::gcm_ymm`]: r14 holds register 0's counter blocks as
/// they are (not byte-reversed) and `{lo}` the inc32 word of its first block. While no block of
/// the batch, nor register 0's second block after the step, carries out of the counter's last
/// byte (that byte at most 238 in block 0), each register is r14 plus its offset added to
/// that byte (at `{c}` + 352 + 32 i) and the step adds 16 to it (at `{c}` + 608): no byte swap.
/// Otherwise (one batch in 16) r14 is swapped to the byte-reversed form, the batch built as
/// in [`gcm_counters`] (carries through all four bytes, wrapping as inc32 does) and swapped
/// back. The branch is on the block index only; a counter that may be secret (J0 from
/// GHASH) takes [`gcm_counters`], which has none.
macro_rules! gcm_counters_pub {
    (y) => {
        concat!(
            "cmp {lo:l}, 238\n",
            "ja 5f\n",
            gcm_counters_pub!(@be "0"),
            gcm_counters_pub!(@be "1"),
            gcm_counters_pub!(@be "2"),
            gcm_counters_pub!(@be "3"),
            gcm_counters_pub!(@be "4"),
            gcm_counters_pub!(@be "5"),
            gcm_counters_pub!(@be "6"),
            gcm_counters_pub!(@be "7"),
            "vpaddd ymm14, ymm14, ymmword ptr [{c} + 608]\n",
            "6:\n",
            "add {lo:e}, 16\n",
        )
    };
    // The carrying batches, out of the loop's line (after it; back to `6`).
    (@slow y) => {
        concat!(
            "jmp 7f\n",
            "5:\n",
            "vpshufb ymm14, ymm14, ymmword ptr [{c}]\n",
            gcm_counters!(y),
            "vpshufb ymm14, ymm14, ymmword ptr [{c}]\n",
            "jmp 6b\n",
            "7:\n",
        )
    };
    (@be $i:literal) => {
        concat!(
            "vpaddd ymm",
            $i,
            ", ymm14, ymmword ptr [{c} + 352 + 32*",
            $i,
            "]\n",
            op2!(y, "pxor", $i, "8"),
        )
    };
}

/// Keystream register `s` XORed with register `i` of the GCM batch at `{out}` into register
/// `d` (`s` itself, or where seal keeps the ciphertext for the next batch's GHASH), stored
/// back over that data; `y $src` / `z $src`: the batch's data read from the pointer operand
/// `$src` instead (e.g. `"{inp}"`), the result stored at `{out}`.
macro_rules! gcm_xor_out {
    (y $src:literal, $d:literal, $s:literal, $i:literal) => {
        concat!(
            "vpxor ymm",
            $d,
            ", ymm",
            $s,
            ", ymmword ptr [",
            $src,
            " + 32*",
            $i,
            "]\n",
            st!(y, $d, "{out}", $i),
        )
    };
    (y, $d:literal, $s:literal, $i:literal) => {
        gcm_xor_out!(y "{out}", $d, $s, $i)
    };
    (z $src:literal, $d:literal, $s:literal, $i:literal) => {
        concat!(
            "vpxorq zmm",
            $d,
            ", zmm",
            $s,
            ", zmmword ptr [",
            $src,
            " + 64*",
            $i,
            "]\n",
            st!(z, $d, "{out}", $i),
        )
    };
    (z, $d:literal, $s:literal, $i:literal) => {
        gcm_xor_out!(z "{out}", $d, $s, $i)
    };
}

/// A round key (16 bytes at `addr`) into register `d`, broadcast on ymm and zmm.
macro_rules! key {
    (x, $d:literal, $addr:expr) => {
        concat!("movdqu xmm", $d, ", xmmword ptr [", $addr, "]\n")
    };
    (y, $d:literal, $addr:expr) => {
        concat!("vbroadcasti128 ymm", $d, ", xmmword ptr [", $addr, "]\n")
    };
    (z, $d:literal, $addr:expr) => {
        concat!("vbroadcasti32x4 zmm", $d, ", xmmword ptr [", $addr, "]\n")
    };
}

/// Register `i` of a zmm tail loaded from `{p}` under its byte mask (`[{m} + 8i]`; bytes past
/// the data are neither read nor faulting) and whitened with round key 0 (in zmm12): the
/// tails of the zmm ECB and CBC-decryption assembly.
macro_rules! zld_masked {
    ($i:literal) => {
        concat!(
            "kmovq k1, qword ptr [{m} + 8*",
            $i,
            "]\n",
            "vmovdqu8 zmm",
            $i,
            "{{k1}}{{z}}, zmmword ptr [{p} + 64*",
            $i,
            "]\n",
            op2!(z, "pxor", $i, "12"),
        )
    };
}

/// Register `i` stored to `{p}` under its byte mask (`[{m} + 8i]`; bytes past the data are
/// neither written nor faulting): the tails of the zmm ECB and CBC-decryption assembly.
macro_rules! zst_masked {
    ($i:literal) => {
        concat!(
            "kmovq k1, qword ptr [{m} + 8*",
            $i,
            "]\n",
            "vmovdqu8 zmmword ptr [{p} + 64*",
            $i,
            "]{{k1}}, zmm",
            $i,
            "\n",
        )
    };
}

/// One middle round (`$op`: AESENC or AESDEC) with round key `i` (loaded into r12 from
/// `{k}`) over the registers listed.
macro_rules! mround {
    ($w:ident, $op:literal, $i:literal; $($r:literal)*) => {
        concat!(
            key!($w, "12", concat!("{k} + 16*", $i)),
            $(op2!($w, $op, $r, "12"),)*
        )
    };
}

/// Loads register `i` of the batch at `{p}` and whitens it with round key 0 (in r12).
macro_rules! ldw {
    ($w:ident, $i:literal) => {
        concat!(ld!($w, $i, "{p}", $i), op2!($w, "pxor", $i, "12"))
    };
}

/// The middle rounds (`$op`) of any key size over the registers listed: rounds 1 to 9, then
/// 10-11 and 12-13 unless `{kl}` (the last round key) says the schedule ends before them.
/// `{t}` is scratch.
macro_rules! rounds {
    ($w:ident, $op:literal; $($r:literal)*) => {
        concat!(
            mround!($w, $op, "1"; $($r)*),
            mround!($w, $op, "2"; $($r)*),
            mround!($w, $op, "3"; $($r)*),
            mround!($w, $op, "4"; $($r)*),
            mround!($w, $op, "5"; $($r)*),
            mround!($w, $op, "6"; $($r)*),
            mround!($w, $op, "7"; $($r)*),
            mround!($w, $op, "8"; $($r)*),
            mround!($w, $op, "9"; $($r)*),
            rounds_10_13!($w, $op; $($r)*),
        )
    };
}

/// Rounds 10-11 and 12-13 (`$op`) over the registers listed, unless `{kl}` (the last round
/// key) says the schedule ends before them; ends at label 3. `{t}` is scratch.
macro_rules! rounds_10_13 {
    ($w:ident, $op:literal; $($r:literal)*) => {
        concat!(
            "lea {t}, [{k} + 160]\n",
            "cmp {t}, {kl}\n",
            "je 3f\n",
            mround!($w, $op, "10"; $($r)*),
            mround!($w, $op, "11"; $($r)*),
            "lea {t}, [{k} + 192]\n",
            "cmp {t}, {kl}\n",
            "je 3f\n",
            mround!($w, $op, "12"; $($r)*),
            mround!($w, $op, "13"; $($r)*),
            "3:\n",
        )
    };
}

/// Registers `0` and `$d...` loaded from `{p}` and whitened, the middle rounds (`$op`), and the
/// last round key into r12: everything before a batch's last round.
macro_rules! batch_rounds {
    ($w:ident, $op:literal; $($d:literal)*) => {
        concat!(
            key!($w, "12", "{k}"),
            ldw!($w, "0"),
            $(ldw!($w, $d),)*
            rounds!($w, $op; "0" $($d)*),
            key!($w, "12", "{kl}"),
        )
    };
}

/// A head's stores (xmm): register 0, then each register `d` listed only if `d < {r}`.
macro_rules! store_first_r {
    ($($d:literal)*) => {
        concat!(
            st!(x, "0", "{p}", "0"),
            $(
                "cmp {r}, ", $d, "\n",
                "jbe 6f\n",
                st!(x, $d, "{p}", $d),
                "6:\n",
            )*
        )
    };
}

/// The `{r}` (0 to 11) blocks that do not fill an iteration of 12: `$head!(ARGS; REGS)` with
/// the fewest of 4, 8 or 12 registers that hold them (REGS: `N-1` down to 1), or nothing if
/// `{r}` is 0; each head ends with a jump to label 5, which follows.
macro_rules! heads {
    ($head:ident!($($a:tt)*)) => {
        concat!(
            "test {r}, {r}\n",
            "jz 5f\n",
            "cmp {r}, 4\n",
            "ja 7f\n",
            $head!($($a)*; "3" "2" "1"),
            "7:\n",
            "cmp {r}, 8\n",
            "ja 8f\n",
            $head!($($a)*; "7" "6" "5" "4" "3" "2" "1"),
            "8:\n",
            $head!($($a)*; "11" "10" "9" "8" "7" "6" "5" "4" "3" "2" "1"),
            "5:\n",
        )
    };
}

/// `dk[i] = AESIMC(enc[rounds - i])` for the `i` listed, `{s}` pointing at `enc[rounds]`.
macro_rules! imc {
    ($($i:literal)*) => {
        concat!($(
            "aesimc xmm0, xmmword ptr [{s} - 16*", $i, "]\n",
            "movdqu xmmword ptr [{k} + 16*", $i, "], xmm0\n",
        )*)
    };
}

/// The equivalent inverse cipher's schedule derived from the encryption schedule at `{e}`
/// into the 16-byte slots `{k}` to `{kl}` (xmm, legacy SSE): `dk[0] = enc[rounds]`,
/// `dk[rounds] = enc[0]`, `dk[i] = AESIMC(enc[rounds - i])`, as `aesni::dec_schedule`.
/// Unrolled, the round count tested twice as in [`rounds`]. `{s}` and `{t}` are scratch;
/// leaves a round key in xmm0.
macro_rules! derive_dk {
    () => {
        concat!(
            "mov {s}, {kl}\n",
            "sub {s}, {k}\n",
            "mov {t}, {s}\n",
            "add {s}, {e}\n",
            "movdqu xmm0, xmmword ptr [{s}]\n",
            "movdqu xmmword ptr [{k}], xmm0\n",
            "movdqu xmm0, xmmword ptr [{e}]\n",
            "movdqu xmmword ptr [{kl}], xmm0\n",
            imc!("1" "2" "3" "4" "5" "6" "7" "8" "9"),
            "cmp {t}, 160\n",
            "je 15f\n",
            imc!("10" "11"),
            "cmp {t}, 192\n",
            "je 15f\n",
            imc!("12" "13"),
            "15:\n",
        )
    };
}

/// Zeroes xmm12 (the round-key register) and the slots `{k}` to `{kl}` ([`derive_dk`]'s):
/// slots 0-10, then 11-12 and 13-14 unless `{kl}` comes before them. `{t}` is scratch.
macro_rules! zero_dk {
    () => {
        concat!(
            "pxor xmm12, xmm12\n",
            "movdqu xmmword ptr [{k}], xmm12\n",
            "movdqu xmmword ptr [{k} + 16], xmm12\n",
            "movdqu xmmword ptr [{k} + 32], xmm12\n",
            "movdqu xmmword ptr [{k} + 48], xmm12\n",
            "movdqu xmmword ptr [{k} + 64], xmm12\n",
            "movdqu xmmword ptr [{k} + 80], xmm12\n",
            "movdqu xmmword ptr [{k} + 96], xmm12\n",
            "movdqu xmmword ptr [{k} + 112], xmm12\n",
            "movdqu xmmword ptr [{k} + 128], xmm12\n",
            "movdqu xmmword ptr [{k} + 144], xmm12\n",
            "movdqu xmmword ptr [{k} + 160], xmm12\n",
            "lea {t}, [{k} + 160]\n",
            "cmp {t}, {kl}\n",
            "je 9f\n",
            "movdqu xmmword ptr [{k} + 176], xmm12\n",
            "movdqu xmmword ptr [{k} + 192], xmm12\n",
            "lea {t}, [{k} + 192]\n",
            "cmp {t}, {kl}\n",
            "je 9f\n",
            "movdqu xmmword ptr [{k} + 208], xmm12\n",
            "movdqu xmmword ptr [{k} + 224], xmm12\n",
            "9:\n",
        )
    };
}

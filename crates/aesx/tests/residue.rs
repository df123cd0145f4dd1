//! Key residue (issue 14, finding 2): once an `Aes` (or `AesGcm`) has been used and dropped,
//! no copy of its
//! round keys (nor of GCM's first key power, H*x) may be left anywhere in the process's writable memory: not on the calling
//! thread's stack (kernels, key expansion, the moves of `Aes::new`), not on the stacks of the
//! multi-threaded CTR workers, not in freed heap.
//!
//! Method: for every available backend and every key size, the test runs itself as a child
//! process that expands a fresh random key, uses it through every entry point from a deep stack
//! frame (so the stack it used lies below the frames alive at scan time), drops it, and then
//! reads all of its own writable private mappings through `/proc/self/mem`, looking for round
//! keys 2 to last (and 1 for AES-128; for longer keys round key 1 holds key bytes, which the
//! child itself keeps). The child receives the round keys XOR-masked and compares masked, so
//! the needles themselves never appear in its memory. Linux only (procfs).
#![cfg(target_os = "linux")]

use std::io::{Read, Seek, SeekFrom};
use std::process::Command;

use aesx::{Aes, Backend, CbcDecryptor, CbcEncryptor, Ctr};

const MASK: [u8; 16] = *b"\x5a\xc3\x11\x9e\x07\xe4\x38\xb1\x6d\x92\x2f\xa6\x41\xd8\x73\x0c";
const CHILD: &str = "AESX_RESIDUE_CHILD";

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Runs `f` below a `PAD`-byte pad that is written first (so its pages are mapped): the
/// frames of `f` (and what the kernels it calls leave below them) lie deeper than anything
/// the caller runs afterwards. `f` runs in a function of its own, called from this frame, so
/// none of it is inlined above the pad.
#[inline(never)]
fn below_pad<const PAD: usize>(f: impl FnOnce()) {
    #[inline(never)]
    fn run(f: impl FnOnce()) {
        f()
    }
    let mut pad = [0u8; PAD];
    std::hint::black_box(&mut pad);
    run(f);
    std::hint::black_box(&pad);
}

/// [`below_pad`] with 4 KiB: one group of entry points, below the frees of `use_key`.
fn below(f: impl FnOnce()) {
    below_pad::<4096>(f)
}

/// Everything the child does with the key, from a frame well below the scanner's.
#[inline(never)]
fn use_key(backend: Backend, key: &[u8], threads: bool) {
    // Borrowed from the `Result`, not moved out of it: `.unwrap()` moves the value (a memcpy
    // that leaves a copy of the schedule where the `Result` was, which nothing wipes).
    let aes_slot = Aes::with_backend(key, backend);
    let aes = aes_slot.as_ref().unwrap();
    let iv = [0x24u8; 16];
    let only = std::env::var("AESX_RESIDUE_ONLY").unwrap_or_default();
    let on = |s: &str| only.is_empty() || only.split(',').any(|o| o == s);
    // 8 KiB + 48: CTR calls long enough for the round-1 table of `vaes512` on AMD.
    for len in [
        16usize,
        32,
        48,
        64,
        80,
        112,
        128,
        256,
        272,
        4096 + 48,
        8192 + 48,
    ] {
        let mut buf = vec![0x3cu8; len];
        // Each group runs below a pad (`below`), so the `Vec` frees here cannot overwrite what
        // its last call left on the stack.
        if on("ecb") {
            below(|| {
                aes.encrypt_blocks(&mut buf);
                aes.decrypt_blocks(&mut buf);
            });
        }
        if on("block") {
            below(|| {
                aes.encrypt_block((&mut buf[..16]).try_into().unwrap());
                aes.decrypt_block((&mut buf[..16]).try_into().unwrap());
            });
        }
        if on("cbc") {
            below(|| {
                CbcEncryptor::new(aes, &iv)
                    .encrypt_blocks(&mut buf)
                    .unwrap();
                CbcDecryptor::new(aes, &iv)
                    .decrypt_blocks(&mut buf)
                    .unwrap();
            });
        }
        if on("ctr") {
            below(|| Ctr::new(aes, &iv).apply_keystream(&mut buf[..len - 5]));
            aes.ctr_xor_at(&iv, 7, &mut buf);
            // Buffer to buffer: the one-pass kernel (aesni, vaes256) and its tails.
            let mut out = vec![0u8; len];
            aes.try_ctr_xor_at_b2b(&iv, 3, &buf, &mut out).unwrap();
            Ctr::new(aes, &iv)
                .apply_keystream_b2b(&buf[..len - 5], &mut out[..len - 5])
                .unwrap();
            std::hint::black_box(&out);
        }
        std::hint::black_box(&buf);
    }
    let _ = aes.backend();
    if on("gcm") {
        // Below a pad, like the groups above: what the GCM kernels leave on the stack is
        // then not covered by anything that runs after them.
        below(|| {
            // AES-GCM: its own schedule and GHASH powers built in place; every kernel path (the
            // short-message one, whole batches, tails, GHASH of AAD and of long nonces), open of
            // valid and forged messages, streaming both ways.
            let g_slot = aesx::AesGcm::with_backend(key, backend);
            let g = g_slot.as_ref().unwrap();
            // 8240 bytes: `vaes512` on Intel seals with a 12-byte nonce from 4336 bytes in its
            // aligned-counter loop (`vaes::gcm::aligned_head`).
            for len in [0usize, 16, 29, 80, 81, 272, 4096 + 48, 8192 + 48] {
                let mut buf = vec![0x3cu8; len];
                let t = g
                    .seal_in_place_detached(&iv[..12], b"aad", &mut buf)
                    .unwrap();
                g.open_in_place_detached(&iv[..12], b"aad", &mut buf, t.as_ref())
                    .unwrap();
                let _ = g.open_in_place_detached(&iv, &buf.clone(), &mut buf, t.as_ref());
                let mut e = g.encryptor(&iv).unwrap();
                e.aad(b"x").unwrap();
                e.update(&mut buf).unwrap();
                let t2 = e.finish();
                let mut d = g.decryptor(&iv).unwrap();
                d.aad(b"x").unwrap();
                d.update(&mut buf).unwrap();
                d.finish(t2.as_ref()).unwrap();
                // Buffer to buffer (the fused VAES kernels read one and write the other).
                let mut out = vec![0u8; len];
                let mut e = g.encryptor(&iv[..12]).unwrap();
                e.update_b2b(&buf, &mut out).unwrap();
                let t3 = e.finish();
                let mut d = g.decryptor(&iv[..12]).unwrap();
                d.update_b2b(&out, &mut buf).unwrap();
                d.finish(t3.as_ref()).unwrap();
                std::hint::black_box(&buf);
            }
        });
    }
    #[cfg(feature = "rayon")]
    if threads && on("threads") {
        let mut big = vec![0u8; 4 << 20];
        below(|| aes.ctr_xor_at_threads(&iv, 3, &mut big, 2));
        std::hint::black_box(&big);
    }
    #[cfg(not(feature = "rayon"))]
    let _ = threads;
    // Dropped where it lives, at the end of the scope: `drop(aes)` would first move (copy) it
    // into `drop`'s argument and wipe only that copy (see the README on moves).
}

/// Calls `use_key` (or `construct_only`) below a 64 KiB stack pad, well below the scanner.
fn deep(backend: Backend, key: &[u8], mode: &str) {
    below_pad::<{ 64 * 1024 }>(|| match mode {
        "construct" => construct_only(backend, key),
        "construct_loop" => construct_in_loop(backend, key),
        _ => use_key(backend, key, mode == "threads"),
    })
}

/// Builds the keys and drops them with no operation in between: no kernel call follows whose
/// stack wipe would cover what construction itself left behind.
#[inline(never)]
fn construct_only(backend: Backend, key: &[u8]) {
    let only = std::env::var("AESX_RESIDUE_ONLY").unwrap_or_default();
    let on = |s: &str| only.is_empty() || only.split(',').any(|o| o == s);
    if on("aes") {
        let aes_slot = Aes::with_backend(key, backend);
        std::hint::black_box(aes_slot.as_ref().unwrap());
    }
    if on("gcm") {
        let g_slot = aesx::AesGcm::with_backend(key, backend);
        std::hint::black_box(g_slot.as_ref().unwrap());
    }
    if on("gcm_new") {
        let g_slot = aesx::AesGcm::new(key);
        std::hint::black_box(g_slot.as_ref().unwrap());
    }
}

/// Builds and drops keys in a loop, as a caller that sets up a key per message does, the key
/// under test last. `Aes::new` is inlined into the loop, both arms of its backend match with
/// it: a version of `Keys` whose heap variants left the hardware slots undefined made LLVM
/// carry the last schedule's registers across iterations, spilled to a second stack area on
/// every call that no drop wiped (issue 13's key-setup work found it in the disassembly).
#[inline(never)]
fn construct_in_loop(backend: Backend, key: &[u8]) {
    let mut other = key.to_vec();
    other[0] ^= 1;
    let keys = [other.as_slice(), key];
    for k in std::hint::black_box(keys) {
        let aes_slot = Aes::with_backend(std::hint::black_box(k), backend);
        std::hint::black_box(aes_slot.as_ref().unwrap());
    }
    for k in std::hint::black_box(keys) {
        let g_slot = aesx::AesGcm::with_backend(std::hint::black_box(k), backend);
        std::hint::black_box(g_slot.as_ref().unwrap());
    }
    for k in std::hint::black_box(keys) {
        let aes_slot = Aes::new(std::hint::black_box(k));
        std::hint::black_box(aes_slot.as_ref().unwrap());
    }
}

/// The name [`scan`] gives the mapping that holds the scanning thread's stack (libtest runs
/// each test on a thread of its own, whose stack is an anonymous mapping).
const THREAD_STACK: &str = "[test thread stack]";

/// Counts occurrences of each masked needle in the child's writable private mappings.
fn scan(needles: &[[u8; 16]]) -> Vec<(usize, String)> {
    let here = 0u8;
    let sp = std::hint::black_box(&here) as *const u8 as u64;
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let mut mem = std::fs::File::open("/proc/self/mem").unwrap();
    let mut found = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    for line in maps.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let perms = f[1];
        // Writable, private; skip the vsyscall/vvar pages.
        if !perms.starts_with("rw") || !perms.ends_with('p') || line.contains("[vvar") {
            continue;
        }
        let (a, b) = f[0].split_once('-').unwrap();
        let (a, b) = (
            u64::from_str_radix(a, 16).unwrap(),
            u64::from_str_radix(b, 16).unwrap(),
        );
        let name = if (a..b).contains(&sp) {
            THREAD_STACK
        } else {
            f.get(5).copied().unwrap_or("anon")
        };
        let name = name.to_string();
        let mut at = a;
        while at < b {
            let n = ((b - at) as usize).min(chunk.len());
            if mem.seek(SeekFrom::Start(at)).is_err() || mem.read_exact(&mut chunk[..n]).is_err() {
                break;
            }
            for (k, m) in needles.iter().enumerate() {
                for w in chunk[..n].windows(16) {
                    if w.iter().zip(MASK).zip(m).all(|((&x, k), &m)| x ^ k == m) {
                        found.push((k, name.clone()));
                    }
                }
            }
            at += n as u64 - 15;
            if n < chunk.len() {
                break;
            }
        }
    }
    found
}

fn child(spec: &str) {
    let mut it = spec.split(':');
    let backend: Backend = it.next().unwrap().parse().unwrap();
    let key = unhex(it.next().unwrap());
    let mode = it.next().unwrap().to_string();
    let needles: Vec<[u8; 16]> = it.map(|h| unhex(h).try_into().unwrap()).collect();
    deep(backend, &key, &mode);
    let last = needles.len() - 1;
    for (k, region) in scan(&needles) {
        // Round key 0 is the key's first 16 bytes, which this child holds on its heap.
        if k != last || region == THREAD_STACK {
            println!("RESIDUE needle {k} in {region}");
        }
    }
    println!("SCAN DONE");
}

/// AES InvMixColumns of a round key (each 4-byte column times the inverse MixColumns matrix
/// over GF(2^8)): what AESIMC computes, the round keys of the equivalent inverse cipher.
fn inv_mix_columns(k: [u8; 16]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for c in 0..4 {
        let a = &k[4 * c..4 * c + 4];
        for r in 0..4 {
            out[4 * c + r] = gf_mul(a[r], 14)
                ^ gf_mul(a[(r + 1) % 4], 11)
                ^ gf_mul(a[(r + 2) % 4], 13)
                ^ gf_mul(a[(r + 3) % 4], 9);
        }
    }
    out
}

/// Multiplication in GF(2^8) modulo the AES polynomial.
fn gf_mul(mut a: u8, mut b: u8) -> u8 {
    let mut p = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        a = (a << 1) ^ if a & 0x80 != 0 { 0x1b } else { 0 };
        b >>= 1;
    }
    p
}

/// The AES S-box from its definition: the inverse in GF(2^8) (0 for 0), then the affine map.
fn sbox(x: u8) -> u8 {
    let inv = (1..=255u8).find(|&y| gf_mul(x, y) == 1).unwrap_or(0);
    let r = |n: u32| inv.rotate_left(n);
    inv ^ r(1) ^ r(2) ^ r(3) ^ r(4) ^ 0x63
}

/// One AES round as AESENC computes it: SubBytes, ShiftRows, MixColumns, then `rk`.
fn aes_round(state: [u8; 16], rk: [u8; 16]) -> [u8; 16] {
    // Byte `r + 4c` is row `r`, column `c`; ShiftRows moves row `r` left by `r` columns.
    let t: [u8; 16] = std::array::from_fn(|i| {
        let (r, c) = (i % 4, i / 4);
        sbox(state[r + 4 * ((c + r) % 4)])
    });
    std::array::from_fn(|i| {
        let (r, c) = (i % 4, i / 4);
        let a = |k: usize| t[(r + k) % 4 + 4 * c];
        gf_mul(a(0), 2) ^ gf_mul(a(1), 3) ^ a(2) ^ a(3) ^ rk[i]
    })
}

/// [`aes_round`] is AESENC (checked where the CPU has AES-NI): otherwise its needle would
/// find nothing.
#[cfg(target_arch = "x86_64")]
#[test]
fn aes_round_is_aesenc() {
    if !std::arch::is_x86_feature_detected!("aes") {
        return;
    }
    #[target_feature(enable = "aes")]
    fn aesenc(s: [u8; 16], k: [u8; 16]) -> [u8; 16] {
        use std::arch::x86_64::*;
        let mut out = [0u8; 16];
        // SAFETY: AES-NI (the target feature); 16-byte unaligned loads and store.
        unsafe {
            let v = _mm_aesenc_si128(
                _mm_loadu_si128(s.as_ptr().cast()),
                _mm_loadu_si128(k.as_ptr().cast()),
            );
            _mm_storeu_si128(out.as_mut_ptr().cast(), v);
        }
        out
    }
    for seed in 0..64u64 {
        let s: [u8; 16] = random_key(16, seed).try_into().unwrap();
        let k: [u8; 16] = random_key(16, seed + 1000).try_into().unwrap();
        // SAFETY: AES-NI was detected above.
        assert_eq!(aes_round(s, k), unsafe { aesenc(s, k) });
    }
}

/// [`inv_mix_columns`] is AESIMC (checked where the CPU has AES-NI): otherwise its needles
/// would find nothing.
#[cfg(target_arch = "x86_64")]
#[test]
fn inv_mix_columns_is_aesimc() {
    if !std::arch::is_x86_feature_detected!("aes") {
        return;
    }
    #[target_feature(enable = "aes")]
    fn aesimc(k: [u8; 16]) -> [u8; 16] {
        use std::arch::x86_64::*;
        let mut out = [0u8; 16];
        // SAFETY: AES-NI (the target feature); 16-byte unaligned load and store.
        unsafe {
            let v = _mm_aesimc_si128(_mm_loadu_si128(k.as_ptr().cast()));
            _mm_storeu_si128(out.as_mut_ptr().cast(), v);
        }
        out
    }
    for seed in 0..64u64 {
        let k: [u8; 16] = random_key(16, seed).try_into().unwrap();
        // SAFETY: AES-NI was detected above.
        assert_eq!(inv_mix_columns(k), unsafe { aesimc(k) });
    }
}

fn random_key(len: usize, salt: u64) -> Vec<u8> {
    use std::hash::{BuildHasher, Hasher};
    let s = std::collections::hash_map::RandomState::new();
    (0..len)
        .map(|i| {
            let mut h = s.build_hasher();
            h.write_u64(salt ^ (i as u64) << 8);
            h.finish() as u8
        })
        .collect()
}

#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "unoptimised code copies keys through its frames; run with --release"
)]
fn no_round_keys_left_after_use() {
    if let Ok(spec) = std::env::var(CHILD) {
        return child(&spec);
    }
    let mode = if cfg!(feature = "rayon") {
        "threads"
    } else {
        "use"
    };
    check("no_round_keys_left_after_use", mode, None);
}

/// Each group of entry points on its own: in the test above a later call's stack wipe covers
/// what an earlier one left on the same stack (a CBC decryption that skips the wipe,
/// `aesni::cbc_decrypt_nostack`, is checked only if nothing runs after it).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "unoptimised code copies keys through its frames; run with --release"
)]
fn no_round_keys_left_after_each_operation() {
    if let Ok(spec) = std::env::var(CHILD) {
        return child(&spec);
    }
    for only in ["ecb", "block", "cbc", "ctr", "gcm"] {
        check("no_round_keys_left_after_each_operation", "use", Some(only));
    }
}

/// `AesGcm::new` / `with_backend` (and `Aes::with_backend`) then drop, nothing else: what
/// construction alone leaves (the test above also runs kernels, whose stack wipes would hide it).
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "unoptimised code copies keys through its frames; run with --release"
)]
fn no_round_keys_left_after_construction() {
    if let Ok(spec) = std::env::var(CHILD) {
        return child(&spec);
    }
    check("no_round_keys_left_after_construction", "construct", None);
}

/// `Aes::with_backend` then drop, in a loop (the key under test last): nothing carried from
/// one iteration to the next may stay behind.
#[test]
#[cfg_attr(
    debug_assertions,
    ignore = "unoptimised code copies keys through its frames; run with --release"
)]
fn no_round_keys_left_after_construction_in_a_loop() {
    if let Ok(spec) = std::env::var(CHILD) {
        return child(&spec);
    }
    check(
        "no_round_keys_left_after_construction_in_a_loop",
        "construct_loop",
        None,
    );
}

/// Runs `test` as a child per backend and key size in `mode` (with only the entry points
/// named by `only`, else those of `AESX_RESIDUE_ONLY` or all); fails on any needle found.
/// GCM multiplication by `x` of an element as a big-endian `u128` (bit 127 = `x^0`).
fn gcm_mul_x(v: u128) -> u128 {
    (v >> 1) ^ if v & 1 == 1 { 0xe1 << 120 } else { 0 }
}

/// GCM multiplication, bit by bit (SP 800-38D, Algorithm 1).
fn gcm_mul(x: u128, y: u128) -> u128 {
    let (mut z, mut v) = (0u128, y);
    for i in 0..128 {
        if (x >> (127 - i)) & 1 == 1 {
            z ^= v;
        }
        v = gcm_mul_x(v);
    }
    z
}

/// 16 bytes of the byte-shuffle GHASH tables of `H^(2^squarings)` as they lie in the key:
/// byte 0 of the entries 8..15 of nibble position 0, then of the entries 0..7 of position 1
/// (each entry `n` the product of `n` at that position, bit 3 of `n` the lowest power). One
/// table row alone (its 16 entries span only 4 bytes) is too regular for a needle: it matched
/// constant tables in the test binary.
fn table_row(h: u128, squarings: usize) -> [u8; 16] {
    let mut p = h;
    for _ in 0..squarings {
        p = gcm_mul(p, p);
    }
    let mut b = p;
    let mut rows = [[0u8; 16]; 2];
    for row in rows.iter_mut() {
        let mut basis = [0u128; 4];
        for bk in basis.iter_mut() {
            *bk = b;
            b = gcm_mul_x(b);
        }
        *row = std::array::from_fn(|n| {
            let e = (0..4)
                .filter(|k| (n >> (3 - k)) & 1 == 1)
                .fold(0u128, |a, k| a ^ basis[k]);
            e.to_be_bytes()[0]
        });
    }
    std::array::from_fn(|i| {
        if i < 8 {
            rows[0][8 + i]
        } else {
            rows[1][i - 8]
        }
    })
}

/// The needles of `key`: round keys 2 to last (and 1 for AES-128), InvMixColumns of round
/// keys 1 to last - 1, GCM's H*x, round 1 of the zero block, 16 bytes of the H^32 and H^16 tables,
/// round key 0 (last).
fn needles(key: &[u8]) -> Vec<[u8; 16]> {
    let rk = aesx::hazmat::expand_key(key).unwrap();
    let nr = rk.rounds;
    // Every stored round key from 2 on, so that a wipe missing any one store is caught.
    let mut picks: Vec<usize> = (2..=nr).collect();
    if key.len() == 16 {
        picks.push(1);
    }
    let mut secrets: Vec<[u8; 16]> = picks.iter().map(|&r| rk.keys[r]).collect();
    // The decryption schedule of the equivalent inverse cipher (AESIMC of round keys
    // 1 to last - 1), which the `aesni` ECB/CBC decryption derives per call: every entry.
    secrets.extend((1..nr).map(|r| inv_mix_columns(rk.keys[r])));
    // GCM's first key power as the PCLMULQDQ/VPCLMULQDQ key tables store it (POLYVAL
    // form: H = E_K(0) read big-endian, times x, little-endian bytes).
    let mut h = [0u8; 16];
    Aes::with_backend(key, Backend::Soft)
        .unwrap()
        .encrypt_block(&mut h);
    let a = u128::from_be_bytes(h);
    let carry = 0u128.wrapping_sub(a >> 127);
    secrets.push(((a << 1) ^ (carry & 0xc200_0000_0000_0000_0000_0000_0000_0001)).to_le_bytes());
    // Round 1 of the all-zero block (AESENC(k0, k1)): one entry of the per-call table
    // of first rounds of the zmm CTR assembly (`vaes512` on AMD, from 6 KiB).
    secrets.push(aes_round(rk.keys[0], rk.keys[1]));
    // 16 bytes of the byte-shuffle GHASH tables of `soft`/`vpaes` (`H^32` with AVX2,
    // `H^16` with SSSE3 alone; built only by those two backends' `AesGcm`).
    for squarings in [5, 4] {
        secrets.push(table_row(u128::from_be_bytes(h), squarings));
    }
    // Last: round key 0 (the key's first 16 bytes; looked for on the stack only, see `child`).
    secrets.push(rk.keys[0]);
    secrets
}

/// A needle that ordinary memory could hold by chance is no evidence. The table needles carry
/// only 15 bits of their power (the top byte and the low 7 bits: one key in 32768 makes one
/// all zero, and zeros fill the stack; CI failed on such a key), so a key is used only if every
/// needle has at least 8 distinct byte values (about one key in 500 is redrawn).
fn distinctive(n: &[u8; 16]) -> bool {
    let mut seen = [false; 256];
    n.iter().for_each(|&b| seen[b as usize] = true);
    seen.iter().filter(|&&s| s).count() >= 8
}

fn check(test: &str, mode: &str, only: Option<&str>) {
    let mut failures = Vec::new();
    for backend in Backend::available() {
        for (i, kl) in [16usize, 24, 32].into_iter().enumerate() {
            let (key, secrets) = (0u64..)
                .map(|t| random_key(kl, i as u64 + 3 * t))
                .map(|k| {
                    let n = needles(&k);
                    (k, n)
                })
                .find(|(_, n)| n.iter().all(distinctive))
                .unwrap();
            let masked: Vec<String> = secrets
                .iter()
                .map(|k| {
                    let m: Vec<u8> = k.iter().zip(MASK).map(|(a, b)| a ^ b).collect();
                    hex(&m)
                })
                .collect();
            let spec = format!(
                "{}:{}:{}:{}",
                backend.name(),
                hex(&key),
                mode,
                masked.join(":")
            );
            let mut cmd = Command::new(std::env::current_exe().unwrap());
            cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
                .env(CHILD, spec);
            if let Some(o) = only {
                cmd.env("AESX_RESIDUE_ONLY", o);
            }
            let out = cmd.output().unwrap();
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(
                out.status.success() && text.contains("SCAN DONE"),
                "child failed for {backend} AES-{}: {}\n{}",
                kl * 8,
                text,
                String::from_utf8_lossy(&out.stderr)
            );
            // Not at the start of a line: libtest prints "test NAME ... " and the child's
            // first line of output follows it on the same line.
            for line in text
                .lines()
                .filter_map(|l| l.find("RESIDUE").map(|i| &l[i..]))
            {
                let ops = only.map(|o| format!(" ({o})")).unwrap_or_default();
                failures.push(format!("{backend} AES-{}{ops}: {line}", kl * 8));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "key material left in memory (needles: round keys {{2, last, 1 for AES-128}}, \
         InvMixColumns of round keys 1 and 2, GCM's H*x, round 1 of the zero block, 16 bytes \
         of the H^32 and the H^16 GHASH tables, then round key 0 on the stack):\n{}",
        failures.join("\n")
    );
}

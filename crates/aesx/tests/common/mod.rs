//! Shared helpers for the aesx integration tests: test-vector parsers, an independent oracle
//! (RustCrypto `aes` + `cbc` + `ctr`), deterministic test data and the backend list.
//!
//! (A `tests/common/mod.rs` rather than `tests/common.rs`: Cargo would build the latter as a
//! test binary of its own.)
#![allow(dead_code)]

use std::fmt;
use std::path::PathBuf;

use aes::cipher::{
    Array, BlockCipherDecrypt, BlockCipherEncrypt, BlockModeDecrypt, BlockModeEncrypt, KeyInit,
    KeyIvInit, StreamCipher, StreamCipherSeek,
};
use aesx::Backend;

// ---------------------------------------------------------------------------------------------
// Backends

/// Every backend this CPU runs, checked for sanity so a broken list cannot make every test
/// vacuous: `soft` always first.
///
/// For quick iteration on one backend, `AESX_TEST_BACKENDS=aesni,vaes512` restricts the list
/// (the names must be available here; `soft` stays in as the reference). Never set it in CI.
pub fn backends() -> Vec<Backend> {
    let list = Backend::available();
    assert_eq!(
        list.first(),
        Some(&Backend::Soft),
        "soft must always be available and first"
    );
    match std::env::var("AESX_TEST_BACKENDS") {
        Ok(only) if !only.trim().is_empty() => {
            let mut picked = vec![Backend::Soft];
            for name in only.split(',') {
                let b: Backend = name
                    .parse()
                    .unwrap_or_else(|_| panic!("AESX_TEST_BACKENDS: unknown backend {name:?}"));
                assert!(
                    b.is_available(),
                    "AESX_TEST_BACKENDS: {b} is not available here"
                );
                if !picked.contains(&b) {
                    picked.push(b);
                }
            }
            picked.sort();
            picked
        }
        _ => list,
    }
}

// ---------------------------------------------------------------------------------------------
// Test-vector files

/// Absolute path of a file under `testdata/aes/`.
pub fn data_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/aes")
        .join(rel)
}

/// Reads a file under `testdata/aes/` as text.
pub fn read_text(rel: &str) -> String {
    let p = data_path(rel);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("cannot read {}: {e}", p.display()))
}

/// The `[ENCRYPT]` / `[DECRYPT]` section a record sits in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dir {
    Encrypt,
    Decrypt,
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dir::Encrypt => "ENCRYPT",
            Dir::Decrypt => "DECRYPT",
        })
    }
}

/// One record of a NIST CAVP style `.rsp` file: a run of `NAME = hex` lines.
#[derive(Clone, Debug)]
pub struct Record {
    /// File name relative to `testdata/aes/`.
    pub file: String,
    /// 1-based line number of the record's first field.
    pub line: usize,
    pub dir: Dir,
    /// `(NAME, value)` in file order (`COUNT` stays text, everything else is hex).
    pub fields: Vec<(String, String)>,
    /// `Intermediate Vaue NAME = hex` lines of the NIST MCT intermediate files, in order.
    pub intermediate: Vec<Vec<u8>>,
}

impl Record {
    /// The raw text of a field.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A hex field, decoded; panics (naming the record) if it is missing or not hex.
    pub fn hex(&self, name: &str) -> Vec<u8> {
        let v = self
            .get(name)
            .unwrap_or_else(|| panic!("{self}: no {name} field"));
        hex::decode(v).unwrap_or_else(|e| panic!("{self}: {name} is not hex: {e}"))
    }

    /// A 16-byte hex field (IV, MCT blocks).
    pub fn block(&self, name: &str) -> [u8; 16] {
        self.hex(name)
            .try_into()
            .unwrap_or_else(|v: Vec<u8>| panic!("{self}: {name} has {} bytes, not 16", v.len()))
    }

    pub fn count(&self) -> &str {
        self.get("COUNT").unwrap_or("?")
    }
}

/// Names a record in failure messages: `nist-kat/ECBGFSbox128.rsp:12 [ENCRYPT] COUNT=0`.
impl fmt::Display for Record {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} [{}] COUNT={}",
            self.file,
            self.line,
            self.dir,
            self.count()
        )
    }
}

/// Parses a NIST `.rsp`-layout file (also RFC 3686 / SP 800-38A / PuTTY files, which use the
/// same layout, and the NIST MCT intermediate files). Strict: any line it does not understand
/// is a test failure, so a format surprise cannot silently drop vectors.
pub fn parse_rsp(rel: &str) -> Vec<Record> {
    let text = read_text(rel);
    let mut out = Vec::new();
    let mut dir: Option<Dir> = None;
    let mut cur: Option<Record> = None;
    for (i, raw) in text.split('\n').enumerate() {
        let lineno = i + 1;
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let t = line.trim();
        if t.is_empty() {
            out.extend(cur.take());
            continue;
        }
        if t.starts_with('#') {
            continue;
        }
        if let Some(sec) = t.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            out.extend(cur.take());
            dir = Some(match sec {
                "ENCRYPT" => Dir::Encrypt,
                "DECRYPT" => Dir::Decrypt,
                _ => panic!("{rel}:{lineno}: unknown section [{sec}]"),
            });
            continue;
        }
        let (name, value) = t
            .split_once('=')
            .unwrap_or_else(|| panic!("{rel}:{lineno}: not a NAME = value line: {t:?}"));
        let (name, value) = (name.trim(), value.trim());
        let rec = cur.get_or_insert_with(|| Record {
            file: rel.to_string(),
            line: lineno,
            dir: dir.unwrap_or_else(|| panic!("{rel}:{lineno}: record before any section")),
            fields: Vec::new(),
            intermediate: Vec::new(),
        });
        if name == "INTERMEDIATE COUNT" {
            continue;
        }
        if let Some(_inner) = name.strip_prefix("Intermediate Vaue ") {
            let v = hex::decode(value)
                .unwrap_or_else(|e| panic!("{rel}:{lineno}: intermediate value not hex: {e}"));
            rec.intermediate.push(v);
            continue;
        }
        assert!(
            name.bytes().all(|b| b.is_ascii_uppercase()),
            "{rel}:{lineno}: unexpected field name {name:?}"
        );
        assert!(
            rec.get(name).is_none(),
            "{rel}:{lineno}: field {name} repeated within one record"
        );
        rec.fields.push((name.to_string(), value.to_string()));
    }
    out.extend(cur.take());
    assert!(!out.is_empty(), "{rel}: no records");
    out
}

/// One test of Wycheproof `aes_cbc_pkcs5_test.json` (schema ind_cpa_test_schema_v1).
#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WycheproofTest {
    pub tc_id: u32,
    pub comment: String,
    pub flags: Vec<String>,
    pub key: String,
    pub iv: String,
    pub msg: String,
    pub ct: String,
    pub result: String,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WycheproofGroup {
    pub key_size: u32,
    pub iv_size: u32,
    #[serde(rename = "type")]
    pub kind: String,
    pub tests: Vec<WycheproofTest>,
}

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WycheproofFile {
    pub algorithm: String,
    pub number_of_tests: usize,
    pub test_groups: Vec<WycheproofGroup>,
}

pub fn read_wycheproof(rel: &str) -> WycheproofFile {
    let f: WycheproofFile = serde_json::from_str(&read_text(rel))
        .unwrap_or_else(|e| panic!("{rel}: not Wycheproof JSON: {e}"));
    let n: usize = f.test_groups.iter().map(|g| g.tests.len()).sum();
    assert_eq!(
        n, f.number_of_tests,
        "{rel}: numberOfTests disagrees with the test list"
    );
    f
}

// ---------------------------------------------------------------------------------------------
// Deterministic test data

/// splitmix64: reproducible pseudo-random bytes for differential tests (not for keys in use).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn fill(&mut self, buf: &mut [u8]) {
        for chunk in buf.chunks_mut(8) {
            let v = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&v[..chunk.len()]);
        }
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        self.fill(&mut v);
        v
    }
    pub fn block(&mut self) -> [u8; 16] {
        let mut b = [0u8; 16];
        self.fill(&mut b);
        b
    }
}

/// Hex of at most the first 64 bytes where two buffers first differ, for failure messages
/// that stay readable on megabyte inputs.
pub fn first_diff(got: &[u8], want: &[u8]) -> String {
    if got.len() != want.len() {
        return format!("length {} != expected {}", got.len(), want.len());
    }
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None => "equal".to_string(),
        Some(i) => {
            let blk = i / 16 * 16;
            let end = (blk + 64).min(got.len());
            format!(
                "first difference at byte {i} (block {}): got {} want {}",
                i / 16,
                hex::encode(&got[blk..end]),
                hex::encode(&want[blk..end])
            )
        }
    }
}

/// Asserts equality with a short diff instead of dumping whole buffers.
#[track_caller]
pub fn assert_bytes_eq(got: &[u8], want: &[u8], what: impl fmt::Display) {
    if got != want {
        panic!("{what}: {}", first_diff(got, want));
    }
}

// ---------------------------------------------------------------------------------------------
// Independent oracle: RustCrypto aes 0.9 / cbc 0.2 / ctr 0.10 (Ctr128BE)

/// Runs `$body` with `$C` bound to the RustCrypto AES type for `$key`'s length.
macro_rules! with_rc_aes {
    ($key:expr, $C:ident => $body:expr) => {
        match $key.len() {
            16 => {
                type $C = aes::Aes128;
                $body
            }
            24 => {
                type $C = aes::Aes192;
                $body
            }
            32 => {
                type $C = aes::Aes256;
                $body
            }
            n => panic!("oracle: no AES with a {n}-byte key"),
        }
    };
}

fn as_blocks(buf: &mut [u8]) -> &mut [aes::Block] {
    let (blocks, rest) = Array::slice_as_chunks_mut(buf);
    assert!(rest.is_empty(), "oracle: ECB/CBC data must be whole blocks");
    blocks
}

pub fn rc_ecb_encrypt(key: &[u8], buf: &mut [u8]) {
    with_rc_aes!(key, C => C::new_from_slice(key).unwrap().encrypt_blocks(as_blocks(buf)))
}

pub fn rc_ecb_decrypt(key: &[u8], buf: &mut [u8]) {
    with_rc_aes!(key, C => C::new_from_slice(key).unwrap().decrypt_blocks(as_blocks(buf)))
}

pub fn rc_cbc_encrypt(key: &[u8], iv: &[u8; 16], buf: &mut [u8]) {
    with_rc_aes!(key, C => cbc::Encryptor::<C>::new_from_slices(key, iv)
        .unwrap()
        .encrypt_blocks(as_blocks(buf)))
}

pub fn rc_cbc_decrypt(key: &[u8], iv: &[u8; 16], buf: &mut [u8]) {
    with_rc_aes!(key, C => cbc::Decryptor::<C>::new_from_slices(key, iv)
        .unwrap()
        .decrypt_blocks(as_blocks(buf)))
}

/// CTR with a 128-bit big-endian counter (wrapping mod 2^128), starting `pos` bytes into the
/// stream whose first counter block is `iv`.
pub fn rc_ctr(key: &[u8], iv: &[u8; 16], pos: u64, buf: &mut [u8]) {
    with_rc_aes!(key, C => {
        let mut c = ctr::Ctr128BE::<C>::new_from_slices(key, iv).unwrap();
        c.seek(pos);
        c.apply_keystream(buf);
    })
}

/// `iv + n` as a 128-bit big-endian counter, wrapping.
pub fn ctr_add(iv: &[u8; 16], n: u128) -> [u8; 16] {
    u128::from_be_bytes(*iv).wrapping_add(n).to_be_bytes()
}

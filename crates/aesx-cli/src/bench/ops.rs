//! The operations `aesx bench` measures. Add an entry here (and its runners in
//! [`super::subjects`]) to measure a new operation (ctr-mt, fugue-256, ...).

use aesx::hash::fugue::FugueAlg;
use anyhow::{Result, bail};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Ctr,
    /// CTR on every core (`Aes::ctr_xor_at_par`); aesx only, with single-threaded OpenSSL as
    /// the reference.
    CtrMt,
    EcbEnc,
    EcbDec,
    CbcEnc,
    CbcDec,
    /// Expanding one key (encryption and decryption schedules), in ns per key.
    Keysetup,
    /// The AES-NI key-expansion variants of `aesx::hazmat::keysetup`, in ns per key.
    KeysetupVariants,
    /// Hashing one message with Fugue (no key; every Fugue backend, no peers).
    Fugue(FugueAlg),
    /// AES-GCM seal of one message (12-byte nonce, 13 bytes of AAD, 16-byte tag).
    GcmEnc,
    /// AES-GCM open of one message, tag checked (same shape as `GcmEnc`).
    GcmDec,
}

impl Op {
    pub const ALL: [Op; 14] = [
        Op::Ctr,
        Op::CtrMt,
        Op::EcbEnc,
        Op::EcbDec,
        Op::CbcEnc,
        Op::CbcDec,
        Op::Keysetup,
        Op::KeysetupVariants,
        Op::Fugue(FugueAlg::Fugue224),
        Op::Fugue(FugueAlg::Fugue256),
        Op::Fugue(FugueAlg::Fugue384),
        Op::Fugue(FugueAlg::Fugue512),
        Op::GcmEnc,
        Op::GcmDec,
    ];
    /// What a full run measures (keysetup-variants only on request).
    pub const DEFAULT: [Op; 8] = [
        Op::Ctr,
        Op::EcbEnc,
        Op::EcbDec,
        Op::CbcEnc,
        Op::CbcDec,
        Op::GcmEnc,
        Op::GcmDec,
        Op::Keysetup,
    ];
    /// What `--quick` measures.
    pub const QUICK: [Op; 4] = [Op::Ctr, Op::EcbEnc, Op::CbcDec, Op::Keysetup];

    pub fn name(self) -> &'static str {
        match self {
            Op::Ctr => "ctr",
            Op::CtrMt => "ctr-mt",
            Op::EcbEnc => "ecb-enc",
            Op::EcbDec => "ecb-dec",
            Op::CbcEnc => "cbc-enc",
            Op::CbcDec => "cbc-dec",
            Op::Keysetup => "keysetup",
            Op::KeysetupVariants => "keysetup-variants",
            Op::Fugue(a) => a.name(),
            Op::GcmEnc => "gcm-enc",
            Op::GcmDec => "gcm-dec",
        }
    }

    pub fn parse(s: &str) -> Result<Op> {
        let s = s.trim();
        match Op::ALL
            .into_iter()
            .find(|o| o.name().eq_ignore_ascii_case(s))
        {
            Some(o) => Ok(o),
            None => {
                let names: Vec<&str> = Op::ALL.iter().map(|o| o.name()).collect();
                bail!("--ops: unknown op '{s}'; use any of {}", names.join(", "))
            }
        }
    }

    /// Timed per key (size 0, ns per key) rather than per byte.
    pub fn is_keysetup(self) -> bool {
        matches!(self, Op::Keysetup | Op::KeysetupVariants)
    }

    /// Not an AES op: measured once, not per key size (records carry `key_bits` 0).
    pub fn is_keyless(self) -> bool {
        matches!(self, Op::Fugue(_))
    }

    /// `ctr AES-128`, or just `fugue256` for the keyless ops.
    pub fn case_label(self, key_bits: u32) -> String {
        if self.is_keyless() {
            self.name().to_string()
        } else {
            format!("{} AES-{key_bits}", self.name())
        }
    }

    /// Needs whole 16-byte blocks.
    pub fn needs_blocks(self) -> bool {
        matches!(self, Op::EcbEnc | Op::EcbDec | Op::CbcEnc | Op::CbcDec)
    }

    /// The code in the PuTTY-AES-NI perf format: 0 encrypt (CBC), 1 decrypt (CBC), 2 sdctr;
    /// 3 and 4 (ECB encrypt/decrypt) are aesx extensions. Key setup has no line there.
    pub fn perf_code(self) -> Option<u8> {
        match self {
            Op::CbcEnc => Some(0),
            Op::CbcDec => Some(1),
            Op::Ctr => Some(2),
            Op::EcbEnc => Some(3),
            Op::EcbDec => Some(4),
            Op::CtrMt
            | Op::Keysetup
            | Op::KeysetupVariants
            | Op::Fugue(_)
            | Op::GcmEnc
            | Op::GcmDec => None,
        }
    }
}

//! NIST AESAVS Monte Carlo tests (s.6.4): 100 records x 1000 chained cipher calls for ECB and
//! CBC, all key sizes, both directions, on every backend.
//!
//! Every record is run from the key / IV / input it lists, so one failure does not cascade, and
//! the state our chaining rule derives for record i+1 is checked against what record i+1 lists
//! (which together is the full 100 x 1000 chain). The first five inner outputs are checked
//! against NIST's `intermediate/` files, so a failure names the inner step that first went
//! wrong. Chaining rules: testdata/aes/SOURCE.md.
//!
//! The suite is meant to run with `--release` (the README's test command), where every backend
//! runs all 100 records. Unoptimised builds make the portable `soft` backend so slow (minutes)
//! that there it runs the first 10 records of each section only; hardware backends always run
//! all of them.

mod common;

use aesx::{Aes, Backend, CbcDecryptor, CbcEncryptor};
use common::{Dir, Record, backends, parse_rsp};

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Ecb,
    Cbc,
}

/// What one record's 1000 inner iterations produce.
struct Outcome {
    /// The first five inner outputs (compared with the intermediate files).
    first: Vec<[u8; 16]>,
    /// Output of inner iteration 998.
    out998: [u8; 16],
    /// Output of inner iteration 999: the record's result.
    out999: [u8; 16],
}

/// One AESAVS outer iteration. For ECB, input[j+1] = output[j]. For CBC encryption
/// CT[j] = E(PT[j] ^ CT[j-1]) with CT[-1] = IV, and PT[j+1] = IV for j = 0, else CT[j-1];
/// decryption is the mirror image with the roles of PT and CT swapped. The CBC chain is kept by
/// the streaming `CbcEncryptor` / `CbcDecryptor`, fed one block per call.
fn run_record(aes: &Aes, mode: Mode, dir: Dir, iv: [u8; 16], input: [u8; 16]) -> Outcome {
    let mut first = Vec::with_capacity(5);
    let mut x = input;
    let mut prev = [0u8; 16];
    let mut enc = CbcEncryptor::new(aes, &iv);
    let mut dec = CbcDecryptor::new(aes, &iv);
    for j in 0..1000 {
        let mut out = x;
        match (mode, dir) {
            (Mode::Ecb, Dir::Encrypt) => aes.encrypt_block(&mut out),
            (Mode::Ecb, Dir::Decrypt) => aes.decrypt_block(&mut out),
            (Mode::Cbc, Dir::Encrypt) => enc.encrypt_blocks(&mut out).unwrap(),
            (Mode::Cbc, Dir::Decrypt) => dec.decrypt_blocks(&mut out).unwrap(),
        }
        x = match mode {
            Mode::Ecb => out,
            Mode::Cbc if j == 0 => iv,
            Mode::Cbc => prev,
        };
        if j < 5 {
            first.push(out);
        }
        if j < 999 {
            prev = out;
        }
        if j == 999 {
            return Outcome {
                first,
                out998: prev,
                out999: out,
            };
        }
    }
    unreachable!()
}

/// AESAVS key update: KEY ^= the last |KEY| bytes of out998 || out999.
fn next_key(key: &[u8], o: &Outcome) -> Vec<u8> {
    let tail = [o.out998, o.out999].concat();
    let tail = &tail[32 - key.len()..];
    key.iter().zip(tail).map(|(k, t)| k ^ t).collect()
}

/// How many of a section's 100 records to run on `b` (see the module docs).
fn records_for(b: Backend) -> usize {
    if cfg!(debug_assertions) && b == Backend::Soft {
        10
    } else {
        100
    }
}

fn run_file(mode: Mode, bits: u32) {
    let name = match mode {
        Mode::Ecb => "ECB",
        Mode::Cbc => "CBC",
    };
    let file = format!("nist-mct/{name}MCT{bits}.rsp");
    let recs = parse_rsp(&file);
    let inter = parse_rsp(&format!("nist-mct/intermediate/{name}MCT{bits}.txt"));
    assert_eq!(recs.len(), 200, "{file}: record count");
    assert_eq!(inter.len(), 200, "{file}: intermediate record count");

    for b in backends() {
        for dir in [Dir::Encrypt, Dir::Decrypt] {
            let section: Vec<&Record> = recs.iter().filter(|r| r.dir == dir).collect();
            let inter: Vec<&Record> = inter.iter().filter(|r| r.dir == dir).collect();
            assert_eq!(section.len(), 100, "{file} [{dir}]: record count");
            let (in_name, out_name) = match dir {
                Dir::Encrypt => ("PLAINTEXT", "CIPHERTEXT"),
                Dir::Decrypt => ("CIPHERTEXT", "PLAINTEXT"),
            };
            for (i, r) in section.iter().enumerate().take(records_for(b)) {
                assert_eq!(r.count(), i.to_string(), "{r}: records out of order");
                let key = r.hex("KEY");
                assert_eq!(key.len() * 8, bits as usize, "{r}: key size");
                let iv = if mode == Mode::Cbc {
                    r.block("IV")
                } else {
                    [0; 16]
                };
                let input = r.block(in_name);
                let aes = Aes::with_backend(&key, b).unwrap();
                let o = run_record(&aes, mode, dir, iv, input);

                // Intermediate values first: they say where the chain went wrong.
                let ir = inter[i];
                assert_eq!(
                    (ir.hex("KEY"), ir.block(in_name), ir.block(out_name)),
                    (key.clone(), input, r.block(out_name)),
                    "{ir} does not match {r}"
                );
                assert_eq!(ir.intermediate.len(), 5, "{ir}: intermediate values");
                for (j, want) in ir.intermediate.iter().enumerate() {
                    assert_eq!(
                        hex::encode(o.first[j]),
                        hex::encode(want),
                        "{b}: {r}: inner iteration {j} (per {ir})"
                    );
                }
                assert_eq!(
                    hex::encode(o.out999),
                    hex::encode(r.block(out_name)),
                    "{b}: {r}: {out_name} after 1000 iterations"
                );

                // The chaining rule must produce exactly the next record's starting state.
                if let Some(n) = section.get(i + 1) {
                    assert_eq!(
                        hex::encode(next_key(&key, &o)),
                        n.get("KEY").unwrap(),
                        "{b}: {n}: KEY chained from {r}"
                    );
                    let (want_iv, want_in) = match mode {
                        Mode::Ecb => (None, o.out999),
                        Mode::Cbc => (Some(o.out999), o.out998),
                    };
                    if let Some(v) = want_iv {
                        assert_eq!(v, n.block("IV"), "{b}: {n}: IV chained from {r}");
                    }
                    assert_eq!(
                        want_in,
                        n.block(in_name),
                        "{b}: {n}: {in_name} chained from {r}"
                    );
                }
            }
        }
    }
}

/// One #[test] per file, so the two cores share the work and a failure names the file.
macro_rules! mct_tests {
    ($($name:ident: $mode:expr, $bits:expr;)*) => {$(
        #[test]
        fn $name() {
            run_file($mode, $bits);
        }
    )*};
}

mct_tests! {
    ecb_mct_128: Mode::Ecb, 128;
    ecb_mct_192: Mode::Ecb, 192;
    ecb_mct_256: Mode::Ecb, 256;
    cbc_mct_128: Mode::Cbc, 128;
    cbc_mct_192: Mode::Cbc, 192;
    cbc_mct_256: Mode::Cbc, 256;
}

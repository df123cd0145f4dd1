//! The committed vectors (testdata/format/vectors.json, made by the independent Python
//! implementation from docs/format.md): this crate must write the same files from the same
//! inputs and salts, through the Write adapter and through the pipelined stream on 1 and 2
//! threads, and read them back, on every AES backend this CPU runs.

use std::io::{Read, Write};

use aesx::Backend;
use aesx_file::{Aead, Argon2Params, Decryptor, Options, Secret, testing};
use serde_json::Value;

struct Vector {
    name: String,
    secret: Secret,
    opts: Options,
    file_salt: [u8; 32],
    argon2_salt: [u8; 16],
    plaintext: Vec<u8>,
    file: Vec<u8>,
}

fn load() -> Vec<Vector> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../testdata/format/vectors.json"
    );
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let vs = doc["vectors"].as_array().unwrap();
    assert!(vs.len() >= 10, "vectors missing");
    vs.iter()
        .map(|v| {
            let hexf = |k: &str| hex::decode(v[k].as_str().unwrap()).unwrap();
            let u = |k: &str| v[k].as_u64().unwrap();
            let mut opts = Options {
                aead: Aead::from_id(u("aead") as u8).unwrap(),
                chunk_log2: u("chunk_log2") as u8,
                ..Options::default()
            };
            let mut argon2_salt = [0u8; 16];
            let secret = if v.get("key").is_some() {
                Secret::key(&hexf("key").try_into().unwrap())
            } else {
                opts.argon2 = Argon2Params {
                    m_kib: u("argon2_m") as u32,
                    t: u("argon2_t") as u32,
                    p: u("argon2_p") as u32,
                };
                argon2_salt = hexf("argon2_salt").try_into().unwrap();
                Secret::passphrase(v["passphrase"].as_str().unwrap().as_bytes()).unwrap()
            };
            let n = u("plaintext_len") as usize;
            Vector {
                name: v["name"].as_str().unwrap().to_string(),
                secret,
                opts,
                file_salt: hexf("file_salt").try_into().unwrap(),
                argon2_salt,
                plaintext: (0..n).map(|j| (j % 251) as u8).collect(),
                file: hexf("file"),
            }
        })
        .collect()
}

#[test]
fn write_adapter_reproduces_vectors() {
    for v in load() {
        for backend in Backend::available() {
            let opts = Options {
                backend: Some(backend),
                threads: 2,
                ..v.opts.clone()
            };
            let mut enc = testing::encryptor_with_salts(
                Vec::new(),
                &v.secret,
                &opts,
                v.file_salt,
                v.argon2_salt,
            )
            .unwrap();
            // Odd write sizes, so buffering is exercised.
            for piece in v.plaintext.chunks(777) {
                enc.write_all(piece).unwrap();
            }
            let got = enc.finish().unwrap();
            assert!(got == v.file, "{} on {backend}", v.name);
        }
    }
}

#[test]
fn stream_reproduces_vectors() {
    for v in load() {
        for threads in [1, 2, 3] {
            let opts = Options {
                threads,
                ..v.opts.clone()
            };
            let mut got = Vec::new();
            let n = testing::encrypt_stream_with_salts(
                &v.plaintext[..],
                &mut got,
                &v.secret,
                &opts,
                v.file_salt,
                v.argon2_salt,
            )
            .unwrap();
            assert_eq!(n, v.plaintext.len() as u64);
            assert!(got == v.file, "{} with {threads} threads", v.name);
        }
    }
}

#[test]
fn readers_decrypt_vectors() {
    for v in load() {
        for backend in Backend::available() {
            let opts = Options {
                backend: Some(backend),
                ..Options::default()
            };
            let mut plain = Vec::new();
            Decryptor::new(&v.file[..], &v.secret, &opts)
                .unwrap()
                .read_to_end(&mut plain)
                .unwrap();
            assert!(plain == v.plaintext, "{} on {backend}", v.name);
            let mut out = Vec::new();
            let n =
                aesx_file::decrypt_stream(&v.file[..], &mut out, &v.secret, &opts, None, &|_| {})
                    .unwrap();
            assert_eq!(n as usize, v.plaintext.len());
            assert!(out == v.plaintext, "{} stream on {backend}", v.name);
        }
    }
}

//! The aesx file format (`aesx-file`, docs/format.md) over bytes: `file_encrypt`,
//! `file_decrypt` and `keygen`. The format lives in the `aesx-file` crate; this module only
//! turns Python arguments into a [`Secret`] and [`Options`] and errors into `ValueError`.

use aesx_file::{Aead, Argon2Params, Options, Secret, StreamError};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::buffer::In;

fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The secret from exactly one of `key` (32 bytes) and `passphrase` (str, as UTF-8, or
/// bytes).
fn secret(
    key: Option<&Bound<'_, PyAny>>,
    passphrase: Option<&Bound<'_, PyAny>>,
) -> PyResult<Secret> {
    match (key, passphrase) {
        (Some(k), None) => {
            let k = In::new(k, "key")?;
            let k: &[u8; 32] = k.as_slice().try_into().map_err(|_| {
                PyValueError::new_err(format!(
                    "key must be 32 bytes (aesx.keygen() makes one), got {}",
                    k.len()
                ))
            })?;
            Ok(Secret::key(k))
        }
        (None, Some(p)) => {
            let bytes = match p.extract::<String>() {
                Ok(s) => Zeroizing::new(s.into_bytes()),
                Err(_) => Zeroizing::new(In::new(p, "passphrase")?.as_slice().to_vec()),
            };
            Secret::passphrase(bytes.as_slice()).map_err(value_error)
        }
        _ => Err(PyTypeError::new_err(
            "give exactly one of key= (32 bytes) or passphrase= (str or bytes)",
        )),
    }
}

fn threads(n: Option<usize>) -> PyResult<usize> {
    match n {
        Some(0) => Err(PyValueError::new_err("threads must be at least 1")),
        Some(n) => Ok(n),
        None => Ok(Options::default().threads),
    }
}

fn stream_error(e: StreamError) -> PyErr {
    match e {
        StreamError::Format(e) => value_error(e),
        e => value_error(e),
    }
}

/// ``file_encrypt(data, *, key=None, passphrase=None, aead="aes-256-gcm", kdf_memory_kib=65536,
/// kdf_passes=3, kdf_lanes=4, threads=None) -> bytes``: ``data`` as an aesx file (the
/// format of ``aesx encrypt``, docs/format.md), under a 32-byte ``key`` or a ``passphrase``
/// (Argon2id with the given cost, stored in the header). Each call draws a new random salt, so
/// the same data encrypted twice gives different files. Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (data, *, key = None, passphrase = None, aead = "aes-256-gcm",
    kdf_memory_kib = None, kdf_passes = None, kdf_lanes = None, threads = None))]
#[allow(clippy::too_many_arguments)]
pub fn file_encrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    key: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    aead: &str,
    kdf_memory_kib: Option<u32>,
    kdf_passes: Option<u32>,
    kdf_lanes: Option<u32>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let secret = secret(key, passphrase)?;
    let aead = match aead {
        "aes-256-gcm" => Aead::Aes256Gcm,
        "aes-128-gcm" => Aead::Aes128Gcm,
        other => {
            return Err(PyValueError::new_err(format!(
                "aead must be \"aes-256-gcm\" or \"aes-128-gcm\", got {other:?}"
            )));
        }
    };
    let d = Argon2Params::default();
    let opts = Options {
        aead,
        argon2: Argon2Params {
            m_kib: kdf_memory_kib.unwrap_or(d.m_kib),
            t: kdf_passes.unwrap_or(d.t),
            p: kdf_lanes.unwrap_or(d.p),
        },
        threads: self::threads(threads)?,
        ..Options::default()
    };
    let data = In::new(data, "data")?;
    let src = data.as_slice();
    let out = py
        .detach(|| {
            let mut out = Vec::with_capacity(src.len() + src.len() / 4096 + 256);
            aesx_file::encrypt_stream(
                src,
                &mut out,
                &secret,
                &opts,
                Some(src.len() as u64),
                &|_| {},
            )
            .map(|_| out)
        })
        .map_err(stream_error)?;
    Ok(PyBytes::new(py, &out))
}

/// ``file_decrypt(data, *, key=None, passphrase=None, threads=None) -> bytes``: the plaintext
/// of the aesx file ``data``. Raises ``ValueError`` saying what is wrong (wrong key or
/// passphrase, chunk N corrupted, truncated, data after the end, not an aesx file, hostile
/// Argon2 parameters...) and returns nothing unauthenticated. Runs without the GIL.
#[pyfunction]
#[pyo3(signature = (data, *, key = None, passphrase = None, threads = None))]
pub fn file_decrypt<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    key: Option<&Bound<'py, PyAny>>,
    passphrase: Option<&Bound<'py, PyAny>>,
    threads: Option<usize>,
) -> PyResult<Bound<'py, PyBytes>> {
    let secret = secret(key, passphrase)?;
    let opts = Options {
        threads: self::threads(threads)?,
        ..Options::default()
    };
    let data = In::new(data, "data")?;
    let src = data.as_slice();
    let out = py
        .detach(|| {
            // Plaintext of a file that then fails is wiped, never returned.
            let mut out = Zeroizing::new(Vec::with_capacity(src.len()));
            aesx_file::decrypt_stream(
                src,
                &mut *out,
                &secret,
                &opts,
                Some(src.len() as u64),
                &|_| {},
            )
            .map(|_| out)
        })
        .map_err(stream_error)?;
    Ok(PyBytes::new(py, &out))
}

/// ``keygen() -> bytes``: a new random 32-byte key from the operating system (what
/// ``aesx keygen`` writes to a key file).
#[pyfunction]
pub fn keygen<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
    let k = aesx_file::keygen().map_err(value_error)?;
    Ok(PyBytes::new(py, &k[..]))
}

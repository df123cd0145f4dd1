//! Python bindings for aesx: the `aesx._aesx` extension module behind the `aesx` package.
//!
//! No cryptography here: every function translates Python arguments into calls of the `aesx`
//! crate and its errors into `ValueError`/`TypeError`. Buffers are borrowed, never copied on
//! the way in (`buffer`); results are written straight into new `bytes` objects.
//!
//! The GIL is released around any kernel call on more than [`GIL_RELEASE_BYTES`] bytes (32 KiB).

mod buffer;
mod file;

use std::sync::Mutex;

use aesx::hash::fugue::{Fugue, FugueAlg, FugueBackend};
use aesx::{Backend, ErrorKind};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use zeroize::Zeroize;

use buffer::{In, Out};

/// Inputs above this many bytes are processed with the GIL released.
///
/// IMPLEMENTATION NOTE: releasing the GIL is not free: ~100 ns uncontended (measured on Zen 3
/// at 16 KiB CTR, README "Python"), and when other Python threads are runnable, taking it back
/// can wait for their switch interval. 32 KiB is ~2 us of VAES CTR, the same hold time as
/// hashlib's 2 KiB threshold for a 1 GB/s hash; slower paths (Fugue, the soft backend) hold it
/// longer, still far below the 5 ms switch interval.
pub const GIL_RELEASE_BYTES: usize = 32 * 1024;

/// Every library error that reaches Python is a bad argument: ValueError with the library's
/// message (which never contains key or data bytes).
fn err(e: aesx::Error) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// Runs `f` without the GIL when `len` is large.
fn maybe_detach<T: Send, F: FnOnce() -> T + Send>(py: Python<'_>, len: usize, f: F) -> T {
    if len > GIL_RELEASE_BYTES {
        py.detach(f)
    } else {
        f()
    }
}

/// A new `bytes` of `src.len() + extra` bytes: `src` copied in, then `f` over the whole buffer
/// (its last `extra` bytes zeroed), with the GIL released when
/// large. One pass over the data besides the kernel: no zero-fill, no second copy.
fn bytes_from<'py>(
    py: Python<'py>,
    src: &[u8],
    extra: usize,
    f: impl FnOnce(&mut [u8]) -> Result<(), aesx::Error> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    bytes_from_work(py, src, extra, src.len() + extra, err, f)
}

/// [`bytes_from`] with the GIL released when `work` (the bytes the kernel processes, AAD
/// included) is large, and the library's error mapped by `map`.
fn bytes_from_work<'py>(
    py: Python<'py>,
    src: &[u8],
    extra: usize,
    work: usize,
    map: impl FnOnce(aesx::Error) -> PyErr,
    f: impl FnOnce(&mut [u8]) -> Result<(), aesx::Error> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    let len = src
        .len()
        .checked_add(extra)
        .ok_or_else(|| PyValueError::new_err("data too large"))?;
    let (obj, dst) = new_bytes(py, len)?;
    maybe_detach(py, work, move || {
        let dst = dst as *mut u8;
        // SAFETY: `dst` is the fresh object's `len`-byte buffer (above); `src` is another
        // object's memory, so the ranges do not overlap. The copy and the zero fill of the
        // `extra` tail initialise all `len` bytes before the slice is formed.
        let buf = unsafe {
            std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len());
            std::ptr::write_bytes(dst.add(src.len()), 0, extra);
            std::slice::from_raw_parts_mut(dst, len)
        };
        f(buf)
    })
    .map_err(map)?;
    Ok(obj)
}

/// A new `bytes` object of `len` bytes, not yet filled, and the address of its contents (as a
/// `usize`, so that a closure run without the GIL can carry it).
fn new_bytes(py: Python<'_>, len: usize) -> PyResult<(Bound<'_, PyBytes>, usize)> {
    let n = pyo3::ffi::Py_ssize_t::try_from(len)
        .map_err(|_| PyValueError::new_err("data too large"))?;
    // SAFETY: PyBytes_FromStringAndSize(NULL, n) returns a new, uniquely owned bytes object
    // with `n` writable (uninitialised) bytes, or NULL with an exception set. Until the caller
    // returns it nothing else can see it, so writing its contents is sound.
    unsafe {
        let p = pyo3::ffi::PyBytes_FromStringAndSize(std::ptr::null(), n);
        let obj = Bound::from_owned_ptr_or_err(py, p)?.cast_into_unchecked::<PyBytes>();
        Ok((obj, pyo3::ffi::PyBytes_AsString(p) as usize))
    }
}

/// A new `bytes` of `src.len()` bytes written by `f(src, out)` in one pass (no copy of `src`
/// first), with the GIL released when large.
fn bytes_b2b<'py>(
    py: Python<'py>,
    src: &[u8],
    f: impl FnOnce(&[u8], &mut [u8]) -> Result<(), aesx::Error> + Send,
) -> PyResult<Bound<'py, PyBytes>> {
    let len = src.len();
    let (obj, dst) = new_bytes(py, len)?;
    maybe_detach(py, len, move || {
        // SAFETY: `dst` is the fresh object's `len`-byte buffer, allocated by CPython (its
        // bytes are whatever the allocator left: plain `u8` values to Rust, never read before
        // `f` has written them all); `src` is another object's memory, so the two do not
        // overlap, and nothing else can see the new object yet.
        let out = unsafe { std::slice::from_raw_parts_mut(dst as *mut u8, len) };
        f(src, out)
    })
    .map_err(err)?;
    Ok(obj)
}

fn iv16(iv: &Bound<'_, PyAny>) -> PyResult<[u8; 16]> {
    let iv = In::new(iv, "iv")?;
    iv.as_slice()
        .try_into()
        .map_err(|_| PyValueError::new_err(format!("iv must be 16 bytes, got {}", iv.len())))
}

/// A keystream byte position: an int in 0..=2**64-1.
fn offset(off: Option<&Bound<'_, PyAny>>) -> PyResult<u64> {
    let Some(off) = off else { return Ok(0) };
    if let Ok(v) = off.extract::<u64>() {
        return Ok(v);
    }
    if off.is_instance_of::<pyo3::types::PyInt>() {
        return Err(PyValueError::new_err(
            "offset must be >= 0 and < 2**64 (a CTR stream is at most 2**64 - 1 bytes)",
        ));
    }
    Err(PyTypeError::new_err(format!(
        "offset must be an int, got {}",
        off.get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default()
    )))
}

fn backend_arg(name: Option<&str>) -> PyResult<Backend> {
    let Some(name) = name else {
        return Ok(Backend::detect());
    };
    let b: Backend = name.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "unknown backend {name:?} (expected one of soft, vpaes, aesni, vaes256, vaes512)"
        ))
    })?;
    if !b.is_available() {
        let avail: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
        return Err(PyValueError::new_err(format!(
            "backend {name:?} is not available on this CPU (available: {})",
            avail.join(", ")
        )));
    }
    Ok(b)
}

/// An expanded AES-128/192/256 key.
///
/// ``AES(key, backend=None)``: ``key`` is 16, 24 or 32 bytes; ``backend`` forces one of
/// ``aesx.cpu()["backends"]`` (default: the fastest this CPU runs). Immutable and safe to share
/// between threads. The key schedule is wiped when the object is freed.
#[pyclass(frozen, module = "aesx", name = "AES")]
struct Aes {
    aes: aesx::Aes,
}

#[pymethods]
impl Aes {
    #[new]
    #[pyo3(signature = (key, backend = None))]
    fn new(key: &Bound<'_, PyAny>, backend: Option<&str>) -> PyResult<Aes> {
        let key = In::new(key, "key")?;
        let b = backend_arg(backend)?;
        let aes = aesx::Aes::with_backend(key.as_slice(), b).map_err(|e| {
            if e.kind() == ErrorKind::InvalidKeyLength {
                PyValueError::new_err(format!(
                    "AES key must be 16, 24 or 32 bytes (128, 192 or 256 bits), got {} bytes",
                    key.len()
                ))
            } else {
                err(e)
            }
        })?;
        Ok(Aes { aes })
    }

    /// The backend this key runs on: ``"soft"``, ``"vpaes"``, ``"aesni"``, ``"vaes256"`` or
    /// ``"vaes512"``.
    #[getter]
    fn backend(&self) -> &'static str {
        self.aes.backend().name()
    }

    /// 128, 192 or 256.
    #[getter]
    fn key_bits(&self) -> u32 {
        self.aes.key_bits()
    }

    fn __repr__(&self) -> String {
        format!(
            "aesx.AES(key_bits={}, backend='{}')",
            self.aes.key_bits(),
            self.aes.backend().name()
        )
    }

    /// ECB-encrypts whole 16-byte blocks; returns bytes of the same length.
    fn encrypt_ecb<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let data = In::new(data, "data")?;
        check_aligned(data.len(), "ECB")?;
        bytes_from(py, data.as_slice(), 0, |b| self.aes.try_encrypt_blocks(b))
    }

    /// ECB-decrypts whole 16-byte blocks; returns bytes of the same length.
    fn decrypt_ecb<'py>(
        &self,
        py: Python<'py>,
        data: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let data = In::new(data, "data")?;
        check_aligned(data.len(), "ECB")?;
        bytes_from(py, data.as_slice(), 0, |b| self.aes.try_decrypt_blocks(b))
    }

    /// CTR with a 128-bit big-endian counter (SSH ``aes*-ctr``, NIST SP 800-38A): XORs ``data``
    /// with the keystream starting ``offset`` bytes into the stream whose first counter block
    /// is ``iv``. Encrypts and decrypts; any split of a message into ``(offset, piece)`` calls
    /// gives the same bytes as one call.
    #[pyo3(signature = (iv, data, offset = None))]
    fn ctr<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        offset: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let pos = self::offset(offset)?;
        let data = In::new(data, "data")?;
        check_stream_end(pos, data.len())?;
        bytes_b2b(py, data.as_slice(), |src, out| {
            self.aes.try_ctr_xor_at_b2b(&iv, pos, src, out)
        })
    }

    /// In-place CTR on any writable buffer (bytearray, memoryview, numpy array, mmap); see
    /// ``ctr``. Returns None.
    #[pyo3(signature = (iv, buf, offset = None))]
    fn ctr_into(
        &self,
        py: Python<'_>,
        iv: &Bound<'_, PyAny>,
        buf: &Bound<'_, PyAny>,
        offset: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let iv = iv16(iv)?;
        let pos = self::offset(offset)?;
        let mut out = Out::new(buf, "buf")?;
        let b = out.as_mut_slice();
        check_stream_end(pos, b.len())?;
        maybe_detach(py, b.len(), || self.aes.try_ctr_xor_at(&iv, pos, b)).map_err(err)
    }

    /// CBC encryption. With ``padding=True`` (default) PKCS#7 pads the message (the result is
    /// 1 to 16 bytes longer); with ``padding=False`` the data must be whole 16-byte blocks.
    #[pyo3(signature = (iv, data, padding = true))]
    fn cbc_encrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let data = In::new(data, "data")?;
        let d = data.as_slice();
        if !padding {
            check_aligned(d.len(), "CBC without padding")?;
            return bytes_from(py, d, 0, |b| self.aes.cbc_encrypt(&iv, b));
        }
        let whole = d.len() / 16 * 16;
        let pad = aesx::pkcs7_pad(&d[whole..]).map_err(err)?;
        bytes_from(py, &d[..whole], 16, |b| {
            b[whole..].copy_from_slice(&pad);
            self.aes.cbc_encrypt(&iv, b)
        })
    }

    /// CBC decryption. With ``padding=True`` (default) removes PKCS#7 padding and raises
    /// ValueError if it is malformed (wrong key or IV, or corrupted data); with
    /// ``padding=False`` the data must be whole 16-byte blocks and is returned as decrypted.
    #[pyo3(signature = (iv, data, padding = true))]
    fn cbc_decrypt<'py>(
        &self,
        py: Python<'py>,
        iv: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        padding: bool,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let iv = iv16(iv)?;
        let data = In::new(data, "data")?;
        let d = data.as_slice();
        if !padding {
            check_aligned(d.len(), "CBC without padding")?;
            return bytes_from(py, d, 0, |b| self.aes.cbc_decrypt(&iv, b));
        }
        if d.is_empty() || !d.len().is_multiple_of(16) {
            return Err(PyValueError::new_err(format!(
                "CBC ciphertext with PKCS#7 padding must be a non-zero multiple of 16 bytes, \
                 got {}",
                d.len()
            )));
        }
        // The message length is known only after unpadding: decrypt into a scratch buffer.
        let mut tmp = d.to_vec();
        let n = maybe_detach(py, tmp.len(), || {
            self.aes.cbc_decrypt(&iv, &mut tmp)?;
            aesx::pkcs7_unpad(&tmp)
        });
        let out = n.map(|n| PyBytes::new(py, &tmp[..n]));
        tmp.zeroize();
        out.map_err(err)
    }
}

/// The library refuses a CTR call that would run past byte 2^64 - 1 of the stream; say so with
/// the numbers (before any output is allocated).
fn check_stream_end(pos: u64, len: usize) -> PyResult<()> {
    if pos.checked_add(len as u64).is_none() {
        return Err(PyValueError::new_err(format!(
            "offset {pos} + {len} bytes runs past the end of the CTR stream (2**64 - 1 bytes)"
        )));
    }
    Ok(())
}

fn check_aligned(len: usize, what: &str) -> PyResult<()> {
    if len.is_multiple_of(16) {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{what} data must be a multiple of 16 bytes, got {len}"
        )))
    }
}

/// A Fugue hash object with the ``hashlib`` interface.
#[pyclass(frozen, module = "aesx", name = "FugueHash")]
struct FugueHash {
    alg: FugueAlg,
    state: Mutex<Fugue>,
}

impl FugueHash {
    fn state(&self) -> std::sync::MutexGuard<'_, Fugue> {
        // A panic cannot leave a half-updated state visible (update takes whole words), so a
        // poisoned lock is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn make(alg: FugueAlg, data: Option<&Bound<'_, PyAny>>) -> PyResult<FugueHash> {
        let h = FugueHash {
            alg,
            state: Mutex::new(Fugue::new(alg)),
        };
        if let Some(d) = data {
            h.update(d.py(), d)?;
        }
        Ok(h)
    }
}

#[pymethods]
impl FugueHash {
    /// Hashes more data (any bytes-like object).
    fn update(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let d = In::new(data, "data")?;
        let s = d.as_slice();
        maybe_detach(py, s.len(), || self.state().update(s));
        Ok(())
    }

    /// The digest of the data so far; the object can keep hashing.
    fn digest<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let d = self.state().clone().finalize();
        PyBytes::new(py, &d)
    }

    /// The digest as a lowercase hex string.
    fn hexdigest(&self) -> String {
        let d = self.state().clone().finalize();
        d.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// An independent copy of the current state.
    fn copy(&self) -> FugueHash {
        FugueHash {
            alg: self.alg,
            state: Mutex::new(self.state().clone()),
        }
    }

    /// ``"fugue224"``, ``"fugue256"``, ``"fugue384"`` or ``"fugue512"``.
    #[getter]
    fn name(&self) -> &'static str {
        self.alg.name()
    }

    /// 28, 32, 48 or 64.
    #[getter]
    fn digest_size(&self) -> usize {
        self.alg.output_len()
    }

    /// 4: Fugue absorbs the message in 32-bit words.
    #[getter]
    fn block_size(&self) -> usize {
        4
    }

    fn __repr__(&self) -> String {
        format!("<{} FugueHash object>", self.alg.name())
    }
}

macro_rules! fugue_ctor {
    ($f:ident, $alg:expr, $doc:literal) => {
        #[doc = $doc]
        #[pyfunction]
        #[pyo3(signature = (data = None, *, usedforsecurity = true))]
        fn $f(data: Option<&Bound<'_, PyAny>>, usedforsecurity: bool) -> PyResult<FugueHash> {
            let _ = usedforsecurity;
            FugueHash::make($alg, data)
        }
    };
}

fugue_ctor!(
    fugue224,
    FugueAlg::Fugue224,
    "Fugue-224 hash object, like hashlib.sha224()."
);
fugue_ctor!(
    fugue256,
    FugueAlg::Fugue256,
    "Fugue-256 hash object, like hashlib.sha256()."
);
fugue_ctor!(
    fugue384,
    FugueAlg::Fugue384,
    "Fugue-384 hash object, like hashlib.sha384()."
);
fugue_ctor!(
    fugue512,
    FugueAlg::Fugue512,
    "Fugue-512 hash object, like hashlib.sha512()."
);

/// ``new(name, data=b"")``: a Fugue hash object by name (``"fugue256"``, ``"fugue-256"``...),
/// like ``hashlib.new``.
#[pyfunction]
#[pyo3(signature = (name, data = None, *, usedforsecurity = true))]
fn new(
    name: &Bound<'_, PyAny>,
    data: Option<&Bound<'_, PyAny>>,
    usedforsecurity: bool,
) -> PyResult<FugueHash> {
    let _ = usedforsecurity;
    let name: String = name.extract().map_err(|_| {
        PyTypeError::new_err(format!(
            "name must be a str, got {}",
            name.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let alg: FugueAlg = name.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "unsupported hash type {name:?} (aesx provides fugue224, fugue256, fugue384, \
             fugue512)"
        ))
    })?;
    FugueHash::make(alg, data)
}

/// This CPU and what aesx runs on it: ``{"features": {name: bool}, "backends": [...],
/// "backend": name, "fugue_backends": [...], "fugue_backend": name}``.
#[pyfunction]
fn cpu(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    let feats = PyDict::new(py);
    for (name, on) in aesx::cpu::features().list() {
        feats.set_item(name, on)?;
    }
    d.set_item("features", feats)?;
    let names: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
    d.set_item("backends", PyList::new(py, names)?)?;
    d.set_item("backend", Backend::detect().name())?;
    let fb: Vec<&str> = FugueBackend::available().iter().map(|b| b.name()).collect();
    d.set_item("fugue_backends", PyList::new(py, fb)?)?;
    d.set_item("fugue_backend", FugueBackend::detect().name())?;
    Ok(d)
}

/// `aesx.InvalidTag` (defined in `aesx/__init__.py`: a subclass of `cryptography`'s
/// `InvalidTag` when that is installed), raised when AES-GCM authentication fails.
fn invalid_tag(py: Python<'_>) -> PyErr {
    match py
        .import("aesx")
        .and_then(|m| m.getattr("InvalidTag"))
        .and_then(|c| c.call0())
    {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A nonce as `cryptography`'s AESGCM accepts it (8 to 128 bytes), copied onto the stack: it is
/// small, a copy cannot alias an output buffer, and no heap allocation is made per call.
struct Nonce {
    bytes: [u8; 128],
    len: usize,
}

impl std::ops::Deref for Nonce {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

fn gcm_nonce(nonce: &Bound<'_, PyAny>) -> PyResult<Nonce> {
    let n = In::new(nonce, "nonce")?;
    if !(8..=128).contains(&n.len()) {
        return Err(PyValueError::new_err(format!(
            "Nonce must be between 8 and 128 bytes, got {}",
            n.len()
        )));
    }
    let mut out = Nonce {
        bytes: [0; 128],
        len: n.len(),
    };
    out.bytes[..n.len()].copy_from_slice(n.as_slice());
    Ok(out)
}

fn gcm_aad<'py>(aad: Option<&Bound<'py, PyAny>>) -> PyResult<Option<In<'py>>> {
    aad.map(|a| In::new(a, "associated_data")).transpose()
}

/// AES-GCM with the interface of ``cryptography``'s ``AESGCM``: replacing
/// ``from cryptography.hazmat.primitives.ciphers.aead import AESGCM`` by
/// ``from aesx import AESGCM`` is the whole migration.
///
/// ``AESGCM(key, backend=None, tag_length=16)``: ``key`` is 16, 24 or 32 bytes;
/// ``encrypt(nonce, data, associated_data)`` returns ciphertext || tag; ``decrypt`` raises
/// ``aesx.InvalidTag`` (a ``cryptography.exceptions.InvalidTag`` when ``cryptography`` is
/// installed) and returns no plaintext if the tag does not authenticate; ``encrypt_into`` and
/// ``decrypt_into`` write into a caller's buffer (on failure ``decrypt_into`` zeroes it).
/// Nonces are 8 to 128 bytes (12 is the fast path), as in ``cryptography``. The extra keyword
/// arguments: ``backend`` forces an AES backend like ``AES``; ``tag_length`` (16, or 12..15,
/// 8, 4 for protocols that truncate) sets the tag this key produces and accepts. Immutable
/// and safe to share between threads; key material is wiped when the object is freed.
#[pyclass(frozen, module = "aesx", name = "AESGCM")]
struct AesGcmPy {
    gcm: aesx::AesGcm,
}

impl AesGcmPy {
    fn tag_len(&self) -> usize {
        self.gcm.tag_len()
    }

    /// Decryption failures: a bad tag is `InvalidTag`, anything else a `ValueError`.
    fn open_err(py: Python<'_>, e: aesx::Error) -> PyErr {
        if e.kind() == ErrorKind::AuthenticationFailed {
            invalid_tag(py)
        } else {
            err(e)
        }
    }
}

/// `associated_data` as a slice that cannot alias `out`: borrowed, or copied when the caller
/// passed a view of the output buffer.
fn aad_apart<'a>(aad: &'a Option<In<'_>>, out: &mut Out, copy: &'a mut Vec<u8>) -> &'a [u8] {
    match aad {
        None => &[],
        Some(a) if a.overlaps(out) => {
            // SAFETY: `a` is a live, pinned view of `a.len()` readable bytes; no slice of
            // `out` exists yet, so reading through a raw copy aliases no `&mut`.
            *copy = unsafe { std::slice::from_raw_parts(a.as_ptr(), a.len()) }.to_vec();
            copy
        }
        Some(a) => a.as_slice(),
    }
}

#[pymethods]
impl AesGcmPy {
    #[new]
    #[pyo3(signature = (key, backend = None, tag_length = 16))]
    fn new(key: &Bound<'_, PyAny>, backend: Option<&str>, tag_length: usize) -> PyResult<Self> {
        let key = In::new(key, "key")?;
        if !matches!(key.len(), 16 | 24 | 32) {
            return Err(PyValueError::new_err(format!(
                "AESGCM key must be 128, 192, or 256 bits, got {} bytes",
                key.len()
            )));
        }
        let b = backend_arg(backend)?;
        let gcm = aesx::AesGcm::with_backend(key.as_slice(), b)
            .and_then(|g| g.with_tag_len(tag_length))
            .map_err(|e| {
                if e.kind() == ErrorKind::InvalidTagLength {
                    PyValueError::new_err(format!(
                        "tag_length must be 16, 15, 14, 13, 12, 8 or 4, got {tag_length}"
                    ))
                } else {
                    err(e)
                }
            })?;
        Ok(AesGcmPy { gcm })
    }

    /// A new random key of ``bit_length`` bits (128, 192 or 256) from ``os.urandom``.
    #[classmethod]
    fn generate_key<'py>(
        cls: &Bound<'py, pyo3::types::PyType>,
        bit_length: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        if !bit_length.is_instance_of::<pyo3::types::PyInt>() {
            return Err(PyTypeError::new_err(format!(
                "bit_length must be an int, got {}",
                bit_length
                    .get_type()
                    .name()
                    .map(|n| n.to_string())
                    .unwrap_or_default()
            )));
        }
        let bits: i64 = bit_length.extract().unwrap_or(0);
        if !matches!(bits, 128 | 192 | 256) {
            return Err(PyValueError::new_err("bit_length must be 128, 192, or 256"));
        }
        py.import("os")?.call_method1("urandom", (bits / 8,))
    }

    /// The AES backend the key runs on (``aesx.cpu()["backends"]``).
    #[getter]
    fn backend(&self) -> &'static str {
        self.gcm.backend().name()
    }

    /// 128, 192 or 256.
    #[getter]
    fn key_bits(&self) -> u32 {
        self.gcm.key_bits()
    }

    /// Bytes of tag appended by ``encrypt`` and expected by ``decrypt`` (16 unless chosen).
    #[getter]
    fn tag_length(&self) -> usize {
        self.tag_len()
    }

    fn __repr__(&self) -> String {
        format!(
            "aesx.AESGCM(key_bits={}, backend='{}', tag_length={})",
            self.gcm.key_bits(),
            self.gcm.backend().name(),
            self.tag_len()
        )
    }

    /// Encrypts and authenticates ``data`` and authenticates ``associated_data`` (None for
    /// none); returns ciphertext || tag. Never reuse a nonce with the same key.
    #[pyo3(signature = (nonce, data, associated_data))]
    fn encrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        associated_data: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let nonce = gcm_nonce(nonce)?;
        let data = In::new(data, "data")?;
        let aad = gcm_aad(associated_data)?;
        let a = aad.as_ref().map_or(&[][..], |a| a.as_slice());
        let (d, t) = (data.as_slice(), self.tag_len());
        let work = d.len().saturating_add(a.len());
        bytes_from_work(py, d, t, work, err, |b| {
            let (m, tag) = b.split_at_mut(d.len());
            let got = self.gcm.seal_in_place_detached(&nonce, a, m)?;
            tag.copy_from_slice(got.as_bytes());
            Ok(())
        })
    }

    /// Checks the tag of ``data`` (ciphertext || tag) and returns the plaintext; raises
    /// ``InvalidTag`` (and returns nothing) if nonce, key, associated data, ciphertext or tag
    /// do not match.
    #[pyo3(signature = (nonce, data, associated_data))]
    fn decrypt<'py>(
        &self,
        py: Python<'py>,
        nonce: &Bound<'py, PyAny>,
        data: &Bound<'py, PyAny>,
        associated_data: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let nonce = gcm_nonce(nonce)?;
        let data = In::new(data, "data")?;
        let aad = gcm_aad(associated_data)?;
        let a = aad.as_ref().map_or(&[][..], |a| a.as_slice());
        let d = data.as_slice();
        let Some(n) = d.len().checked_sub(self.tag_len()) else {
            return Err(invalid_tag(py));
        };
        let (ct, tag) = d.split_at(n);
        let work = d.len().saturating_add(a.len());
        bytes_from_work(
            py,
            ct,
            0,
            work,
            |e| AesGcmPy::open_err(py, e),
            |b| self.gcm.open_in_place_detached(&nonce, a, b, tag),
        )
    }

    /// ``encrypt`` into ``buf``, a writable buffer of exactly ``len(data) + tag_length``
    /// bytes (``data`` may be a view of ``buf``); returns the number of bytes written.
    #[pyo3(signature = (nonce, data, associated_data, buf))]
    fn encrypt_into(
        &self,
        py: Python<'_>,
        nonce: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        associated_data: Option<&Bound<'_, PyAny>>,
        buf: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let nonce = gcm_nonce(nonce)?;
        let data = In::new(data, "data")?;
        let aad = gcm_aad(associated_data)?;
        let mut out = Out::new(buf, "buf")?;
        let (n, t) = (data.len(), self.tag_len());
        let want = n.saturating_add(t);
        if out.len() != want {
            return Err(PyValueError::new_err(format!(
                "buffer must be {want} bytes, got {}",
                out.len()
            )));
        }
        let mut copy = Vec::new();
        let a = aad_apart(&aad, &mut out, &mut copy);
        // SAFETY: `data` is `n` readable bytes and `out` `n + t` writable bytes, both pinned;
        // `ptr::copy` is a memmove, correct when `data` is a view of `out`. No slice of
        // either exists across the copy (the AAD slice is apart from `out`, above).
        unsafe { std::ptr::copy(data.as_ptr(), out.as_mut_ptr(), n) };
        let b = out.as_mut_slice();
        maybe_detach(py, n.saturating_add(a.len()), || {
            let (m, tag) = b.split_at_mut(n);
            let got = self.gcm.seal_in_place_detached(&nonce, a, m)?;
            tag.copy_from_slice(got.as_bytes());
            Ok(())
        })
        .map_err(err)?;
        Ok(want)
    }

    /// ``decrypt`` into ``buf``, a writable buffer of exactly ``len(data) - tag_length``
    /// bytes (``data`` may be a view of ``buf``); returns the number of bytes written. On
    /// ``InvalidTag`` ``buf`` is zeroed: it never holds unauthenticated plaintext.
    #[pyo3(signature = (nonce, data, associated_data, buf))]
    fn decrypt_into(
        &self,
        py: Python<'_>,
        nonce: &Bound<'_, PyAny>,
        data: &Bound<'_, PyAny>,
        associated_data: Option<&Bound<'_, PyAny>>,
        buf: &Bound<'_, PyAny>,
    ) -> PyResult<usize> {
        let nonce = gcm_nonce(nonce)?;
        let data = In::new(data, "data")?;
        let aad = gcm_aad(associated_data)?;
        let mut out = Out::new(buf, "buf")?;
        let t = self.tag_len();
        let Some(n) = data.len().checked_sub(t) else {
            return Err(invalid_tag(py));
        };
        if out.len() != n {
            return Err(PyValueError::new_err(format!(
                "buffer must be {n} bytes, got {}",
                out.len()
            )));
        }
        let mut copy = Vec::new();
        let a = aad_apart(&aad, &mut out, &mut copy);
        let mut tag = [0u8; 16];
        // SAFETY: `data` is `n + t` readable bytes, `out` `n` writable bytes, both pinned.
        // The tag is copied out before the memmove (which may overwrite it when `data` is a
        // view of `out`); no slice of either exists across the copies.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr().add(n), tag.as_mut_ptr(), t);
            std::ptr::copy(data.as_ptr(), out.as_mut_ptr(), n);
        }
        let b = out.as_mut_slice();
        maybe_detach(py, n.saturating_add(a.len()), || {
            self.gcm.open_in_place_detached(&nonce, a, b, &tag[..t])
        })
        .map_err(|e| AesGcmPy::open_err(py, e))?;
        Ok(n)
    }
}

#[pymodule]
fn _aesx(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Aes>()?;
    m.add_class::<AesGcmPy>()?;
    m.add_class::<FugueHash>()?;
    m.add_function(wrap_pyfunction!(fugue224, m)?)?;
    m.add_function(wrap_pyfunction!(fugue256, m)?)?;
    m.add_function(wrap_pyfunction!(fugue384, m)?)?;
    m.add_function(wrap_pyfunction!(fugue512, m)?)?;
    m.add_function(wrap_pyfunction!(new, m)?)?;
    m.add_function(wrap_pyfunction!(cpu, m)?)?;
    m.add_function(wrap_pyfunction!(file::file_encrypt, m)?)?;
    m.add_function(wrap_pyfunction!(file::file_decrypt, m)?)?;
    m.add_function(wrap_pyfunction!(file::keygen, m)?)?;
    m.add("GIL_RELEASE_BYTES", GIL_RELEASE_BYTES)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

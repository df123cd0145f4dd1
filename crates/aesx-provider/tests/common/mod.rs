//! Shared test support: builds the provider module, writes OpenSSL configurations that load
//! it, and a thin, checked wrapper over the libcrypto calls the tests make (declared here; the
//! `openssl-sys` dev-dependency links libcrypto).
#![allow(dead_code, clippy::undocumented_unsafe_blocks)]

use std::ffi::{CStr, CString, c_char, c_int, c_uint, c_ulong, c_void};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use openssl_sys as _;

pub enum OsslLibCtx {}
pub enum OsslProvider {}
pub enum EvpCipher {}
pub enum EvpCipherCtx {}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct OsslParam {
    pub key: *const c_char,
    pub data_type: c_uint,
    pub data: *mut c_void,
    pub data_size: usize,
    pub return_size: usize,
}

pub const PARAM_INTEGER: c_uint = 1;
pub const PARAM_UNSIGNED: c_uint = 2;
pub const PARAM_UTF8_STRING: c_uint = 4;
pub const PARAM_OCTET_STRING: c_uint = 5;
pub const PARAM_UTF8_PTR: c_uint = 6;
pub const PARAM_OCTET_PTR: c_uint = 7;

pub fn param(key: &'static CStr, t: c_uint, data: *mut c_void, size: usize) -> OsslParam {
    OsslParam {
        key: key.as_ptr(),
        data_type: t,
        data,
        data_size: size,
        return_size: usize::MAX,
    }
}
pub const END: OsslParam = OsslParam {
    key: std::ptr::null(),
    data_type: 0,
    data: std::ptr::null_mut(),
    data_size: 0,
    return_size: 0,
};

unsafe extern "C" {
    pub fn OSSL_LIB_CTX_new() -> *mut OsslLibCtx;
    pub fn OSSL_LIB_CTX_free(ctx: *mut OsslLibCtx);
    pub fn OSSL_LIB_CTX_load_config(ctx: *mut OsslLibCtx, file: *const c_char) -> c_int;
    pub fn OSSL_PROVIDER_load(ctx: *mut OsslLibCtx, name: *const c_char) -> *mut OsslProvider;
    pub fn OSSL_PROVIDER_available(ctx: *mut OsslLibCtx, name: *const c_char) -> c_int;
    pub fn OSSL_PROVIDER_get_params(p: *const OsslProvider, params: *mut OsslParam) -> c_int;
    pub fn OSSL_PROVIDER_get0_name(p: *const OsslProvider) -> *const c_char;
    pub fn EVP_CIPHER_fetch(
        ctx: *mut OsslLibCtx,
        name: *const c_char,
        props: *const c_char,
    ) -> *mut EvpCipher;
    pub fn EVP_CIPHER_free(c: *mut EvpCipher);
    pub fn EVP_CIPHER_get0_provider(c: *const EvpCipher) -> *const OsslProvider;
    pub fn EVP_CIPHER_CTX_new() -> *mut EvpCipherCtx;
    pub fn EVP_CIPHER_CTX_free(c: *mut EvpCipherCtx);
    pub fn EVP_CIPHER_CTX_copy(out: *mut EvpCipherCtx, input: *const EvpCipherCtx) -> c_int;
    pub fn EVP_CipherInit_ex2(
        c: *mut EvpCipherCtx,
        cipher: *const EvpCipher,
        key: *const u8,
        iv: *const u8,
        enc: c_int,
        params: *const OsslParam,
    ) -> c_int;
    pub fn EVP_CipherUpdate(
        c: *mut EvpCipherCtx,
        out: *mut u8,
        outl: *mut c_int,
        input: *const u8,
        inl: c_int,
    ) -> c_int;
    pub fn EVP_CipherFinal_ex(c: *mut EvpCipherCtx, out: *mut u8, outl: *mut c_int) -> c_int;
    pub fn EVP_Cipher(c: *mut EvpCipherCtx, out: *mut u8, input: *const u8, inl: c_uint) -> c_int;
    pub fn EVP_CIPHER_CTX_set_padding(c: *mut EvpCipherCtx, pad: c_int) -> c_int;
    pub fn EVP_CIPHER_CTX_get_updated_iv(c: *mut EvpCipherCtx, buf: *mut u8, len: usize) -> c_int;
    pub fn EVP_CIPHER_CTX_get_original_iv(c: *mut EvpCipherCtx, buf: *mut u8, len: usize) -> c_int;
    pub fn EVP_CIPHER_CTX_get_num(c: *const EvpCipherCtx) -> c_int;
    pub fn EVP_CIPHER_CTX_set_num(c: *mut EvpCipherCtx, num: c_int) -> c_int;
    pub fn EVP_CIPHER_CTX_get_iv_length(c: *const EvpCipherCtx) -> c_int;
    pub fn EVP_CIPHER_CTX_get_key_length(c: *const EvpCipherCtx) -> c_int;
    pub fn EVP_CIPHER_CTX_get_block_size(c: *const EvpCipherCtx) -> c_int;
    pub fn EVP_CIPHER_CTX_get_params(c: *mut EvpCipherCtx, params: *mut OsslParam) -> c_int;
    pub fn EVP_CIPHER_CTX_set_params(c: *mut EvpCipherCtx, params: *const OsslParam) -> c_int;
    pub fn EVP_CIPHER_get_params(c: *mut EvpCipher, params: *mut OsslParam) -> c_int;
    pub fn ERR_get_error() -> c_ulong;
    pub fn ERR_peek_error() -> c_ulong;
    pub fn ERR_clear_error();
    pub fn ERR_error_string_n(e: c_ulong, buf: *mut c_char, len: usize);
    pub fn RAND_bytes_ex(ctx: *mut OsslLibCtx, buf: *mut u8, num: usize, strength: c_uint)
    -> c_int;
}

/// target/<profile>, where cargo puts the cdylib. `cargo test` does not build a cdylib-only
/// library for integration tests, so the first call builds it for the same profile.
pub fn target_profile_dir() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            let exe = std::env::current_exe().expect("test binary path");
            let dir = exe
                .parent()
                .and_then(Path::parent)
                .expect("target/<profile> above deps/")
                .to_path_buf();
            let profile = dir.file_name().unwrap().to_str().unwrap().to_owned();
            let target_dir = dir.parent().expect("target dir");
            let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
            let mut cmd = Command::new(cargo);
            cmd.args(["build", "-p", "aesx-provider", "--lib", "--target-dir"])
                .arg(target_dir)
                .current_dir(crate_dir());
            match profile.as_str() {
                "debug" => {}
                "release" => {
                    cmd.arg("--release");
                }
                p => {
                    cmd.args(["--profile", p]);
                }
            }
            let out = cmd.output().expect("run cargo build");
            assert!(
                out.status.success(),
                "building the provider failed:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(dir.join("libaesx_provider.so").exists());
            dir
        })
        .clone()
}

pub fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub fn testdata() -> PathBuf {
    crate_dir().join("../../testdata/aes")
}

pub fn module_path() -> PathBuf {
    target_profile_dir().join("libaesx_provider.so")
}

/// A scratch directory for this test binary.
pub fn scratch(name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("aesx-provider")
        .join(name);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A directory holding `aesx.so` (a symlink to the module), what OPENSSL_MODULES must name.
pub fn modules_dir() -> PathBuf {
    let d = scratch("modules");
    let link = d.join("aesx.so");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(module_path(), &link).unwrap();
    d
}

/// An OpenSSL configuration that activates default + aesx (from its absolute path), with an
/// optional forced backend and, if `prefer`, `default_properties = ?provider=aesx`.
pub fn config_file(backend: Option<&str>, prefer: bool) -> PathBuf {
    let name = format!("openssl-{}-{}.cnf", backend.unwrap_or("auto"), prefer);
    let path = scratch("conf").join(name);
    let mut s =
        String::from("openssl_conf = openssl_init\n[openssl_init]\nproviders = provider_sect\n");
    if prefer {
        s.push_str(
            "alg_section = algorithm_sect\n[algorithm_sect]\ndefault_properties = ?provider=aesx\n",
        );
    }
    s.push_str("[provider_sect]\ndefault = default_sect\naesx = aesx_sect\n");
    s.push_str("[default_sect]\nactivate = 1\n[aesx_sect]\nactivate = 1\n");
    s.push_str(&format!("module = {}\n", module_path().display()));
    if let Some(b) = backend {
        s.push_str(&format!("backend = {b}\n"));
    }
    write_atomic(&path, s.as_bytes());
    path
}

/// Parallel tests write the same files: write aside, then rename (atomic), so no reader ever
/// sees a half-written one.
pub fn write_atomic(path: &Path, contents: &[u8]) {
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp{}-{n}", std::process::id()));
    std::fs::write(&tmp, contents).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The backends to test: every one this CPU runs, unless AESX_BACKEND pins one (it overrides
/// the configuration, by design), in which case only that one.
pub fn backends() -> Vec<String> {
    match std::env::var("AESX_BACKEND") {
        Ok(b) if !b.is_empty() => {
            eprintln!("AESX_BACKEND={b} is set: testing that backend only");
            vec![b]
        }
        _ => aesx::Backend::available()
            .into_iter()
            .map(|b| b.name().to_string())
            .collect(),
    }
}

/// Takes and formats the thread's OpenSSL error queue.
pub fn errors() -> String {
    let mut s = String::new();
    loop {
        let e = unsafe { ERR_get_error() };
        if e == 0 {
            return s;
        }
        let mut buf = [0 as c_char; 256];
        unsafe { ERR_error_string_n(e, buf.as_mut_ptr(), buf.len()) };
        s.push_str(&unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy());
        s.push('\n');
    }
}

/// The reason code (low 23 bits) of the first queued error, clearing the queue.
pub fn first_reason() -> u32 {
    let e = unsafe { ERR_peek_error() };
    unsafe { ERR_clear_error() };
    (e & 0x7F_FFFF) as u32
}

/// A library context with default + aesx loaded from a configuration file.
pub struct Lib {
    pub ctx: *mut OsslLibCtx,
}

// SAFETY: an OSSL_LIB_CTX may be used from any thread.
unsafe impl Send for Lib {}
// SAFETY: as above.
unsafe impl Sync for Lib {}

impl Lib {
    pub fn new(backend: Option<&str>) -> Lib {
        let ctx = unsafe { OSSL_LIB_CTX_new() };
        assert!(!ctx.is_null());
        let conf = CString::new(config_file(backend, false).to_str().unwrap()).unwrap();
        let ok = unsafe { OSSL_LIB_CTX_load_config(ctx, conf.as_ptr()) };
        assert_eq!(ok, 1, "loading the config failed: {}", errors());
        assert_eq!(unsafe { OSSL_PROVIDER_available(ctx, c"aesx".as_ptr()) }, 1);
        Lib { ctx }
    }

    pub fn fetch(&self, name: &str, provider: &str) -> Cipher {
        let n = CString::new(name).unwrap();
        let p = CString::new(format!("provider={provider}")).unwrap();
        let c = unsafe { EVP_CIPHER_fetch(self.ctx, n.as_ptr(), p.as_ptr()) };
        assert!(!c.is_null(), "fetch {name} from {provider}: {}", errors());
        let got = unsafe { CStr::from_ptr(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(c))) };
        assert_eq!(got.to_str().unwrap(), provider);
        Cipher(c)
    }

    /// The loaded aesx provider's `aesx-backend` parameter.
    pub fn aesx_backend(&self) -> String {
        let c = self.fetch("AES-128-CTR", "aesx");
        let prov = unsafe { EVP_CIPHER_get0_provider(c.0) };
        let mut v: *const c_char = std::ptr::null();
        let mut ps = [
            param(c"aesx-backend", PARAM_UTF8_PTR, (&raw mut v).cast(), 0),
            END,
        ];
        assert_eq!(
            unsafe { OSSL_PROVIDER_get_params(prov, ps.as_mut_ptr()) },
            1
        );
        unsafe { CStr::from_ptr(v) }.to_str().unwrap().to_string()
    }

    /// This process's counters from the aesx provider (`aesx-stats`).
    pub fn aesx_stats(&self) -> String {
        let c = self.fetch("AES-128-CTR", "aesx");
        let prov = unsafe { EVP_CIPHER_get0_provider(c.0) };
        let mut buf = vec![0u8; 4096];
        let mut ps = [
            param(
                c"aesx-stats",
                PARAM_UTF8_STRING,
                buf.as_mut_ptr().cast(),
                buf.len(),
            ),
            END,
        ];
        assert_eq!(
            unsafe { OSSL_PROVIDER_get_params(prov, ps.as_mut_ptr()) },
            1
        );
        let n = ps[0].return_size;
        String::from_utf8(buf[..n].to_vec()).unwrap()
    }
}

impl Drop for Lib {
    fn drop(&mut self) {
        unsafe { OSSL_LIB_CTX_free(self.ctx) };
    }
}

pub struct Cipher(pub *mut EvpCipher);
impl Drop for Cipher {
    fn drop(&mut self) {
        unsafe { EVP_CIPHER_free(self.0) };
    }
}

/// An EVP_CIPHER_CTX with checked, length-returning calls. Every call returns what the EVP
/// function returned, so the two providers can be compared call by call.
pub struct Ctx(pub *mut EvpCipherCtx);

impl Ctx {
    pub fn new() -> Ctx {
        let c = unsafe { EVP_CIPHER_CTX_new() };
        assert!(!c.is_null());
        Ctx(c)
    }

    pub fn init(
        &self,
        c: Option<&Cipher>,
        key: Option<&[u8]>,
        iv: Option<&[u8]>,
        enc: i32,
    ) -> bool {
        unsafe {
            EVP_CipherInit_ex2(
                self.0,
                c.map_or(std::ptr::null(), |c| c.0),
                key.map_or(std::ptr::null(), |k| k.as_ptr()),
                iv.map_or(std::ptr::null(), |v| v.as_ptr()),
                enc,
                std::ptr::null(),
            ) == 1
        }
    }

    /// EVP_CipherUpdate into a fresh buffer of `in.len() + 16`; None on failure.
    pub fn update(&self, input: &[u8]) -> Option<Vec<u8>> {
        let mut out = vec![0u8; input.len() + 16];
        let mut n: c_int = 0;
        let ok = unsafe {
            EVP_CipherUpdate(
                self.0,
                out.as_mut_ptr(),
                &mut n,
                input.as_ptr(),
                input.len() as c_int,
            )
        };
        (ok == 1).then(|| {
            out.truncate(n as usize);
            out
        })
    }

    pub fn finish(&self) -> Option<Vec<u8>> {
        let mut out = vec![0u8; 32];
        let mut n: c_int = 0;
        let ok = unsafe { EVP_CipherFinal_ex(self.0, out.as_mut_ptr(), &mut n) };
        (ok == 1).then(|| {
            out.truncate(n as usize);
            out
        })
    }

    /// EVP_Cipher: returns its int result and the output buffer.
    pub fn cipher(&self, input: &[u8]) -> (i32, Vec<u8>) {
        let mut out = vec![0u8; input.len() + 16];
        let r = unsafe {
            EVP_Cipher(
                self.0,
                out.as_mut_ptr(),
                input.as_ptr(),
                input.len() as c_uint,
            )
        };
        out.truncate(input.len());
        (r, out)
    }

    pub fn set_padding(&self, on: bool) -> bool {
        unsafe { EVP_CIPHER_CTX_set_padding(self.0, on as c_int) == 1 }
    }

    pub fn updated_iv(&self) -> Option<[u8; 16]> {
        let mut b = [0u8; 16];
        (unsafe { EVP_CIPHER_CTX_get_updated_iv(self.0, b.as_mut_ptr(), 16) } == 1).then_some(b)
    }

    pub fn original_iv(&self) -> Option<[u8; 16]> {
        let mut b = [0u8; 16];
        (unsafe { EVP_CIPHER_CTX_get_original_iv(self.0, b.as_mut_ptr(), 16) } == 1).then_some(b)
    }

    pub fn num(&self) -> i32 {
        unsafe { EVP_CIPHER_CTX_get_num(self.0) }
    }

    pub fn lengths(&self) -> (i32, i32, i32) {
        unsafe {
            (
                EVP_CIPHER_CTX_get_key_length(self.0),
                EVP_CIPHER_CTX_get_iv_length(self.0),
                EVP_CIPHER_CTX_get_block_size(self.0),
            )
        }
    }

    pub fn copy(&self) -> Option<Ctx> {
        let c = Ctx::new();
        (unsafe { EVP_CIPHER_CTX_copy(c.0, self.0) } == 1).then_some(c)
    }

    /// Sets an unsigned-int context parameter; true on success.
    pub fn set_uint(&self, key: &'static CStr, v: u32) -> bool {
        let mut v = v;
        let ps = [param(key, PARAM_UNSIGNED, (&raw mut v).cast(), 4), END];
        unsafe { EVP_CIPHER_CTX_set_params(self.0, ps.as_ptr()) == 1 }
    }
}

impl Drop for Ctx {
    fn drop(&mut self) {
        unsafe { EVP_CIPHER_CTX_free(self.0) };
    }
}

impl Default for Ctx {
    fn default() -> Self {
        Ctx::new()
    }
}

/// One-shot through EVP: init, one update, final; None if any step fails.
pub fn oneshot(
    c: &Cipher,
    key: &[u8],
    iv: Option<&[u8]>,
    enc: bool,
    pad: bool,
    data: &[u8],
) -> Option<Vec<u8>> {
    let ctx = Ctx::new();
    if !ctx.init(Some(c), Some(key), iv, enc as i32) {
        return None;
    }
    ctx.set_padding(pad);
    let mut out = ctx.update(data)?;
    out.extend(ctx.finish()?);
    Some(out)
}

/// Records of a NIST-style `.rsp` file: (section, fields) with `\r` stripped.
pub fn rsp(path: &Path) -> Vec<(String, std::collections::HashMap<String, String>)> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    let mut section = String::new();
    let mut cur = std::collections::HashMap::new();
    for line in text.lines().map(|l| l.trim_end_matches('\r').trim()) {
        if line.starts_with('#') {
            continue;
        }
        if line.starts_with('[') {
            if !cur.is_empty() {
                out.push((section.clone(), std::mem::take(&mut cur)));
            }
            section = line.trim_matches(|c| c == '[' || c == ']').to_string();
            continue;
        }
        if line.is_empty() {
            if !cur.is_empty() {
                out.push((section.clone(), std::mem::take(&mut cur)));
            }
            continue;
        }
        if let Some((k, v)) = line.split_once('=') {
            cur.insert(k.trim().to_uppercase(), v.trim().to_string());
        }
    }
    if !cur.is_empty() {
        out.push((section, cur));
    }
    out
}

/// A small deterministic generator for the differential test (splitmix64).
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

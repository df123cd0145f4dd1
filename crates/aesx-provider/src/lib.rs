//! # aesx-provider: an OpenSSL 3 provider module that runs AES on aesx
//!
//! Built as `libaesx_provider.so`; installed (or symlinked) as `aesx.so` in OpenSSL's module
//! directory and activated by a configuration file such as the shipped `aesx-openssl.cnf`,
//! it serves AES-128/192/256 in ECB, CBC, CTR and GCM under the property `provider=aesx` to every
//! program linked to libcrypto 3: `openssl`, OpenSSH's ssh/scp/sshd (including OpenSSL's
//! AES-256-CTR DRBG), TLS clients and servers.
//!
//! Why Rust with a hand-declared ABI rather than C over libaesx: one shared object with the
//! library statically inside (no second `.so` to install and find at run time), every entry
//! point wrapped in `catch_unwind`, and the same types and tests as the rest of the workspace.
//! The provider ABI is a few dozen stable integers and three structs (`ffi`), checked
//! against the installed headers by `tests/abi.rs`.
//!
//! Front end only: all AES is done by the `aesx` crate. What lives here is OpenSSL's calling
//! convention: parameters, buffering of partial blocks, padding flags, the CTR counter state
//! OpenSSL exposes, and the TLS CBC record processing that OpenSSL 3 gives to providers.
//!
//! It never starts a thread (no multi-threaded CTR; sshd's seccomp sandbox kills a process
//! that calls clone) and makes no system call while encrypting (see `stats`).
//!
//! Configuration (`[aesx_sect]` in the OpenSSL configuration) and environment:
//! - `backend = soft|vpaes|aesni|vaes256|vaes512` (or `AESX_BACKEND`, which wins): force a
//!   backend; default: the fastest this CPU runs. An unknown or unavailable backend makes
//!   activation fail (with an OpenSSL error) rather than silently run something else.
//! - `AESX_PROVIDER_STATS=FILE`: shared counters, see `stats`.
//!
//! Provider parameters: `name`, `version`, `buildinfo`, `status`, plus `aesx-backend` and
//! `aesx-stats` (this process's per-algorithm counters as text).

use core::ffi::{CStr, c_int, c_void};

use aesx::Backend;

mod cipher;
mod error;
mod ffi;
mod gcm;
mod params;
mod stats;
mod tls;

use error::{CoreErr, Reason, guard, raise, set_core_err};
use ffi::*;
use params::Params;

/// The backend a provider instance's key schedules are built on (from its `provctx`).
pub(crate) fn backend_of(provctx: *const c_void) -> Backend {
    // SAFETY: OpenSSL passes back the provctx that OSSL_provider_init made (or NULL).
    unsafe { (provctx as *const ProvCtx).as_ref() }
        .map(|p| p.backend)
        .unwrap_or_else(Backend::detect)
}

/// Random bytes for the TLS CBC code (a random MAC on bad padding): getrandom(2), which
/// sshd's sandbox allows. False if the kernel cannot supply them.
pub(crate) fn random_bytes(buf: &mut [u8]) -> bool {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: writes at most `buf.len() - done` bytes into `buf[done..]`.
        let r = unsafe { libc::getrandom(buf[done..].as_mut_ptr().cast(), buf.len() - done, 0) };
        if r < 0 {
            if std::io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return false;
        }
        done += r as usize;
    }
    true
}

/// A non-empty environment variable, unless this is a setuid/setgid process (`AT_SECURE`,
/// e.g. ssh-keysign), where the environment is the caller's and must not steer us (what glibc's
/// `secure_getenv` and OpenSSL's `ossl_safe_getenv` do).
pub(crate) fn secure_env(name: &CStr) -> Option<std::ffi::CString> {
    // SAFETY: getauxval reads the auxiliary vector; getenv returns NULL or a NUL-terminated
    // string that we copy at once.
    unsafe {
        if libc::getauxval(libc::AT_SECURE) != 0 {
            return None;
        }
        let p = libc::getenv(name.as_ptr());
        if p.is_null() || *p == 0 {
            return None;
        }
        Some(CStr::from_ptr(p).to_owned())
    }
}

/// One activation of the provider (one per OpenSSL library context that loads it).
struct ProvCtx {
    backend: Backend,
}

/// ECB, CBC, CTR and GCM at three key sizes, and the end marker.
const N_ALGORITHMS: usize = 13;

static ALGORITHMS: Table<[OsslAlgorithm; N_ALGORITHMS]> = {
    macro_rules! alg {
        ($i:expr, $d:expr) => {
            alg!(cipher, $i, $d)
        };
        ($m:ident, $i:expr, $d:expr) => {
            OsslAlgorithm {
                algorithm_names: $m::NAMES[$i].as_ptr(),
                property_definition: c"provider=aesx".as_ptr(),
                implementation: $d.0.as_ptr(),
                algorithm_description: $m::DESCRIPTIONS[$i].as_ptr(),
            }
        };
    }
    Table([
        alg!(0, cipher::D0),
        alg!(1, cipher::D1),
        alg!(2, cipher::D2),
        alg!(3, cipher::D3),
        alg!(4, cipher::D4),
        alg!(5, cipher::D5),
        alg!(6, cipher::D6),
        alg!(7, cipher::D7),
        alg!(8, cipher::D8),
        alg!(gcm, 0, gcm::D9),
        alg!(gcm, 1, gcm::D10),
        alg!(gcm, 2, gcm::D11),
        OsslAlgorithm {
            algorithm_names: core::ptr::null(),
            property_definition: core::ptr::null(),
            implementation: core::ptr::null(),
            algorithm_description: core::ptr::null(),
        },
    ])
};

unsafe extern "C" fn query_operation(
    _provctx: *mut c_void,
    operation_id: c_int,
    no_store: *mut c_int,
) -> *const OsslAlgorithm {
    guard(core::ptr::null(), || {
        if !no_store.is_null() {
            // SAFETY: OpenSSL passes a writable int.
            unsafe { *no_store = 0 };
        }
        if operation_id == OSSL_OP_CIPHER {
            ALGORITHMS.0.as_ptr()
        } else {
            core::ptr::null()
        }
    })
}

const VERSION: &CStr = c"0.1.0";
const _: () = assert!(matches!(env!("CARGO_PKG_VERSION").as_bytes(), b"0.1.0"));

static PROVIDER_GETTABLE: Table<[OsslParam; 7]> = Table([
    param_defn(c"name", OSSL_PARAM_UTF8_PTR, 0),
    param_defn(c"version", OSSL_PARAM_UTF8_PTR, 0),
    param_defn(c"buildinfo", OSSL_PARAM_UTF8_PTR, 0),
    param_defn(c"status", OSSL_PARAM_INTEGER, 4),
    param_defn(c"aesx-backend", OSSL_PARAM_UTF8_PTR, 0),
    param_defn(c"aesx-stats", OSSL_PARAM_UTF8_STRING, 0),
    PARAM_END,
]);

unsafe extern "C" fn provider_gettable_params(_provctx: *mut c_void) -> *const OsslParam {
    PROVIDER_GETTABLE.0.as_ptr()
}

fn backend_cstr(b: Backend) -> &'static CStr {
    match b {
        Backend::Soft => c"soft",
        Backend::Vpaes => c"vpaes",
        Backend::Aesni => c"aesni",
        Backend::Vaes256 => c"vaes256",
        Backend::Vaes512 => c"vaes512",
        _ => c"unknown",
    }
}

fn buildinfo_cstr(b: Backend) -> &'static CStr {
    match b {
        Backend::Soft => c"aesx 0.1.0, backend soft",
        Backend::Vpaes => c"aesx 0.1.0, backend vpaes",
        Backend::Aesni => c"aesx 0.1.0, backend aesni",
        Backend::Vaes256 => c"aesx 0.1.0, backend vaes256",
        Backend::Vaes512 => c"aesx 0.1.0, backend vaes512",
        _ => c"aesx 0.1.0",
    }
}

unsafe extern "C" fn provider_get_params(provctx: *mut c_void, params: *mut OsslParam) -> c_int {
    error::status(|| {
        // SAFETY: a terminated (or NULL) parameter array.
        let ps = unsafe { Params::new(params) };
        let ok = |b: bool| if b { Ok(()) } else { Err(Reason::SET_PARAM) };
        let backend = backend_of(provctx);
        if let Some(p) = ps.locate(c"name") {
            ok(p.set_utf8_ptr(c"aesx"))?;
        }
        if let Some(p) = ps.locate(c"version") {
            ok(p.set_utf8_ptr(VERSION))?;
        }
        if let Some(p) = ps.locate(c"buildinfo") {
            ok(p.set_utf8_ptr(buildinfo_cstr(backend)))?;
        }
        if let Some(p) = ps.locate(c"status") {
            ok(p.set_int(1))?;
        }
        if let Some(p) = ps.locate(c"aesx-backend") {
            ok(p.set_utf8_ptr(backend_cstr(backend)))?;
        }
        if let Some(p) = ps.locate(c"aesx-stats") {
            ok(p.set_utf8(&stats::local_text()))?;
        }
        Ok(())
    })
}

unsafe extern "C" fn teardown(provctx: *mut c_void) {
    guard((), || {
        if !provctx.is_null() {
            // SAFETY: made by Box::into_raw in OSSL_provider_init; torn down once.
            drop(unsafe { Box::from_raw(provctx as *mut ProvCtx) });
        }
    })
}

type Teardown = unsafe extern "C" fn(*mut c_void);
type ProvGettable = unsafe extern "C" fn(*mut c_void) -> *const OsslParam;
type ProvGetParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type Query = unsafe extern "C" fn(*mut c_void, c_int, *mut c_int) -> *const OsslAlgorithm;

static PROVIDER_DISPATCH: Table<[OsslDispatch; 5]> = Table([
    dispatch_fn!(OSSL_FUNC_PROVIDER_TEARDOWN, teardown as Teardown),
    dispatch_fn!(
        OSSL_FUNC_PROVIDER_GETTABLE_PARAMS,
        provider_gettable_params as ProvGettable
    ),
    dispatch_fn!(
        OSSL_FUNC_PROVIDER_GET_PARAMS,
        provider_get_params as ProvGetParams
    ),
    dispatch_fn!(OSSL_FUNC_PROVIDER_QUERY_OPERATION, query_operation as Query),
    DISPATCH_END,
]);

/// The core functions this provider needs, found in the `in` dispatch table.
struct CoreFns {
    get_params: Option<CoreGetParamsFn>,
    err: Option<CoreErr>,
}

/// # Safety
/// `input` is NULL or a dispatch table ended by a zero id, as OpenSSL passes it.
unsafe fn core_fns(handle: *const CoreHandle, input: *const OsslDispatch) -> CoreFns {
    let (mut gp, mut ne, mut sd, mut ve) = (None, None, None, None);
    let mut p = input;
    // SAFETY: walks the table up to its terminator; each pointer is cast back to the
    // signature core_dispatch.h gives for its id.
    unsafe {
        while !p.is_null() && (*p).function_id != 0 {
            let f = (*p).function;
            match (*p).function_id {
                OSSL_FUNC_CORE_GET_PARAMS => {
                    gp = f.map(|f| core::mem::transmute::<_, CoreGetParamsFn>(f))
                }
                OSSL_FUNC_CORE_NEW_ERROR => {
                    ne = f.map(|f| core::mem::transmute::<_, CoreNewErrorFn>(f))
                }
                OSSL_FUNC_CORE_SET_ERROR_DEBUG => {
                    sd = f.map(|f| core::mem::transmute::<_, CoreSetErrorDebugFn>(f))
                }
                OSSL_FUNC_CORE_VSET_ERROR => {
                    ve = f.map(|f| core::mem::transmute::<_, CoreVsetErrorFn>(f))
                }
                _ => {}
            }
            p = p.add(1);
        }
    }
    let err = match (ne, sd, ve) {
        (Some(new_error), Some(set_debug), Some(vset_error)) => Some(CoreErr {
            handle,
            new_error,
            set_debug,
            vset_error,
        }),
        _ => None,
    };
    CoreFns {
        get_params: gp,
        err,
    }
}

/// The `backend` value of this provider's configuration section, if any.
fn config_backend(handle: *const CoreHandle, get: Option<CoreGetParamsFn>) -> Option<String> {
    let get = get?;
    let mut value: *const core::ffi::c_char = core::ptr::null();
    let mut ps = [
        OsslParam {
            key: c"backend".as_ptr(),
            data_type: OSSL_PARAM_UTF8_PTR,
            data: (&raw mut value).cast(),
            data_size: 0,
            return_size: OSSL_PARAM_UNMODIFIED,
        },
        PARAM_END,
    ];
    // SAFETY: the core's get_params with its own handle and a terminated array whose one entry
    // points at a `char *` slot.
    let ok = unsafe { get(handle, ps.as_mut_ptr()) };
    (ok == 1 && !value.is_null()).then(|| {
        // SAFETY: a successful get sets `value` to a NUL-terminated string owned by the core.
        unsafe { CStr::from_ptr(value) }
            .to_string_lossy()
            .into_owned()
    })
}

/// Chooses the backend: `AESX_BACKEND`, else the configuration's `backend`, else the fastest.
fn choose_backend(config: Option<String>) -> Result<Backend, Reason> {
    let env = secure_env(c"AESX_BACKEND").map(|s| s.to_string_lossy().into_owned());
    match env.or(config) {
        None => Ok(Backend::detect()),
        Some(name) => {
            let b: Backend = name.parse().map_err(|_| Reason::CONFIG)?;
            if b.is_available() {
                Ok(b)
            } else {
                Err(Reason::CONFIG)
            }
        }
    }
}

/// The module's entry point, called by OpenSSL when it loads `aesx.so`.
///
/// # Safety
/// Called by OpenSSL with its core handle, its dispatch table and two writable out-pointers.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn OSSL_provider_init(
    handle: *const CoreHandle,
    input: *const OsslDispatch,
    out: *mut *const OsslDispatch,
    provctx: *mut *mut c_void,
) -> c_int {
    guard(0, || {
        if out.is_null() || provctx.is_null() {
            return 0;
        }
        // SAFETY: OpenSSL's table and handle.
        let core = unsafe { core_fns(handle, input) };
        if let Some(e) = core.err {
            set_core_err(e);
        }
        let b = match choose_backend(config_backend(handle, core.get_params)) {
            Ok(b) => b,
            Err(r) => {
                raise(r);
                return 0;
            }
        };
        stats::init_from_env();
        // SAFETY: checked non-NULL; OpenSSL reads them after we return.
        unsafe {
            *out = PROVIDER_DISPATCH.0.as_ptr();
            *provctx = Box::into_raw(Box::new(ProvCtx { backend: b })).cast();
        }
        1
    })
}

//! The slice of the OpenSSL 3 provider ABI this module uses, declared by hand from
//! `openssl/core.h`, `core_dispatch.h`, `core_names.h`, `proverr.h` and `params.h`.
//!
//! IMPLEMENTATION NOTE: these are stable ABI numbers (OpenSSL promises them across 3.x), so a
//! hand-written list is simpler than bindgen (no libclang at build time) and as safe: the test
//! `tests/abi.rs` compiles a C file that `_Static_assert`s every value below against the
//! installed headers.

use core::ffi::{c_char, c_int, c_uint, c_void};

/// `OSSL_DISPATCH`: one function of a dispatch table; `{0, NULL}` ends a table.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct OsslDispatch {
    pub function_id: c_int,
    pub function: Option<unsafe extern "C" fn()>,
}

/// `OSSL_PARAM`.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct OsslParam {
    pub key: *const c_char,
    pub data_type: c_uint,
    pub data: *mut c_void,
    pub data_size: usize,
    pub return_size: usize,
}

/// `OSSL_ALGORITHM`.
#[repr(C)]
pub struct OsslAlgorithm {
    pub algorithm_names: *const c_char,
    pub property_definition: *const c_char,
    pub implementation: *const OsslDispatch,
    pub algorithm_description: *const c_char,
}

/// Opaque `OSSL_CORE_HANDLE`.
pub type CoreHandle = c_void;

// OSSL_PARAM data types (core.h).
pub const OSSL_PARAM_INTEGER: c_uint = 1;
pub const OSSL_PARAM_UNSIGNED_INTEGER: c_uint = 2;
pub const OSSL_PARAM_REAL: c_uint = 3;
pub const OSSL_PARAM_UTF8_STRING: c_uint = 4;
pub const OSSL_PARAM_OCTET_STRING: c_uint = 5;
pub const OSSL_PARAM_UTF8_PTR: c_uint = 6;
pub const OSSL_PARAM_OCTET_PTR: c_uint = 7;
/// `OSSL_PARAM_UNMODIFIED` (params.h).
pub const OSSL_PARAM_UNMODIFIED: usize = usize::MAX;

// Functions the core offers the provider (core_dispatch.h).
pub const OSSL_FUNC_CORE_GET_PARAMS: c_int = 2;
pub const OSSL_FUNC_CORE_NEW_ERROR: c_int = 5;
pub const OSSL_FUNC_CORE_SET_ERROR_DEBUG: c_int = 6;
pub const OSSL_FUNC_CORE_VSET_ERROR: c_int = 7;

// Functions the provider offers the core.
pub const OSSL_FUNC_PROVIDER_TEARDOWN: c_int = 1024;
pub const OSSL_FUNC_PROVIDER_GETTABLE_PARAMS: c_int = 1025;
pub const OSSL_FUNC_PROVIDER_GET_PARAMS: c_int = 1026;
pub const OSSL_FUNC_PROVIDER_QUERY_OPERATION: c_int = 1027;

pub const OSSL_OP_CIPHER: c_int = 2;

// Cipher dispatch ids.
pub const OSSL_FUNC_CIPHER_NEWCTX: c_int = 1;
pub const OSSL_FUNC_CIPHER_ENCRYPT_INIT: c_int = 2;
pub const OSSL_FUNC_CIPHER_DECRYPT_INIT: c_int = 3;
pub const OSSL_FUNC_CIPHER_UPDATE: c_int = 4;
pub const OSSL_FUNC_CIPHER_FINAL: c_int = 5;
pub const OSSL_FUNC_CIPHER_CIPHER: c_int = 6;
pub const OSSL_FUNC_CIPHER_FREECTX: c_int = 7;
pub const OSSL_FUNC_CIPHER_DUPCTX: c_int = 8;
pub const OSSL_FUNC_CIPHER_GET_PARAMS: c_int = 9;
pub const OSSL_FUNC_CIPHER_GET_CTX_PARAMS: c_int = 10;
pub const OSSL_FUNC_CIPHER_SET_CTX_PARAMS: c_int = 11;
pub const OSSL_FUNC_CIPHER_GETTABLE_PARAMS: c_int = 12;
pub const OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS: c_int = 13;
pub const OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS: c_int = 14;

// EVP_CIPH_*_MODE (evp.h), reported through the "mode" parameter.
pub const EVP_CIPH_ECB_MODE: u32 = 0x1;
pub const EVP_CIPH_CBC_MODE: u32 = 0x2;
pub const EVP_CIPH_CTR_MODE: u32 = 0x5;
pub const EVP_CIPH_GCM_MODE: u32 = 0x6;

// TLS versions (prov_ssl.h).
pub const SSL3_VERSION: u32 = 0x0300;
pub const TLS1_VERSION: u32 = 0x0301;
pub const TLS1_1_VERSION: u32 = 0x0302;
pub const TLS1_2_VERSION: u32 = 0x0303;
pub const DTLS1_VERSION: u32 = 0xFEFF;
pub const DTLS1_2_VERSION: u32 = 0xFEFD;
pub const DTLS1_BAD_VER: u32 = 0x0100;

/// `ERR_LIB_PROV` (err.h): errors are raised under the default provider's library code so
/// that OpenSSL prints the same messages for aesx as for the default provider.
pub const ERR_LIB_PROV: u32 = 57;

// Reason codes (proverr.h).
pub const PROV_R_BAD_DECRYPT: u32 = 100;
pub const PROV_R_CIPHER_OPERATION_FAILED: u32 = 102;
pub const PROV_R_FAILED_TO_GET_PARAMETER: u32 = 103;
pub const PROV_R_FAILED_TO_SET_PARAMETER: u32 = 104;
pub const PROV_R_INVALID_KEY_LENGTH: u32 = 105;
pub const PROV_R_OUTPUT_BUFFER_TOO_SMALL: u32 = 106;
pub const PROV_R_WRONG_FINAL_BLOCK_LENGTH: u32 = 107;
pub const PROV_R_INVALID_AAD: u32 = 108;
pub const PROV_R_INVALID_IV_LENGTH: u32 = 109;
pub const PROV_R_INVALID_TAG: u32 = 110;
pub const PROV_R_NO_KEY_SET: u32 = 114;
pub const PROV_R_TAG_NOT_SET: u32 = 119;
pub const PROV_R_TOO_MANY_RECORDS: u32 = 126;
pub const PROV_R_INVALID_CONFIG_DATA: u32 = 211;
/// `ERR_R_PASSED_NULL_PARAMETER` (err.h: a common, fatal reason valid under any library).
pub const ERR_R_PASSED_NULL_PARAMETER: u32 = 258 | 0xC0000;
/// `ERR_R_INTERNAL_ERROR`.
pub const ERR_R_INTERNAL_ERROR: u32 = 259 | 0xC0000;

/// `ERR_PACK(lib, 0, reason)` for OpenSSL 3.
pub const fn err_pack(lib: u32, reason: u32) -> u32 {
    ((lib & 0xFF) << 23) | (reason & 0x7F_FFFF)
}

// Function types of the core functions used.
pub type CoreGetParamsFn = unsafe extern "C" fn(*const CoreHandle, *mut OsslParam) -> c_int;
pub type CoreNewErrorFn = unsafe extern "C" fn(*const CoreHandle);
pub type CoreSetErrorDebugFn =
    unsafe extern "C" fn(*const CoreHandle, *const c_char, c_int, *const c_char);
/// `core_vset_error(handle, reason, fmt, va_list)`. On x86-64 and AArch64 a `va_list`
/// parameter is passed as a pointer; aesx always passes `fmt = NULL`, in which case OpenSSL
/// never reads the `va_list` (`ERR_vset_error` formats only when `fmt != NULL`).
pub type CoreVsetErrorFn = unsafe extern "C" fn(*const CoreHandle, u32, *const c_char, *mut c_void);

/// Casts an `extern "C"` function of any signature to the untyped pointer a dispatch table
/// holds (what `(void (*)(void))fn` does in C).
macro_rules! dispatch_fn {
    ($id:expr, $f:expr) => {
        $crate::ffi::OsslDispatch {
            function_id: $id,
            // SAFETY: function pointers all have the same size and representation; OpenSSL
            // casts the pointer back to the signature `core_dispatch.h` gives for `$id`, which
            // is the signature of `$f` (checked by the type annotation at each use site).
            function: Some(unsafe {
                core::mem::transmute::<*const (), unsafe extern "C" fn()>($f as *const ())
            }),
        }
    };
}
pub(crate) use dispatch_fn;

/// The `{0, NULL}` entry that ends a dispatch table.
pub const DISPATCH_END: OsslDispatch = OsslDispatch {
    function_id: 0,
    function: None,
};

/// A table entry of a gettable/settable parameter list (`OSSL_PARAM_DEFN`).
pub const fn param_defn(
    key: &'static core::ffi::CStr,
    data_type: c_uint,
    size: usize,
) -> OsslParam {
    OsslParam {
        key: key.as_ptr(),
        data_type,
        data: core::ptr::null_mut(),
        data_size: size,
        return_size: OSSL_PARAM_UNMODIFIED,
    }
}

/// `OSSL_PARAM_END`.
pub const PARAM_END: OsslParam = OsslParam {
    key: core::ptr::null(),
    data_type: 0,
    data: core::ptr::null_mut(),
    data_size: 0,
    return_size: 0,
};

/// Wrapper that lets static tables of raw pointers (dispatch tables, parameter lists,
/// algorithm lists) live in `static`s. They are immutable and only ever read.
#[repr(transparent)]
pub struct Table<T>(pub T);
// SAFETY: the wrapped tables are never mutated after compile time; the raw pointers inside
// point to other immutable statics.
unsafe impl<T> Sync for Table<T> {}

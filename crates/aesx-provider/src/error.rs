//! Raising OpenSSL errors through the core, and the panic guard every entry point runs in.

use core::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::OnceLock;

use crate::ffi::*;

/// The error functions the core handed us at `OSSL_provider_init` (the same for every
/// provider instance in a process: they are libcrypto's).
#[derive(Clone, Copy)]
pub struct CoreErr {
    pub handle: *const CoreHandle,
    pub new_error: CoreNewErrorFn,
    pub set_debug: CoreSetErrorDebugFn,
    pub vset_error: CoreVsetErrorFn,
}
// SAFETY: function pointers into libcrypto and an opaque handle OpenSSL allows any thread to
// pass back to those functions.
unsafe impl Send for CoreErr {}
// SAFETY: as above; the value is never mutated after it is set.
unsafe impl Sync for CoreErr {}

static CORE_ERR: OnceLock<CoreErr> = OnceLock::new();

pub fn set_core_err(e: CoreErr) {
    let _ = CORE_ERR.set(e);
}

/// A reason code under `ERR_LIB_PROV` (the default provider's codes, so messages read the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reason(pub u32);

impl Reason {
    pub const NO_KEY_SET: Reason = Reason(PROV_R_NO_KEY_SET);
    pub const BAD_DECRYPT: Reason = Reason(PROV_R_BAD_DECRYPT);
    pub const OP_FAILED: Reason = Reason(PROV_R_CIPHER_OPERATION_FAILED);
    pub const GET_PARAM: Reason = Reason(PROV_R_FAILED_TO_GET_PARAMETER);
    pub const SET_PARAM: Reason = Reason(PROV_R_FAILED_TO_SET_PARAMETER);
    pub const KEY_LEN: Reason = Reason(PROV_R_INVALID_KEY_LENGTH);
    pub const IV_LEN: Reason = Reason(PROV_R_INVALID_IV_LENGTH);
    pub const OUT_SMALL: Reason = Reason(PROV_R_OUTPUT_BUFFER_TOO_SMALL);
    pub const FINAL_LEN: Reason = Reason(PROV_R_WRONG_FINAL_BLOCK_LENGTH);
    pub const CONFIG: Reason = Reason(PROV_R_INVALID_CONFIG_DATA);
    pub const NULL: Reason = Reason(ERR_R_PASSED_NULL_PARAMETER);
    pub const INTERNAL: Reason = Reason(ERR_R_INTERNAL_ERROR);
    /// Fail without putting anything on the error queue (where OpenSSL does the same).
    pub const SILENT: Reason = Reason(0);
}

/// Puts `reason` on the calling thread's OpenSSL error queue (what `ERR_raise(ERR_LIB_PROV,
/// reason)` does inside the default provider).
#[track_caller]
pub fn raise(reason: Reason) {
    let Some(e) = CORE_ERR.get() else { return };
    if reason == Reason::SILENT {
        return;
    }
    let loc = core::panic::Location::caller();
    // A NUL-terminated copy of the file name would need an allocation; the module name is
    // enough to find the place, and the line is exact.
    let file = c"aesx-provider";
    let mut va = [0u64; 4]; // a zeroed va_list stand-in; never read because fmt is NULL
    // SAFETY: the core's own functions, called with its handle, a static string, and
    // fmt = NULL (so the va_list argument is ignored by ERR_vset_error).
    unsafe {
        (e.new_error)(e.handle);
        (e.set_debug)(
            e.handle,
            file.as_ptr(),
            loc.line() as c_int,
            core::ptr::null::<c_char>(),
        );
        (e.vset_error)(
            e.handle,
            err_pack(ERR_LIB_PROV, reason.0),
            core::ptr::null(),
            va.as_mut_ptr().cast::<c_void>(),
        );
    }
}

/// Runs an entry point's body; a panic becomes an OpenSSL error and `fallback`, never an unwind
/// across the C ABI.
#[inline(always)]
pub fn guard<R>(fallback: R, f: impl FnOnce() -> R) -> R {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => {
            // Raising cannot panic (no allocation, no formatting).
            raise(Reason::INTERNAL);
            fallback
        }
    }
}

/// `guard` for the common `int f(...)` shape: `Ok(())` is 1; `Err(reason)` raises and is 0.
#[inline(always)]
pub fn status(f: impl FnOnce() -> Result<(), Reason>) -> c_int {
    guard(0, || match f() {
        Ok(()) => 1,
        Err(r) => {
            raise(r);
            0
        }
    })
}

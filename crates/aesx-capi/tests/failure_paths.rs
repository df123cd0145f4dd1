//! Every `aesx_*` function's failure paths, called through the real shared library
//! (`dlopen` of the libaesx.so cargo built for this profile), from Rust:
//!
//! * each out-parameter is written first: NULL (pointers) or 0 (numbers) after a failed call,
//!   whatever the caller's variable held before (issue 14, finding 5: `aesx_cipher_new(NULL key,
//!   ..., &out)` used to leave `*out` as it was);
//! * on failure no data buffer, IV or stream position changes;
//! * each failure gets its own status.

use std::ffi::{CStr, c_char, c_int, c_void};
use std::ptr::{null, null_mut};

mod common;

type Status = c_int;
const OK: Status = 0;
const NULL_POINTER: Status = 1;
const KEY_LENGTH: Status = 2;
const NOT_BLOCK_ALIGNED: Status = 3;
const OVERLAP: Status = 4;
const UNKNOWN_BACKEND: Status = 5;
const BACKEND_UNAVAILABLE: Status = 6;
const LENGTH_LIMIT: Status = 7;

/// Opaque handles.
type Cipher = c_void;
type Stream = c_void;

/// A value no call may leave behind in an out-parameter.
const JUNK: u32 = 0xdead_beef;
fn junk_ptr<T>() -> *mut T {
    0x5a5a_5a5a_5a5a_5a50usize as *mut T
}

type Ecb = unsafe extern "C" fn(*const Cipher, *const u8, *mut u8, usize) -> Status;
type Cbc = unsafe extern "C" fn(*const Cipher, *mut u8, *const u8, *mut u8, usize) -> Status;

/// The exported functions, looked up by name in libaesx.so.
struct Lib {
    status_str: unsafe extern "C" fn(c_int) -> *const c_char,
    backend_detect: unsafe extern "C" fn(*mut u32) -> Status,
    backend_check: unsafe extern "C" fn(u32) -> Status,
    backend_name: unsafe extern "C" fn(u32, *mut *const c_char) -> Status,
    backend_from_name: unsafe extern "C" fn(*const c_char, *mut u32) -> Status,
    set_default_backend: unsafe extern "C" fn(u32) -> Status,
    default_backend: unsafe extern "C" fn(*mut u32) -> Status,
    cipher_new: unsafe extern "C" fn(*const u8, usize, u32, *mut *mut Cipher) -> Status,
    cipher_free: unsafe extern "C" fn(*mut Cipher) -> Status,
    cipher_backend: unsafe extern "C" fn(*const Cipher, *mut u32) -> Status,
    cipher_key_bits: unsafe extern "C" fn(*const Cipher, *mut u32) -> Status,
    ecb: [Ecb; 2],
    cbc: [Cbc; 2],
    ctr_xor_at:
        unsafe extern "C" fn(*const Cipher, *const u8, u64, *const u8, *mut u8, usize) -> Status,
    ctr_new: unsafe extern "C" fn(*const Cipher, *const u8, *mut *mut Stream) -> Status,
    ctr_xor: unsafe extern "C" fn(*mut Stream, *const u8, *mut u8, usize) -> Status,
    ctr_seek: unsafe extern "C" fn(*mut Stream, u64) -> Status,
    ctr_position: unsafe extern "C" fn(*const Stream, *mut u64) -> Status,
    ctr_free: unsafe extern "C" fn(*mut Stream) -> Status,
}

fn lib() -> &'static Lib {
    static LIB: std::sync::OnceLock<Lib> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let path = common::lib_dir().join("libaesx.so");
        let cpath = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; loading libaesx runs no constructors that could
        // misbehave (a Rust cdylib).
        let h = unsafe { libc::dlopen(cpath.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        assert!(!h.is_null(), "dlopen {} failed", path.display());
        fn sym<F: Copy>(h: *mut c_void, name: &CStr) -> F {
            assert_eq!(size_of::<F>(), size_of::<*mut c_void>());
            // SAFETY: `h` is a live handle from dlopen (never closed); `name` is NUL-terminated.
            let p = unsafe { libc::dlsym(h, name.as_ptr()) };
            assert!(!p.is_null(), "{name:?} is not exported");
            // SAFETY: the symbol is the exported function of that name, whose C signature
            // (include/aesx.h) is `F` (the field the result is stored in); same size checked.
            unsafe { std::mem::transmute_copy::<*mut c_void, F>(&p) }
        }
        macro_rules! f {
            ($name:literal) => {
                sym(h, $name)
            };
        }
        Lib {
            status_str: f!(c"aesx_status_str"),
            backend_detect: f!(c"aesx_backend_detect"),
            backend_check: f!(c"aesx_backend_check"),
            backend_name: f!(c"aesx_backend_name"),
            backend_from_name: f!(c"aesx_backend_from_name"),
            set_default_backend: f!(c"aesx_set_default_backend"),
            default_backend: f!(c"aesx_default_backend"),
            cipher_new: f!(c"aesx_cipher_new"),
            cipher_free: f!(c"aesx_cipher_free"),
            cipher_backend: f!(c"aesx_cipher_backend"),
            cipher_key_bits: f!(c"aesx_cipher_key_bits"),
            ecb: [f!(c"aesx_ecb_encrypt"), f!(c"aesx_ecb_decrypt")],
            cbc: [f!(c"aesx_cbc_encrypt"), f!(c"aesx_cbc_decrypt")],
            ctr_xor_at: f!(c"aesx_ctr_xor_at"),
            ctr_new: f!(c"aesx_ctr_new"),
            ctr_xor: f!(c"aesx_ctr_xor"),
            ctr_seek: f!(c"aesx_ctr_seek"),
            ctr_position: f!(c"aesx_ctr_position"),
            ctr_free: f!(c"aesx_ctr_free"),
        }
    })
}

/// Calls a library function. Every pointer the tests pass is NULL, a live handle, a valid
/// buffer of at least the length given, or `junk_ptr()` only where the function must not read
/// it (an out-parameter it writes first, or a data pointer with a length it rejects first).
macro_rules! call {
    ($f:expr, $($arg:expr),* $(,)?) => {
        // SAFETY: see the macro's comment: the arguments meet each function's contract.
        unsafe { ($f)($($arg),*) }
    };
}

/// A new cipher that must succeed.
fn cipher(key_len: usize) -> *mut Cipher {
    let key = [7u8; 32];
    let mut c: *mut Cipher = null_mut();
    assert_eq!(
        call!(lib().cipher_new, key.as_ptr(), key_len, 0, &mut c),
        OK
    );
    assert!(!c.is_null());
    c
}

#[test]
fn cipher_new_clears_out_first_on_every_failure() {
    let l = lib();
    let key = [1u8; 32];
    let mut c: *mut Cipher = junk_ptr();
    // The reported case: NULL key used to leave `*out` as it was.
    assert_eq!(call!(l.cipher_new, null(), 16, 0, &mut c), NULL_POINTER);
    assert!(c.is_null(), "NULL key: *out not cleared");
    for len in [0usize, 1, 15, 17, 23, 25, 31, 33, 64, usize::MAX] {
        c = junk_ptr();
        assert_eq!(
            call!(l.cipher_new, key.as_ptr(), len, 0, &mut c),
            KEY_LENGTH
        );
        assert!(c.is_null(), "key_len {len}: *out not cleared");
    }
    // A bad length is reported before the key pointer is read.
    c = junk_ptr();
    assert_eq!(
        call!(l.cipher_new, junk_ptr::<u8>(), 0, 0, &mut c),
        KEY_LENGTH
    );
    assert!(c.is_null());
    for backend in [6u32, 99, 0x8000_0001, u32::MAX] {
        c = junk_ptr();
        assert_eq!(
            call!(l.cipher_new, key.as_ptr(), 16, backend, &mut c),
            UNKNOWN_BACKEND
        );
        assert!(c.is_null(), "backend {backend}: *out not cleared");
    }
    let mut unavailable = 0;
    for backend in 1..=5u32 {
        if call!(l.backend_check, backend) == BACKEND_UNAVAILABLE {
            unavailable += 1;
            c = junk_ptr();
            assert_eq!(
                call!(l.cipher_new, key.as_ptr(), 16, backend, &mut c),
                BACKEND_UNAVAILABLE
            );
            assert!(
                c.is_null(),
                "backend {backend} unavailable: *out not cleared"
            );
        }
    }
    eprintln!("{unavailable} backends unavailable on this CPU (their path tested)");
    assert_eq!(
        call!(l.cipher_new, key.as_ptr(), 16, 0, null_mut()),
        NULL_POINTER
    );
}

#[test]
fn value_out_parameters_are_zero_after_failure() {
    let l = lib();
    let mut name: *const c_char = c"stale".as_ptr();
    assert_eq!(call!(l.backend_name, 6, &mut name), UNKNOWN_BACKEND);
    assert!(name.is_null(), "backend_name: *name not cleared");
    assert_eq!(call!(l.backend_name, 1, null_mut()), NULL_POINTER);

    let mut b = JUNK;
    assert_eq!(
        call!(l.backend_from_name, c"no-such".as_ptr(), &mut b),
        UNKNOWN_BACKEND
    );
    assert_eq!(b, 0, "backend_from_name: *out not cleared");
    b = JUNK;
    assert_eq!(
        call!(l.backend_from_name, c"\xff\xfe".as_ptr(), &mut b),
        UNKNOWN_BACKEND
    );
    assert_eq!(b, 0);
    b = JUNK;
    assert_eq!(call!(l.backend_from_name, null(), &mut b), NULL_POINTER);
    assert_eq!(b, 0, "backend_from_name(NULL): *out not cleared");
    assert_eq!(
        call!(l.backend_from_name, c"soft".as_ptr(), null_mut()),
        NULL_POINTER
    );

    b = JUNK;
    assert_eq!(call!(l.cipher_backend, null(), &mut b), NULL_POINTER);
    assert_eq!(b, 0, "cipher_backend(NULL): *out not cleared");
    let mut bits = JUNK;
    assert_eq!(call!(l.cipher_key_bits, null(), &mut bits), NULL_POINTER);
    assert_eq!(bits, 0, "cipher_key_bits(NULL): *out not cleared");
    let c = cipher(24);
    assert_eq!(call!(l.cipher_backend, c, null_mut()), NULL_POINTER);
    assert_eq!(call!(l.cipher_key_bits, c, null_mut()), NULL_POINTER);
    assert_eq!(call!(l.cipher_key_bits, c, &mut bits), OK);
    assert_eq!(bits, 192);

    let mut s: *mut Stream = junk_ptr();
    assert_eq!(
        call!(l.ctr_new, null(), [0u8; 16].as_ptr(), &mut s),
        NULL_POINTER
    );
    assert!(s.is_null(), "ctr_new(NULL cipher): *out not cleared");
    s = junk_ptr();
    assert_eq!(call!(l.ctr_new, c, null(), &mut s), NULL_POINTER);
    assert!(s.is_null(), "ctr_new(NULL iv): *out not cleared");
    assert_eq!(
        call!(l.ctr_new, c, [0u8; 16].as_ptr(), null_mut()),
        NULL_POINTER
    );

    let mut pos = u64::MAX;
    assert_eq!(call!(l.ctr_position, null(), &mut pos), NULL_POINTER);
    assert_eq!(pos, 0, "ctr_position(NULL): *out not cleared");

    assert_eq!(call!(l.backend_detect, null_mut()), NULL_POINTER);
    assert_eq!(call!(l.default_backend, null_mut()), NULL_POINTER);
    assert_eq!(call!(l.cipher_free, c), OK);
}

#[test]
fn backend_selection_failures_change_nothing() {
    let l = lib();
    let mut before = JUNK;
    assert_eq!(call!(l.default_backend, &mut before), OK);
    for bad in [6u32, 1000, u32::MAX] {
        assert_eq!(call!(l.backend_check, bad), UNKNOWN_BACKEND);
        assert_eq!(call!(l.set_default_backend, bad), UNKNOWN_BACKEND);
    }
    for b in 1..=5u32 {
        if call!(l.backend_check, b) == BACKEND_UNAVAILABLE {
            assert_eq!(call!(l.set_default_backend, b), BACKEND_UNAVAILABLE);
        }
    }
    let mut after = JUNK;
    assert_eq!(call!(l.default_backend, &mut after), OK);
    assert_eq!(
        before, after,
        "a failed set_default_backend changed the default"
    );
    for st in [-1, 0, 1, 7, 8, 9, c_int::MAX, c_int::MIN] {
        let p = call!(l.status_str, st);
        assert!(!p.is_null());
        // SAFETY: status_str returns a static NUL-terminated string.
        assert!(!unsafe { CStr::from_ptr(p) }.to_bytes().is_empty());
    }
}

/// ECB and CBC: each failure leaves the output buffer and the IV untouched.
#[test]
fn block_mode_failures_write_nothing() {
    let l = lib();
    let c = cipher(16);
    let mut buf = [0x11u8; 96];
    let mut out = [0x22u8; 64];
    let mut iv = [0x33u8; 16];
    let b = buf.as_mut_ptr();
    let o = out.as_mut_ptr();
    for d in 0..2 {
        let ecb = l.ecb[d];
        let cases: [(Status, *const Cipher, *const u8, *mut u8, usize); 9] = [
            (NULL_POINTER, null(), b, o, 16),
            (NULL_POINTER, c, null(), o, 16),
            (NULL_POINTER, c, b, null_mut(), 16),
            (NOT_BLOCK_ALIGNED, c, b, o, 15),
            (NOT_BLOCK_ALIGNED, c, b, o, 17),
            // Rejected before any pointer is read: any length that is not whole blocks.
            (NOT_BLOCK_ALIGNED, c, junk_ptr(), junk_ptr(), 1),
            // SAFETY of the calls below: the overlap is detected before anything is read.
            (OVERLAP, c, b, b.wrapping_add(16), 32),
            (OVERLAP, c, b.wrapping_add(16), b, 32),
            (LENGTH_LIMIT, c, b, b, usize::MAX / 2 + 1),
        ];
        for (want, cc, i, o2, len) in cases {
            assert_eq!(call!(ecb, cc, i, o2, len), want, "ecb[{d}] len {len}");
        }
        let cases: [(Status, *const Cipher, *mut u8, *const u8, *mut u8, usize); 8] = [
            (NULL_POINTER, null(), iv.as_mut_ptr(), b, o, 16),
            (NULL_POINTER, c, null_mut(), b, o, 16),
            (NULL_POINTER, c, iv.as_mut_ptr(), null(), o, 16),
            (NULL_POINTER, c, iv.as_mut_ptr(), b, null_mut(), 16),
            (NOT_BLOCK_ALIGNED, c, iv.as_mut_ptr(), b, o, 8),
            (OVERLAP, c, iv.as_mut_ptr(), b, b.wrapping_add(8), 32),
            (LENGTH_LIMIT, c, iv.as_mut_ptr(), b, b, usize::MAX - 15),
            (OK, c, iv.as_mut_ptr(), null(), null_mut(), 0),
        ];
        for (want, cc, ivp, i, o2, len) in cases {
            assert_eq!(
                call!(l.cbc[d], cc, ivp, i, o2, len),
                want,
                "cbc[{d}] len {len}"
            );
        }
    }
    assert_eq!(buf, [0x11; 96], "a failed call wrote its input buffer");
    assert_eq!(out, [0x22; 64], "a failed call wrote its output buffer");
    assert_eq!(
        iv, [0x33; 16],
        "a failed (or empty) CBC call changed the IV"
    );
    assert_eq!(call!(l.cipher_free, c), OK);
    assert_eq!(call!(l.cipher_free, null_mut()), OK);
}

/// CTR: failures write nothing and do not move the stream.
#[test]
fn ctr_failures_write_nothing_and_keep_the_position() {
    let l = lib();
    let c = cipher(32);
    let iv = [0xffu8; 16];
    let mut buf = [0x11u8; 64];
    let mut out = [0x22u8; 64];
    let b = buf.as_mut_ptr();
    let o = out.as_mut_ptr();
    let cases: [(
        Status,
        *const Cipher,
        *const u8,
        u64,
        *const u8,
        *mut u8,
        usize,
    ); 8] = [
        (NULL_POINTER, null(), iv.as_ptr(), 0, b, o, 5),
        (NULL_POINTER, c, null(), 0, b, o, 5),
        (NULL_POINTER, c, iv.as_ptr(), 0, null(), o, 5),
        (NULL_POINTER, c, iv.as_ptr(), 0, b, null_mut(), 5),
        (OVERLAP, c, iv.as_ptr(), 0, b, b.wrapping_add(3), 5),
        // The last byte of the stream is position 2^64 - 1: one past it is refused.
        (LENGTH_LIMIT, c, iv.as_ptr(), u64::MAX, b, o, 2),
        (LENGTH_LIMIT, c, iv.as_ptr(), u64::MAX - 15, b, o, 17),
        // Refused before the buffers are looked at.
        (
            LENGTH_LIMIT,
            c,
            iv.as_ptr(),
            1,
            junk_ptr(),
            junk_ptr(),
            usize::MAX,
        ),
    ];
    for (want, cc, ivp, pos, i, o2, len) in cases {
        assert_eq!(
            call!(l.ctr_xor_at, cc, ivp, pos, i, o2, len),
            want,
            "pos {pos} len {len}"
        );
    }
    let mut s: *mut Stream = null_mut();
    assert_eq!(call!(l.ctr_new, c, iv.as_ptr(), &mut s), OK);
    // The stream keeps its own key reference.
    assert_eq!(call!(l.cipher_free, c), OK);
    assert_eq!(call!(l.ctr_seek, s, 1000), OK);
    let cases: [(Status, *mut Stream, *const u8, *mut u8, usize); 4] = [
        (NULL_POINTER, null_mut(), b, o, 5),
        (NULL_POINTER, s, null(), o, 5),
        (NULL_POINTER, s, b, null_mut(), 5),
        (OVERLAP, s, b, b.wrapping_add(4), 5),
    ];
    for (want, ss, i, o2, len) in cases {
        assert_eq!(call!(l.ctr_xor, ss, i, o2, len), want);
    }
    let mut pos = JUNK as u64;
    assert_eq!(call!(l.ctr_position, s, &mut pos), OK);
    assert_eq!(pos, 1000, "a failed ctr_xor moved the stream");
    assert_eq!(call!(l.ctr_seek, s, u64::MAX - 1), OK);
    assert_eq!(call!(l.ctr_xor, s, b, o, 2), LENGTH_LIMIT);
    assert_eq!(call!(l.ctr_position, s, &mut pos), OK);
    assert_eq!(pos, u64::MAX - 1, "a refused ctr_xor moved the stream");
    assert_eq!(call!(l.ctr_seek, null_mut(), 0), NULL_POINTER);
    assert_eq!(buf, [0x11; 64], "a failed call wrote its input buffer");
    assert_eq!(out, [0x22; 64], "a failed call wrote its output buffer");
    assert_eq!(call!(l.ctr_free, s), OK);
    assert_eq!(call!(l.ctr_free, null_mut()), OK);
}

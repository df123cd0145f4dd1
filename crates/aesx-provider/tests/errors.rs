//! The module must never take a process down. This test loads `libaesx_provider.so` with
//! dlopen and drives its dispatch tables directly (no libcrypto in between to filter
//! arguments), with a fake core that records the errors raised: NULL contexts, NULL buffers,
//! NULL out-lengths, wrong key and IV lengths, output buffers too small, parameters of the
//! wrong type or out of range, final on a partial block, TLS records that are not in place or
//! are publicly invalid. Each must return failure with the default provider's reason code, or
//! succeed harmlessly where OpenSSL does; none may crash or unwind.
#![allow(
    clippy::undocumented_unsafe_blocks,
    clippy::missing_transmute_annotations
)]

mod common;

use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::ptr::null_mut;

#[repr(C)]
#[derive(Clone, Copy)]
struct Dispatch {
    id: c_int,
    f: Option<unsafe extern "C" fn()>,
}

#[repr(C)]
struct Algorithm {
    names: *const c_char,
    props: *const c_char,
    imp: *const Dispatch,
    desc: *const c_char,
}

use common::{
    END, OsslParam, PARAM_INTEGER, PARAM_OCTET_STRING, PARAM_UNSIGNED, PARAM_UTF8_STRING, param,
};

thread_local! {
    static RAISED: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

unsafe extern "C" fn fake_new_error(_h: *const c_void) {}
unsafe extern "C" fn fake_set_debug(
    _h: *const c_void,
    file: *const c_char,
    _l: c_int,
    _f: *const c_char,
) {
    assert!(!file.is_null());
}
unsafe extern "C" fn fake_vset_error(
    _h: *const c_void,
    reason: u32,
    fmt: *const c_char,
    _va: *mut c_void,
) {
    assert!(fmt.is_null(), "aesx passes no format string");
    RAISED.with(|r| r.borrow_mut().push(reason));
}

/// The reason codes raised on this thread since the last call.
fn take_reasons() -> Vec<u32> {
    RAISED
        .with(|r| std::mem::take(&mut *r.borrow_mut()))
        .into_iter()
        .map(|e| {
            assert_eq!(e >> 23, 57, "raised under ERR_LIB_PROV");
            e & 0x7F_FFFF
        })
        .collect()
}

const NO_KEY_SET: u32 = 114;
const KEY_LEN: u32 = 105;
const IV_LEN: u32 = 109;
const OUT_SMALL: u32 = 106;
const FINAL_LEN: u32 = 107;
const GET_PARAM: u32 = 103;
const SET_PARAM: u32 = 104;
const OP_FAILED: u32 = 102;
const NULL_PARAM: u32 = 258 | 0xC0000;

type InitFn = unsafe extern "C" fn(
    *const c_void,
    *const Dispatch,
    *mut *const Dispatch,
    *mut *mut c_void,
) -> c_int;
type NewCtx = unsafe extern "C" fn(*mut c_void) -> *mut c_void;
type FreeCtx = unsafe extern "C" fn(*mut c_void);
type Init = unsafe extern "C" fn(
    *mut c_void,
    *const u8,
    usize,
    *const u8,
    usize,
    *const OsslParam,
) -> c_int;
type Update =
    unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize, *const u8, usize) -> c_int;
type Final = unsafe extern "C" fn(*mut c_void, *mut u8, *mut usize, usize) -> c_int;
type GetParams = unsafe extern "C" fn(*mut OsslParam) -> c_int;
type CtxParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;
type Query = unsafe extern "C" fn(*mut c_void, c_int, *mut c_int) -> *const Algorithm;
type ProvGetParams = unsafe extern "C" fn(*mut c_void, *mut OsslParam) -> c_int;

struct Cipher {
    newctx: NewCtx,
    freectx: FreeCtx,
    dupctx: NewCtx,
    einit: Init,
    dinit: Init,
    update: Update,
    cipher: Update,
    final_: Final,
    get_params: GetParams,
    get_ctx: CtxParams,
    set_ctx: CtxParams,
}

struct Provider {
    provctx: *mut c_void,
    get_params: ProvGetParams,
    algs: Vec<(String, Cipher)>,
}

fn find(d: *const Dispatch, id: c_int) -> unsafe extern "C" fn() {
    let mut p = d;
    unsafe {
        while (*p).id != 0 {
            if (*p).id == id {
                return (*p).f.unwrap();
            }
            p = p.add(1);
        }
    }
    panic!("function id {id} missing");
}

fn load() -> Provider {
    let path = std::ffi::CString::new(common::module_path().to_str().unwrap()).unwrap();
    unsafe {
        let h = libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL);
        assert!(!h.is_null(), "dlopen {}", path.to_string_lossy());
        let init = libc::dlsym(h, c"OSSL_provider_init".as_ptr());
        assert!(!init.is_null());
        let init: InitFn = std::mem::transmute(init);
        let core = [
            Dispatch {
                id: 5,
                f: Some(std::mem::transmute::<*const (), unsafe extern "C" fn()>(
                    fake_new_error as *const (),
                )),
            },
            Dispatch {
                id: 6,
                f: Some(std::mem::transmute::<*const (), unsafe extern "C" fn()>(
                    fake_set_debug as *const (),
                )),
            },
            Dispatch {
                id: 7,
                f: Some(std::mem::transmute::<*const (), unsafe extern "C" fn()>(
                    fake_vset_error as *const (),
                )),
            },
            Dispatch { id: 0, f: None },
        ];
        // Out-pointers NULL: refused, no crash.
        assert_eq!(init(null_mut(), core.as_ptr(), null_mut(), null_mut()), 0);
        let mut out: *const Dispatch = std::ptr::null();
        let mut provctx: *mut c_void = null_mut();
        assert_eq!(init(null_mut(), core.as_ptr(), &mut out, &mut provctx), 1);
        let query: Query = std::mem::transmute(find(out, 1027));
        let get_params: ProvGetParams = std::mem::transmute(find(out, 1026));
        assert!(
            query(provctx, 99, null_mut()).is_null(),
            "no other operations"
        );
        let mut a = query(provctx, 2, null_mut());
        let mut algs = Vec::new();
        while !(*a).names.is_null() {
            let d = (*a).imp;
            let t = |id| find(d, id);
            algs.push((
                CStr::from_ptr((*a).names).to_str().unwrap().to_string(),
                Cipher {
                    newctx: std::mem::transmute(t(1)),
                    einit: std::mem::transmute(t(2)),
                    dinit: std::mem::transmute(t(3)),
                    update: std::mem::transmute(t(4)),
                    final_: std::mem::transmute(t(5)),
                    cipher: std::mem::transmute(t(6)),
                    freectx: std::mem::transmute(t(7)),
                    dupctx: std::mem::transmute(t(8)),
                    get_params: std::mem::transmute(t(9)),
                    get_ctx: std::mem::transmute(t(10)),
                    set_ctx: std::mem::transmute(t(11)),
                },
            ));
            assert_eq!(CStr::from_ptr((*a).props), c"provider=aesx");
            a = a.add(1);
        }
        assert_eq!(algs.len(), 12);
        Provider {
            provctx,
            get_params,
            algs,
        }
    }
}

fn alg<'a>(p: &'a Provider, name: &str) -> &'a Cipher {
    &p.algs
        .iter()
        .find(|(n, _)| n.split(':').next() == Some(name))
        .unwrap()
        .1
}

#[test]
fn null_and_wrong_arguments_fail_cleanly() {
    let p = load();
    let key = [7u8; 32];
    let iv = [9u8; 16];
    let input = [1u8; 64];
    let mut out = [0u8; 128];
    let mut outl = 0usize;
    unsafe {
        for (name, c) in p.algs.iter().filter(|(n, _)| !n.contains("GCM")) {
            let mode_ctr = name.contains("CTR");
            let keylen = if name.contains("128") {
                16
            } else if name.contains("192") {
                24
            } else {
                32
            };
            // NULL context everywhere.
            assert_eq!(
                (c.einit)(
                    null_mut(),
                    key.as_ptr(),
                    keylen,
                    iv.as_ptr(),
                    16,
                    std::ptr::null()
                ),
                0
            );
            assert_eq!(
                (c.update)(
                    null_mut(),
                    out.as_mut_ptr(),
                    &mut outl,
                    128,
                    input.as_ptr(),
                    16
                ),
                0
            );
            assert_eq!(
                (c.cipher)(
                    null_mut(),
                    out.as_mut_ptr(),
                    &mut outl,
                    128,
                    input.as_ptr(),
                    16
                ),
                0
            );
            assert_eq!((c.final_)(null_mut(), out.as_mut_ptr(), &mut outl, 128), 0);
            assert_eq!((c.get_ctx)(null_mut(), null_mut()), 0);
            assert_eq!((c.set_ctx)(null_mut(), null_mut()), 0);
            assert!((c.dupctx)(null_mut()).is_null());
            (c.freectx)(null_mut());
            assert!(take_reasons().iter().all(|&r| r == NULL_PARAM));

            let ctx = (c.newctx)(p.provctx);
            assert!(!ctx.is_null());
            // No key yet.
            assert_eq!(
                (c.update)(ctx, out.as_mut_ptr(), &mut outl, 128, input.as_ptr(), 16),
                0
            );
            assert_eq!((c.final_)(ctx, out.as_mut_ptr(), &mut outl, 128), 0);
            assert_eq!(
                (c.cipher)(ctx, out.as_mut_ptr(), &mut outl, 128, input.as_ptr(), 16),
                0
            );
            assert_eq!(take_reasons(), [NO_KEY_SET; 3], "{name}");
            // Wrong key and IV lengths.
            for bad in [
                0usize,
                1,
                15,
                17,
                31,
                33,
                if keylen == 16 { 32 } else { 16 },
            ] {
                assert_eq!(
                    (c.einit)(
                        ctx,
                        key.as_ptr(),
                        bad,
                        std::ptr::null(),
                        0,
                        std::ptr::null()
                    ),
                    0
                );
                assert_eq!(take_reasons(), [KEY_LEN], "{name} keylen {bad}");
            }
            if !name.contains("ECB") {
                for bad in [0usize, 8, 12, 15, 17] {
                    assert_eq!(
                        (c.dinit)(
                            ctx,
                            key.as_ptr(),
                            keylen,
                            iv.as_ptr(),
                            bad,
                            std::ptr::null()
                        ),
                        0
                    );
                    assert_eq!(take_reasons(), [IV_LEN], "{name} ivlen {bad}");
                }
            }
            assert_eq!(
                (c.einit)(ctx, key.as_ptr(), keylen, iv.as_ptr(), 16, std::ptr::null()),
                1
            );
            // NULL out-length, NULL output, NULL input with a length.
            assert_eq!(
                (c.update)(ctx, out.as_mut_ptr(), null_mut(), 128, input.as_ptr(), 16),
                0
            );
            assert_eq!(
                (c.update)(ctx, null_mut(), &mut outl, 128, input.as_ptr(), 32),
                0
            );
            assert_eq!(
                (c.update)(ctx, out.as_mut_ptr(), &mut outl, 128, std::ptr::null(), 32),
                0
            );
            assert_eq!((c.final_)(ctx, out.as_mut_ptr(), null_mut(), 128), 0);
            assert!(take_reasons().iter().all(|&r| r == NULL_PARAM));
            // NULL input of length 0 is an empty update.
            assert_eq!(
                (c.update)(ctx, out.as_mut_ptr(), &mut outl, 128, std::ptr::null(), 0),
                1
            );
            assert_eq!(outl, 0);
            // Output too small.
            assert_eq!(
                (c.update)(ctx, out.as_mut_ptr(), &mut outl, 15, input.as_ptr(), 48),
                0
            );
            assert_eq!(
                (c.cipher)(ctx, out.as_mut_ptr(), &mut outl, 15, input.as_ptr(), 16),
                0
            );
            assert_eq!(take_reasons(), [OUT_SMALL, OUT_SMALL], "{name}");
            if !mode_ctr {
                // EVP_Cipher on a partial block; final on a partial block without padding.
                assert_eq!(
                    (c.cipher)(ctx, out.as_mut_ptr(), &mut outl, 128, input.as_ptr(), 20),
                    0
                );
                let mut pad: c_uint = 0;
                let ps = [
                    param(c"padding", PARAM_UNSIGNED, (&raw mut pad).cast(), 4),
                    END,
                ];
                assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
                assert_eq!(
                    (c.update)(ctx, out.as_mut_ptr(), &mut outl, 128, input.as_ptr(), 5),
                    1
                );
                assert_eq!((c.final_)(ctx, out.as_mut_ptr(), &mut outl, 128), 0);
                assert_eq!(take_reasons(), [FINAL_LEN, FINAL_LEN], "{name}");
            }
            // Parameters of the wrong type or out of range.
            let mut bytes = [0u8; 4];
            let ps = [
                param(c"padding", PARAM_OCTET_STRING, bytes.as_mut_ptr().cast(), 4),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            let mut num: c_uint = 16;
            let ps = [param(c"num", PARAM_UNSIGNED, (&raw mut num).cast(), 4), END];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            let mut neg: c_int = -1;
            let ps = [
                param(c"padding", PARAM_INTEGER, (&raw mut neg).cast(), 4),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            let mut short = [0u8; 8];
            let ps = [
                param(
                    c"updated-iv",
                    PARAM_OCTET_STRING,
                    short.as_mut_ptr().cast(),
                    8,
                ),
                END,
            ];
            let r = (c.get_ctx)(ctx, ps.as_ptr() as *mut _);
            assert_eq!(
                r,
                name.contains("ECB") as c_int,
                "{name}: 16-byte IV into 8 bytes fails"
            );
            let mut s = [0u8; 8];
            let ps = [
                param(c"keylen", PARAM_UTF8_STRING, s.as_mut_ptr().cast(), 8),
                END,
            ];
            assert_eq!((c.get_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            let r = take_reasons();
            assert!(
                r.iter().all(|&x| x == GET_PARAM || x == SET_PARAM) && r.len() >= 4,
                "{name} {r:?}"
            );
            // Unknown parameters are ignored; NULL arrays are empty.
            let mut x: c_uint = 1;
            let ps = [
                param(c"no-such-param", PARAM_UNSIGNED, (&raw mut x).cast(), 4),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
            assert_eq!((c.set_ctx)(ctx, null_mut()), 1);
            assert_eq!((c.get_ctx)(ctx, null_mut()), 1);
            assert_eq!((c.get_params)(null_mut()), 1);
            // A context copy is independent and freed separately.
            let d = (c.dupctx)(ctx);
            assert!(!d.is_null());
            (c.freectx)(d);
            (c.freectx)(ctx);
            assert!(take_reasons().is_empty());
        }
        assert_eq!((p.get_params)(p.provctx, null_mut()), 1);
    }
}

#[test]
fn tls_records_that_are_not_in_place_or_publicly_invalid_fail() {
    let p = load();
    let c = alg(&p, "AES-128-CBC");
    let key = [3u8; 16];
    let iv = [4u8; 16];
    unsafe {
        let ctx = (c.newctx)(p.provctx);
        assert_eq!(
            (c.dinit)(ctx, key.as_ptr(), 16, iv.as_ptr(), 16, std::ptr::null()),
            1
        );
        let mut ver: c_uint = 0x0303;
        let mut macsize: usize = 20;
        let ps = [
            param(c"tls-version", PARAM_UNSIGNED, (&raw mut ver).cast(), 4),
            param(
                c"tls-mac-size",
                PARAM_UNSIGNED,
                (&raw mut macsize).cast(),
                8,
            ),
            END,
        ];
        assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
        let mut rec = [0u8; 64];
        let mut other = [0u8; 64];
        let mut outl = 0usize;
        // Not in place.
        assert_eq!(
            (c.update)(ctx, other.as_mut_ptr(), &mut outl, 64, rec.as_ptr(), 64),
            0
        );
        // Publicly too short for IV + MAC + padding byte.
        assert_eq!(
            (c.update)(ctx, rec.as_mut_ptr(), &mut outl, 32, rec.as_ptr(), 32),
            0
        );
        // Not whole blocks.
        assert_eq!(
            (c.update)(ctx, rec.as_mut_ptr(), &mut outl, 64, rec.as_ptr(), 50),
            0
        );
        // Final is never used with TLS.
        assert_eq!((c.final_)(ctx, rec.as_mut_ptr(), &mut outl, 64), 0);
        assert_eq!(take_reasons(), [OP_FAILED; 4]);
        // A MAC size beyond EVP_MAX_MD_SIZE is refused.
        let mut big: usize = 65;
        let ps = [
            param(c"tls-mac-size", PARAM_UNSIGNED, (&raw mut big).cast(), 8),
            END,
        ];
        assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
        assert_eq!(take_reasons(), [GET_PARAM]);
        (c.freectx)(ctx);
    }
}

const INVALID_TAG: u32 = 110;
const TAG_NOT_SET: u32 = 119;
const INVALID_AAD: u32 = 108;

/// GCM: wrong lengths, tags in the wrong direction, final before a tag, the TLS/SSH IV
/// parameters out of order or out of range, records not in place, copies mid-message.
#[test]
fn gcm_misuse_fails_cleanly() {
    let p = load();
    let key = [5u8; 32];
    let iv = [6u8; 12];
    let mut buf = [0u8; 64];
    let mut outl = 0usize;
    unsafe {
        for (name, c) in p.algs.iter().filter(|(n, _)| n.contains("GCM")) {
            let keylen = if name.contains("128") {
                16
            } else if name.contains("192") {
                24
            } else {
                32
            };
            assert_eq!(
                (c.einit)(
                    null_mut(),
                    key.as_ptr(),
                    keylen,
                    iv.as_ptr(),
                    12,
                    std::ptr::null()
                ),
                0
            );
            assert_eq!(
                (c.cipher)(
                    null_mut(),
                    buf.as_mut_ptr(),
                    &mut outl,
                    64,
                    buf.as_ptr(),
                    16
                ),
                0
            );
            take_reasons();
            let ctx = (c.newctx)(p.provctx);
            // No key: data and final fail.
            assert_eq!(
                (c.update)(ctx, buf.as_mut_ptr(), &mut outl, 64, buf.as_ptr(), 16),
                0
            );
            assert_eq!((c.final_)(ctx, buf.as_mut_ptr(), &mut outl, 64), 0);
            take_reasons();
            // Key and IV lengths.
            assert_eq!(
                (c.einit)(
                    ctx,
                    key.as_ptr(),
                    keylen + 1,
                    std::ptr::null(),
                    0,
                    std::ptr::null()
                ),
                0
            );
            assert_eq!(take_reasons(), [KEY_LEN]);
            for bad in [0usize, 129] {
                let big = [0u8; 200];
                assert_eq!(
                    (c.einit)(
                        ctx,
                        key.as_ptr(),
                        keylen,
                        big.as_ptr(),
                        bad,
                        std::ptr::null()
                    ),
                    0
                );
                assert_eq!(take_reasons(), [IV_LEN], "{name} ivlen {bad}");
            }
            let mut n: usize = 0;
            let ps = [param(c"ivlen", PARAM_UNSIGNED, (&raw mut n).cast(), 8), END];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            assert_eq!(take_reasons(), [IV_LEN]);
            // Encrypting: a tag cannot be set, nor read before final.
            assert_eq!(
                (c.einit)(ctx, key.as_ptr(), keylen, iv.as_ptr(), 12, std::ptr::null()),
                1
            );
            let t = [0u8; 16];
            let ps = [
                param(c"tag", PARAM_OCTET_STRING, t.as_ptr() as *mut _, 16),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            let mut tb = [0u8; 16];
            let ps = [
                param(c"tag", PARAM_OCTET_STRING, tb.as_mut_ptr().cast(), 16),
                END,
            ];
            assert_eq!((c.get_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            assert_eq!(take_reasons(), [INVALID_TAG, INVALID_TAG]);
            // Tag buffers of length 0 or over 16.
            let ps = [
                param(c"tag", PARAM_OCTET_STRING, tb.as_mut_ptr().cast(), 0),
                END,
            ];
            assert_eq!((c.get_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            take_reasons();
            // tlsivgen before any fixed IV: refused.
            let ps = [
                param(c"tlsivgen", PARAM_OCTET_STRING, tb.as_mut_ptr().cast(), 1),
                END,
            ];
            assert_eq!((c.get_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            // tlsaad of the wrong length, a length field too small for IV + tag.
            let aad = [0u8; 12];
            let ps = [
                param(c"tlsaad", PARAM_OCTET_STRING, aad.as_ptr() as *mut _, 12),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            assert_eq!(take_reasons(), [INVALID_AAD]);
            // tlsivfixed: too short, too long, NULL.
            for bad in [3usize, 5, 12, 13] {
                let ps = [
                    param(c"tlsivfixed", PARAM_OCTET_STRING, t.as_ptr() as *mut _, bad),
                    END,
                ];
                assert_eq!(
                    (c.set_ctx)(ctx, ps.as_ptr() as *mut _),
                    0,
                    "{name} fixed {bad}"
                );
            }
            let ps = [
                param(c"tlsivfixed", PARAM_OCTET_STRING, null_mut(), usize::MAX),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            take_reasons();
            // tlsivgen into a 0-byte buffer: refused (OpenSSL writes the whole IV past it).
            let ps = [
                param(
                    c"tlsivfixed",
                    PARAM_OCTET_STRING,
                    t.as_ptr() as *mut _,
                    usize::MAX,
                ),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
            let ps = [
                param(c"tlsivgen", PARAM_OCTET_STRING, tb.as_mut_ptr().cast(), 0),
                END,
            ];
            assert_eq!((c.get_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            let ps = [
                param(c"tlsivgen", PARAM_OCTET_STRING, tb.as_mut_ptr().cast(), 1),
                END,
            ];
            assert_eq!((c.get_ctx)(ctx, ps.as_ptr() as *mut _), 1);
            assert_eq!(tb[0], t[11]);
            take_reasons();
            // A message in flight cannot be copied; between messages it can.
            assert_eq!(
                (c.update)(ctx, buf.as_mut_ptr(), &mut outl, 64, buf.as_ptr(), 20),
                1
            );
            assert!((c.dupctx)(ctx).is_null());
            take_reasons();
            assert_eq!((c.final_)(ctx, buf.as_mut_ptr(), &mut outl, 64), 1);
            let d = (c.dupctx)(ctx);
            assert!(!d.is_null());
            (c.freectx)(d);
            // After final the IV is spent: more data fails until a new IV.
            assert_eq!(
                (c.update)(ctx, buf.as_mut_ptr(), &mut outl, 64, buf.as_ptr(), 16),
                0
            );
            take_reasons();
            // Decrypting: final without a tag is an error (the unfinished-tag case). A fresh
            // context: this one still holds the tag its encryption computed, and would use it.
            (c.freectx)(ctx);
            let ctx = (c.newctx)(p.provctx);
            assert_eq!(
                (c.dinit)(ctx, key.as_ptr(), keylen, iv.as_ptr(), 12, std::ptr::null()),
                1
            );
            assert_eq!(
                (c.update)(ctx, buf.as_mut_ptr(), &mut outl, 64, buf.as_ptr(), 20),
                1
            );
            assert_eq!((c.final_)(ctx, buf.as_mut_ptr(), &mut outl, 64), 0);
            assert_eq!(take_reasons(), [TAG_NOT_SET]);
            // A wrong tag: final fails, through EVP_Cipher's path too.
            assert_eq!(
                (c.dinit)(ctx, std::ptr::null(), 0, iv.as_ptr(), 12, std::ptr::null()),
                1
            );
            let ps = [
                param(c"tag", PARAM_OCTET_STRING, t.as_ptr() as *mut _, 16),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
            assert_eq!(
                (c.cipher)(ctx, buf.as_mut_ptr(), &mut outl, 64, buf.as_ptr(), 20),
                1
            );
            assert_eq!(
                (c.cipher)(ctx, null_mut(), &mut outl, 0, std::ptr::null(), 0),
                0
            );
            // tlsivinv longer than the IV, on a decrypting context with a fixed part.
            let ps = [
                param(
                    c"tlsivfixed",
                    PARAM_OCTET_STRING,
                    t.as_ptr() as *mut _,
                    usize::MAX,
                ),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
            let long = [0u8; 40];
            let ps = [
                param(c"tlsivinv", PARAM_OCTET_STRING, long.as_ptr() as *mut _, 40),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 0);
            // TLS record not in place, and too short.
            let mut hdr = [0u8; 13];
            hdr[12] = 40;
            let ps = [
                param(c"tlsaad", PARAM_OCTET_STRING, hdr.as_mut_ptr().cast(), 13),
                END,
            ];
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
            let mut other = [0u8; 64];
            assert_eq!(
                (c.update)(ctx, other.as_mut_ptr(), &mut outl, 64, buf.as_ptr(), 40),
                0
            );
            assert_eq!((c.set_ctx)(ctx, ps.as_ptr() as *mut _), 1);
            assert_eq!(
                (c.update)(ctx, buf.as_mut_ptr(), &mut outl, 64, buf.as_ptr(), 20),
                0
            );
            take_reasons();
            (c.freectx)(ctx);
        }
    }
}

//! Reading and writing `OSSL_PARAM` arrays with the conversions OpenSSL's own
//! `OSSL_PARAM_get_*` / `OSSL_PARAM_set_*` apply (an `unsigned int` parameter may arrive as a
//! 4- or 8-byte signed or unsigned integer; a getter fills whichever width the caller chose;
//! a NULL data pointer asks only for the size).
//!
//! All functions take raw pointers from OpenSSL and treat them as untrusted: a NULL array,
//! NULL key or NULL data is handled, never dereferenced.

use core::ffi::{CStr, c_char};

use crate::ffi::*;

/// A parameter array handed to the provider (NULL allowed: an empty array).
#[derive(Clone, Copy)]
pub struct Params(*mut OsslParam);

impl Params {
    /// # Safety
    /// `p` is NULL or points to an array ended by an entry whose key is NULL, valid for the
    /// duration of the provider call.
    pub unsafe fn new(p: *const OsslParam) -> Params {
        Params(p as *mut OsslParam)
    }

    pub fn is_empty(self) -> bool {
        // SAFETY: checked non-NULL; the array has at least its end marker.
        self.0.is_null() || unsafe { (*self.0).key.is_null() }
    }

    /// The first parameter whose key is `key` (OpenSSL's `OSSL_PARAM_locate`).
    pub fn locate(self, key: &CStr) -> Option<Param> {
        if self.0.is_null() {
            return None;
        }
        let mut p = self.0;
        let want = key.to_bytes_with_nul();
        // SAFETY: the array is valid up to and including its NULL-key end marker (caller's
        // contract in `new`), and we stop at that marker. Each key is a NUL-terminated string:
        // `same_key` reads it only up to its first difference from `want` (which ends in NUL),
        // so never past its terminator.
        unsafe {
            while !(*p).key.is_null() {
                if same_key((*p).key, want) {
                    return Some(Param(p));
                }
                p = p.add(1);
            }
        }
        None
    }

    /// Iterates over the keys present (for rejecting or logging; not used on hot paths).
    #[cfg(test)]
    pub fn keys(self) -> std::vec::Vec<std::string::String> {
        let mut v = std::vec::Vec::new();
        if self.0.is_null() {
            return v;
        }
        let mut p = self.0;
        // SAFETY: as in `locate`.
        unsafe {
            while !(*p).key.is_null() {
                v.push(CStr::from_ptr((*p).key).to_string_lossy().into_owned());
                p = p.add(1);
            }
        }
        v
    }
}

/// Whether the C string `k` equals `want` (given with its NUL). Stops at the first
/// difference: no strlen per key (OpenSSL looks parameters up on every init).
///
/// # Safety
/// `k` points to a NUL-terminated string.
#[inline]
unsafe fn same_key(k: *const c_char, want: &[u8]) -> bool {
    for (i, &w) in want.iter().enumerate() {
        // SAFETY: bytes before index i matched `want`, which has no NUL before its end, so
        // the string at `k` has not ended yet: k[i] is within it or is its terminator.
        if unsafe { *k.add(i) } as u8 != w {
            return false;
        }
    }
    true
}

/// One parameter of an array.
#[derive(Clone, Copy)]
pub struct Param(*mut OsslParam);

impl Param {
    fn raw(&self) -> &OsslParam {
        // SAFETY: `Param` is only made by `Params::locate` from a valid array.
        unsafe { &*self.0 }
    }

    fn set_return_size(&self, n: usize) {
        // SAFETY: as in `raw`; OpenSSL passes get-parameter arrays as writable.
        unsafe { (*self.0).return_size = n }
    }

    /// The integer value as i128 (wide enough for every 4/8-byte signed or unsigned value).
    fn get_i128(&self) -> Option<i128> {
        let p = self.raw();
        if p.data.is_null() {
            return None;
        }
        // SAFETY: `data` is non-NULL and `data_size` says how many bytes it holds; we read
        // exactly that many (4 or 8) with unaligned loads.
        unsafe {
            match (p.data_type, p.data_size) {
                (OSSL_PARAM_INTEGER, 4) => Some((p.data as *const i32).read_unaligned() as i128),
                (OSSL_PARAM_INTEGER, 8) => Some((p.data as *const i64).read_unaligned() as i128),
                (OSSL_PARAM_UNSIGNED_INTEGER, 4) => {
                    Some((p.data as *const u32).read_unaligned() as i128)
                }
                (OSSL_PARAM_UNSIGNED_INTEGER, 8) => {
                    Some((p.data as *const u64).read_unaligned() as i128)
                }
                (OSSL_PARAM_REAL, 8) => {
                    let d = (p.data as *const f64).read_unaligned();
                    // OpenSSL accepts a double only if it is an exact integer in range.
                    if d.fract() == 0.0 && d.abs() < 1.8e19 {
                        Some(d as i128)
                    } else {
                        None
                    }
                }
                _ => None,
            }
        }
    }

    /// `OSSL_PARAM_get_uint`.
    pub fn get_uint(&self) -> Option<u32> {
        self.get_i128().and_then(|v| u32::try_from(v).ok())
    }

    /// `OSSL_PARAM_get_size_t`.
    pub fn get_size_t(&self) -> Option<usize> {
        self.get_i128().and_then(|v| usize::try_from(v).ok())
    }

    /// `OSSL_PARAM_get_int`.
    #[allow(dead_code)]
    pub fn get_int(&self) -> Option<i32> {
        self.get_i128().and_then(|v| i32::try_from(v).ok())
    }

    /// Writes an integer into whichever integer type and width the caller's parameter has.
    /// `min_size` is what OpenSSL reports as `return_size` for a size query (NULL data).
    fn set_integer(&self, v: i128, min_size: usize) -> bool {
        let p = *self.raw();
        self.set_return_size(0);
        let (signed, unsigned) = (
            p.data_type == OSSL_PARAM_INTEGER,
            p.data_type == OSSL_PARAM_UNSIGNED_INTEGER,
        );
        if p.data_type == OSSL_PARAM_REAL {
            self.set_return_size(8);
            if p.data.is_null() {
                return true;
            }
            if p.data_size != 8 {
                return false;
            }
            // SAFETY: non-NULL, 8 bytes by `data_size`.
            unsafe { (p.data as *mut f64).write_unaligned(v as f64) };
            return true;
        }
        if !signed && !unsigned {
            return false;
        }
        self.set_return_size(min_size);
        if p.data.is_null() {
            return true;
        }
        // SAFETY: `data` is non-NULL and holds `data_size` bytes; we write exactly 4 or 8.
        unsafe {
            match (signed, p.data_size) {
                (true, 4) => match i32::try_from(v) {
                    Ok(x) => (p.data as *mut i32).write_unaligned(x),
                    Err(_) => return false,
                },
                (true, 8) => match i64::try_from(v) {
                    Ok(x) => (p.data as *mut i64).write_unaligned(x),
                    Err(_) => return false,
                },
                (false, 4) => match u32::try_from(v) {
                    Ok(x) => (p.data as *mut u32).write_unaligned(x),
                    Err(_) => return false,
                },
                (false, 8) => match u64::try_from(v) {
                    Ok(x) => (p.data as *mut u64).write_unaligned(x),
                    Err(_) => return false,
                },
                _ => return false,
            }
        }
        self.set_return_size(p.data_size);
        true
    }

    /// `OSSL_PARAM_set_uint`.
    pub fn set_uint(&self, v: u32) -> bool {
        self.set_integer(v as i128, 4)
    }

    /// `OSSL_PARAM_set_int`.
    pub fn set_int(&self, v: i32) -> bool {
        self.set_integer(v as i128, 4)
    }

    /// `OSSL_PARAM_set_size_t`.
    pub fn set_size_t(&self, v: usize) -> bool {
        self.set_integer(v as i128, core::mem::size_of::<usize>())
    }

    /// `OSSL_PARAM_set_octet_string`: copies `data` into the caller's buffer.
    pub fn set_octets(&self, data: &[u8]) -> bool {
        let p = *self.raw();
        self.set_return_size(0);
        if p.data_type != OSSL_PARAM_OCTET_STRING {
            return false;
        }
        self.set_return_size(data.len());
        if p.data.is_null() {
            return true;
        }
        if p.data_size < data.len() {
            return false;
        }
        // SAFETY: the caller's buffer holds `data_size >= data.len()` bytes; ours is a distinct
        // provider-owned buffer (OpenSSL never hands us a pointer into our own context here).
        unsafe { core::ptr::copy(data.as_ptr(), p.data as *mut u8, data.len()) };
        true
    }

    /// `OSSL_PARAM_set_octet_ptr`: hands out a pointer to provider-owned bytes (valid while
    /// the context lives; OpenSSL may write through it, as `EVP_CIPHER_CTX_iv_noconst` does).
    pub fn set_octet_ptr(&self, ptr: *const u8, len: usize) -> bool {
        let p = *self.raw();
        self.set_return_size(0);
        if p.data_type != OSSL_PARAM_OCTET_PTR {
            return false;
        }
        self.set_return_size(len);
        if p.data.is_null() {
            return true;
        }
        // SAFETY: for an OCTET_PTR parameter `data` points to a `void *` slot.
        unsafe { (p.data as *mut *const u8).write_unaligned(ptr) };
        true
    }

    /// What OpenSSL's ciphers do for "iv" and "updated-iv": a pointer if the caller asked for
    /// one, else a copy.
    pub fn set_octets_or_ptr(&self, ptr: *const u8, len: usize) -> bool {
        if self.raw().data_type == OSSL_PARAM_OCTET_PTR {
            self.set_octet_ptr(ptr, len)
        } else {
            // SAFETY: `ptr` points to `len` provider-owned bytes (a context field).
            self.set_octets(unsafe { core::slice::from_raw_parts(ptr, len) })
        }
    }

    /// `OSSL_PARAM_set_utf8_string`.
    pub fn set_utf8(&self, s: &str) -> bool {
        let p = *self.raw();
        self.set_return_size(0);
        if p.data_type != OSSL_PARAM_UTF8_STRING {
            return false;
        }
        self.set_return_size(s.len());
        if p.data.is_null() {
            return true;
        }
        if p.data_size < s.len() {
            return false;
        }
        // SAFETY: the caller's buffer holds `data_size >= s.len()` bytes.
        unsafe {
            core::ptr::copy_nonoverlapping(s.as_ptr(), p.data as *mut u8, s.len());
            if p.data_size > s.len() {
                *(p.data as *mut u8).add(s.len()) = 0;
            }
        }
        true
    }

    /// `OSSL_PARAM_set_utf8_ptr` (for static strings).
    pub fn set_utf8_ptr(&self, s: &'static CStr) -> bool {
        let p = *self.raw();
        self.set_return_size(0);
        if p.data_type != OSSL_PARAM_UTF8_PTR {
            return false;
        }
        self.set_return_size(s.to_bytes().len());
        if p.data.is_null() {
            return true;
        }
        // SAFETY: for a UTF8_PTR parameter `data` points to a `char *` slot.
        unsafe { (p.data as *mut *const c_char).write_unaligned(s.as_ptr()) };
        true
    }

    /// The caller's `data_size`.
    pub fn data_size(&self) -> usize {
        self.raw().data_size
    }

    /// An OCTET_STRING's data pointer and size, unchecked (OpenSSH passes an IV with size -1).
    pub fn raw_octets(&self) -> Option<(*const u8, usize)> {
        let p = *self.raw();
        (p.data_type == OSSL_PARAM_OCTET_STRING).then_some((p.data as *const u8, p.data_size))
    }

    /// A writable OCTET_STRING buffer (for parameters OpenSSL fills in place, `tlsivgen`).
    pub fn octets_mut<'a>(&self) -> Option<&'a mut [u8]> {
        let p = *self.raw();
        if p.data_type != OSSL_PARAM_OCTET_STRING || p.data.is_null() || p.data_size > 1 << 20 {
            return None;
        }
        // SAFETY: non-NULL, `data_size` writable bytes owned by the caller for the call.
        Some(unsafe { core::slice::from_raw_parts_mut(p.data as *mut u8, p.data_size) })
    }

    /// A readable OCTET_STRING's bytes (borrowed for the duration of the provider call); None
    /// for another type, a NULL buffer, or more than 1 MiB (no parameter of ours is that big).
    pub fn get_octets<'a>(&self) -> Option<&'a [u8]> {
        let p = *self.raw();
        if p.data_type != OSSL_PARAM_OCTET_STRING || p.data_size > 1 << 20 {
            return None;
        }
        if p.data_size == 0 {
            return Some(&[]);
        }
        if p.data.is_null() {
            return None;
        }
        // SAFETY: non-NULL, `data_size` bytes, valid for the call.
        Some(unsafe { core::slice::from_raw_parts(p.data as *const u8, p.data_size) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::ffi::c_void;

    fn param(
        key: &'static CStr,
        t: core::ffi::c_uint,
        data: *mut c_void,
        size: usize,
    ) -> OsslParam {
        OsslParam {
            key: key.as_ptr(),
            data_type: t,
            data,
            data_size: size,
            return_size: OSSL_PARAM_UNMODIFIED,
        }
    }

    #[test]
    fn integers_convert_like_openssl() {
        let mut u4: u32 = 7;
        let mut i8_: i64 = -1;
        let mut u8_: u64 = 1 << 40;
        let mut arr = [
            param(c"a", OSSL_PARAM_UNSIGNED_INTEGER, (&raw mut u4).cast(), 4),
            param(c"b", OSSL_PARAM_INTEGER, (&raw mut i8_).cast(), 8),
            param(c"c", OSSL_PARAM_UNSIGNED_INTEGER, (&raw mut u8_).cast(), 8),
            PARAM_END,
        ];
        // SAFETY: a valid, terminated array.
        let ps = unsafe { Params::new(arr.as_mut_ptr()) };
        assert_eq!(ps.keys(), ["a", "b", "c"]);
        assert_eq!(ps.locate(c"a").unwrap().get_uint(), Some(7));
        assert_eq!(
            ps.locate(c"b").unwrap().get_uint(),
            None,
            "negative into unsigned"
        );
        assert_eq!(ps.locate(c"b").unwrap().get_int(), Some(-1));
        assert_eq!(
            ps.locate(c"c").unwrap().get_uint(),
            None,
            "2^40 does not fit 32 bits"
        );
        assert_eq!(ps.locate(c"c").unwrap().get_size_t(), Some(1 << 40));
        assert!(ps.locate(c"d").is_none());
        assert!(ps.locate(c"c").unwrap().set_size_t(99));
        assert_eq!(u8_, 99);
        assert_eq!(arr[2].return_size, 8);
        assert!(
            Param(&raw mut arr[1]).set_uint(u32::MAX),
            "2^32-1 fits an i64"
        );
        assert_eq!(i8_, u32::MAX as i64);
        assert!(
            !Param(&raw mut arr[0]).set_int(-1),
            "negative into unsigned"
        );
    }

    #[test]
    fn octets_and_size_queries() {
        let mut buf = [0u8; 4];
        let mut arr = [
            param(c"iv", OSSL_PARAM_OCTET_STRING, buf.as_mut_ptr().cast(), 4),
            param(c"q", OSSL_PARAM_OCTET_STRING, core::ptr::null_mut(), 0),
            PARAM_END,
        ];
        // SAFETY: a valid, terminated array.
        let ps = unsafe { Params::new(arr.as_mut_ptr()) };
        assert!(
            !ps.locate(c"iv").unwrap().set_octets(&[1, 2, 3, 4, 5]),
            "too small"
        );
        assert!(ps.locate(c"iv").unwrap().set_octets(&[1, 2, 3]));
        assert_eq!(buf[..3], [1, 2, 3]);
        assert!(ps.locate(c"q").unwrap().set_octets(&[0; 16]));
        assert_eq!(arr[1].return_size, 16);
        // SAFETY: NULL is an empty array.
        assert!(unsafe { Params::new(core::ptr::null()) }.is_empty());
    }
}

//! Bytes-like arguments without copies, under the abi3 (CPython 3.9+) stable ABI.
//!
//! `bytes` is read directly (immutable; our reference keeps it alive, so it can be read with the
//! GIL released). Every other object goes through the buffer protocol, `PyObject_GetBuffer`
//! with `PyBUF_SIMPLE` (read) or `PyBUF_WRITABLE` (write): the exporter hands out one
//! contiguous byte range or refuses, and while the view is held it cannot resize or free the
//! memory (a `bytearray` with an export raises `BufferError` on resize), so the range stays
//! valid while the GIL is released.
//!
//! IMPLEMENTATION NOTE: `PyObject_GetBuffer`, `PyBuffer_Release` and the `Py_buffer` struct
//! joined the limited API in 3.11, so pyo3 hides them from abi3-py39 builds; they are exported
//! by every CPython 3.x with this layout (unchanged since 3.3), so we declare them here. On
//! Linux and macOS an extension resolves them from the interpreter at import time. (Windows'
//! `python3.dll` of 3.9/3.10 may not forward them: untested there.)
//!
//! The views are raw pointers. A Python thread may write into a buffer we are reading or
//! writing (another thread holding the same bytearray): the bytes are then garbage, as with
//! any C extension, but memory stays valid because the export pins it.

use std::ffi::{c_char, c_int, c_void};
use std::ptr;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// `Py_buffer` (Include/pybuffer.h).
#[repr(C)]
struct RawView {
    buf: *mut c_void,
    obj: *mut ffi::PyObject,
    len: ffi::Py_ssize_t,
    itemsize: ffi::Py_ssize_t,
    readonly: c_int,
    ndim: c_int,
    format: *mut c_char,
    shape: *mut ffi::Py_ssize_t,
    strides: *mut ffi::Py_ssize_t,
    suboffsets: *mut ffi::Py_ssize_t,
    internal: *mut c_void,
}

const PYBUF_SIMPLE: c_int = 0;
const PYBUF_WRITABLE: c_int = 0x0001;

unsafe extern "C" {
    fn PyObject_GetBuffer(obj: *mut ffi::PyObject, view: *mut RawView, flags: c_int) -> c_int;
    fn PyBuffer_Release(view: *mut RawView);
}

/// A held buffer view, released on drop (with the GIL: views never leave the calling thread).
pub struct View {
    raw: Box<RawView>,
}

impl View {
    fn get(obj: &Bound<'_, PyAny>, flags: c_int) -> PyResult<View> {
        let mut raw = Box::new(RawView {
            buf: ptr::null_mut(),
            obj: ptr::null_mut(),
            len: 0,
            itemsize: 0,
            readonly: 0,
            ndim: 0,
            format: ptr::null_mut(),
            shape: ptr::null_mut(),
            strides: ptr::null_mut(),
            suboffsets: ptr::null_mut(),
            internal: ptr::null_mut(),
        });
        // SAFETY: `obj` is a live object (we hold the GIL and a reference); `raw` is a valid,
        // writable Py_buffer. On failure the exporter sets an exception and leaves nothing to
        // release.
        let rc = unsafe { PyObject_GetBuffer(obj.as_ptr(), &mut *raw, flags) };
        if rc != 0 {
            return Err(PyErr::fetch(obj.py()));
        }
        Ok(View { raw })
    }

    fn len(&self) -> usize {
        self.raw.len as usize
    }
}

impl Drop for View {
    fn drop(&mut self) {
        // SAFETY: the view was filled by a successful PyObject_GetBuffer and is released once.
        // The GIL is held: `View` is neither Send nor handed to a GIL-free closure.
        unsafe { PyBuffer_Release(&mut *self.raw) }
    }
}

/// What kind of object a message should name ("got str").
fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "object".into())
}

/// A read-only byte range borrowed from a Python object.
pub enum In<'py> {
    Bytes(Bound<'py, PyBytes>),
    View(View),
}

impl<'py> In<'py> {
    /// Any bytes-like object (bytes, bytearray, memoryview, array.array, numpy array, mmap...).
    pub fn new(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<In<'py>> {
        if let Ok(b) = obj.cast_exact::<PyBytes>() {
            return Ok(In::Bytes(b.clone()));
        }
        View::get(obj, PYBUF_SIMPLE)
            .map(In::View)
            .map_err(|e| buffer_error(obj, what, e, false))
    }

    pub fn len(&self) -> usize {
        match self {
            In::Bytes(b) => b.as_bytes().len(),
            In::View(v) => v.len(),
        }
    }

    /// The bytes. Valid while `self` lives, with or without the GIL (see the module docs).
    pub fn as_slice(&self) -> &[u8] {
        match self {
            In::Bytes(b) => b.as_bytes(),
            In::View(v) if v.len() == 0 => &[],
            // SAFETY: a successful simple view is `len` contiguous bytes at `buf`, pinned until
            // release (module docs).
            In::View(v) => unsafe { std::slice::from_raw_parts(v.raw.buf as *const u8, v.len()) },
        }
    }
}

/// A writable byte range borrowed from a Python object.
pub struct Out {
    view: View,
}

impl Out {
    /// Any writable contiguous buffer (bytearray, memoryview of one, numpy array, mmap...).
    pub fn new(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Out> {
        View::get(obj, PYBUF_WRITABLE)
            .map(|view| Out { view })
            .map_err(|e| buffer_error(obj, what, e, true))
    }

    /// The bytes, writable. See [`In::as_slice`].
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        if self.view.len() == 0 {
            return &mut [];
        }
        // SAFETY: a successful writable simple view is `len` contiguous writable bytes at
        // `buf`, pinned until release; `&mut self` makes this the only slice we hand out.
        unsafe { std::slice::from_raw_parts_mut(self.view.raw.buf as *mut u8, self.view.len()) }
    }
}

/// Turns an exporter's refusal into a TypeError (not a buffer, or read-only where writing is
/// needed) or ValueError (a buffer of the wrong shape, e.g. non-contiguous) naming the argument.
fn buffer_error(obj: &Bound<'_, PyAny>, what: &str, err: PyErr, writable: bool) -> PyErr {
    let py = obj.py();
    let is_buffer = View::get(obj, PYBUF_SIMPLE).is_ok();
    if !is_buffer {
        if err.is_instance_of::<PyTypeError>(py) {
            let hint = if obj.is_instance_of::<pyo3::types::PyString>() {
                " (encode str to bytes first)"
            } else {
                ""
            };
            return PyTypeError::new_err(format!(
                "{what}: expected a bytes-like object (bytes, bytearray, memoryview, numpy \
                 array), got {}{hint}",
                type_name(obj)
            ));
        }
        return PyValueError::new_err(format!(
            "{what}: the buffer must be one contiguous block of memory ({})",
            err.value(py)
        ));
    }
    if writable {
        // Readable but not writable with PyBUF_WRITABLE.
        let ro = View::get(obj, PYBUF_SIMPLE)
            .map(|v| v.raw.readonly != 0)
            .unwrap_or(false);
        if ro {
            return PyTypeError::new_err(format!(
                "{what}: a writable buffer is required (bytearray, memoryview of one, numpy \
                 array), got read-only {}",
                type_name(obj)
            ));
        }
    }
    PyValueError::new_err(format!("{what}: unusable buffer ({})", err.value(py)))
}

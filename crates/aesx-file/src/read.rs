//! [`Decryptor`]: a `std::io::Read` adapter that reads an aesx file.

use std::io::{self, Read};
use std::ops::Range;

use crate::Options;
use crate::batch::{BatchBuf, fill, open_records};
use crate::chunk::ChunkCipher;
use crate::error::{Error, ErrorKind};
use crate::header::{HEADER_LEN, Header, MAGIC, Secret, TAG_LEN};

/// Reads and parses the header at the start of `r` (exactly [`HEADER_LEN`] bytes are
/// consumed). Format errors come back as `io::Error`s of kind `InvalidData` carrying an
/// [`Error`] ([`crate::format_error`] gets it out).
pub fn read_header(r: &mut impl Read) -> io::Result<Header> {
    let mut b = [0u8; HEADER_LEN];
    let n = fill(r, &mut b)?;
    if n == 0 {
        return Err(Error::new(ErrorKind::EmptyInput).into());
    }
    if b[..n.min(8)] != MAGIC[..n.min(8)] {
        return Err(Error::new(ErrorKind::NotAesx).into());
    }
    if n < HEADER_LEN {
        return Err(Error::new(ErrorKind::HeaderTruncated).into());
    }
    Ok(Header::parse(&b)?)
}

/// Decrypts an aesx file read from `R`; reads give plaintext that has been authenticated.
///
/// Chunks are opened a batch (4 MiB) at a time on [`Options::threads`] threads; a read
/// returns plaintext only from chunks whose tag verified. A read fails with an
/// `InvalidData` error carrying an [`Error`] (what was wrong, and which chunk) when the file
/// was modified, truncated or extended; plaintext returned before that came from the chunks
/// that precede the bad one. The end of the plaintext (`Ok(0)`) is reported only after the
/// final chunk has verified, so a truncated file is never mistaken for a short one.
pub struct Decryptor<R: Read> {
    inner: R,
    header: Header,
    cipher: ChunkCipher,
    buf: BatchBuf,
    /// Records the buffer holds: 1 at first, doubled after every full batch up to a whole
    /// batch, so a small file costs a small buffer.
    records: usize,
    carry: Option<u8>,
    plain: Vec<Range<usize>>,
    at: usize,
    next: u64,
    complete: bool,
    failed: Option<Error>,
}

impl<R: Read> Decryptor<R> {
    /// Reads the header, derives the keys from `secret` (a passphrase runs Argon2id with the
    /// header's parameters, after checking them against the limits) and authenticates the
    /// header.
    pub fn new(mut inner: R, secret: &Secret, opts: &Options) -> io::Result<Decryptor<R>> {
        let header = read_header(&mut inner)?;
        Self::with_header(inner, header, secret, opts)
    }

    /// As [`Decryptor::new`] with the header already read by [`read_header`] (so a caller
    /// can see the key source before asking for a passphrase).
    pub fn with_header(
        inner: R,
        header: Header,
        secret: &Secret,
        opts: &Options,
    ) -> io::Result<Decryptor<R>> {
        let keys = header.unlock(secret, opts.backend)?;
        let cipher = ChunkCipher::new(keys, header.chunk_size(), opts.threads);
        Ok(Decryptor {
            inner,
            header,
            cipher,
            buf: BatchBuf::new(0),
            records: 0,
            carry: None,
            plain: Vec::new(),
            at: 0,
            next: 0,
            complete: false,
            failed: None,
        })
    }

    /// The file's header (authenticated).
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// Reads and opens the next batch.
    fn load(&mut self) -> io::Result<()> {
        let max = self.cipher.batch_chunks();
        if self.records < max {
            self.records = (self.records * 2).clamp(1, max);
            // A new buffer; the old one is wiped as it goes.
            self.buf = BatchBuf::new(self.records * (self.cipher.chunk() + TAG_LEN));
        }
        let more = self.buf.read(&mut self.inner, &mut self.carry)?;
        let (opened, err) = open_records(&self.cipher, self.buf.data_mut(), more, self.next);
        self.next += opened.chunks;
        self.plain = opened.plain;
        self.at = 0;
        self.complete = opened.complete;
        self.failed = err;
        Ok(())
    }
}

impl<R: Read> Read for Decryptor<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            // Drop used-up ranges.
            while self.at < self.plain.len() && self.plain[self.at].is_empty() {
                self.at += 1;
            }
            if let Some(r) = self.plain.get_mut(self.at) {
                let n = out.len().min(r.len());
                out[..n].copy_from_slice(&self.buf.data()[r.start..r.start + n]);
                r.start += n;
                return Ok(n);
            }
            if let Some(e) = &self.failed {
                return Err(e.clone().into());
            }
            if self.complete {
                return Ok(0);
            }
            if out.is_empty() {
                return Ok(0);
            }
            self.load()?;
        }
    }
}

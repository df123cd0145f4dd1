//! [`Encryptor`]: a `std::io::Write` adapter that writes an aesx file.

use std::io::{self, Write};

use zeroize::Zeroizing;

use crate::Options;
use crate::batch::write_sealed;
use crate::chunk::ChunkCipher;
use crate::error::{Error, ErrorKind};
use crate::header::{Header, Secret};

/// Encrypts everything written to it into an aesx file on `W`.
///
/// The header is written by [`Encryptor::new`]. Plaintext is buffered a batch at a time
/// (4 MiB), sealed on [`Options::threads`] threads and written out. **Call
/// [`Encryptor::finish`]**: it seals the final chunk. Without it the file has no final chunk
/// and every reader reports it as truncated. [`Write::flush`] flushes what is sealed; it
/// cannot seal a partial chunk early (the chunk layout is fixed by the format).
///
/// ```
/// use std::io::{Read, Write};
/// use aesx_file::{Decryptor, Encryptor, Options, Secret};
///
/// let secret = Secret::key(&[7u8; 32]);
/// let mut enc = Encryptor::new(Vec::new(), &secret, &Options::default())?;
/// enc.write_all(b"hello")?;
/// let file = enc.finish()?;
///
/// let mut dec = Decryptor::new(&file[..], &secret, &Options::default())?;
/// let mut plain = Vec::new();
/// dec.read_to_end(&mut plain)?;
/// assert_eq!(plain, b"hello");
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Encryptor<W: Write> {
    inner: W,
    cipher: ChunkCipher,
    buf: Zeroizing<Vec<u8>>,
    cap: usize,
    next: u64,
    failed: bool,
}

impl<W: Write> Encryptor<W> {
    /// Writes the header for `secret` (a passphrase runs Argon2id with `opts.argon2` here)
    /// and returns the encryptor.
    pub fn new(inner: W, secret: &Secret, opts: &Options) -> io::Result<Encryptor<W>> {
        Self::with_salts(inner, secret, opts, None)
    }

    pub(crate) fn with_salts(
        mut inner: W,
        secret: &Secret,
        opts: &Options,
        salts: Option<([u8; 32], [u8; 16])>,
    ) -> io::Result<Encryptor<W>> {
        let (header, keys) = Header::create(
            secret,
            opts.aead,
            opts.chunk_log2,
            opts.argon2,
            opts.backend,
            salts,
        )?;
        inner.write_all(&header.to_bytes())?;
        let cipher = ChunkCipher::new(keys, header.chunk_size(), opts.threads);
        let cap = cipher.batch_chunks() * cipher.chunk();
        Ok(Encryptor {
            inner,
            cipher,
            buf: Zeroizing::new(Vec::new()),
            cap,
            next: 0,
            failed: false,
        })
    }

    /// Seals the buffered plaintext (`last`: it ends the stream) and writes it.
    fn seal_and_write(&mut self, last: bool) -> io::Result<()> {
        if self.failed {
            return Err(Error::new(ErrorKind::Poisoned).into());
        }
        self.failed = true;
        let tags = self.cipher.seal_batch(self.next, &mut self.buf, last)?;
        write_sealed(&mut self.inner, &self.buf, self.cipher.chunk(), &tags)?;
        self.next += tags.len() as u64;
        self.buf.clear();
        self.failed = false;
        Ok(())
    }

    /// Seals the final chunk, flushes, and returns the inner writer.
    pub fn finish(mut self) -> io::Result<W> {
        self.seal_and_write(true)?;
        self.inner.flush()?;
        Ok(self.inner)
    }

    /// The inner writer.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }
}

impl<W: Write> Write for Encryptor<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        if data.is_empty() {
            return Ok(0);
        }
        // A full batch is sealed only once more data arrives: its last chunk is then known
        // not to be the final one.
        if self.buf.len() == self.cap {
            self.seal_and_write(false)?;
        }
        let n = data.len().min(self.cap - self.buf.len());
        let want = self.buf.len() + n;
        if self.buf.capacity() < want {
            // Grow by doubling (from one chunk) up to the whole batch, as the Decryptor does:
            // a small file neither allocates nor wipes a 4 MiB batch. Always into a new
            // vector (a Zeroizing vector must not reallocate while it holds plaintext: the
            // old allocation would be freed unwiped); the old one is wiped as it drops.
            let grown = want
                .max(2 * self.buf.capacity())
                .max(self.cipher.chunk())
                .min(self.cap);
            let mut v = Zeroizing::new(Vec::with_capacity(grown));
            v.extend_from_slice(&self.buf);
            self.buf = v;
        }
        self.buf.extend_from_slice(&data[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

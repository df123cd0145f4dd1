//! What the adapters and the pipeline share: reading a batch with one byte of look-ahead,
//! cutting it into records, and writing sealed or opened chunks with one vectored write.

use std::io::{self, IoSlice, Read, Write};
use std::ops::Range;

use crate::chunk::{ChunkCipher, Record};
use crate::error::{Error, ErrorKind};
use crate::header::TAG_LEN;

/// Fills `buf` from `r`; returns the bytes read (fewer only at the end of the input).
pub(crate) fn fill(r: &mut (impl Read + ?Sized), buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads the next batch into `buf` (of length `cap + 1`): `carry` (the look-ahead byte of the
/// previous batch) first, then as much as fits. Returns (bytes of this batch, whether more
/// input follows); when more follows, `carry` holds the look-ahead byte, which is not part of
/// this batch.
pub(crate) fn read_batch(
    r: &mut (impl Read + ?Sized),
    buf: &mut [u8],
    carry: &mut Option<u8>,
) -> io::Result<(usize, bool)> {
    let mut start = 0;
    if let Some(c) = carry.take() {
        buf[0] = c;
        start = 1;
    }
    let n = start + fill(r, &mut buf[start..])?;
    if n == buf.len() {
        *carry = Some(buf[n - 1]);
        Ok((n - 1, true))
    } else {
        Ok((n, false))
    }
}

/// Writes all of `bufs` (std's `write_all_vectored` is not stable yet).
pub(crate) fn write_all_vectored(
    w: &mut (impl Write + ?Sized),
    mut bufs: &mut [IoSlice<'_>],
) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "failed to write whole buffer",
                ));
            }
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Writes sealed chunks: each chunk of `data` followed by its tag.
pub(crate) fn write_sealed(
    w: &mut (impl Write + ?Sized),
    data: &[u8],
    chunk: usize,
    tags: &[[u8; TAG_LEN]],
) -> io::Result<()> {
    let mut slices = Vec::with_capacity(2 * tags.len());
    let mut chunks = data.chunks(chunk);
    for t in tags {
        // An empty stream has one empty chunk and no data.
        slices.push(IoSlice::new(chunks.next().unwrap_or(&[])));
        slices.push(IoSlice::new(t));
    }
    write_all_vectored(w, &mut slices)
}

/// Writes the given ranges of `buf`.
pub(crate) fn write_ranges(
    w: &mut (impl Write + ?Sized),
    buf: &[u8],
    ranges: &[Range<usize>],
) -> io::Result<()> {
    let mut slices: Vec<IoSlice<'_>> = ranges
        .iter()
        .filter(|r| !r.is_empty())
        .map(|r| IoSlice::new(&buf[r.clone()]))
        .collect();
    write_all_vectored(w, &mut slices)
}

/// What opening one batch of records gave.
pub(crate) struct Opened {
    /// Where the authentic plaintext is in the buffer, in order.
    pub plain: Vec<Range<usize>>,
    /// Records that opened.
    pub chunks: u64,
    /// Whether the final chunk was among them (the stream is complete).
    pub complete: bool,
}

/// Opens the records in `buf[..len]`, the first having index `first`. `more` = input follows
/// this batch, so its last record is a middle one. On failure, returns the plaintext ranges of
/// the records before the failing one (they are authentic) with the error.
pub(crate) fn open_records(
    cipher: &ChunkCipher,
    buf: &mut [u8],
    len: usize,
    more: bool,
    first: u64,
) -> (Opened, Option<Error>) {
    let rec = cipher.chunk() + TAG_LEN;
    let mut ranges = Vec::new();
    let mut records = Vec::new();
    let mut short = None;
    let body = &mut buf[..len];
    let count = body.len().div_ceil(rec);
    if count == 0 {
        // Nothing after the header (or after the previous batch, which cannot happen: a
        // batch is only followed by another when its look-ahead byte existed).
        let e = Error::new(ErrorKind::TruncatedRecord(first));
        return (
            Opened {
                plain: ranges,
                chunks: 0,
                complete: false,
            },
            Some(e),
        );
    }
    let mut offset = 0;
    for (i, r) in body.chunks_mut(rec).enumerate() {
        let index = first + i as u64;
        let last = !more && i + 1 == count;
        if r.len() < TAG_LEN {
            short = Some(index);
            break;
        }
        let rlen = r.len();
        let (data, tag) = r.split_at_mut(rlen - TAG_LEN);
        ranges.push(offset..offset + data.len());
        offset += rlen;
        records.push(Record {
            index,
            data,
            tag,
            last,
        });
    }
    let empty_final = records
        .last()
        .is_some_and(|r| r.last && r.data.is_empty() && r.index > 0);
    let result = cipher.open_batch(&mut records);
    let n = records.len();
    drop(records);
    let (good, err) = match result {
        Ok(()) => match short {
            Some(i) => (n, Some(Error::new(ErrorKind::TruncatedRecord(i)))),
            // Authentic, but no conforming writer ends with an empty chunk after others.
            None if empty_final => (
                n - 1,
                Some(Error::new(ErrorKind::EmptyFinalChunk(first + n as u64 - 1))),
            ),
            None => (n, None),
        },
        Err((k, e)) => (k, Some(e)),
    };
    ranges.truncate(good);
    let complete = err.is_none() && !more;
    (
        Opened {
            plain: ranges,
            chunks: good as u64,
            complete,
        },
        err,
    )
}

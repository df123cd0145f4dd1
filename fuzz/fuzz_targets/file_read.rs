//! The aesx file format's readers on hostile files: files that aesx-file wrote (1 KiB chunks)
//! then edited (bits flipped, truncated, extended, chunks moved, dropped or duplicated, header
//! fields set), or arbitrary bytes. Three readers run on each: the `Decryptor` Read adapter
//! (read in arbitrary amounts), `decrypt_stream` (1 to 3 threads, the input read in arbitrary
//! pieces, its size told or not) and the `aesx decrypt` core (`aesx_cli::fileformat::
//! read_header` + `decrypt_body`). Checked: no panic; the three agree on success and on the
//! error; an intact file decrypts to its plaintext, an edited one is refused; with the wrong
//! key, refused; and whatever any reader released is whole chunks of the plaintext from its
//! start.
#![no_main]

use std::io::Read;

use aesx_file::{Decryptor, ErrorKind, Secret, StreamError, format_error};
use aesx_fuzz::{
    ChoppyReader, FILE_KEY, Result, Unstructured, WRONG_KEY, backends, file_case, file_options,
    pieces,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = run(data);
});

/// A reader's verdict: the bytes it released, and `None` or the error kind.
type Verdict = (Vec<u8>, Option<ErrorKind>);

fn kind_of(e: &std::io::Error) -> ErrorKind {
    format_error(e)
        .unwrap_or_else(|| panic!("not a format error: {e}"))
        .kind()
        .clone()
}

fn stream_kind(e: StreamError) -> ErrorKind {
    match e {
        StreamError::Format(e) => {
            assert!(!e.to_string().is_empty());
            e.kind().clone()
        }
        e => panic!("not a format error: {e}"),
    }
}

fn run(data: &[u8]) -> Result<()> {
    let mut u = Unstructured::new(data);
    let case = file_case(&mut u)?;
    let threads = u.int_in_range(1..=3usize)?;
    let backend = *u.choose(backends())?;
    let wrong = u.ratio(1u8, 16u8)?;
    // Mostly told, as for a regular file (small batches; an untold size costs 4 MiB buffers).
    let tell_size = !u.ratio(1u8, 8u8)?;
    let read_len = u.int_in_range(1..=3000usize)?;
    let cuts = pieces(&mut u, case.edited.len())?;
    let secret = Secret::key(if wrong { &WRONG_KEY } else { &FILE_KEY });
    let opts = file_options(threads, backend);
    let input = || ChoppyReader::new(case.edited.clone(), cuts.clone());
    let size = tell_size.then_some(case.edited.len() as u64);

    // The Read adapter, read `read_len` bytes at a time.
    let mut out = Vec::new();
    let adapter: Verdict = match Decryptor::new(input(), &secret, &opts) {
        Err(e) => (out, Some(kind_of(&e))),
        Ok(mut d) => {
            let mut buf = vec![0u8; read_len];
            loop {
                match d.read(&mut buf) {
                    Ok(0) => break (out, None),
                    Ok(n) => out.extend_from_slice(&buf[..n]),
                    Err(e) => break (out, Some(kind_of(&e))),
                }
            }
        }
    };

    // The pipelined stream.
    let mut out = Vec::new();
    let stream: Verdict =
        match aesx_file::decrypt_stream(input(), &mut out, &secret, &opts, size, &|_| {}) {
            Ok(n) => {
                assert_eq!(n as usize, out.len(), "stream: returned length");
                (out, None)
            }
            Err(e) => (out, Some(stream_kind(e))),
        };

    // The `aesx decrypt` core.
    let mut out = Vec::new();
    let mut reader: Box<dyn Read + Send> = Box::new(input());
    let cli: Verdict = match aesx_cli::fileformat::read_header(&mut reader, "f") {
        Err(e) => {
            assert!(e.to_string().starts_with("SRC f"), "{e}");
            (
                out,
                Some(
                    stream
                        .1
                        .clone()
                        .expect("the CLI refused a header the stream took"),
                ),
            )
        }
        Ok(header) => {
            let r = aesx_cli::fileformat::decrypt_body(
                reader,
                header,
                &secret,
                &mut out,
                &opts,
                size,
                &|_| {},
            );
            match r {
                Ok(_) => (out, None),
                Err(e) => (out, Some(stream_kind(e))),
            }
        }
    };

    assert_eq!(adapter.1, stream.1, "adapter and stream disagree");
    assert_eq!(cli, stream, "the aesx decrypt core and the stream disagree");
    case.check_released(&adapter.0, "adapter");
    case.check_released(&stream.0, "stream");
    if case.intact() && !wrong {
        assert!(stream.1.is_none(), "intact file refused: {:?}", stream.1);
        assert!(stream.0 == case.plain && adapter.0 == case.plain);
    } else {
        assert!(stream.1.is_some(), "edited file (or wrong key) accepted");
    }
    if case.intact() && wrong {
        assert_eq!(stream.1, Some(ErrorKind::WrongKey));
    }
    Ok(())
}

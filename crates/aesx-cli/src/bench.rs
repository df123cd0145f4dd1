//! `aesx bench`: aesx on every backend against OpenSSL and RustCrypto, in one interleaved run.
//!
//! Layout: [`ops`] lists what can be measured, [`subjects`] the implementations of each op,
//! [`timing`] the trial engine, [`report`] the table, JSON and perf files, [`plot`] the PNG.

mod ops;
#[cfg(feature = "bench-plot")]
mod plot;
mod report;
mod subjects;
mod timing;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use aesx::Backend;
use aesx::hash::fugue::FugueBackend;
use anyhow::{Result, bail};
use clap::Args;

use crate::hash::{fugue_available, fugue_names};
use crate::{BackendChoice, all_names, parse_backend};
pub use ops::Op;

pub const AFTER_HELP: &str = "\
Lists are comma-separated. Sizes are bytes with optional K (KiB), M (MiB) or G (GiB) suffix,
from 16 B to 1 GiB; cbc/ecb sizes must be multiples of 16. Ops: ctr, ecb-enc, ecb-dec, cbc-enc,
cbc-dec, keysetup, and only on request: gcm-enc and gcm-dec (AES-GCM seal, and open with the
tag checked, in place, 12-byte nonce, 13 bytes of AAD; OpenSSL, RustCrypto and ring beside),
ctr-mt (aesx CTR on every core through Aes::ctr_xor_at_par, which stays on one thread below
1 MiB; single-threaded OpenSSL beside it as the reference; not in the perf files),
keysetup-variants (the AES-NI key-expansion variants), fugue224, fugue256, fugue384, fugue512
(Fugue hashing of one message per call, shown as the backend; no key, so --keys does not apply
and key_bits is 0; no peers).

--backends takes AES backends (soft, vpaes, aesni, vaes256, vaes512) and Fugue backends (soft,
vpaes, aesni, gfni) in one list: the AES ops run on the AES ones, the Fugue ops on the Fugue ones
(soft, vpaes and aesni are both), or on every Fugue backend this CPU runs if the list names none.

Method: every call processes one whole message in place on a pre-expanded key (CTR/CBC start
a fresh stream from the IV each call, for all three implementations). Trials of about 1-2 ms
(small messages repeated inside a trial) are interleaved across implementations, and the best
trial is kept. GB/s = 10^9 bytes per second. keysetup reports ns per key (both schedules).

Output: a table of GB/s and the geometric mean over sizes of each backend's speedup over
`soft` and over OpenSSL. --json prints one object per measurement instead:
  {\"impl\":\"aesx\",\"backend\":\"vaes512\",\"op\":\"ctr\",\"key_bits\":128,\"size\":16384,\"gbps\":21.7}
(keysetup: \"size\":0 and \"ns\" instead of \"gbps\"; peers have \"backend\":\"-\").
--out DIR writes results.json, throughput.png (GB/s against size for --plot-op at the first
key size) and perf-<impl>-<backend>.txt (peers: perf-openssl-default.txt) in the PuTTY-AES-NI
format: lines `code keylen blocklen time` with code 0 = CBC encrypt, 1 = CBC decrypt,
2 = SDCTR (3 = ECB encrypt, 4 = ECB decrypt: aesx extensions), keylen in bits, blocklen = message
size in bytes, time = best time for one message in nanoseconds.";

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// ops ctr, ecb-enc, cbc-dec, keysetup at 16 B, 16 KiB, 1 MiB, AES-128 and AES-256 (< 60 s).
    #[arg(long)]
    quick: bool,
    /// One JSON object per measurement on stdout, no table.
    #[arg(long)]
    json: bool,
    /// Write results.json, throughput.png and perf-*.txt into DIR (created if missing).
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Message sizes, e.g. 16,1K,16K,1M [default: 16,64,256,1K,4K,16K,64K,256K,1M,4M,16M,256M].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    sizes: Option<Vec<String>>,
    /// Operations [default: ctr,ecb-enc,ecb-dec,cbc-enc,cbc-dec,keysetup].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    ops: Option<Vec<String>>,
    /// aesx backends to measure [default: --backend if given, else every available one].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    backends: Option<Vec<String>>,
    /// Key sizes in bits [default: 128,192,256].
    #[arg(long, value_delimiter = ',', value_name = "LIST")]
    keys: Option<Vec<u32>>,
    /// The op drawn in throughput.png.
    #[arg(long, value_name = "OP", default_value = "ctr")]
    plot_op: String,
    /// Trials per implementation and case [default: 40], the time budget grown to fit them.
    /// More trials find a quiet moment on a noisy (shared, virtual) machine: the best trial
    /// is kept.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=100_000))]
    trials: Option<u32>,
}

/// One measurement.
#[derive(Clone, Debug)]
pub struct Record {
    pub imp: &'static str,
    pub backend: String,
    pub op: Op,
    pub key_bits: u32,
    pub size: usize,
    /// Best time for one call (one message, or one key), ns.
    pub ns: f64,
}

impl Record {
    pub fn gbps(&self) -> f64 {
        self.size as f64 / self.ns
    }
    pub fn label(&self) -> String {
        if self.backend == "-" {
            self.imp.to_string()
        } else {
            format!("{}/{}", self.imp, self.backend)
        }
    }
}

/// Parses `16`, `16K`, `1M`, `1G` (binary multiples).
pub fn parse_size(s: &str) -> Result<usize> {
    let t = s.trim();
    let (num, mul) = match t.char_indices().last() {
        Some((i, c)) if c.eq_ignore_ascii_case(&'k') => (&t[..i], 1usize << 10),
        Some((i, c)) if c.eq_ignore_ascii_case(&'m') => (&t[..i], 1 << 20),
        Some((i, c)) if c.eq_ignore_ascii_case(&'g') => (&t[..i], 1 << 30),
        _ => (t, 1),
    };
    let n: usize = num.trim().parse().map_err(|_| {
        anyhow::anyhow!("--sizes: '{t}' is not a size; use bytes like 16, 16K or 1M")
    })?;
    let n = n
        .checked_mul(mul)
        .filter(|&n| (16..=1 << 30).contains(&n))
        .ok_or_else(|| anyhow::anyhow!("--sizes: '{t}' is out of range; use 16 B to 1G"))?;
    Ok(n)
}

pub fn run(args: BenchArgs, choice: &BackendChoice) -> Result<()> {
    let sizes: Vec<usize> = match (&args.sizes, args.quick) {
        (Some(l), _) => {
            let mut v = l
                .iter()
                .map(|s| parse_size(s))
                .collect::<Result<Vec<_>>>()?;
            v.sort_unstable();
            v.dedup();
            v
        }
        (None, true) => vec![16, 16 << 10, 1 << 20],
        (None, false) => [
            "16", "64", "256", "1K", "4K", "16K", "64K", "256K", "1M", "4M", "16M", "256M",
        ]
        .iter()
        .map(|s| parse_size(s))
        .collect::<Result<_>>()?,
    };
    let ops: Vec<Op> = match (&args.ops, args.quick) {
        (Some(l), _) => l.iter().map(|s| Op::parse(s)).collect::<Result<_>>()?,
        (None, true) => Op::QUICK.to_vec(),
        (None, false) => Op::DEFAULT.to_vec(),
    };
    let keys: Vec<u32> = match (&args.keys, args.quick) {
        (Some(l), _) => l.clone(),
        (None, true) => vec![128, 256],
        (None, false) => vec![128, 192, 256],
    };
    if let Some(k) = keys.iter().find(|k| !matches!(k, 128 | 192 | 256)) {
        bail!("--keys: {k} is not an AES key size; use 128, 192 and/or 256");
    }
    let (backends, fugue_backends) = split_backends(args.backends.as_deref(), &ops)?;
    let backends: Vec<Backend> = match (backends, choice.forced) {
        (Some(l), _) => l,
        (None, Some(b)) => vec![b],
        (None, None) => Backend::available(),
    };
    if ops.iter().any(|o| o.needs_blocks())
        && let Some(s) = sizes.iter().find(|s| *s % 16 != 0)
    {
        bail!("--sizes: {s} is not a multiple of 16, which ecb/cbc need; pick multiples of 16");
    }
    let plot_op = Op::parse(&args.plot_op)?;
    if !subjects::PEERS_BUILT && ops.iter().any(|o| !o.is_keyless()) {
        eprintln!(
            "bench: note: this aesx was built without the OpenSSL and RustCrypto peers (cargo feature bench-peers); measuring aesx only"
        );
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("cannot create --out {}: {e}", dir.display()))?;
    }

    let mut settings = if args.quick {
        timing::Settings::QUICK
    } else {
        timing::Settings::FULL
    };
    if let Some(n) = args.trials {
        settings = settings.with_trials(n as usize);
    }
    let chatty = std::io::stderr().is_terminal();
    let max_size = if ops.iter().all(|o| o.is_keysetup()) {
        0
    } else {
        sizes.iter().copied().max().unwrap_or(16)
    };
    // One shared, warm buffer for everything; 16 spare bytes for OpenSSL's block-mode check.
    let mut buf: Vec<u8> = (0..max_size + 16).map(|i| (i * 131 + 7) as u8).collect();
    let mut records: Vec<Record> = Vec::new();
    let stdout = std::io::stdout();

    for &op in &ops {
        let op_keys: &[u32] = if op.is_keyless() { &[0] } else { &keys };
        for &bits in op_keys {
            let mut subjects = subjects::build(op, bits, &backends, &fugue_backends)?;
            if subjects.is_empty() {
                continue;
            }
            let case_sizes: Vec<usize> = if op.is_keysetup() {
                vec![0]
            } else {
                sizes.clone()
            };
            // ns per byte at the previous size, to skip calls that would take too long.
            let mut rate: Vec<Option<f64>> = vec![None; subjects.len()];
            for &size in &case_sizes {
                let active: Vec<bool> = rate
                    .iter()
                    .map(|r| {
                        r.is_none_or(|r| r * size as f64 <= settings.max_call.as_nanos() as f64)
                    })
                    .collect();
                for (s, _) in subjects.iter().zip(&active).filter(|(_, a)| !**a) {
                    if !args.json {
                        eprintln!(
                            "\rbench: skipping {} for {} at {}: one message would take over {:?}",
                            s.label(),
                            op.case_label(bits),
                            report::size_label(size),
                            settings.max_call
                        );
                    }
                }
                if chatty {
                    eprint!(
                        "\rbench: {} {:>10}   ",
                        op.case_label(bits),
                        report::size_label(size)
                    );
                }
                let ns = timing::measure(&mut subjects, &active, &mut buf, size, &settings);
                for (i, (s, ns)) in subjects.iter().zip(ns).enumerate() {
                    let Some(ns) = ns else {
                        rate[i] = Some(f64::INFINITY);
                        continue;
                    };
                    rate[i] = Some(ns / size.max(1) as f64);
                    let r = Record {
                        imp: s.impl_name(),
                        backend: s.backend(),
                        op,
                        key_bits: bits,
                        size,
                        ns,
                    };
                    if args.json {
                        let mut o = stdout.lock();
                        writeln!(o, "{}", report::json_line(&r))?;
                        o.flush()?;
                    }
                    records.push(r);
                }
            }
        }
    }
    if chatty {
        eprint!("\r{:60}\r", "");
    }
    if !args.json {
        write!(stdout.lock(), "{}", report::tables(&records))?;
    }
    if let Some(dir) = &args.out {
        report::write_files(dir, &records)?;
        let key = if plot_op.is_keyless() {
            0
        } else {
            keys.first().copied().unwrap_or(128)
        };
        #[cfg(feature = "bench-plot")]
        plot::draw(&dir.join("throughput.png"), &records, plot_op, key)?;
        #[cfg(not(feature = "bench-plot"))]
        {
            let _ = (plot_op, key);
            eprintln!(
                "bench: note: throughput.png not drawn: this aesx was built without plotting (cargo feature bench-plot)"
            );
        }
        if !args.json {
            outln!(
                "Wrote results.json, {}perf-*.txt to {}",
                if cfg!(feature = "bench-plot") {
                    "throughput.png and "
                } else {
                    ""
                },
                dir.display()
            )?;
        }
    }
    Ok(())
}

/// Splits `--backends` into the AES backends the AES ops run on (`None`: the list was not
/// given) and the Fugue backends the Fugue ops run on (every available one unless the list
/// names some). A name that is neither is an error, and so is a list with no AES backend when
/// an AES op is asked for; availability is checked only for the kind of op that will use it.
fn split_backends(
    list: Option<&[String]>,
    ops: &[Op],
) -> Result<(Option<Vec<Backend>>, Vec<FugueBackend>)> {
    let Some(list) = list else {
        return Ok((None, FugueBackend::available()));
    };
    let want_aes = ops.iter().any(|o| !o.is_keyless());
    let want_fugue = ops.iter().any(|o| o.is_keyless());
    let (mut aes, mut fugue) = (Vec::new(), Vec::new());
    for name in list {
        let as_aes = name.parse::<Backend>().ok();
        let as_fugue = name.parse::<FugueBackend>().ok();
        if as_aes.is_none() && as_fugue.is_none() {
            bail!(
                "--backends: unknown backend '{}'; use one of {} (AES) or {} (Fugue)",
                name.trim(),
                all_names(),
                fugue_names(&FugueBackend::ALL),
            );
        }
        if want_aes && as_aes.is_some() {
            aes.push(parse_backend(name, "--backends")?);
        }
        if want_fugue && let Some(f) = as_fugue {
            fugue.push(fugue_available(f, "--backends")?);
        }
    }
    if want_aes && aes.is_empty() {
        bail!(
            "--backends: names no AES backend for the AES ops; use one of {}",
            all_names()
        );
    }
    aes.dedup();
    fugue.dedup();
    if fugue.is_empty() {
        fugue = FugueBackend::available();
    }
    Ok((Some(aes), fugue))
}

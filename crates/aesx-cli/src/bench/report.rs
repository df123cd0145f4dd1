//! Turning records into the summary table, JSON lines, results.json and perf files.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Result, anyhow};
use serde_json::json;

use super::{Op, Record};

/// `16 B`, `16 KiB`, `1 MiB`, `0` for keysetup.
pub fn size_label(size: usize) -> String {
    if size == 0 {
        "key".to_string()
    } else if size >= 1 << 30 && size.is_multiple_of(1 << 30) {
        format!("{} GiB", size >> 30)
    } else if size >= 1 << 20 && size.is_multiple_of(1 << 20) {
        format!("{} MiB", size >> 20)
    } else if size >= 1 << 10 && size.is_multiple_of(1 << 10) {
        format!("{} KiB", size >> 10)
    } else {
        format!("{size} B")
    }
}

/// The `--json` line for one record, keys in the documented order.
pub fn json_line(r: &Record) -> String {
    let head = format!(
        "{{\"impl\":\"{}\",\"backend\":\"{}\",\"op\":\"{}\",\"key_bits\":{},\"size\":{}",
        r.imp,
        r.backend,
        r.op.name(),
        r.key_bits,
        r.size
    );
    if r.op.is_keysetup() {
        format!("{head},\"ns\":{:.2}}}", r.ns)
    } else {
        format!("{head},\"gbps\":{:.4}}}", r.gbps())
    }
}

/// Labels in first-seen order (the order subjects were measured).
fn labels(rs: &[&Record]) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for r in rs {
        let l = r.label();
        if !v.contains(&l) {
            v.push(l);
        }
    }
    v
}

fn geomean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    Some((xs.iter().map(|x| x.ln()).sum::<f64>() / xs.len() as f64).exp())
}

/// The human summary: one GB/s table per (op, key size), key setup in ns, then speedups.
pub fn tables(records: &[Record]) -> String {
    let mut out = String::new();
    let mut groups: BTreeMap<(Op, u32), Vec<&Record>> = BTreeMap::new();
    for r in records {
        groups.entry((r.op, r.key_bits)).or_default().push(r);
    }
    // Throughput tables.
    for ((op, bits), rs) in groups.iter().filter(|((op, _), _)| !op.is_keysetup()) {
        let cols = labels(rs);
        let _ = writeln!(out, "{}, GB/s", op.case_label(*bits));
        let _ = write!(out, "{:>9}", "size");
        for c in &cols {
            let _ = write!(out, " {c:>15}");
        }
        let _ = writeln!(out);
        let mut sizes: Vec<usize> = rs.iter().map(|r| r.size).collect();
        sizes.dedup();
        for s in sizes {
            let _ = write!(out, "{:>9}", size_label(s));
            for c in &cols {
                match rs.iter().find(|r| r.size == s && &r.label() == c) {
                    Some(r) => {
                        let _ = write!(out, " {:>15.3}", r.gbps());
                    }
                    None => {
                        let _ = write!(out, " {:>15}", "-");
                    }
                }
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(out);
    }
    // Key setup.
    for op in [Op::Keysetup, Op::KeysetupVariants] {
        let rs: Vec<&Record> = records.iter().filter(|r| r.op == op).collect();
        if rs.is_empty() {
            continue;
        }
        let cols = labels(&rs);
        let _ = writeln!(out, "{}, ns per key", op.name());
        let _ = write!(out, "{:>9}", "key");
        for c in &cols {
            let _ = write!(out, " {c:>18}");
        }
        let _ = writeln!(out);
        let mut bits: Vec<u32> = rs.iter().map(|r| r.key_bits).collect();
        bits.dedup();
        for b in bits {
            let _ = write!(out, "{:>9}", format!("AES-{b}"));
            for c in &cols {
                match rs.iter().find(|r| r.key_bits == b && &r.label() == c) {
                    Some(r) => {
                        let _ = write!(out, " {:>18.1}", r.ns);
                    }
                    None => {
                        let _ = write!(out, " {:>18}", "-");
                    }
                }
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(out);
    }
    // Speedups: geometric mean over sizes of aesx/<backend> against soft and OpenSSL.
    let mut lines = Vec::new();
    for ((op, bits), rs) in groups.iter().filter(|((op, _), _)| !op.is_keysetup()) {
        for label in labels(rs).iter().filter(|l| l.starts_with("aesx/")) {
            let ratio = |base: &str| {
                let v: Vec<f64> = rs
                    .iter()
                    .filter(|r| &r.label() == label)
                    .filter_map(|r| {
                        rs.iter()
                            .find(|b| b.label() == base && b.size == r.size)
                            .map(|b| b.ns / r.ns)
                    })
                    .collect();
                geomean(&v)
            };
            let fmt = |x: Option<f64>| {
                x.map_or("-".to_string(), |x| {
                    if x < 0.1 {
                        format!("{x:.5}x")
                    } else {
                        format!("{x:.2}x")
                    }
                })
            };
            lines.push(format!(
                "{:>16}  {:<14} {:>9} {:>9}",
                op.case_label(*bits),
                label,
                fmt(ratio("aesx/soft")),
                fmt(ratio("openssl"))
            ));
        }
    }
    if !lines.is_empty() {
        let _ = writeln!(
            out,
            "Speedup, geometric mean over sizes (time of the other / time of aesx):"
        );
        let _ = writeln!(
            out,
            "{:>16}  {:<14} {:>9} {:>9}",
            "op", "impl", "vs soft", "vs openssl"
        );
        for l in lines {
            let _ = writeln!(out, "{l}");
        }
    }
    out
}

/// results.json, and one perf file per implementation/backend.
pub fn write_files(dir: &Path, records: &[Record]) -> Result<()> {
    let list: Vec<serde_json::Value> = records
        .iter()
        .map(|r| {
            let mut o = json!({
                "impl": r.imp, "backend": r.backend, "op": r.op.name(),
                "key_bits": r.key_bits, "size": r.size, "ns": r.ns,
            });
            if !r.op.is_keysetup() {
                o["gbps"] = json!(r.gbps());
            }
            o
        })
        .collect();
    let features: serde_json::Map<String, serde_json::Value> = aesx::cpu::features()
        .list()
        .map(|(n, on)| (n.to_string(), json!(on)))
        .collect();
    let doc = json!({
        "model": crate::cpuinfo::model(),
        "features": features,
        "available": crate::available_names(),
        "command": std::env::args().collect::<Vec<_>>(),
        "results": list,
    });
    let write = |name: &str, text: String| -> Result<()> {
        let p = dir.join(name);
        std::fs::write(&p, text).map_err(|e| anyhow!("cannot write {}: {e}", p.display()))
    };
    write(
        "results.json",
        serde_json::to_string_pretty(&doc).expect("JSON") + "\n",
    )?;
    let mut files: BTreeMap<String, String> = BTreeMap::new();
    for r in records {
        let Some(code) = r.op.perf_code() else {
            continue;
        };
        let backend = if r.backend == "-" {
            "default"
        } else {
            &r.backend
        };
        let text = files
            .entry(format!("perf-{}-{backend}.txt", r.imp))
            .or_default();
        let _ = writeln!(text, "{code} {} {} {:.1}", r.key_bits, r.size, r.ns);
    }
    for (name, text) in files {
        write(&name, text)?;
    }
    Ok(())
}

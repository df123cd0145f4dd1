//! `aesx cpu`: the CPU model, the features aesx cares about, the available backends and the one
//! that will be used.

use aesx::Backend;
use aesx::hash::fugue::FugueBackend;
use anyhow::Result;
use serde_json::{Map, Value, json};

use crate::{BackendChoice, available_names};

/// The CPU model name: `model name` from /proc/cpuinfo, else the cpuid brand string.
pub fn model() -> String {
    if let Ok(text) = std::fs::read_to_string("/proc/cpuinfo") {
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(':')
                && k.trim() == "model name"
                && !v.trim().is_empty()
            {
                return v.trim().to_string();
            }
        }
    }
    brand_string().unwrap_or_else(|| "unknown".to_string())
}

#[cfg(target_arch = "x86_64")]
fn brand_string() -> Option<String> {
    use std::arch::x86_64::__cpuid;
    if __cpuid(0x8000_0000).eax < 0x8000_0004 {
        return None;
    }
    let mut bytes = Vec::with_capacity(48);
    for leaf in 0x8000_0002u32..=0x8000_0004 {
        let r = __cpuid(leaf);
        for w in [r.eax, r.ebx, r.ecx, r.edx] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
    }
    let s = String::from_utf8_lossy(&bytes);
    Some(
        s.trim_matches(|c: char| c == '\0' || c.is_whitespace())
            .to_string(),
    )
}

#[cfg(not(target_arch = "x86_64"))]
fn brand_string() -> Option<String> {
    None
}

/// The human-readable checks, in the order a reader cares about.
fn checks() -> Vec<(&'static str, bool)> {
    let f: std::collections::HashMap<&str, bool> = aesx::cpu::features().list().collect();
    let has = |n: &str| f.get(n).copied().unwrap_or(false);
    vec![
        ("AES-NI", has("aes")),
        ("PCLMULQDQ", has("pclmulqdq")),
        ("SSSE3", has("ssse3")),
        ("SSE4.1", has("sse4.1")),
        ("AVX2", has("avx2")),
        (
            "AVX-512 (F, BW, VL)",
            has("avx512f") && has("avx512bw") && has("avx512vl"),
        ),
        ("VAES", has("vaes")),
        ("VPCLMULQDQ", has("vpclmulqdq")),
        ("GFNI", has("gfni")),
    ]
}

pub fn run(json_out: bool, choice: &BackendChoice) -> Result<()> {
    let selected = choice.get();
    let available = available_names();
    if json_out {
        let mut feats = Map::new();
        for (name, on) in aesx::cpu::features().list() {
            feats.insert(name.to_string(), Value::Bool(on));
        }
        let obj = json!({
            "model": model(),
            "features": feats,
            "available": available,
            "selected": selected.name(),
            "forced": choice.forced.is_some(),
            "keysetup": keysetup_variant(),
            "fugue_available": FugueBackend::available().iter().map(|b| b.name()).collect::<Vec<_>>(),
            "fugue_selected": FugueBackend::detect().name(),
        });
        outln!("{obj}")?;
        return Ok(());
    }
    for (what, on) in checks() {
        outln!(
            "Checking for {what} support... {}",
            if on { "found" } else { "not found" }
        )?;
    }
    outln!("CPU model: {}", model())?;
    let list: Vec<String> = aesx::cpu::features()
        .list()
        .map(|(n, on)| if on { n.to_string() } else { format!("-{n}") })
        .collect();
    outln!("Features: {}", list.join(" "))?;
    let missing: Vec<&str> = Backend::ALL
        .iter()
        .filter(|b| !b.is_available())
        .map(|b| b.name())
        .collect();
    if missing.is_empty() {
        outln!("Backends available: {}", available.join(", "))?;
    } else {
        outln!(
            "Backends available: {} (not here: {})",
            available.join(", "),
            missing.join(", ")
        )?;
    }
    let why = if choice.forced.is_some() {
        "forced by --backend / AESX_BACKEND"
    } else {
        "the fastest available; override with --backend or AESX_BACKEND"
    };
    outln!("Backend selected: {selected} ({why})")?;
    if let Some(k) = keysetup_variant() {
        outln!("Key expansion: {k}")?;
    }
    // `aesx hash --backend` takes these (a set of its own: no vaes*, and gfni).
    outln!(
        "Fugue backends available: {} (`aesx hash` uses {})",
        crate::hash::fugue_names(&FugueBackend::available()),
        FugueBackend::detect()
    )?;
    Ok(())
}

#[cfg(target_arch = "x86_64")]
fn keysetup_variant() -> Option<&'static str> {
    Backend::Aesni
        .is_available()
        .then(aesx::hazmat::keysetup::preferred)
}

#[cfg(not(target_arch = "x86_64"))]
fn keysetup_variant() -> Option<&'static str> {
    None
}

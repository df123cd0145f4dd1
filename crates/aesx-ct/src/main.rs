//! `aesx-ct`: the constant-time checker. See the crate README.

use std::time::Duration;

const USAGE: &str = "usage: aesx-ct <command> [options]
commands:
  all                 taint, then timing (what .ci/ct-check runs)
  taint               valgrind memcheck secret taint, one valgrind process per target
  timing              dudect-style fixed-vs-random Welch t-test
  list                targets and their cases
  taint-child NAME    (internal) the part of `taint` that runs inside valgrind
  timing-case NAME INDEX SEED SECONDS
                      (internal) one timing case in a fresh process (the re-measurement)
options:
  --target NAME       only this target (soft, vpaes, aesni, vaes256, vaes512, planted-table, ...)
  --seconds S         timing budget per case (default 2.5)
  --seed N            timing seed (default: from the clock)
  -v                  taint: print every valgrind report";

fn main() {
    std::process::exit(run(std::env::args().skip(1).collect()));
}

fn run(args: Vec<String>) -> i32 {
    let mut cmd = None;
    let mut target: Option<String> = None;
    let mut seconds = 2.5f64;
    let mut seed = None;
    let mut verbose = false;
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().ok_or_else(|| format!("{name} needs a value"));
        let r: Result<(), String> = (|| {
            match a.as_str() {
                "--target" => target = Some(value("--target")?),
                "--seconds" => {
                    seconds = value("--seconds")?
                        .parse()
                        .ok()
                        .filter(|s: &f64| *s > 0.0 && s.is_finite())
                        .ok_or("--seconds needs a positive number")?
                }
                "--seed" => {
                    let v = value("--seed")?;
                    let v = v.trim_start_matches("0x");
                    seed = Some(u64::from_str_radix(v, 16).map_err(|_| "--seed needs hex")?)
                }
                "-v" => verbose = true,
                "-h" | "--help" => return Err(String::new()),
                "taint-child" => cmd = Some(format!("taint-child:{}", value("taint-child")?)),
                "timing-case" => {
                    let (n, i, s, b) = (
                        value("timing-case")?,
                        value("timing-case")?,
                        value("timing-case")?,
                        value("timing-case")?,
                    );
                    cmd = Some(format!("timing-case:{n}:{i}:{s}:{b}"));
                }
                c if cmd.is_none() && !c.starts_with('-') => cmd = Some(c.to_string()),
                other => return Err(format!("unexpected argument {other}")),
            }
            Ok(())
        })();
        if let Err(e) = r {
            if !e.is_empty() {
                eprintln!("aesx-ct: {e}");
            }
            eprintln!("{USAGE}");
            return 2;
        }
    }
    let seed = seed.unwrap_or_else(|| {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
    });
    let budget = Duration::from_secs_f64(seconds);
    let only = target.as_deref();
    if let Some(name) = only
        && !aesx_ct::targets::targets().iter().any(|t| t.name == name)
    {
        eprintln!("aesx-ct: unknown target {name} (see `aesx-ct list`)");
        return 2;
    }
    match cmd.as_deref() {
        Some("all") => {
            let a = aesx_ct::taint::drive(only, verbose);
            let b = aesx_ct::timing::drive(only, budget, seed);
            a.max(b)
        }
        Some("taint") => aesx_ct::taint::drive(only, verbose),
        Some("timing") => aesx_ct::timing::drive(only, budget, seed),
        Some("list") => {
            for t in aesx_ct::targets::targets() {
                let cases: Vec<String> = (t.cases)(aesx_ct::targets::Part::Taint)
                    .into_iter()
                    .map(|c| c.name)
                    .collect();
                println!(
                    "{} ({}available): {}",
                    t.name,
                    if t.available { "" } else { "not " },
                    cases.join(" ")
                );
            }
            0
        }
        Some(c) if c.starts_with("timing-case:") => {
            let f: Vec<&str> = c.splitn(5, ':').collect();
            match (
                f[2].parse::<usize>(),
                u64::from_str_radix(f[3], 16),
                f[4].parse::<f64>(),
            ) {
                (Ok(i), Ok(s), Ok(b)) if b > 0.0 && b.is_finite() => {
                    aesx_ct::timing::case_child(f[1], i, Duration::from_secs_f64(b), s)
                }
                _ => 2,
            }
        }
        Some(c) if c.starts_with("taint-child:") => {
            aesx_ct::taint::child(&c["taint-child:".len()..])
        }
        _ => {
            eprintln!("{USAGE}");
            2
        }
    }
}

//! The hand-declared ABI numbers in src/ffi.rs must equal the installed OpenSSL headers'.
//! Compiles a C file of `_Static_assert`s generated from src/ffi.rs (every `pub const NAME:
//! TYPE = VALUE;` whose NAME is a C macro), so a wrong number fails the compile.

use std::process::Command;

mod common;

#[test]
fn constants_match_the_openssl_headers() {
    let src = std::fs::read_to_string(common::crate_dir().join("src/ffi.rs")).unwrap();
    let mut c = String::from(
        "#include <openssl/core.h>\n#include <openssl/core_dispatch.h>\n#include <openssl/params.h>\n\
         #include <openssl/evp.h>\n#include <openssl/err.h>\n#include <openssl/proverr.h>\n\
         #include <openssl/prov_ssl.h>\n#include <stddef.h>\n",
    );
    let mut n = 0;
    for line in src.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const ") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(':') else {
            continue;
        };
        let Some((_, value)) = value.split_once('=') else {
            continue;
        };
        let value = value.trim().trim_end_matches(';').trim();
        let value = match value {
            "usize::MAX" => "((size_t)-1)".to_string(),
            v => v.replace('_', ""),
        };
        if !value
            .chars()
            .next()
            .is_some_and(|ch| ch.is_ascii_digit() || ch == '(')
        {
            continue; // a struct constant, not a macro
        }
        let value = value.replace("0X", "0x");
        c.push_str(&format!(
            "_Static_assert((unsigned long long)({name}) == (unsigned long long)({value}), \"{name}\");\n"
        ));
        n += 1;
    }
    // Layouts.
    c.push_str(
        "_Static_assert(sizeof(OSSL_PARAM) == 40 && offsetof(OSSL_PARAM, return_size) == 32, \"param\");\n\
         _Static_assert(sizeof(OSSL_DISPATCH) == 16, \"dispatch\");\n\
         _Static_assert(sizeof(OSSL_ALGORITHM) == 32, \"algorithm\");\n\
         _Static_assert(ERR_PACK(ERR_LIB_PROV, 0, PROV_R_BAD_DECRYPT) == ((57u << 23) | 100u), \"pack\");\n",
    );
    assert!(n > 50, "only {n} constants found");
    let dir = common::scratch("abi");
    let file = dir.join("abi.c");
    std::fs::write(&file, c).unwrap();
    let out = Command::new(std::env::var_os("CC").unwrap_or_else(|| "cc".into()))
        .args(["-std=c11", "-fsyntax-only", "-Werror"])
        .arg(&file)
        .output()
        .expect("run cc");
    assert!(
        out.status.success(),
        "{} constants checked; mismatch:\n{}",
        n,
        String::from_utf8_lossy(&out.stderr)
    );
}

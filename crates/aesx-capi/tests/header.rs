//! include/aesx.h must be what cbindgen generates from the current source.
//! `AESX_BLESS=1 cargo test -p aesx-capi --test header` rewrites it.

use std::path::Path;

#[test]
fn header_is_up_to_date() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let bindings = cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(config)
        .generate()
        .expect("cbindgen could not generate the header");
    let mut fresh = Vec::new();
    bindings.write(&mut fresh);
    let fresh = String::from_utf8(fresh).expect("header is UTF-8");
    let path = dir.join("include/aesx.h");
    if std::env::var_os("AESX_BLESS").is_some() {
        std::fs::write(&path, &fresh).expect("write include/aesx.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == fresh,
        "include/aesx.h is out of date; regenerate it with \
         `AESX_BLESS=1 cargo test -p aesx-capi --test header` and commit the result"
    );
}

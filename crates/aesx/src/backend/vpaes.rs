//! SSSE3 vector-permute AES (reserved: built in its own issue). Until then this module is not
//! built (`BUILT = false`), `Backend::Vpaes` is never available, and these forwarders exist only
//! so the dispatch table is complete.
#![forbid(unsafe_code)]

pub(crate) const BUILT: bool = false;

pub(crate) use super::soft::{
    Keys, cbc_decrypt, cbc_encrypt, ctr_xor, decrypt_blocks, encrypt_blocks, expand,
    from_round_keys,
};

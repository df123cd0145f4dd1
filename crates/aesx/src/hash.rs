//! Hash functions built on the AES round primitives: the Fugue family (Halevi, Hall, Jutla;
//! IBM, 2009 SHA-3 round-2 candidate). See [`fugue`].

pub mod fugue;

pub use fugue::{Fugue, FugueAlg, FugueBackend, fugue224, fugue256, fugue384, fugue512};

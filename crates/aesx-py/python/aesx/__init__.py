"""aesx: constant-time AES at the hardware limit, and the Fugue hash.

>>> import aesx
>>> aes = aesx.AES(bytes(16))
>>> ct = aes.ctr(bytes(16), b"attack at dawn")
>>> aes.ctr(bytes(16), ct)
b'attack at dawn'

* ``AES(key, backend=None)``: ECB, CBC (PKCS#7 or none) and CTR with a 128-bit big-endian
  counter (SSH ``aes*-ctr``, NIST SP 800-38A), on the fastest backend this CPU runs.
* ``fugue224() .. fugue512()`` and ``new(name)``: Fugue hash objects with the ``hashlib``
  interface.
* ``cpu()``: CPU features and the backends aesx selects.
* ``file_encrypt(data, key=... | passphrase=...)`` / ``file_decrypt(...)`` and ``keygen()``:
  the authenticated aesx file format of ``aesx encrypt`` (AES-GCM chunks, docs/format.md) over
  bytes.

Calls on more than ``GIL_RELEASE_BYTES`` bytes release the GIL; every object is safe to share
between threads. Bad arguments raise ``ValueError`` or ``TypeError``.
"""

from ._aesx import (
    AES,
    GIL_RELEASE_BYTES,
    FugueHash,
    __version__,
    cpu,
    file_decrypt,
    file_encrypt,
    fugue224,
    fugue256,
    fugue384,
    fugue512,
    keygen,
    new,
)

algorithms_available = frozenset({"fugue224", "fugue256", "fugue384", "fugue512"})
algorithms_guaranteed = algorithms_available

__all__ = [
    "AES",
    "FugueHash",
    "GIL_RELEASE_BYTES",
    "algorithms_available",
    "algorithms_guaranteed",
    "cpu",
    "file_decrypt",
    "file_encrypt",
    "fugue224",
    "fugue256",
    "fugue384",
    "fugue512",
    "keygen",
    "new",
]

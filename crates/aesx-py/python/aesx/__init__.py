"""aesx: constant-time AES at the hardware limit, and the Fugue hash.

>>> import aesx
>>> aes = aesx.AES(bytes(16))
>>> ct = aes.ctr(bytes(16), b"attack at dawn")
>>> aes.ctr(bytes(16), ct)
b'attack at dawn'

* ``AES(key, backend=None)``: ECB, CBC (PKCS#7 or none) and CTR with a 128-bit big-endian
  counter (SSH ``aes*-ctr``, NIST SP 800-38A), on the fastest backend this CPU runs.
* ``AESGCM(key)``: AES-GCM with the interface of ``cryptography``'s ``AESGCM``
  (``encrypt(nonce, data, associated_data)`` -> ciphertext || tag, ``decrypt(...)`` raising
  ``InvalidTag``, ``encrypt_into``/``decrypt_into``, ``generate_key(bit_length)``): swapping
  the import is the whole migration.
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
    AESGCM,
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

try:  # so that `except cryptography.exceptions.InvalidTag` keeps working after the switch
    from cryptography.exceptions import InvalidTag as _InvalidTagBase
except ImportError:  # pragma: no cover
    _InvalidTagBase = Exception


class InvalidTag(_InvalidTagBase):
    """AES-GCM authentication failed: wrong key, nonce or associated data, or modified data.

    A subclass of ``cryptography.exceptions.InvalidTag`` when ``cryptography`` is installed."""


algorithms_available = frozenset({"fugue224", "fugue256", "fugue384", "fugue512"})
algorithms_guaranteed = algorithms_available

__all__ = [
    "AES",
    "AESGCM",
    "InvalidTag",
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

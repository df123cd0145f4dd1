from typing import Any, Dict, FrozenSet, List, Optional, Union

try:
    from collections.abc import Buffer as _Buffer  # Python 3.12+
except ImportError:  # pragma: no cover
    _Buffer = Any  # type: ignore[misc,assignment]

ReadableBuffer = Union[bytes, bytearray, memoryview, _Buffer]
"""Any bytes-like object: bytes, bytearray, memoryview, array.array, numpy array, mmap."""
WriteableBuffer = Union[bytearray, memoryview, _Buffer]
"""A writable contiguous buffer: bytearray, memoryview of one, numpy array, mmap."""

__version__: str
GIL_RELEASE_BYTES: int
algorithms_available: FrozenSet[str]
algorithms_guaranteed: FrozenSet[str]

class AES:
    """An expanded AES-128/192/256 key; immutable, thread-safe, wiped when freed."""

    def __init__(self, key: ReadableBuffer, backend: Optional[str] = None) -> None:
        """``key``: 16, 24 or 32 bytes. ``backend``: one of ``cpu()["backends"]``.

        Raises ValueError for a wrong key length or an unknown/unavailable backend."""
    @property
    def backend(self) -> str:
        """``"soft"``, ``"vpaes"``, ``"aesni"``, ``"vaes256"`` or ``"vaes512"``."""
    @property
    def key_bits(self) -> int:
        """128, 192 or 256."""
    def encrypt_ecb(self, data: ReadableBuffer) -> bytes:
        """ECB-encrypt whole 16-byte blocks (ValueError otherwise)."""
    def decrypt_ecb(self, data: ReadableBuffer) -> bytes:
        """ECB-decrypt whole 16-byte blocks (ValueError otherwise)."""
    def ctr(self, iv: ReadableBuffer, data: ReadableBuffer, offset: int = 0) -> bytes:
        """CTR (128-bit big-endian counter starting at ``iv``), from byte ``offset`` of the
        keystream. Encrypts and decrypts."""
    def ctr_into(self, iv: ReadableBuffer, buf: WriteableBuffer, offset: int = 0) -> None:
        """CTR in place on a writable buffer."""
    def cbc_encrypt(self, iv: ReadableBuffer, data: ReadableBuffer, padding: bool = True) -> bytes:
        """CBC encryption, PKCS#7 padded unless ``padding=False`` (then whole blocks only)."""
    def cbc_decrypt(self, iv: ReadableBuffer, data: ReadableBuffer, padding: bool = True) -> bytes:
        """CBC decryption; with ``padding=True`` removes PKCS#7 padding (ValueError if bad)."""

class FugueHash:
    """A Fugue hash object with the ``hashlib`` interface; thread-safe."""

    @property
    def name(self) -> str: ...
    @property
    def digest_size(self) -> int: ...
    @property
    def block_size(self) -> int: ...
    def update(self, data: ReadableBuffer) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...
    def copy(self) -> "FugueHash": ...

def fugue224(data: Optional[ReadableBuffer] = None, *, usedforsecurity: bool = True) -> FugueHash: ...
def fugue256(data: Optional[ReadableBuffer] = None, *, usedforsecurity: bool = True) -> FugueHash: ...
def fugue384(data: Optional[ReadableBuffer] = None, *, usedforsecurity: bool = True) -> FugueHash: ...
def fugue512(data: Optional[ReadableBuffer] = None, *, usedforsecurity: bool = True) -> FugueHash: ...
def new(name: str, data: Optional[ReadableBuffer] = None, *, usedforsecurity: bool = True) -> FugueHash:
    """A Fugue hash object by name, like ``hashlib.new`` (ValueError for other names)."""

def cpu() -> Dict[str, Any]:
    """``{"features": {name: bool}, "backends": [...], "backend": str,
    "fugue_backends": [...], "fugue_backend": str}``"""
def file_encrypt(
    data: ReadableBuffer,
    *,
    key: Optional[ReadableBuffer] = None,
    passphrase: Optional[Union[str, ReadableBuffer]] = None,
    aead: str = "aes-256-gcm",
    kdf_memory_kib: Optional[int] = None,
    kdf_passes: Optional[int] = None,
    kdf_lanes: Optional[int] = None,
    threads: Optional[int] = None,
) -> bytes: ...
def file_decrypt(
    data: ReadableBuffer,
    *,
    key: Optional[ReadableBuffer] = None,
    passphrase: Optional[Union[str, ReadableBuffer]] = None,
    threads: Optional[int] = None,
) -> bytes: ...
def keygen() -> bytes: ...

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

class InvalidTag(Exception):
    """AES-GCM authentication failed (a subclass of cryptography's InvalidTag when installed)."""

class AESGCM:
    """AES-GCM with the interface of cryptography's AESGCM (swap the import to migrate);
    immutable, thread-safe, key material wiped when freed."""

    def __init__(
        self, key: ReadableBuffer, backend: Optional[str] = None, tag_length: int = 16
    ) -> None:
        """``key``: 16, 24 or 32 bytes (ValueError otherwise). Extras beyond cryptography's
        signature: ``backend`` (one of ``cpu()["backends"]``) and ``tag_length`` (16, or
        12..15, 8, 4: the tag this key appends and the only length it accepts)."""
    @classmethod
    def generate_key(cls, bit_length: int) -> bytes:
        """A random key of 128, 192 or 256 bits (os.urandom)."""
    @property
    def backend(self) -> str: ...
    @property
    def key_bits(self) -> int: ...
    @property
    def tag_length(self) -> int: ...
    def encrypt(
        self, nonce: ReadableBuffer, data: ReadableBuffer, associated_data: Optional[ReadableBuffer]
    ) -> bytes:
        """Ciphertext followed by the tag. Nonces: 8 to 128 bytes (12 recommended); never
        reuse one with the same key."""
    def decrypt(
        self, nonce: ReadableBuffer, data: ReadableBuffer, associated_data: Optional[ReadableBuffer]
    ) -> bytes:
        """Plaintext of ``ciphertext || tag``; raises InvalidTag (no plaintext) if
        authentication fails."""
    def encrypt_into(
        self,
        nonce: ReadableBuffer,
        data: ReadableBuffer,
        associated_data: Optional[ReadableBuffer],
        buf: WriteableBuffer,
    ) -> int:
        """``encrypt`` into ``buf`` of exactly ``len(data) + tag_length`` bytes (``data`` may
        be a view of ``buf``); returns the bytes written."""
    def decrypt_into(
        self,
        nonce: ReadableBuffer,
        data: ReadableBuffer,
        associated_data: Optional[ReadableBuffer],
        buf: WriteableBuffer,
    ) -> int:
        """``decrypt`` into ``buf`` of exactly ``len(data) - tag_length`` bytes; on InvalidTag
        ``buf`` is zeroed. Returns the bytes written."""

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

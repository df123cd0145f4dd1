"""An independent reader and writer of the aesx file format, version 1.

Written from docs/format.md alone, on `cryptography` (OpenSSL's AES-GCM, HKDF, HMAC) and
`argon2-cffi` (the reference Argon2 C code), so that the format is defined by the document and
checked by two implementations that share no code. Deliberately plain: one function per
section of the document, whole files in memory.
"""

import hashlib
import hmac
import os
import struct

from argon2.low_level import Type, hash_secret_raw
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDFExpand

MAGIC = bytes([0x89, 0x61, 0x65, 0x73, 0x78, 0x0D, 0x0A, 0x1A])
HEADER_LEN = 104
TAG_LEN = 16
AEADS = {1: ("AES-256-GCM", 32), 2: ("AES-128-GCM", 16)}
# Section 5.
CHUNK_LOG2_RANGE = range(10, 21)
MAX_M_KIB = 1048576
MAX_T = 10
MAX_P = 16


class FormatError(Exception):
    """`kind` is one of the names of docs/format.md's messages; `chunk` the index, if any."""

    def __init__(self, kind, chunk=None):
        super().__init__(kind if chunk is None else f"{kind} (chunk {chunk})")
        self.kind = kind
        self.chunk = chunk


def check_argon2(m, t, p):
    """Section 5, reader's column."""
    if not (1 <= p <= MAX_P and 1 <= t <= MAX_T and 8 * p <= m <= MAX_M_KIB):
        raise FormatError("hostile parameters")


def argon2id(passphrase, salt, m, t, p):
    """Section 3, master key from a passphrase."""
    return hash_secret_raw(
        secret=passphrase, salt=salt, time_cost=t, memory_cost=m, parallelism=p,
        hash_len=32, type=Type.ID, version=19,
    )


def hkdf_extract(salt, ikm):
    return hmac.new(salt, ikm, hashlib.sha256).digest()


def hkdf_expand(prk, info, length):
    return HKDFExpand(algorithm=hashes.SHA256(), length=length, info=info).derive(prk)


def derive(master, file_salt, aead):
    """Section 3, derivation."""
    name, klen = AEADS[aead]
    prk = hkdf_extract(file_salt, master)
    return {
        "key_check": hkdf_expand(prk, b"aesx v1 key check", 16),
        "header_key": hkdf_expand(prk, b"aesx v1 header key", 32),
        "nonce_prefix": hkdf_expand(prk, b"aesx v1 nonce prefix", 4),
        "chunk_key": hkdf_expand(prk, b"aesx v1 chunk key " + name.encode(), klen),
    }


def header_tag(header_key, first88):
    return hmac.new(header_key, first88, hashlib.sha256).digest()[:16]


def nonce(prefix, i, last):
    """Section 4."""
    return prefix + i.to_bytes(7, "big") + (b"\x01" if last else b"\x00")


def encrypt(plaintext, *, key=None, passphrase=None, aead=1, chunk_log2=16,
            m=65536, t=3, p=4, file_salt=None, argon2_salt=None):
    """Returns the aesx file for `plaintext` (salts random unless given)."""
    if (key is None) == (passphrase is None):
        raise ValueError("give key or passphrase")
    file_salt = os.urandom(32) if file_salt is None else file_salt
    if key is not None:
        assert len(key) == 32
        source, params, a_salt, master = 1, (0, 0, 0), bytes(16), key
    else:
        check_argon2(m, t, p)
        a_salt = os.urandom(16) if argon2_salt is None else argon2_salt
        source, params = 2, (m, t, p)
        master = argon2id(passphrase, a_salt, m, t, p)
    k = derive(master, file_salt, aead)
    first88 = (MAGIC + bytes([1, aead, chunk_log2, source]) + struct.pack(">III", *params)
               + a_salt + file_salt + k["key_check"])
    assert len(first88) == 88
    out = bytearray(first88 + header_tag(k["header_key"], first88))
    c = 1 << chunk_log2
    chunks = [plaintext[i:i + c] for i in range(0, len(plaintext), c)] or [b""]
    gcm = AESGCM(k["chunk_key"])
    for i, ch in enumerate(chunks):
        out += gcm.encrypt(nonce(k["nonce_prefix"], i, i == len(chunks) - 1), ch, None)
    return bytes(out)


def parse_header(data):
    """Section 2, parsing rules 1-8, in order. Returns the fields."""
    n = min(8, len(data))
    if len(data) == 0 or data[:n] != MAGIC[:n]:
        raise FormatError("not an aesx file")
    if len(data) < HEADER_LEN:
        raise FormatError("truncated header")
    version, aead, chunk_log2, source = data[8], data[9], data[10], data[11]
    if version != 1:
        raise FormatError("unsupported version")
    if aead not in AEADS:
        raise FormatError("unsupported AEAD")
    if chunk_log2 not in CHUNK_LOG2_RANGE:
        raise FormatError("unsupported chunk size")
    if source not in (1, 2):
        raise FormatError("unsupported key source")
    m, t, p = struct.unpack(">III", data[12:24])
    a_salt = data[24:40]
    if source == 1 and (m or t or p or any(a_salt)):
        raise FormatError("malformed header")
    if source == 2:
        check_argon2(m, t, p)
    return {"aead": aead, "chunk_log2": chunk_log2, "source": source, "m": m, "t": t, "p": p,
            "argon2_salt": a_salt, "file_salt": data[40:72], "key_check": data[72:88],
            "tag": data[88:104]}


def decrypt(data, *, key=None, passphrase=None):
    """Returns the plaintext of the aesx file `data`, or raises FormatError."""
    h = parse_header(data)
    if h["source"] == 1:
        if key is None:
            raise FormatError("needs a key file")
        master = key
    else:
        if passphrase is None:
            raise FormatError("needs a passphrase")
        master = argon2id(passphrase, h["argon2_salt"], h["m"], h["t"], h["p"])
    k = derive(master, h["file_salt"], h["aead"])
    if not hmac.compare_digest(k["key_check"], h["key_check"]):
        raise FormatError("wrong key or passphrase")
    if not hmac.compare_digest(header_tag(k["header_key"], data[:88]), h["tag"]):
        raise FormatError("header corrupted")
    c = 1 << h["chunk_log2"]
    rec = c + TAG_LEN
    body = data[HEADER_LEN:]
    if not body:
        raise FormatError("file truncated")
    records = [body[i:i + rec] for i in range(0, len(body), rec)]
    gcm = AESGCM(k["chunk_key"])
    pre = k["nonce_prefix"]
    out = bytearray()
    for i, r in enumerate(records):
        last = i == len(records) - 1
        if len(r) < TAG_LEN:
            raise FormatError("file truncated", i)
        try:
            pt = gcm.decrypt(nonce(pre, i, last), r, None)
        except InvalidTag:
            raise diagnose(gcm, pre, i, r, last, c) from None
        if last and not pt and i > 0:
            raise FormatError("empty final chunk", i)
        out += pt
    return bytes(out)


def opens(gcm, n, r):
    try:
        gcm.decrypt(n, r, None)
        return True
    except InvalidTag:
        return False


def diagnose(gcm, pre, i, r, last, c):
    """Section 4's table."""
    if not last:
        if opens(gcm, nonce(pre, i, True), r):
            return FormatError("data after the end", i)
        return FormatError("chunk corrupted", i)
    if len(r) == c + TAG_LEN:
        if opens(gcm, nonce(pre, i, False), r):
            return FormatError("file truncated", i)
        return FormatError("chunk corrupted", i)
    return FormatError("last chunk corrupted", i)

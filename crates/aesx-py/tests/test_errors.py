"""Bad input raises ValueError or TypeError with a message that names the problem; nothing
crashes, nothing is written to an output buffer on error."""

import pytest

import aesx

KEY, IV = bytes(range(16)), bytes(16)


@pytest.fixture
def aes():
    return aesx.AES(KEY)


@pytest.mark.parametrize("n", [0, 1, 15, 17, 23, 25, 31, 33, 64])
def test_key_length(n):
    with pytest.raises(ValueError, match=r"16, 24 or 32 bytes.*got %d bytes" % n):
        aesx.AES(bytes(n))


@pytest.mark.parametrize("key", ["0" * 16, 16, None, [0] * 16, 1.5])
def test_key_type(key):
    with pytest.raises(TypeError, match="key: expected a bytes-like object"):
        aesx.AES(key)


def test_backend_names():
    with pytest.raises(ValueError, match="unknown backend"):
        aesx.AES(KEY, backend="fast")
    with pytest.raises(TypeError):
        aesx.AES(KEY, backend=3)
    for b in ("soft", "vpaes", "aesni", "vaes256", "vaes512"):
        if b in aesx.cpu()["backends"]:
            assert aesx.AES(KEY, backend=b).backend == b
        else:
            with pytest.raises(ValueError, match="not available on this CPU"):
                aesx.AES(KEY, backend=b)


@pytest.mark.parametrize("n", [0, 8, 12, 15, 17, 32])
def test_iv_length(aes, n):
    for call in (
        lambda: aes.ctr(bytes(n), b"x"),
        lambda: aes.ctr_into(bytes(n), bytearray(1)),
        lambda: aes.cbc_encrypt(bytes(n), b"x"),
        lambda: aes.cbc_decrypt(bytes(n), bytes(16)),
    ):
        with pytest.raises(ValueError, match="iv must be 16 bytes, got %d" % n):
            call()


def test_iv_type(aes):
    with pytest.raises(TypeError, match="iv: expected a bytes-like object"):
        aes.ctr("0" * 16, b"x")
    with pytest.raises(TypeError, match="iv: expected"):
        aes.ctr(None, b"x")


@pytest.mark.parametrize("bad", ["text", 5, None, object(), [1, 2, 3]])
def test_data_type(aes, bad):
    for call in (aes.encrypt_ecb, aes.decrypt_ecb, lambda d: aes.ctr(IV, d),
                 lambda d: aes.cbc_encrypt(IV, d), lambda d: aes.cbc_decrypt(IV, d)):
        with pytest.raises(TypeError, match="data: expected a bytes-like object"):
            call(bad)
    with pytest.raises(TypeError, match="encode str"):
        aes.ctr(IV, "text")


@pytest.mark.parametrize("n", [1, 15, 17, 31])
def test_unaligned(aes, n):
    with pytest.raises(ValueError, match="multiple of 16 bytes, got %d" % n):
        aes.encrypt_ecb(bytes(n))
    with pytest.raises(ValueError, match="multiple of 16"):
        aes.decrypt_ecb(bytes(n))
    with pytest.raises(ValueError, match="CBC without padding.*multiple of 16"):
        aes.cbc_encrypt(IV, bytes(n), padding=False)
    with pytest.raises(ValueError, match="multiple of 16"):
        aes.cbc_decrypt(IV, bytes(n), padding=False)
    with pytest.raises(ValueError, match="non-zero multiple of 16"):
        aes.cbc_decrypt(IV, bytes(n))


def test_bad_padding(aes):
    with pytest.raises(ValueError, match="non-zero multiple"):
        aes.cbc_decrypt(IV, b"")
    ct = aes.cbc_encrypt(IV, b"hello")
    # Corrupt the last ciphertext block: the decrypted padding becomes random.
    bad = ct[:-1] + bytes([ct[-1] ^ 1])
    with pytest.raises(ValueError, match="bad PKCS#7 padding"):
        aes.cbc_decrypt(IV, bad)
    # A wrong IV changes the first (here: only) block: the last byte 0x0b becomes 0x8b.
    with pytest.raises(ValueError, match="padding"):
        aes.cbc_decrypt(bytes(15) + b"\x80", ct)


def test_readonly_and_odd_buffers(aes):
    with pytest.raises(TypeError, match="writable buffer is required.*read-only bytes"):
        aes.ctr_into(IV, b"abc")
    with pytest.raises(TypeError, match="writable"):
        aes.ctr_into(IV, memoryview(b"abc"))
    with pytest.raises(TypeError, match="buf: expected a bytes-like object"):
        aes.ctr_into(IV, "abc")
    with pytest.raises(ValueError, match="contiguous"):
        aes.ctr_into(IV, memoryview(bytearray(32))[::2])
    with pytest.raises(ValueError, match="contiguous"):
        aes.ctr(IV, memoryview(bytes(32))[::2])


def test_offset(aes):
    with pytest.raises(ValueError, match="offset must be >= 0"):
        aes.ctr(IV, b"x", offset=-1)
    with pytest.raises(ValueError, match="offset"):
        aes.ctr_into(IV, bytearray(1), offset=-5)
    with pytest.raises(ValueError, match="< 2\\*\\*64"):
        aes.ctr(IV, b"x", offset=2**64)
    with pytest.raises(TypeError, match="offset must be an int, got str"):
        aes.ctr(IV, b"x", offset="1")
    with pytest.raises(TypeError, match="offset must be an int"):
        aes.ctr(IV, b"x", offset=1.0)
    # The stream ends at byte 2**64 - 1: a call may end exactly there, not past it.
    end = 2**64 - 1
    assert len(aes.ctr(IV, b"abc", offset=end - 3)) == 3
    assert aes.ctr(IV, b"", offset=end) == b""
    buf = bytearray(b"abcd")
    with pytest.raises(ValueError, match="past the end of the CTR stream"):
        aes.ctr(IV, b"abcd", offset=end - 3)
    with pytest.raises(ValueError, match="past the end"):
        aes.ctr_into(IV, buf, offset=end - 3)
    assert buf == b"abcd"


def test_error_leaves_output_untouched(aes):
    buf = bytearray(b"keep me")
    with pytest.raises(ValueError):
        aes.ctr_into(bytes(15), buf)
    assert buf == b"keep me"


def test_messages_hold_no_secrets(aes):
    key = b"SECRETKEYSECRETK"
    with pytest.raises(ValueError) as e:
        aesx.AES(key + b"!")
    assert b"SECRET".decode() not in str(e.value)
    with pytest.raises(ValueError) as e:
        aesx.AES(key).cbc_decrypt(IV, b"S" * 32)
    assert "SSSS" not in str(e.value)


def test_hash_errors():
    with pytest.raises(ValueError, match="unsupported hash type 'sha256'|unsupported hash type \"sha256\""):
        aesx.new("sha256")
    with pytest.raises(TypeError, match="name must be a str"):
        aesx.new(b"fugue256")
    h = aesx.fugue256()
    with pytest.raises(TypeError, match="encode str"):
        h.update("text")
    with pytest.raises(TypeError, match="data: expected"):
        aesx.fugue512(123)
    with pytest.raises(TypeError):
        aesx.fugue224(b"", b"")  # one positional argument, like hashlib


def test_no_pickling_of_keys():
    import pickle

    with pytest.raises(TypeError):
        pickle.dumps(aesx.AES(KEY))


def test_repr_hides_key():
    r = repr(aesx.AES(b"K" * 32))
    assert "KKKK" not in r and "key_bits=256" in r

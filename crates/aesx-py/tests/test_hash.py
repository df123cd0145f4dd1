"""The hashlib interface of the Fugue objects."""

import pytest

import aesx
from conftest import data_file, parse_rsp


def kat(bits, nbytes):
    for r in parse_rsp(data_file("fugue", f"sphlib_nist_ShortMsg_fugue{bits}.txt")):
        if r.get("LEN") == str(nbytes * 8):
            return bytes.fromhex(r["MSG"])[:nbytes], bytes.fromhex(r["MD"])
    raise LookupError


@pytest.mark.parametrize("bits,size", [(224, 28), (256, 32), (384, 48), (512, 64)])
def test_attributes(bits, size):
    ctor = getattr(aesx, f"fugue{bits}")
    h = ctor()
    assert h.name == f"fugue{bits}"
    assert h.digest_size == size == len(h.digest())
    assert h.block_size == 4
    assert len(h.hexdigest()) == 2 * size
    assert aesx.new(f"fugue{bits}").name == h.name
    assert aesx.new(f"Fugue-{bits}").name == h.name
    assert h.name in aesx.algorithms_available
    assert repr(h) == f"<fugue{bits} FugueHash object>"


@pytest.mark.parametrize("bits", [224, 256, 384, 512])
def test_digest_is_repeatable_and_copy_independent(bits):
    msg, md = kat(bits, 100)
    h = aesx.new(f"fugue{bits}")
    h.update(msg[:40])
    c = h.copy()
    h.update(msg[40:])
    assert h.digest() == md
    assert h.digest() == md  # digest() does not finalize the object
    c.update(msg[40:])
    assert c.digest() == md
    c.update(b"more")
    assert c.digest() != md and h.digest() == md
    assert getattr(aesx, f"fugue{bits}")(msg).hexdigest() == md.hex()
    assert getattr(aesx, f"fugue{bits}")(data=msg).digest() == md
    assert aesx.new(f"fugue{bits}", msg).digest() == md
    assert aesx.new(f"fugue{bits}", data=msg, usedforsecurity=False).digest() == md


def test_large_update_matches_chunks():
    data = bytes(range(256)) * 400  # 100 KiB: above the GIL release threshold
    one = aesx.fugue512(data).digest()
    h = aesx.fugue512()
    for i in range(0, len(data), 1000):
        h.update(memoryview(data)[i : i + 1000])
    assert h.digest() == one


def test_works_with_hmac():
    import hmac

    # hashlib-style constructors plug into hmac (block_size 4 < 16: hmac warns and uses 64).
    with pytest.warns(RuntimeWarning):
        mac = hmac.new(b"key", b"msg", digestmod=aesx.fugue256).hexdigest()
    assert len(mac) == 64

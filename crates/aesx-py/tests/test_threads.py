"""Objects shared between threads give the same results as serial use, and large calls
release the GIL (another Python thread keeps running during them)."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

import aesx

KEY = bytes(range(16))


def ref_ctr(iv, data):
    e = Cipher(algorithms.AES(KEY), modes.CTR(iv)).encryptor()
    return e.update(data) + e.finalize()


def test_shared_aes_object_many_threads():
    aes = aesx.AES(KEY)
    jobs = []
    for i in range(64):
        iv = i.to_bytes(16, "big")
        data = bytes([i]) * (1000 + 997 * i)  # both sides of the GIL threshold
        jobs.append((iv, data))

    def work(job):
        iv, data = job
        buf = bytearray(data)
        aes.ctr_into(iv, buf)
        return aes.ctr(iv, data), bytes(buf), aes.cbc_decrypt(iv, aes.cbc_encrypt(iv, data))

    with ThreadPoolExecutor(8) as ex:
        results = list(ex.map(work, jobs * 3))
    for (iv, data), (ct, ct2, rt) in zip(jobs * 3, results):
        want = ref_ctr(iv, data)
        assert ct == want and ct2 == want and rt == data


def test_shared_hash_object_concurrent_updates():
    # Identical chunks: the digest does not depend on the order the threads take the lock in.
    chunk = bytes(range(256)) * 64  # 16 KiB, GIL released inside
    n = 200
    h = aesx.fugue256()

    def work(_):
        h.update(chunk)

    with ThreadPoolExecutor(8) as ex:
        list(ex.map(work, range(n)))
    assert h.digest() == aesx.fugue256(chunk * n).digest()


def test_copy_while_other_threads_update():
    h = aesx.fugue384(b"prefix")
    snap_want = aesx.fugue384(b"prefix").digest()
    copies = []

    def upd():
        for _ in range(100):
            h.update(b"x" * 10000)

    t = threading.Thread(target=upd)
    t.start()
    while t.is_alive():
        copies.append(h.copy())
    t.join()
    # Every copy is a consistent state: prefix + k * 10000 bytes of "x" for some k.
    for c in copies[:20]:
        d = c.digest()
        assert any(d == aesx.fugue384(b"prefix" + b"x" * (10000 * k)).digest() for k in range(101))
    assert snap_want != h.digest()


def _gil_released_during(call):
    """True if the main thread ran for a long stretch while `call` ran on another thread."""
    done = threading.Event()
    started = threading.Event()

    def worker():
        started.set()
        call()
        done.set()

    old = __import__("sys").getswitchinterval()
    __import__("sys").setswitchinterval(0.001)
    try:
        t = threading.Thread(target=worker)
        t.start()
        started.wait()
        t0 = time.perf_counter()
        longest = 0.0
        while not done.is_set():
            longest = time.perf_counter() - t0
        t.join()
    finally:
        __import__("sys").setswitchinterval(old)
    return longest


def _sized(make_call, target=0.3):
    """A call that takes at least ~target seconds (doubling the size until it does)."""
    n = 1 << 20
    while True:
        call = make_call(n)
        t = time.perf_counter()
        call()
        if time.perf_counter() - t >= target or n >= 1 << 30:
            return call
        n *= 2


@pytest.mark.parametrize("what", ["ctr", "ctr_into", "ecb", "cbc", "fugue"])
def test_large_calls_release_the_gil(what):
    aes = aesx.AES(KEY, backend="soft")  # slow on purpose: long calls with small buffers
    iv = bytes(16)

    def make(n):
        if what == "ctr":
            data = bytes(n)
            return lambda: aes.ctr(iv, data)
        if what == "ctr_into":
            buf = bytearray(n)
            return lambda: aes.ctr_into(iv, buf)
        if what == "ecb":
            data = bytes(n)
            return lambda: aes.encrypt_ecb(data)
        if what == "cbc":
            data = bytes(n)
            return lambda: aes.cbc_decrypt(iv, data, padding=False)
        data = bytes(n * 8)
        return lambda: aesx.fugue256().update(data)

    call = _sized(make)
    start = time.perf_counter()
    longest = _gil_released_during(call)
    total = time.perf_counter() - start
    # With the GIL held, the main thread would be blocked for the whole call and see at most a
    # switch interval (1 ms) of it; released, it spins through most of it.
    assert longest > 0.5 * total - 0.05 and longest > 0.1, (longest, total)

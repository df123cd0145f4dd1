"""Benchmark: aesx against `cryptography` (OpenSSL) and `pycryptodome`, from Python.

    python -m aesx.bench [--ops ctr,gcm] [--sizes 16,1024,16384,1048576] [--trials 40]
                         [--key-bits 128] [--json]

GCM (``--ops gcm``), one message (nonce) per call, no associated data: ``encrypt`` returns
new bytes (aesx and `cryptography`: ``AESGCM(key).encrypt(nonce, data, None)`` with the key
object reused; pycryptodome: ``AES.new(key, MODE_GCM, nonce).encrypt_and_digest``, its only
way), ``inplace`` writes into a preallocated buffer (``encrypt_into``; pycryptodome
``output=buf``), ``decrypt`` checks the tag and returns new bytes.

For every size each candidate runs in short trials (~2 ms), interleaved round-robin, and the
best trial is kept; ratios are from the same run. Two ways of calling are measured:

* per message: a new IV/nonce for every call, as a protocol encrypts messages. aesx expands the
  key once (``AES(key)``) and calls ``aes.ctr(iv, data)``; `cryptography` builds
  ``Cipher(AES(key), CTR(iv)).encryptor()`` per message (its only way to change the IV);
  pycryptodome ``AES.new(key, MODE_CTR, ...)`` per message.
* stream: one long-lived context continuing a keystream (`cryptography` ``encryptor.update``,
  pycryptodome ``cipher.encrypt``); aesx ``aes.ctr(iv, data, offset)`` (stateless, same call).
* inplace: the stream case writing into a preallocated buffer, no new bytes object
  (`cryptography` ``update_into``, pycryptodome ``encrypt(..., output=buf)``, aesx
  ``ctr_into(iv, buf, offset)``; aesx works in place, the peers copy from ``data``).

Peers that are not installed are skipped.
"""

import argparse
import json
import os
import sys
import timeit

import aesx

TRIAL_SECONDS = 0.002


def _candidates(key, iv, data):
    """(name, kind, stmt, globals) for every installed implementation."""
    out = []
    aes = aesx.AES(key)
    g = {"aes": aes, "iv": iv, "d": data, "off": 1 << 20, "buf": bytearray(data)}
    out.append((f"aesx ({aes.backend})", "message", "aes.ctr(iv, d)", g))
    out.append((f"aesx ({aes.backend})", "stream", "aes.ctr(iv, d, off)", g))
    out.append((f"aesx ({aes.backend})", "inplace", "aes.ctr_into(iv, buf, off)", g))
    try:
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        import cryptography

        g = {
            "Cipher": Cipher,
            "A": algorithms.AES,
            "CTR": modes.CTR,
            "key": key,
            "iv": iv,
            "d": data,
            "enc": Cipher(algorithms.AES(key), modes.CTR(iv)).encryptor(),
            "buf": bytearray(len(data) + 15),
        }
        name = f"cryptography {cryptography.__version__}"
        out.append(
            (name, "message", "e = Cipher(A(key), CTR(iv)).encryptor(); e.update(d); e.finalize()", g)
        )
        out.append((name, "stream", "enc.update(d)", g))
        out.append((name, "inplace", "enc.update_into(d, buf)", g))
    except ImportError:
        pass
    try:
        from Crypto.Cipher import AES as CAES

        import Crypto

        g = {
            "AES": CAES,
            "key": key,
            "iv": iv,
            "d": data,
            "c": CAES.new(key, CAES.MODE_CTR, nonce=b"", initial_value=iv),
            "buf": bytearray(len(data)),
        }
        name = f"pycryptodome {Crypto.__version__}"
        out.append(
            (name, "message", "AES.new(key, AES.MODE_CTR, nonce=b'', initial_value=iv).encrypt(d)", g)
        )
        out.append((name, "stream", "c.encrypt(d)", g))
        out.append((name, "inplace", "c.encrypt(d, output=buf)", g))
    except ImportError:
        pass
    return out


def _gcm_candidates(key, iv, data):
    """AES-GCM, one message per call (a key object reused, as a protocol would), no AAD:
    ``encrypt`` (new bytes), ``inplace`` (``encrypt_into`` a preallocated buffer) and
    ``decrypt`` (new bytes, tag checked)."""
    nonce = iv[:12]
    out = []
    g = aesx.AESGCM(key)
    env = {"g": g, "n": nonce, "d": data, "ct": g.encrypt(nonce, data, None), "buf": bytearray(len(data) + 16)}
    name = f"aesx ({g.backend})"
    out.append((name, "encrypt", "g.encrypt(n, d, None)", env))
    out.append((name, "inplace", "g.encrypt_into(n, d, None, buf)", env))
    out.append((name, "decrypt", "g.decrypt(n, ct, None)", env))
    try:
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM

        import cryptography

        r = AESGCM(key)
        env = {"g": r, "n": nonce, "d": data, "ct": r.encrypt(nonce, data, None), "buf": bytearray(len(data) + 16)}
        name = f"cryptography {cryptography.__version__}"
        out.append((name, "encrypt", "g.encrypt(n, d, None)", env))
        if hasattr(r, "encrypt_into"):  # cryptography 45+
            out.append((name, "inplace", "g.encrypt_into(n, d, None, buf)", env))
        out.append((name, "decrypt", "g.decrypt(n, ct, None)", env))
    except ImportError:
        pass
    try:
        from Crypto.Cipher import AES as CAES

        import Crypto

        c = CAES.new(key, CAES.MODE_GCM, nonce=nonce)
        ct, tag = c.encrypt_and_digest(data)
        env = {"AES": CAES, "key": key, "n": nonce, "d": data, "ct": ct, "tag": tag, "buf": bytearray(len(data))}
        name = f"pycryptodome {Crypto.__version__}"
        out.append((name, "encrypt", "AES.new(key, AES.MODE_GCM, nonce=n).encrypt_and_digest(d)", env))
        out.append((name, "inplace", "AES.new(key, AES.MODE_GCM, nonce=n).encrypt_and_digest(d, output=buf)", env))
        out.append((name, "decrypt", "AES.new(key, AES.MODE_GCM, nonce=n).decrypt_and_verify(ct, tag)", env))
    except ImportError:
        pass
    return out


def _calibrate(timer):
    n = 1
    while True:
        t = timer.timeit(n)
        if t >= TRIAL_SECONDS / 2:
            return max(1, int(n * TRIAL_SECONDS / t))
        n *= 4


def run(sizes, trials, key_bits, ops=("ctr", "gcm")):
    key = bytes(range(key_bits // 8))
    iv = bytes(range(100, 116))
    results = []
    for op, size in [(op, size) for op in ops for size in sizes]:
        data = os.urandom(size)
        cands = (_candidates if op == "ctr" else _gcm_candidates)(key, iv, data)
        timers = [timeit.Timer(stmt, globals=g) for (_, _, stmt, g) in cands]
        counts = [_calibrate(t) for t in timers]
        best = [float("inf")] * len(cands)
        for _ in range(trials):
            for i, t in enumerate(timers):
                best[i] = min(best[i], t.timeit(counts[i]) / counts[i])
        for (name, kind, stmt, _), sec in zip(cands, best):
            results.append(
                {
                    "op": op,
                    "size": size,
                    "impl": name,
                    "kind": kind,
                    "ns_per_call": sec * 1e9,
                    "gb_per_s": size / sec / 1e9,
                }
            )
    return results


def _table(results):
    lines = []
    by = {}
    for r in results:
        by.setdefault((r["op"], r["size"], r["kind"]), []).append(r)
    order = ["message", "stream", "encrypt", "inplace", "decrypt"]
    for (op, size, kind), rows in sorted(by.items(), key=lambda x: (x[0][0] != "ctr", x[0][1], order.index(x[0][2]))):
        ref = next((r for r in rows if r["impl"].startswith("cryptography")), None)
        for r in rows:
            ratio = f"{ref['ns_per_call'] / r['ns_per_call']:5.2f}x" if ref else "   - "
            lines.append(
                f"{op:<4}{size:>8} B  {kind:<7}  {r['impl']:<24} {r['ns_per_call']:>11.0f} ns"
                f"  {r['gb_per_s']:7.3f} GB/s  {ratio} vs cryptography"
            )
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m aesx.bench", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="16,1024,16384,1048576")
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--key-bits", type=int, default=128, choices=(128, 192, 256))
    p.add_argument("--ops", default="ctr,gcm", help="ctr, gcm or both")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    a = p.parse_args(argv)
    sizes = [int(s) for s in a.sizes.split(",")]
    results = run(sizes, a.trials, a.key_bits, [o for o in a.ops.split(",") if o])
    try:
        load = open("/proc/loadavg").read().split()[:3]
    except OSError:
        load = []
    meta = {
        "python": sys.version.split()[0],
        "aesx": aesx.__version__,
        "backend": aesx.cpu()["backend"],
        "key_bits": a.key_bits,
        "trials": a.trials,
        "loadavg": load,
    }
    if a.json:
        print(json.dumps({"meta": meta, "results": results}, indent=1))
    else:
        print(
            f"{a.ops.upper()}, AES-{a.key_bits}, best of {a.trials} interleaved trials; Python {meta['python']}; "
            f"aesx backend {meta['backend']}; loadavg {' '.join(load)}"
        )
        print(_table(results))


if __name__ == "__main__":
    main()

"""Benchmark: aesx against `cryptography` (OpenSSL) and `pycryptodome`, from Python.

    python -m aesx.bench [--sizes 16,1024,16384,1048576] [--trials 40] [--key-bits 128] [--json]

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


def _calibrate(timer):
    n = 1
    while True:
        t = timer.timeit(n)
        if t >= TRIAL_SECONDS / 2:
            return max(1, int(n * TRIAL_SECONDS / t))
        n *= 4


def run(sizes, trials, key_bits):
    key = bytes(range(key_bits // 8))
    iv = bytes(range(100, 116))
    results = []
    for size in sizes:
        data = os.urandom(size)
        cands = _candidates(key, iv, data)
        timers = [timeit.Timer(stmt, globals=g) for (_, _, stmt, g) in cands]
        counts = [_calibrate(t) for t in timers]
        best = [float("inf")] * len(cands)
        for _ in range(trials):
            for i, t in enumerate(timers):
                best[i] = min(best[i], t.timeit(counts[i]) / counts[i])
        for (name, kind, stmt, _), sec in zip(cands, best):
            results.append(
                {
                    "op": "ctr",
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
        by.setdefault((r["size"], r["kind"]), []).append(r)
    for (size, kind), rows in sorted(by.items(), key=lambda x: (x[0][0], ["message", "stream", "inplace"].index(x[0][1]))):
        ref = next((r for r in rows if r["impl"].startswith("cryptography")), None)
        for r in rows:
            ratio = f"{ref['ns_per_call'] / r['ns_per_call']:5.2f}x" if ref else "   - "
            lines.append(
                f"{size:>8} B  {kind:<7}  {r['impl']:<24} {r['ns_per_call']:>11.0f} ns"
                f"  {r['gb_per_s']:7.3f} GB/s  {ratio} vs cryptography"
            )
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m aesx.bench", description=__doc__.split("\n")[0])
    p.add_argument("--sizes", default="16,1024,16384,1048576")
    p.add_argument("--trials", type=int, default=40)
    p.add_argument("--key-bits", type=int, default=128, choices=(128, 192, 256))
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    a = p.parse_args(argv)
    sizes = [int(s) for s in a.sizes.split(",")]
    results = run(sizes, a.trials, a.key_bits)
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
            f"CTR, AES-{a.key_bits}, best of {a.trials} interleaved trials; Python {meta['python']}; "
            f"aesx backend {meta['backend']}; loadavg {' '.join(load)}"
        )
        print(_table(results))


if __name__ == "__main__":
    main()

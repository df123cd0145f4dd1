"""Shared helpers: the repository's vendored test vectors, and the backends to test."""

import os
import pathlib

import pytest

import aesx

# crates/aesx-py/tests -> repository root. The vectors are read from the repository's
# testdata/ (see testdata/aes/SOURCE.md and testdata/fugue/SOURCE.md), never copied here.
TESTDATA = pathlib.Path(
    os.environ.get("AESX_TESTDATA", pathlib.Path(__file__).resolve().parents[3] / "testdata")
)


def data_file(*parts):
    p = TESTDATA.joinpath(*parts)
    if not p.exists():
        raise FileNotFoundError(
            f"{p} not found: run the tests from a clone of the aesx repository "
            "(or set AESX_TESTDATA to its testdata/ directory)"
        )
    return p


def parse_rsp(path):
    """NIST CAVP .rsp records as dicts (keys upper-case), each with 'DIR' = ENCRYPT/DECRYPT."""
    records, cur, direction = [], {}, None
    for line in path.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            if cur:
                records.append(cur)
                cur = {}
            continue
        if line.startswith("["):
            if cur:
                records.append(cur)
                cur = {}
            tag = line.strip("[]").upper()
            if tag in ("ENCRYPT", "DECRYPT"):
                direction = tag
            continue
        if "=" in line:
            k, v = (s.strip() for s in line.split("=", 1))
            cur[k.upper()] = v
            cur["DIR"] = direction
    if cur:
        records.append(cur)
    return records


BACKENDS = aesx.cpu()["backends"]


@pytest.fixture(params=BACKENDS)
def backend(request):
    """Every AES backend this CPU runs (soft, vpaes, aesni, vaes256, vaes512 as available)."""
    return request.param

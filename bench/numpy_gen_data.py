"""The plain-numpy way to make the golden data of bench/cases/datacopy_sweep_1000.toml: a gen_data.py loop.

For each (bc, bl, gap): seeded uniform half input, the gather ``x.reshape(bc, bl + gap, 16)[:, :bl]``, and the
same files fastcopy writes, byte for byte (input/xGm.bin, output/golden.bin, output/golden.mask.bin and the same
manifest.json: the same keys, sha256s and layout), so the comparison is with a script that does the same work.
Same generator as fastcopy (PCG64 seeded with [seed, crc32(buffer name)]). What it does not do is what fastcopy
adds beyond the files: validation, the atomic folder swap, summary.json.

    python bench/numpy_gen_data.py -o OUT [--simple-manifest]

``--simple-manifest`` writes the smaller manifest of the first version of this script (seed, values and the
three sha256s; ``json.dump(indent=1)``), for comparison with earlier measurements.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import zlib

import numpy as np

SEED = 1000
VALUES = range(1, 11), range(1, 11), range(0, 10)
NAME = "datacopy_sweep_1000"
HERE = os.path.dirname(os.path.abspath(__file__))
CASE = os.path.join(HERE, "cases", f"{NAME}.toml")


def rng_for(seed: int, name: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(name.encode())])))


def write(path: str, data: bytes) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
    return hashlib.sha256(data).hexdigest()


def versions() -> dict:
    """The versions fastcopy records (fastcopy's own read from its source, which this script does not import)."""
    from importlib.metadata import version

    with open(os.path.join(HERE, "..", "fastcopy", "__init__.py"), encoding="utf-8") as fh:
        fc = re.search(r'^__version__ = "([^"]+)"', fh.read(), re.M).group(1)
    return {"fastcopy": fc, "numpy": np.__version__, "ml_dtypes": version("ml_dtypes")}


def manifest_text(m: dict) -> str:
    """One top-level key per line, one buffer / op per line (fastcopy's manifest layout)."""
    enc = json.JSONEncoder(ensure_ascii=False).encode
    lines = []
    for k, v in m.items():
        if isinstance(v, list) and v and isinstance(v[0], dict):
            lines.append(f" {enc(k)}: [\n" + ",\n".join(f"  {enc(x)}" for x in v) + "\n ]")
        else:
            lines.append(f" {enc(k)}: {enc(v)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--simple-manifest", action="store_true")
    args = ap.parse_args(argv)
    with open(CASE, "rb") as fh:
        case_sha = hashlib.sha256(fh.read()).hexdigest()
    head = {"format": 1, **versions()}
    index = 0
    for bc in VALUES[0]:
        for bl in VALUES[1]:
            for gap in VALUES[2]:
                where = os.path.join(args.output, f"{index:04d}")
                n = bc * (bl + gap) * 16
                x = (-1.0 + 2.0 * rng_for(SEED, "xGm").random(n)).astype(np.float16)
                y = np.ascontiguousarray(x.reshape(bc, bl + gap, 16)[:, :bl]).reshape(-1)
                mask = np.ones(y.size, np.uint8)
                sx = write(os.path.join(where, "input", "xGm.bin"), x.tobytes())
                sy = write(os.path.join(where, "output", "golden.bin"), y.tobytes())
                sm = write(os.path.join(where, "output", "golden.mask.bin"), mask.tobytes())
                if args.simple_manifest:
                    manifest = {"seed": SEED, "values": {"bc": bc, "bl": bl, "gap": gap}, "input/xGm.bin": sx,
                                "output/golden.bin": sy, "output/golden.mask.bin": sm}
                    with open(os.path.join(where, "manifest.json"), "w") as fh:
                        json.dump(manifest, fh, indent=1)
                    index += 1
                    continue
                half = {"dtype": "half", "numpy_dtype": "float16"}
                manifest = {
                    **head,
                    "case": {"name": NAME, "file": f"{NAME}.toml", "sha256": case_sha, "point": index,
                             "values": {"bc": bc, "bl": bl, "gap": gap}},
                    "description": "gather bc bursts of bl blocks with gap blocks between them (half), "
                                   "GM -> VECIN -> GM",
                    "product": "ATLAS_A2", "product_name": "Atlas A2", "seed": SEED, "seed_source": "case",
                    "poison": 255,
                    "buffers": [
                        {"name": "xGm", "role": "input", **half, "shape": [n], "file": "input/xGm.bin",
                         "bytes": x.nbytes, "sha256": sx, "position": "GM",
                         "init": {"kind": "uniform", "low": -1.0, "high": 1.0}},
                        {"name": "xLocal", "role": "local", **half, "shape": [y.size], "position": "VECIN",
                         "buffer": "UB", "addr": 0},
                        {"name": "yGm", "role": "output", **half, "shape": [y.size], "file": "output/golden.bin",
                         "bytes": y.nbytes, "sha256": sy, "position": "GM", "mask": "output/golden.mask.bin",
                         "mask_sha256": sm, "elements": y.size, "defined": y.size}],
                    "ops": [
                        {"api": "DataCopy", "dst": "xLocal", "src": "xGm", "params": {"DataCopyParams": {
                            "blockCount": bc, "blockLen": bl, "srcGap": gap, "dstGap": 0}}, "warnings": []},
                        {"api": "DataCopy", "dst": "yGm", "src": "xLocal", "params": {"count": y.size},
                         "warnings": []}],
                    "files": ["input/xGm.bin", "output/golden.bin", "output/golden.mask.bin", "manifest.json"],
                }
                with open(os.path.join(where, "manifest.json"), "w", encoding="utf-8") as fh:
                    fh.write(manifest_text(manifest))
                index += 1
    print(f"numpy_gen_data: {index} cases written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

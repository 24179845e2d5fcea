"""The plain-numpy way to make the golden data of bench/cases/datacopy_sweep_1000.toml: a gen_data.py loop.

For each (bc, bl, gap): seeded uniform half input, the gather ``x.reshape(bc, bl + gap, 16)[:, :bl]``, and the
same files fastcopy writes (input/xGm.bin, output/golden.bin, output/golden.mask.bin, manifest.json with
sha256). Same generator as fastcopy (PCG64 seeded with [seed, crc32(buffer name)]), so the files are
byte-identical except the manifest (checked by bench_batch.py).

    python bench/numpy_gen_data.py -o OUT
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import zlib

import numpy as np

SEED = 1000
VALUES = range(1, 11), range(1, 11), range(0, 10)


def rng_for(seed: int, name: str) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, zlib.crc32(name.encode())])))


def write(path: str, data: bytes) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
    return hashlib.sha256(data).hexdigest()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", "--output", required=True)
    args = ap.parse_args(argv)
    index = 0
    for bc in VALUES[0]:
        for bl in VALUES[1]:
            for gap in VALUES[2]:
                where = os.path.join(args.output, f"{index:04d}")
                n = bc * (bl + gap) * 16
                x = (-1.0 + 2.0 * rng_for(SEED, "xGm").random(n)).astype(np.float16)
                y = np.ascontiguousarray(x.reshape(bc, bl + gap, 16)[:, :bl]).reshape(-1)
                mask = np.ones(y.size, np.uint8)
                manifest = {"seed": SEED, "values": {"bc": bc, "bl": bl, "gap": gap},
                            "input/xGm.bin": write(os.path.join(where, "input", "xGm.bin"), x.tobytes()),
                            "output/golden.bin": write(os.path.join(where, "output", "golden.bin"), y.tobytes()),
                            "output/golden.mask.bin": write(os.path.join(where, "output", "golden.mask.bin"),
                                                            mask.tobytes())}
                with open(os.path.join(where, "manifest.json"), "w") as fh:
                    json.dump(manifest, fh, indent=1)
                index += 1
    print(f"numpy_gen_data: {index} cases written to {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

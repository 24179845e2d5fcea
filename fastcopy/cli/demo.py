"""``fastcopy demo``: the basic DataCopy example of the reference page, GM -> VECIN -> VECOUT -> GM."""

from __future__ import annotations

import os
import tempfile

import numpy as np


def run_demo(output: str | None = None) -> int:
    from .. import DataCopy, DataCopyParams, GlobalTensor, TPipe, TPosition

    out_dir = output or tempfile.mkdtemp(prefix="fastcopy-demo-")
    os.makedirs(os.path.join(out_dir, "input"), exist_ok=True)
    os.makedirs(os.path.join(out_dir, "output"), exist_ok=True)
    src = np.arange(1, 513, dtype=np.float16)
    dst = np.zeros(512, np.float16)
    pipe = TPipe(product="ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "half", 512)
    y = pipe.alloc(TPosition.VECOUT, "half", 512)
    DataCopy(x, GlobalTensor(src), 512)  # count form
    DataCopy(y, x, 512)
    DataCopy(GlobalTensor(dst), y, DataCopyParams(1, 512 * 2 // 32, 0, 0))
    src.tofile(os.path.join(out_dir, "input", "src.bin"))
    dst.tofile(os.path.join(out_dir, "output", "golden.bin"))
    print("fastcopy demo: basic DataCopy, half[512], GM -> VECIN -> VECOUT -> GM on Atlas A2")
    print(f"input  (srcGlobal): {np.array2string(src, threshold=8, edgeitems=3)}")
    print(f"output (dstGlobal): {np.array2string(dst, threshold=8, edgeitems=3)}")
    print(f"wrote {out_dir}/input/src.bin and {out_dir}/output/golden.bin")
    return 0 if np.array_equal(src.view(np.uint16), dst.view(np.uint16)) else 1

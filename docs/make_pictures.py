"""Draw the README's pictures: one op of each family, explained by ``fastcopy.explain``.

Run from the repository root: ``python docs/make_pictures.py [OUT_DIR]`` (default docs/img; needs matplotlib,
``pip install -e ".[plot]"``). Writes ``<family>.png`` and, next to it, ``<family>.txt`` (the text picture).
"""

from __future__ import annotations

import os
import sys

import numpy as np

import fastcopy as fc


def examples():
    """(file stem, op, dst, src, args, kwargs) of each picture; small shapes so every cell can be read."""
    pipe = fc.TPipe(product="ATLAS_A2")
    out = []
    gm32 = fc.GlobalTensor(np.arange(256, dtype=np.int32))
    ub32 = pipe.alloc(fc.TPosition.VECIN, "int32", 72)
    out.append(("datacopy", fc.DataCopy, ub32, gm32, (fc.DataCopyParams(3, 1, 1, 2),), {}))

    gm16 = fc.GlobalTensor(np.arange(512, dtype=np.float16))
    row = pipe.alloc(fc.TPosition.VECIN, "half", 48)
    out.append(("datacopypad", fc.DataCopyPad, row, gm16,
                (fc.DataCopyExtParams(3, 20, 4, 0, 0), fc.DataCopyPadExtParams(True, 1, 2, 0)), {}))

    a1 = pipe.alloc(fc.TPosition.A1, "half", 512)
    out.append(("nd2nz", fc.DataCopy, a1, gm16, (fc.Nd2NzParams(1, 12, 20, 0, 20, 16, 1, 0),), {}))

    ub16 = pipe.alloc(fc.TPosition.VECOUT, "half", 256)
    gm_out = fc.GlobalTensor(np.zeros(8 * 40, np.float16), defined=False)
    out.append(("nz2nd", fc.DataCopy, gm_out, ub16, (fc.Nz2NdParamsFull(1, 8, 32, 1, 8, 40, 1),), {}))

    m = fc.GlobalTensor(np.arange(4 * 32, dtype=np.int32).reshape(4, 32))
    s = pipe.alloc(fc.TPosition.VECIN, "int32", 32)
    out.append(("slice", fc.DataCopy, s, m, ([fc.SliceInfo(0, 15, 0, 1, 16), fc.SliceInfo(0, 1, 0, 1, 2)],
                                             [fc.SliceInfo(0, 23, 8, 1, 32), fc.SliceInfo(0, 2, 1, 1, 4)], 2), {}))

    l1 = pipe.alloc(fc.TPosition.A1, "half", 3 * 256)
    a2 = pipe.alloc(fc.TPosition.A2, "half", 2 * 256)
    out.append(("loaddata", fc.LoadData, a2, l1, (fc.LoadData2DParams(0, 2, 2, 0, 0, True, 0),), {}))

    co1 = pipe.alloc(fc.TPosition.CO1, "float", 32 * 16)
    gm_c = fc.GlobalTensor(np.zeros(12 * 40, np.float32), defined=False)
    out.append(("fixpipe", fc.Fixpipe, gm_c, co1, (fc.FixpipeParamsV220(nSize=32, mSize=12, srcStride=16,
                                                                          dstStride=40),), {}))
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out_dir = argv[0] if argv else os.path.join(os.path.dirname(os.path.abspath(__file__)), "img")
    os.makedirs(out_dir, exist_ok=True)
    for stem, op, dst, src, args, kwargs in examples():
        ex = fc.explain(op, dst, src, *args, **kwargs)
        ex.save(os.path.join(out_dir, f"{stem}.png"))
        ex.save(os.path.join(out_dir, f"{stem}.txt"))
        print(f"{out_dir}/{stem}.png  {ex!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""A quantised int8 matmul kernel on Atlas A2: int8 A x int8 B -> int32 in L0C -> REQ8 (scale, offset) -> int8.

GM -> L1 (NZ, 32-byte rows of 32 int8) -> L0A / L0B (LoadData 2D; B through the transposing form, which
produces the Zn layout for 1-byte types) -> Mmad (exact int32) -> Fixpipe NZ2ND with REQ8 -> GM.

Run it: ``python examples/matmul_int8_kernel.py``.
"""

import numpy as np

import fastcopy as fc
from fastcopy import TPosition as Pos
from fastcopy.cube.quant import make_word

M, K, N = 48, 64, 32


def matmul_req8(a: np.ndarray, b: np.ndarray, scale: float, offset: int, product: str = "ATLAS_A2") -> np.ndarray:
    """``clamp(round(clamp((a @ b) * scale', -256, 255)) + offset)`` as int8 (``scale'`` = ``scale`` with the
    mantissa cut to 10 bits, as the hardware reads it), computed by the emulated kernel."""
    m, k = a.shape
    _, n = b.shape
    assert m % 16 == 0 and n % 32 == 0 and k % 32 == 0, "keep the example on whole fractals"
    m1, k1, n1 = m // 16, k // 32, n // 16
    pipe = fc.TPipe(product)
    out = np.zeros((m, n), np.int8)
    gm_a, gm_bt, gm_c = fc.GlobalTensor(a), fc.GlobalTensor(np.ascontiguousarray(b.T)), fc.GlobalTensor(out)

    # A: M x K -> L1 NZ (16 x 32 fractals, fractal columns of M1); B^T: N x K -> L1 NZ (16 x 32 fractals)
    l1_a = pipe.alloc(Pos.A1, "int8_t", m * k)
    l1_bt = pipe.alloc(Pos.B1, "int8_t", n * k)
    fc.DataCopy(l1_a, gm_a, fc.nd2nz_params(m, k, "int8_t"))
    fc.DataCopy(l1_bt, gm_bt, fc.nd2nz_params(n, k, "int8_t"))

    # L0A Zz: fractal (i, p) at i*K1 + p; the NZ image holds it at p*M1 + i
    l0a = pipe.alloc(Pos.A2, "int8_t", m * k)
    for i in range(m1):
        fc.LoadData(l0a[i * k1 * 512], l1_a, fc.LoadData2DParams(startIndex=i, repeatTimes=k1, srcStride=m1))
    # L0B Zn of B (32 x 16 fractals, column-major inside) is, fractal for fractal, the row-major 16 x 32 fractal of
    # B^T: fractal (p, j) of B at p*N1 + j comes from fractal (j, p) of the B^T image, at p*N1 + j
    l0b = pipe.alloc(Pos.B2, "int8_t", n * k)
    for p in range(k1):
        fc.LoadData(l0b[p * n1 * 512], l1_bt, fc.LoadData2DParams(startIndex=p * n1, repeatTimes=n1, srcStride=1))

    l0c = pipe.alloc(Pos.CO1, "int32_t", m1 * n1 * 256)
    fc.Mmad(l0c, l0a, l0b, fc.MmadParams(m, n, k))
    word = make_word(scale, offset=offset, sign=True)
    fc.Fixpipe(gm_c, l0c, fc.FixpipeParamsV220(nSize=n, mSize=m, srcStride=16 * m1, dstStride=n, quantPre="REQ8",
                                               deqScalar=word))
    return out


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (M, K)).astype(np.int8)
    b = rng.integers(-128, 128, (K, N)).astype(np.int8)
    c = matmul_req8(a, b, 1 / 256, -3)
    acc = a.astype(np.int64) @ b.astype(np.int64)
    ref = np.clip(np.rint(np.clip(acc / 256, -256, 255)) - 3, -128, 127)
    print("max |diff|:", int(np.abs(c.astype(np.int64) - ref).max()))

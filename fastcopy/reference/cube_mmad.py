"""Reference (test-oracle) Mmad, written literally from the rules: slow Python loops over the tile.

Operand element offsets (``K0 = 32 / sizeof(input)``, ``M1, N1, K1 = ceil(m/16), ceil(n/16), ceil(k/K0)``)::

    A(i, p)  L0A Zz: ((i//16)*K1s + p//K0)*16*K0 + (i%16)*K0 + p%K0     (K1s = 2*ceil(k/16) for float with
                                                                           kDirectionAlign on A2/A3, else K1)
    A(i, p)  L0A Nz (Atlas 350): ((p//K0)*M1 + i//16)*16*K0 + (i%16)*K0 + p%K0
    A(0, p)  GEMV (m == 1): p
    B(p, j)  L0B Zn: ((p//K0)*N1 + j//16)*16*K0 + (j%16)*K0 + p%K0
    C(i, j)  L0C:    (j//16)*M1*256 + i*16 + j%16

For every ``i < 16*M1``, ``j < 16*N1``: ``acc = sum_{p<k} A(i,p)*B(p,j)`` in binary64 (Python floats), added in
increasing ``p``; ``C = round(acc + C0)`` once (floats) or ``clamp(acc + C0)`` (integers). ``C0`` is 0
(``cmatrixInitVal and not isBias``), the bias ``bias[j]``, or the current ``C(i, j)``. A NaN ``acc + C0`` is
written as the positive canonical quiet NaN: its sign would depend on the order of the additions (even CPython's
``+`` keeps the first or the second NaN of NaN + NaN depending on whether the interpreter has specialised the
addition). The result is defined iff the row of A, the column of B and ``C0`` are.
"""

from __future__ import annotations

import math

from . import cube_quant


def mmad(c, c_def, a, a_def, b, b_def, m, n, k, k0, layout_a, k1s=None, gemv=False, c0_mode="zero", bias=None,
         bias_def=None, out_kind="F32", ctrl48=True, int_range=None):
    """``c``/``c_def``: L0C element array and definedness (modified); ``a``, ``b`` (+ ``_def``): float64 or int
    element arrays of L0A/L0B (after any HF32 rounding). ``c0_mode``: "zero", "bias" or "accumulate"."""
    m1, n1, k1 = -(-m // 16), -(-n // 16), -(-k // k0)
    k1s = k1 if k1s is None else k1s
    new_c, new_def = {}, {}
    for i in range(16 * m1):
        for j in range(16 * n1):
            acc = 0 if int_range else 0.0
            ok = True
            for p in range(k):
                if gemv:
                    ia = p
                elif layout_a == "Nz":
                    ia = ((p // k0) * m1 + i // 16) * 16 * k0 + (i % 16) * k0 + p % k0
                else:
                    ia = ((i // 16) * k1s + p // k0) * 16 * k0 + (i % 16) * k0 + p % k0
                ib = ((p // k0) * n1 + j // 16) * 16 * k0 + (j % 16) * k0 + p % k0
                acc = acc + (int(a[ia]) * int(b[ib]) if int_range else float(a[ia]) * float(b[ib]))
                ok = ok and bool(a_def[ia]) and bool(b_def[ib])
            ic = (j // 16) * m1 * 256 + i * 16 + j % 16
            if c0_mode == "bias":
                c0, ok = bias[j], ok and bool(bias_def[j])
            elif c0_mode == "accumulate":
                c0, ok = c[ic], ok and bool(c_def[ic])
            else:
                c0 = 0
            if int_range:
                new_c[ic] = min(max(acc + int(c0), int_range[0]), int_range[1])
            else:
                v = acc + float(c0)
                new_c[ic] = cube_quant.encode(math.fabs(v) if math.isnan(v) else v, out_kind, ctrl48)
            new_def[ic] = ok and not (gemv and i % 16 != 0)
    return new_c, new_def

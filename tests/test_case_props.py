"""Random case programs through the engine, checked against the reference oracles bit for bit (data and mask).

This checks the case -> public-API mapping (argument order, struct building, offsets, outputs) on random valid
parameters, for every element width the paths allow.
"""

from __future__ import annotations

import pathlib
import tempfile

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fastcopy.golden import case_from_dict, run_program, write_result
from test_case_examples import check_folder

DTYPES = {1: "int8_t", 2: "half", 4: "float", 8: "double"}


@st.composite
def datacopy_programs(draw):
    es = draw(st.sampled_from([1, 2, 4, 8]))
    bc, bl = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    sg, dg = draw(st.integers(0, 3)), draw(st.integers(0, 3))
    off = draw(st.integers(0, 3)) * 32 // es  # element offset of the source sub-tensor
    n_src = off + (bc * (bl + sg)) * 32 // es
    n_dst = (bc * (bl + dg)) * 32 // es
    count = draw(st.integers(1, n_dst))  # the way out may copy less than was written (rounds down)
    dt = DTYPES[es]
    return {
        "product": "ATLAS_A2", "seed": draw(st.integers(0, 2**32)), "outputs": ["y", "u"],
        "buffers": {"x": {"dtype": dt, "shape": [n_src], "init": "bits"},
                    "u": {"position": "VECIN", "dtype": dt, "count": n_dst},
                    "y": {"dtype": dt, "shape": [n_dst]}},
        "ops": [{"api": "DataCopy", "dst": "u", "src": f"x[{off}]",
                 "params": {"DataCopyParams": {"blockCount": bc, "blockLen": bl, "srcGap": sg, "dstGap": dg}}},
                {"api": "DataCopy", "dst": "y", "src": "u", "params": {"count": count}}],
    }


@st.composite
def pad_programs(draw):
    es = draw(st.sampled_from([1, 2, 4, 8]))
    bc = draw(st.integers(1, 5))
    bl = draw(st.integers(1, 40)) * es
    ss = draw(st.integers(0, 40))
    lp = draw(st.integers(0, 32 // es))
    rp = draw(st.integers(0, 32 // es))
    ds = draw(st.integers(0, 2))
    is_pad = draw(st.booleans())
    value = 0 if es == 8 else draw(st.integers(-3, 3))
    burst = -(-(lp * es + bl + rp * es) // 32) * 32
    n_src = -(-(bc * (bl + ss)) // es)
    n_ub = (bc * (burst + ds * 32)) // es
    dt = DTYPES[es]
    ops = []
    if draw(st.booleans()) and es != 8:
        ops.append({"api": "SetPadValue", "dtype": dt, "params": {"value": draw(st.integers(-5, 5))}})
    ops += [{"api": "DataCopyPad", "dst": "u", "src": "x",
             "params": {"DataCopyExtParams": {"blockCount": bc, "blockLen": bl, "srcStride": ss, "dstStride": ds},
                        "DataCopyPadExtParams": {"isPad": is_pad, "leftPadding": lp, "rightPadding": rp,
                                                 "paddingValue": value}}},
            {"api": "DataCopyPad", "dst": "y", "src": "u",
             "params": {"DataCopyExtParams": {"blockCount": bc, "blockLen": bl, "srcStride": ds + (burst - (
                 -(-bl // 32) * 32)) // 32, "dstStride": ss}}}]
    return {
        "product": "ATLAS_A2", "seed": draw(st.integers(0, 2**32)), "outputs": ["y", "u"],
        "buffers": {"x": {"dtype": dt, "shape": [n_src], "init": "bits"},
                    "u": {"position": "VECIN", "dtype": dt, "count": n_ub},
                    "y": {"dtype": dt, "shape": [n_src]}},
        "ops": ops,
    }


def _check(doc):
    prog = case_from_dict(doc, name="prop").point(0)
    with tempfile.TemporaryDirectory() as tmp:
        write_result(run_program(prog), tmp, allow_empty=True)
        check_folder(prog, pathlib.Path(tmp))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(datacopy_programs())
def test_random_datacopy_cases_match_the_oracle(doc):
    _check(doc)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pad_programs())
def test_random_datacopypad_cases_match_the_oracle(doc):
    _check(doc)

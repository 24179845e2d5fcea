"""Case files, ``fastcopy check`` and ``fastcopy explain`` with the cube-in APIs and their register setters."""

from __future__ import annotations

import pathlib

import pytest

from fastcopy.cli import main
from fastcopy.golden import load_case
from fastcopy.golden.schema import CaseError

ROOT = pathlib.Path(__file__).resolve().parents[1]

CASE = """
name = "cube_in_all"
product = "ATLAS_350"
outputs = ["a2", "b2", "l1"]

[buffers.gm]
dtype = "half"
shape = [2048]
init = {kind = "arange"}

[buffers.fmap]
position = "A1"
dtype = "half"
count = 1024
init = {kind = "arange"}

[buffers.l1]
position = "B1"
dtype = "half"
count = 1024

[buffers.a2]
position = "A2"
dtype = "half"
count = 3072

[buffers.b2]
position = "B2"
dtype = "half"
count = 1024

[[ops]]
api = "SetFmatrix"
params = {l1H = 4, l1W = 16, padList = [1, 1, 1, 1]}

[[ops]]
api = "SetLoadDataPaddingValue"
dtype = "half"
params = {value = -1.0}

[[ops]]
api = "SetLoadDataRepeatWithStride"
params.LoadDataRepeatParamWithStride = {repeatTime = 1, dstStride = 4}

[[ops]]
api = "LoadDataWithStride"
dst = "a2"
src = "fmap"
params.LoadData3DParamsV2 = {padList = [0, 0, 0, 0], l1H = 4, l1W = 16, channelSize = 16, kExtension = 48, mExtension = 48, filterW = 3, filterH = 1}
params.IsResetLoad3dConfig = {isSetFMatrix = false, isSetPadding = false}

[[ops]]
api = "DataCopy"
dst = "l1"
src = "gm"
params.Dn2NzParams = {dnNum = 1, nValue = 32, dValue = 32, srcDnMatrixStride = 0, srcDValue = 32, dstNzC0Stride = 32, dstNzNStride = 1, dstNzMatrixStride = 0}

[[ops]]
api = "LoadData"
dst = "b2"
src = "l1"
params.LoadData2DParamsV2 = {mStartPosition = 0, kStartPosition = 0, mStep = 2, kStep = 2, srcStride = 2, dstStride = 2, ifTranspose = true}

[[ops]]
api = "LoadDataWithTranspose"
dst = "b2"
src = "l1"
params.LoadData2dTransposeParamsV2 = {startIndex = 0, repeatTimes = 1, srcStride = 1, dstGap = 0}
"""


def test_case_with_every_cube_in_api_runs_and_checks(tmp_path):
    path = tmp_path / "case.toml"
    path.write_text(CASE)
    assert main(["check", str(path), "-q"]) == 0
    assert main(["run", str(path), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert (tmp_path / "out" / "output" / "a2.bin").stat().st_size == 3072 * 2


def test_pad_list_must_hold_four_values(tmp_path):
    path = tmp_path / "case.toml"
    path.write_text(CASE.replace("padList = [1, 1, 1, 1]", "padList = [1, 1, 1]"))
    with pytest.raises(CaseError, match=r"padList: expected a list of 4 integers"):
        load_case(path).point(0)


@pytest.mark.parametrize("example", ["matmul_operands_l0", "conv_img2col"])
def test_examples_check_and_explain(example, capsys):
    path = str(ROOT / "examples" / f"{example}.toml")
    assert main(["check", path, "-q"]) == 0
    op = 1
    assert main(["explain", path, "--op", str(op)]) == 0
    out = capsys.readouterr().out
    assert "op 1 = ops[1]: LoadData(" in out and "dst a2: A2 (L0A)" in out


CASE_V1 = """
name = "img2col_v1"
product = "ATLAS_TRAINING"
outputs = ["a2"]

[buffers.fmap]
position = "A1"
dtype = "half"
count = 256
init = {kind = "arange"}

[buffers.a2]
position = "A2"
dtype = "half"
count = 2304

[[ops]]
api = "LoadData"
dst = "a2"
src = "fmap"
params.LoadData3DParamsV1 = {padList = [1, 1, 1, 1], l1H = 4, l1W = 4, leftTopW = -1, leftTopH = -1, strideW = 1, strideH = 1, filterW = 3, filterH = 3, dilationFilterW = 1, dilationFilterH = 1, jumpStride = 1, repeatMode = 0, repeatTime = 9, padValue = 0.0}
"""


def test_case_with_img2col_v1(tmp_path, capsys):
    """The V1 form in a case file: runs, and its experimental warning reaches the user."""
    import numpy as np

    path = tmp_path / "case.toml"
    path.write_text(CASE_V1)
    assert main(["run", str(path), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert "experimental" in capsys.readouterr().err
    got = np.fromfile(tmp_path / "out" / "output" / "golden.bin", np.float16).reshape(9, 16, 16)  # (one output)
    assert got[4, :, 0].tolist() == list(range(0, 256, 16))  # the centre tap: every pixel's channel 0
    assert got[0, 0, 0] == 0 and got[0, 5, 0] == 0  # top-left tap of window (0, 0): padding; window (1, 1): pixel 0

"""Every case file in examples/ through ``fastcopy run``, checked against the reference oracles.

The oracle side is an independent interpreter of the case's program: its own memory model (GM byte arrays from
the written input files, on-chip buffers with the same allocation rule), and fastcopy/reference/* for every op.
Output files and masks must equal it bit for bit, undefined positions included (they hold the poison byte).
"""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from fastcopy.cli import main
from fastcopy.golden import load_case
from fastcopy.products import ALIGN, CAPACITIES, POSITIONS, Phys, Product, TPosition
from fastcopy.reference import datacopy as ref_dc
from fastcopy.reference import nz as ref_nz
from fastcopy.reference import pad as ref_pad
from fastcopy.reference import slice as ref_slice

ROOT = pathlib.Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.toml")) + sorted((ROOT / "examples").glob("*.json"))
#: examples that compute (Mmad, quantisation): checked against numpy in tests/test_case_cube_examples.py
COMPUTING = {"matmul_kernel", "matmul_int8_kernel"}


# --------------------------------------------------------------------------------------------- oracle
class RefMemory:
    """Byte arrays + bool definedness for GM buffers and each physical on-chip buffer."""

    def __init__(self, prog, folder: pathlib.Path):
        self.prog = prog
        self.product = Product[prog.product]
        self.key = self.product.key
        self.poison = prog.poison
        self.caps = dict(CAPACITIES[self.product])
        for k, v in prog.capacities.items():
            self.caps[Phys[k]] = v
        self.where = {}  # buffer name -> (data, defined, phys)
        for buf in prog.buffers:
            nbytes = buf.size * buf.np_dtype.itemsize
            if buf.gm:
                if buf.init is not None:
                    data = np.fromfile(folder / "input" / f"{buf.file}.bin", np.uint8)
                    assert data.size == nbytes
                    dfd = np.ones(nbytes, bool)
                else:
                    data, dfd = np.full(nbytes, self.poison, np.uint8), np.zeros(nbytes, bool)
                self.where[buf.name] = (data, dfd, Phys.GM)
        self.new_core()

    def new_core(self) -> None:
        """Fresh on-chip buffers (a core of a multi-core case has its own), the local tensors placed again."""
        prog = self.prog
        self.phys_mem = {}
        self.next = {}
        for buf in prog.buffers:
            nbytes = buf.size * buf.np_dtype.itemsize
            if not buf.gm:
                phys = POSITIONS[self.product][TPosition[buf.position]]
                if phys not in self.phys_mem:
                    cap = self.caps[phys]
                    self.phys_mem[phys] = (np.full(cap, self.poison, np.uint8), np.zeros(cap, bool))
                align = ALIGN[phys]
                addr = buf.addr if buf.addr is not None else -(-self.next.get(phys, 0) // align) * align
                self.next[phys] = max(self.next.get(phys, 0), addr + nbytes)
                data, dfd = self.phys_mem[phys]
                if buf.init is not None:
                    from fastcopy.golden.inputs import generate

                    data[addr:addr + nbytes] = generate(buf, prog.seed).reshape(-1).view(np.uint8)
                    dfd[addr:addr + nbytes] = True
                self.where[buf.name] = (data[addr:addr + nbytes], dfd[addr:addr + nbytes], phys)

    def tensor(self, ref):
        buf = self.prog.buffer(ref.name)
        es = buf.np_dtype.itemsize
        data, dfd, phys = self.where[ref.name]
        return data[ref.offset * es:], dfd[ref.offset * es:], phys, buf


def reference_run(prog, folder: pathlib.Path) -> dict:
    """name -> (data bytes, per-byte defined) of every output, computed with fastcopy/reference."""
    mem = RefMemory(prog, folder)
    padreg = None
    block = 0
    for op in prog.ops:
        if op.block != block:  # the next core: its own TPipe
            block, padreg = op.block, None
            mem.new_core()
        if op.api == "compute":
            _compute(mem, op, prog)
            continue
        params = op.params_dict()
        if op.api == "SetPadValue":
            padreg = np.array(params["value"]).astype(np.dtype(_np(op.dtype))).tobytes()
            continue
        if op.api == "SetLoadDataRepeat":
            continue  # the examples repeat once (checked in cube_in_oracle)
        if op.api.startswith("LoadData"):
            cube_in_oracle(mem, op, params)
            continue
        assert op.api in ("DataCopy", "DataCopyPad"), f"no oracle for {op.api}"
        dst, dst_def, dphys, dbuf = mem.tensor(op.dst)
        src, src_def, sphys, sbuf = mem.tensor(op.src)
        es = sbuf.np_dtype.itemsize
        common = dict(poison=mem.poison)
        if op.api == "DataCopy":
            path = f"{sphys.name}->{dphys.name}"
            if "count" in params:
                n = ref_dc.count_to_block_len(params["count"], es, path, mem.key)
                ref_dc.data_copy(dst, dst_def, src, src_def, path=path, product=mem.key, blockCount=1,
                                 blockLen=n, srcGap=0, dstGap=0, src_dtype=sbuf.np_dtype, dst_dtype=dbuf.np_dtype,
                                 **common)
            elif "DataCopyParams" in params:
                ref_dc.data_copy(dst, dst_def, src, src_def, path=path, product=mem.key,
                                 src_dtype=sbuf.np_dtype, dst_dtype=dbuf.np_dtype, **params["DataCopyParams"],
                                 **common)
            elif "Nd2NzParams" in params:
                ref_nz.nd2nz(dst, dst_def, src, src_def, es=es, product=mem.key,
                             small_c0=params.get("enableSmallC0", False), **params["Nd2NzParams"], **common)
            elif "Nz2NdParamsFull" in params:
                ref_nz.nz2nd(dst, dst_def, src, src_def, es=es, product=mem.key, **params["Nz2NdParamsFull"],
                             **common)
            else:
                ref_slice.slice_copy(dst, dst_def, src, src_def, es=es, dst_info=list(params["dstSliceInfo"]),
                                     src_info=list(params["srcSliceInfo"]), dimValue=params.get("dimValue", 1),
                                     **common)
            continue
        copy = params.get("DataCopyExtParams") or params.get("DataCopyParams")
        copy = {"blockCount": copy["blockCount"], "blockLen": copy["blockLen"],
                "srcStride": copy.get("srcStride", copy.get("srcGap")),
                "dstStride": copy.get("dstStride", copy.get("dstGap"))}
        mode = params.get("mode", "Normal")
        if dphys is Phys.GM:
            ref_pad.pad_local_to_gm(dst, dst_def, src, src_def, es=es, product=mem.key, mode=mode, **copy, **common)
        else:
            pad = params.get("DataCopyPadExtParams") or params["DataCopyPadParams"]
            value = np.array(pad["paddingValue"]).astype(sbuf.np_dtype).tobytes()
            padreg = ref_pad.pad_gm_to_local(dst, dst_def, src, src_def, es=es, product=mem.key, mode=mode,
                                             isPad=pad["isPad"], leftPadding=pad["leftPadding"],
                                             rightPadding=pad["rightPadding"], paddingValue=value, padreg=padreg,
                                             **copy, **common)
    out = {}
    for o in prog.outputs:
        data, dfd, _ = mem.where[o.buffer]
        out[o.buffer] = (data.copy(), dfd.copy())
    return out


class _Tensor:
    """What a compute step sees of a buffer in the oracle: ``numpy()`` and ``t[...] = values``."""

    def __init__(self, data, dfd, buf):
        self.data, self.dfd, self.buf = data, dfd, buf

    def numpy(self):
        v = self.data.view(self.buf.np_dtype)
        return v.reshape(self.buf.shape) if self.buf.gm else v

    def __setitem__(self, key, values):
        view = self.numpy()
        view[key] = values
        es = self.buf.np_dtype.itemsize
        self.dfd.reshape(*view.shape, es)[key] = True


def _compute(mem, op, prog):
    import inspect
    import runpy

    func = runpy.run_path(op.file)[op.function]
    env = {**prog.values, "block_idx": op.block, "block_num": prog.blocks, **dict(op.env)}
    params = inspect.signature(func).parameters
    args = [_Tensor(*mem.where[b][:2], prog.buffer(b)) for b in op.buffers]
    func(*args, **{k: v for k, v in env.items() if k in params})


def cube_in_oracle(mem, op, params):
    """LoadData 2D (no repeat register) and LoadData 3D V2 with the registers it sets itself, one repeat."""
    from fastcopy.reference import img2col as ref_i2c
    from fastcopy.reference import loaddata as ref_ld

    dst, dst_def, dphys, _ = mem.tensor(op.dst)
    src, src_def, sphys, sbuf = mem.tensor(op.src)
    es = sbuf.np_dtype.itemsize
    if "LoadData2DParams" in params:
        p = params["LoadData2DParams"]
        ref_ld.load2d(dst, dst_def, src, src_def, es=es, startIndex=p["startIndex"], repeatTimes=p["repeatTimes"],
                      srcStride=p["srcStride"], dstGap=p["dstGap"], transpose=p["ifTranspose"] and sphys is Phys.L1,
                      decrement=bool(p["addrMode"]) and (sphys, dphys) == (Phys.GM, Phys.L1),
                      honour_gap=mem.key != "910", poison=mem.poison)
        return
    p = params["LoadData3DParamsV2"]
    assert mem.key in ("A2", "A3") and dphys is Phys.L0A and not p["enTranspose"]
    c0 = 32 // es
    pads = tuple(p["padList"])
    kext = p["kExtension"]
    ref_i2c.load3d(dst, dst_def, src, src_def, es=es, H=p["l1H"], W=p["l1W"], pads=pads, Kh=p["filterH"],
                   Kw=p["filterW"], sh=p["strideH"], sw=p["strideW"], dh=p["dilationFilterH"],
                   dw=p["dilationFilterW"], mExtension=p["mExtension"], kExtension=kext,
                   blocks=[(p["mStartPt"], p["kStartPt"])], mode=0, image="Zz", Q=-(-kext // c0),
                   pad_bytes=np.array(p["padValue"]).astype(sbuf.np_dtype).tobytes(), poison=mem.poison)


def _np(name):
    from fastcopy import as_dtype

    return as_dtype(name)


def _points(case, limit=12):
    n = len(case)
    if n <= limit:
        return list(range(n))
    return sorted({round(i * (n - 1) / (limit - 1)) for i in range(limit)})


def check_folder(prog, folder: pathlib.Path) -> None:
    expected = reference_run(prog, folder)
    manifest = json.loads((folder / "manifest.json").read_text())
    outs = {b["name"]: b for b in manifest["buffers"] if b["role"] == "output"}
    for o in prog.outputs:
        buf = prog.buffer(o.buffer)
        es = buf.np_dtype.itemsize
        data = np.fromfile(folder / o.file, np.uint8)
        mask = np.fromfile(folder / o.mask, np.uint8)
        want, want_def = expected[o.buffer]
        want_mask = want_def.reshape(-1, es).all(axis=1).astype(np.uint8)
        assert mask.size == buf.size and np.array_equal(mask, want_mask), (
            f"{o.buffer}: mask differs at elements {np.flatnonzero(mask != want_mask)[:10]}")
        bad = np.flatnonzero(data != want)
        assert bad.size == 0, f"{o.buffer}: {bad.size} bytes differ, first at byte {bad[:10]}"
        assert outs[o.buffer]["defined"] == int(want_mask.sum())


# --------------------------------------------------------------------------------------------- tests
def test_there_are_examples():
    names = {p.stem for p in EXAMPLES}
    assert {"datacopy_tiles", "pad_row_copy", "matmul_nd2nz_nz2nd", "slice_rows"} <= names


@pytest.mark.parametrize("path", [p for p in EXAMPLES if p.stem not in COMPUTING], ids=lambda p: p.stem)
def test_example_matches_reference(path, tmp_path):
    case = load_case(path)
    for i in _points(case):
        args = ["run", str(path), "-o", str(tmp_path), "-q", "--allow-python"]
        if case.is_sweep:
            args += ["--point", str(i)]
        assert main(args) == 0
        folder = tmp_path / f"{i:04d}" if case.is_sweep else tmp_path
        check_folder(case.point(i), folder)


def test_round_trip_example_returns_its_input(tmp_path):
    """ND2NZ then NZ2ND (half, 16-wide fractals = C0) gives the matrix back, and the NZ form is what
    to_nz-style indexing says: element (r, c) at [c // 16, r, c % 16]."""
    assert main(["run", str(ROOT / "examples" / "matmul_nd2nz_nz2nd.toml"), "-o", str(tmp_path), "-q"]) == 0
    x = np.fromfile(tmp_path / "input" / "xGm.bin", np.uint16).reshape(48, 64)
    y = np.fromfile(tmp_path / "output" / "yGm.bin", np.uint16).reshape(48, 64)
    nz = np.fromfile(tmp_path / "output" / "nzGm.bin", np.uint16).reshape(4, 48, 16)
    assert np.array_equal(x, y)
    assert np.array_equal(nz, x.reshape(48, 4, 16).transpose(1, 0, 2))


def test_pad_example_fills_with_the_set_pad_value(tmp_path):
    assert main(["run", str(ROOT / "examples" / "pad_row_copy.toml"), "-o", str(tmp_path), "-q"]) == 0
    x = np.fromfile(tmp_path / "input" / "xGm.bin", np.float16).reshape(6, 37)
    tile = np.fromfile(tmp_path / "output" / "tileGm.bin", np.float16).reshape(6, 48)
    y = np.fromfile(tmp_path / "output" / "yGm.bin", np.float16).reshape(6, 37)
    assert np.array_equal(tile[:, :37].view(np.uint16), x.view(np.uint16))
    assert np.array_equal(tile[:, 37:], np.full((6, 11), -1, np.float16))
    assert np.array_equal(y.view(np.uint16), x.view(np.uint16))


def test_the_check_fails_on_a_wrong_byte_or_mask(tmp_path):
    """The oracle comparison can fail: one flipped data bit or mask entry is caught."""
    path = ROOT / "examples" / "pad_row_copy.toml"
    assert main(["run", str(path), "-o", str(tmp_path), "-q"]) == 0
    prog = load_case(path).point(0)
    check_folder(prog, tmp_path)
    golden = tmp_path / "output" / "tileGm.bin"
    good = golden.read_bytes()
    golden.write_bytes(good[:100] + bytes([good[100] ^ 1]) + good[101:])
    with pytest.raises(AssertionError, match="bytes differ"):
        check_folder(prog, tmp_path)
    golden.write_bytes(good)
    mask = tmp_path / "output" / "yGm.mask.bin"
    m = mask.read_bytes()
    mask.write_bytes(bytes([0]) + m[1:])
    with pytest.raises(AssertionError, match="mask differs"):
        check_folder(prog, tmp_path)


def test_matmul_operands_example_holds_zz_and_zn(tmp_path):
    import fastcopy as fc

    assert main(["run", str(ROOT / "examples" / "matmul_operands_l0.toml"), "-o", str(tmp_path), "-q"]) == 0
    a = np.fromfile(tmp_path / "input" / "aGm.bin", np.float16).reshape(32, 48)
    b = np.fromfile(tmp_path / "input" / "bGm.bin", np.float16).reshape(48, 32)
    a2 = np.fromfile(tmp_path / "output" / "a2.bin", np.float16)
    b2 = np.fromfile(tmp_path / "output" / "b2.bin", np.float16)
    assert np.array_equal(a2.view(np.uint16), fc.to_zz(a).reshape(-1).view(np.uint16))
    assert np.array_equal(b2.view(np.uint16), fc.to_zn(b).reshape(-1).view(np.uint16))


def test_conv_img2col_example_is_the_img2col_matrix(tmp_path):
    import fastcopy as fc

    assert main(["run", str(ROOT / "examples" / "conv_img2col.toml"), "-o", str(tmp_path), "-q"]) == 0
    x = fc.from_zz(np.fromfile(tmp_path / "output" / "golden.bin", np.float16), (48, 144))
    fmap = np.arange(576, dtype=np.float16).reshape(6, 6, 16).transpose(2, 0, 1)  # the arange NC1HWC0 map as CHW
    want = fc.img2col(fmap, 3, pad=1, pad_value=-1)
    assert np.array_equal(x[:36].view(np.uint16), want.view(np.uint16))

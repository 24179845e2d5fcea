"""Case files with the cube-out APIs: Mmad (bias overload), Fixpipe (every params struct, workspace, config, dual
UB destination), DataCopy out of L0C (DataCopyCO12DstParams, 310P DataCopyEnhancedParams) and the state setters.

Each new step is run from a case and compared with the same Python calls; each schema rule has its error test
(one line naming the step, field, value and what is allowed)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import fastcopy as fc
from fastcopy import TPosition as P
from fastcopy.cli import main
from fastcopy.cube.quant import make_word
from fastcopy.golden import case_from_dict, run_program
from fastcopy.golden.schema import CaseError


def _doc(product, buffers, ops, outputs):
    return {"product": product, "buffers": buffers, "ops": ops, "outputs": outputs}


def _run(doc):
    """Run ``doc``, and check its round trip: every op's recorded parameters and operands (what the manifest
    holds) fed back as a case compile to the same ops and give the same bytes."""
    prog = case_from_dict(doc).point(0)
    res = run_program(prog)
    again = []
    for op in prog.ops:
        rec = {"api": op.api, **{k: str(r) for k, r in op.operand_refs()}}
        if op.args or op.kwargs:
            rec["params"] = json.loads(json.dumps(op.params_dict()))  # as the manifest stores it
        again.append(rec)
    prog2 = case_from_dict({**doc, "ops": again}).point(0)
    for o1, o2 in zip(prog.ops, prog2.ops, strict=True):
        assert (o1.api, o1.dst, o1.src, o1.args, o1.kwargs, o1.operands, o1.writes) == \
               (o2.api, o2.dst, o2.src, o2.args, o2.kwargs, o2.operands, o2.writes)
    res2 = run_program(prog2)
    for name, (data, mask) in res.outputs.items():
        assert np.array_equal(data.view(np.uint8), res2.outputs[name][0].view(np.uint8))
        assert np.array_equal(mask, res2.outputs[name][1])
    return res


def _out(res, name):
    return res.outputs[name][0]


L0C_F = {"position": "CO1", "dtype": "float", "count": 256, "init": {"kind": "uniform", "low": -2.0, "high": 2.0}}
L0C_I = {"position": "CO1", "dtype": "int32_t", "count": 256, "init": {"kind": "integers", "low": -300, "high": 300}}


def _l0c(pipe, res, name="l0c", dtype="float"):
    t = pipe.alloc(P.CO1, dtype, res.program.buffer(name).size)
    t[...] = _input(res, name)
    return t


def _input(res, name):
    from fastcopy.golden.inputs import generate

    prog = res.program
    return generate(prog.buffer(name), prog.seed).reshape(-1)


# --------------------------------------------------------------------------------------------- round trips
def test_mmad_with_bias_matches_the_python_call():
    doc = _doc("ATLAS_A2", {
        "a2": {"position": "A2", "dtype": "half", "count": 256, "init": {"kind": "uniform"}},
        "b2": {"position": "B2", "dtype": "half", "count": 256, "init": {"kind": "uniform"}},
        "bias": {"position": "C2", "dtype": "float", "count": 16, "init": {"kind": "arange"}},
        "c1": {"position": "CO1", "dtype": "float", "count": 256},
    }, [{"api": "Mmad", "dst": "c1", "fm": "a2", "filter": "b2", "bias": "bias",
         "params": {"MmadParams": {"m": 16, "n": 16, "k": 16, "cmatrixInitVal": False}}}], ["c1"])
    res = _run(doc)
    assert res.program.ops[0].title() == "ops[0] Mmad(c1, a2, b2, bias)"
    pipe = fc.TPipe("ATLAS_A2")
    a2, b2 = pipe.alloc(P.A2, "half", 256), pipe.alloc(P.B2, "half", 256)
    bias, c1 = pipe.alloc(P.C2, "float", 16), pipe.alloc(P.CO1, "float", 256)
    a2[...], b2[...], bias[...] = _input(res, "a2"), _input(res, "b2"), _input(res, "bias")
    fc.Mmad(c1, a2, b2, bias, fc.MmadParams(16, 16, 16, cmatrixInitVal=False))
    assert np.array_equal(_out(res, "c1").view(np.uint32), c1.numpy().view(np.uint32))


@pytest.mark.parametrize("struct", ["FixpipeParamsV220", "FixpipeParamsM300", "FixpipeParamsM310"])
def test_fixpipe_v220_structs_nz_to_l1(struct):
    doc = _doc("ATLAS_A2", {"l0c": L0C_F, "l1": {"position": "A1", "dtype": "half", "count": 256}},
               [{"api": "Fixpipe", "dst": "l1", "src": "l0c", "params": {
                   "config": "CFG_NZ", struct: {"nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 1,
                                                "quantPre": "QuantMode_t::F322F16", "reluEn": True}}}], ["l1"])
    res = _run(doc)
    pipe = fc.TPipe("ATLAS_A2")
    src, dst = _l0c(pipe, res), pipe.alloc(P.A1, "half", 256)
    fc.Fixpipe(dst, src, getattr(fc, struct)(nSize=16, mSize=16, srcStride=16, dstStride=1, quantPre="F322F16",
                                             reluEn=True), config=fc.CFG_NZ)
    assert np.array_equal(_out(res, "l1").view(np.uint16), dst.numpy().view(np.uint16))


def test_fixpipe_workspace_vector_quant():
    words = [make_word(0.5 + j / 64, offset=j - 8, sign=True) for j in range(16)]
    doc = _doc("ATLAS_A2", {"l0c": L0C_I, "ws": {"position": "C1", "dtype": "uint64_t", "count": 16,
                                                 "init": {"kind": "values", "values": words}},
                            "out": {"dtype": "int8_t", "shape": [16, 16]}},
               [{"api": "Fixpipe", "dst": "out", "src": "l0c", "cbufWorkspace": "ws", "params": {
                   "FixpipeParamsV220": {"nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 16,
                                         "quantPre": "VREQ8"}}}], ["out"])
    res = _run(doc)
    assert res.program.ops[0].title() == "ops[0] Fixpipe(out, l0c, ws)"
    pipe = fc.TPipe("ATLAS_A2")
    src, ws = _l0c(pipe, res, dtype="int32_t"), pipe.alloc(P.C1, "uint64_t", 16)
    ws[...] = np.array(words, np.uint64)
    out = np.zeros((16, 16), np.int8)
    fc.Fixpipe(fc.GlobalTensor(out), src, ws, fc.FixpipeParamsV220(16, 16, 16, 16, quantPre="VREQ8"))
    assert np.array_equal(_out(res, "out"), out)


@pytest.mark.parametrize("struct", ["FixpipeParamsArch3510", "FixpipeParamsC310"])
def test_fixpipe_arch3510_nz2nd_with_a_scale_word_table(struct):
    word = {"scale": 0.25, "offset": 2, "sign": True}
    doc = _doc("ATLAS_350", {"l0c": {**L0C_F, "count": 512}, "out": {"dtype": "int8_t", "shape": [2, 16, 16]}},
               [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {struct: {
                   "nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 16, "quantPre": "QF322B8_PRE",
                   "deqScalar": word, "params": {"Nz2NdParams": {"ndNum": 2, "srcNdStride": 16,
                                                                 "dstNdStride": 256}}}}}], ["out"])
    res = _run(doc)
    pipe = fc.TPipe("ATLAS_350")
    src = _l0c(pipe, res)
    out = np.zeros((2, 16, 16), np.int8)
    fc.Fixpipe(fc.GlobalTensor(out), src, getattr(fc, struct)(
        nSize=16, mSize=16, srcStride=16, dstStride=16, quantPre="QF322B8_PRE",
        deqScalar=make_word(0.25, offset=2, sign=True), params=fc.Nz2NdParams(2, 16, 256)))
    assert np.array_equal(_out(res, "out"), out)
    assert json.loads(json.dumps(res.program.ops[0].params_dict(), default=str))  # recordable in a manifest


def test_fixpipe_dual_ub_destination():
    doc = _doc("ATLAS_350", {"l0c": L0C_F, "ub0": {"position": "VECIN", "dtype": "float", "count": 128},
                             "ub1": {"position": "VECOUT", "dtype": "float", "count": 128}},
               [{"api": "Fixpipe", "dst": "ub0", "src": "l0c", "dst1": "ub1", "params": {
                   "config": {"format": "ROW_MAJOR", "isToUB": True},
                   "FixpipeParamsArch3510": {"nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 16,
                                             "dualDstCtl": 1}}}], ["ub0", "ub1"])
    res = _run(doc)
    op = res.program.ops[0]
    assert op.title() == "ops[0] Fixpipe(ub0, l0c, dst1=ub1)" and set(op.writes) == {"ub0", "ub1"}
    src = _input(res, "l0c").reshape(16, 16)  # one fractal: element (i, j) at i*16 + j
    assert np.array_equal(_out(res, "ub0"), src[:8].reshape(-1))
    assert np.array_equal(_out(res, "ub1"), src[8:].reshape(-1))


def test_datacopy_co12_with_state_setters():
    word = make_word(0.5)
    doc = _doc("ATLAS_A2", {"l0c": L0C_I, "out": {"dtype": "half", "shape": [2, 16, 16]}, "l0c2": L0C_I},
               [{"api": "SetFixpipeNz2ndFlag", "params": {"ndNum": 2, "srcNdStride": 1, "dstNdStride": 256}},
                {"api": "SetFixpipePreQuantFlag", "params": {"config": {"scale": 0.5}}},
                {"api": "DataCopy", "dst": "out", "src": "l0c", "params": {"DataCopyCO12DstParams": {
                    "nSize": 16, "mSize": 16, "dstStride": 16, "srcStride": 16, "quantPre": "DEQF16",
                    "nz2ndEn": True}}}], ["out"])
    doc["buffers"]["l0c"] = {**L0C_I, "count": 768}
    del doc["buffers"]["l0c2"]
    res = _run(doc)
    pipe = fc.TPipe("ATLAS_A2")
    src = _l0c(pipe, res, dtype="int32_t")
    out = np.zeros((2, 16, 16), np.float16)
    fc.SetFixpipeNz2ndFlag(2, 1, 256, pipe=pipe)
    fc.SetFixpipePreQuantFlag(word, pipe=pipe)
    fc.DataCopy(fc.GlobalTensor(out), src, fc.DataCopyCO12DstParams(16, 16, 16, 16, "DEQF16", nz2ndEn=True))
    assert np.array_equal(_out(res, "out").view(np.uint16), out.view(np.uint16))


def test_fixpipe_buffer_table_for_a_vector_mode():
    """The Fixpipe-buffer form: L1 -> Fixpipe buffer (C2PIPE2GM) DataCopy, SetFixPipeConfig, DataCopy VDEQF16."""
    words = [make_word(2.0 ** -(j % 4)) for j in range(16)]
    doc = _doc("ATLAS_A2", {
        "l0c": L0C_I, "out": {"dtype": "half", "shape": [16, 16]},
        "tab": {"position": "C1", "dtype": "uint64_t", "count": 16, "init": {"kind": "values", "values": words}},
        "fb": {"position": "C2PIPE2GM", "dtype": "uint64_t", "count": 16}},
        [{"api": "DataCopy", "dst": "fb", "src": "tab", "params": {"count": 16}},
         {"api": "SetFixPipeConfig", "preData": "fb"},
         {"api": "SetFixpipeNz2ndFlag", "params": {"ndNum": 1, "srcNdStride": 0, "dstNdStride": 0}},
         {"api": "DataCopy", "dst": "out", "src": "l0c", "params": {"DataCopyCO12DstParams": {
             "nSize": 16, "mSize": 16, "dstStride": 16, "srcStride": 16, "quantPre": "VDEQF16", "nz2ndEn": True}}}],
        ["out"])
    res = _run(doc)
    assert res.program.ops[1].title() == "ops[1] SetFixPipeConfig(quantPre=fb)"
    x = _input(res, "l0c").reshape(16, 16).astype(np.float64)
    scale = np.array([2.0 ** -(j % 4) for j in range(16)])
    assert np.array_equal(_out(res, "out"), (x * scale).astype(np.float16))


def test_datacopy_enhanced_310p_warns_provisional():
    doc = _doc("ATLAS_INFERENCE_AICORE", {"l0c": L0C_F, "ub": {"position": "VECIN", "dtype": "float", "count": 256}},
               [{"api": "DataCopy", "dst": "ub", "src": "l0c", "params": {
                   "DataCopyParams": {"blockCount": 1, "blockLen": 1},
                   "DataCopyEnhancedParams": {"blockMode": "BlockMode::BLOCK_MODE_MATRIX"}}}], ["ub"])
    res = _run(doc)
    assert any("rovisional" in w or "PROVISIONAL" in w for w in res.warnings[0])
    assert np.array_equal(_out(res, "ub"), _input(res, "l0c"))


def test_state_setters_hf32_overflow_and_compute_order():
    a = {"position": "A2", "dtype": "float", "count": 128, "init": {"kind": "uniform"}}
    b = {"position": "B2", "dtype": "float", "count": 128, "init": {"kind": "uniform"}}
    mm = {"api": "Mmad", "dst": "c1", "a": "a2", "b": "b2", "params": {"MmadParams": {"m": 16, "n": 16, "k": 8}}}
    bufs = {"a2": a, "b2": b, "c1": {"position": "CO1", "dtype": "float", "count": 256}}
    plain = _out(_run(_doc("ATLAS_A2", bufs, [mm], ["c1"])), "c1")
    setters = [{"api": "SetHF32Mode", "params": {"mode": "HF32Mode::ENABLE"}},
               {"api": "SetHF32TransMode", "params": {"mode": True}},
               {"api": "AscendCUtils::SetOverflow", "params": {"v": 0}},
               {"api": "SetMMRowMajor"}, {"api": "SetMMColumnMajor"}]
    res = _run(_doc("ATLAS_A2", bufs, setters + [mm], ["c1"]))
    pipe = fc.TPipe("ATLAS_A2")
    a2, b2, c1 = pipe.alloc(P.A2, "float", 128), pipe.alloc(P.B2, "float", 128), pipe.alloc(P.CO1, "float", 256)
    a2[...], b2[...] = _input(res, "a2"), _input(res, "b2")
    fc.SetHF32Mode(fc.HF32Mode.ENABLE, pipe=pipe)
    fc.SetHF32TransMode(fc.HF32TransMode.NEAREST_ZERO, pipe=pipe)
    fc.AscendCUtils.SetOverflow(0, pipe=pipe)
    fc.Mmad(c1, a2, b2, fc.MmadParams(16, 16, 8))
    assert np.array_equal(_out(res, "c1").view(np.uint32), c1.numpy().view(np.uint32))
    assert not np.array_equal(plain, _out(res, "c1"))  # HF32 rounding took effect


def test_310b_clip_relu_and_eltwise_setters_run():
    doc = _doc("ATLAS_200I_500_A2", {"e": {"position": "A1", "dtype": "half", "count": 256},
                                     "l0c": L0C_F, "out": {"dtype": "float", "shape": [256]}},
               [{"api": "SetFixPipeClipRelu", "params": {"config": 0x3C00}},
                {"api": "SetFixPipeAddr", "eleWiseData": "e", "params": {"c0ChStride": 16}},
                {"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsM300": {
                    "nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 16}}}], ["out"])
    res = _run(doc)
    assert res.program.ops[1].title() == "ops[1] SetFixPipeAddr(eleWiseData=e)"
    assert np.array_equal(_out(res, "out"), _input(res, "l0c").reshape(16, 16).reshape(-1))


def test_arch3510_fields_round_trip_through_the_manifest_record():
    """Every Arch3510 field kind (scale word table, ReluMode name, nested Nz2NdParams) and the value-less setters
    compile back from what the manifest records (``_run`` checks the round trip)."""
    doc = _doc("ATLAS_350", {"l0c": {**L0C_F, "count": 512}, "out": {"dtype": "int8_t", "shape": [2, 16, 16]}},
               [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsC310": {
                   "nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 16, "quantPre": "QF322B8_PRE",
                   "deqScalar": {"scale": 0.25}, "preReluMode": "NO_RELU", "preClipReluMode": "NOCLIP_RELU",
                   "params": {"Nz2NdParams": {"ndNum": 2, "srcNdStride": 16, "dstNdStride": 256}}}}},
                {"api": "SetHF32Mode", "params": {"mode": False}},
                {"api": "SetOverflow", "params": {"v": 1}},
                {"api": "SetFixpipePreQuantFlag", "params": {"config": 1056964608}}], ["out"])
    res = _run(doc)
    assert res.program.ops[0].params_dict()["FixpipeParamsC310"]["params"] == {
        "Nz2NdParams": {"ndNum": 2, "srcNdStride": 16, "dstNdStride": 256}}


# --------------------------------------------------------------------------------------------- errors
BASE = {"l0c": L0C_F, "out": {"dtype": "half", "shape": [16, 16]}}
FP = {"nSize": 16, "mSize": 16, "srcStride": 16, "dstStride": 16, "quantPre": "F322F16"}


def _error(ops, buffers=None, product="ATLAS_A2", outputs=("out",)) -> str:
    with pytest.raises(CaseError) as exc:
        case_from_dict(_doc(product, buffers or BASE, ops, list(outputs)))
    text = str(exc.value)
    assert "\n" not in text
    return text


def _fixpipe(**fields):
    return [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsV220": {**FP, **fields}}}]


def test_error_quant_mode_typo_suggests_the_name():
    text = _error(_fixpipe(quantPre="F322F61"))
    assert "ops[0].params.FixpipeParamsV220.quantPre" in text
    assert "Fixpipe: FixpipeParamsV220.quantPre='F322F61' is not a QuantMode_t (did you mean 'F322F16'?)" in text
    assert "NoQuant" in text and "REQ8" in text


def test_error_quant_mode_not_text():
    text = _error(_fixpipe(quantPre=3))
    assert "quantPre=3 is not a QuantMode_t" in text


def test_error_relu_mode_name():
    ops = [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsArch3510": {
        **FP, "preReluMode": "NORMAL_RELUU"}}}]
    text = _error(ops, product="ATLAS_350")
    assert "preReluMode='NORMAL_RELUU'" in text and "did you mean 'NORMAL_RELU'" in text and "VECTOR_RELU" in text


def test_error_scale_word_table_field():
    text = _error(_fixpipe(quantPre="DEQF16", deqScalar={"scale": 0.5, "ofset": 3}))
    assert "deqScalar.ofset" in text and "did you mean 'offset'" in text


def test_error_scale_word_offset_range():
    text = _error(_fixpipe(quantPre="DEQF16", deqScalar={"scale": 0.5, "offset": 300}))
    assert "deqScalar.offset" in text and "300 is outside [-256, 255]" in text


def test_error_scale_word_subnormal_scale():
    text = _error(_fixpipe(quantPre="DEQF16", deqScalar={"scale": 1e-40}))
    assert "deqScalar.scale" in text and "not a normal float32" in text


def test_error_scale_word_out_of_uint64():
    text = _error(_fixpipe(quantPre="DEQF16", deqScalar=2**64))
    assert "deqScalar" in text and "quantisation word" in text


def test_error_nested_params_struct_name():
    ops = [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsArch3510": {
        **FP, "params": {"Nz2NdParam": {"ndNum": 1}}}}}]
    text = _error(ops, product="ATLAS_350")
    assert "FixpipeParamsArch3510.params" in text and "did you mean 'Nz2NdParams'" in text


def test_error_nested_params_field():
    ops = [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsArch3510": {
        **FP, "params": {"Nz2DnParams": {"dnNumm": 1}}}}}]
    text = _error(ops, product="ATLAS_350")
    assert "params.Nz2DnParams.dnNumm" in text and "did you mean 'dnNum'" in text


def test_error_fixpipe_config_name():
    ops = [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"config": "CFG_NZZ",
                                                                      "FixpipeParamsV220": FP}}]
    text = _error(ops)
    assert "params.config" in text and "did you mean 'CFG_NZ'" in text and "CFG_COLUMN_MAJOR" in text


def test_error_fixpipe_config_to_ub_flag():
    ops = [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"config": {"format": "NZ", "isToUB": 1},
                                                                      "FixpipeParamsV220": FP}}]
    assert "isToUB=1: expected true or false" in _error(ops)


def test_error_mmad_missing_operand():
    bufs = {"a2": {"position": "A2", "dtype": "half", "count": 256}, "c1": L0C_F, "out": BASE["out"]}
    text = _error([{"api": "Mmad", "dst": "c1", "a": "a2", "params": {"MmadParams": {"m": 16}}}], bufs)
    assert "ops[0].b: missing key; expected the buffer name of Mmad's b operand" in text


def test_error_mmad_takes_no_src():
    bufs = {"a2": {"position": "A2", "dtype": "half", "count": 256}, "c1": L0C_F, "out": BASE["out"]}
    text = _error([{"api": "Mmad", "dst": "c1", "a": "a2", "b": "a2", "src": "a2",
                    "params": {"MmadParams": {"m": 16}}}], bufs)
    assert "ops[0].src: unknown key" in text and "bias" in text


def test_error_setter_takes_no_dst():
    text = _error([{"api": "SetFixpipePreQuantFlag", "dst": "out", "params": {"config": 1}}])
    assert "ops[0].dst" in text and "takes no tensors" in text


def test_error_setter_tensor_names_its_operands():
    text = _error([{"api": "SetFixPipeConfig", "dst": "out"}])
    assert "ops[0].dst: SetFixPipeConfig takes no dst; its tensors: reluPre, quantPre" in text


def test_error_hf32_mode_name():
    text = _error([{"api": "SetHF32Mode", "params": {"mode": "ENABEL"}}])
    assert "ops[0].params.mode" in text and "HF32Mode" in text and "did you mean 'ENABLE'" in text


def test_error_overflow_alias_unknown_api():
    text = _error([{"api": "SetOverflo", "params": {"v": 1}}])
    assert "unknown op 'SetOverflo'" in text and "did you mean 'SetOverflow'" in text


def test_error_block_mode_name():
    ops = [{"api": "DataCopy", "dst": "out", "src": "l0c", "params": {
        "DataCopyParams": {"blockCount": 1, "blockLen": 1}, "DataCopyEnhancedParams": {"blockMode": "MATRIX"}}}]
    text = _error(ops, product="ATLAS_INFERENCE_AICORE")
    assert "blockMode='MATRIX' is not a BlockMode" in text and "BLOCK_MODE_MATRIX" in text


def test_error_mmad_compare_rule_needs_input_operands():
    bufs = {**BASE, "aGm": {"dtype": "half", "shape": [16], "init": "uniform"}}
    with pytest.raises(CaseError) as exc:
        case_from_dict(_doc("ATLAS_A2", bufs, _fixpipe(), [{"buffer": "out", "compare": {"rule": "mmad",
                                                                                         "a": "aGm"}}]))
    assert "outputs[0].compare.b: missing key; compare rule 'mmad' needs" in str(exc.value)
    with pytest.raises(CaseError) as exc:
        case_from_dict(_doc("ATLAS_A2", bufs, _fixpipe(), [{"buffer": "out", "compare": {
            "rule": "mmad", "a": "aGm", "b": "l0c"}}]))
    assert "b='l0c' is a local buffer" in str(exc.value) and "aGm" in str(exc.value)
    with pytest.raises(CaseError) as exc:
        case_from_dict(_doc("ATLAS_A2", bufs, _fixpipe(), [{"buffer": "out", "compare": {
            "rule": "mmad", "a": "aGm", "b": "aGm", "transpose": True}}]))
    assert "compare.transpose: unknown key (did you mean 'transpose_" in str(exc.value)
    with pytest.raises(CaseError) as exc:
        case_from_dict(_doc("ATLAS_A2", bufs, _fixpipe(), [{"buffer": "out", "compare": {"rule": "mmadd"}}]))
    assert "unknown compare rule 'mmadd' (did you mean 'mmad'?)" in str(exc.value)


def test_check_reports_a_run_time_parameter_error_with_the_step(tmp_path, capsys):
    doc = _doc("ATLAS_A2", BASE, _fixpipe(nSize=5000), ["out"])
    f = tmp_path / "bad.json"
    f.write_text(json.dumps(doc))
    assert main(["check", str(f)]) == 1
    err = capsys.readouterr().err
    assert "ops[0] Fixpipe(out, l0c)" in err and "nSize=5000" in err
    assert "[at ops[0].params.FixpipeParamsV220.nSize]" in err


def test_error_scale_word_sign_not_bool():
    text = _error(_fixpipe(quantPre="DEQF16", deqScalar={"scale": 0.5, "sign": 1}))
    assert "ops[0].params.FixpipeParamsV220.deqScalar.sign" in text and "sign=1: expected true or false" in text


def test_error_nested_params_integer_range():
    ops = [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsArch3510": {**FP, "params": 300}}}]
    text = _error(ops, product="ATLAS_350")
    assert "FixpipeParamsArch3510.params: 300 is outside [0, 255]" in text and "Nz2NdParams or Nz2DnParams" in text


def test_error_nz2nd_flag_range():
    text = _error([{"api": "SetFixpipeNz2ndFlag", "params": {"ndNum": 70000, "srcNdStride": 0, "dstNdStride": 0}}])
    assert "ops[0].params.ndNum: 70000 is outside [0, 65535]" in text


def test_error_nz2nd_flag_missing_parameter():
    text = _error([{"api": "SetFixpipeNz2ndFlag", "params": {"ndNum": 1, "srcNdStride": 0}}])
    assert "SetFixpipeNz2ndFlag got ndNum, srcNdStride; expected params {ndNum, srcNdStride, dstNdStride}" in text


def test_error_mmad_rule_option_types():
    bufs = {**BASE, "aGm": {"dtype": "half", "shape": [16], "init": "uniform"}}
    for opt, want in (({"transpose_b": 1}, "transpose_b=1; expected true or false"),
                      ({"k_chunks": 16}, "expected a list of integers"),
                      ({"k0": 0}, "0 is outside [1, 64]")):
        with pytest.raises(CaseError) as exc:
            case_from_dict(_doc("ATLAS_A2", bufs, _fixpipe(), [{"buffer": "out", "compare": {
                "rule": "mmad", "a": "aGm", "b": "aGm", **opt}}]))
        assert want in str(exc.value) and "\n" not in str(exc.value)


def test_a_list_of_scale_word_tables_is_a_sweep():
    doc = _doc("ATLAS_A2", {"l0c": L0C_I, "out": {"dtype": "half", "shape": [16, 16]}},
               [{"api": "Fixpipe", "dst": "out", "src": "l0c", "params": {"FixpipeParamsV220": {
                   **FP, "quantPre": "DEQF16", "deqScalar": [{"scale": 0.5}, {"scale": 0.25}]}}}], ["out"])
    case = case_from_dict(doc)
    assert len(case) == 2
    half, quarter = (run_program(case.point(i)).outputs["out"][0].astype(np.float64) for i in range(2))
    assert np.array_equal(half, 2 * quarter)


def test_loaddata_3d_v1_step_matches_the_python_call():
    """img2col V1 (experimental, Atlas training series) as a case step: same bytes and the same warning."""
    fields = dict(padList=[1, 1, 1, 1], l1H=4, l1W=4, c1Index=0, fetchFilterW=0, fetchFilterH=0, leftTopW=-1,
                  leftTopH=-1, strideW=1, strideH=1, filterW=3, filterH=3, dilationFilterW=1, dilationFilterH=1,
                  jumpStride=1, repeatMode=0, repeatTime=1, cSize=0, padValue=0)
    doc = _doc("ATLAS_TRAINING", {"fmap": {"position": "A1", "dtype": "half", "count": 256,
                                           "init": {"kind": "arange"}},
                                  "a2": {"position": "A2", "dtype": "half", "count": 256}},
               [{"api": "LoadData", "dst": "a2", "src": "fmap", "params": {"LoadData3DParamsV1": fields}}], ["a2"])
    res = _run(doc)
    assert any("experimental" in w for w in res.warnings[0])
    pipe = fc.TPipe("ATLAS_TRAINING")
    fmap, a2 = pipe.alloc(P.A1, "half", 256), pipe.alloc(P.A2, "half", 256)
    fmap[...] = _input(res, "fmap")
    with pytest.warns(fc.FastCopyWarning):
        fc.LoadData(a2, fmap, fc.LoadData3DParamsV1(**{**fields, "padList": (1, 1, 1, 1)}))
    assert np.array_equal(_out(res, "a2").view(np.uint16), a2.numpy().view(np.uint16))
    assert np.array_equal(res.outputs["a2"][1].astype(bool), np.asarray(a2.defined()))


def test_every_cube_setter_and_struct_is_a_case_step():
    """A setter or params struct added to the cube is noticed here until case files accept it."""
    import fastcopy.cube.registers as registers
    import fastcopy.cube.state as state
    from fastcopy.golden.schema import APIS, T_FIELDS

    setters = {n for mod in (state, registers) for n in dir(mod) if n.startswith("Set") and callable(getattr(mod, n))}
    assert setters <= set(APIS), setters - set(APIS)
    in_forms = {k.rstrip("?") for spec in APIS.values() for form in spec.forms for k in form}
    in_forms |= {k for spec in APIS.values() for k in spec.keywords}  # IsResetLoad3dConfig
    nested = {n for kind, detail in T_FIELDS.values() if kind == "substruct" for n in detail}
    nested |= {"SliceInfo", "LoadData2dParams"}  # a list field's element; the 2dParams alias of LoadData2DParams
    structs = {n for n in fc.__all__ if isinstance(getattr(fc, n), type) and issubclass(getattr(fc, n), fc.ParamStruct)
               and n != "ParamStruct"}
    assert structs <= in_forms | nested, structs - in_forms - nested


def test_error_operand_and_its_alias_both_given():
    bufs = {"a2": {"position": "A2", "dtype": "half", "count": 256}, "c1": L0C_F, "out": BASE["out"]}
    text = _error([{"api": "Mmad", "dst": "c1", "a": "a2", "fm": "a2", "b": "a2",
                    "params": {"MmadParams": {"m": 16}}}], bufs)
    assert "ops[0].fm: Mmad: fm and a name the same operand; give one" in text

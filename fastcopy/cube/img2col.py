"""img2col: ``LoadData(dst, src, LoadData3DParamsV2 | LoadData3DParamsV2Pro)`` and ``LoadDataWithStride`` (L1 ->
L0A/L0B), and the ``img2col`` helper on numpy arrays.

The feature map in L1 is NC1HWC0 (one image): element ``(c1, h, w, c0)`` at element ``((c1*H + h)*W + w)*C0 + c0``;
``H, W`` and the padding come from the FMATRIX register. The img2col matrix ``X`` has one row per output pixel
(``m = ho*Wo + wo``) and columns ordered (C1, kernel row, kernel column, C0)::

    Kh = filterH + 256*filterSizeH ; Eh = (Kh-1)*dilationFilterH + 1 ; Ho = (H + top + bottom - Eh)//strideH + 1
    X[m][k] = L1(c1, ho*strideH - top + i*dilationH, wo*strideW - left + j*dilationW, c0)   (pad element outside)

The call loads ``Xs = X[mStartPt : +mExtension, kStartPt : +kExtension]`` and writes it as ``Zz(Xs)`` (L0A),
``Zz(Xs^T)`` (L0A, ``enTranspose``), ``Nz(Xs)`` / ``Nz(Xs^T)`` (Atlas 350 L0A) or ``Zn(Xs)`` (L0B); only the
elements of ``Xs`` are written. With ``L3D_RPT.repeatTime = R`` the R blocks (start moved by ``repeatStride`` 16-row
units along M in mode 0, C0 units along K in mode 1) form one large matrix placed the same way.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .. import config
from ..dtypes import ascend_name
from ..errors import CapacityError, OutOfBoundsError, ParamError, RangeError, UnsupportedError
from ..dma.run import execute
from ..ops.common import check_range, core_of
from ..dma.lower import make_plan
from ..dma.steps import Fill, Move
from ..products import LOAD3D_PATHS, LOAD3D_STRIDE_PATHS, Phys, Product
from . import fractal
from .b4 import is_b4
from .common import overlap_warning, start
from .params import LoadData3DParamsV2, LoadData3DParamsV2Pro
from .registers import (FMATRIX_L, L1_3D_SIZE, L3D_RPT, PADDING, RPT_DEFAULT, IsResetLoad3dConfig, check_pad_list,
                        fmatrix_value, pad_pattern, padding_register)
from .steps import element_steps

_350, _310P, _310B = Product.ATLAS_350, Product.ATLAS_INFERENCE_AICORE, Product.ATLAS_200I_500_A2
#: most elements one call may enumerate (far above any L0A/L0B tile)
MAX_ELEMENTS = 1 << 24


def output_size(H, W, pads, Kh, Kw, sh, sw, dh, dw) -> tuple:
    """``(Ho, Wo)`` of the img2col matrix (rows = Ho*Wo)."""
    left, right, top, bottom = pads
    eh, ew = (Kh - 1) * dh + 1, (Kw - 1) * dw + 1
    return (H + top + bottom - eh) // sh + 1, (W + left + right - ew) // sw + 1


def x_source(m, k, H, W, pads, C0, Kh, Kw, sh, sw, dh, dw, Wo):
    """Element index (NC1HWC0) of ``X[m][k]`` for integer arrays ``m``, ``k``; ``-1`` where it is padding."""
    left, _, top, _ = pads
    ho, wo = m // Wo, m % Wo
    c1 = k // (Kh * Kw * C0)
    i = (k // (Kw * C0)) % Kh
    j = (k // C0) % Kw
    c0 = k % C0
    h = ho * sh - top + i * dh
    w = wo * sw - left + j * dw
    inside = (h >= 0) & (h < H) & (w >= 0) & (w < W)
    return np.where(inside, ((c1 * H + h) * W + w) * C0 + c0, -1)


def placement(layout_rows: str, m, k, C0: int, pitch: int):
    """Element offset of ``Xs[m][k]`` in the destination image ``layout_rows``: "Zz", "Zz^T", "Nz", "Nz^T", "Zn"."""
    if layout_rows == "Zz":
        return fractal.offset("Zz", m, k, (16, C0), pitch)
    if layout_rows == "Zz^T":
        return fractal.offset("Zz", k, m, (16, C0), pitch)
    if layout_rows == "Nz":
        return fractal.offset("Nz", m, k, (16, C0), pitch)
    if layout_rows == "Nz^T":
        return fractal.offset("Nz", k, m, (16, C0), pitch)
    return fractal.offset("Zn", m, k, (C0, 16), pitch)


# -------------------------------------------------------------------------------------------- planner
def plan_load3d(dst, src, params, config=None, with_stride=False):
    """Plan a 3D load; writes the registers the call sets (``isSetFMatrix`` / ``isSetPadding``) first."""
    pro = isinstance(params, LoadData3DParamsV2Pro)
    api = ("LoadDataWithStride" if with_stride else "LoadData") + f"({type(params).__name__})"
    if not isinstance(params, (LoadData3DParamsV2, LoadData3DParamsV2Pro)) or (with_stride and pro):
        raise UnsupportedError(f"{api}: takes LoadData3DParamsV2" + ("" if with_stride else " or V2Pro"))
    pipe = core_of(api, dst, src)
    product = pipe.product
    state = pipe.state
    new, pre_warns = ({}, []) if pro else struct_registers(api, params, config, src, product)
    regs = {**{k: state.get(k) for k in (FMATRIX_L, PADDING, L3D_RPT, L1_3D_SIZE)}, **new}
    boundary = regs[L1_3D_SIZE] or 0
    plan = _plan(type(params), params.key(), src._sig, dst._sig, product, regs[FMATRIX_L],
                 regs[PADDING], regs[L3D_RPT], boundary, src.offset if boundary else 0, with_stride,
                 tuple(pre_warns))
    state.update(new)  # the registers the call writes, also when it moves nothing
    if not with_stride and product is _350 and plan.steps and regs[L3D_RPT] is not None:
        rpt = regs[L3D_RPT]
        state[L3D_RPT] = rpt[:3] + (plan_dst_stride(params, rpt),)
    return plan


def struct_registers(api: str, params, config, src, product) -> tuple:
    """``({register: value}, warnings)``: the registers a 3D load with ``l1H/l1W/padList/padValue`` fields writes
    before loading (``IsResetLoad3dConfig``: ``isSetFMatrix`` -> FMATRIX_L, ``isSetPadding`` -> PADDING)."""
    config = IsResetLoad3dConfig() if config is None else config
    if not isinstance(config, IsResetLoad3dConfig):
        raise UnsupportedError(f"{api}: config= takes IsResetLoad3dConfig, got {type(config).__name__}")
    params.check_types(api, product)
    new, warns = {}, []
    if config.isSetFMatrix:
        new[FMATRIX_L] = fmatrix_value(api, params.l1H, params.l1W, params.padList, product, lo=0)
    else:
        check_pad_list(api, params.padList, product)
    if config.isSetPadding:
        reg, warns = padding_register(api, params.padValue, src.dtype, product, "padValue") \
            if src.dtype.itemsize <= 4 else (0, [])
        new[PADDING] = reg
    return new, warns


def resolve_reads(api: str, srcb: np.ndarray, boundary: int, src_l1: int, padding, dtype, product) -> tuple:
    """``(source byte offsets, pad element bytes or None, warnings)`` of a 3D load's reads (``-1`` = padding):
    reads at or past the L1 ``boundary`` (bytes, 0 = none) wrap to the L1 start; padded positions need the
    PADDING register."""
    if boundary:
        absb = np.where(srcb >= 0, srcb + src_l1, -1)
        absb = np.where(absb >= boundary, absb - boundary, absb)
        srcb = np.where(srcb >= 0, absb - src_l1, -1)
        if (srcb < -1).any():
            raise OutOfBoundsError(f"{api}: with SetLoadDataBoundary({boundary}) some reads wrap to L1 bytes before "
                                   f"the source tensor (which starts at L1 byte {src_l1}) on {product}")
    if not (srcb < 0).any():
        return srcb, None, []
    if padding is None:
        raise ParamError(f"{api}: the PADDING register is read (padded positions are loaded) before it was "
                         f"written on {product}: call SetLoadDataPaddingValue first or load with "
                         "isSetPadding=true")
    pad, warns = pad_pattern(api, padding, dtype, product)
    return srcb, pad, warns


def plan_dst_stride(params, rpt) -> int:
    """The 350 LoadData (3D) pitch: ceil(kExtension/16) with enTranspose, else ceil(mExtension/16) (large sizes
    under repeat)."""
    g = _fields(params)
    R, mode = rpt[1], rpt[2]
    mext = g["mExtension"] * (R if mode == 0 else 1)
    kext = g["kExtension"] * (R if mode == 1 else 1)
    return -(-(kext if g["enTranspose"] else mext) // 16)


def _fields(p) -> dict:
    if isinstance(p, LoadData3DParamsV2Pro):
        e, f = p.extConfig, p.filterConfig
        return dict(channelSize=p.channelSize, enTranspose=p.enTranspose, enSmallK=p.enSmallK,
                    filterSizeW=p.filterSizeW, filterSizeH=p.filterSizeH, fMatrixCtrl=p.fMatrixCtrl,
                    kExtension=e & 0xFFFF, mExtension=(e >> 16) & 0xFFFF, kStartPt=(e >> 32) & 0xFFFF,
                    mStartPt=(e >> 48) & 0xFFFF, strideW=f & 0xFF, strideH=(f >> 8) & 0xFF,
                    filterW=(f >> 16) & 0xFF, filterH=(f >> 24) & 0xFF, dilationFilterW=(f >> 32) & 0xFF,
                    dilationFilterH=(f >> 40) & 0xFF)
    return p.as_dict()


@lru_cache(maxsize=2048)
def _plan(cls, pkey, src, dst, product, fmatrix, padding, rpt, boundary, src_l1, with_stride, pre_warns):
    api = ("LoadDataWithStride" if with_stride else "LoadData") + f"({cls.__name__})"
    p, call, on = start(api, cls, pkey, src, dst, product, LOAD3D_STRIDE_PATHS if with_stride else LOAD3D_PATHS)
    g = _fields(p)
    es = src.itemsize
    c0 = 32 // es
    warns = list(pre_warns)
    # ---- fields that must hold on every call
    if g["fMatrixCtrl"]:
        raise UnsupportedError(f"{api}: fMatrixCtrl=true (the right feature-map register) is not supported on "
                               f"{product}; only FMATRIX_LEFT is read")
    if g["enSmallK"]:
        raise UnsupportedError(f"{api}: enSmallK=true is not supported on {product} (the feature was withdrawn)")
    for f in ("strideW", "strideH"):
        check_range(api, f, g[f], 1, 63, "pixels", product)
    for f in ("dilationFilterW", "dilationFilterH"):
        check_range(api, f, g[f], 1, 255, "pixels", product)
    check_range(api, "mStartPt", g["mStartPt"], 0, 32767, "rows of the img2col matrix", product)
    transpose = g["enTranspose"]
    if transpose and dst.phys is Phys.L0B:
        warns.append(f"{api}: enTranspose=true is ignored on {on} (L0B always receives the Zn image)")
        transpose = False
    if transpose:
        allowed = {_350: (1, 2, 4), _310P: (2,)}.get(product, (2, 4))
        if es not in allowed:
            raise UnsupportedError(f"{api}: enTranspose=true is not supported for {ascend_name(src.dtype)} on {on} "
                                   f"(element sizes {', '.join(str(a) for a in allowed)} bytes only)")
    if is_b4(src.dtype):  # int4b_t: the K fields count 4-bit values; the load moves their bytes (halved fields)
        if g["channelSize"] % 64:
            raise UnsupportedError(f"{api}: channelSize={g['channelSize']} is not a multiple of C0=64 channels for "
                                   f"int4b_t on {product}: the small-channel L1 layouts are not emulated")
        for f in ("kStartPt", "kExtension"):
            if g[f] % 64:
                raise RangeError(f"{api}: {f}={g[f]} is not a multiple of C0=64 elements for int4b_t on {product}")
        g.update({f: g[f] // 2 for f in ("channelSize", "kStartPt", "kExtension")})
    if g["channelSize"] % c0:
        raise UnsupportedError(f"{api}: channelSize={g['channelSize']} is not a multiple of C0={c0} channels for "
                               f"{ascend_name(src.dtype)} on {product}: the small-channel L1 layouts are not emulated")
    if g["kStartPt"] % c0:
        raise RangeError(f"{api}: kStartPt={g['kStartPt']} is not a multiple of C0={c0} elements on {product}")
    if g["kExtension"] % c0:
        raise RangeError(f"{api}: kExtension={g['kExtension']} is not a multiple of C0={c0} elements on {product}")
    m16 = es <= 2 or product is _350
    if m16 and g["mExtension"] % 16:
        raise RangeError(f"{api}: mExtension={g['mExtension']} is not a multiple of 16 rows for "
                         f"{ascend_name(src.dtype)} on {product}")
    if (product is _350 or es == 1 or ascend_name(src.dtype) == "half") and g["mStartPt"] % 16:
        raise RangeError(f"{api}: mStartPt={g['mStartPt']} is not a multiple of 16 rows for "
                         f"{ascend_name(src.dtype)} on {product}")
    # ---- registers
    if fmatrix is None:
        raise ParamError(f"{api}: the FMATRIX register is read before it was written on {product}: call SetFmatrix "
                         "first or load with isSetFMatrix=true")
    if rpt is None:
        if product is _350:
            raise ParamError(f"{api}: {product} needs SetLoadDataRepeat (or SetLoadDataRepeatWithStride) before a "
                             "3D load: the repeat register has no default there")
        rpt = RPT_DEFAULT
    stride_r, R, mode, reg_dst_stride = rpt
    H, W, pads = fmatrix
    Kh = g["filterH"] + 256 * g["filterSizeH"]
    Kw = g["filterW"] + 256 * g["filterSizeW"]
    C1 = g["channelSize"] // c0
    mext, kext = g["mExtension"], g["kExtension"]
    if 0 in (H, W, g["channelSize"], kext, mext, Kh, Kw, R):
        return make_plan(api, (), src, dst, warns)  # no-op (registers set by the call are still written)
    if R > 1:
        warns.append(f"{api}: repeatTime={R} on {product} is experimental in fastcopy: the blocks form one large "
                     "matrix placed like a single call (inferred; check it on hardware)")
    sh, sw, dh, dw = g["strideH"], g["strideW"], g["dilationFilterH"], g["dilationFilterW"]
    Ho, Wo = output_size(H, W, pads, Kh, Kw, sh, sw, dh, dw)
    if Ho < 1 or Wo < 1:
        raise RangeError(f"{api}: the dilated filter ({Kh} x {Kw} taps, dilation {dh} x {dw}) does not fit the padded "
                         f"{H} x {W} feature map on {product} (Ho={Ho}, Wo={Wo})")
    u = (64 if product is _310B else 32) // es
    blocks = [(g["mStartPt"] + (r * stride_r * 16 if mode == 0 else 0),
               g["kStartPt"] + (r * stride_r * u if mode == 1 else 0)) for r in range(R)]
    kmax = C1 * Kh * Kw * c0
    for m0, k0 in blocks:
        if k0 + kext > kmax:
            raise RangeError(f"{api}: kStartPt + kExtension = {k0 + kext} is outside [0, {kmax}] columns "
                             f"(C1*Kh*Kw*C0 = {C1}*{Kh}*{Kw}*{c0}) on {product}")
    if max(b[0] for b in blocks) + mext > Ho * Wo:
        warns.append(f"{api}: rows up to {max(b[0] for b in blocks) + mext} go beyond the Ho*Wo = {Ho * Wo} output "
                     f"pixels on {product}; rows past the map continue the formula (mostly padding)")
    big_m = mext * (R if mode == 0 else 1)
    big_k = kext * (R if mode == 1 else 1)
    if big_m * big_k > MAX_ELEMENTS:
        raise CapacityError(f"{api}: {big_m} x {big_k} elements is more than one call can load on {product}")
    # ---- placement
    if dst.phys is Phys.L0B:
        layout, pitch = "Zn", -(-big_k // 16)
    elif product is _350:
        layout, pitch = ("Nz^T", -(-big_k // 16)) if transpose else ("Nz", -(-big_m // 16))
    else:
        layout, pitch = ("Zz^T", -(-big_m // c0)) if transpose else ("Zz", -(-big_k // c0))
    if product is _350:
        natural = pitch
        pitch = reg_dst_stride if with_stride else (-(-big_k // 16) if g["enTranspose"] else -(-big_m // 16))
        if dst.phys is Phys.L0B and pitch != natural:
            warns.append(f"{api}: the destination pitch is {pitch} fractals but the Zn image of {big_m} x {big_k} "
                         f"needs {natural} on {product}" + ("" if with_stride else
                                                             " (LoadData derives it from mExtension when "
                                                             "enTranspose=false)") + "; fastcopy writes with the pitch "
                         "the hardware uses")
    k_by_16 = layout in ("Zz^T", "Nz^T", "Zn")
    if es == 4 and (big_m % 16 or (k_by_16 and big_k % 16)):
        warns.append(f"{api}: the last fractals are only partly covered ({big_m} x {big_k} {ascend_name(src.dtype)} "
                     f"elements) on {product}: their other bytes are left untouched")
    # ---- element map
    mm = np.arange(big_m, dtype=np.int64)[:, None]
    kk = np.arange(big_k, dtype=np.int64)[None, :]
    if mode == 0:
        mx = np.array([b[0] for b in blocks], np.int64)[mm // mext] + mm % mext
        kx = g["kStartPt"] + kk
    else:
        mx = g["mStartPt"] + mm
        kx = np.array([b[1] for b in blocks], np.int64)[kk // kext] + kk % kext
    srce = x_source(mx, kx, H, W, pads, c0, Kh, Kw, sh, sw, dh, dw, Wo)
    dste = placement(layout, mm, kk, c0, pitch)
    srcb, pad, pwarns = resolve_reads(api, np.where(srce >= 0, srce * es, -1), boundary, src_l1, padding,
                                      src.dtype, product)
    warns += pwarns
    if pad is not None and is_b4(src.dtype) and any(pad):
        raise RangeError(f"{api}: the pad value of an int4b_t load must be 0 on {product}; the PADDING register "
                         f"holds 0x{pad.hex()}")
    steps, overlap = element_steps(np.broadcast_to(dste * es, srcb.shape), srcb, es, pad)
    if overlap:
        warns.append(overlap_warning(api, call) + f" (destination pitch {pitch} fractals)")
    return make_plan(api, steps, src, dst, warns, exact=overlap)


# ------------------------------------------------------------------------------------------- numpy helper
def img2col(fmap, kernel, stride=1, dilation=1, pad=0, pad_value=0, layout=None, c0=None, out=None):
    """The img2col matrix of one ``(C, H, W)`` feature map: ``X[m][k]`` with ``m = ho*Wo + wo`` and ``k`` over
    (C1, kernel row, kernel column, C0), channels padded with zeros to ``C1*C0`` (``C0 = 32 // itemsize``),
    positions outside the map = ``pad_value``. ``kernel``, ``stride``, ``dilation``: int or (h, w); ``pad``: int or
    (left, right, top, bottom). ``layout``: None for the ``(Ho*Wo, C1*Kh*Kw*C0)`` matrix, or "Zz" / "Nz" / "Zn"
    for its fractal image (what L0A / L0B hold after a LoadData of the whole matrix; rows padded to 16 with
    ``pad_value``-free zeros). ``out=``: a C-contiguous array of the result's shape and dtype."""
    from ..formats import _out, _raw

    a = np.ascontiguousarray(np.asarray(fmap))
    if a.ndim != 3:
        raise ParamError(f"img2col: fmap must be a (C, H, W) array, got shape {a.shape}")
    C, H, W = (int(x) for x in a.shape)
    es = a.dtype.itemsize
    if es not in (1, 2, 4):
        raise ParamError(f"img2col: {a.dtype} ({es} bytes) has no fractal layout; use a 1, 2 or 4-byte dtype")
    c0 = 32 // es if c0 is None else int(c0)
    kh, kw = _pair(kernel, "kernel")
    sh, sw = _pair(stride, "stride")
    dh, dw = _pair(dilation, "dilation")
    pads = (pad,) * 4 if isinstance(pad, (int, np.integer)) else tuple(int(v) for v in pad)
    if len(pads) != 4 or min(pads) < 0 or min(kh, kw, sh, sw, dh, dw) < 1:
        raise ParamError(f"img2col: kernel/stride/dilation must be >= 1 and pad 4 values >= 0 (left, right, top, "
                         f"bottom); got kernel={kernel}, stride={stride}, dilation={dilation}, pad={pad}")
    Ho, Wo = output_size(H, W, pads, kh, kw, sh, sw, dh, dw)
    if Ho < 1 or Wo < 1:
        raise ParamError(f"img2col: the dilated kernel does not fit the padded {H} x {W} map (Ho={Ho}, Wo={Wo})")
    C1 = -(-C // c0)
    M, K = Ho * Wo, C1 * kh * kw * c0
    pad_bytes = np.asarray(pad_value, a.dtype).tobytes()
    if layout is None:
        shape = (M, K)
    else:
        name = fractal.layout_name(layout)
        dims = fractal.fractal_dims(name, 8 * es) if c0 == 32 // es else None
        if dims is None:
            raise ParamError("img2col: layout= needs the default C0")
        shape = fractal.image_shape(name, M, K, dims)
    out = _out(out, shape, a.dtype, "img2col", a)
    # two passes on the shared kernels: (C, H, W) -> the NC1HWC0 map a kernel stages in L1 (channels zero-padded),
    # then the img2col gather from it, whose runs are whole C0 blocks of neighbouring taps
    scratch = _take_scratch(C1 * H * W * c0 * es).view(a.dtype)
    stage, gather, covered = _helper_plans(C, H, W, es, c0, kh, kw, sh, sw, dh, dw, pads,
                                           layout and fractal.layout_name(layout), pad_bytes, _raw(a)._sig,
                                           _raw(scratch)._sig, _raw(out)._sig)
    if covered:
        out[...] = 0  # fractal padding rows / columns of the image
    execute(stage, _raw(scratch), _raw(a))
    execute(gather, _raw(out), _raw(scratch))
    _keep_scratch(scratch)
    return out


#: staging buffers of :func:`img2col` kept for its next call (bytes -> free buffers; each call takes one for
#: itself): a fresh buffer costs its page faults on every call (~200 us of the 1 MiB map's ~800 us, measured)
_SCRATCH: dict = {}


def _take_scratch(nbytes: int) -> np.ndarray:
    free = _SCRATCH.get(nbytes)
    if free:
        try:
            return free.pop()
        except IndexError:  # (another thread took it)
            pass
    return _aligned(nbytes, np.uint8)


def _keep_scratch(buf: np.ndarray) -> None:
    if buf.nbytes > config.SCRATCH_KEEP_BYTES:
        return
    if len(_SCRATCH) > 8:
        _SCRATCH.clear()
    free = _SCRATCH.setdefault(buf.nbytes, [])
    if len(free) < 2:
        free.append(buf.view(np.uint8))


def _aligned(n: int, dtype) -> np.ndarray:
    """An uninitialised 1-d array whose data start on a 64-byte boundary (plans depend on the host address
    modulo 64)."""
    dt = np.dtype(dtype)
    raw = np.empty(n * dt.itemsize + 64, np.uint8)
    shift = -raw.ctypes.data % 64
    return raw[shift:shift + n * dt.itemsize].view(dt)


def _pair(v, what):
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    t = tuple(int(x) for x in v)
    if len(t) != 2:
        raise ParamError(f"img2col: {what}={v!r} must be an int or (h, w)")
    return t


def _stage_steps(C: int, HW: int, es: int, c0: int) -> tuple:
    """(C, H*W) -> (C1, H*W, C0), the channels of the last block past ``C`` zeros: per block of C0 channels a
    transpose of single elements (the layout kernel's shape), then the partial block and its zero fill."""
    full, rest = divmod(C, c0)
    block, row = c0 * HW * es, c0 * es
    steps = []
    if full:
        steps.append(Move((0,), (0,), es, ((full, block, block), (HW, es, row), (c0, HW * es, es))))
    if rest:
        steps.append(Move((full * block,), (full * block,), es, ((HW, es, row), (rest, HW * es, es))))
        steps.append(Fill((full * block + rest * es,), (c0 - rest) * es, ((HW, row),), b"\0" * es))
    return tuple(steps)


@lru_cache(maxsize=64)
def _helper_plans(C, H, W, es, c0, kh, kw, sh, sw, dh, dw, pads, layout, pad_bytes, src_sig, mid_sig, dst_sig):
    C1 = -(-C // c0)
    stage = make_plan("img2col", _stage_steps(C, H * W, es, c0), src_sig, mid_sig)
    # pass 2: X[m][k] from the NC1HWC0 map, the pad value outside it
    Ho, Wo = output_size(H, W, pads, kh, kw, sh, sw, dh, dw)
    M, K = Ho * Wo, C1 * kh * kw * c0
    m = np.arange(M, dtype=np.int64)
    steps = ()
    if layout is None and dw == 1:  # the pixels whose every tap is inside the map: one strided Move
        steps, m = _interior(H, W, c0, C1, kh, kw, sh, sw, dh, pads, Ho, Wo, es)
    m = m[:, None]
    k = np.arange(K, dtype=np.int64)[None, :]
    srce = x_source(m, k, H, W, pads, c0, kh, kw, sh, sw, dh, dw, Wo)
    if layout is None:
        dste = m * K + k
        covered = False
    else:
        dims = fractal.fractal_dims(layout, 8 * es)
        dste = fractal.offset(layout, m, k, dims, fractal.min_pitch(layout, M, K, dims))
        covered = M * K < math.prod(fractal.image_shape(layout, M, K, dims))
    steps += element_steps(dste * es + 0 * srce, np.where(srce >= 0, srce * es, -1), es, pad_bytes)[0]
    return stage, make_plan("img2col", steps, mid_sig, dst_sig), covered


def _interior(H, W, c0, C1, kh, kw, sh, sw, dh, pads, Ho, Wo, es):
    """The img2col rows (a ``(Ho, Wo)`` rectangle of output pixels) whose taps all lie inside the map, as one Move
    (output pixel row, pixel, C1 block, kernel row; each burst the ``kw`` neighbouring C0 blocks of one kernel
    row, contiguous in the NC1HWC0 map when ``dilationW == 1``), and the other rows (the border), for the
    element map. Returns ``(steps, border rows)``."""
    left, _, top, _ = pads
    ho0, wo0 = -(-top // sh), -(-left // sw)
    ho1 = min(Ho, max(0, (H - 1 + top - (kh - 1) * dh) // sh + 1))
    wo1 = min(Wo, max(0, (W - 1 + left - (kw - 1)) // sw + 1))
    m = np.arange(Ho * Wo, dtype=np.int64)
    if ho1 <= ho0 or wo1 <= wo0:
        return (), m
    blk, row = c0 * es, C1 * kh * kw * c0 * es  # a C0 block, an output row (bytes)
    src0 = ((ho0 * sh - top) * W + wo0 * sw - left) * blk
    step = Move((src0,), ((ho0 * Wo + wo0) * row,), kw * blk,
                ((ho1 - ho0, sh * W * blk, Wo * row), (wo1 - wo0, sw * blk, row), (C1, H * W * blk, kh * kw * blk),
                 (kh, dh * W * blk, kw * blk)))
    ho, wo = m // Wo, m % Wo
    return (step,), m[~((ho >= ho0) & (ho < ho1) & (wo >= wo0) & (wo < wo1))]


__all__ = ["plan_load3d", "struct_registers", "resolve_reads", "img2col", "x_source", "output_size",
           "placement"]

"""fastcopy: exact, fast CPU emulation of the Ascend C data-movement instructions.

Kernel code transcribes line by line::

    pipe = TPipe(product="ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "half", 512)
    DataCopy(x, GlobalTensor(src_array), 512)
"""

__version__ = "0.1.0"

import sys as _sys
import types as _types

from .lazy import package_getattr as _package_getattr
from .lazy import paused_collector as _paused_collector

# (numpy, ml_dtypes and fastcopy's modules import with the cyclic collector paused: lazy.paused_collector)
with _paused_collector():
    # numpy first, from here: imported from deeper (through ml_dtypes' extension module, as dtypes.py would), its
    # import's calls and returns crossed a boundary of the interpreter's 16 KiB frame-stack chunks ~300 times in
    # `python -m fastcopy` and the console script, and CPython 3.11 maps and unmaps a chunk at every crossing
    # (~15 ms of a ~0.12 s start-up; docs/batch.md, "Session of 15:30-17:35 UTC")
    import numpy as _numpy

    del _numpy  # (imported for its side effect: loaded from here)

    from . import apidoc as _apidoc
    from .api import (DataCopy, DataCopyPad, Fixpipe, LoadData, LoadDataWithStride, LoadDataWithTranspose,
                      ResetLoopModePara, SetLoopModePara, SetPadValue, from_nz, to_nz)
    from .cube.fpconfig import CFG_COLUMN_MAJOR, CFG_NZ, CFG_ROW_MAJOR, CO2Layout, FixpipeConfig
    from .dtypes import as_dtype
    from .errors import (AlignmentError, CapacityError, FastCopyError, FastCopyWarning, OutOfBoundsError, ParamError,
                         ParamTypeError, RangeError, UnsupportedError)
    from .formats import nd2nz_params, nz2nd_params
    from .memory import GlobalTensor, LocalTensor, TPipe, current_pipe
    from .ops.loopmode import DataCopyMVType
    from .ops.pad import PaddingMode
    from .params import (DataCopyExtParams, DataCopyPadExtParams, DataCopyPadParams, DataCopyParams, Field,
                         LoopModeParams, Nd2NzParams, Nz2NdParamsFull, ParamStruct, SliceInfo)
    from .products import Phys, Product, TPosition

    _apidoc.document(DataCopy, DataCopyPad)

#: public names loaded on first use (``import fastcopy`` loads what a first DataCopy needs, not the cube path, the
#: pictures or the golden-data tools): name -> the module defining it (a trailing ":" names a module itself)
_LAZY = {
    **dict.fromkeys(("BlockMode", "DataCopyEnhancedParams", "DeqScale"), "fastcopy.cube.enhanced"),
    "DataCopyCO12": "fastcopy.cube.fixpipe",
    **dict.fromkeys(("decode_hif8", "encode_hif8"), "fastcopy.cube.hif8"),
    "Mmad": "fastcopy.cube.mmad",
    **dict.fromkeys(("DataCopyCO12DstParams", "FixpipeParamsArch3510", "FixpipeParamsC310", "FixpipeParamsM300",
                     "FixpipeParamsM310", "FixpipeParamsV220", "MmadParams", "Nz2DnParams", "Nz2NdParams"),
                    "fastcopy.cube.outparams"),
    "QuantMode_t": "fastcopy.cube.quant",
    **dict.fromkeys(("AscendCUtils", "HF32Mode", "HF32TransMode", "SetFixPipeAddr", "SetFixPipeClipRelu",
                     "SetFixPipeConfig", "SetFixpipeNz2ndFlag", "SetFixpipePreQuantFlag", "SetHF32Mode",
                     "SetHF32TransMode", "SetMMColumnMajor", "SetMMRowMajor"), "fastcopy.cube.state"),
    **dict.fromkeys(("fractal_shape", "from_fractal", "from_zn", "from_zz", "to_fractal", "to_zn", "to_zz"),
                    "fastcopy.cube.images"),
    **dict.fromkeys(("pack4", "unpack4"), "fastcopy.cube.b4"),
    "img2col": "fastcopy.cube.img2col",
    **dict.fromkeys(("FmatrixMode", "IsResetLoad3dConfig", "SetFmatrix", "SetLoadDataBoundary",
                     "SetLoadDataPaddingValue", "SetLoadDataRepeat", "SetLoadDataRepeatWithStride"),
                    "fastcopy.cube.registers"),
    **dict.fromkeys(("Dn2NzParams", "LoadData2dParams", "LoadData2DParams", "LoadData2DParamsV2",
                     "LoadData2dTransposeParams", "LoadData2dTransposeParamsV2", "LoadData3DParamsV1",
                     "LoadData3DParamsV2", "LoadData3DParamsV2Pro", "LoadDataRepeatParam",
                     "LoadDataRepeatParamWithStride"), "fastcopy.cube.params"),
    "slice_infos": "fastcopy.slicing",
    "explain": "fastcopy.explain",
    # subpackages and modules, as attributes of the package
    **{m: f"fastcopy.{m}:" for m in ("cube", "golden", "testing", "reference", "kernels", "cli")},
}
__getattr__, __dir__ = _package_getattr(__name__, globals(), _LAZY)


class _Package(_types.ModuleType):
    """The package's module type: importing the subpackage ``fastcopy.explain`` (the CLI does) must not replace
    the function ``fastcopy.explain`` with the subpackage (the import system binds a submodule on its parent)."""

    def __setattr__(self, name, value):
        if name == "explain" and isinstance(value, _types.ModuleType):
            return  # (the function is bound on first read, by __getattr__)
        super().__setattr__(name, value)


_sys.modules[__name__].__class__ = _Package

__all__ = [
    # Ascend C API: the cube's compute and output side
    "Mmad", "MmadParams", "Fixpipe", "QuantMode_t", "encode_hif8", "decode_hif8",
    "FixpipeParamsV220", "FixpipeParamsM300", "FixpipeParamsM310",
    "FixpipeParamsArch3510", "FixpipeParamsC310", "Nz2NdParams", "Nz2DnParams", "FixpipeConfig", "CO2Layout",
    "CFG_NZ", "CFG_ROW_MAJOR", "CFG_COLUMN_MAJOR", "DataCopyCO12DstParams", "DataCopyEnhancedParams", "BlockMode", "DeqScale", "SetHF32Mode", "SetHF32TransMode",
    "HF32Mode", "HF32TransMode", "AscendCUtils", "SetFixpipePreQuantFlag", "SetFixpipeNz2ndFlag", "SetFixPipeConfig",
    "SetFixPipeClipRelu", "SetFixPipeAddr", "SetMMRowMajor", "SetMMColumnMajor",
    # Ascend C API
    "DataCopy", "DataCopyPad", "SetPadValue", "SetLoopModePara", "ResetLoopModePara",
    "DataCopyParams", "DataCopyExtParams", "DataCopyPadExtParams", "DataCopyPadParams", "Nd2NzParams",
    "Nz2NdParamsFull", "SliceInfo", "LoopModeParams", "PaddingMode", "DataCopyMVType",
    "GlobalTensor", "LocalTensor", "TPipe", "TPosition",
    "LoadData", "LoadDataWithTranspose", "LoadData2DParams", "LoadData2dParams", "LoadData2DParamsV2",
    "LoadData2dTransposeParams", "LoadData2dTransposeParamsV2", "Dn2NzParams", "LoadData3DParamsV1", "LoadData3DParamsV2",
    "LoadData3DParamsV2Pro", "LoadDataRepeatParam", "LoadDataRepeatParamWithStride", "LoadDataWithStride",
    "SetFmatrix", "SetLoadDataPaddingValue", "SetLoadDataBoundary", "SetLoadDataRepeat",
    "SetLoadDataRepeatWithStride", "FmatrixMode", "IsResetLoad3dConfig",
    "img2col", "to_zz", "from_zz", "to_zn", "from_zn", "to_fractal", "from_fractal", "fractal_shape",
    "pack4", "unpack4",
    # fastcopy
    "Product", "Phys", "to_nz", "from_nz", "nd2nz_params", "nz2nd_params", "slice_infos", "as_dtype",
    "current_pipe", "explain", "ParamStruct", "Field",
    "FastCopyError", "FastCopyWarning", "ParamError", "ParamTypeError", "RangeError", "AlignmentError",
    "UnsupportedError", "OutOfBoundsError", "CapacityError",
]

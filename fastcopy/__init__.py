"""fastcopy: exact, fast CPU emulation of the Ascend C data-movement instructions.

Kernel code transcribes line by line::

    pipe = TPipe(product="ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "half", 512)
    DataCopy(x, GlobalTensor(src_array), 512)
"""

__version__ = "0.1.0"

from . import apidoc as _apidoc
from . import api as _api
from .api import (DataCopy, DataCopyPad, Fixpipe, LoadData, LoadDataWithStride, LoadDataWithTranspose,
                  ResetLoopModePara, SetLoopModePara, SetPadValue, from_nz, to_nz)
from .cube.enhanced import BlockMode, DataCopyEnhancedParams, DeqScale
from .cube.fixpipe import DataCopyCO12
from .cube.hif8 import decode_hif8, encode_hif8
from .cube.mmad import Mmad
from .cube.outparams import (CFG_COLUMN_MAJOR, CFG_NZ, CFG_ROW_MAJOR, CO2Layout, DataCopyCO12DstParams, FixpipeConfig,
                             FixpipeParamsArch3510, FixpipeParamsC310, FixpipeParamsM300, FixpipeParamsM310,
                             FixpipeParamsV220, MmadParams, Nz2DnParams, Nz2NdParams)
from .cube.quant import QuantMode_t
from .cube.state import (AscendCUtils, HF32Mode, HF32TransMode, SetFixPipeAddr, SetFixPipeClipRelu, SetFixPipeConfig,
                         SetFixpipeNz2ndFlag, SetFixpipePreQuantFlag, SetHF32Mode, SetHF32TransMode, SetMMColumnMajor,
                         SetMMRowMajor)
from .dtypes import as_dtype
from .errors import (AlignmentError, CapacityError, FastCopyError, FastCopyWarning, OutOfBoundsError, ParamError,
                     ParamTypeError, RangeError, UnsupportedError)
from .explain import explain
from .formats import nd2nz_params, nz2nd_params
from .memory import GlobalTensor, LocalTensor, TPipe, current_pipe
from .ops.loopmode import DataCopyMVType
from .ops.pad import PaddingMode
from .params import (DataCopyExtParams, DataCopyPadExtParams, DataCopyPadParams, DataCopyParams, Field,
                     LoopModeParams, Nd2NzParams, Nz2NdParamsFull, ParamStruct, SliceInfo)
from .products import Phys, Product, TPosition
from .cube.images import fractal_shape, from_fractal, from_zn, from_zz, to_fractal, to_zn, to_zz
from .cube.b4 import pack4, unpack4
from .cube.img2col import img2col
from .cube.registers import (FmatrixMode, IsResetLoad3dConfig, SetFmatrix, SetLoadDataBoundary,
                             SetLoadDataPaddingValue, SetLoadDataRepeat, SetLoadDataRepeatWithStride)
from .cube.params import (Dn2NzParams, LoadData2dParams, LoadData2DParams, LoadData2DParamsV2,
                          LoadData2dTransposeParams, LoadData2dTransposeParamsV2, LoadData3DParamsV1,
                          LoadData3DParamsV2, LoadData3DParamsV2Pro, LoadDataRepeatParam, LoadDataRepeatParamWithStride)
from .slicing import slice_infos

_apidoc.complete(DataCopy, "DataCopy", "DataCopy(Nd2NzParams)", "DataCopy(Nz2NdParamsFull)", "DataCopy(SliceInfo)",
                 extra=_apidoc.datacopy_rules(), planners=_api.DATACOPY_FORMS)
_apidoc.complete(DataCopyPad, "DataCopyPad", extra=_apidoc.pad_rules())

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

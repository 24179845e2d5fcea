"""fastcopy: exact, fast CPU emulation of the Ascend C data-movement instructions.

Kernel code transcribes line by line::

    pipe = TPipe(product="ATLAS_A2")
    x = pipe.alloc(TPosition.VECIN, "half", 512)
    DataCopy(x, GlobalTensor(src_array), 512)
"""

__version__ = "0.1.0"

from . import apidoc as _apidoc
from .api import DataCopy, register_datacopy
from .dtypes import as_dtype
from .errors import (AlignmentError, CapacityError, FastCopyError, FastCopyWarning, OutOfBoundsError, ParamError,
                     ParamTypeError, RangeError, UnsupportedError)
from .formats import from_nz, nd2nz_params, nz2nd_params, to_nz
from .memory import GlobalTensor, LocalTensor, TPipe, current_pipe
from .cube import dn2nz as _dn2nz
from .ops import datacopy as _datacopy
from .ops import nz as _nz
from .ops import slice as _slice
from .ops.loopmode import DataCopyMVType, ResetLoopModePara, SetLoopModePara
from .ops.pad import DataCopyPad, PaddingMode, SetPadValue
from .params import (DataCopyExtParams, DataCopyPadExtParams, DataCopyPadParams, DataCopyParams, Field,
                     LoopModeParams, Nd2NzParams, Nz2NdParamsFull, ParamStruct, SliceInfo)
from .products import Phys, Product, TPosition
from .cube.loaddata import LoadData, LoadDataWithTranspose
from .cube.params import (Dn2NzParams, LoadData2dParams, LoadData2DParams, LoadData2DParamsV2,
                          LoadData2dTransposeParams, LoadData2dTransposeParamsV2, LoadData3DParamsV2,
                          LoadData3DParamsV2Pro, LoadDataRepeatParam, LoadDataRepeatParamWithStride)
from .slicing import slice_infos

register_datacopy("count", _datacopy.plan_data_copy)
register_datacopy(DataCopyParams, _datacopy.plan_data_copy)
register_datacopy(Nd2NzParams, _nz.plan_nd2nz)
register_datacopy(Nz2NdParamsFull, _nz.plan_nz2nd)
register_datacopy("slice", _slice.plan_slice)
register_datacopy(Dn2NzParams, _dn2nz.plan_dn2nz)
_apidoc.complete(DataCopy, "DataCopy", "DataCopy(Nd2NzParams)", "DataCopy(Nz2NdParamsFull)", "DataCopy(SliceInfo)",
                 extra=_apidoc.datacopy_rules())
_apidoc.complete(DataCopyPad, "DataCopyPad", extra=_apidoc.pad_rules())

__all__ = [
    # Ascend C API
    "DataCopy", "DataCopyPad", "SetPadValue", "SetLoopModePara", "ResetLoopModePara",
    "DataCopyParams", "DataCopyExtParams", "DataCopyPadExtParams", "DataCopyPadParams", "Nd2NzParams",
    "Nz2NdParamsFull", "SliceInfo", "LoopModeParams", "PaddingMode", "DataCopyMVType",
    "GlobalTensor", "LocalTensor", "TPipe", "TPosition",
    "LoadData", "LoadDataWithTranspose", "LoadData2DParams", "LoadData2dParams", "LoadData2DParamsV2",
    "LoadData2dTransposeParams", "LoadData2dTransposeParamsV2", "Dn2NzParams", "LoadData3DParamsV2",
    "LoadData3DParamsV2Pro", "LoadDataRepeatParam", "LoadDataRepeatParamWithStride",
    # fastcopy
    "Product", "Phys", "to_nz", "from_nz", "nd2nz_params", "nz2nd_params", "slice_infos", "as_dtype",
    "current_pipe", "register_datacopy", "ParamStruct", "Field",
    "FastCopyError", "FastCopyWarning", "ParamError", "ParamTypeError", "RangeError", "AlignmentError",
    "UnsupportedError", "OutOfBoundsError", "CapacityError",
]

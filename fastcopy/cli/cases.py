"""Case files shipped inside the package (as text, so no package-data configuration is needed)."""

#: ``fastcopy demo``: a 20 x 40 half matrix to the NZ layout of a matmul operand (GM -> A1 with Nd2NzParams), then
#: back to GM as it sits in L1. 40 columns = 2.5 C0 blocks, so the third block's last 8 columns are zero pad;
#: rows 20..31 of each 32-row block are never written: undefined in the mask.
DEMO_ND2NZ = """\
name = "demo_nd2nz"
description = "ND2NZ of a 20 x 40 half matrix (GM -> A1, Nd2NzParams), then A1 -> GM as it sits in L1"
product = "ATLAS_A2"
outputs = [{buffer = "zGm", allow_undefined = true}]  # rows 20..31 of each block are never written

[buffers.aGm]
dtype = "half"
shape = [20, 40]
init = {kind = "arange", start = 1}

[buffers.a1Local]
position = "A1"
dtype = "half"
count = 1536        # 3 C0 blocks x 32 rows (nValue rounded up to a multiple of 16) x 16 halves

[buffers.zGm]
dtype = "half"
shape = [3, 32, 16]  # [C0 block][row][element]: the NZ layout

[[ops]]
api = "DataCopy"
dst = "a1Local"
src = "aGm"
params.Nd2NzParams = {ndNum = 1, nValue = 20, dValue = 40, srcNdMatrixStride = 0, srcDValue = 40, \
dstNzC0Stride = 32, dstNzNStride = 1, dstNzMatrixStride = 0}

[[ops]]
api = "DataCopy"
dst = "zGm"
src = "a1Local"
params = {count = 1536}
"""

#: Fallback of ``fastcopy demo`` when ND2NZ is not available: basic DataCopy with gaps (GM -> VECIN -> VECOUT -> GM).
DEMO_DATACOPY = """\
name = "demo_datacopy"
description = "basic DataCopy: 512 halves GM -> VECIN (count), VECIN -> VECOUT in 2 bursts of 8 blocks with a \
1-block gap (DataCopyParams), VECOUT -> GM"
product = "ATLAS_A2"
outputs = [{buffer = "yGm", allow_undefined = true}]  # the gap block is never written

[buffers.xGm]
dtype = "half"
shape = [512]
init = {kind = "arange", start = 1}

[buffers.xLocal]
position = "VECIN"
dtype = "half"
count = 512

[buffers.yLocal]
position = "VECOUT"
dtype = "half"
count = 512

[buffers.yGm]
dtype = "half"
shape = [512]

[[ops]]
api = "DataCopy"
dst = "xLocal"
src = "xGm"
params = {count = 512}

[[ops]]
api = "DataCopy"
dst = "yLocal"
src = "xLocal"
params.DataCopyParams = {blockCount = 2, blockLen = 8, srcGap = 0, dstGap = 1}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "yLocal"
params = {count = 512}
"""

"""LLVM memcpy / memset on array units, addresses and views holding no reference, as numba intrinsics (cacheable,
unlike ctypes calls)."""

from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def memcpy_units(typingctx, dst, doff, src, soff, n):
    """``dst[doff:doff+n] = src[soff:soff+n]`` for arrays of one dtype, as a single ``llvm.memcpy``."""
    sig = types.void(dst, types.intp, src, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        d, do, s, so, cnt = args
        dary = context.make_array(signature.args[0])(context, builder, d)
        sary = context.make_array(signature.args[2])(context, builder, s)
        itemsize = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        cgutils.raw_memcpy(builder, builder.gep(dary.data, [do]), builder.gep(sary.data, [so]), cnt, itemsize)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def memset_units(typingctx, dst, doff, n, byte):
    """Set every byte of ``dst[doff:doff+n]`` to ``byte`` with a single ``llvm.memset``."""
    sig = types.void(dst, types.intp, types.intp, types.uint8)

    def codegen(context, builder, signature, args):
        d, do, cnt, value = args
        dary = context.make_array(signature.args[0])(context, builder, d)
        itemsize = context.get_abi_sizeof(context.get_data_type(signature.args[0].dtype))
        size = builder.mul(cnt, context.get_constant(types.intp, itemsize))
        cgutils.memset(builder, builder.gep(dary.data, [do]), size, value)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def address(typingctx, arr, i):
    """The address of ``arr[i]`` as an integer (alignment tests; no ctypes object is made)."""
    sig = types.intp(arr, types.intp)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.ptrtoint(builder.gep(ary.data, [args[1]]), context.get_value_type(types.intp))

    return sig, codegen


@intrinsic
def unowned(typingctx, arr):
    """``arr`` as a view holding no reference (a null meminfo): numba's reference counting of it, and of every
    slice of it and every call it is handed to, is then a null test instead of an atomic instruction (which
    waits for every store in flight). The caller keeps ``arr`` alive while the view is used."""
    sig = arr(arr)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        view = context.make_array(signature.return_type)(context, builder)
        for field in ("parent", "nitems", "itemsize", "data", "shape", "strides"):
            setattr(view, field, getattr(ary, field))
        view.meminfo = context.get_constant_null(types.MemInfoPointer(types.voidptr))
        return view._getvalue()

    return sig, codegen

"""Layout kernels on flat ``uint8`` views (one compiled specialisation each), all values in bytes:

- ``transpose_blocks``: a 2-D transpose of ``burst``-byte blocks (ND2NZ / NZ2ND / to_nz / from_nz), walked in
  tiles of ``tile_a x tile_c`` blocks (reads of one tile share cache lines and TLB entries; writes are
  ``tile_a`` sequential runs). ``nt = 1`` asks for non-temporal stores (bypassing the caches; the kernel then
  ends with a store fence); the kernel uses them only when the destination runs are contiguous
  (``dc == burst``, ``burst`` a multiple of 32) and each starts on a 64-byte line (regular stores otherwise:
  measured, non-temporal runs starting mid-line are slower than regular stores).
- ``copy_dense``: one contiguous range, non-temporal for its whole 64-byte lines when ``nt``.

The ``meta`` layout of ``transpose_blocks`` is defined (and packed) by :mod:`fastcopy.dma.abi`.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .intrinsics import memcpy_units

def _vector_copy(nbytes: int, nontemporal: bool):
    """An intrinsic ``(dst, d, src, s)``: ``dst[d:d+nbytes] = src[s:s+nbytes]`` (uint8 arrays) as one vector load
    (unaligned) and one store, non-temporal (``dst`` + ``d`` then aligned to ``nbytes``) or regular."""
    vec = ir.VectorType(ir.IntType(64), nbytes // 8)

    def impl(typingctx, dst, d, src, s):
        sig = types.void(dst, types.intp, src, types.intp)

        def codegen(context, builder, signature, args):
            da, do, sa, so = args
            dary = context.make_array(signature.args[0])(context, builder, da)
            sary = context.make_array(signature.args[2])(context, builder, sa)
            dp = builder.bitcast(builder.gep(dary.data, [do]), vec.as_pointer())
            sp = builder.bitcast(builder.gep(sary.data, [so]), vec.as_pointer())
            st = builder.store(builder.load(sp, align=1), dp, align=nbytes if nontemporal else 1)
            if nontemporal:
                st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()

        return sig, codegen

    return intrinsic(impl)


copy32 = _vector_copy(32, False)
copy32_nt = _vector_copy(32, True)
copy16 = _vector_copy(16, False)
copy16_nt = _vector_copy(16, True)


@intrinsic
def store_fence(typingctx):
    """``sfence``: order the non-temporal stores before anything that follows (the caller's join)."""
    sig = types.void()

    def codegen(context, builder, signature, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), []),
                                            "llvm.x86.sse.sfence")
        builder.call(fn, [])
        return context.get_dummy_value()

    return sig, codegen


@njit(inline="always", boundscheck=False)
def _block(dst, d, src, s, burst):
    """One block with regular stores."""
    if burst == 32:
        copy32(dst, d, src, s)
    elif burst == 64:
        copy32(dst, d, src, s)
        copy32(dst, d + 32, src, s + 32)
    else:
        k = 0
        while k + 32 <= burst:
            copy32(dst, d + k, src, s + k)
            k += 32
        if k < burst:
            memcpy_units(dst, d + k, src, s + k, burst - k)


@njit(inline="always", boundscheck=False)
def _block_nt(dst, d, src, s, burst):
    """One block with non-temporal 32-byte stores (``dst[d]`` 32-byte aligned, ``burst`` a multiple of 32)."""
    for k in range(0, burst, 32):
        copy32_nt(dst, d + k, src, s + k)


@njit(inline="always", boundscheck=False)
def _span16(dst, d, src, s, x0, x1, burst, sc, nt_lo, nt_hi):
    """Bytes ``[x0, x1)`` (multiples of 16) of a contiguous destination run starting at ``dst[d]`` whose block
    ``j`` comes from ``src[s + j*sc]``: 16 bytes at a time, non-temporal inside ``[nt_lo, nt_hi)``."""
    j = x0 // burst
    w = x0 - j * burst
    ss = s + j * sc
    x = x0
    while x < x1:
        if nt_lo <= x and x < nt_hi:
            copy16_nt(dst, d + x, src, ss + w)
        else:
            copy16(dst, d + x, src, ss + w)
        x += 16
        w += 16
        if w == burst:
            w = 0
            ss += sc


@njit(cache=True, nogil=True, boundscheck=False)
def transpose_blocks(dst, dbase, src, sbase, meta):
    # meta: [burst, nb, sb, db, na, sa, da, nc, sc, dc, tile_a, tile_c, b_lo, b_hi, a_lo, a_hi, nt]
    # (fastcopy.dma.abi.pack_transpose; kernels import nothing above them)
    burst = meta[0]
    sb, db = meta[2], meta[3]
    sa, da = meta[5], meta[6]
    nc, sc, dc = meta[7], meta[8], meta[9]
    ta, tc = meta[10], meta[11]
    a_lo, a_hi = meta[14], meta[15]
    b_lo = meta[12]
    # non-temporal stores: contiguous destination runs (dc == burst) that start on 64-byte lines (measured: a
    # run starting mid-line is slower with them than without); checked here, so no plan can make them fault
    first = dst.ctypes.data + dbase + b_lo * db + a_lo * da
    nt = meta[16] != 0 and dc == burst and burst % 32 == 0 and (db | da | tc * dc | first) % 64 == 0
    if (meta[16] != 0 and not nt and dc == burst and burst % 16 == 0 and first % 16 == 0
            and (db | da | tc * dc) % 64 == 0):
        _transpose_shifted(dst, dbase, src, sbase, meta, (-first) % 64)
        return
    for ib in range(b_lo, meta[13]):
        sbb = sbase + ib * sb
        dbb = dbase + ib * db
        for a0 in range(a_lo, a_hi, ta):
            a1 = min(a0 + ta, a_hi)
            for c0 in range(0, nc, tc):
                n = min(c0 + tc, nc) - c0
                for ia in range(a0, a1):
                    s = sbb + ia * sa + c0 * sc
                    d = dbb + ia * da + c0 * dc
                    if nt:
                        for _ in range(n):
                            _block_nt(dst, d, src, s, burst)
                            s += sc
                            d += dc
                    else:
                        for _ in range(n):
                            _block(dst, d, src, s, burst)
                            s += sc
                            d += dc
    if nt:
        store_fence()


@njit(inline="always", boundscheck=False)
def _transpose_shifted(dst, dbase, src, sbase, meta, phase):
    """``transpose_blocks`` into runs that start ``64 - phase`` bytes into a line (every run alike): the
    c-tiles are cut at line boundaries instead of block boundaries, so every whole line is written by one
    tile, non-temporally, 16 bytes at a time; the ``phase`` bytes before a run's first line and the bytes
    after its last whole line take regular stores."""
    burst = meta[0]
    sb, db = meta[2], meta[3]
    sa, da = meta[5], meta[6]
    nc, sc = meta[7], meta[8]
    ta, tc = meta[10], meta[11]
    a_lo, a_hi = meta[14], meta[15]
    total = nc * burst
    length = tc * burst
    nt_lo = phase
    nt_hi = phase + (total - phase) // 64 * 64 if total > phase else 0
    for ib in range(meta[12], meta[13]):
        sbb = sbase + ib * sb
        dbb = dbase + ib * db
        for a0 in range(a_lo, a_hi, ta):
            a1 = min(a0 + ta, a_hi)
            x0 = 0
            x1 = phase if phase > 0 else length
            while x0 < total:
                x1 = min(x1, total)
                for ia in range(a0, a1):
                    _span16(dst, dbb + ia * da, src, sbb + ia * sa, x0, x1, burst, sc, nt_lo, nt_hi)
                x0 = x1
                x1 = x0 + length
    store_fence()


@njit(inline="always", boundscheck=False)
def _dense(dst, d, src, s, n, nt):
    """``dst[d:d+n] = src[s:s+n]``; ``nt``: non-temporal stores for the whole 64-byte lines (no fence)."""
    if not nt or n < 256:
        memcpy_units(dst, d, src, s, n)
        return
    head = (-(dst.ctypes.data + d)) % 64  # whole lines only: a partial line stored non-temporally is read back
    memcpy_units(dst, d, src, s, head)
    k = head
    end = n - 128
    while k <= end:
        copy32_nt(dst, d + k, src, s + k)
        copy32_nt(dst, d + k + 32, src, s + k + 32)
        copy32_nt(dst, d + k + 64, src, s + k + 64)
        copy32_nt(dst, d + k + 96, src, s + k + 96)
        k += 128
    while k + 64 <= n:
        copy32_nt(dst, d + k, src, s + k)
        copy32_nt(dst, d + k + 32, src, s + k + 32)
        k += 64
    memcpy_units(dst, d + k, src, s + k, n - k)


@njit(cache=True, nogil=True, boundscheck=False)
def copy_dense(dst, d, src, s, n, nt):
    """``dst[d:d+n] = src[s:s+n]`` (uint8 views); ``nt``: non-temporal stores for the whole 64-byte lines."""
    _dense(dst, d, src, s, n, nt)
    if nt:
        store_fence()


@njit(cache=True, nogil=True, boundscheck=False)
def fill_dense(dst, d, n, pattern):
    """``dst[d:d+n]`` = the byte ``pattern`` holds (``pattern``: 4096 bytes of it, 64-byte aligned, stays in L1)
    with non-temporal stores for the whole 64-byte lines: a large fill writes each byte once instead of reading
    the line first."""
    head = min((-(dst.ctypes.data + d)) % 64, n)
    memcpy_units(dst, d, pattern, 0, head)
    k = head
    while k + 64 <= n:
        p = k % 4096 // 64 * 64
        copy32_nt(dst, d + k, pattern, p)
        copy32_nt(dst, d + k + 32, pattern, p + 32)
        k += 64
    memcpy_units(dst, d + k, pattern, 0, n - k)
    store_fence()


@njit(cache=True, nogil=True, boundscheck=False)
def copy_rows(dst, dbase, src, sbase, meta):
    """Long bursts (rows) in up to two loops: the ``transpose_blocks`` meta with ``nc = 1`` (``burst`` bytes
    per row, rows ``a``, batch ``b``); each row as :func:`copy_dense`, streaming its whole lines if ``nt``."""
    burst = meta[0]
    sb, db = meta[2], meta[3]
    sa, da = meta[5], meta[6]
    nt = meta[16] != 0
    for ib in range(meta[12], meta[13]):
        for ia in range(meta[14], meta[15]):
            _dense(dst, dbase + ib * db + ia * da, src, sbase + ib * sb + ia * sa, burst, nt)
    if nt:
        store_fence()

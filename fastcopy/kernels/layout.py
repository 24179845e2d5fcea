"""Layout kernels on flat ``uint8`` views (one compiled specialisation each), all values in bytes:

- ``transpose_blocks``: a 2-D transpose of ``burst``-byte blocks (ND2NZ / NZ2ND / to_nz / from_nz), walked in
  tiles of ``tile_a x tile_c`` blocks (reads of one tile share cache lines and TLB entries; writes are
  ``tile_a`` sequential runs). ``nt = 1`` asks for non-temporal stores (bypassing the caches; the kernel then
  ends with a store fence); the kernel uses them only when the destination runs are contiguous
  (``dc == burst``, ``burst`` a multiple of 16) and each starts on 16 bytes: every whole 64-byte line of a run
  is then gathered from the source blocks (four 16-byte loads) and written in one non-temporal 64-byte store,
  the partial lines at a run's ends with regular stores (regular stores everywhere otherwise).
- ``copy_dense``: one contiguous range, non-temporal for its whole 64-byte lines when ``nt``.

The ``meta`` layout of ``transpose_blocks`` is defined (and packed) by :mod:`fastcopy.dma.abi`.
"""

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .intrinsics import address, memcpy_units

#: how far ahead of its stores copy_dense prefetches the source (bytes; measured 512 > 1024 > 2048 on the VM)
DENSE_AHEAD = 512

def _vector_copy(nbytes: int, nontemporal: bool, at: bool = False):
    """An intrinsic copying ``nbytes`` as one vector load (unaligned) and one store, non-temporal (the destination
    then aligned to ``nbytes``) or regular: ``(dst, d, src, s)``, ``dst[d:d+nbytes] = src[s:s+nbytes]`` (uint8
    arrays), or with ``at`` ``(d, s)`` on addresses (integers). The streaming loops below work on addresses, never
    on arrays: an array handed to an inlined helper inside a loop costs numba's reference counting there (an
    atomic instruction per call, which waits for every streaming store in flight: a from_nz with one such call
    per row measured 4.1 ms on one thread against 2.6 ms without)."""
    vec = ir.VectorType(ir.IntType(64), nbytes // 8)

    def codegen(context, builder, signature, args):
        if at:
            dp, sp = (builder.inttoptr(a, vec.as_pointer()) for a in args)
        else:
            da, do, sa, so = args
            dary = context.make_array(signature.args[0])(context, builder, da)
            sary = context.make_array(signature.args[2])(context, builder, sa)
            dp = builder.bitcast(builder.gep(dary.data, [do]), vec.as_pointer())
            sp = builder.bitcast(builder.gep(sary.data, [so]), vec.as_pointer())
        st = builder.store(builder.load(sp, align=1), dp, align=nbytes if nontemporal else 1)
        if nontemporal:
            st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
        return context.get_dummy_value()

    def on_arrays(typingctx, dst, d, src, s):
        return types.void(dst, types.intp, src, types.intp), codegen

    def on_addresses(typingctx, d, s):
        return types.void(types.intp, types.intp), codegen

    return intrinsic(on_addresses if at else on_arrays)


copy32_nt = _vector_copy(32, True)
copy64_nt = _vector_copy(64, True)


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


@intrinsic
def prefetch(typingctx, arr, i):
    """``prefetcht0`` of ``arr[i]`` (a hint: never faults, whatever the address)."""
    sig = types.void(arr, types.intp)

    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        p = builder.bitcast(builder.gep(ary.data, [args[1]]), ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [p.type, i32, i32, i32]),
                                            "llvm.prefetch.p0i8")
        builder.call(fn, [p, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


copy16_at = _vector_copy(16, False, at=True)
copy32_at = _vector_copy(32, False, at=True)
copy64_at = _vector_copy(64, False, at=True)


@intrinsic
def memcpy_at(typingctx, d, s, n):
    """``n`` bytes from address ``s`` to address ``d`` (one ``llvm.memcpy``)."""
    sig = types.void(types.intp, types.intp, types.intp)

    def codegen(context, builder, signature, args):
        i8p = ir.IntType(8).as_pointer()
        cgutils.raw_memcpy(builder, builder.inttoptr(args[0], i8p), builder.inttoptr(args[1], i8p), args[2], 1)
        return context.get_dummy_value()

    return sig, codegen


@njit(inline="always", boundscheck=False)
def _block(d, s, burst):
    """One block with regular stores (addresses)."""
    if burst == 32:
        copy32_at(d, s)
    elif burst == 64:
        copy32_at(d, s)
        copy32_at(d + 32, s + 32)
    else:
        k = 0
        while k + 32 <= burst:
            copy32_at(d + k, s + k)
            k += 32
        if k < burst:
            memcpy_at(d + k, s + k, burst - k)


@intrinsic
def line_nt(typingctx, d, s0, s1, s2, s3):
    """The 64 bytes at address ``d`` (on a 64-byte line) = the 16 bytes at addresses ``s0``, ``s1``, ``s2``,
    ``s3`` (unaligned loads), as one non-temporal 64-byte store: the line goes to memory whole, in one go, never
    read first (one ``vmovntdq`` with AVX-512, two with AVX2)."""
    sig = types.void(types.intp, types.intp, types.intp, types.intp, types.intp)
    i32, v2, v8 = ir.IntType(32), ir.VectorType(ir.IntType(64), 2), ir.VectorType(ir.IntType(64), 8)

    def codegen(context, builder, signature, args):
        parts = [builder.load(builder.inttoptr(a, v2.as_pointer()), align=1) for a in args[1:]]
        lo = builder.shuffle_vector(parts[0], parts[1], ir.Constant(ir.VectorType(i32, 4), [0, 1, 2, 3]))
        hi = builder.shuffle_vector(parts[2], parts[3], ir.Constant(ir.VectorType(i32, 4), [0, 1, 2, 3]))
        line = builder.shuffle_vector(lo, hi, ir.Constant(ir.VectorType(i32, 8), list(range(8))))
        st = builder.store(line, builder.inttoptr(args[0], v8.as_pointer()), align=64)
        st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(i32, 1)]))
        return context.get_dummy_value()

    return sig, codegen


@njit(inline="always", boundscheck=False)
def _run16(d, s, x0, x1, burst, sc):
    """Bytes ``[x0, x1)`` (multiples of 16) of a contiguous destination run at address ``d`` whose block ``j``
    comes from address ``s + j*sc``, 16 bytes at a time with regular stores (the partial lines at a run's ends)."""
    j = x0 // burst
    w = x0 - j * burst
    ss = s + j * sc
    for x in range(x0, x1, 16):
        copy16_at(d + x, ss + w)
        w += 16
        if w == burst:
            w = 0
            ss += sc


@njit(inline="always", boundscheck=False)
def _run_lines(d, s, x, n, burst, sc):
    """``n`` whole lines of the run at address ``d`` from its byte ``x`` on (``d + x`` on a line): each gathered
    from four 16-byte pieces of the source blocks and stored in one go, non-temporally."""
    j = x // burst
    w = x - j * burst
    ss = s + j * sc
    for _ in range(n):
        p0 = ss + w
        ss, w = _next_piece(ss, w, burst, sc)
        p1 = ss + w
        ss, w = _next_piece(ss, w, burst, sc)
        p2 = ss + w
        ss, w = _next_piece(ss, w, burst, sc)
        p3 = ss + w
        ss, w = _next_piece(ss, w, burst, sc)
        line_nt(d + x, p0, p1, p2, p3)
        x += 64


@njit(inline="always", boundscheck=False)
def _next_piece(ss, w, burst, sc):
    """The source position 16 bytes on: ``w`` bytes into the block at ``ss``, the next block at ``ss + sc``."""
    w += 16
    if w == burst:
        return ss + sc, 0
    return ss, w


@njit(inline="always", boundscheck=False)
def _piece(s, x, burst, sc):
    """The source address of byte ``x`` of the run whose first block is at address ``s``."""
    j = x // burst
    return s + j * sc + (x - j * burst)


@njit(inline="always", boundscheck=False)
def _junction(d, sp, s, t, total, burst, sc):
    """The line that ends one run and starts the next, whole, in one non-temporal store: its first ``t`` bytes
    (a multiple of 16) the last ``t`` bytes of the run at address ``sp``, the rest the first bytes of the run at
    address ``s`` (which starts at address ``d``)."""
    p0 = _piece(sp, total - t, burst, sc) if t > 0 else _piece(s, -t, burst, sc)
    p1 = _piece(sp, total - t + 16, burst, sc) if t > 16 else _piece(s, 16 - t, burst, sc)
    p2 = _piece(sp, total - t + 32, burst, sc) if t > 32 else _piece(s, 32 - t, burst, sc)
    line_nt(d - t, p0, p1, p2, _piece(s, 48 - t, burst, sc))


@njit(inline="always", boundscheck=False)
def _walk(meta, burst):
    """A streaming transpose's ``meta`` as the walks below use it: ``(sb, db, sa, da, sc, tile_a, a_lo, a_hi,
    run length, lines per run and tile, joined)`` (joined: the runs follow each other in the destination)."""
    da, total = meta[6], meta[7] * burst
    return (meta[2], meta[3], meta[5], da, meta[8], meta[10], meta[14], meta[15], total,
            max(1, meta[11] * burst // 64), da == total and total >= 64)


@njit(inline="always", boundscheck=False)
def _transpose_lines(dp, sp, meta, burst):
    """``transpose_blocks`` with non-temporal stores (``dp``, ``sp``: the addresses of the destination's and the
    source's first bytes plus the bases): every destination run (``dc == burst``, starting on 16 bytes) is cut
    into its partial first line, whole lines and partial last line; the whole lines are written in tiles of
    ``tile_a`` runs x ``tile_c * burst / 64`` lines, each line in one non-temporal store gathered from the source
    blocks, the partial lines with regular stores (a line partly written non-temporally would be read back from
    memory). Runs need not start alike: each run's first whole line is its own. Where the runs follow each other
    in the destination (``da`` = a run's length, at least a line), the line one run ends and the next begins in
    is written whole with the next run's first lines (a "junction"): only the first run of the call starts, and
    its last run ends, with regular stores (each a store that misses: ~100 ns, queued ahead of the streaming
    stores behind it; two per 8 KiB row of a from_nz cost 5-10%)."""
    sb, db, sa, da, sc, ta, a_lo, a_hi, total, tl, joined = _walk(meta, burst)
    for ib in range(meta[12], meta[13]):
        sbb = sp + ib * sb
        dbb = dp + ib * db
        for a0 in range(a_lo, a_hi, ta):
            a1 = min(a0 + ta, a_hi)
            for l0 in range(0, total // 64 + 1, tl):
                for ia in range(a0, a1):
                    d = dbb + ia * da
                    s = sbb + ia * sa
                    head = min((-d) % 64, total)
                    n = (total - head) // 64
                    if l0 == 0 and head > 0:
                        if joined and ia > a_lo:
                            _junction(d, s - sa, s, 64 - head, total, burst, sc)
                        else:
                            _run16(d, s, 0, head, burst, sc)
                    if l0 < n:
                        _run_lines(d, s, head + l0 * 64, min(l0 + tl, n) - l0, burst, sc)
                    if l0 <= n < l0 + tl and head + n * 64 < total and not (joined and ia + 1 < a_hi):
                        _run16(d, s, head + n * 64, total, burst, sc)
    store_fence()


@njit(inline="always", boundscheck=False)
def _transpose_lines_alike(dp, sp, meta, burst):
    """:func:`_transpose_lines` where every run starts at the same phase of a line (``da`` and ``db`` multiples
    of 64) and every line at the same phase of a block (32- or 64-byte blocks): the runs' partial lines are
    written first, a tile at a time, then the tile's whole lines, each run's from four source offsets fixed for
    the whole tile column (no per-run or per-line arithmetic beyond the addresses: with 4 lines per run and
    tile the bookkeeping had cost ~4% against the same pattern in a bare loop)."""
    sb, db, sa, da, sc, ta, a_lo, a_hi, total, tl, joined = _walk(meta, burst)
    step = 64 // burst * sc
    head = min((-(dp + meta[12] * db + a_lo * da)) % 64, total)
    n = (total - head) // 64
    tail = head + n * 64 < total
    for ib in range(meta[12], meta[13]):
        sbb = sp + ib * sb
        dbb = dp + ib * db
        for a0 in range(a_lo, a_hi, ta):
            a1 = min(a0 + ta, a_hi)
            for ia in range(a0, a1):  # the partial lines (a junction: the line one run ends and the next begins in)
                d = dbb + ia * da
                s = sbb + ia * sa
                if head > 0:
                    if joined and ia > a_lo:
                        _junction(d, s - sa, s, 64 - head, total, burst, sc)
                    else:
                        _run16(d, s, 0, head, burst, sc)
                if tail and not (joined and ia + 1 < a_hi):
                    _run16(d, s, head + n * 64, total, burst, sc)
            for l0 in range(0, n, tl):
                x = head + l0 * 64
                o0 = _piece(0, x, burst, sc)
                o1 = _piece(0, x + 16, burst, sc)
                o2 = _piece(0, x + 32, burst, sc)
                o3 = _piece(0, x + 48, burst, sc)
                k = min(tl, n - l0)
                for ia in range(a0, a1):
                    d = dbb + ia * da + x
                    s = sbb + ia * sa
                    for _ in range(k):
                        line_nt(d, s + o0, s + o1, s + o2, s + o3)
                        d += 64
                        s += step
    store_fence()


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
    dp = address(dst, 0) + dbase  # (the loops work on addresses: see _vector_copy)
    sp = address(src, 0) + sbase
    # non-temporal stores: contiguous destination runs (dc == burst) of 16-byte pieces, every run starting on
    # 16 bytes (checked here, so no plan can make them fault); whole lines only (see _transpose_lines)
    first = dp + b_lo * db + a_lo * da
    if meta[16] != 0 and dc == burst and burst % 16 == 0 and (db | da | first) % 16 == 0:
        if (db | da) % 64 == 0 and burst == 32:  # (the common blocks, every run at one phase of a line)
            _transpose_lines_alike(dp, sp, meta, 32)
        elif (db | da) % 64 == 0 and burst == 64:
            _transpose_lines_alike(dp, sp, meta, 64)
        elif burst == 32:  # (constant steps in the line gather)
            _transpose_lines(dp, sp, meta, 32)
        elif burst == 64:
            _transpose_lines(dp, sp, meta, 64)
        else:
            _transpose_lines(dp, sp, meta, burst)
        return
    for ib in range(b_lo, meta[13]):
        sbb = sp + ib * sb
        dbb = dp + ib * db
        for a0 in range(a_lo, a_hi, ta):
            a1 = min(a0 + ta, a_hi)
            for c0 in range(0, nc, tc):
                n = min(c0 + tc, nc) - c0
                for ia in range(a0, a1):
                    s = sbb + ia * sa + c0 * sc
                    d = dbb + ia * da + c0 * dc
                    for _ in range(n):
                        _block(d, s, burst)
                        s += sc
                        d += dc


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
    while k <= end:  # a line per store; the source read ahead (measured: 32 MiB on 2 threads, 32-byte stores
        prefetch(src, s + k + DENSE_AHEAD)  # 4.1 ms, 64-byte 3.6 ms, and prefetching 512 bytes ahead 2.6 ms)
        prefetch(src, s + k + DENSE_AHEAD + 64)
        copy64_nt(dst, d + k, src, s + k)
        copy64_nt(dst, d + k + 64, src, s + k + 64)
        k += 128
    while k + 64 <= n:
        copy64_nt(dst, d + k, src, s + k)
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


@njit(inline="always", boundscheck=False)
def _row_cached(d, s, n):
    """``n`` bytes from address ``s`` to address ``d`` with regular stores, whole 64-byte lines of the destination
    stored as such (one vector store each, never split across two lines), the head and tail in 16-byte pieces
    (a memcpy of a 512-byte row at a destination 16 bytes past a line stores across a line boundary again and
    again: measured on the 8 MiB slice of 512-byte rows, one thread, 0.74 against 0.78 ms)."""
    head = min((-d) % 64, n)
    k = 0
    while k + 16 <= head:
        copy16_at(d + k, s + k)
        k += 16
    memcpy_at(d + k, s + k, head - k)
    k = head
    while k + 64 <= n:
        copy64_at(d + k, s + k)
        k += 64
    while k + 16 <= n:
        copy16_at(d + k, s + k)
        k += 16
    memcpy_at(d + k, s + k, n - k)


@njit(cache=True, nogil=True, boundscheck=False)
def copy_rows(dst, dbase, src, sbase, meta):
    """Long bursts (rows) in up to two loops: the ``transpose_blocks`` meta with ``nc = 1`` (``burst`` bytes
    per row, rows ``a``, batch ``b``); each row as :func:`copy_dense` streaming its whole lines if ``nt``, else
    with regular stores of whole destination lines (:func:`_row_cached`)."""
    burst = meta[0]
    sb, db = meta[2], meta[3]
    sa, da = meta[5], meta[6]
    nt = meta[16] != 0
    d0, s0 = address(dst, dbase), address(src, sbase)  # (regular stores on addresses: see _vector_copy)
    for ib in range(meta[12], meta[13]):
        for ia in range(meta[14], meta[15]):
            if nt:
                _dense(dst, dbase + ib * db + ia * da, src, sbase + ib * sb + ia * sa, burst, True)
            else:
                _row_cached(d0 + ib * db + ia * da, s0 + ib * sb + ia * sa, burst)
    if nt:
        store_fence()

"""Element transposes on flat ``uint8`` views: the ``transpose_blocks`` step shape with blocks of one element
(1, 2, 4 or 8 bytes) instead of whole 32-byte blocks (the cube's transposing loads: a 16x16 half fractal, the
b8 / b32 squares of ``LoadDataWithTranspose``, the channel-to-C0 staging of ``img2col``).

The same ``meta`` as ``transpose_blocks`` (:mod:`fastcopy.dma.abi`)::

    dst[d:d+w] = src[s:s+w],  d = dbase + ib*db + ia*da + ic*dc,  s = sbase + ib*sb + ia*sa + ic*sc

with ``w = burst``, ``sa == w`` (the ``a`` loop reads the source contiguously) and ``dc == w`` (the ``c`` loop
writes the destination contiguously), as the lowering guarantees. The work is cut into tiles of ``N x N``
elements, ``N = 32 / w`` (two side by side where the ``a`` loop allows): ``N`` source runs of 32 bytes are loaded
as vectors, transposed in registers by ``log2 N`` rounds of interleaving shuffles, and stored as ``N``
destination runs of 32 bytes. Partial tiles at the edges move element by
element.
"""

from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic


def _tile_intrinsic(w: int, tiles: int):
    """An intrinsic ``(dst, d, da, src, s, sc)``: ``tiles`` side-by-side ``N x N`` tiles (``N = 32 // w``) of
    ``w``-byte elements, source row ``k`` being the ``32*tiles`` bytes at ``src[s + k*sc]``, written transposed:
    destination row ``j`` (32 bytes at ``dst[d + j*da]``) holds element ``j`` of every source row.

    Each row is two 16-byte lanes of ``L = N/2`` elements. Rows ``0..L-1`` and ``L..N-1`` each have their two
    ``L x L`` lane blocks transposed by ``log2 L`` rounds of in-lane interleaves (the perfect shuffle: every round
    rotates the block's index bits by one; x86 ``punpckl/h``), then one round across lanes assembles each
    destination row from one lane of each group (``vperm2i128``): ``N log2 N`` single-instruction shuffles.
    Two tiles read whole 64-byte lines: source rows a multiple of 4 KiB apart share one L1 set, and a line read
    half at a time is evicted before its second half is used."""
    n = 32 // w
    half = n // 2
    vec = ir.VectorType(ir.IntType(8 * w), n)

    def mask(idx):
        return ir.Constant(ir.VectorType(ir.IntType(32), n), idx)

    lo = mask([x for lane in range(2) for k in range(half // 2) for x in (lane * half + k, n + lane * half + k)])
    hi = mask([x for lane in range(2) for k in range(half // 2, half) for x in (lane * half + k, n + lane * half + k)])
    cross_lo = mask(list(range(half)) + list(range(n, n + half)))
    cross_hi = mask(list(range(half, n)) + list(range(n + half, 2 * n)))
    rounds = half.bit_length() - 1

    def transpose(builder, rows, dp, da, first):
        groups = []
        for g in range(2):
            r = rows[g * half:(g + 1) * half]
            for _ in range(rounds):
                out = []
                for m in range(half // 2):
                    a, b = r[m], r[m + half // 2]
                    out.append(builder.shuffle_vector(a, b, lo))
                    out.append(builder.shuffle_vector(a, b, hi))
                r = out
            groups.append(r)
        for j in range(half):
            for k, m in ((j, cross_lo), (half + j, cross_hi)):
                p = builder.gep(dp, [builder.mul(da, ir.Constant(da.type, first + k))])
                builder.store(builder.shuffle_vector(groups[0][j], groups[1][j], m),
                              builder.bitcast(p, vec.as_pointer()), align=1)

    def impl(typingctx, dst, d, da, src, s, sc):
        sig = types.void(dst, types.intp, types.intp, src, types.intp, types.intp)

        def codegen(context, builder, signature, args):
            dary = context.make_array(signature.args[0])(context, builder, args[0])
            sary = context.make_array(signature.args[3])(context, builder, args[3])
            dp = builder.gep(dary.data, [args[1]])
            sp = builder.gep(sary.data, [args[4]])
            da_, sc_ = args[2], args[5]
            loaded = [[] for _ in range(tiles)]
            for k in range(n):
                p = builder.gep(sp, [builder.mul(sc_, ir.Constant(sc_.type, k))])
                for t in range(tiles):
                    q = builder.gep(p, [ir.Constant(sc_.type, 32 * t)])
                    loaded[t].append(builder.load(builder.bitcast(q, vec.as_pointer()), align=1))
            for t in range(tiles):
                transpose(builder, loaded[t], dp, da_, t * n)
            return context.get_dummy_value()

        return sig, codegen

    return intrinsic(impl)


tile8, tile8x2 = _tile_intrinsic(1, 1), _tile_intrinsic(1, 2)
tile16, tile16x2 = _tile_intrinsic(2, 1), _tile_intrinsic(2, 2)
tile32, tile32x2 = _tile_intrinsic(4, 1), _tile_intrinsic(4, 2)
tile64, tile64x2 = _tile_intrinsic(8, 1), _tile_intrinsic(8, 2)


@njit(inline="always", boundscheck=False)
def _edge(dst, d, da, src, s, sc, w, na, nc):
    """A partial tile, element by element: ``na`` destination rows of ``nc`` elements."""
    for ia in range(na):
        for ic in range(nc):
            dd = d + ia * da + ic * w
            ss = s + ia * w + ic * sc
            for k in range(w):
                dst[dd + k] = src[ss + k]


def _walker(tile, tile2, w: int):
    n = 32 // w

    # whole tiles; two functions: with the two-tile loop in it, the one-tile loop alone (one tile along ``a``: a
    # fractal) measured 2x slower
    @njit(nogil=True, boundscheck=False)
    def singles(dst, dbase, src, sbase, b_lo, b_hi, sb, db, a_lo, a_end, da, c_end, sc):
        for ib in range(b_lo, b_hi):
            sbb = sbase + ib * sb
            dbb = dbase + ib * db
            for a0 in range(a_lo, a_end, n):
                for c0 in range(0, c_end, n):
                    tile(dst, dbb + a0 * da + c0 * w, da, src, sbb + a0 * w + c0 * sc, sc)

    @njit(nogil=True, boundscheck=False)
    def pairs(dst, dbase, src, sbase, b_lo, b_hi, sb, db, a_lo, a_end, da, c_end, sc):
        for ib in range(b_lo, b_hi):
            sbb = sbase + ib * sb
            dbb = dbase + ib * db
            a0 = a_lo
            while a0 + 2 * n <= a_end:
                for c0 in range(0, c_end, n):
                    tile2(dst, dbb + a0 * da + c0 * w, da, src, sbb + a0 * w + c0 * sc, sc)
                a0 += 2 * n
            if a0 < a_end:
                for c0 in range(0, c_end, n):
                    tile(dst, dbb + a0 * da + c0 * w, da, src, sbb + a0 * w + c0 * sc, sc)

    @njit(inline="always", boundscheck=False)
    def walk(dst, dbase, src, sbase, meta):
        sb, db = meta[2], meta[3]
        da = meta[6]
        nc, sc = meta[7], meta[8]
        a_lo, a_hi = meta[14], meta[15]
        a_end = a_lo + (a_hi - a_lo) // n * n  # whole tiles: rows [a_lo, a_end), columns [0, c_end)
        c_end = nc // n * n
        if a_end - a_lo >= 2 * n:
            pairs(dst, dbase, src, sbase, meta[12], meta[13], sb, db, a_lo, a_end, da, c_end, sc)
        else:
            singles(dst, dbase, src, sbase, meta[12], meta[13], sb, db, a_lo, a_end, da, c_end, sc)
        if c_end < nc or a_end < a_hi:
            for ib in range(meta[12], meta[13]):
                sbb = sbase + ib * sb
                dbb = dbase + ib * db
                if c_end < nc:  # the last columns of the whole-tile rows, then the last rows
                    _edge(dst, dbb + a_lo * da + c_end * w, da, src, sbb + a_lo * w + c_end * sc, sc, w,
                          a_end - a_lo, nc - c_end)
                if a_end < a_hi:
                    _edge(dst, dbb + a_end * da, da, src, sbb + a_end * w, sc, w, a_hi - a_end, nc)

    return walk


_walk8 = _walker(tile8, tile8x2, 1)
_walk16 = _walker(tile16, tile16x2, 2)
_walk32 = _walker(tile32, tile32x2, 4)
_walk64 = _walker(tile64, tile64x2, 8)


@njit(cache=True, nogil=True, boundscheck=False)
def transpose_elements(dst, dbase, src, sbase, meta):
    # meta: [burst, nb, sb, db, na, sa, da, nc, sc, dc, tile_a, tile_c, b_lo, b_hi, a_lo, a_hi, nt] (bytes;
    # fastcopy.dma.abi.pack_transpose); burst in (1, 2, 4, 8), sa == dc == burst
    w = meta[0]
    if w == 2:
        _walk16(dst, dbase, src, sbase, meta)
    elif w == 1:
        _walk8(dst, dbase, src, sbase, meta)
    elif w == 4:
        _walk32(dst, dbase, src, sbase, meta)
    else:
        _walk64(dst, dbase, src, sbase, meta)


__all__ = ["transpose_elements"]

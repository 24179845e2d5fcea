"""Element transposes on flat ``uint8`` views: the ``transpose_blocks`` step shape with blocks of one element
(1, 2, 4 or 8 bytes) instead of whole 32-byte blocks (the cube's transposing loads: a 16x16 half fractal, the
b8 / b32 squares of ``LoadDataWithTranspose``, the channel-to-C0 staging of ``img2col``).

The same ``meta`` as ``transpose_blocks`` (:mod:`fastcopy.dma.abi`)::

    dst[d:d+w] = src[s:s+w],  d = dbase + ib*db + ia*da + ic*dc,  s = sbase + ib*sb + ia*sa + ic*sc

with ``w = burst``, ``sa == w`` (the ``a`` loop reads the source contiguously) and ``dc == w`` (the ``c`` loop
writes the destination contiguously), as the lowering guarantees. The work is cut into tiles of ``N x N``
elements, ``N = 32 / w`` (two side by side where the ``a`` loop allows): ``N`` source runs of 32 bytes are loaded
as vectors, transposed in registers, and stored as ``N`` destination runs of 32 bytes. Partial tiles at the
edges move element by element.

Where the CPU has AVX-512 (BW) the tile is held in ``N/2`` 64-byte registers and transposed by a butterfly of
two-register permutes (``log2(N/2)`` rounds, each register pair exchanging half its elements: 24 permutes for a
16x16 half fractal, which LLVM lowers to ``vpermt2q`` / ``vshufi64x2`` / ``vpermt2w``); elsewhere by in-lane
interleaves on 32-byte registers (``N log2 N`` shuffles). Measured on one core, 64 KiB of 16x16 half fractals:
1.0x ``np.copyto`` of the bytes against 0.87x for the 32-byte version.
"""

import llvmlite.binding as _llvm
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

from .layout import prefetch

#: 64-byte registers with 16-bit element permutes (checked once, like numba's own target choice)
ZMM = bool(_llvm.get_host_cpu_features().get("avx512bw", False))
#: how many tiles ahead of its stores the walk over whole contiguous tiles (fractals) brings its destination lines
#: into L1 (a store into a line not there fetches it first and holds up the stores behind it): 64 KiB of 16x16 half
#: fractals in a compiled loop, one core, measured 1.19-1.22 us at 2 or 3 against 1.29-1.33 us without (memcpy of
#: the same bytes: 1.15-1.18 us; ``prefetchw`` instead of ``prefetcht0``: the same)
WRITE_AHEAD = 2


def _butterfly(regs, out_of, final):
    """Rounds of two-register permutes taking registers of labelled elements (``regs``: equal-length label lists)
    to registers ``o`` holding exactly the labels with ``out_of(label) == o``, in the order ``final(o)``.
    Round ``b`` (high bit first) pairs ``i`` with ``i | 2**b``; each keeps the labels whose output index has its
    own bit ``b``. Returns ``[[(i, j, mask_i, mask_j), ...], ...]``: masks index ``concat(reg_i, reg_j)``."""
    m = len(regs)
    regs = [list(r) for r in regs]
    rounds = []
    for b in reversed(range(m.bit_length() - 1)):
        bit, ops, new = 1 << b, [], list(regs)
        for i in range(m):
            if i & bit:
                continue
            j = i | bit
            both = regs[i] + regs[j]
            if b == 0:  # the last round puts each register in its final order
                lo, hi = [both.index(x) for x in final(i)], [both.index(x) for x in final(j)]
            else:
                lo = [k for k, lab in enumerate(both) if not out_of(lab) & bit]
                hi = [k for k, lab in enumerate(both) if out_of(lab) & bit]
            if len(lo) != len(regs[i]) or len(hi) != len(regs[j]):
                raise AssertionError("unbalanced butterfly")
            ops.append((i, j, lo, hi))
            new[i], new[j] = [both[k] for k in lo], [both[k] for k in hi]
        regs = new
        rounds.append(ops)
    if any(r != final(o) for o, r in enumerate(regs)):
        raise AssertionError("butterfly does not reach the transpose")
    return rounds


def _i32s(idx):
    return ir.Constant(ir.VectorType(ir.IntType(32), len(idx)), idx)


def _zmm_tile_intrinsic(w: int, tiles: int, adjacent: bool = False):
    """:func:`_tile_intrinsic` on 64-byte registers: register ``k`` holds source rows ``2k`` and ``2k+1`` (label
    ``(row, column)``), output register ``o`` destination rows ``2o`` and ``2o+1`` (source columns), so one
    tile is ``N/2`` registers and ``log2(N/2)`` butterfly rounds. With two tiles, every load comes first (each
    64-byte source line read whole, see :func:`_tile_intrinsic`). ``adjacent``: for destination rows 32 bytes
    apart only (``da == 32``, the caller's promise), each register is stored whole, one 64-byte store for two
    rows: half the stores, so a thread's store buffer holds twice as many tiles while an earlier store waits
    for its line (the pair lane's post: 64 KiB of 16x16 half fractals split on two threads 0.76 against 0.80 us,
    bare; one core 1.17 against 1.18 us)."""
    n, m = 32 // w, 16 // w
    half = ir.VectorType(ir.IntType(8 * w), n)
    regs = [[(2 * k + h, c) for h in range(2) for c in range(n)] for k in range(m)]
    rounds = _butterfly(regs, lambda lab: lab[1] // 2, lambda o: [(r, 2 * o + h) for h in range(2) for r in range(n)])
    masks = [[(i, j, _i32s(lo), _i32s(hi)) for i, j, lo, hi in ops] for ops in rounds]
    concat, lo_half, hi_half = _i32s(list(range(2 * n))), _i32s(list(range(n))), _i32s(list(range(n, 2 * n)))

    def transpose(builder, rows, dp, da, first):
        regs = [builder.shuffle_vector(rows[2 * k], rows[2 * k + 1], concat) for k in range(m)]
        for ops in masks:
            new = list(regs)
            for i, j, lo, hi in ops:
                new[i] = builder.shuffle_vector(regs[i], regs[j], lo)
                new[j] = builder.shuffle_vector(regs[i], regs[j], hi)
            regs = new
        for o in range(m):
            if adjacent:
                p = builder.gep(dp, [builder.mul(da, ir.Constant(da.type, first + 2 * o))])
                builder.store(regs[o], builder.bitcast(p, regs[o].type.as_pointer()), align=1)
                continue
            for h, sel in ((0, lo_half), (1, hi_half)):
                p = builder.gep(dp, [builder.mul(da, ir.Constant(da.type, first + 2 * o + h))])
                row = builder.shuffle_vector(regs[o], regs[o], sel)
                builder.store(row, builder.bitcast(p, half.as_pointer()), align=1)

    return _tile_codegen(half, n, tiles, transpose)


def _tile_codegen(vec, n: int, tiles: int, transpose):
    """The intrinsic around a tile transpose: ``tiles`` x ``n`` source rows loaded as ``vec`` (32 bytes each,
    the tiles side by side), then ``transpose(builder, rows, dst pointer, da, first destination row)`` per tile."""

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

    return _tile_codegen(vec, n, tiles, transpose)


_tile = _zmm_tile_intrinsic if ZMM else _tile_intrinsic
tile8, tile8x2 = _tile(1, 1), _tile(1, 2)
tile16, tile16x2 = _tile(2, 1), _tile(2, 2)
tile32, tile32x2 = _tile(4, 1), _tile(4, 2)
tile64, tile64x2 = _tile(8, 1), _tile(8, 2)
# (destination rows 32 bytes apart: whole 64-byte registers stored; the 32-byte form stores rows already)
tile8a, tile16a, tile32a, tile64a = ((_zmm_tile_intrinsic(w, 1, adjacent=True) for w in (1, 2, 4, 8)) if ZMM
                                     else (tile8, tile16, tile32, tile64))


@njit(inline="always", boundscheck=False)
def _edge(dst, d, da, src, s, sc, w, na, nc):
    """A partial tile, element by element: ``na`` destination rows of ``nc`` elements."""
    for ia in range(na):
        for ic in range(nc):
            dd = d + ia * da + ic * w
            ss = s + ia * w + ic * sc
            for k in range(w):
                dst[dd + k] = src[ss + k]


@njit(inline="always", boundscheck=False)
def _ahead(dst, at, span):
    """Ask for the ``span`` destination bytes from ``at`` (whole lines) ahead of their stores."""
    for k in range(0, span, 64):
        prefetch(dst, at + k)


def _walker(tile, tile2, tile_a, w: int):
    n = 32 // w

    # whole tiles; two functions: with the two-tile loop in it, the one-tile loop alone (one tile along ``a``: a
    # fractal) measured 2x slower
    @njit(nogil=True, boundscheck=False)
    def singles(dst, dbase, src, sbase, b_lo, b_hi, sb, db, a_lo, a_end, da, c_end, sc, backward):
        if da == 32 and sc == 32:  # whole contiguous tiles (16x16 half fractals): the strides as constants let
            span = (a_end - a_lo) * 32  # a tile's rows load and store as whole 64-byte registers (1.6x)
            if span == 32 * n and c_end == n:  # one tile a batch (LoadData's fractals): one loop, its prefetches
                d0 = dbase + a_lo * 32  # a constant count (64 KiB of 16x16 half fractals, one core, compiled loop:
                s0 = sbase + a_lo * w  # 1.17-1.18 us against 1.30-1.33 us in the loops below; memcpy 1.17)
                if backward:  # (last batch first: see transpose_elements_turned)
                    for ib in range(b_hi - 1, b_lo - 1, -1):
                        if ib - WRITE_AHEAD >= b_lo:
                            _ahead(dst, d0 + (ib - WRITE_AHEAD) * db, 32 * n)
                        tile_a(dst, d0 + ib * db, 32, src, s0 + ib * sb, 32)
                    return
                for ib in range(b_lo, b_hi):
                    if ib + WRITE_AHEAD < b_hi:
                        _ahead(dst, d0 + (ib + WRITE_AHEAD) * db, 32 * n)
                    tile_a(dst, d0 + ib * db, 32, src, s0 + ib * sb, 32)
                return
            for ib in range(b_lo, b_hi):
                if ib + WRITE_AHEAD < b_hi:  # (only lines this call writes: a pair's other half stays on its core)
                    _ahead(dst, dbase + (ib + WRITE_AHEAD) * db + a_lo * 32, span)
                for a0 in range(a_lo, a_end, n):
                    for c0 in range(0, c_end, n):
                        tile(dst, dbase + ib * db + a0 * 32 + c0 * w, 32, src, sbase + ib * sb + a0 * w + c0 * 32, 32)
            return
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
    def walk(dst, dbase, src, sbase, meta, backward):
        sb, db = meta[2], meta[3]
        da = meta[6]
        nc, sc = meta[7], meta[8]
        a_lo, a_hi = meta[14], meta[15]
        a_end = a_lo + (a_hi - a_lo) // n * n  # whole tiles: rows [a_lo, a_end), columns [0, c_end)
        c_end = nc // n * n
        if a_end - a_lo >= 2 * n:
            pairs(dst, dbase, src, sbase, meta[12], meta[13], sb, db, a_lo, a_end, da, c_end, sc)
        else:
            singles(dst, dbase, src, sbase, meta[12], meta[13], sb, db, a_lo, a_end, da, c_end, sc, backward)
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


_walk8 = _walker(tile8, tile8x2, tile8a, 1)
_walk16 = _walker(tile16, tile16x2, tile16a, 2)
_walk32 = _walker(tile32, tile32x2, tile32a, 4)
_walk64 = _walker(tile64, tile64x2, tile64a, 8)


@njit(inline="always", boundscheck=False)
def _transpose(dst, dbase, src, sbase, meta, backward):
    # meta: [burst, nb, sb, db, na, sa, da, nc, sc, dc, tile_a, tile_c, b_lo, b_hi, a_lo, a_hi, nt] (bytes;
    # fastcopy.dma.abi.pack_transpose); burst in (1, 2, 4, 8), sa == dc == burst
    w = meta[0]
    if w == 2:
        _walk16(dst, dbase, src, sbase, meta, backward)
    elif w == 1:
        _walk8(dst, dbase, src, sbase, meta, backward)
    elif w == 4:
        _walk32(dst, dbase, src, sbase, meta, backward)
    else:
        _walk64(dst, dbase, src, sbase, meta, backward)


@njit(cache=True, nogil=True, boundscheck=False)
def transpose_elements(dst, dbase, src, sbase, meta):
    _transpose(dst, dbase, src, sbase, meta, False)


@njit(cache=True, nogil=True, boundscheck=False)
def transpose_elements_turned(dst, dbase, src, sbase, meta, backward):
    """:func:`transpose_elements`, the walk over one whole contiguous tile a batch (LoadData's fractals) taking the
    batches last first when ``backward`` (the same bytes written). A caller that runs the same transpose again and
    again (a tile loop's loads into one L0A / L0B: the pair lane) turns at every call, so each call starts on the
    lines the one before ended on, which are still in L1: a 64 KiB tile (70 KiB on a pair's side, source and
    destination) does not fit the 48 KiB L1, so the same order every time finds none of them there. Bare, one core,
    70 of the 16x16 half fractals: 0.62 us the same way every time, 0.55 us in turn (into one destination, from
    two sources in turn: the destination's lines do it); all 128: 1.17 against 1.05-1.12 us."""
    _transpose(dst, dbase, src, sbase, meta, backward)


__all__ = ["transpose_elements", "transpose_elements_turned"]

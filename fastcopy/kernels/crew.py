"""The helper threads' side of a parallel kernel call, in numba: a call shared with persistent helpers through
one int64 *box*, without waking a Python thread pool (on this VM, waking an idle core through a thread pool
measured 15-90 us per call; a helper spinning in numba picks a job up in well under a microsecond).

A job is one kernel (``kind``) over one destination and one source array, cut into ``n`` chunks (rows of an
int64 ``table``: a kernel ``meta`` each, or ``(offset, length)`` pieces). The caller publishes it
(:func:`publish`, holding the GIL), then takes chunks itself (:func:`join`, GIL released) while the helpers
(:func:`serve`) take them too; a chunk is claimed by one compare-and-swap on the box's word ``gen << 32 | next``,
so each runs exactly once, and the caller waits only for chunks a helper has started. A helper spins (``pause``)
for a bounded number of TSC ticks after its last chunk, then sleeps on a futex in the box (never returning to
Python, so it never waits for the GIL).

Arrays reach the helpers as addresses (the caller keeps them alive until :func:`join` returns). The box layout
is private to this module and :mod:`fastcopy.dma.crew`; its slots are the constants below.
"""

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .elements import transpose_elements
from .layout import copy_dense, copy_rows, fill_dense, transpose_blocks
from .strided import copy_strided, fill_strided

# box slots (int64; the word, the done count and the header on separate cache lines)
WORD, DONE, STOP, SLEEPING, WAKE, SPIN, HELPED = 0, 8, 16, 17, 18, 19, 20
KIND, NCHUNK, DADDR, DLEN, DBASE, SADDR, SLEN, SBASE, WIDTH, VALUE, NT, TADDR, TCOLS = range(24, 37)
BOX_SIZE = 48
BUSY = 0xFFFFFFFF
# job kinds
COPY, FILL, TRANSPOSE, ROWS, DENSE, FILL_DENSE, ELEMENTS = range(1, 8)


def _ptr(context, builder, signature, args):
    ary = context.make_array(signature.args[0])(context, builder, args[0])
    return builder.gep(ary.data, [args[1]])


@intrinsic
def atomic_load(typingctx, arr, i):
    sig = types.int64(arr, types.intp)

    def codegen(context, builder, signature, args):
        return builder.load_atomic(_ptr(context, builder, signature, args), "seq_cst", 8)

    return sig, codegen


@intrinsic
def atomic_store(typingctx, arr, i, v):
    sig = types.void(arr, types.intp, types.int64)

    def codegen(context, builder, signature, args):
        builder.store_atomic(args[2], _ptr(context, builder, signature, args), "seq_cst", 8)
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def atomic_add(typingctx, arr, i, v):
    """Add ``v``, return the old value."""
    sig = types.int64(arr, types.intp, types.int64)

    def codegen(context, builder, signature, args):
        return builder.atomic_rmw("add", _ptr(context, builder, signature, args), args[2], "seq_cst")

    return sig, codegen


@intrinsic
def compare_swap(typingctx, arr, i, old, new):
    """Set the slot to ``new`` if it holds ``old``; True if it did."""
    sig = types.boolean(arr, types.intp, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        res = builder.cmpxchg(_ptr(context, builder, signature, args), args[2], args[3], "seq_cst", "seq_cst")
        return builder.extract_value(res, 1)

    return sig, codegen


def _x86(name, ret):
    @intrinsic
    def impl(typingctx):
        sig = ret()

        def codegen(context, builder, signature, args):
            lty = ir.IntType(64) if ret is types.int64 else ir.VoidType()
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(lty, []), name)
            out = builder.call(fn, [])
            return out if ret is types.int64 else context.get_dummy_value()

        return sig, codegen

    return impl


pause = _x86("llvm.x86.sse2.pause", types.void)
rdtsc = _x86("llvm.readcyclecounter", types.int64)


@intrinsic
def _voidptr(typingctx, addr):
    sig = types.voidptr(types.int64)

    def codegen(context, builder, signature, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return sig, codegen


@njit(inline="always")
def _bytes(box, addr_slot, len_slot):
    return carray(_voidptr(box[addr_slot]), box[len_slot] * box[WIDTH], np.uint8)


@njit(inline="always")
def _units(box, addr_slot, len_slot, dt):
    return carray(_voidptr(box[addr_slot]), box[len_slot], dt)


@njit(inline="always")
def _strided(box, meta, dt):
    dst = _units(box, DADDR, DLEN, dt)
    if box[KIND] == COPY:
        copy_strided(dst, box[DBASE], _units(box, SADDR, SLEN, dt), box[SBASE], meta)
    else:
        fill_strided(dst, box[DBASE], meta, np.uint64(box[VALUE]))


@njit(nogil=True, cache=True)
def run_chunk(box, k):
    """Run chunk ``k`` of the published job."""
    cols = box[TCOLS]
    row = carray(_voidptr(box[TADDR] + 8 * k * cols), cols, np.int64)
    kind = box[KIND]
    if kind == COPY or kind == FILL:
        w = box[WIDTH]
        if w == 1:
            _strided(box, row, np.uint8)
        elif w == 2:
            _strided(box, row, np.uint16)
        elif w == 4:
            _strided(box, row, np.uint32)
        else:
            _strided(box, row, np.uint64)
        return
    dst = _bytes(box, DADDR, DLEN)
    src = _bytes(box, SADDR, SLEN)
    if kind == TRANSPOSE:
        transpose_blocks(dst, box[DBASE], src, box[SBASE], row)
    elif kind == ROWS:
        copy_rows(dst, box[DBASE], src, box[SBASE], row)
    elif kind == ELEMENTS:
        transpose_elements(dst, box[DBASE], src, box[SBASE], row)
    elif kind == DENSE:
        copy_dense(dst, box[DBASE] + row[0], src, box[SBASE] + row[0], row[1], box[NT] != 0)
    else:  # FILL_DENSE: src is the 4096-byte pattern page
        fill_dense(dst, box[DBASE] + row[0], row[1], src)


@njit(inline="always")
def _claim(box):
    """Claim the next chunk of the current job: its index, or -1 when none is left."""
    while True:
        w = atomic_load(box, WORD)
        k = w & BUSY
        if k == BUSY or k >= box[NCHUNK]:
            return -1
        if compare_swap(box, WORD, w, w + 1):
            return k


@njit(inline="always")
def _work(box):
    """Run chunks until none is left; how many ran."""
    ran = 0
    while True:
        k = _claim(box)
        if k < 0:
            return ran
        run_chunk(box, k)
        atomic_add(box, DONE, 1)
        ran += 1


@intrinsic
def _futex(typingctx, arr, i, op, val):
    """``syscall(SYS_futex, &arr[i], op, val, NULL)`` on the slot's low 32 bits (x86-64 Linux)."""
    sig = types.int64(arr, types.intp, types.int64, types.int64)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64] * 5, var_arg=True),
                                            "syscall")
        addr = builder.ptrtoint(_ptr(context, builder, signature, args), i64)
        return builder.call(fn, [ir.Constant(i64, 202), addr, args[2], args[3], ir.Constant(i64, 0)])

    return sig, codegen


FUTEX_WAIT, FUTEX_WAKE = 128, 129  # (private futexes)


@intrinsic
def _sched_yield(typingctx):
    sig = types.int64()

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64], var_arg=True), "syscall")
        return builder.call(fn, [ir.Constant(i64, 24)])

    return sig, codegen


@njit(inline="always")
def _breathe():
    """A short wait (~1 us) that lets another thread of this core run: a spinning helper and the caller may
    share one core when the machine is busy, and must not hold each other up for a whole time slice."""
    for _ in range(16):
        pause()
    _sched_yield()


@njit(inline="always")
def _idle(box):
    """Nothing to claim now (no job, or every chunk of it taken)."""
    w = atomic_load(box, WORD)
    k = w & BUSY
    return k == BUSY or k >= box[NCHUNK]


@njit(nogil=True, cache=True)
def serve(box):
    """A helper, for the life of the process: run chunks as jobs come; after ``box[SPIN]`` TSC ticks without
    work, sleep on the box's futex until a caller wakes it. Returns when told to stop."""
    last = rdtsc()
    while atomic_load(box, STOP) == 0:
        ran = _work(box)
        if ran:
            atomic_add(box, HELPED, ran)  # (chunks the helpers ran: a statistic)
            last = rdtsc()
        elif rdtsc() - last <= atomic_load(box, SPIN):
            _breathe()
        else:
            atomic_add(box, SLEEPING, 1)
            seq = atomic_load(box, WAKE)
            if _idle(box) and atomic_load(box, STOP) == 0:
                _futex(box, WAKE, FUTEX_WAIT, seq & 0xFFFFFFFF)
            atomic_add(box, SLEEPING, -1)
            last = rdtsc()
    return 1


@njit(inline="always")
def _wake(box):
    atomic_add(box, WAKE, 1)
    _futex(box, WAKE, FUTEX_WAKE, 0x7FFFFFFF)


@njit(nogil=True, cache=True)
def wake(box):
    _wake(box)


@njit(nogil=True, cache=True)
def stop(box):
    atomic_store(box, STOP, 1)
    _wake(box)


@njit(cache=True)
def job(kind, dst, dbase, src, sbase, table, value, nt):
    """A job's header (the box's slots KIND..TCOLS): ``table`` one chunk per row. The arrays must stay alive
    until the job has been joined."""
    head = np.empty(TCOLS - KIND + 1, np.int64)
    head[KIND - KIND] = kind
    head[NCHUNK - KIND] = table.shape[0]
    head[DADDR - KIND] = dst.ctypes.data
    head[DLEN - KIND] = dst.size
    head[DBASE - KIND] = dbase
    head[SADDR - KIND] = src.ctypes.data
    head[SLEN - KIND] = src.size
    head[SBASE - KIND] = sbase
    head[WIDTH - KIND] = dst.itemsize
    head[VALUE - KIND] = np.int64(value)
    head[NT - KIND] = nt
    head[TADDR - KIND] = table.ctypes.data
    head[TCOLS - KIND] = table.shape[1]
    return head


@njit(cache=True)
def publish(box, head, wake):
    """Post a job (the previous one is finished: its caller has joined it); ``wake``: wake sleeping helpers
    for it. Returns whether a helper was asleep."""
    gen = (atomic_load(box, WORD) >> 32) + 1
    atomic_store(box, WORD, (gen << 32) | BUSY)
    box[DONE] = 0
    for i in range(head.size):
        box[KIND + i] = head[i]
    atomic_store(box, WORD, gen << 32)
    if atomic_load(box, SLEEPING) > 0:  # (seq_cst: a helper going to sleep sees the job, or is woken)
        if wake:
            _wake(box)
        return True
    return False


@njit(nogil=True, cache=True)
def join(box):
    """The caller's share: run chunks until none is left, then wait for those a helper started. Returns the
    TSC ticks spent waiting for a helper per tick of the caller's own work (x 1024)."""
    t0 = rdtsc()
    _work(box)
    t1 = rdtsc()
    n = box[NCHUNK]
    while atomic_load(box, DONE) < n:
        _breathe()
    return (rdtsc() - t1) * 1024 // max(t1 - t0, 1)


@njit(nogil=True, cache=True)
def ticks():
    return rdtsc()

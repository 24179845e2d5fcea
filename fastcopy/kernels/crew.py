"""The helper threads' side of a parallel kernel call, in numba: a call shared with persistent helpers through
one int64 *box*, without waking a Python thread pool (on this VM, waking an idle core through a thread pool
measured 15-90 us per call; a helper spinning in numba picks a job up in well under a microsecond).

A job is one kernel (``kind``) over one destination and one source array, cut into ``n`` chunks (rows of an
int64 ``table``: a kernel ``meta`` each, or ``(offset, length)`` pieces). The caller publishes it
(:func:`publish`, holding the GIL), then takes chunks itself (:func:`join`, GIL released) while the helpers
(:func:`serve`) take them too; a chunk is claimed by one compare-and-swap on the box's word
``gen << 32 | front << 16 | back`` (the caller takes chunks from the front, the helpers from the back: in a row of
calls each core keeps copying the same part, which stays in its own cache), so each runs exactly once, and the
caller waits only for chunks a helper has started. A helper polls the box (``pause``) for a bounded number of
TSC ticks after its last chunk, then sleeps on a futex in the box (never returning to Python, so it never waits
for the GIL).

:func:`go` is the whole call in one compiled function (no Python between deciding and copying): it takes the
box (another thread holding it: the job runs alone), applies the back-off, decides whether to share (a small job
is shared only with a helper that is awake, and never wakes one for itself), publishes, joins and judges the
helper. Its policy numbers are box slots that :mod:`fastcopy.dma.crew` sets from ``config``.

:func:`pair` is the lean form of a call of exactly two chunks (a whole 64 KiB cube tile): posted on a lane of
the box (one cache line each way, the header never copied), the caller runs chunk 0 and a helper chunk 1, under
the same lock, back-off and wake policy as :func:`go`.

numba's on-disk cache of :func:`run_chunk` holds the kernels it calls (elements, layout, strided); numba checks
it only against this file, so :mod:`fastcopy.kernels.cache` stamps every kernel's cache with one digest of all the
kernel sources: a change to any of them recompiles :func:`run_chunk` too.

Arrays reach the helpers as addresses (the caller keeps them alive until :func:`join` returns). The box layout
is private to this module and :mod:`fastcopy.dma.crew`; its slots are the constants below.
"""

import numpy as np
from llvmlite import ir
from numba import carray, njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from .elements import transpose_elements_turned
from .layout import copy_dense, copy_rows, fill_dense, transpose_blocks
from .strided import copy_strided, fill_strided

# box slots (int64; the word, the done count, the helpers' slots, the header and the caller's slots on separate
# cache lines)
WORD, DONE, STOP, SLEEPING, WAKE, SPIN = 0, 8, 16, 17, 18, 19
KIND, NCHUNK, DADDR, DLEN, DBASE, SADDR, SLEN, SBASE, WIDTH, VALUE, NT, TADDR, TCOLS, NBYTES = range(24, 38)
# the caller's side (written under LOCK): back-off state, the last call's TSC, counters; then the policy
LOCK, SKIP, BACKOFF, LAST, SHARED, ALONE, STREAK, TAKEN_BACK = range(40, 48)
T_SPIN, T_WAKE_BYTES, T_GAP, T_SLOW, T_MAX_BACKOFF, T_POLL, T_WAKE_AFTER, T_PAIR_SPIN = range(48, 56)
# the pair lane (:func:`pair`), one writer per cache line: the caller posts (LANE: the call's number, LANE_JOB: its
# header's address), the helper that takes the call says so in CLAIM and ends it in LANE_DONE (2 * number, + 1 if it
# found the call taken back), the caller takes a call back (one the helper has not claimed) in STEAL
LANE, LANE_JOB, CLAIM, LANE_DONE, STEAL = 56, 57, 64, 72, 80
# chunks the helpers ran (a statistic) on the helpers' own line: the callers read STOP and SLEEPING on every
# call, and a count on their line, written after every call, measured ~0.04 us of each pair call (the line came
# back from the helper's core first)
HELPED = 65
# the caller's turn (kernels/elements.py: transpose_elements_turned), flipped at every pair call: on a line of its
# own (the caller's slots' line is full; the lane's lines are read by the helper)
TURN = 88
# the pair lane's own back-off bound (the policy slots' line is full: on the TURN line, written by tune() only)
T_PAIR_SLOW = 89
# a helper's spin after a chunk of a large job (config.BIG_SPIN_US; on the TURN line too, written by tune() only)
T_BIG_SPIN = 90
# the caller's wake-ups (on the TURN line, the caller's alone): GRACE, how many pair calls are still not judged
# after it woke a helper (a helper just back from sleep runs its first chunks cold: judged, one such call
# backed off and put it to sleep again); WOKE, the TSC of its last wake-up (a helper takes 15-90 us to come: the
# calls meanwhile do not wake it again, each wake a system call); their policy numbers T_GRACE and T_REWAKE
GRACE, WOKE, T_GRACE, T_REWAKE = 91, 92, 93, 94
# the back-off length from which the helpers sleep while it lasts (a shorter one keeps them spinning)
T_NAP = 95
BOX_SIZE = 96
HEAD = NBYTES - KIND + 1  # a job header: the box's slots KIND..NBYTES
# a header's slots (``h[H_...]``: the box's slots minus KIND)
(H_KIND, H_NCHUNK, H_DADDR, H_DLEN, H_DBASE, H_SADDR, H_SLEN, H_SBASE, H_WIDTH, H_VALUE, H_NT, H_TADDR, H_TCOLS,
 H_NBYTES) = range(HEAD)
BUSY = 0xFFFFFFFF  # the word's low half while no job is posted
MAX_CHUNKS = 0xFFFF
# a pair job's header (dma/crew.py: pair_job): a job header of two chunks, then the box's address (pair() takes
# the header alone: one array to unbox), then the chunk table
P_BOX = HEAD
# what go() did (its return value)
SHARED_CALL, WOKEN_CALL, ALONE_BACKING_OFF, ALONE_ASLEEP, ALONE_BUSY = range(1, 6)
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
def release_store(typingctx, arr, i, v):
    """A store that no earlier store passes (a plain ``mov`` on x86-64: unlike :func:`atomic_store`, the thread
    does not wait for it to reach the other cores before its next load)."""
    sig = types.void(arr, types.intp, types.int64)

    def codegen(context, builder, signature, args):
        builder.store_atomic(args[2], _ptr(context, builder, signature, args), "release", 8)
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
def _bytes(h, addr_slot, len_slot):
    return carray(_voidptr(h[addr_slot]), h[len_slot] * h[H_WIDTH], np.uint8)


@njit(inline="always")
def _units(h, addr_slot, len_slot, dt):
    return carray(_voidptr(h[addr_slot]), h[len_slot], dt)


@njit(inline="always")
def _strided(h, meta, dt):
    dst = _units(h, H_DADDR, H_DLEN, dt)
    if h[H_KIND] == COPY:
        copy_strided(dst, h[H_DBASE], _units(h, H_SADDR, H_SLEN, dt), h[H_SBASE], meta)
    else:
        fill_strided(dst, h[H_DBASE], meta, np.uint64(h[H_VALUE]))


@njit(nogil=True, cache=True)
def run_chunk(h, k, backward):
    """Run chunk ``k`` of the job whose header is ``h`` (a header array, or the box's header slots); ``backward``:
    an element transpose of one whole tile a batch walks its batches last first (the same bytes)."""
    cols = h[H_TCOLS]
    row = carray(_voidptr(h[H_TADDR] + 8 * k * cols), cols, np.int64)
    kind = h[H_KIND]
    if kind == COPY or kind == FILL:
        w = h[H_WIDTH]
        if w == 1:
            _strided(h, row, np.uint8)
        elif w == 2:
            _strided(h, row, np.uint16)
        elif w == 4:
            _strided(h, row, np.uint32)
        else:
            _strided(h, row, np.uint64)
        return
    dst = _bytes(h, H_DADDR, H_DLEN)
    src = _bytes(h, H_SADDR, H_SLEN)
    if kind == TRANSPOSE:
        transpose_blocks(dst, h[H_DBASE], src, h[H_SBASE], row)
    elif kind == ROWS:
        copy_rows(dst, h[H_DBASE], src, h[H_SBASE], row)
    elif kind == ELEMENTS:
        transpose_elements_turned(dst, h[H_DBASE], src, h[H_SBASE], row, backward)
    elif kind == DENSE:
        copy_dense(dst, h[H_DBASE] + row[0], src, h[H_SBASE] + row[0], row[1], h[H_NT] != 0)
    else:  # FILL_DENSE: src is the 4096-byte pattern page
        fill_dense(dst, h[H_DBASE] + row[0], row[1], src)


@njit(inline="always")
def _header(box):
    """The box's header slots as a header array."""
    return carray(_voidptr(box.ctypes.data + 8 * KIND), HEAD, np.int64)


@njit(inline="always")
def _claim(box, back):
    """Claim the next chunk of the current job, from the front (the caller) or the back (the helpers): its
    index, or -1 when none is left."""
    while True:
        w = atomic_load(box, WORD)
        f, b = (w >> 16) & 0xFFFF, w & 0xFFFF
        n = box[NCHUNK]
        if (w & BUSY) == BUSY or f + b >= n:
            return -1
        if compare_swap(box, WORD, w, w + (1 if back else 1 << 16)):
            return n - 1 - b if back else f


@njit(inline="always")
def _work(box, back):
    """Run chunks until none is left; how many ran."""
    h = _header(box)
    ran = 0
    while True:
        k = _claim(box, back)
        if k < 0:
            return ran
        run_chunk(h, k, False)
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
        # (declared as _futex declares it: one module may hold both calls)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64] * 5, var_arg=True),
                                            "syscall")
        return builder.call(fn, [ir.Constant(i64, 24)] + [ir.Constant(i64, 0)] * 4)

    return sig, codegen


@njit(inline="always")
def _idle(box):
    """Nothing to claim now (no job, or every chunk of it taken, and no pair call posted)."""
    w = atomic_load(box, WORD)
    return ((w & BUSY) == BUSY or ((w >> 16) & 0xFFFF) + (w & 0xFFFF) >= box[NCHUNK]) and (
        atomic_load(box, LANE) <= atomic_load(box, CLAIM))


@njit(inline="always")
def _help_pair(box):
    """A helper's side of a posted pair call: claim it (unless another helper did), then run its second chunk
    unless its caller took it back meanwhile (a claim and a take-back are each a store followed by a read of
    the other's word, both sequentially consistent: at least one of the two sees the other, so the chunk never
    runs twice and never after its caller returned); say done either way. Whether it ran."""
    g = atomic_load(box, LANE)
    c = atomic_load(box, CLAIM)
    if g <= c or not compare_swap(box, CLAIM, c, g):
        return False
    if atomic_load(box, STEAL) >= g:  # taken back (the caller waits for this word only if it saw the claim)
        atomic_store(box, LANE_DONE, 2 * g + 1)
        return False
    run_chunk(carray(_voidptr(box[LANE_JOB]), HEAD, np.int64), 1, (g & 1) == 1)  # (in turn: its calls alternate)
    release_store(box, LANE_DONE, 2 * g)
    return True


@njit(inline="always")
def _poll(box):
    """Wait for work (~1-2 us at most) watching the box between ``pause``s, then let another thread of this
    core run: a spinning helper and the caller may share one core when the machine is busy, and must not hold
    each other up for a whole time slice."""
    for _ in range(box[T_POLL]):
        pause()
        if not _idle(box):
            return
    _sched_yield()


@njit(nogil=True, cache=True)
def serve(box):
    """A helper, for the life of the process: run chunks as jobs come; after ``box[SPIN]`` TSC ticks without
    work (``box[T_PAIR_SPIN]`` after a pair call, ``box[T_BIG_SPIN]`` after a job of at least ``T_WAKE_BYTES``,
    while not backing off), sleep on the box's futex until a caller wakes it. Returns when told to stop."""
    last = rdtsc()
    bonus = 0  # (after a pair call: T_PAIR_SPIN - T_SPIN more ticks of spinning, unless backing off; after a
    # large job T_BIG_SPIN - T_SPIN)
    while atomic_load(box, STOP) == 0:
        ran = _work(box, True)
        if ran:  # (the job's size read from the box: a later job's, if one was posted since, is as good a guess)
            bonus = max(box[T_BIG_SPIN] - box[T_SPIN], 0) if box[NBYTES] >= box[T_WAKE_BYTES] else 0
        if atomic_load(box, LANE) > atomic_load(box, CLAIM):
            if _help_pair(box):
                ran += 1
            bonus = max(box[T_PAIR_SPIN] - box[T_SPIN], 0)
        if ran:
            atomic_add(box, HELPED, ran)  # (chunks the helpers ran: a statistic)
            last = rdtsc()
        elif 0 < atomic_load(box, SPIN) and rdtsc() - last <= atomic_load(box, SPIN) + bonus:
            _poll(box)
        else:
            # (the wake count read before saying so: a caller that sees this helper asleep wakes it after, so the
            # wait below returns at once; read after, a wake-up in between was lost until the next one)
            seq = atomic_load(box, WAKE)
            atomic_add(box, SLEEPING, 1)
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
def job(kind, dst, dbase, src, sbase, table, value, nt, nbytes):
    """A job's header (the box's slots KIND..NBYTES): ``table`` one chunk per row (at most MAX_CHUNKS),
    ``nbytes`` what it moves (the wake policy's measure). The arrays must stay alive until the job has run."""
    if table.shape[0] > MAX_CHUNKS:
        raise ValueError("crew job: too many chunks")
    head = np.empty(HEAD, np.int64)
    head[H_KIND] = kind
    head[H_NCHUNK] = table.shape[0]
    head[H_DADDR] = dst.ctypes.data
    head[H_DLEN] = dst.size
    head[H_DBASE] = dbase
    head[H_SADDR] = src.ctypes.data
    head[H_SLEN] = src.size
    head[H_SBASE] = sbase
    head[H_WIDTH] = dst.itemsize
    head[H_VALUE] = np.int64(value)
    head[H_NT] = nt
    head[H_TADDR] = table.ctypes.data
    head[H_TCOLS] = table.shape[1]
    head[H_NBYTES] = nbytes
    return head


@njit(inline="always")
def _publish(box, head, wake):
    """Post a job (the previous one is finished: its caller has joined it); ``wake``: wake sleeping helpers
    for it. Returns whether a helper was asleep."""
    gen = (atomic_load(box, WORD) >> 32) + 1
    atomic_store(box, WORD, (gen << 32) | BUSY)
    box[DONE] = 0
    for i in range(HEAD):
        box[KIND + i] = head[i]
    atomic_store(box, WORD, gen << 32)
    if atomic_load(box, SLEEPING) > 0:  # (seq_cst: a helper going to sleep sees the job, or is woken)
        if wake:
            _wake(box)
        return True
    return False


@njit(inline="always")
def _join(box):
    """The caller's share: run chunks until none is left, then wait for those a helper started. Returns the
    TSC ticks spent waiting for a helper per tick of the caller's own work (x 1024)."""
    t0 = rdtsc()
    _work(box, False)
    t1 = rdtsc()
    n = box[NCHUNK]
    spins = 0
    while atomic_load(box, DONE) < n:  # (watched between pauses: a small job's helper is done within a few us)
        pause()
        spins += 1
        if spins % box[T_POLL] == 0:
            _sched_yield()
    return (rdtsc() - t1) * 1024 // max(t1 - t0, 1)


@njit(inline="always")
def _alone(head, backward):
    """Every chunk on this thread; ``backward``: last first, each walked backward."""
    n = head[H_NCHUNK]
    for k in range(n):
        run_chunk(head, n - 1 - k if backward else k, backward)


@njit(inline="always")
def _woken(box, now):
    """Wake the helpers for the calls after this one (a caller's wake-up: its pair calls' grace, its time)."""
    _wake(box)
    box[WOKE] = now
    box[GRACE] = box[T_GRACE]


@njit(inline="always")
def _admit(box, big):
    """The policy of a call, before it shares: 0 (share it), or why it runs alone (ALONE_BACKING_OFF,
    ALONE_ASLEEP); counts the calls in a row and wakes a sleeping helper for the calls after a row's
    ``T_WAKE_AFTER``-th (once: again only ``T_REWAKE`` ticks after, if it is still asleep). ``big``: a job that
    wakes a sleeping helper for itself."""
    skip = box[SKIP]
    if skip > 0:  # backing off after a call that a slow helper held up
        box[SKIP] = skip - 1
        if skip == 1:  # the next call tries again, with helpers spinning (a fair trial)
            atomic_store(box, SPIN, box[T_SPIN])
            if atomic_load(box, SLEEPING) > 0:
                _woken(box, rdtsc())
        return ALONE_BACKING_OFF
    now = rdtsc()
    recent = now - box[LAST] < box[T_GAP]
    box[LAST] = now
    box[STREAK] = box[STREAK] + 1 if recent else 0  # (calls in a row before this one, each soon after the last)
    if not big and atomic_load(box, SLEEPING) > 0:
        # a smaller job never waits for a helper's wake-up (15-90 us on a VM); in a row of calls the helper
        # is woken for the next ones (the wake costs this call a system call: not for two calls alone, and not
        # for every call while the helper comes)
        if box[STREAK] >= box[T_WAKE_AFTER] and now - box[WOKE] > box[T_REWAKE]:
            _woken(box, now)
        return ALONE_ASLEEP
    return 0


@njit(inline="always")
def _judge(box, waited, slow):
    """After a shared call: back off when a spinning helper held it up (``waited``: the caller's wait per tick
    of its own work, x 1024) longer than ``slow`` (the box's ``T_SLOW``, or ``T_PAIR_SLOW`` for a pair call: the
    machine is busy)."""
    if waited > slow:
        b = min(2 * box[BACKOFF], box[T_MAX_BACKOFF])
        box[BACKOFF] = b
        box[SKIP] = b
        if b >= box[T_NAP]:  # the helpers sleep at once: no spinning against this thread meanwhile (not for a
            atomic_store(box, SPIN, 0)  # few calls: a helper's wake-up, 15-90 us, outlasts them)
    else:
        box[BACKOFF] = 1


@njit(inline="always")
def _go(box, head):
    big = head[H_NBYTES] >= box[T_WAKE_BYTES]
    code = _admit(box, big)
    if code:
        _alone(head, False)
        return code
    asleep = _publish(box, head, big or box[STREAK] > 0)
    waited = _join(box)
    if asleep:  # (a helper woken for this call is late by its wake-up: no verdict on the machine)
        return WOKEN_CALL
    _judge(box, waited, box[T_SLOW])
    return SHARED_CALL


@njit(nogil=True, cache=True)
def go(box, head):
    """Run the job ``head`` to the end: shared with the helpers through ``box``, or alone on this thread (the
    box held by another thread, backing off, or a small job and a sleeping helper). Returns what it did
    (SHARED_CALL, WOKEN_CALL, ALONE_*)."""
    if not compare_swap(box, LOCK, 0, 1):
        _alone(head, False)
        return ALONE_BUSY
    code = _go(box, head)
    if code == SHARED_CALL or code == WOKEN_CALL:
        box[SHARED] += 1
    else:
        box[ALONE] += 1
    atomic_store(box, LOCK, 0)
    return code


@njit(inline="always")
def _pair(box, head):
    """A pair call (see :func:`pair`) under the box's lock."""
    back = box[TURN] == 0  # (this thread's chunk walks the other way at every call, alone or not; the helper's in
    box[TURN] = 1 if back else 0  # turn of the call numbers: kernels/elements.py, transpose_elements_turned)
    code = _admit(box, False)
    if code:
        _alone(head, back)
        return code
    g = box[LANE] + 1
    box[LANE_JOB] = head.ctypes.data
    # posted after the job's address, without waiting for the line to reach the helper (this thread's own chunk
    # starts at once); a helper going to sleep just now may miss the post, and this thread not see it asleep:
    # the call is then taken back below, as from a helper that does not come
    release_store(box, LANE, g)
    asleep = atomic_load(box, SLEEPING) > 0
    t0 = rdtsc()
    run_chunk(head, 0, back)
    t1 = rdtsc()
    own = max(t1 - t0, 1)
    spins = 0
    stolen = False
    while True:
        d = atomic_load(box, LANE_DONE)
        if d >= 2 * g:  # (a stale word of an earlier call is smaller)
            if d & 1:  # the helper found the chunk taken back by the test below while it claimed it
                run_chunk(head, 1, back)
            break
        # not done within a quarter of the time of this thread's own chunk (a spinning helper claims a call in
        # ~0.2 us; or the helper fell asleep): take the chunk back unless a helper has claimed it (its word is
        # read only then: it stays in the helper's cache)
        if (asleep or rdtsc() - t1 > own >> 2) and atomic_load(box, CLAIM) < g:
            atomic_store(box, STEAL, g)
            if atomic_load(box, CLAIM) < g:  # no helper will run it: this thread does, and backs off
                stolen = True
                box[TAKEN_BACK] += 1  # (a statistic, as SHARED and ALONE)
                run_chunk(head, 1, back)
                break
        pause()
        spins += 1
        if spins % box[T_POLL] == 0:
            _sched_yield()
    if box[GRACE] > 0:  # a helper this thread woke lately: its first calls are no verdict on the machine
        box[GRACE] -= 1
    else:
        _judge(box, (1 << 62) if stolen else (rdtsc() - t1) * 1024 // own, box[T_PAIR_SLOW])
    return SHARED_CALL


# (not nogil: a call from Python keeps the GIL, ~30 ns of a tile's ~1.2 us call not spent releasing and taking it
# back; the helpers never take it, and another Python thread waits one call at most, ~1-2 us)
@njit(cache=True)
def pair(head):
    """Run a job of two chunks (a pair job: its header carries the box's address) on two threads with the
    leanest hand-off: the call is posted on its own cache line (its number and the header's address), this
    thread runs chunk 0 while a spinning helper claims and runs chunk 1, and the helper's done word is the only
    line that comes back; the header and its table are never written, so they stay in both cores' caches. A
    helper that has not claimed chunk 1 when this thread's own chunk is done and a quarter as long again is passed by:
    this thread takes the chunk back and runs it. Alone (no post) when another thread holds the box, the crew
    is stopped, backing off, or the helper asleep (woken, as for :func:`go`, by a row of calls). Returns what
    it did (SHARED_CALL, ALONE_*)."""
    box = carray(_voidptr(head[P_BOX]), BOX_SIZE, np.int64)
    if atomic_load(box, STOP) != 0 or not compare_swap(box, LOCK, 0, 1):
        _alone(head, False)
        return ALONE_BUSY
    code = _pair(box, head)
    if code == SHARED_CALL:
        box[SHARED] += 1
    else:
        box[ALONE] += 1
    atomic_store(box, LOCK, 0)
    return code


@njit(nogil=True, cache=True)
def ticks():
    return rdtsc()

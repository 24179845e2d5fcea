"""Tunables: every number that trades speed for something, in one place (none of them changes a result).

Read once at import; ``FASTCOPY_THREADS`` in the environment overrides the thread count.
"""

from __future__ import annotations

import os

#: worker threads for large kernel steps (1 = never split)
THREADS = max(1, min(int(os.environ.get("FASTCOPY_THREADS", "2")), os.cpu_count() or 1))
#: kernel steps moving at least this many bytes are shared with the helper threads (fastcopy/dma/crew.py;
#: measured through DataCopy on the 2-core VM with both cores free: 1 MiB 26 us shared vs 53-72 us alone,
#: 512 KiB 16.4 vs 15.7 us: no gain below, where both halves fit one core's L2 and a shared call costs ~1-2 us)
PARALLEL_BYTES = 1 << 20
#: an innermost loop reading with a stride of at least TILE_STRIDE bytes and more than TILE iterations is tiled
TILE_STRIDE = 1024
TILE = 64
#: overlap analysis: above this many bursts, a plan whose writes may overlap (no analytic proof) is treated as
#: overlapping (the exact path runs, which is always correct)
OVERLAP_ENUM_BURSTS = 1 << 22
#: kernel calls moving at most this many bytes may run in numpy (no numba load: fast start for short scripts)...
SMALL_BYTES = 1 << 16
#: ... and numpy runs them only for the first CALLS_BEFORE_KERNELS kernel calls of a process; after that (or at
#: the first larger call) the numba kernels are loaded: a process making many calls benefits from them
CALLS_BEFORE_KERNELS = 200
#: layout kernels (fastcopy/kernels/layout.py): a step that is a 2-D transpose of 32-byte blocks and moves at
#: least LAYOUT_BYTES runs on the cache-blocked transpose kernel, in tiles of LAYOUT_TILE_A x LAYOUT_TILE_C
#: blocks (LAYOUT_TILE_C along the destination-contiguous loop, LAYOUT_TILE_A along the source-contiguous one;
#: the threads' pieces are whole tiles where every thread still gets one); LAYOUT_TILE_A_NT x LAYOUT_TILE_C
#: when the output is streamed (at least NT_BYTES). Measured on the 2-core development machine, both vCPUs
#: reserved, bare: streamed, 4096x4096 half, 2 threads: from_nz 1.23-1.26 ms with 1024 x 8 (32 KiB source runs:
#: each fractal column read 8 pages in a row) against 1.29-1.31 ms with 128 x 8 (4 KiB runs, a page each),
#: NZ2ND 1.20-1.28 against 1.28-1.32, the dense streaming copy of the same bytes 1.15-1.21 (docs/performance.md,
#: "What limits the rest"); to_nz half (256 block columns) is cut and tiled as before (two pieces of 128),
#: to_nz float in two pieces of 256 instead of four of 128 (2.49-2.58 ms against 2.65-2.77). Regular stores
#: (an output the caches hold) keep 128: a 1024x1024 float from_nz 160 us with 128 x 8, 181 us with 1024 x 8,
#: 2048x2048 half (regular stores) 344 against 458 us. (Before the reference counting left the streaming loops,
#: 128 x 8 measured 1.60-1.67 ms against 1.78-1.79 for 64 x 8 and 1.73-1.76 for 128 x 4 and 256 x 4, streamed.)
LAYOUT_BYTES = 1 << 16
LAYOUT_TILE_A = 128
LAYOUT_TILE_A_NT = 1024
LAYOUT_TILE_C = 8
#: destinations whose runs are not even 16-byte aligned take regular stores and longer runs, so that fewer
#: lines are shared by two runs written at different times
LAYOUT_TILE_A_UNALIGNED = 32
LAYOUT_TILE_C_UNALIGNED = 32
#: outputs of at least NT_BYTES (larger than a core's L2) are written with non-temporal stores (measured on
#: 4096x4096 transposes: 1.2-2x np.copyto against 0.55-0.75x with regular stores; slower below ~4 MiB)
NT_BYTES = 8 << 20
#: one contiguous burst of at least DENSE_NT_BYTES is copied with streaming stores (copy_dense); smaller ones with
#: memcpy (measured through DataCopy, both cores free: 8 MiB UB->GM 1.09x np.copyto streaming vs 1.73x regular,
#: 16 MiB 1.18x vs 1.91x, 32 MiB UB->GM 1.18-1.57x vs 1.61x, 64 MiB 2.07-2.26x vs 1.91-1.94x)
DENSE_NT_BYTES = 64 << 20
#: steps of bursts at least this long (rows of a padded copy or a slice) writing at least NT_BYTES stream too
ROWS_BURST = 1024
#: ... and steps of bursts at least ROWS_CACHED_BURST long writing at least PARALLEL_BYTES (less than the above)
#: take the same rows kernel with regular stores (pieces of whole planes for the threads; a repeated call binds its
#: crew job once)
ROWS_CACHED_BURST = 512
#: a step split across threads is cut into THREADS * CHUNKS_PER_THREAD pieces that the threads take in turn
#: (a busy or descheduled core then delays the call by one piece, not by half of it; measured interleaved on
#: 4096x4096 transposes: 1-2 pieces per thread 1.1-1.5x np.copyto, 4 pieces 0.9-1.0x) when it moves at least
#: BALANCE_BYTES; a smaller one in THREADS pieces (256 KiB - 1 MiB copies measured 20-70% slower in 4 pieces
#: than in 2: each piece claimed costs a cache-line round trip between the cores)
CHUNKS_PER_THREAD = 2
BALANCE_BYTES = 8 << 20
#: a repeated call whose plan is a few kernel steps (small img2col loads: copies and pad fills) is prepared, its
#: kernel calls bound once, if it has at most PREPARED_STEPS of them (more: planned calls, each through the runner)
PREPARED_STEPS = 16
#: the small-call path consults the known-defined ranges of a destination (and skips setting its plane) for
#: dense spans of at least this many bytes; below it setting the span is cheaper than the lookup
KNOWN_BYTES = 1 << 15
#: the exact path (overlapping writes, aliasing) works through at most this many written bytes at a time (its
#: temporaries are ~40 bytes per written byte): its memory stays bounded whatever the call's size
EXACT_CHUNK = 1 << 21
# ---- h14fast: the cube-in speed paths ----------------------------------------------------------------------------
#: (the strided kernel streams a gather's stores from 1 MiB per thread on: GATHER_NT_BYTES in fastcopy/kernels/
#: strided.py, a compile-time constant there; the 9 MiB img2col gather in 96-byte bursts measured 388 vs 541 us
#: on one thread, 260 us on two, against 707 us for np.copyto)
#: the img2col helper keeps its staging buffer (the NC1HWC0 copy of the map) for the next call up to this size
SCRATCH_KEEP_BYTES = 32 << 20
# ---- h14repeat: repeated calls -----------------------------------------------------------------------------------
#: a destination keeps at most this many remembered calls (fastcopy.api, fastcopy.cube.recall): a cache, cleared
#: whole when full
PREPARED_CALLS = 64
# ---- h14tile: whole tiles on two cores -----------------------------------------------------------------------
#: a repeated load whose kernel work is one contiguous copy or one element transpose of at least PAIR_BYTES (a
#: whole 64 KiB L0A / L0B tile) is split in two, the calling thread doing the first PAIR_SHARE of it and a helper
#: that is awake the rest, through the pair lane of the helpers' box (fastcopy/kernels/crew.py: pair; a round
#: trip between the two vCPUs costs ~0.33 us, so the caller takes more than half)
PAIR_BYTES = 32 << 10
PAIR_SHARE = 0.6
#: the caller's share of a pair-split element transpose (LoadData ifTranspose: 16x16 fractals, the share counted
#: in whole batches), apart from the dense copies' PAIR_SHARE. With the 64-byte-store walk alone 0.55 measured best
#: (through LoadData, four shares bound in one process: 0.55 1.14-1.19x np.copyto, 0.6 1.03-1.17x, 0.5 1.01-1.05x);
#: with the walks in turn (kernels/elements.py: transpose_elements_turned) 0.6 again (the bare pair call 0.95-1.01
#: us against 0.99-1.09 at 0.55; bench/cube_in.py "64 KiB" with its numpy way, three runs: 1.27-1.40 against
#: 1.34-1.45 us a call)
PAIR_SHARE_ELEMENTS = 0.6
#: after a pair call the helper spins PAIR_SPIN_US (not SPIN_US) before it sleeps: a tile loop's other work between
#: two loads (an Mmad of the tile: ~260 us; numpy between calls) must not put it to sleep (a wake-up costs the
#: caller a system call and the helper 15-90 us to come). Measured interleaved with the transposed tile's numpy
#: way (1.4 ms a batch): 1000 us 0.92-0.95x np.copyto, 3000 us 1.03x (chrt, one process)
PAIR_SPIN_US = 3000
# ---- (end of the cube-in block) -----------------------------------------------------------------------------
#: helper threads (fastcopy/dma/crew.py) spin this long after their last chunk before they sleep, so calls in a
#: row pay no thread wake-up (measured on the 2-core VM: waking an idle core costs 15-90 us; 1 MiB DataCopy
#: interleaved with np.copyto: 1.13-1.31x with 200 us, 1.44-1.62x with 1000 us, the helper then still spinning
#: from one call to the next; a spinning helper yields its core every ~0.5 us to any other runnable thread)...
SPIN_US = 1000
#: ... and a sleeping helper is woken for a job of at least WAKE_BYTES, or for any job when the previous parallel
#: call was less than WAKE_GAP seconds ago (a smaller isolated job runs on the calling thread alone)
WAKE_BYTES = 1 << 20
WAKE_GAP = 0.002
#: after a chunk of a job of at least WAKE_BYTES a helper spins BIG_SPIN_US instead (the job itself took ~50 us
#: or more: a loop of large copies with other work between them, up to this long, finds the helper awake instead
#: of waking it, 15-90 us of the next call). Measured on the 8 MiB slice of bench/interleaved.py (each call
#: follows np.copyto and the numpy way, ~1.4 ms, in random order), one process: 1000 us: 19 of 25 calls found
#: the helper asleep, 0.485 ms a call (0.406 awake), 1.20-1.25x np.copyto; 3000 us: 2-4 of 25, 1.35-1.38x
BIG_SPIN_US = 3000
#: a call whose caller waited for a spinning helper longer than SLOW_HELPER x its own share of the work (the
#: machine is busy: another process has the helper's core) makes the next calls run on the calling thread alone:
#: 2, 4, ... up to MAX_BACKOFF of them, until a shared call goes well again (on a quiet machine a helper whose
#: chunk is in the other core's cache measured up to ~1.5x the caller's time: 0.5 backed off wrongly)
SLOW_HELPER = 2.0
#: a pair call (fastcopy/kernels/crew.py: pair, a whole 64 KiB tile) backs off only past PAIR_SLOW_FACTOR x
#: SLOW_HELPER: its own share is ~0.5 us, the hand-off alone ~0.35 us of it, and the first call after a pause of
#: ~1 ms (the bench's numpy way between its batches; a tile loop's other work) meets a helper whose core went
#: cold; judged at 2x, one such call started a back-off whose trial met a helper just woken again, and the
#: transposed 64 KiB row ran its calls alone (bench/cube_in.py "64 KiB": 1581-1905 of 1919 calls alone, 0.89x
#: np.copyto; judged at 4x: 1803-1874 of 1919 shared, 1.04-1.14x; main before the faster walks, whose longer own
#: share kept under the bound: 1.06-1.20x)
PAIR_SLOW_FACTOR = 2.0
#: the first PAIR_WAKE_GRACE pair calls after their caller woke the helper (a row of calls after a pause of more
#: than PAIR_SPIN_US, or a back-off's trial) are not judged: a helper back from sleep runs its first chunks cold,
#: and one such call judged slow backed off and put the helper to sleep again (bench/cube_in.py's transposed row:
#: after a pause, 8-22 of a batch's 128 calls alone, against ~5)
PAIR_WAKE_GRACE = 4
MAX_BACKOFF = 256
#: ... and the helpers sleep while a back-off lasts from SLEEP_BACKOFF calls on (a shorter one keeps them spinning:
#: its trial then meets a helper that is there, where a woken one takes 15-90 us to come)
SLEEP_BACKOFF = 8
#: a repeated call's single contiguous copy of at least HOT_BYTES is shared with a helper that is awake (a call
#: came within its spin window, as in a loop of copies), in one piece per thread (fastcopy/dma/crew.py: dense_job;
#: with the helper asleep the copy runs alone and never wakes it for itself). Measured on the 2-core VM with the
#: other core free (chrt, to stand in for a quiet machine), the bare job against one memcpy: 64 KiB 1.19 vs
#: 1.27 us (the hand-off, ~0.4 us, eats the gain), 128 KiB 1.79 vs 2.68 us, 256 KiB 3.44 vs 5.87 us; through
#: DataCopy interleaved with np.copyto: 128 KiB 0.83x np.copyto (alone ~0.75x), 256 KiB 1.02-1.31x, 512 KiB 1.34-1.54x
HOT_BYTES = 128 << 10
#: ... and such a copy wakes a sleeping helper (for the calls after it; it runs alone itself) when it is the
#: WAKE_AFTER-th call in a row, each within WAKE_GAP of the previous one (waking costs the caller a system call:
#: measured ~5 us more than a no-op compiled call after 5 ms idle, so two calls alone never pay it)
WAKE_AFTER = 2
#: ... once: the calls while it comes (15-90 us) do not wake it again (each wake is a system call, ~0.25 us), unless
#: it is still asleep WAKE_AGAIN_US after
WAKE_AGAIN_US = 100
#: a waiting thread (a polling helper, a caller waiting for a helper's chunk) watches the box between POLL_PAUSES
#: `pause` instructions, then yields its core once (measured on the VM: a pause is ~9 ns, a sched_yield with
#: nothing else to run ~0.17 us; 32 pauses: a helper picks a posted job up in 0.3-0.4 us)
POLL_PAUSES = 32

# ---- definedness planes (fastcopy/memory.py; h11fresh) -----------------------------------------------------
#: fresh memory keeps its definedness as exact ranges of defined bytes, without a byte plane, until a call needs
#: per-byte definedness (measured: a first 64 MiB DataCopy into a fresh TPipe wrote its 64 MiB plane, 1.5x the
#: bytes of a repeat). False: every fresh memory materialises its plane at once (the eager definedness of before,
#: not its costs: the plane's zero pages then fault in on first write; the definedness tests run both and compare)
LAZY_PLANES = True
#: a lazy memory with more than this many disjoint defined ranges materialises its plane (range updates and
#: lookups stay loops over a short list, as the cache of known-defined ranges of a materialised plane)
LAZY_RANGES = 16

# ---- new plans of small calls (fastcopy/formats.py, fastcopy/dma/lower.py; h11plan) --------------------------
#: to_nz / from_nz of arrays whose NZ form is smaller than this run as numpy slice assignments on unsigned views
#: of the arrays (element widths 1, 2, 4, 8; bit for bit the plans' result, a test holds them equal) instead of
#: planning and running move/fill steps: measured, a new 20x40 half shape 35 us -> 13 us, a repeated one 6.6 ->
#: 4 us (numpy's own to_nz of a 64x64 half takes ~1.6 us). 0: always the plans.
NZ_NUMPY_BYTES = 1 << 16
# ---- h11batch: batches of small points ---------------------------------------------------------------------------
#: a batch runs the points of a chunk in stages: up to STAGE_POINTS points compiled, then run, then written (each
#: stage's code stays warm in the processor's caches between points: the 1000-point sweep measured ~10 % less
#: time per point in groups of 16-32 than point by point); a point whose buffers hold more than STAGE_BYTES is
#: written as soon as it has run, so a group never holds more than STAGE_POINTS * STAGE_BYTES of results
STAGE_POINTS = 32
STAGE_BYTES = 1 << 16
# ---- bwrite: a batch point's folder ----------------------------------------------------------------------------
#: a case's first LAYOUT_POINTS points are written piece by piece, later ones by a *layout* made from one of them
#: (golden/files.py): making one costs ~0.3 ms per buffer or op of the program and saves ~3 us per buffer or op at
#: every point it writes, so it pays after ~100 points, and a smaller sweep is better off without one; a program
#: of more than LAYOUT_PARTS buffers and ops gets none (~0.2 s to make one for 512 ops)
LAYOUT_POINTS = 32
LAYOUT_PARTS = 64
# ---- crun: a batch point run straight through ------------------------------------------------------------------
#: a sweep whose points come from its point template gets, at its RUNNER_POINTS-th point run, a runner written for
#: its program structure (golden/fastpoint.py): making one costs ~0.3 ms (its source compiled, the point run twice
#: to check it) and saves ~10 us a point, so a smaller sweep (and the one-point batch) makes none
RUNNER_POINTS = 32
#: a point that raises there (the engine's error is the point's) makes no runner: the next point tries again, up to
#: RUNNER_TRIES points in all (a case whose points keep failing then runs on the engine, as one without a runner)
RUNNER_TRIES = 8
# ---- brun: a batch point's small arrays ----------------------------------------------------------------------------
#: arrays of at most ARENA_PIECE bytes that fastcopy makes for itself (memory.aligned_bytes: a batch point's GM
#: buffers, its input copy) are cut from a per-thread block of ARENA_BYTES (one allocation and one address lookup
#: per block instead of per array, ~1 us each; a block is freed when its last array is; should ARENA_PIECE exceed
#: ARENA_BYTES, a larger piece gets a block of its size)
ARENA_BYTES = 1 << 18
ARENA_PIECE = 1 << 14

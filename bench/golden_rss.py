"""Peak RSS of ``fastcopy run`` on a case with large buffers, against the target 2 x (total buffer bytes) + 100 MB.

    python bench/golden_rss.py [MiB per GM buffer, default 128]

Prints the case's total buffer bytes, the peak RSS of the ``fastcopy run`` process (ru_maxrss), the RSS of
merely importing fastcopy, and the ratio to the target.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CASE = """
name = "rss"
product = "ATLAS_A2"
outputs = [{{buffer = "yGm", allow_undefined = true}}, {{buffer = "zGm", allow_undefined = true}}]

[buffers.xGm]
dtype = "float"
shape = [{n}]
init = {{kind = "uniform", low = -1.0, high = 1.0}}

[buffers.wGm]
dtype = "int16_t"
shape = [{n2}]
init = {{kind = "integers", low = -100, high = 100}}

[buffers.yGm]
dtype = "float"
shape = [{n}]

[buffers.zGm]
dtype = "int16_t"
shape = [{n2}]

[buffers.u]
position = "VECIN"
dtype = "float"
count = 16384

[buffers.v]
position = "VECIN"
dtype = "int16_t"
count = 16384

[[ops]]
api = "DataCopy"
dst = "u"
src = "xGm"
params = {{count = 16384}}

[[ops]]
api = "DataCopy"
dst = "yGm"
src = "u"
params = {{count = 16384}}

[[ops]]
api = "DataCopy"
dst = "v"
src = "wGm"
params = {{count = 16384}}

[[ops]]
api = "DataCopy"
dst = "zGm"
src = "v"
params = {{count = 16384}}
"""


def peak_rss(args, cwd) -> int:
    """Peak RSS in bytes of ``python -m fastcopy ARGS`` (a fresh child, so ru_maxrss is its own)."""
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(r.returncode)")
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", code, sys.executable, *args], cwd=cwd, env=env, check=True,
                         capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1]) * 1024


def measure(mib: int = 128) -> dict:
    n = mib * (1 << 20) // 4
    n2 = mib * (1 << 20) // 2
    total = 4 * mib * (1 << 20) + 2 * 16384 * 4  # xGm, wGm, yGm, zGm + the local tensors
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "rss.toml"), "w") as fh:
            fh.write(CASE.format(n=n, n2=n2))
        run = peak_rss(["-m", "fastcopy", "run", "rss.toml", "-o", "o", "-q"], tmp)
        base = peak_rss(["-c", "import fastcopy.cli, fastcopy.golden"], tmp)
    target = 2 * total + 100 * 10**6
    return {"buffer_bytes": total, "peak_rss": run, "import_rss": base, "target": target, "ratio": run / target}


if __name__ == "__main__":
    r = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 128)
    mb = 1 << 20
    print(f"buffers {r['buffer_bytes'] / mb:.0f} MiB; peak RSS of fastcopy run {r['peak_rss'] / mb:.0f} MiB "
          f"(import alone {r['import_rss'] / mb:.0f} MiB); target 2 x buffers + 100 MB = {r['target'] / mb:.0f} "
          f"MiB; {100 * r['ratio']:.0f}% of the target")

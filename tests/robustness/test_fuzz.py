"""The robustness campaign (see fuzzlib.py): randomised valid and invalid calls on every op family, guard bands
around every memory. Each family runs in a subprocess, so a crash (segfault) fails the test with the seed of
the call that crashed; every other broken promise is reported with its call seed. Replay one call with
``python tests/robustness/fuzzlib.py FAMILY --at CALL_SEED``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fuzzlib import FAMILIES

HERE = Path(__file__).resolve().parent


@pytest.mark.parametrize("family", FAMILIES)
def test_campaign(family, request, tmp_path):
    calls = request.config.getoption("--fuzz-calls")
    seed = request.config.getoption("--fuzz-seed")
    log = tmp_path / f"{family}.log"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parents[1]), os.environ.get("PYTHONPATH", "")]))
    r = subprocess.run([sys.executable, str(HERE / "fuzzlib.py"), family, str(calls), str(seed), str(log)],
                       capture_output=True, text=True, env=env, timeout=max(600, calls))
    lines = log.read_text().split() if log.exists() else []
    replay = f"python tests/robustness/fuzzlib.py {family} --at "
    if r.returncode != 0:
        seeds = [x for x in lines if x != "done"][-5:] or ["?"]
        pytest.fail(f"the {family} campaign died (exit {r.returncode}) at call seed {seeds[-1]}; reproduce with "
                    f"{replay}{seeds[-1]} (a corrupted heap can crash a little later: the calls before it were "
                    f"{seeds[:-1]})\n{r.stderr[-3000:]}")
    summary = json.loads(r.stdout.strip().splitlines()[-1])
    print(json.dumps({k: v for k, v in summary.items() if k != "escape_list"}))
    assert summary["ok"] + summary["rejected"] + summary["skipped"] + summary["escapes"] == calls
    assert summary["ok"] > calls // 5, f"too few accepted calls to mean anything: {summary}"
    details = "\n".join(f"- {replay}{e['call_seed']}: {e['what']}" for e in summary["escape_list"])
    assert summary["escapes"] == 0, f"{summary['escapes']} escapes in the {family} campaign:\n{details}"

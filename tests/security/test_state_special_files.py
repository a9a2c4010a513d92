"""Class 6 (docs/SECURITY.md): a state file replaced by something that is not a regular file.

``posteriors.json`` symlinked to ``/dev/zero`` made every start read forever (the spawned
sidecar reached 5.9 GiB RSS and never answered ``initialize``); a FIFO in its place blocked the
read for good. Each read runs in a child process with a 1 GiB address-space limit and a
deadline, so a regression fails instead of eating the machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

_CHILD = r"""
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
from pathlib import Path
from dsh_sidecar.state.files import StateFile
f = StateFile(Path(sys.argv[1]))
value = f.read()
print(json.dumps({"value": value, "warnings": f.warnings}))
"""


def _plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "dev-zero":
        os.symlink("/dev/zero", path)
    elif kind == "dev-urandom":
        os.symlink("/dev/urandom", path)
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "link-to-fifo":
        os.mkfifo(path.with_name("pipe"))
        os.symlink(path.with_name("pipe"), path)


@pytest.mark.parametrize("kind", ["dev-zero", "dev-urandom", "fifo", "folder", "link-to-fifo"])
@pytest.mark.parametrize("rel", ["bandit/posteriors.json", "search-suggester/knowledge.json"])
def test_special_file_is_a_cold_start(tmp_path: Path, kind: str, rel: str) -> None:
    path = tmp_path / rel
    _plant(path, kind)
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout)
    assert out["value"] is None
    assert len(out["warnings"]) == 1 and "starting cold" in out["warnings"][0]
    # set aside under the lock: the next start finds nothing in the way
    assert not os.path.lexists(path)
    assert [p.name.split("-")[0] for p in path.parent.glob(path.name + ".corrupt-*")] == [path.name + ".corrupt"]


def test_regular_file_still_read(tmp_path: Path) -> None:
    from dsh_sidecar.state.files import StateFile

    path = tmp_path / "bandit" / "posteriors.json"
    path.parent.mkdir()
    path.write_text('{"version": 1}')
    assert StateFile(path).read() == {"version": 1}

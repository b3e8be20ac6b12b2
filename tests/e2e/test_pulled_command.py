"""A session pulled from another machine runs its command only once the user says so.

Anyone who can write the remote can write a pulled session's ``meta.json``, its command
included. A real ``sync push``/``sync pull`` through a file:// share; the pulled ``command``
edited to create a marker file; ``shellkeep resume`` on machine B: without a terminal and
without --yes it refuses in one line, in a real pty it asks (n: nothing runs, y: it runs),
--dry-run says it would ask; a session of this machine is resumed with no question.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from shellkeep.store.paths import Paths
from tests.helpers import SK, PtyHarness, invoke_sk, run_sk, session_folders

pytestmark = pytest.mark.timeout(240)


def test_a_pulled_sessions_command_runs_only_when_confirmed(home: Paths, tmp_path: Path) -> None:
    share = (tmp_path / "share").as_uri()
    env_a = dict(os.environ)
    env_b = {**os.environ, "SHELLKEEP_HOME": str(tmp_path / "b-data"), "SHELLKEEP_CONFIG": str(tmp_path / "b.toml")}
    there = tmp_path / "b-work"
    there.mkdir()
    recorded = run_sk("run", "--name", "n", "--", "sh", "-c", "echo quince", env=env_a)
    assert recorded.returncode == 0, recorded.stderr.decode()
    [folder] = [f.parent for f in session_folders(home)]
    session_id = folder.name
    assert invoke_sk("sync", "push", "--remote", share, env=env_a).returncode == 0
    assert invoke_sk("sync", "pull", "--remote", share, "--all-machines", env=env_b).returncode == 0
    [pulled] = list((tmp_path / "b-data" / "remotes").rglob("meta.json"))
    marker = tmp_path / "pwned"
    meta = json.loads(pulled.read_text())
    meta["command"] = ["sh", "-c", f"touch {marker}; echo edited\x1b[2K"]  # an escape sequence to hide the line
    pulled.write_text(json.dumps(meta))
    resume_b = ("resume", session_id, "--cwd", str(there), "--no-screen")
    shown = f"sh -c 'touch {marker}; echo edited\\x1b[2K'"  # the escape shown, not sent

    refused = run_sk(*resume_b, env=env_b)
    said = refused.stderr.decode()
    assert refused.returncode != 0 and not marker.exists(), said
    assert "Traceback" not in said and said.splitlines()[-1].endswith(f"; pass --yes to run what it would run: {shown}")

    planned = run_sk(*resume_b, "--dry-run", env=env_b)
    assert planned.returncode == 0 and not marker.exists(), planned.stderr.decode()
    assert "pulled from another machine: running it would ask first (y/N), or need --yes" in planned.stderr.decode()
    assert f"would run: {shown}\n" in planned.stdout.decode()

    declined = PtyHarness.start([*SK, *resume_b], env=env_b)
    declined.expect(b"run it? [y/N]")
    declined.write(b"n\r")
    assert declined.finish() != 0 and not marker.exists()
    asked = bytes(declined.output).decode()
    assert f"it would run: {shown}" in asked and f"in: {there}" in asked and "not resumed" in asked, asked

    accepted = PtyHarness.start([*SK, *resume_b], env=env_b)
    accepted.expect(b"run it? [y/N]")
    accepted.write(b"y\r")
    assert accepted.finish() == 0, bytes(accepted.output)
    assert marker.exists() and b"edited" in accepted.output

    marker.unlink()
    given = run_sk(*resume_b, "--yes", env=env_b)  # --yes accepts without a terminal
    assert given.returncode == 0 and marker.exists(), given.stderr.decode()

    # The session of this machine is resumed with no question, terminal or not.
    local = run_sk("resume", session_id, "--no-screen", env=env_a)
    assert local.returncode == 0 and b"quince" in local.stdout, local.stderr.decode()
    assert b"--yes" not in local.stderr and b"pulled" not in local.stderr

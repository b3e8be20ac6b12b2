"""Measure what ``sync pull`` reads per session before and after the pushed screen text.

Takes recorded session folders (those ``bench/claude_session_recorder.py`` leaves: a real
Claude Code session typed key by key against the loopback stand-in), copies each one's
data folder into a fresh one, pushes it to a ``file://`` remote
and pulls it on a second data folder, then counts the bytes ``sync pull`` read: the
machine index, the manifest and the objects of the files fetched at pull (exchanges, plan,
and now ``screen.jsonl.zst``). "before" leaves the screen text out (what a pull read until
it was pushed). Run: ``.venv/bin/python bench/screen_text_bench.py DIR [DIR...]``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

SK = [sys.executable, "-m", "shellkeep"]
PULLED = ("exchanges.jsonl", "plan.json", "screen.jsonl.zst")


def _sk(env: dict[str, str], *args: str) -> str:
    done = subprocess.run([*SK, *args], env=env, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"shellkeep {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def measure(folder: Path, sealed: bool) -> dict[str, object]:
    """Push ``folder``'s session from one data folder, pull it on another; return the byte counts."""
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        desk = {**os.environ, "SHELLKEEP_HOME": str(base / "desk"), "SHELLKEEP_CONFIG": str(base / "desk.toml"),
                "PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring"}  # fmt: skip
        laptop = {**desk, "SHELLKEEP_HOME": str(base / "laptop"), "SHELLKEEP_CONFIG": str(base / "laptop.toml")}
        home = folder.parent.parent.parent  # <home>/projects/<project>/<session>: the chunk store comes along
        shutil.copytree(home, base / "desk", ignore=shutil.ignore_patterns("index.sqlite3*", "*.sock", "sync", "machine.json"))
        target = base / "desk" / "projects" / folder.parent.name / folder.name
        meta = json.loads((target / "meta.json").read_text())
        meta["cast"] = str(target / Path(meta["cast"]).name)
        (target / "meta.json").write_text(json.dumps(meta))
        if sealed:
            _sk(desk, "key", "init")
            _sk(desk, "config", "set", "encryption.encrypt", "true")
            _sk(desk, "key", "export", str(base / "team.key"))
            Path(laptop["SHELLKEEP_HOME"]).mkdir()
            _sk(laptop, "key", "import", "--make-current", str(base / "team.key"))
            _sk(laptop, "config", "set", "encryption.encrypt", "true")
        _sk(desk, "reindex")
        share = base / "share"
        share.mkdir()
        url = f"file://{share}"
        _sk(desk, "sync", "push", "--remote", url)
        _sk(laptop, "sync", "pull", "--remote", url)
        [manifest_file] = share.glob("machines/*/sessions/*/manifest.json")
        manifest = json.loads(manifest_file.read_bytes())
        index = next(share.glob("machines/*/index.json")).stat().st_size

        def part_bytes(name: str) -> int:
            entry = manifest["files"].get(name) or {"parts": []}
            return sum((share / "objects" / sha[:2] / sha).stat().st_size for sha in entry["parts"])

        base_manifest = manifest_file.stat().st_size
        screen = part_bytes("screen.jsonl.zst")
        before = index + base_manifest + sum(part_bytes(n) for n in PULLED[:2])
        recording = sum(part_bytes(n) for n in ("session.cast", "session.cast.zst"))
        word_hits = 0
        pulled_text = next(Path(laptop["SHELLKEEP_HOME"]).glob("remotes/*/projects/*/*/screen.jsonl.zst"), None)
        if pulled_text is not None:
            word_hits = len(json.loads(_sk(laptop, "search", "--remote", "--json", "--limit", "100", "README")))
        return {"session": folder.name, "sealed": sealed, "recording_bytes": recording, "before": before,
                "screen_text": screen, "after": before + screen, "search_remote_README_hits": word_hits}  # fmt: skip


def main() -> None:
    for arg in sys.argv[1:]:
        for sealed in (False, True):
            print(json.dumps(measure(Path(arg), sealed)))


if __name__ == "__main__":
    main()

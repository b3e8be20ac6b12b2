"""``shellkeep stats`` over real recorded sessions: a stand-in ``claude`` (``tests.transcripts.FAKE_CLAUDE``)
run in a real pty takes a Claude Code transcript written in the real format as its
conversation; shellkeep reads its exchanges and token usage as for the real agent.

Each exchange of ``claude_lines`` spends 220 input, 15 output and 110 cache-read tokens (two
answers); the stand-in adds one exchange of its own, with model "x" and no usage.
"""

from __future__ import annotations

import json
import os
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pexpect
import pytest

from shellkeep.store.paths import Paths
from tests.helpers import default_signals, invoke_sk, session_folders, wait_for_background, wait_until
from tests.transcripts import FAKE_CLAUDE, claude_lines

SONNET = "claude-sonnet-4-5-20250929"
SONNET_COST = (220 * 3.0 + 15 * 15.0 + 110 * 0.3) / 1e6
"""The shipped price of one exchange of ``claude_lines`` answered by claude-sonnet-4-5."""


def record_claude(home: Paths, tmp_path: Path, exchanges: int, model: str, tag: str) -> Path:
    """Record one session of the stand-in claude answering with ``model``; return its folder."""
    bin_dir = tmp_path / "bin"
    if not bin_dir.is_dir():
        bin_dir.mkdir()
        (bin_dir / "claude").write_text(FAKE_CLAUDE)
        (bin_dir / "claude").chmod(0o755)
    source = tmp_path / f"transcript-{tag}.jsonl"
    start = datetime.now(timezone.utc) + timedelta(minutes=5)  # dated during the session: its own
    with source.open("wb") as fh:
        for line in claude_lines(exchanges, session_id=tag, cwd=os.getcwd(), start=start):
            fh.write(line.replace(b'"claude-sonnet-x"', json.dumps(model).encode()))
    before = set(session_folders(home))
    env = {
        **os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "BENCH_TRANSCRIPT": str(source), "BENCH_EXIT_FILE": str(tmp_path / f"exit-{tag}"), "BENCH_SCREEN": "STANDIN-READY",
    }  # fmt: skip
    child = pexpect.spawn(sys.executable, ["-m", "shellkeep", "claude"], env=env, cwd=os.getcwd(), dimensions=(24, 80), preexec_fn=default_signals)
    child.expect("STANDIN-READY", timeout=30)
    child.send("\r")
    child.expect(pexpect.EOF, timeout=60)
    child.wait()
    [cast] = set(session_folders(home)) - before
    folder = cast.parent
    meta = lambda: json.loads((folder / "meta.json").read_text())  # noqa: E731
    wait_until(lambda: meta()["exchange_count"] == exchanges + 1 and (folder / "exchanges.jsonl").is_file(), 60)
    wait_for_background(home)
    return folder


def stats_json(*args: str) -> dict[str, object]:
    result = invoke_sk("stats", "--json", *args)
    assert result.returncode == 0, result.stderr
    report: dict[str, object] = json.loads(result.stdout)
    return report


def session_files(home: Paths) -> dict[str, tuple[int, int]]:
    return {
        str(p): (p.stat().st_mtime_ns, p.stat().st_size)
        for p in (home.projects).rglob("*")
        if p.is_file()
    }


def test_stats_sums_real_sessions_prices_known_models_and_marks_unknown_ones(home: Paths, tmp_path: Path) -> None:
    record_claude(home, tmp_path, 2, SONNET, "a")
    record_claude(home, tmp_path, 1, "claude-sonnet-x", "b")
    files = session_files(home)

    report = stats_json("--by", "model")
    total = report["total"]
    assert isinstance(total, dict)
    assert total["sessions"] == 2 and total["exchanges"] == 3 + 2
    assert (total["input_tokens"], total["output_tokens"], total["cache_read_tokens"]) == (660, 45, 330)
    assert total["cost_usd"] is None and total["unpriced_models"] == ["claude-sonnet-x"]
    groups = {g["key"]: g for g in report["groups"]}  # type: ignore[union-attr, index]
    assert set(groups) == {SONNET, "claude-sonnet-x", "x"}
    assert groups[SONNET]["cost_usd"] == pytest.approx(2 * SONNET_COST)
    assert groups[SONNET]["exchanges"] == 2 and groups[SONNET]["sessions"] == 1
    assert groups["claude-sonnet-x"]["cost_usd"] is None
    assert groups["x"]["cost_usd"] == 0 and groups["x"]["input_tokens"] == 0  # no tokens spent: nothing to price
    assert groups["x"]["sessions"] == 2

    text = invoke_sk("stats", "--by", "agent")
    assert text.returncode == 0 and text.stderr == b""
    lines = text.stdout.decode().splitlines()
    assert lines[0].split()[:3] == ["AGENT", "SESSIONS", "TIME"]
    [claude] = [line for line in lines if line.startswith("claude ")]
    assert claude.split()[1] == "2" and " ? " in claude and "█" * 12 in claude  # unknown cost, and the longest bar
    assert lines[-1].startswith("total")

    for columns in ("80", "70"):  # narrow: the bar shrinks or goes, no number nor name is cut
        narrow = invoke_sk("stats", "--by", "model", env={**os.environ, "COLUMNS": columns})
        assert narrow.returncode == 0 and "…" not in narrow.stdout.decode()
        shown = narrow.stdout.decode().splitlines()
        assert all(len(line) <= int(columns) for line in shown)
        assert SONNET in narrow.stdout.decode() or SONNET in "".join(line.split()[0] for line in shown)
        [sonnet] = [line for line in shown if " 440 " in line]
        assert f"${groups[SONNET]['cost_usd']:,.2f}" in sonnet and "440" in sonnet

    assert session_files(home) == files  # stats reads the sessions; it writes none of their files


def test_a_price_in_the_config_prices_an_unknown_model_and_overrides_a_shipped_one(home: Paths, tmp_path: Path) -> None:
    record_claude(home, tmp_path, 1, "claude-sonnet-x", "b")
    assert stats_json()["total"]["cost_usd"] is None  # type: ignore[index]
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text('[prices."claude-sonnet-x"]\ninput = 1.0\noutput = 2.0\n')
    # a new model's cache prices default to its input price
    assert stats_json()["total"]["cost_usd"] == pytest.approx((220 * 1.0 + 15 * 2.0 + 110 * 1.0) / 1e6)  # type: ignore[index]
    home.config_file.write_text('[prices."claude-sonnet-x"]\ninput = 1.0\noutput = 2.0\ncache_read = 0.0\n')
    assert stats_json()["total"]["cost_usd"] == pytest.approx((220 * 1.0 + 15 * 2.0) / 1e6)  # type: ignore[index]


def test_since_by_day_and_bad_input(home: Paths, tmp_path: Path) -> None:
    record_claude(home, tmp_path, 1, SONNET, "a")
    today = datetime.now().astimezone().strftime("%Y-%m-%d")
    by_day = stats_json("--by", "day", "--since", "1d")
    assert [g["key"] for g in by_day["groups"]] == [today]  # type: ignore[union-attr, index]
    later = (datetime.now() + timedelta(days=2)).strftime("%Y-%m-%d")
    assert stats_json("--since", later)["total"]["sessions"] == 0  # type: ignore[index]
    empty = invoke_sk("stats", "--since", later)
    assert empty.returncode == 0 and empty.stdout == b"" and b"no sessions match" in empty.stderr
    for args, text in ((["--by", "week"], b"invalid value for '--by'"), (["--since", "soon"], b"cannot read the time 'soon'")):
        bad = invoke_sk("stats", *args)
        assert bad.returncode == 2 and text in bad.stderr
        assert bad.stderr.count(b"\n") == 1 and b"Traceback" not in bad.stderr


def test_a_broken_price_in_the_config_is_one_line(home: Paths) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text('[prices."my-model"]\ninput = "cheap"\n')
    result = invoke_sk("stats")
    assert result.returncode == 0  # a reading command warns and goes on with the shipped prices
    assert b"prices.\"my-model\".input must be a number >= 0" in result.stderr
    assert result.stderr.count(b"\n") == 2 and b"Traceback" not in result.stderr  # the warning, then 'no sessions yet'


def test_an_encrypted_session_is_summed_with_its_key_and_from_its_totals_without(
    home: Paths, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("cryptography")
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.null.Keyring")
    assert invoke_sk("key", "init").returncode == 0
    monkeypatch.setenv("SHELLKEEP_ENCRYPTION_ENCRYPT", "true")
    folder = record_claude(home, tmp_path, 2, SONNET, "a")
    assert (folder / "exchanges.jsonl").read_bytes()[:4] != b'{"in'  # sealed

    groups = {g["key"]: g for g in stats_json("--by", "model")["groups"]}  # type: ignore[union-attr, index]
    assert groups[SONNET]["cost_usd"] == pytest.approx(2 * SONNET_COST)

    # Without its key the models cannot be read: the session counts by its meta.json totals,
    # under no model, at an unknown cost.
    (home.home / "keys" / "keys.json").rename(tmp_path / "saved-keys.json")
    for suffix in ("", "-wal", "-shm"):  # the index is lost too: it is rebuilt from the folders
        Path(f"{home.index}{suffix}").unlink(missing_ok=True)
    report = stats_json("--by", "model")
    assert [g["key"] for g in report["groups"]] == [""]  # type: ignore[union-attr, index]
    assert report["total"]["input_tokens"] == 440 and report["total"]["cost_usd"] is None  # type: ignore[index]

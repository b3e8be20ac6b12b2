"""``shellkeep replay``: start at a time, a marker or an exchange; pause and step keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.recordings import vault
from click.testing import CliRunner

from shellkeep.cli.main import main
from shellkeep.errors import UserInputError
from shellkeep.archive.timeline import start_time
from shellkeep.store import audit
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from tests.helpers import CASTS, SK, PtyHarness, run_sk
from tests.factory import make_session

# A long silence before the interesting part: a replay that started at the wrong place
# would sit in it far longer than the test's timeout.
EVENTS = [(0.1, "o", "before\r\n"), (900.0, "m", "deploy"), (900.5, "o", "after\r\n")]
EXCHANGES = [{"prompt": "deploy it", "answer": "ok", "time": "2024-05-01T12:16:00.000Z"}]  # 900 s in


@pytest.fixture
def meta(home: Paths) -> SessionMeta:
    return make_session(home, Path.cwd(), 1, name="long", events=EVENTS, exchanges=EXCHANGES)


@pytest.mark.parametrize(
    ("args", "start"),
    [({"at": 12.5}, 12.5), ({"marker": "deploy"}, 900.0), ({"marker": "1"}, 900.0), ({"exchange": 1}, 900.0), ({}, 0.0)],
    ids=["at", "marker-label", "marker-number", "exchange", "start"],
)
def test_start_time(meta: SessionMeta, args: dict[str, object], start: float) -> None:
    assert start_time(meta, vault(), **args) == start  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"marker": "nope"}, "no marker 'nope' in session"),
        ({"exchange": 2}, "has exchanges 1 to 1, not 2"),
        ({"at": 1.0, "marker": "deploy"}, "give only one of --at, --marker"),
    ],
    ids=["marker", "exchange", "two"],
)
def test_start_time_errors(meta: SessionMeta, args: dict[str, object], message: str) -> None:
    with pytest.raises(UserInputError, match=message):
        start_time(meta, vault(), **args)  # type: ignore[arg-type]


@pytest.mark.parametrize("how", [["--marker", "deploy"], ["--exchange", "1"], ["--at", "899"]], ids=["marker", "exchange", "at"])
def test_replay_starts_where_asked(meta: SessionMeta, how: list[str]) -> None:
    result = run_sk("replay", "long", *how, start_new_session=True, timeout_s=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"before\r\nafter\r\n"


def test_replay_past_the_end_says_so_and_shows_the_last_screen(meta: SessionMeta) -> None:
    """``--at`` beyond the recording jumped to the end in silence (trial)."""
    result = run_sk("replay", "long", "--at", "99999", start_new_session=True, timeout_s=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"before\r\nafter\r\n"
    assert result.stderr == f"shellkeep: session {meta.id} is 900.5s long; --at 99999 is past its end, so its last screen is shown\n".encode()


def test_replay_is_audited_with_its_start(home: Paths, meta: SessionMeta) -> None:
    result = CliRunner().invoke(main, ["replay", "long", "--speed", "100", "--idle-limit", "0.01", "--at", "2"])
    assert result.exit_code == 0, result.stderr
    assert [(e.command, e.session, e.detail) for e in audit.read_entries(home)] == [("replay", meta.id, "at=2.00")]


def test_replay_of_a_file_path(home: Paths) -> None:
    source = CASTS / "minimal-v3.cast"
    result = run_sk("replay", str(source), "--speed", "100", start_new_session=True)
    assert result.returncode == 0 and result.stdout == b"first second"
    assert audit.read_entries(home)[0].session == str(source.resolve())  # the audit log names the file itself


@pytest.mark.parametrize("relative", [False, True], ids=["path", "bare-name-in-cwd"])
def test_replay_of_a_compressed_recording_path(home: Paths, relative: bool) -> None:
    from shellkeep.vault.compress import compress_recording

    short = make_session(home, Path.cwd(), 2, events=[(0.1, "o", "packed "), (0.2, "o", "words")])
    cast = Path(str(compress_recording(short, vault()).path))
    assert cast.name == "session.cast.zst"
    ref, cwd = ("session.cast.zst", cast.parent) if relative else (str(cast), None)
    result = run_sk("replay", ref, "--speed", "100", start_new_session=True, cwd=cwd)
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"packed words"


def test_replay_unknown_marker_is_one_line_exit_2(meta: SessionMeta) -> None:
    result = run_sk("replay", "long", "--marker", "nope")
    assert result.returncode == 2 and result.stderr.count(b"\n") == 1


def test_pause_and_step_keys_in_a_terminal(meta: SessionMeta) -> None:
    h = PtyHarness.start([*SK, "replay", "long"])
    h.expect(b"before")
    h.write(b" ")  # pause, then step through the silence event by event
    for _ in range(3):
        h.write(b".")
        h.read_some(0.2)
        if b"after" in h.output:
            break
    h.expect(b"after")
    assert h.finish() == 0


@pytest.mark.parametrize(
    ("option", "value", "fragment"),
    [
        pytest.param("--speed", "nan", "'nan' is not a finite number", id="speed-nan"),
        pytest.param("--speed", "inf", "is not in the range", id="speed-inf"),
        pytest.param("--speed", "1e400", "is not in the range", id="speed-overflow"),
        pytest.param("--speed", "-2", "is not in the range", id="speed-negative"),
        pytest.param("--idle-limit", "nan", "is not a finite number", id="idle-limit-nan"),
        pytest.param("--idle-limit", "-1", "is not in the range", id="idle-limit-negative"),
        pytest.param("--at", "-inf", "is not in the range", id="at-minus-inf"),
        pytest.param("--at", "1e11", "is not in the range", id="at-absurd"),
        pytest.param("--exchange", "99999999999999999999999", "is not in the range 1<=x<=1000000000", id="exchange-overflow"),
    ],
)
def test_a_bad_number_is_one_line_exit_2(home: Paths, option: str, value: str, fragment: str) -> None:
    make_session(home, Path.cwd(), 1)
    result = run_sk("replay", "--last", option, value)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"shellkeep: invalid value for '{option}'".encode()) and result.stderr.count(b"\n") == 1
    assert fragment.encode() in result.stderr

"""The recorder's writer thread and its redaction filters: shellkeep/capture/recorder.py."""

from __future__ import annotations

import json
from pathlib import Path

from shellkeep.asciicast.model import Header
from shellkeep.capture.activity import OutputActivity
from shellkeep.capture.recorder import Recorder
from shellkeep.capture.redaction import StreamRedactor, redactor_for
from shellkeep.termsize import TermSize
from tests.helpers import wait_until


def _output(cast: Path) -> str:
    """Return the output text of the events on disk so far (a cut last line ends it)."""
    text = []
    for line in cast.read_bytes().splitlines()[1:]:
        try:
            _, code, data = json.loads(line)
        except ValueError:
            break
        if code == "o":
            text.append(data)
    return "".join(text)


def _recorder(cast: Path, **kw: object) -> Recorder:
    return Recorder(
        open(cast, "ab"),
        header=Header(size=TermSize(80, 24), timestamp=0),
        make_filter=lambda screen: StreamRedactor(redactor_for(None), keep_columns=screen),
        **kw,  # type: ignore[arg-type]
    )


def test_a_plain_last_word_held_back_reaches_the_disk_and_viewers_once_output_is_quiet(tmp_path: Path) -> None:
    cast = tmp_path / "session.cast"
    handed: list[tuple[str, str, bytes]] = []
    recorder = _recorder(cast, on_events=handed.extend)
    recorder.on_output(b"Type yes to deploy", 0.1)  # a prompt; the program now waits
    wait_until(lambda: _output(cast).endswith("deploy"), 10)
    wait_until(lambda: "".join(t for c, t, _ in handed if c == "o").endswith("deploy"), 10)
    recorder.on_output(b"ghp_FAKE01234567", 2.0)  # typed on: the later text is still checked
    recorder.on_output(b"89abcdefghijklmnopqrstuv\r\n", 2.1)
    recorder.close()
    recorded = _output(cast)
    assert recorded.startswith("Type yes to deploy[REDACTED:github-token]") and recorded.endswith("\r\n")
    assert "FAKE" not in recorded


def test_half_a_token_stays_held_through_a_quiet_spell_and_becomes_one_marker(tmp_path: Path) -> None:
    cast = tmp_path / "session.cast"
    reports: list[OutputActivity] = []
    recorder = _recorder(cast, on_activity=reports.append)
    secret = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"
    recorder.on_output(f"token {secret[:20]}".encode(), 0.1)
    # The writer reports once more after output has been quiet for a second; by then it has
    # offered the held text to the filter's release (the same pass, earlier).
    wait_until(lambda: len(reports) >= 2, 10)
    assert _output(cast) == "token "
    recorder.on_output(f"{secret[20:]} ok\r\n".encode(), 2.0)
    recorder.close()
    recorded = _output(cast)
    assert recorded.count("[REDACTED:") == 1 and "FAKE0123" not in recorded
    assert recorded.startswith("token [REDACTED:github-token]") and recorded.endswith(" ok\r\n")


def test_text_the_filter_still_holds_at_the_end_is_in_the_last_line_the_recorder_keeps(tmp_path: Path) -> None:
    # A program killed right after its last word: no quiet spell released it before close;
    # the end notification's last line comes from what the recorder kept.
    from shellkeep.capture.activity import RecentOutput

    cast = tmp_path / "session.cast"
    recent = RecentOutput({})
    recorder = _recorder(cast, on_activity=lambda activity: None, recent=recent)
    recorder.on_output(b"first line\r\nType yes to deploy", 0.1)
    recorder.close()
    assert _output(cast).endswith("Type yes to deploy")
    assert recent.judge() == (None, "Type yes to deploy")


def test_close_waits_for_a_writer_slower_than_its_bound_while_it_makes_progress(tmp_path: Path) -> None:
    """A writer thread behind on a loaded machine (CI: a sealed recording exported with its
    header and no events): close returns once everything queued is on disk, not after the
    bound. The backlog here is far more than the writer can redact and write within it."""
    warm = _recorder(tmp_path / "warm.cast")  # the redaction rules compile once per process, here
    warm.on_output(b"ready\r\n", 0.1)
    assert warm.close().events == 1
    cast = tmp_path / "session.cast"
    recorder = _recorder(cast)
    lines = 20_000
    for n in range(lines):
        recorder.on_output(f"line {n:06d} of a long build log\r\n".encode(), n * 0.1)  # past coalescing: one event each
    stats = recorder.close(timeout_s=0.5)
    assert stats.events == lines, f"{stats.events} of {lines} events written when close returned"
    recorded = _output(cast)
    assert recorded.count("\r\n") == lines and recorded.endswith(f"line {lines - 1:06d} of a long build log\r\n")

"""``shellkeep export``: cast, txt, md, json and a self-contained html page."""

from __future__ import annotations

import json
import os
import re
import stat
import threading
from pathlib import Path

import pytest
import zstandard
from click.testing import CliRunner, Result

from tests.recordings import open_cast
from tests.helpers import invoke_sk
from shellkeep.cli.main import main
from shellkeep.store import audit
from shellkeep.store.paths import Paths
from shellkeep.store.session import SessionMeta
from tests.factory import make_session

EXCHANGES = [
    {"prompt": "list the files", "answer": "Here they are.", "time": "2024-05-01T12:01:01.000Z", "tool_calls": [{"name": "Bash", "summary": "ls"}]},
    {"prompt": "colour them", "answer": "Done.", "time": "2024-05-01T12:01:03.000Z"},
]
EVENTS = [
    (0.5, "o", "$ ls\r\nREADME.md  src\r\n"),
    (2.0, "m", "checkpoint"),
    (3.5, "o", "\x1b[32mgreen.txt\x1b[0m  \x1b[1;31mred.txt\x1b[0m\r\n"),
]


def sk(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def meta(home: Paths) -> SessionMeta:
    return make_session(home, Path.cwd(), 1, name="demo", events=EVENTS, exchanges=EXCHANGES)


def test_export_cast_is_the_recording(meta: SessionMeta, tmp_path: Path) -> None:
    result = sk("export", "demo", "--format", "cast")
    assert result.exit_code == 0
    assert result.stdout_bytes == Path(meta.cast).read_bytes()


def test_export_cast_of_a_compressed_recording_is_plain_v2(meta: SessionMeta, tmp_path: Path) -> None:
    raw = Path(meta.cast).read_bytes()
    Path(meta.cast).write_bytes(zstandard.ZstdCompressor().compress(raw))
    out = tmp_path / "plain.cast"
    assert sk("export", "demo", "-o", str(out)).exit_code == 0
    assert out.read_bytes().startswith(b'{"version": 2')
    assert [(e.time, e.code, e.data) for e in open_cast(out).events()] == EVENTS


def test_export_txt_is_the_transcript(meta: SessionMeta) -> None:
    assert sk("export", "demo", "--format", "txt").stdout == "$ ls\nREADME.md  src\ngreen.txt  red.txt\n"


def test_export_md_is_the_conversation(meta: SessionMeta) -> None:
    md = sk("export", "demo", "--format", "md").stdout
    assert md.startswith("# Session demo\n")
    assert "## 1. list the files (at 1.0 s)" in md and "> list the files" in md and "Here they are." in md
    assert "- `Bash` ls" in md and "## 2. colour them (at 3.0 s)" in md


def test_export_json_has_metadata_exchanges_and_markers(meta: SessionMeta) -> None:
    doc = json.loads(sk("export", "demo", "--format", "json").stdout)
    assert set(doc) == {"session", "exchanges", "markers", "checkpoints", "usage"}
    assert doc["session"]["id"] == meta.id
    assert doc["checkpoints"] == []  # the session has none (tests/e2e/test_checkpoints.py has some)
    assert [(e["number"], e["time_s"], e["prompt"]) for e in doc["exchanges"]] == [(1, 1.0, "list the files"), (2, 3.0, "colour them")]
    assert doc["markers"] == [{"n": 1, "time_s": 2.0, "label": "checkpoint"}]


def test_export_html_is_self_contained_with_a_coloured_screen_per_exchange(meta: SessionMeta, tmp_path: Path) -> None:
    out = tmp_path / "page.html"
    result = sk("export", "demo", "-o", str(out))
    assert result.exit_code == 0 and result.stdout == ""
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"<script|<link|src=|https?://", page)
    screens = page.split('<div class="screen">')[1:]
    assert len(screens) == 2
    assert "README.md" in screens[0] and "green.txt" not in screens[0]  # before exchange 2 was sent
    assert "green.txt" in screens[1] and "color:#00cd00" in screens[1]
    assert [(e.command, e.detail) for e in audit.read_entries(home_of(meta))] == [("export", "format=html")]


def home_of(meta: SessionMeta) -> Paths:
    from shellkeep.store.paths import resolve_paths

    return resolve_paths()


def test_export_to_an_unwritable_place_leaves_nothing(meta: SessionMeta, tmp_path: Path) -> None:
    from tests.helpers import run_sk

    result = invoke_sk("export", "demo", "-o", str(tmp_path / "missing" / "x.txt"))
    assert result.returncode == 1 and result.stderr.startswith(b"shellkeep: cannot write")
    assert result.stderr.count(b"\n") == 1
    assert not (tmp_path / "missing").exists()


def test_export_to_a_symlink_writes_its_target_and_keeps_the_link(meta: SessionMeta, tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    target = tmp_path / "real" / "out.txt"
    target.write_text("old\n")
    link = tmp_path / "link.txt"
    link.symlink_to(target)
    result = sk("export", "demo", "-o", str(link))
    assert result.exit_code == 0, result.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == sk("export", "demo").stdout
    assert [p.name for p in (tmp_path / "real").iterdir()] == ["out.txt"]  # no temporary left


def test_export_to_a_dangling_symlink_creates_its_target(meta: SessionMeta, tmp_path: Path) -> None:
    link = tmp_path / "link.txt"
    link.symlink_to(tmp_path / "new.txt")
    assert sk("export", "demo", "-o", str(link)).exit_code == 0
    assert link.is_symlink() and (tmp_path / "new.txt").read_text().startswith("$ ls")


def test_export_to_a_fifo_writes_into_it_and_leaves_it_a_fifo(meta: SessionMeta, tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    result = sk("export", "demo", "-o", str(fifo))
    reader.join(timeout=30)
    assert result.exit_code == 0, result.stderr
    assert got == [b"$ ls\nREADME.md  src\ngreen.txt  red.txt\n"]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_export_to_dev_fd_writes_into_the_open_pipe(meta: SessionMeta) -> None:
    r, w = os.pipe()
    try:
        result = sk("export", "demo", "-o", f"/dev/fd/{w}")
    finally:
        os.close(w)
    with os.fdopen(r, "rb") as fh:
        assert fh.read() == b"$ ls\nREADME.md  src\ngreen.txt  red.txt\n"
    assert result.exit_code == 0, result.stderr


def test_export_to_dash_writes_to_stdout_and_makes_no_file(meta: SessionMeta) -> None:
    from tests.helpers import run_sk

    result = invoke_sk("export", "demo", "--format", "txt", "-o", "-")
    assert result.returncode == 0, result.stderr
    assert result.stdout == b"$ ls\nREADME.md  src\ngreen.txt  red.txt\n"
    assert not Path("-").exists()


def test_export_to_an_empty_name_is_refused_in_one_line(meta: SessionMeta) -> None:
    from tests.helpers import run_sk

    result = invoke_sk("export", "demo", "-o", "")
    assert result.returncode == 2
    assert result.stderr == b"shellkeep: the output file name is empty; give a file name, or leave the option out to write to stdout\n"


def test_export_of_a_damaged_compressed_recording_is_one_line_exit_3_and_leaves_no_file(meta: SessionMeta, tmp_path: Path) -> None:
    from tests.helpers import damage_compressed, run_sk

    at = damage_compressed(Path(meta.cast), keep_lines=2)
    (tmp_path / "out").mkdir()
    result = invoke_sk("export", "demo", "-o", str(tmp_path / "out" / "x.txt"))
    assert result.returncode == 3 and result.stderr.count(b"\n") == 1
    assert f"in the zstd frame from byte {at})".encode() in result.stderr
    assert list((tmp_path / "out").iterdir()) == []


SHELL_EXCHANGES = [{"prompt": "ls -l", "answer": "# not a heading\n*.txt  **bold**\n```", "time": "2024-05-01T12:01:01.000Z"}]


def test_export_md_puts_terminal_output_in_code_blocks_and_html_in_monospace(home: Paths, tmp_path: Path) -> None:
    import dataclasses

    from shellkeep.store.session import write_meta

    shell = make_session(home, Path.cwd(), 2, name="shell", events=EVENTS, exchanges=SHELL_EXCHANGES)
    md = sk("export", "shell", "--format", "md").stdout
    answer = md.split("**Answer**\n\n", 1)[1]
    assert answer.startswith("```text\n# not a heading\n*.txt  **bold**\n`\u200b``\n```\n")  # verbatim, the fence kept shut
    page = tmp_path / "shell.html"
    assert sk("export", "shell", "-o", str(page)).exit_code == 0
    html = page.read_text()
    assert '<div class="answer output"># not a heading' in html
    [css] = re.findall(r"\.output,[^{]*\{font-family:([^}]*)\}", html)
    assert css.endswith("monospace")

    # An agent's own answers are prose: Markdown as written, the page's proportional font.
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("")
    write_meta(dataclasses.replace(shell, agent_transcript=str(transcript)))
    md = sk("export", "shell", "--format", "md").stdout
    assert md.split("**Answer**\n\n", 1)[1].startswith("# not a heading\n*.txt  **bold**\n")
    assert sk("export", "shell", "-o", str(page)).exit_code == 0
    assert '<div class="answer"># not a heading' in page.read_text()


def test_every_export_names_the_title_show_gives(meta: SessionMeta, tmp_path: Path) -> None:
    import dataclasses

    from shellkeep.store.session import write_meta

    write_meta(dataclasses.replace(meta, about="Colour the listed files"))
    assert "Colour the listed files" in sk("show", "demo").stdout
    assert json.loads(sk("export", "demo", "--format", "json").stdout)["session"]["title"] == "Colour the listed files"
    assert "| title | Colour the listed files |" in sk("export", "demo", "--format", "md").stdout
    out = tmp_path / "page.html"
    assert sk("export", "demo", "-o", str(out)).exit_code == 0
    assert "<tr><td>title</td><td>Colour the listed files</td></tr>" in out.read_text()

"""``app/shellinit.py`` and ``cli/init.py``: the snippet, the rc block, the notice file it reads."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from shellkeep.app.context import open_context
from shellkeep.app.shellinit import BLOCK_BEGIN, BLOCK_END, install, snippet, uninstall
from shellkeep.cli.main import main
from shellkeep.store import notices
from shellkeep.store.paths import Paths, rc_file
from shellkeep.store.session import SessionMeta, Status, boot_id, create_session_folder, host_name
from tests.helpers import run_sk


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "HOME": str(tmp_path / "user"), **extra}


@pytest.mark.parametrize(
    ("shell", "extra", "expected"),
    [
        ("bash", {}, "user/.bashrc"),
        ("zsh", {}, "user/.zshrc"),
        ("zsh", {"ZDOTDIR": "zdot"}, "zdot/.zshrc"),
        ("fish", {}, "user/.config/fish/config.fish"),
        ("fish", {"XDG_CONFIG_HOME": "xdg"}, "xdg/fish/config.fish"),
    ],
    ids=["bash", "zsh", "zsh-zdotdir", "fish", "fish-xdg"],
)
def test_rc_file_honours_zdotdir_and_xdg_config_home(tmp_path: Path, shell: str, extra: dict[str, str], expected: str) -> None:
    env = _env(tmp_path, **{k: str(tmp_path / v) for k, v in extra.items()})
    env.pop("ZDOTDIR", None) if "ZDOTDIR" not in extra else None
    env.pop("XDG_CONFIG_HOME", None) if "XDG_CONFIG_HOME" not in extra else None
    assert rc_file(shell, env) == tmp_path / expected


RC_CASES = {
    "missing": None,
    "ends-with-line-break": b"export EDITOR=vi\nalias ll='ls -l'\n",
    "no-final-line-break": b"export EDITOR=vi\nalias ll='ls -l'",
    "not-utf8": b"PS1='\xff$ '\n",
}


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("before", list(RC_CASES.values()), ids=list(RC_CASES))
def test_install_twice_then_uninstall_leaves_the_rc_file_byte_identical(
    tmp_path: Path, home: Paths, shell: str, before: bytes | None
) -> None:
    env = _env(tmp_path)
    env.pop("ZDOTDIR", None)
    env.pop("XDG_CONFIG_HOME", None)
    rc = rc_file(shell, env)
    if before is not None:
        rc.parent.mkdir(parents=True, exist_ok=True)
        rc.write_bytes(before)
        rc.chmod(0o640)
    ctx = open_context(env=env)

    first = install(ctx, shell)
    installed = rc.read_bytes()
    assert first.changed and installed.count(BLOCK_BEGIN.encode()) == 1 and installed.endswith(f"{BLOCK_END}\n".encode())
    assert installed.startswith(before or b"")
    assert str(first.snippet_file).encode() in installed and first.snippet_file.is_file()
    second = install(ctx, shell)
    assert not second.changed and rc.read_bytes() == installed

    removed = uninstall(ctx, shell)
    assert removed.changed
    assert rc.read_bytes() == (before or b"")
    assert not first.snippet_file.exists()
    if before is not None:
        assert rc.stat().st_mode & 0o777 == 0o640  # the rc file keeps its mode
    assert not uninstall(ctx, shell).changed and rc.read_bytes() == (before or b"")


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize(
    "before",
    [
        f"# top\n{BLOCK_BEGIN}\nalias keep=1\nalias mine=2\n".encode(),  # a stray begin marker of the user's
        f"{BLOCK_BEGIN}\nalias keep=1\n{BLOCK_END}\nalias mine=2\n".encode(),  # markers around the user's own line
        f"alias keep=1\n{BLOCK_END}\n".encode(),
    ],
    ids=["stray-begin", "foreign-block", "stray-end"],
)
def test_marker_lines_of_the_users_own_are_left_with_every_line_around_them(
    tmp_path: Path, home: Paths, shell: str, before: bytes
) -> None:
    env = _env(tmp_path)
    env.pop("ZDOTDIR", None)
    env.pop("XDG_CONFIG_HOME", None)
    rc = rc_file(shell, env)
    rc.parent.mkdir(parents=True, exist_ok=True)
    rc.write_bytes(before)
    ctx = open_context(env=env)
    assert not uninstall(ctx, shell).changed and rc.read_bytes() == before  # nothing of ours there
    assert install(ctx, shell).changed and rc.read_bytes().startswith(before)
    assert not install(ctx, shell).changed
    assert uninstall(ctx, shell).changed and rc.read_bytes() == before


def test_install_writes_through_a_symlinked_rc_file(tmp_path: Path, home: Paths) -> None:
    env = _env(tmp_path)
    dotfiles = tmp_path / "dotfiles" / "bashrc"
    dotfiles.parent.mkdir()
    dotfiles.write_text("set -o vi\n")
    rc = rc_file("bash", env)
    rc.parent.mkdir(parents=True)
    rc.symlink_to(dotfiles)
    ctx = open_context(env=env)
    install(ctx, "bash")
    assert rc.is_symlink() and BLOCK_BEGIN in dotfiles.read_text()
    uninstall(ctx, "bash")
    assert rc.is_symlink() and dotfiles.read_text() == "set -o vi\n"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_snippet_follows_the_shell_settings(tmp_path: Path, home: Paths, shell: str) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text('[shell]\nwrap = ["claude", "my-agent"]\n')
    text = snippet(open_context(), shell)
    assert "my-agent" in text and "claude" in text and "codex" not in text
    assert "run -- my-agent" in text
    assert not any(mark in text for mark in ("@SHELLKEEP@", "@NOTICES@", "@WRAPPERS@", "@REFRESH@", "@notice-"))
    hooks = {"bash": "function cd", "zsh": "chpwd_functions", "fish": "--on-variable PWD"}
    assert hooks[shell] in text
    home.config_file.write_text("[shell]\nnotice = false\n")
    quiet = snippet(open_context(), shell)
    assert hooks[shell] not in quiet and "codex" in quiet


def test_a_bad_program_name_in_shell_wrap_is_one_line_and_never_installed(tmp_path: Path, home: Paths) -> None:
    home.config_file.parent.mkdir(parents=True, exist_ok=True)
    home.config_file.write_text('[shell]\nwrap = ["claude; rm -rf ~"]\n')
    printed = CliRunner().invoke(main, ["init", "bash"])
    assert printed.exit_code == 0 and "rm -rf" not in printed.stdout and "run -- claude" in printed.stdout  # the defaults
    [line] = printed.stderr.splitlines()
    assert "shell.wrap" in line and "using the default settings" in line
    from tests.helpers import run_sk

    installed = run_sk("init", "bash", "--install", env={**os.environ, "HOME": str(tmp_path / "user")})
    [line] = installed.stderr.decode().splitlines()
    assert installed.returncode == 2 and "shell.wrap" in line and line.endswith("fix it with 'shellkeep config edit'")
    assert not (tmp_path / "user" / ".bashrc").exists()


def test_init_without_a_known_shell_is_one_line_and_exit_2() -> None:
    from tests.helpers import run_sk

    done = run_sk("init", "tcsh")
    assert done.returncode == 2
    assert done.stderr.decode().strip() == (
        "shellkeep: invalid value for 'SHELL': 'tcsh' is not one of 'bash', 'zsh', 'fish'; see 'shellkeep init --help'"
    )


def _meta(paths: Paths, root: Path, session_id: str, **changes: object) -> SessionMeta:
    folder = create_session_folder(paths, root, session_id)
    meta = SessionMeta(
        id=session_id,
        project="p",
        project_root=str(root),
        cwd=str(root),
        command=["claude"],
        agent="claude",
        started_at="2026-12-01T10:00:00.000Z",
        host=host_name(),
        pid=os.getpid(),
        boot_id=boot_id(),
        cast=str(folder / "session.cast"),
    )
    return dataclasses.replace(meta, **changes)  # type: ignore[arg-type]


def test_the_notice_file_follows_a_session_from_start_to_end(tmp_path: Path, home: Paths) -> None:
    root = tmp_path / "project"
    running = _meta(home, root, "20261201-100000-000aa")
    notices.note_running(home, running)
    lines = home.notices.read_text().splitlines()
    assert lines[0] == notices.HEADER
    fields = lines[1].split("\t")  # 2026-12-01T10:00:00Z is 1796119200 s since the epoch
    assert fields == [str(root), "running", str(os.getpid()), boot_id() or "-", host_name(), "1796119200", "claude", running.id]

    notices.note_ended(home, dataclasses.replace(running, status=Status.FINISHED.value))
    assert home.notices.read_text() == ""  # nothing to say: empty, the shell stops at its size
    notices.note_running(home, running)
    notices.note_ended(home, dataclasses.replace(running, status=Status.HANGUP.value))  # terminal closed: kept
    assert [n.state for n in notices.read_notices(home)] == ["cut"]
    notices.forget(home, running.id)  # resumed
    assert notices.read_notices(home) == []


def test_the_notice_file_drops_gone_sessions_and_malformed_lines(tmp_path: Path, home: Paths) -> None:
    root = tmp_path / "project"
    older = _meta(home, root, "20261201-100000-000aa", status=Status.INTERRUPTED.value)
    newer = _meta(home, root, "20261201-110000-000bb", started_at="2026-12-01T11:00:00.000Z", status="interrupted")
    notices.note_ended(home, newer)
    notices.note_ended(home, older)
    assert [n.session_id for n in notices.read_notices(home)] == [older.id, newer.id]  # oldest first
    with home.notices.open("a") as fh:
        fh.write("cut\tonly three\tfields\n")
    assert len(notices.read_notices(home)) == 2
    (older.folder / "session.cast").unlink(missing_ok=True)
    older.folder.rmdir()  # gc removed it
    notices.note_running(home, dataclasses.replace(newer, id="20261201-120000-000cc"))
    assert [n.session_id for n in notices.read_notices(home)] == [newer.id]  # the third has no folder either


def test_rewrite_keeps_running_and_unresumed_cut_sessions(tmp_path: Path, home: Paths) -> None:
    root = tmp_path / "project"
    cut = _meta(home, root, "20261201-100000-000aa", status="interrupted")
    resumed = _meta(home, root, "20261201-100100-000bb", status="hangup")
    child = _meta(home, root, "20261201-100200-000cc", status="finished", parent=resumed.id)
    live = _meta(home, root, "20261201-100300-000dd")
    done = _meta(home, root, "20261201-100400-000ee", status="finished")
    notices.rewrite_notices(home, [cut, resumed, child, live, done])
    assert [(n.session_id, n.state) for n in notices.read_notices(home)] == [(cut.id, "cut"), (live.id, "running")]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_without_shipped_completions_the_snippet_sources_clicks_script_from_the_data_folder(
    home: Paths, shell: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shellkeep.app import shellinit

    shipped = shellinit.completion_file(shell)
    assert shipped is not None and f"{shipped}" in snippet(open_context(), shell)  # a source checkout
    monkeypatch.setattr(shellinit, "completion_file", lambda shell: None)  # a wheel: no completions/ beside it
    bare = snippet(open_context(), shell)  # no script given: nothing to source
    assert str(shipped) not in bare and f"completion.{shell}" not in bare
    printed = CliRunner().invoke(main, ["init", shell])
    assert printed.exit_code == 0, printed.output
    kept = home.shell_dir / f"completion.{shell}"
    assert kept.read_text() == shipped.read_text()  # what click generates is what completions/ ships
    assert str(kept) in printed.output


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("cut", ["end-marker", "begin-marker"])
def test_a_damaged_block_is_named_with_its_lines_and_nothing_is_changed(
    tmp_path: Path, home: Paths, shell: str, cut: str
) -> None:
    env = _env(tmp_path)
    env.pop("ZDOTDIR", None)
    env.pop("XDG_CONFIG_HOME", None)
    rc = rc_file(shell, env)
    rc.parent.mkdir(parents=True, exist_ok=True)
    rc.write_text("set -o vi\n")
    install(open_context(env=env), shell)
    marker = BLOCK_END if cut == "end-marker" else BLOCK_BEGIN
    damaged = "".join(line for line in rc.read_text().splitlines(keepends=True) if line.rstrip("\n") != marker)
    rc.write_text(damaged + "alias ll='ls -l'\n")
    before = rc.read_bytes()
    expected_lines = "lines 2-4"  # the begin, added-by, source and end lines left: all but the one cut
    for flag in ("--uninstall", "--install"):
        done = run_sk("init", shell, flag, env=env)
        assert done.returncode == 1, (flag, done.stderr)
        [line] = done.stderr.decode().splitlines()
        assert str(rc) in line and f"delete {expected_lines} of it by hand" in line, line
        assert rc.read_bytes() == before


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_uninstall_removes_the_completion_script_kept_for_that_shell(tmp_path: Path, home: Paths, shell: str) -> None:
    env = _env(tmp_path)
    ctx = open_context(env=env)
    install(ctx, shell)
    home.shell_dir.mkdir(parents=True, exist_ok=True)
    for name in ("bash", "zsh", "fish"):  # what a wheel install keeps there (no shipped script beside the package)
        (home.shell_dir / f"completion.{name}").write_text("# completion\n")
    uninstall(ctx, shell)
    assert sorted(p.name for p in home.shell_dir.glob("completion.*")) == sorted(
        f"completion.{name}" for name in ("bash", "zsh", "fish") if name != shell
    )

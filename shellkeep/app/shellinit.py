"""Generate the shell integration (``shellkeep init bash|zsh|fish``) and install it into an rc file.

The snippet, built from the templates in ``shellkeep/shell/`` and the ``[shell]`` settings,
defines a function per program of ``shell.wrap`` found on PATH (checked by the shell when
it loads the snippet) that runs it under shellkeep, and, unless ``shell.notice`` is false,
a directory-change hook that prints one line in a project with interrupted sessions, read
from the notice file (``store.notices``) with builtins only.

Two ways to load it: ``eval "$(shellkeep init zsh)"`` starts Python at every shell start
(tens of milliseconds); ``--install`` writes the snippet to ``Paths.shell_dir`` and adds a
marked block to the rc file that only sources it (no process at all). The installed snippet
regenerates itself, once, when the config file or shellkeep's own template is newer than it
(an edited config, an upgrade).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from shellkeep.app.context import Context
from shellkeep.errors import ShellkeepError
from shellkeep.store.atomic import write_bytes_atomic
from shellkeep.store.notices import rewrite_notices
from shellkeep.store.paths import SHELLS, ensure_dir, rc_file

BLOCK_BEGIN = "# >>> shellkeep init >>>"
BLOCK_END = "# <<< shellkeep init <<<"
_JOINED = " (a line break was added before it)"
_BLOCK = re.compile(
    rf"(?m)^{re.escape(BLOCK_BEGIN)}(?:{re.escape(_JOINED)})?\n"
    r"# Added by 'shellkeep init [a-z]+ --install'[^\n]*\n"
    r"[^\n]*\n"
    rf"{re.escape(BLOCK_END)}\n"
)
"""The block ``--install`` adds, as ``_block`` writes it (nothing of the user's inside it)."""
"""Appended to ``BLOCK_BEGIN`` when the rc file's last line had no line break: uninstall takes it back."""

_ADDED_BY = re.compile(r"# Added by 'shellkeep init [a-z]+ --install'")
"""The second line of the block: a line like it outside a whole block means the block was damaged."""

_NOTICE_BEGIN = "# @notice-begin\n"
_NOTICE_END = "# @notice-end\n"


@dataclass(frozen=True, slots=True)
class InstallResult:
    """What ``install``/``uninstall`` did: the rc file, the snippet file, whether the rc changed."""

    rc_file: Path
    snippet_file: Path
    changed: bool


def template_file(shell: str) -> Path:
    """Return the template of ``shell``'s snippet (package data; its mtime marks an upgrade)."""
    return Path(__file__).resolve().parent.parent / "shell" / f"init.{shell}"


def completion_file(shell: str) -> Path | None:
    """Return the shipped completion script of ``shell`` (``completions/shellkeep.<shell>``), None if absent.

    It sits beside the package in a source checkout or an editable install; a wheel does not
    carry it, and the snippet then loads no completion.
    """
    found = Path(__file__).resolve().parent.parent.parent / "completions" / f"shellkeep.{shell}"
    return found if found.is_file() else None


def snippet_file(ctx: Context, shell: str) -> Path:
    """Return where ``--install`` writes ``shell``'s snippet: ``<data>/shell/init.<shell>``."""
    return ctx.paths.shell_dir / f"init.{shell}"


def shellkeep_command() -> tuple[str, ...]:
    """Return the argv that runs this shellkeep: its console script, else ``python -m shellkeep``."""
    beside = Path(sys.executable).parent / "shellkeep"
    if beside.is_file() and os.access(beside, os.X_OK):
        return (str(beside),)
    found = shutil.which("shellkeep")
    if found:
        return (str(Path(found).absolute()),)
    return (sys.executable, "-m", "shellkeep")


def snippet(ctx: Context, shell: str, *, installed: bool = False, completion_source: str | None = None) -> str:
    """Return the snippet for ``shell`` ("bash", "zsh" or "fish") with this context's settings.

    installed: the text ``--install`` writes, which regenerates itself when the config or
    the template is newer than its file. completion_source: the completion script click
    generates, kept as ``<data>/shell/completion.<shell>`` and sourced when no shipped one
    sits beside the package (a wheel install). Raises ValueError for another shell, OSError
    when that completion file cannot be written.
    """
    if shell not in SHELLS:
        raise ValueError(f"unknown shell {shell!r}")
    quote = _fish_quote if shell == "fish" else shlex.quote
    text = template_file(shell).read_text(encoding="utf-8")
    argv = shellkeep_command()
    command = " ".join(quote(word) for word in argv)
    # The folder the completion scripts find 'shellkeep' in when it is not on PATH: the console script's.
    bin_dir = str(Path(argv[0]).parent) if len(argv) == 1 else ""
    refresh = _refresh(shell, quote, ctx.paths.config_file, snippet_file(ctx, shell)) if installed else ""
    wrappers = "".join(_wrapper(shell, name) for name in ctx.config.shell.wrap)
    text = text.replace("@SHELLKEEP@", command).replace("@NOTICES@", quote(str(ctx.paths.notices)))
    text = text.replace("@SHELLKEEP_BIN@", quote(bin_dir))
    text = text.replace("@REFRESH@\n", refresh).replace("@WRAPPERS@\n", wrappers)
    text = text.replace("@COMPLETION@\n", _completion(shell, quote, _completion_script(ctx, shell, completion_source)))
    if ctx.config.shell.notice:
        return text.replace(_NOTICE_BEGIN, "").replace(_NOTICE_END, "")
    head, _, rest = text.partition(_NOTICE_BEGIN)
    return head + rest.partition(_NOTICE_END)[2]


def install(ctx: Context, shell: str, *, completion_source: str | None = None) -> InstallResult:
    """Write the snippet file and add the marked block to ``shell``'s rc file, once.

    A second run leaves the rc file as it is (the snippet file is rewritten). The rc file
    keeps its mode and, when it is a symlink, its link. The notice file is rebuilt from
    every session. Raises ShellkeepError, before writing anything, when the rc file holds a
    damaged block (a marker line of it deleted by hand): its line numbers, to remove by hand.
    Raises OSError.
    """
    target = snippet_file(ctx, shell)
    ensure_dir(target.parent)
    write_bytes_atomic(target, snippet(ctx, shell, installed=True, completion_source=completion_source).encode("utf-8"))
    rewrite_notices(ctx.paths, ctx.sessions(all_projects=True))
    rc = rc_file(shell, dict(ctx.env))
    old = _read(rc)
    kept, found = _without_block(old)
    _refuse_damaged(rc, kept, f"then run 'shellkeep init {shell} --install' again")
    if found is None:
        joined = bool(kept) and not kept.endswith("\n")
        new = kept + ("\n" if joined else "") + _block(shell, target, joined=joined)
    else:  # there already: brought up to date in place (the snippet file may have moved)
        new = old.replace(found, _block(shell, target, joined=found.startswith(f"{BLOCK_BEGIN}{_JOINED}")), 1)
    if new == old:
        return InstallResult(rc, target, changed=False)
    _write_rc(rc, new)
    return InstallResult(rc, target, changed=True)


def uninstall(ctx: Context, shell: str) -> InstallResult:
    """Remove the marked block from ``shell``'s rc file (exactly what ``install`` added), the snippet file
    and the completion script kept for ``shell`` in the data folder.

    ``changed`` is False when there was no block. Raises ShellkeepError, changing nothing, when
    the rc file holds a damaged block (see ``install``); OSError.
    """
    target = snippet_file(ctx, shell)
    rc = rc_file(shell, dict(ctx.env))
    kept, found = _without_block(_read(rc))
    _refuse_damaged(rc, kept, "nothing was changed")
    if found is not None:
        _write_rc(rc, kept)
    for made in (target, ctx.paths.shell_dir / f"completion.{shell}"):
        try:
            made.unlink()
        except FileNotFoundError:
            pass
    return InstallResult(rc, target, changed=found is not None)


def _block(shell: str, target: Path, *, joined: bool) -> str:
    begin = BLOCK_BEGIN + (_JOINED if joined else "")
    about = f"# Added by 'shellkeep init {shell} --install'; 'shellkeep init {shell} --uninstall' removes it."
    if shell == "fish":
        load = f"test -r {_fish_quote(str(target))}; and source {_fish_quote(str(target))}"
    else:
        load = f"if [ -r {shlex.quote(str(target))} ]; then . {shlex.quote(str(target))}; fi"
    return f"{begin}\n{about}\n{load}\n{BLOCK_END}\n"


def _without_block(text: str) -> tuple[str, str | None]:
    """Return ``text`` without the marked block (and the line break it added), and the block found.

    The block is what ``_block`` writes: its begin line, the line saying who added it, the
    line that sources the snippet, its end line.
    A begin or end marker line of the user's own, away from such a block, is left alone with
    every line around it.
    """
    found = _BLOCK.search(text)
    if found is None:
        return text, None
    start, end = found.span()
    block = found.group(0)
    if block.startswith(f"{BLOCK_BEGIN}{_JOINED}") and start > 0:
        start -= 1
    return text[:start] + text[end:], block


def _refuse_damaged(rc: Path, text: str, then: str) -> None:
    """Raise ShellkeepError when ``text`` (the rc file without any whole block) still holds part of one."""
    lines = text.split("\n")
    for index, line in enumerate(lines):
        if not _ADDED_BY.match(line):
            continue
        first = index - 1 if index > 0 and lines[index - 1].startswith(BLOCK_BEGIN) else index
        last = index
        if index + 1 < len(lines) and "init." in lines[index + 1] and ("source" in lines[index + 1] or ". " in lines[index + 1]):
            last += 1
        if last + 1 < len(lines) and lines[last + 1] == BLOCK_END:
            last += 1
        where = f"line {first + 1}" if first == last else f"lines {first + 1}-{last + 1}"
        raise ShellkeepError(
            f"{rc} holds a damaged shellkeep block (a marker line was removed): "
            f"delete {where} of it by hand, {then}"
        )


def _read(rc: Path) -> str:
    try:
        return rc.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return ""


def _write_rc(rc: Path, text: str) -> None:
    target = rc.resolve() if rc.is_symlink() else rc
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    ensure_dir(target.parent)
    write_bytes_atomic(target, text.encode("utf-8", "surrogateescape"))
    os.chmod(target, mode if mode is not None else 0o644)  # an rc file is not a secret


def _refresh(shell: str, quote: Callable[[str], str], config: Path, target: Path) -> str:
    """Return the lines that regenerate the installed snippet once the config or the template is newer.

    A failed regeneration (a broken config) says why once, on stderr, and touches the snippet
    file, so the next shells start no process until the config changes again.
    """
    conf, own, tmpl = quote(str(config)), quote(str(target)), quote(str(template_file(shell)))
    why = f"the shell integration keeps its last version until the config changes; 'shellkeep init {shell} --install' retries"
    if shell == "fish":
        return (
            "# Regenerated once when the config or shellkeep's template is newer than this file.\n"
            f"if not set -q __shellkeep_refreshing; and begin; test {conf} -nt {own}; or test {tmpl} -nt {own}; end\n"
            "    set -g __shellkeep_refreshing 1\n"
            f"    set -l __shellkeep_error ($__shellkeep_cmd init fish --install 2>&1 >/dev/null)\n"
            "    if test $status -eq 0\n"
            f"        source {own}\n"
            "        set -e __shellkeep_refreshing\n"
            "        return 0\n"
            "    end\n"
            f"    command touch {own} 2>/dev/null  # not again at every start: only once the config changes\n"
            f"    test {conf} -nt {own}; and command touch -r {conf} {own} 2>/dev/null  # a config dated ahead\n"
            f"    printf '%s (%s)\\n' (string join ' ' -- $__shellkeep_error) {quote(why)} >&2\n"
            "    set -e __shellkeep_refreshing\n"
            "end\n"
        )
    return (
        "# Regenerated once when the config or shellkeep's template is newer than this file.\n"
        f"if [[ -z ${{__shellkeep_refreshing-}} ]] && {{ [[ {conf} -nt {own} ]] || [[ {tmpl} -nt {own} ]]; }}; then\n"
        "    __shellkeep_refreshing=1\n"
        f'    if __shellkeep_error=$("${{__shellkeep_cmd[@]}}" init {shell} --install 2>&1 >/dev/null); then\n'
        f"        unset __shellkeep_error\n"
        f"        . {own}\n"
        "        unset __shellkeep_refreshing\n"
        "        return 0\n"
        "    fi\n"
        f"    command touch {own} 2>/dev/null  # not again at every start: only once the config changes\n"
        f"    [[ {conf} -nt {own} ]] && command touch -r {conf} {own} 2>/dev/null  # a config dated ahead\n"
        f"    printf '%s (%s)\\n' \"$__shellkeep_error\" {quote(why)} >&2\n"
        "    unset __shellkeep_refreshing __shellkeep_error\n"
        "fi\n"
    )


def _completion_script(ctx: Context, shell: str, source: str | None) -> Path | None:
    """Return the completion script to source: the shipped one, else ``source`` kept in the data folder."""
    found = completion_file(shell)
    if found is not None or source is None:
        return found
    target = ctx.paths.shell_dir / f"completion.{shell}"
    data = source.encode("utf-8")
    try:
        if target.read_bytes() == data:
            return target
    except OSError:
        pass
    ensure_dir(target.parent)
    write_bytes_atomic(target, data)
    return target


def _completion(shell: str, quote: Callable[[str], str], found: Path | None) -> str:
    """Return the lines that source the completion script ``found`` (builtins only; nothing for None)."""
    if found is None:
        return ""
    script = quote(str(found))
    if shell == "fish":
        return f"status is-interactive; and test -r {script}; and source {script}\n"
    if shell == "zsh":  # the script registers itself with compdef: compinit must have run first
        return f"if [[ -o interactive ]] && (( $+functions[compdef] )) && [[ -r {script} ]]; then . {script}; fi\n"
    return f"if [[ $- == *i* && -r {script} ]]; then . {script}; fi\n"


def _wrapper(shell: str, name: str) -> str:
    """Return the function of one program (``name`` is validated by the config: no quoting needed)."""
    if shell == "fish":
        return (
            f"if command -q {name}\n"
            f"    function {name} --wraps {name} --description '{name}, recorded by shellkeep'\n"
            '        if test -n "$SHELLKEEP_SESSION"\n'
            f"            command {name} $argv\n"
            "        else\n"
            f"            $__shellkeep_cmd run -- {name} $argv\n"
            "        end\n"
            "    end\n"
            "end\n"
        )
    found = f"type -P {name} >/dev/null" if shell == "bash" else f"__shellkeep_on_path {name}"
    return (
        f"if {found}; then\n"
        f"    function {name} {{\n"
        f"        if [[ -n ${{SHELLKEEP_SESSION-}} ]]; then command {name} \"$@\"\n"
        f'        else "${{__shellkeep_cmd[@]}}" run -- {name} "$@"; fi\n'
        "    }\n"
        "fi\n"
    )


def _fish_quote(text: str) -> str:
    """Quote ``text`` as one fish word (single quotes; ``\\`` and ``'`` escaped)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"

"""Record a program: what ``shellkeep``, ``shellkeep PROGRAM`` and ``shellkeep run`` do.

Click-free, so the console script can start the child without importing click:
``parse_run_args`` recognises the plain forms of those command lines and returns None for
anything else (help, group options, an unknown ``run`` option, a missing value), which
the click group in ``cli/main.py`` then parses and reports. ``cli/run.py`` (click) builds
the same ``RunArgs`` and calls ``record``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

COMMANDS: dict[str, str] = {
    "run": "shellkeep.cli.run:run",
    "ls": "shellkeep.cli.ls:ls",
    "ps": "shellkeep.cli.ps:ps",
    "show": "shellkeep.cli.show:show",
    "replay": "shellkeep.cli.replay:replay",
    "config": "shellkeep.cli.config:config",
    "resume": "shellkeep.cli.resume:resume",
    "browse": "shellkeep.cli.browse:browse",
    "search": "shellkeep.cli.search:search",
    "serve": "shellkeep.cli.serve:serve",
    "cat": "shellkeep.cli.cat:cat",
    "export": "shellkeep.cli.export:export",
    "import": "shellkeep.cli.import_:import_",
    "audit": "shellkeep.cli.audit:audit",
    "reindex": "shellkeep.cli.reindex:reindex",
    "key": "shellkeep.cli.key:key",
    "gc": "shellkeep.cli.gc:gc",
    "sync": "shellkeep.cli.sync:sync",
    "pin": "shellkeep.cli.pin:pin",
    "unpin": "shellkeep.cli.pin:unpin",
    "rm": "shellkeep.cli.rm:rm",
    "redact": "shellkeep.cli.redact:redact",
    "init": "shellkeep.cli.init:init",
    "stats": "shellkeep.cli.stats:stats",
    "doctor": "shellkeep.cli.doctor:doctor",
    "mark": "shellkeep.cli.mark:mark",
    "diff": "shellkeep.cli.diff:diff",
    "restore-files": "shellkeep.cli.restore_files:restore_files",
    "watch": "shellkeep.cli.watch:watch",
}
"""Command name -> ``"module:function"`` of its click command; any other word is a program."""

_VALUE_OPTIONS = ("--name", "--title", "--restart")
_FLAG_OPTIONS = ("--no-input", "--no-redact", "-q", "--quiet")


@dataclass(frozen=True, slots=True)
class RunArgs:
    """The options of one recording; ``argv`` empty means ``$SHELL``."""

    argv: tuple[str, ...] = ()
    name: str | None = None
    title: str | None = None
    no_input: bool = False
    no_redact: bool = False
    quiet: bool = False  # -q: no start line
    restart: str | None = None  # 'no', 'on-failure' or 'on-failure:N'; None: record.restart


def parse_run_args(args: Sequence[str]) -> RunArgs | None:
    """Return the recording a command line asks for, or None when click must parse it.

    args: the words after ``shellkeep``. Recognised: nothing; ``PROGRAM [ARGS...]``
    (PROGRAM not a command, not starting with '-'); ``-- [PROGRAM [ARGS...]]``; and ``run``
    with ``--name``/``--title``/``--restart`` (``--name N`` or ``--name=N``), ``--no-input``,
    ``--no-redact``, ``-q``/``--quiet``, then ``--`` or the program.
    """
    if not args:
        return RunArgs()
    first = args[0]
    if first == "--":
        return RunArgs(argv=tuple(args[1:]))
    if first.startswith("-"):
        return None
    if first not in COMMANDS:
        return RunArgs(argv=tuple(args))
    if first != "run":
        return None
    values: dict[str, str] = {}
    flags: set[str] = set()
    i = 1
    while i < len(args):
        word = args[i]
        if word == "--":
            i += 1
            break
        if not word.startswith("-"):
            break
        option, eq, value = word.partition("=")
        if option in _VALUE_OPTIONS:
            if not eq:
                if i + 1 >= len(args):
                    return None
                i += 1
                value = args[i]
            values[option] = value
        elif option in _FLAG_OPTIONS and not eq:
            flags.add(option)
        else:
            return None
        i += 1
    argv = tuple(args[i:])
    if argv and argv[0].startswith("-"):
        return None  # click says: put the program after '--'
    return RunArgs(
        argv=argv,
        name=values.get("--name"),
        title=values.get("--title"),
        no_input="--no-input" in flags,
        no_redact="--no-redact" in flags,
        quiet=bool(flags & {"-q", "--quiet"}),
        restart=values.get("--restart"),
    )


def record(run: RunArgs) -> int:
    """Record ``run.argv`` (``$SHELL`` when empty) in a pty; return its exit status.

    With ``run.restart`` (else ``record.restart``) other than ``no``, the program is
    supervised (``app.supervise``): resumed in place when it crashes.
    Raises AgentNotFound (127) or ProgramNotExecutable (126) before anything is stored,
    UserInputError (2) for a bad ``--restart``.
    """
    import os
    from pathlib import Path

    from shellkeep.cli.console import warn
    from shellkeep.app.record import RunRequest, default_argv, load_settings, run_session
    from shellkeep.store.paths import resolve_paths

    from shellkeep.errors import AgentNotFound

    here = Path.cwd()
    paths = resolve_paths()
    settings = load_settings(paths, here, warn=warn, no_input=run.no_input, no_redact=run.no_redact)
    banner = not run.quiet and sys.stdout.isatty()
    request = RunRequest(
        argv=run.argv or default_argv(os.environ),
        cwd=here,
        name=run.name,
        title=run.title,
        settings=settings,
        banner=banner,
    )
    policy = settings.restart if run.restart is None else run.restart
    try:
        if policy == "no":
            return run_session(paths, request, warn=warn).exit_code
        from shellkeep.app.supervise import restart_limit, supervise  # only supervised runs load it

        return supervise(paths, request, restarts=restart_limit(policy), warn=warn).exit_code
    except AgentNotFound as exc:
        hint = command_hint(request.argv[0])
        if hint is None:
            raise
        raise AgentNotFound(f"{exc} (did you mean {hint!r}?)") from None


def command_hint(word: str) -> str | None:
    """Return the shellkeep command ``word`` looks like a typo of (``lsit`` -> ``ls``), or None.

    Only for a bare word (no '/'); asked once the word is known to be no program on PATH.
    """
    if "/" in word:
        return None
    import difflib

    close = difflib.get_close_matches(word, COMMANDS, n=1, cutoff=0.6)
    return close[0] if close else None

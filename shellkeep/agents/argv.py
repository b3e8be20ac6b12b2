"""Read agents' command lines: which program runs, which options it got, how to rebuild it.

An agent is started directly (``claude``, ``/usr/bin/codex``), through a package runner
(``npx -y @openai/codex``, ``bunx``, ``pnpm dlx``, ``uvx aider-chat``, ``pipx run``), through
an interpreter (``node path/to/@google/gemini-cli/bundle/gemini.js``, ``python -m aider``).
``split_command`` separates that launcher prefix from the agent's own arguments, which
``tokenize`` splits into options (with their values) and positionals using a small
per-agent ``Grammar``, so that resume flags can be found, dropped or added.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from shellkeep.agents.launchers import NODE, PYTHON_PREFIXES, RUNNER_VERBS, RUNNERS, program_name

__all__ = [
    "Arity",
    "CommandLine",
    "Grammar",
    "Option",
    "Token",
    "find_option",
    "first_positional",
    "program_name",
    "rebuild",
    "split_command",
    "tokenize",
]

def _package_name(spec: str) -> str:
    """Return a package spec without its version (``@openai/codex@0.171`` → ``@openai/codex``)."""
    at = spec.find("@", 1)
    if at > 0:
        spec = spec[:at]
    for sep in ("==", ">=", "<=", "~=", "[", "<", ">"):
        spec = spec.split(sep, 1)[0]
    return spec


@dataclass(frozen=True, slots=True)
class CommandLine:
    """A command line split into the launcher prefix and the agent's own arguments.

    prefix: what starts the agent (``("claude",)``, ``("npx", "-y", "@openai/codex")``).
    args: everything after it.
    """

    prefix: tuple[str, ...]
    args: tuple[str, ...]


def split_command(
    argv: Sequence[str],
    names: Iterable[str],
    packages: Iterable[str] = (),
    modules: Iterable[str] = (),
) -> CommandLine | None:
    """Return ``argv`` split at the agent's own arguments, or None when it runs something else.

    Args:
        argv: the command line.
        names: the agent's executable names (``claude``); compared to ``argv[0]``'s base name.
        packages: its npm/PyPI package names (``@anthropic-ai/claude-code``, ``aider-chat``),
            recognised after a runner and as a directory in a ``node script.js`` path.
        modules: its Python module names, recognised in ``python -m <module>``.
    """
    if not argv:
        return None
    name_set = {n.lower() for n in names}
    package_set = {p.lower() for p in packages}
    first = program_name(argv[0]).lower()
    if first in name_set:
        return CommandLine(prefix=(argv[0],), args=tuple(argv[1:]))
    start = 1
    runner = first
    if first in RUNNER_VERBS and len(argv) > 1 and argv[1] in RUNNER_VERBS[first]:
        start = 2
        runner = "npx"
    if runner in RUNNERS or start == 2:
        takes_value = RUNNERS.get(runner, frozenset())
        i = start
        while i < len(argv):
            arg = argv[i]
            if arg == "--":
                i += 1
                continue
            if arg.startswith("-"):
                i += 2 if arg in takes_value else 1
                continue
            package = _package_name(arg).lower()
            if package in package_set or program_name(package) in name_set:
                return CommandLine(prefix=tuple(argv[: i + 1]), args=tuple(argv[i + 1 :]))
            return None
        return None
    if first in NODE:
        i = 1
        while i < len(argv) and argv[i].startswith("-"):
            i += 1
        if i >= len(argv):
            return None
        script = argv[i].replace("\\", "/").lower()
        if program_name(script) in name_set or any(f"/{p}/" in f"/{script}" for p in package_set):
            return CommandLine(prefix=tuple(argv[: i + 1]), args=tuple(argv[i + 1 :]))
        return None
    if first.startswith(PYTHON_PREFIXES) and len(argv) > 2 and argv[1] == "-m" and argv[2] in set(modules):
        return CommandLine(prefix=tuple(argv[:3]), args=tuple(argv[3:]))
    return None


class Arity(enum.Enum):
    """How many values an option takes."""

    NONE = "none"
    ONE = "one"
    OPTIONAL = "optional"  # one, when the next argument does not start with '-'
    MANY = "many"  # every following argument up to the next one starting with '-'


@dataclass(frozen=True, slots=True)
class Option:
    """One option of an agent CLI: its spellings and how many values it takes."""

    names: tuple[str, ...]
    arity: Arity = Arity.NONE


@dataclass(frozen=True, slots=True)
class Grammar:
    """What an agent CLI's arguments look like.

    options: the options whose arity matters (unknown options are read as taking the next
    argument when it does not start with '-', so their values are never mistaken for a
    prompt). subcommands: first positionals that start something other than a conversation.
    prompt_positionals: whether positionals are an initial prompt (claude) rather than,
    say, a project directory (opencode) or files (aider).
    """

    options: tuple[Option, ...]
    subcommands: frozenset[str] = frozenset()
    prompt_positionals: bool = True

    def option(self, name: str) -> Option | None:
        """Return the option spelled ``name`` (``--model``, ``-m``), or None."""
        for option in self.options:
            if name in option.names:
                return option
        return None


@dataclass(frozen=True, slots=True)
class Token:
    """One option with its values, or one positional, as it appeared on the command line.

    words: the original arguments (``("--resume", "abc")``, ``("--resume=abc",)``, ``("fix it",)``).
    option: the grammar's option, None for a positional or an unknown option.
    name: the option's spelling, or None for a positional. value: its (first) value, if any.
    """

    words: tuple[str, ...]
    option: Option | None
    name: str | None
    value: str | None

    @property
    def is_positional(self) -> bool:
        """Return whether this token is a positional argument."""
        return self.name is None


def tokenize(args: Sequence[str], grammar: Grammar) -> list[Token]:
    """Split an agent's arguments into option and positional tokens, in order.

    ``--name=value`` is one token; after ``--`` every argument is a positional.
    """
    tokens: list[Token] = []
    i = 0
    n = len(args)
    while i < n:
        arg = args[i]
        if arg == "--":
            tokens.extend(Token(words=(a,), option=None, name=None, value=None) for a in args[i:])
            break
        if not arg.startswith("-") or arg == "-":
            tokens.append(Token(words=(arg,), option=None, name=None, value=None))
            i += 1
            continue
        name, eq, inline = arg.partition("=")
        option = grammar.option(name)
        if eq:
            tokens.append(Token(words=(arg,), option=option, name=name, value=inline))
            i += 1
            continue
        arity = option.arity if option is not None else Arity.OPTIONAL
        words = [arg]
        i += 1
        if (arity is Arity.ONE and i < n) or (arity is Arity.OPTIONAL and i < n and not args[i].startswith("-")):
            words.append(args[i])
            i += 1
        elif arity is Arity.MANY:
            while i < n and not args[i].startswith("-"):
                words.append(args[i])
                i += 1
        tokens.append(Token(words=tuple(words), option=option, name=name, value=words[1] if len(words) > 1 else None))
    return tokens


def find_option(tokens: Sequence[Token], *options: Option) -> Token | None:
    """Return the last token for any of ``options``, or None when none was given."""
    for token in reversed(tokens):
        if token.option is not None and token.option in options:
            return token
    return None


def first_positional(tokens: Sequence[Token]) -> str | None:
    """Return the first positional argument (a subcommand, a prompt...), or None."""
    for token in tokens:
        if token.is_positional and token.words[0] != "--":
            return token.words[0]
    return None


def rebuild(tokens: Sequence[Token], drop: Iterable[Option] = (), *, drop_positionals: bool = False) -> list[str]:
    """Return the arguments of ``tokens`` without the ``drop`` options (and positionals if asked)."""
    dropped = set(drop)
    words: list[str] = []
    for token in tokens:
        if token.option is not None and token.option in dropped:
            continue
        if token.is_positional and drop_positionals:
            continue
        words.extend(token.words)
    return words

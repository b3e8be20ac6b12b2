"""Know aider (``aider``): its Markdown chat history and ``--restore-chat-history``.

aider has no session ids. Each launch appends a section to the chat history file
(``--chat-history-file``, ``$AIDER_CHAT_HISTORY_FILE``, else ``.aider.chat.history.md`` at the
git top-level): ``# aider chat started at YYYY-MM-DD HH:MM:SS`` (local time), user turns as
``#### <text>`` lines, aider's own output as ``> `` lines (``> Tokens: 7.3k sent, 120
received.``), the model's answer as plain text (aider 0.86 ``io.py``). shellkeep takes the
section's start stamp as the session id. A resume re-injects the section's last exchanges
into a new aider: ``--restore-chat-history`` would reload the file's whole history, every
launch's in that repository (other sessions' conversations too), and have the model summarise it.
Read and tested with aider 0.85.5 and 0.86.2 (tests/agents/test_resume_aider.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path

from shellkeep.agents.adapter import HELP, CommandAdapter
from shellkeep.agents.argv import Arity, Grammar, Option, find_option, rebuild, tokenize
from shellkeep.agents.base import AgentSession, Exchange, Launch, ScreenChrome, Usage
from shellkeep.agents.jsonl import iter_lines_backwards
from shellkeep.agents.locations import CLOCK_SLACK
from shellkeep.agents.records import ExchangeBuilder, last, one_line
from shellkeep.git.info import git_root
from shellkeep.logs import get_logger

__all__ = ["AiderAdapter", "chat_history_file", "exchanges_from_markdown"]

log = get_logger(__name__)

_HISTORY_FILE = Option(("--chat-history-file",), Arity.ONE)
_RESTORE = Option(("--restore-chat-history",))
_NO_RESTORE = Option(("--no-restore-chat-history",))
_MESSAGE = Option(("--message", "--msg", "-m"), Arity.ONE)
_MESSAGE_FILE = Option(("--message-file", "-f"), Arity.ONE)

_GRAMMAR = Grammar(
    options=(
        HELP,
        Option(("--version",)),
        _HISTORY_FILE,
        _RESTORE,
        _NO_RESTORE,
        _MESSAGE,
        _MESSAGE_FILE,
        *(
            Option((name,), Arity.ONE)
            for name in (
                "--model",
                "--weak-model",
                "--editor-model",
                "--edit-format",
                "--input-history-file",
                "--llm-history-file",
                "--api-key",
                "--set-env",
                "--openai-api-key",
                "--anthropic-api-key",
                "--env-file",
                "--read",
                "--file",
                "--map-tokens",
                "--reasoning-effort",
                "--thinking-tokens",
                "--chat-language",
                "--encoding",
            )
        ),
        Option(("--config", "-c"), Arity.ONE),
    ),
    subcommands=frozenset(),
    prompt_positionals=False,  # aider FILE...: positionals are files to add to the chat
)

_HEADER = "# aider chat started at "
_DEFAULT_FILE = ".aider.chat.history.md"
_STAMP_FORMAT = "%Y-%m-%d %H:%M:%S"
_TOKENS = r"([\d.]+)([kKmM]?) (sent|received|cache write|cache hit)"
_MODEL = r"^> (?:Main )?[Mm]odel: (\S+)"


def chat_history_file(argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Path:
    """Return the chat history file a run of aider writes.

    ``--chat-history-file`` in argv (relative to ``cwd``), else ``$AIDER_CHAT_HISTORY_FILE``,
    else ``.aider.chat.history.md`` at the git top-level of ``cwd`` (``cwd`` outside a repo).
    """
    token = find_option(tokenize(AiderAdapter().command(argv).args, _GRAMMAR), _HISTORY_FILE)
    named = token.value if token is not None else env.get("AIDER_CHAT_HISTORY_FILE")
    if named:
        path = Path(os.path.expanduser(named)) if named.startswith("~") else Path(named)
        return path if path.is_absolute() else cwd / path
    return (git_root(cwd) or cwd) / _DEFAULT_FILE


def _count(number: str, scale: str) -> int:
    """Return aider's short token count (``7.3k``) as an int."""
    try:
        value = float(number)
    except ValueError:
        return 0
    return round(value * {"k": 1_000, "m": 1_000_000}.get(scale.lower(), 1))


def _usage(line: str) -> Usage | None:
    """Return the usage a ``> Tokens: …`` line reports, or None for another line."""
    if not line.startswith("> Tokens:"):
        return None
    counts = {kind: _count(number, scale) for number, scale, kind in re.findall(_TOKENS, line)}
    return Usage(
        input=counts.get("sent", 0),
        output=counts.get("received", 0),
        cache_read=counts.get("cache hit", 0),
        cache_write=counts.get("cache write", 0),
    )


def exchanges_from_markdown(lines: Iterable[str]) -> list[Exchange]:
    """Build exchanges from aider chat history lines (one launch's section or many).

    ``#### `` lines are the prompt (consecutive ones form one multi-line prompt); ``> ``
    lines are aider's output, kept as tool results (consecutive ones joined by ``; ``), except the
    token report, which gives usage, and the model banner, which gives the model;
    other lines are the answer. Lines before the first prompt are dropped.
    """
    builder = ExchangeBuilder()
    model: str | None = None
    prompt_lines: list[str] | None = None
    answer_lines: list[str] = []
    notice_lines: list[str] = []

    def flush_notice() -> None:
        if notice_lines:
            builder.tool_result("; ".join(notice_lines))
            notice_lines.clear()

    def flush_answer() -> None:
        text = "\n".join(answer_lines).strip("\n")
        if text.strip():
            builder.answer(text)
        answer_lines.clear()

    def flush_prompt() -> None:
        nonlocal prompt_lines
        if prompt_lines is not None:
            builder.prompt("\n".join(prompt_lines).strip())
            builder.set_model(model)
            prompt_lines = None

    for raw in lines:
        line = raw.rstrip("\r\n")
        if line.startswith(_HEADER):
            flush_prompt()
            flush_answer()
            flush_notice()
            builder.end()  # a new launch: its banner belongs to no exchange
            model = None
            continue
        if line == "####" or line.startswith("#### "):
            if prompt_lines is None:
                flush_answer()
                flush_notice()
                prompt_lines = []
            prompt_lines.append(line[5:].rstrip())
            continue
        flush_prompt()
        if line == ">" or line.startswith("> "):
            flush_answer()
            text = line[2:].rstrip()
            usage = _usage(line)
            found = re.match(_MODEL, line)
            if found:
                model = found.group(1)
                builder.set_model(model)
            elif usage is not None:
                flush_notice()
                builder.add_usage(usage)
            elif text:
                notice_lines.append(one_line(text))
            else:
                flush_notice()
            continue
        flush_notice()
        answer_lines.append(line.rstrip())
    flush_prompt()
    flush_answer()
    flush_notice()
    return builder.exchanges()


AIDER_SCREEN = ScreenChrome(
    lines=(
        r"Tokens: .*",  # "Tokens: 596 sent, 10 received. Cost: $0.00062 message, $0.00062 session."
        r"─{20,}",  # the rule it draws before each prompt
    ),
    partial_lines=True,  # its markdown stream (rich's Live) left 'STANDIN-ANSWER-1:' above the reply, loaded
)
"""What aider 0.86.2 prints besides an answer (seen in tests/agents/test_screen_exchanges.py), line
by line below the prompt typed after ``> ``: the answer, its token and cost report and a rule."""


class AiderAdapter(CommandAdapter):
    """Adapter for aider (``aider``, ``python -m aider``, ``uvx aider-chat``)."""

    name = "aider"
    title = "Aider"
    # aider.chat/docs/config/dotenv.html: AIDER_* options and the provider keys and endpoints.
    env_names = ("OPENAI_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "GEMINI_API_KEY",
                 "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "OLLAMA_API_BASE")  # fmt: skip
    env_prefixes = ("AIDER_",)
    executables = ("aider",)
    tested_versions = ("0.85.5", "0.86.2")
    """The aider versions this adapter was tested with, end to end (tests/agents/test_resume_aider.py)."""
    packages = ("aider-chat", "aider-install")
    modules = ("aider", "aider.main")
    grammar = _GRAMMAR
    screen_chrome = AIDER_SCREEN
    inject_paste_mode = True  # its prompt (prompt_toolkit) switches bracketed paste on when it waits

    def prepare(self, argv: Sequence[str], cwd: Path, env: Mapping[str, str]) -> Launch:
        """Return the launch unchanged: aider has no session id to pre-assign."""
        return Launch(argv=tuple(argv))

    def find_session(
        self,
        launch: Launch,
        cwd: Path,
        env: Mapping[str, str],
        started_at: datetime,
        screen_text: str,
    ) -> AgentSession | None:
        """Return the section this launch appended to the chat history file, or None.

        The first ``# aider chat started at`` header (local time) not before ``started_at``
        is the session; its stamp is the session id. The file is read from its end.
        """
        path = chat_history_file(launch.argv, cwd, env)
        threshold = (started_at - CLOCK_SLACK).astimezone().replace(tzinfo=None, microsecond=0)
        found: str | None = None
        try:
            with path.open("rb") as fh:
                for raw in iter_lines_backwards(fh):
                    line = raw.decode("utf-8", "replace").rstrip("\r")
                    if not line.startswith(_HEADER):
                        continue
                    stamp = line[len(_HEADER) :].strip()
                    try:
                        moment = datetime.strptime(stamp, _STAMP_FORMAT)
                    except ValueError:
                        continue
                    if moment < threshold:
                        break
                    found = stamp
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cannot read aider chat history %s: %s", path, exc)
            return None
        if found is None:
            return None
        return AgentSession(agent=self.name, session_id=found, transcript=path)

    def read_exchanges(self, session: AgentSession, limit: int | None = None) -> list[Exchange]:
        """Return the exchanges of the session's section (of the whole file when it has no id).

        The file is read backwards up to the section's header, so earlier launches are not read.
        """
        if session.transcript is None:
            return []
        header = f"{_HEADER}{session.session_id}" if session.session_id else None
        section: list[str] = []
        found = header is None
        try:
            with session.transcript.open("rb") as fh:
                for raw in iter_lines_backwards(fh):
                    line = raw.decode("utf-8", "replace")
                    if header is not None and line.startswith(_HEADER):
                        if line.rstrip() == header:
                            found = True
                            break
                        section.clear()  # a later launch's section: not ours
                        continue
                    section.append(line)
        except OSError as exc:
            log.warning("cannot read aider chat history %s: %s", session.transcript, exc)
            return []
        if not found:
            log.warning("aider chat history %s has no section started at %s", session.transcript, session.session_id)
            return []
        section.reverse()
        return last(exchanges_from_markdown(section), limit)

    def fresh_argv(self, original_argv: Sequence[str]) -> list[str]:
        """Return the user's command without one-shot messages or a restored chat history."""
        cmd = self.command(original_argv)
        tokens = tokenize(cmd.args, self.grammar)
        return [*cmd.prefix, *rebuild(tokens, (_RESTORE, _MESSAGE, _MESSAGE_FILE))]

    def resume_argv(self, original_argv: Sequence[str], session: AgentSession) -> list[str] | None:
        """Return None: aider is resumed by re-injection (see the module docstring).

        ``fresh_argv`` starts it anew, and the section's last exchanges are typed into it.
        """
        return None

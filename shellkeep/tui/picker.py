"""Open the session picker of ``shellkeep browse`` and ``shellkeep resume --pick``; return the choice.

The project's sessions newest first (with those recorded at its former paths, as ``ls``
lists them; every project after Ctrl-A, with the sessions pulled from other machines by
``sync pull``, marked with their machine), a filter typed at the top
that keeps the sessions matching every word (id, name, agent, status, command, directory,
prompts), and a preview of the highlighted session's last screen (an audited read) and last
exchanges. Enter resumes it; Ctrl-R replays it (``browse`` only); Escape leaves.
Textual and rich are imported when the picker opens, never by other commands: the rows
are ``tui/rows.py``, the Textual app ``tui/app.py``.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from shellkeep.app.context import Context
from shellkeep.errors import SessionNotFound, ShellkeepError, UserInputError
from shellkeep.store.paths import project_key
from shellkeep.tui.rows import Choice, list_entries

if TYPE_CHECKING:
    from textual.app import App


def pick_session(ctx: Context, *, all_sessions: bool = False) -> str | None:
    """Open the picker on the context's project; return the id chosen with Enter, or None.

    Blocks until the user chooses or leaves. Raises UserInputError without a terminal and
    SessionNotFound when nothing was ever recorded.
    """
    choice = run_picker(ctx, all_projects=False, allow_replay=False, all_sessions=all_sessions)
    return choice.session_id if choice is not None else None


def run_picker(ctx: Context, *, all_projects: bool, allow_replay: bool, all_sessions: bool = False) -> Choice | None:
    """Run the picker full screen and return the user's choice, or None when they left.

    Raises UserInputError when stdin or stdout is not a terminal, ShellkeepError when Textual
    is missing, SessionNotFound when no session is stored in any project.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserInputError("the session picker needs a terminal; give a SESSION instead, see 'shellkeep ls'")
    try:
        app = picker_app(ctx, all_projects=all_projects, allow_replay=allow_replay, all_sessions=all_sessions)
    except ImportError as exc:
        raise ShellkeepError(f"the session picker needs the 'textual' package ({exc}); install it with pip") from exc
    return app.run()


def picker_app(ctx: Context, *, all_projects: bool, allow_replay: bool, all_sessions: bool = False) -> App[Choice | None]:
    """Return the picker as a Textual app (``run()`` it, or ``run_test()`` it headless).

    Sessions shorter than a second with no input (``store.session.is_trivial``) are left
    out unless ``all_sessions``.

    Raises SessionNotFound when no session is stored in any project; ImportError without Textual.
    """
    here = list_entries(ctx, all_projects=False, all_sessions=all_sessions)
    everywhere = list_entries(ctx, all_projects=True, all_sessions=all_sessions) if all_projects or not here else None
    if not here and not everywhere:
        raise SessionNotFound(f"no sessions recorded in project {project_key(ctx.project_root)} yet; run 'shellkeep' to record one")
    from shellkeep.tui.app import Picker  # Textual and rich load here, on first use

    return Picker(ctx, here, everywhere, all_projects or not here, allow_replay, all_sessions)

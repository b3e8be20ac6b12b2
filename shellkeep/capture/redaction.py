"""Own the redaction rules and replace secrets in recorded text with ``[REDACTED:<name>]``.

``RULES`` is the one table of built-in rules: (name, pattern, example), in priority order,
covering the token formats of gitleaks' default rule set (config/gitleaks.toml, read 2026-07)
written from the vendors' published formats, plus keyword and generic high-entropy
assignments. A pattern is a Python regex; when it has a group named ``secret`` only that
group is replaced (``password=[REDACTED:password]``), else the whole match; ``min_entropy``
drops a match whose secret is less random than that (Shannon bits per character). Every
example is fake, shaped so that its rule matches it; the tests feed each one alone, inside
text and split at every offset.

``Redactor.redact`` works on a whole text. ``StreamRedactor`` works on the capture stream:
``feed`` returns what is safe to write now and holds back a tail that could be the start
of a secret still arriving, for as long as it could, so a secret split across two reads
however far apart is still caught (on output, ``release`` lets a quiet second write a tail
that no rule's starting literal begins: see ``StreamRedactor``). The hold is exact rather than a
fixed margin: each rule's regex is turned once into a second regex that matches every
*prefix* of a match, and the tail is held from the earliest position where that prefix
regex reaches the end. Ordinary output holds back nothing or a few characters; a possible
secret holds back at most its rule's longest match (4 KiB for patterns without a bound), a
private key block up to 20 KiB; at that bound it is written as its rule's marker.

Text is ``str`` (already UTF-8 decoded), so a hold never splits a character. Escape
sequences stay as they are: a secret between two of them is replaced and they are kept,
and the keyword rules skip SGR colour codes between a keyword and its value. A secret with
escape sequences, backspaces or DELs inside it is matched on what the screen shows
(``_ScreenView``: sequences removed, overstrike and erase applied), mapped back so its whole
raw span becomes the marker; that view is built only around the places the junction
automaton finds (a literal an ESC/BS/DEL follows, or one cut by it), so coloured output
costs one more automaton pass. Not recognised: a literal cut after its first or second
character by an escape sequence that ends in none of ``m``/``K``/``H`` (or, after its first,
that follows a letter or digit: ``xg`` ESC ``hp_...``), and a keyword separated from its value
by a non-SGR sequence next to a space. ``keep_columns`` (output
streams) makes a one-line secret's marker take its screen width.

Speed: regexes compile on first use, never at import. A rule is skipped outright when
the text lacks a punctuation character every match needs (``_`` for ``ghp_``, ``:`` or
``=`` for ``password=``; each character looked up once per text), or, for a rule without
a starting literal, a literal inside every match (``Q~``). Otherwise its scan starts from a
literal (``ghp_``, ``eyJ``, ``://``, ``password``): the case-sensitive literals of every rule
are found in one pass by an Aho-Corasick automaton (ahocorasick-rs, a DFA in Rust), case-
insensitive ones with ``str.find`` on the lower-cased text. The hold of a rule whose matches
never hold whitespace (most token formats) is looked for after the text's last whitespace only.
A short read is first checked for any literal with one combined regex.
"""

from __future__ import annotations

import bisect
import collections
import functools
import importlib
import math
import os
import re
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from types import ModuleType

from shellkeep.logs import get_logger

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (start-up time)
if TYPE_CHECKING:
    from typing import Any

    from shellkeep.config import RedactConfig

log = get_logger(__name__)

MARKER = "[REDACTED:{name}]"
"""What a secret becomes; ``{name}`` is the rule's name."""

MARKER_PREFIX = MARKER.split("{", 1)[0]
"""The start of every marker, to count them."""

_HOLD_UNBOUNDED = 4096
"""Characters held back, at most, for a pattern whose matches have no length bound."""

_HOLD_MAX = 20 * 1024
"""No rule holds back more than this (the private-key rule needs almost all of it)."""

_SMALL = 2048
"""Texts up to this long are first checked for any rule's literal with one combined regex
(cheaper than a scan per rule for a short read; slower than those scans for a long one)."""


@dataclass(frozen=True, slots=True)
class RedactionRule:
    """One redaction rule: its marker name, a Python regex, and a fake example it matches."""

    name: str
    pattern: str
    example: str = ""
    min_entropy: float = 0.0  # Shannon bits per character the secret needs (0: any)


# Pieces shared by the keyword rules. SGR colour codes may sit between a keyword, its
# separator and its value (syntax-highlighted YAML or .env files); an unquoted value ends at
# whitespace, a quote, ',' or ';' or a control character (the start of an escape sequence),
# and a quoted value runs to its closing quote, which must be there.
#
# Source code is not a secret: a value that is a call or a subscript (``input()``,
# ``get_token()``, ``os.environ["API_KEY"]``, ``$(cat f)``, ``${TOKEN}``), a literal such as
# None/true or a type (``password: str``) is left as it is, and so is a prompt string whose
# closing quote the separator took: the "quoted value" after it then starts with code
# (``getpass("Secret: "); print("x")``, ``input("Password: ") or "x"``, ``"Token: " + t + "!"``):
# ``)`` ``]`` ``}`` ``,`` ``;`` ``+`` ``|`` ``&`` ``%`` ``.`` or the word or/and/if/else.
_SGR = r"(?:\x1b\[[0-9;]{0,32}m)"
_SEP = rf"[\"']?{_SGR}{{0,4}}[ \t]{{0,5}}[:=]{{1,3}}>?(?:[ \t]|{_SGR}){{0,8}}[\"']?"
_CODE = (
    r"(?:[A-Za-z_][\w.]{0,80}[(\[]"
    r"|(?:None|null|nil|true|false|undefined|str|bytes|int|bool|string|String|Optional|Any)(?![\w.-])"
    r"|[)\]}>]|\$[({])"
)
_AFTER_PROMPT = r"(?![ \t]{0,8}(?:[)\]},;+|&%.]|(?:or|and|if|else)(?![\w-])))"
"""At a quote the separator took: what follows is code after a prompt's closing quote."""
_UNQUOTED = r"[^\s\"'`,;\x00-\x1f\x7f]"
_VALUE = (
    rf"(?P<secret>(?<=\"){_AFTER_PROMPT}[^\"\x00-\x1f\x7f]{{1,256}}(?=\")"
    rf"|(?<='){_AFTER_PROMPT}[^'\x00-\x1f\x7f]{{1,256}}(?=')"
    rf"|(?<![\"'])(?!{_CODE}){_UNQUOTED}{{1,256}})"
)


def _keyword(keyword: str) -> str:
    """Return the pattern of ``<keyword> = <value>``, ``<keyword>: "<value>"`` and the like."""
    return f"(?i){keyword}{_SEP}{_VALUE}"


_KEY_BEGIN = r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_KEY_END = r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----"
_PRIVATE_KEY = (
    _KEY_BEGIN
    + r"(?:[\s\S]{0,16384}?"
    + _KEY_END
    # Two copies of one block interleaved (a typed key's tty echo and the program's copy:
    # BEGIN, body, BEGIN, body, END, body, END): the lazy match above stops at the first
    # END, so the key-shaped text after it up to the next END goes too. No '-' in it, so
    # it never runs on through the next block's BEGIN (each key keeps its own marker).
    # Bounded so that the longest match stays within _HOLD_MAX; the match still starts at
    # BEGIN, so scanning stays a search for that literal (an END-anchored alternative
    # would try every position of base64 text: minutes for 20 MB).
    + r"(?:[A-Za-z0-9+/=\s:,.]{1,3800}?"
    + _KEY_END
    + r")?"
    # No END within 16 KiB (a cut or endless block): redact the key-shaped text after BEGIN.
    + r"|[A-Za-z0-9+/=\s:,.-]{0,16384})"
)

_EXAMPLE_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)

# Fake bodies for the examples. Tokens whose body is hex cannot spell FAKE: theirs is the
# run of hex digits in order, which the tests accept as visibly fake too.
FAKE_HEX = "0123456789abcdef"
_F = "FAKE0000"  # 8 characters of a fake alphanumeric body
_NW = r"(?<![A-Za-ln-z0-9_])"  # not the tail of a longer word ('m' ends an SGR colour code)
_END = r"(?![A-Za-z0-9_])"  # ...nor the head of one

RULES: tuple[RedactionRule, ...] = (
    RedactionRule("private-key", _PRIVATE_KEY, _EXAMPLE_KEY),
    # -- cloud providers
    RedactionRule(
        "aws-access-key-id", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", "AKIAFAKE7EXAMPLE2KEY"
    ),
    RedactionRule(
        "aws-secret-access-key",
        rf"(?i)(?:aws_?secret_?access_?key|secretaccesskey){_SEP}(?P<secret>[A-Za-z0-9/+=]{{40}})",
        "aws_secret_access_key = FAKEwJalrXUtnFEMI/K7MDENG/bPxRfiEXAMPLE1",
    ),
    RedactionRule(
        "aws-bedrock-key",
        r"ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&-]{0,4000}",
        "ABSK" + "QmVkcm9ja0FAKE" * 8 + "FAKE=",
    ),
    RedactionRule("google-api-key", r"AIza[0-9A-Za-z_-]{35}", "AIzaSyFAKE-EXAMPLE_key00000000000000000"),
    RedactionRule("alibaba-access-key-id", rf"{_NW}LTAI[A-Za-z0-9]{{20}}{_END}", "LTAIFAKE0123456789abcdef"),
    RedactionRule(
        # A client secret has no prefix of its own: three characters, a digit, then "Q~".
        "azure-client-secret", r"(?<![A-Za-ln-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
        "abc8Q~FAKE-example.FAKE_example~FAKE00",
    ),
    RedactionRule("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", "dop_v1_" + FAKE_HEX * 4),
    RedactionRule("heroku-api-key", r"HRKU-AA[0-9A-Za-z_-]{58}", "HRKU-AA" + _F * 7 + "FA"),
    RedactionRule(
        "flyio-token",
        r"fo1_[\w-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,2048}={0,3}|fm2_[A-Za-z0-9+/]{100,2048}={0,3}",
        "fo1_" + _F * 5 + "FAK",
    ),
    RedactionRule("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-" + FAKE_HEX[:8] * 3 + "-" + (FAKE_HEX * 10)[:146]),
    RedactionRule("hashicorp-tf-token", r"(?<![A-Za-ln-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", "FAKEexample000.atlasv1." + _F * 8),
    RedactionRule("scalingo-token", r"tk-us-[\w-]{48}", "tk-us-" + _F * 6),
    RedactionRule("pulumi-token", r"pul-[a-f0-9]{40}", "pul-" + (FAKE_HEX * 3)[:40]),
    RedactionRule("infracost-token", r"ico-[A-Za-z0-9]{32}", "ico-" + _F * 4),
    RedactionRule("openshift-token", r"sha256~[\w-]{43}", "sha256~" + _F * 5 + "FAK"),
    RedactionRule("yandex-key", r"t1\.[A-Za-z0-9_-]{8,512}={0,2}\.[A-Za-z0-9_-]{86}={0,2}|AQVN[A-Za-z0-9_-]{35,38}|YC[A-Za-z0-9_-]{38}" + _END, "AQVN" + _F * 4 + "FAK"),
    # -- AI model providers
    RedactionRule(
        "anthropic-key",
        r"sk-ant-[A-Za-z0-9_-]{20,250}",
        "sk-ant-api03-FAKEexampleKEY000000000000000000000000000000-FAKEAA",
    ),
    RedactionRule(
        "openai-key",
        r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}|[A-Za-z0-9]{32,250})",
        "sk-proj-FAKEexample0000KEY0000fakeT3BlbkFJFAKE0000example",
    ),
    RedactionRule("huggingface-token", r"(?:hf_|api_org_)[A-Za-z]{34}" + _END, "hf_FAKEexampleTokenFAKEexampleTokenAb"),
    RedactionRule("perplexity-key", r"pplx-[A-Za-z0-9]{48}", "pplx-" + _F * 6),
    RedactionRule("groq-key", r"gsk_[A-Za-z0-9]{52}", "gsk_" + _F * 6 + "FAKE"),
    RedactionRule("xai-key", r"xai-[A-Za-z0-9]{80}", "xai-" + _F * 10),
    RedactionRule("replicate-token", r"r8_[A-Za-z0-9]{37}", "r8_" + _F * 4 + "FAKEE"),
    # -- source hosting, packages and CI
    RedactionRule(
        "github-fine-grained",
        r"github_pat_[A-Za-z0-9_]{40,255}",
        "github_pat_11FAKE0000000000000000_FAKEexampleFineGrainedToken00000000000000000000000000000000",
    ),
    RedactionRule(
        "github-token",
        r"gh[pousr]_[A-Za-z0-9]{36,251}",
        "ghp_FAKE0123456789abcdefghijklmnopqrstuv",
    ),
    RedactionRule(
        "gitlab-token",
        r"(?:glpat|gldt|glft|glrt|glsoat|glffct|glimt|glagent|gloas|glptt)-[0-9A-Za-z_.-]{20,300}"
        r"|glcbt-[0-9A-Za-z]{1,5}_[0-9A-Za-z_-]{20}|_gitlab_session=[0-9a-z]{32}",
        "glpat-FAKE-example-01234567",
    ),
    RedactionRule("gitlab-runner-token", r"GR1348941[\w-]{20}", "GR1348941" + _F * 2 + "FAKE"),
    RedactionRule("atlassian-token", r"ATATT3[A-Za-z0-9_=-]{100,300}", "ATATT3xFfGF0" + _F * 24),
    RedactionRule("bitbucket-token", r"ATBB[A-Za-z0-9_=.-]{28,64}", "ATBB" + _F * 4),
    RedactionRule(
        "sourcegraph-token", r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}", "sgp_local_" + (FAKE_HEX * 3)[:40]
    ),
    RedactionRule("artifactory-token", rf"{_NW}(?:AKCp[A-Za-z0-9]{{69}}|cmVmd[A-Za-z0-9]{{59}}){_END}", "AKCp" + _F * 8 + "FAKEE"),
    RedactionRule("npm-token", r"npm_[A-Za-z0-9]{36}", "npm_FAKEexample0000000000000000000000000"),
    RedactionRule(
        "pypi-token",
        r"pypi-AgE[A-Za-z0-9_-]{50,1000}",
        "pypi-AgEIcHlwaS5vcmcCJDUyOTJjYTdkLWZBS0UtNDFBS0UtODAwMC1GQUtFRkFLRUZBS0UAAiFAKE",
    ),
    RedactionRule("rubygems-token", r"rubygems_[a-f0-9]{48}", "rubygems_" + FAKE_HEX * 3),
    RedactionRule("clojars-token", r"(?i)clojars_[a-z0-9]{60}", "CLOJARS_" + _F * 7 + "FAKE"),
    RedactionRule("docker-token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,64}", "dckr_pat_" + _F * 3 + "FAK"),
    RedactionRule(
        "nuget-password",
        r"(?i)<add key=\"(?:cleartext)?password\"\s{0,8}value=\"(?P<secret>[^\"\x00-\x1f]{1,256})\"",
        '<add key="ClearTextPassword" value="FAKEpassw0rd" />',
    ),
    RedactionRule("sonar-token", rf"{_NW}sq[apu]_[a-f0-9]{{40}}", "squ_" + (FAKE_HEX * 3)[:40]),
    RedactionRule("readme-token", r"rdme_[a-z0-9]{70}", "rdme_" + (FAKE_HEX * 5)[:70]),
    RedactionRule("postman-token", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "PMAK-" + FAKE_HEX[:8] * 3 + "-" + (FAKE_HEX * 3)[:34]),
    RedactionRule("circleci-token", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}", "CCIPAT_" + _F * 2 + "FAKEEX_" + (FAKE_HEX * 3)[:40]),
    RedactionRule("buildkite-token", r"bkua_[a-f0-9]{40}", "bkua_" + (FAKE_HEX * 3)[:40]),
    RedactionRule("octopus-deploy-key", rf"{_NW}API-[A-Z0-9]{{26}}{_END}", "API-FAKE0000EXAMPLE00000000000"),
    RedactionRule("harness-token", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", "pat." + _F * 2 + "FAKEEX." + _F * 3 + "." + _F * 2 + "FAKE"),
    RedactionRule("prefect-token", r"pnu_[A-Za-z0-9]{36}", "pnu_" + _F * 4 + "FAKE"),
    RedactionRule("linear-key", r"lin_api_[A-Za-z0-9]{40}", "lin_api_" + _F * 5),
    RedactionRule("figma-token", r"figd_[A-Za-z0-9_-]{40}", "figd_" + _F * 5),
    RedactionRule("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "patFAKEexample000." + FAKE_HEX * 4),
    RedactionRule("adobe-client-secret", rf"{_NW}p8e-[A-Za-z0-9]{{32}}", "p8e-" + _F * 4),
    RedactionRule(
        "authress-key",
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
        "authress_FAKEexample.FAKE.acc_FAKE000000." + _F * 4,
    ),
    RedactionRule("dynatrace-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01." + _F * 3 + "." + _F * 8),
    RedactionRule("defined-networking-token", r"dnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}", "dnkey-" + "fake" * 6 + "00-" + "fake" * 13),
    RedactionRule("settlemint-token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}", "sm_pat_" + _F * 2),
    # -- chat and mail
    RedactionRule(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+]{20,200})",
        "https://hooks.slack.com/services/T00000000/B00000000/FAKEFAKEFAKEFAKEFAKEFAKE",
    ),
    RedactionRule(
        "slack-token",
        r"xox(?:[abposre]|e\.xox[bp])-[0-9A-Za-z][A-Za-z0-9-]{8,250}|xapp-[0-9]-[A-Z0-9]{1,64}-[0-9]{1,32}-[a-z0-9]{1,128}",
        "xoxb-0000000000-0000000000000-FAKEfakeFAKEfakeFAKEfake",
    ),
    RedactionRule(
        "teams-webhook",
        r"webhook\.office\.com/webhookb2/(?P<secret>[A-Za-z0-9@/-]{40,400})",
        "https://example.webhook.office.com/webhookb2/FAKE0000-0000-0000-0000-000000000000@FAKE/IncomingWebhook/FAKE",
    ),
    RedactionRule(
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<secret>[0-9]{17,20}/[A-Za-z0-9_-]{60,68})",
        "https://discord.com/api/webhooks/123456789012345678/" + _F * 8,
    ),
    RedactionRule("telegram-bot-token", r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_-]{34}" + _END, "123456789:AAFAKE" + _F * 3 + "FAKEE"),
    RedactionRule(
        # Exactly 22 A's start it; not inside a run of base64 (zero bytes encode as A's).
        "twitter-bearer-token", r"(?<![A-Za-ln-z0-9_+/])" + "A" * 22 + r"(?!A)[A-Za-z0-9%]{80,100}" + _END, "A" * 22 + _F * 10
    ),
    RedactionRule("sendgrid-key", r"SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}", "SG.FAKEexample00000000FA." + _F * 5 + "FAK"),
    RedactionRule("sendinblue-key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-" + FAKE_HEX * 4 + "-" + _F * 2),
    RedactionRule("mailgun-key", rf"{_NW}(?:pub)?key-[a-f0-9]{{32}}{_END}", "key-" + FAKE_HEX * 2),
    RedactionRule("mailchimp-key", r"(?<![A-Za-ln-z0-9])[a-f0-9]{32}-us[0-9]{1,2}" + _END, FAKE_HEX * 2 + "-us12"),
    RedactionRule("mapbox-token", r"(?:sk|pk|tk)\.eyJ1Ijoi[A-Za-z0-9_-]{10,400}\.[A-Za-z0-9_-]{20,100}", "sk.eyJ1IjoiFAKE" + _F * 2 + "." + _F * 3),
    RedactionRule("typeform-token", r"tfp_[A-Za-z0-9_.=-]{59}", "tfp_" + _F * 7 + "FAK"),
    RedactionRule("frameio-token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-" + _F * 8),
    RedactionRule("dropbox-token", r"sl\.(?:u\.)?[A-Za-z0-9_=-]{130,1400}", "sl." + _F * 17),
    RedactionRule("intra42-secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", "s-s4t2ud-" + FAKE_HEX * 4),
    RedactionRule("hubspot-token", r"pat-(?:na|eu)[0-9]-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}", "pat-na1-01234567-89ab-cdef-0123-456789abcdef"),
    RedactionRule("notion-token", r"ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}" + _END, "ntn_01234567890" + _F * 4 + "FAK"),
    # -- payments
    RedactionRule(
        "stripe-key", r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9]{32,64}", "sk_live_51FAKEexampleKEY0000000000"
    ),
    RedactionRule("square-token", r"(?:EAAA|sq0atp-|sq0csp-)[\w-]{22,60}", "EAAA" + _F * 4),
    RedactionRule("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shpat_" + FAKE_HEX * 2),
    RedactionRule("flutterwave-key", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?", "FLWSECK_TEST-" + FAKE_HEX * 2 + "-X"),
    RedactionRule("duffel-token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_test_" + _F * 5 + "FAK"),
    RedactionRule("easypost-key", r"EZ[AT]K[A-Za-z0-9]{54}", "EZAK" + _F * 6 + "FAKEEX"),
    RedactionRule("shippo-token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_test_" + (FAKE_HEX * 3)[:40]),
    RedactionRule(
        "plaid-token", r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "access-sandbox-01234567-89ab-cdef-0123-456789abcdef",
    ),
    RedactionRule("razorpay-key", r"rzp_(?:live|test)_[A-Za-z0-9]{14}", "rzp_test_FAKEexample0000"),
    RedactionRule("braintree-token", r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}", "access_token$production$fake0000example0$" + FAKE_HEX * 2),
    RedactionRule("facebook-token", r"EAA[MC][A-Za-z0-9]{100,1024}", "EAAC" + _F * 13),
    RedactionRule("facebook-app-token", r"(?<![0-9])[0-9]{15,16}[|%][0-9A-Za-z_-]{27,40}" + _END, "123456789012345|" + _F * 4),
    RedactionRule("lob-key", rf"{_NW}(?:live|test)_(?:pub_[a-f0-9]{{31}}|[a-f0-9]{{35}}){_END}", "test_" + (FAKE_HEX * 3)[:35]),
    RedactionRule("gocardless-token", rf"{_NW}live_[A-Za-z0-9_=-]{{40}}{_END}", "live_" + _F * 5),
    # -- databases and secret managers
    RedactionRule("planetscale-token", r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}", "pscale_tkn_" + _F * 4),
    RedactionRule("clickhouse-key", rf"{_NW}4b1d[A-Za-z0-9]{{38}}{_END}", "4b1d" + _F * 4 + "FAKEEX"),
    RedactionRule("databricks-token", rf"{_NW}dapi[a-f0-9]{{32}}(?:-[0-9])?", "dapi" + FAKE_HEX * 2),
    RedactionRule("supabase-key", r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{31,64}", "sb_secret_" + _F * 4),
    RedactionRule("vault-token", r"hvs\.[\w-]{90,120}|hvb\.[\w-]{138,300}|(?<![\w.-])s\.(?=[A-Za-z]{0,23}[0-9])[A-Za-z0-9]{24}" + _END, "hvs." + _F * 12),
    RedactionRule("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", "dp.pt." + _F * 5 + "FAK"),
    RedactionRule(
        "1password-token",
        r"ops_eyJ[A-Za-z0-9+/]{250,4096}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        "A3-FAKE00-FAKEEXAMPLE-FAKE0-FAKE1-FAKE2",
    ),
    RedactionRule("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "AGE-SECRET-KEY-1" + "FAKE" * 14 + "QQ"),
    RedactionRule("sidekiq-secret", r"BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM[ \t]{0,5}[:=][ \t]{0,5}[\"']?(?P<secret>[a-f0-9]{8}:[a-f0-9]{8})", "BUNDLE_GEMS__CONTRIBSYS__COM=01234567:89abcdef"),
    # -- monitoring
    RedactionRule("grafana-token", r"glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "glsa_" + _F * 4 + "_0123abcd"),
    RedactionRule("grafana-api-key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", "eyJrIjoi" + _F * 9),
    RedactionRule("new-relic-key", r"NR(?:AK|II|JS|AA)-[A-Za-z0-9-]{19,40}", "NRAK-FAKE0000EXAMPLE0000FAKE000"),
    RedactionRule("sentry-token", r"sntryu_[a-f0-9]{64}|sntrys_eyJpYXQiO[A-Za-z0-9+/=_]{50,600}", "sntryu_" + FAKE_HEX * 4),
    RedactionRule("twilio-key", rf"{_NW}SK[0-9a-fA-F]{{32}}{_END}", "SK" + FAKE_HEX * 2),
    # -- tokens of any issuer
    RedactionRule(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,1024}\.eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8,1024}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsignatureFAKEsignature00",
    ),
    RedactionRule("jwt-base64", r"ZXlK(?:aGJHY2lPaU|MGVYQWlPaU)[A-Za-z0-9+/]{20,4096}={0,2}", "ZXlKaGJHY2lPaU" + "FAKE" * 8),
    RedactionRule(
        "url-password",
        # From "://", so the scheme before it is kept; only the password is replaced.
        r"://[^\s:@/?#\[\]\"'<>\x00-\x1f\x7f]{1,128}:(?P<secret>[^\s@/\"'<>\x00-\x1f\x7f]{1,256})@",
        "postgres://app:FAKEpassw0rd@db.example.com:5432/app",
    ),
    RedactionRule(
        "basic-auth",
        r"(?i)authorization:[ \t]{0,5}basic[ \t]{1,5}(?P<secret>[A-Za-z0-9+/]{8,1024}={0,3})",
        "Authorization: Basic FAKEdXNlcjpwYXNzd29yZA==",
    ),
    RedactionRule(
        "bearer-token",
        r"(?i)bearer[ \t]+(?=[A-Za-z0-9._~+/-]{0,2048}[0-9])(?P<secret>[A-Za-z0-9._~+/-]{20,2048}={0,2})",
        "Authorization: Bearer FAKEopaqueToken0000000000",
    ),
    RedactionRule(
        "curl-user",
        r"(?<![\w-])(?:-u|--user)(?:[ \t]{1,5}|=)[\"']?(?P<secret>[^\s\"':]{1,128}:[^\s\"']{1,256})",
        "curl -u admin:FAKEpassw0rd https://api.example.com",
    ),
    RedactionRule("api-key", _keyword(r"api[_-]?key"), 'api_key = "FAKE-api-key-0000"'),
    RedactionRule("token", _keyword("token"), "GITHUB_TOKEN=FAKEtoken123"),
    RedactionRule(
        "secret", _keyword(r"secret(?:[_-]?(?:access[_-]?)?key)?"), "client_secret: FAKEs3cr3tValue"
    ),
    RedactionRule("password", _keyword(r"pass(?:word|wd|phrase)?"), "password='FAKE hunter2'"),
    RedactionRule(
        # Any other credential-named assignment whose value looks random: 16+ characters with
        # letters and digits and at least 3.5 bits of entropy per character (as gitleaks'
        # generic rule), so that `key_path = ...` or `access = read-only` stay as they are.
        "generic-secret",
        rf"(?i)(?:key|auth|credential|creds|access|private)[\w.-]{{0,20}}{_SEP}"
        r"(?P<secret>(?![./~])(?=[A-Za-z_.+/=~-]{0,256}[0-9])(?=[0-9_.+/=~-]{0,256}[A-Za-z])[A-Za-z0-9_.+/=~-]{16,256})"
        r"(?![A-Za-z0-9_.+/=~-])",
        "ADAFRUIT_IO_KEY=FAKE8f3kQ9zX1vB7nM2pL5wR",
        min_entropy=3.5,
    ),
)
"""The built-in rules, highest priority first (it names overlapping matches)."""


class Redactor:
    """Replace secrets in text with ``[REDACTED:<name>]``.

    Rules earlier in ``rules`` win where two matches overlap; overlapping matches are
    replaced together, so no part of either survives. A secret that an ``allowlist``
    regex matches in full is left alone. Safe to share between threads.
    """

    def __init__(self, rules: Iterable[RedactionRule] = RULES, allowlist: Iterable[str] = ()) -> None:
        """Keep the rules; nothing is compiled until the first text arrives."""
        self._rules = tuple(rules)
        self._allowlist = tuple(allowlist)
        self._engine: _Engine | None = None
        self._specific: _Engine | None = None  # the rules with starting literals
        self._lock = threading.Lock()  # the writer and metadata threads compile it only once

    @property
    def rules(self) -> tuple[RedactionRule, ...]:
        """Return the rules, highest priority first."""
        return self._rules

    def redact(self, text: str) -> str:
        """Return ``text`` with every secret replaced.

        A private key's BEGIN line without its END line redacts the key-shaped text
        after it (up to 16 KiB); a block whose END is followed by more key-shaped text and
        another END (two copies interleaved) is redacted up to that second END.
        """
        if not text:
            return text
        engine = self._compiled()
        if not engine.rules:
            return text
        hits = engine.hits(text)
        if _has_screen_controls(text):
            hits += engine.screen_hits(text)
        return engine.apply(text, hits, 0, len(text)) if hits else text

    def _compiled(self) -> _Engine:
        """Return the compiled rules, compiling them on first use."""
        engine = self._engine
        if engine is None:
            with self._lock:
                engine = self._engine
                if engine is None:
                    engine = self._engine = _Engine(self._rules, self._allowlist)
        return engine

    def _compiled_specific(self) -> _Engine:
        """Return the engine of the rules with a starting literal (a token format: ``ghp_``,
        ``AKIA``, ``-----BEGIN``; a keyword: ``password``), built on first use."""
        engine = self._specific
        if engine is None:
            full = self._compiled()
            with self._lock:
                engine = self._specific
                if engine is None:
                    keep = [rule for rule, r in zip(self._rules, full.rules) if r.literals]
                    engine = self._specific = _Engine(tuple(keep), self._allowlist)
        return engine


class StreamRedactor:
    """Redact a stream of text that arrives in pieces (one per capture read).

    ``feed`` returns the part of everything fed so far that is safe to write now; it holds
    back the tail from the earliest position where a secret could still be arriving
    (usually nothing), for as long as it could: no clock releases it, so a secret typed or
    printed in two parts minutes apart is still caught whole. ``flush`` returns the held
    tail, redacted as it stands: call it at the end of the stream only.

    ``release`` is the output stream's clock (the writer calls it once output has been quiet
    for a second): it writes the held tail, redacted as it stands, unless a rule with a
    starting literal (a token format: ``ghp_``, ``AKIA``, ``sk-ant-``, ``-----BEGIN``; or a
    keyword: ``password``, ``token``) has seen that literal whole and could still be
    matching, or the tail is a quoted value its closing quote would make a secret. So a plain
    last word held only by the rules without a starting literal (``deploy``: the Terraform
    token's 14 characters before ``.atlasv1.``; ``vim``: an Azure secret's 3 before a digit
    and ``Q~``), a literal cut short (``s`` of ``s.``, ``gh`` of ``ghp_``) or an unfinished
    escape sequence is written; ``ghp_`` and half a token, or ``Password: ``, stays held. The
    released text stays as context: a match that begins in it and goes on in later text
    still has its later part replaced by the marker.

    The hold is bounded: a rule whose matches have no length bound holds at most 4 KiB
    (``_HOLD_UNBOUNDED``), and no hold exceeds ``_HOLD_MAX``. A possible secret still
    growing at the bound becomes its rule's marker rather than clear text, and the text that
    goes on continuing it (checked with the rule's prefix regex from its first 1 KiB) is
    swallowed into that marker until it stops.

    On a screen stream, a secret a line editor draws across the right margin (readline and
    zle write the last column's character, then `` \r`` for a terminal that delays the wrap,
    xterm's ``xenl``) is cut there for the rules; its part on the next row is blanked with
    spaces (its columns kept) when the written text ends with a marker and `` \r``, up to the
    first character no token holds (``_WRAPPED_TAIL``), so no piece of it is left in clear.
    Not thread-safe: one instance per stream, used by one thread.
    """

    def __init__(self, redactor: Redactor, *, keep_columns: bool = False) -> None:
        """Redact with ``redactor``'s rules.

        keep_columns: for a stream drawn on a screen (output): a one-line secret's marker
        takes the secret's width, padded with spaces or followed by a cursor-back, so the
        screen rebuilt from the recording keeps its columns. Not for typed input.
        """
        self._redactor = redactor
        self._keep_columns = keep_columns
        self._held = ""
        self._context = ""
        self._released = 0  # characters at the end of _context written by release(): a match may begin there
        self._open: tuple[_Rule, str] | None = None  # (rule, first chars) of a secret cut at the bound
        self._wrapped = False  # the written text ended with a marker drawn up to a soft wrap
        self._last_written = ""  # the end of what was written (screen streams), for a marker cut from its wrap

    @property
    def held(self) -> int:
        """Return the number of characters held back."""
        return len(self._held)

    def feed(self, text: str) -> str:
        """Add ``text`` to the stream; return the redacted text that is safe to write now."""
        return self._blank_wrapped(self._feed(text))

    def _blank_wrapped(self, written: str) -> str:
        """Blank what continues a secret past a soft wrap in ``written`` (see the class)."""
        if not self._keep_columns or not written:
            return written
        lead = self._last_written
        if not self._wrapped and " \r" not in written and not (written[0] == "\r" and lead.endswith(" ")):
            # The common case: no soft wrap. Keep the end of what was written, cheaply.
            self._last_written = written[-_LAST_WRITTEN:] if len(written) >= _LAST_WRITTEN else (lead + written)[-_LAST_WRITTEN:]
            return written
        buf = lead + written
        out: list[str] = []
        pos = len(lead)
        while True:
            if not self._wrapped:
                found = next((m for m in _marker_at_wrap_rx().finditer(buf, max(0, pos - _LAST_WRITTEN)) if m.end() > pos), None)
                if found is None:
                    out.append(buf[pos:])
                    break
                out.append(buf[pos : found.end()])
                pos = found.end()
            # At the start of a row that continues a secret: blank its characters.
            tail = _wrapped_tail_rx().match(buf, pos)
            end = tail.end() if tail is not None else pos
            out.append(" " * (end - pos))
            pos = end
            self._wrapped = True
            if pos == len(buf):
                break  # it may go on in the next text
            if buf.startswith(" \r", pos):  # wrapped once more
                out.append(" \r")
                pos += 2
                continue
            self._wrapped = False
        result = "".join(out)
        self._last_written = (lead + result)[-_LAST_WRITTEN:]
        return result

    def _feed(self, text: str) -> str:
        engine = self._redactor._compiled()
        if not engine.rules:
            return text
        if self._open is not None:
            text = self._swallow(engine, text)
            if self._open is not None or not text:
                return ""
        # The last characters already written stay as context (never written again), so a
        # lookbehind or a \b at the start of a match sees what the whole text would show.
        base = len(self._context)
        lo = base - self._released  # a match may begin in text written by release()
        buf = self._context + self._held + text
        if len(buf) == base:
            return ""
        hits = [h for h in engine.hits(buf) if h[2] >= lo and h[3] > base]
        cut = engine.hold_start(buf, lo)
        if _has_screen_controls(buf):  # a secret may be drawn with escape sequences or backspaces inside
            hits += [h for h in engine.screen_hits(buf, lo) if h[3] > base]
            cut = min(cut, engine.screen_hold_start(buf, lo))
        if hits and cut < len(buf):
            cut = _settle(cut, hits)
        if cut < base:  # what release() wrote may still be growing into a secret: hold all that is new
            self._held = buf[base:]
            return ""
        # At the bound: a possible secret that would still grow past it is written as its marker.
        starts = [base] if self._held and cut > base else []
        if hits:
            starts += sorted(h[2] for h in hits if h[3] == len(buf) and h[2] < cut)  # a match up to the end
        for start in starts:
            rule = engine.still_growing(buf, start)
            if rule is not None:
                return self._cut_off(engine, buf, base, hits, start, rule)
        if len(buf) - cut > _HOLD_MAX:
            return self._cut_off(engine, buf, base, hits, cut, engine.still_growing(buf, cut) or engine.rules[0])
        return self._advance(engine, buf, base, hits, cut)

    def flush(self) -> str:
        """Return the held tail, redacted as it stands, and hold nothing."""
        return self._blank_wrapped(self._flush())

    def _flush(self) -> str:
        engine = self._redactor._compiled()
        self._open = None
        if not self._held or not engine.rules:
            held, self._held = self._held, ""
            return held
        base = len(self._context)
        buf = self._context + self._held
        return self._advance(engine, buf, base, self._hits_at_end(engine, buf, base), len(buf))

    def release(self) -> str:
        """After a quiet spell on an output stream: return the held tail, redacted as it
        stands, unless a token format's literal has been seen whole and its match could still
        be growing (then return "" and go on holding). See the class docstring."""
        return self._blank_wrapped(self._release())

    def _release(self) -> str:
        engine = self._redactor._compiled()
        if not self._held or self._open is not None or not engine.rules:
            return ""
        base = len(self._context)
        lo = base - self._released
        buf = self._context + self._held
        n = len(buf)
        specific = self._redactor._compiled_specific()
        if specific.rules:
            cut = specific.hold_start(buf, lo, partials=False)
            if _has_screen_controls(buf):
                cut = min(cut, specific.screen_hold_start(buf, lo, escapes=False, partials=False))
            if cut < n:
                return ""
        hits = self._hits_at_end(engine, buf, base)
        if self._unclosed_quote(engine, buf, lo, hits):
            return ""
        # Where a match may still be growing from: it stays context, for the text that follows.
        start = engine.hold_start(buf, max(lo, n - _HOLD_MAX))
        if _has_screen_controls(buf):
            start = min(start, engine.screen_hold_start(buf, max(lo, n - _HOLD_MAX)))
        written = engine.apply(buf, hits, base, n, keep_columns=self._keep_columns) if hits else buf[base:]
        self._held = ""
        self._released = n - start
        self._context = buf[max(0, start - engine.context_chars) :]
        return written

    @staticmethod
    def _unclosed_quote(engine: _Engine, buf: str, lo: int, hits: list[_Hit]) -> bool:
        """Return whether the end of ``buf`` is a quoted value its closing quote would make a
        secret (``password="hunter2``): as it stands no rule matches it, so it must stay held."""
        n = len(buf)
        if '"' not in buf and "'" not in buf:
            return False
        for quote in "\"'":
            for h in engine.hits(buf + quote):
                if h[2] >= lo and h[0] < n <= h[1] and not any(k[0] <= h[0] and k[1] >= n for k in hits):
                    return True
        return False

    def _hits_at_end(self, engine: _Engine, buf: str, base: int) -> list[_Hit]:
        """Return the matches in ``buf`` that end after ``base`` and begin after the context
        (or in text written by ``release``)."""
        lo = base - self._released
        hits = [h for h in engine.hits(buf) if h[2] >= lo and h[3] > base]
        if _has_screen_controls(buf):
            hits += [h for h in engine.screen_hits(buf, lo) if h[3] > base]
        return hits

    def _advance(self, engine: _Engine, buf: str, base: int, hits: list[_Hit], cut: int) -> str:
        """Write ``buf[base:cut]``, hold the rest and keep the context; return what is written."""
        self._held = buf[cut:]
        self._released = 0
        self._context = buf[max(0, cut - engine.context_chars) : cut]
        return engine.apply(buf, hits, base, cut, keep_columns=self._keep_columns) if hits else buf[base:cut]

    def _cut_off(self, engine: _Engine, buf: str, base: int, hits: list[_Hit], start: int, rule: _Rule) -> str:
        """Write ``buf[base:start]``, then ``rule``'s marker for all of ``buf[start:]``."""
        start = max(start, base)
        written = engine.apply(buf, hits, base, start, keep_columns=self._keep_columns) if hits else buf[base:start]
        self._held = ""
        self._released = 0
        self._context = buf[-engine.context_chars :]
        if rule.prefix is not None and rule.prefix.get() is not None:
            self._open = (rule, buf[start : start + _OPEN_ANCHOR])
        return written + MARKER.format(name=rule.name)

    def _swallow(self, engine: _Engine, text: str) -> str:
        """Drop the start of ``text`` that still continues the secret cut off at the bound;
        return the rest (the secret has ended when it is not empty)."""
        assert self._open is not None
        rule, anchor = self._open
        prefix = rule.prefix.get() if rule.prefix is not None else None
        assert prefix is not None
        joined = anchor + text
        if prefix.fullmatch(joined) is not None:
            self._context = joined[-engine.context_chars :]
            return ""
        # Every prefix of a prefix is a prefix: find the longest one by bisection.
        lo, hi = len(anchor), len(joined)  # fullmatch holds at lo, fails at hi
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if prefix.fullmatch(joined, 0, mid) is not None:
                lo = mid
            else:
                hi = mid
        self._open = None
        self._context = joined[max(0, lo - engine.context_chars) : lo]
        return joined[lo:]


_OPEN_ANCHOR = 1024
"""Characters of a secret cut off at the bound kept to check that later text continues it."""

_LAST_WRITTEN = 512
"""Characters of written text kept to see a marker and its padding before a later `` \r``."""

_WRAPPED_TAIL = r"[A-Za-z0-9_+/=.~-]*"
"""The characters a secret's part past a soft wrap may hold (those of token formats)."""


@functools.cache
def _wrapped_tail_rx() -> re.Pattern[str]:
    return re.compile(_WRAPPED_TAIL)


@functools.cache
def _marker_at_wrap_rx() -> re.Pattern[str]:
    """A marker, its padding, then a soft wrap's `` \r``."""
    return re.compile(re.escape(MARKER_PREFIX) + r"[^\]\s]*\] * \r")
"""Characters of a secret cut off at the bound kept to check that later text continues it."""


@functools.cache
def _builtin_redactor() -> Redactor:
    return Redactor()


def default_stream_redactor(screen: bool = False) -> StreamRedactor:
    """Return a new StreamRedactor with the built-in rules only (compiled once, shared).

    screen: the stream is drawn on a screen (output): markers keep the secrets' columns.
    Prefer ``StreamRedactor(build_redactor(config.redact))``, which adds the user's
    patterns and allowlist.
    """
    return StreamRedactor(_builtin_redactor(), keep_columns=screen)


@functools.lru_cache(maxsize=8)
def redactor_for(config: RedactConfig | None) -> Redactor:
    """Return the Redactor of ``config`` (None: the built-in rules), one per config and process.

    Shared so its rules compile once: the writer thread, the metadata of a run and the
    conversation stored at its end all redact with the same object.
    """
    return _builtin_redactor() if config is None else build_redactor(config)


def build_redactor(config: RedactConfig) -> Redactor:
    """Return the Redactor for the ``[redact]`` settings.

    The user's patterns come first, then ``RULES``; with ``enabled = false`` it has no
    rules and returns text unchanged.
    """
    if not config.enabled:
        return Redactor(rules=(), allowlist=())
    user = tuple(RedactionRule(p.name, p.pattern) for p in config.patterns)
    return Redactor(rules=user + RULES, allowlist=config.allowlist)


# --------------------------------------------------------------------------- engine

# A hit is (secret_start, secret_end, match_start, match_end, priority, name).
_Hit = tuple[int, int, int, int, int, str]


def _settle(cut: int, hits: list[_Hit]) -> int:
    """Move ``cut`` back before every match that crosses it."""
    moved = True
    while moved:
        moved = False
        for hit in hits:
            if hit[2] < cut < hit[3]:
                cut = hit[2]
                moved = True
    return cut


@dataclass(frozen=True, slots=True)
class _Rule:
    """One compiled rule and what the engine derived from its regex."""

    name: str
    priority: int
    rx: _LazyPattern  # the rule's regex, compiled on first use
    ci: bool
    literals: tuple[str, ...]  # every match starts with one of these (lower-cased if ci)
    find_literals: bool  # scan by finding literals rather than with rx.finditer
    prefix: _LazyPattern | None  # fullmatch(text, pos): text[pos:] may begin a match
    prefix_search: _LazyPattern | None  # the same, ending in \Z, for search()
    window: int  # the longest a match can be: a hold never starts further back
    unbounded: bool  # matches can be longer than the window (cut off at the bound with a marker)
    secret: int  # group number of "secret", or 0 for the whole match
    required: tuple[frozenset[str], ...]  # text without a char of each set cannot match
    lookbehind: int  # the most characters a lookbehind looks back
    spaceless: bool = False  # no match holds whitespace: a hold starts after the last one
    needle: str = ""  # a literal inside every match, for a rule without starting literals
    min_entropy: float = 0.0  # Shannon bits per character a secret needs
    scan_literals: tuple[str, ...] = ()  # the starts of ``literals`` spelt out (case-sensitive scan)


class _Engine:
    """The compiled form of a Redactor's rules and allowlist."""

    def __init__(self, rules: tuple[RedactionRule, ...], allowlist: tuple[str, ...]) -> None:
        self.rules = tuple(_compile_rule(rule, i) for i, rule in enumerate(rules))
        self._allow = tuple(re.compile(entry) for entry in allowlist)
        self._any_ci = any(r.ci for r in self.rules)
        self._ci_window = max((r.window for r in self.rules if r.ci), default=0)
        self.context_chars = max((r.lookbehind for r in self.rules), default=0) + 1
        partial_cs: set[str] = set()
        partial_ci: set[str] = set()
        for r in self.rules:
            # A case-sensitive rule's starts spelt out too (``dop_`` of ``do[opr]_v1_``, whose
            # literal is ``do``): a text without any of them whole is quiet, and its tail may be
            # one cut short.
            for lit in (*r.literals, *r.scan_literals) if not r.ci else r.literals:
                (partial_ci if r.ci else partial_cs).update(lit[:k] for k in range(1, len(lit)))
        self._partial_cs = frozenset(partial_cs)
        self._partial_ci = frozenset(partial_ci)
        self._max_partial = max(map(len, partial_cs | partial_ci), default=0)
        self._max_literal = max((len(lit) for r in self.rules for lit in r.literals), default=0)
        self._partial_last = frozenset(p[-1] for p in partial_cs) | frozenset(
            ch for p in partial_ci for ch in (p[-1], p[-1].upper())
        )
        # The same partials as tries of their characters read backwards (a key "" marks a whole
        # partial), walked from the end of an ASCII text: a few steps instead of a set lookup
        # per length up to the longest partial (43 characters for the built-in rules).
        self._partial_tries = (_reversed_trie(partial_cs), _reversed_trie(partial_ci))
        # Rules without a starting literal: a text rules one out when it lacks its inner literal
        # or one of its required characters (as ``hits`` checks); a rule with neither keeps
        # every text from being quiet.
        self._literalless = tuple(r for r in self.rules if not r.literals)
        self._can_be_quiet = all(r.needle or r.required for r in self._literalless)
        self._last_quiet: tuple[str, bool] = ("", True)  # the last text _quiet judged (feed asks twice)
        self._required_union = frozenset(ch for r in self.rules for chars in r.required for ch in chars)
        # The rules by the characters they require, so each requirement is checked once a text:
        # (required, case-sensitive rules with literals, the others).
        grouped: dict[tuple[frozenset[str], ...], tuple[list[_Rule], list[_Rule]]] = {}
        for r in self.rules:
            literal_rules, others = grouped.setdefault(r.required, ([], []))
            (literal_rules if r.literals and not r.ci else others).append(r)
        self._by_required = tuple((req, tuple(lr), tuple(o)) for req, (lr, o) in grouped.items())
        # Rules without whitespace in any match and with case-sensitive starting literals (most
        # token formats): their holds are found in one search of the text after its last
        # whitespace, not a loop over the rules.
        self._unbounded = tuple(r for r in self.rules if r.unbounded and r.prefix is not None)  # for still_growing
        self._word_rules = tuple(r for r in self.rules if r.spaceless and r.literals and not r.ci and r.prefix is not None)
        word_literals: dict[str, list[_Rule]] = {}
        for r in self._word_rules:
            for lit in r.literals:
                word_literals.setdefault(lit, []).append(r)
        self._word_literals = word_literals
        self._word_finder = (  # compiled on first use (~100 literals: a few ms)
            _LazyPattern("(?=(" + "|".join(map(re.escape, sorted(word_literals, key=len, reverse=True))) + "))")
            if word_literals else None
        )
        word_priorities = {r.priority for r in self._word_rules}
        self._other_rules = tuple(r for r in self.rules if r.priority not in word_priorities)
        ci = sorted({lit for r in self.rules if r.ci for lit in r.literals}, key=len, reverse=True)
        # For the quiet check, one regex: the case-insensitive literals (keywords; case-sensitive
        # ones are the automaton's), then what each rule without a starting literal cannot match
        # without: its inner literal, else one of the characters of its rarest requirement.
        # For ASCII text the same in C without a regex (an alternation of case-insensitive
        # literals tries each at every position: ~5 µs for a few characters): the lower-cased
        # words found by an automaton in the lower-cased text, the other needles and characters
        # looked up with ``in``.
        witnesses = ["(?i:" + "|".join(map(re.escape, ci)) + ")"] if ci else []
        ci_words = list(ci)
        cs_needles: list[str] = []
        for r in self._literalless:
            if r.needle:
                witnesses.append(f"(?i:{re.escape(r.needle)})" if r.ci else re.escape(r.needle))
                (ci_words if r.ci else cs_needles).append(r.needle.lower() if r.ci else r.needle)
            elif r.required:
                chars = sorted(min(r.required, key=len))
                witnesses.append("[" + "".join(map(re.escape, chars)) + "]")
                cs_needles += chars
        self._quiet_witness = _LazyPattern("|".join(witnesses)) if witnesses else None
        self._ci_words = tuple(w for w in ci_words if w.isascii())
        self._ascii_quiet = len(self._ci_words) == len(ci_words)  # else only the regex is exact
        self._cs_needles = tuple(cs_needles)
        self._ci_automaton: Any = None  # built on first use
        # The holds of the rules without a starting literal, in one search when they all hold
        # no whitespace (then they start from the same place in a short last word).
        self._literalless_window = min((r.window for r in self._literalless), default=0)
        self._literalless_rx: re.Pattern[str] | None | bool = (
            False if self._literalless and all(r.spaceless for r in self._literalless) else None
        )  # False: not built yet; None: not to be had
        self._automaton: tuple[tuple[Any, Any], tuple[tuple[_Rule, ...], ...]] | None = None  # on first scan
        self._automaton_lock = threading.Lock()
        self._lookbehind = max((r.lookbehind for r in self.rules), default=0)
        self._junctions: tuple[tuple[Any, Any], tuple[tuple[int, int, Any], ...]] | None = None  # on first screen text
        self._screen_starts: frozenset[str] = frozenset()  # every start of every literal, lower-cased

    def _quiet(self, text: str) -> bool:
        """Return True when a short text holds no rule's starting literal, and each rule without
        one lacks its inner literal or a character it requires, so nothing can match in it.

        The common case of typed keys and their echo: for ASCII text two automaton passes (the
        case-sensitive literals; the lower-cased keywords and inner literals) and a few ``in``
        lookups, all in C; else the literal automaton and one regex. The last answer is kept
        (``hits`` and ``hold_start`` ask about the same text).
        """
        if len(text) > _SMALL or not self._can_be_quiet:
            return False
        last = self._last_quiet  # one tuple, read once: the engine is shared between threads
        if last[0] is text:
            return last[1]
        quiet = self._judge_quiet(text)
        self._last_quiet = (text, quiet)
        return quiet

    def _judge_quiet(self, text: str) -> bool:
        if self._literal_matches(text, overlapping=False):
            return False
        if self._ascii_quiet and text.isascii():
            if any(needle in text for needle in self._cs_needles):
                return False
            if not self._ci_words:
                return True
            automaton = self._ci_automaton
            if automaton is None:
                import ahocorasick_rs  # loaded already: the literal scan's

                automaton = self._ci_automaton = ahocorasick_rs.BytesAhoCorasick(
                    [w.encode() for w in self._ci_words], implementation=ahocorasick_rs.Implementation.DFA
                )
            return not automaton.find_matches_as_indexes(text.lower().encode("ascii"), overlapping=False)
        witness = self._quiet_witness.get() if self._quiet_witness is not None else None
        return witness is None or witness.search(text) is None

    def _literal_matches(self, text: str, *, overlapping: bool) -> list[tuple[int, int, int]]:
        """Return (literal index, start, end) of the case-sensitive literals in ``text``.

        ASCII text (an O(1) check in CPython) is scanned as bytes, where indices are the
        same: 1.5-3x faster than letting the automaton map a str's indices itself.
        """
        automata, entries = self._scan_automaton()
        if not entries:
            return []
        if text.isascii():
            return automata[0].find_matches_as_indexes(text.encode("ascii"), overlapping=overlapping)  # type: ignore[no-any-return]
        try:
            return automata[1].find_matches_as_indexes(text, overlapping=overlapping)  # type: ignore[no-any-return]
        except UnicodeEncodeError:  # a lone surrogate (bytes read with surrogateescape): '?' in its place, same indices
            safe = text.encode("utf-8", "replace").decode("utf-8")
            return automata[1].find_matches_as_indexes(safe, overlapping=overlapping)  # type: ignore[no-any-return]

    def lower(self, text: str) -> str | None:
        """Return ``text`` lower-cased, or None when that would move characters' indices."""
        low = text.lower()
        return low if len(low) == len(text) else None

    def hits(self, text: str) -> list[_Hit]:
        """Return every match of every rule in ``text`` (overlaps included).

        Case-sensitive rules with starting literals are found in one pass: a regex of the
        literals of every rule whose required characters are present (each character looked
        up once, a memchr), then each rule's own regex at the positions of its literals.
        """
        hits: list[_Hit] = []
        if self._quiet(text):
            return hits
        present = frozenset(ch for ch in self._required_union if ch in text)  # one memchr each
        scan: list[_Rule] = []  # case-sensitive rules with literals, found by the shared pass
        low: str | None = None
        lowered = False
        for required, literal_rules, others in self._by_required:
            if required and not all(present & chars for chars in required):
                continue  # a character every match of these rules needs is absent
            scan += literal_rules
            for r in others:
                if r.needle:
                    if r.ci and not lowered:
                        low, lowered = self.lower(text), True
                    if (low if r.ci and low is not None else text).find(r.needle) == -1:
                        continue  # a rule without a starting literal, and its inner literal is absent
                if r.find_literals and not lowered:
                    low, lowered = self.lower(text), True
                if r.find_literals and low is not None:
                    for lit in r.literals:
                        pos = low.find(lit)
                        while pos != -1:
                            m = r.rx.match(text, pos)
                            if m is None:
                                pos = low.find(lit, pos + 1)
                                continue
                            _add_hit(hits, r, m)
                            pos = low.find(lit, max(m.end(), pos + 1))
                else:
                    for m in r.rx.finditer(text):
                        _add_hit(hits, r, m)
        if scan:
            self._scan_literals(text, scan, hits)
        return hits

    def _scan_literals(self, text: str, rules: list[_Rule], hits: list[_Hit]) -> None:
        """Find the matches of case-sensitive ``rules`` starting at their literals.

        One pass of an Aho-Corasick automaton over the literals of every case-sensitive rule
        (overlapping matches, character indices), then each wanted rule's regex at its
        literal's positions; a rule looks at its literal again only after its last match.
        (One regex alternation of ~150 literals tries each at every position: 3 MB/s of
        base64; ``str.find`` per literal scans the text ~60 times: ~100 MB/s.)
        """
        entries = self._scan_automaton()[1]
        found = self._literal_matches(text, overlapping=True)
        wanted = {r.priority for r in rules}
        resume: dict[tuple[int, int], int] = {}
        for index, at, _end in found:
            for r in entries[index]:
                if r.priority not in wanted:
                    continue
                key = (index, r.priority)
                if at < resume.get(key, 0):
                    continue
                m = r.rx.match(text, at)
                if m is not None:
                    _add_hit(hits, r, m)
                    resume[key] = max(m.end(), at + 1)

    def _scan_automaton(self) -> tuple[tuple[Any, Any], tuple[tuple[_Rule, ...], ...]]:
        """Return the automata (for bytes, for str) of every case-sensitive literal and, per literal, its rules."""
        built = self._automaton
        if built is None:
            with self._automaton_lock:  # the writer thread and the run's metadata may both ask first
                built = self._build_automaton()
        return built

    def _build_automaton(self) -> tuple[tuple[Any, Any], tuple[tuple[_Rule, ...], ...]]:
        if self._automaton is None:
            import ahocorasick_rs  # a compiled module: loaded with the engine, on the writer thread

            by_literal: dict[str, list[_Rule]] = {}
            for r in self.rules:
                if r.literals and not r.ci:
                    for lit in r.scan_literals:
                        by_literal.setdefault(lit, []).append(r)
            literals = list(by_literal)
            dfa = ahocorasick_rs.Implementation.DFA
            automata = (
                ahocorasick_rs.BytesAhoCorasick([lit.encode() for lit in literals], implementation=dfa),
                ahocorasick_rs.AhoCorasick(literals, implementation=dfa),
            ) if literals else (None, None)
            self._automaton = (automata, tuple(tuple(by_literal[lit]) for lit in literals))
        return self._automaton

    def screen_hits(self, text: str, first: int = 0) -> list[_Hit]:
        """Return the matches that only the screen shows: on the text with its escape sequences
        removed and backspaces applied (``_ScreenView``), mapped back to ``text``'s indices, each
        with an escape sequence or backspace inside its match (the whole span is its secret's).

        The view is built only around the places where a secret could cross one: a rule's
        literal with an escape sequence or backspace after it within the rule's reach, or a
        literal cut by one (``gh`` ESC[31m ``p_``, found as ``gh`` + ESC, or as an SGR's ``m``
        + ``hp_``). Hits starting before ``first`` are left out. Text without ESC, BS or DEL
        has none (the caller checks).
        """
        hits: list[_Hit] = []
        for start, end in self._screen_regions(text, first):
            view = _ScreenView(text[start:end])
            if not view.changed:
                continue
            for vs, ve, vms, vme, priority, name in self.hits(view.text):
                ms, me = view.span(vms, vme)
                if me - ms == vme - vms:
                    continue  # nothing removed inside it: the scan of the text itself has it
                ss, se = view.span(vs, ve)
                if start + ms >= first:
                    hits.append((start + ss, start + se, start + ms, start + me, priority, name))
        return hits

    def screen_hold_start(self, text: str, first: int, *, escapes: bool = True, partials: bool = True) -> int:
        """Return where the tail that could still grow into a secret on the screen begins
        (``hold_start`` of the tail's ``_ScreenView``, mapped back; len = none).

        escapes: an escape sequence cut at the end is held whole (False: only what the text
        before it may be starting is). partials: as ``hold_start``'s.
        """
        n = len(text)
        last = max(text.rfind(ch, max(first, n - _SCREEN_TAIL)) for ch in _SCREEN_CONTROLS)
        if last == -1:
            return n
        cut_escape = _cut_escape_start(text, max(first, n - _SCREEN_TAIL))
        if cut_escape != -1:  # the rest of an escape sequence is still to come: hold it whole
            if cut_escape == first:
                return first if escapes else n
            head = text[:cut_escape]  # and what the text before it may be starting
            held = min(self.hold_start(head, first, partials=partials),
                       self.screen_hold_start(head, first, escapes=escapes, partials=partials))
            return min(cut_escape, held) if escapes else (held if held < cut_escape else n)
        run = _escapes_ending_at(text, n)
        moved = run != -1 and any(m.group()[-1] not in "mK" for m in _escape_rx().finditer(text, run))
        # A possible secret crossing the last ESC/BS/DEL starts at most a window before it.
        start = max(first, last - _SCREEN_BACK)
        view = _ScreenView(text[start:])
        cut = self.hold_start(view.text, 0, partials=partials)
        if 0 < len(view.text) - view.rewritable <= _REWRITE:  # a backspace may come back over what follows it
            before = self.hold_start(view.text[: view.rewritable], 0, partials=partials)
            if before < view.rewritable:
                cut = min(cut, before)
        if cut >= len(view.text):
            return n
        if moved and not any(ch.isalnum() for ch in view.text[cut:]):
            # The cursor moved on after punctuation that could start a literal (vi's "-- INSERT --"
            # then a cursor move): the next text most likely lands elsewhere; do not hold a
            # status line back until the next output.
            return n
        return start + view.first_raw(cut)

    def _screen_regions(self, text: str, first: int) -> list[tuple[int, int]]:
        """Return the merged regions of ``text`` whose screen view may hold a crossing match.

        Each place the junction automaton finds is checked before it costs a view: a literal
        counts when the rule's prefix regex still holds up to the next ESC/BS/DEL and one
        character past it; a literal's start cut by an escape sequence when the character after
        the sequences continues some literal.
        """
        low = self.lower(text)
        if low is None:
            return [(first, len(text))]  # lower-casing moves characters: look at all of it
        automata, kinds = self._junction_automaton()
        if automata[0] is None:
            return []
        found = (automata[0].find_matches_as_indexes(low.encode("ascii"), overlapping=True) if low.isascii()
                 else automata[1].find_matches_as_indexes(low, overlapping=True))
        n = len(text)
        starts = self._screen_starts
        control = _control_rx()
        backspaces = "\x08" in text or "\x7f" in text
        space = _space_rx()
        regions: list[tuple[int, int]] = []
        for index, at, end in found:
            kind, reach, extra = kinds[index]
            if regions and at < regions[-1][1] - reach // 2:
                continue  # well inside a region already taken
            if kind == _LITERAL:
                literal, priorities, spaceless = extra
                if literal is not None and not text.startswith(literal, at):
                    continue  # a case-sensitive literal in other letters
                # The first ESC/BS/DEL after it: no other is before it, so it is within the window.
                limit = at + reach // _SCREEN_SPREAD
                ctrl = text.find("\x1b", end, limit)
                if backspaces:
                    found_ctrl = control.search(text, end, limit)
                    ctrl = -1 if found_ctrl is None else found_ctrl.start()
                if ctrl == -1 or (spaceless and space.search(text, end, ctrl) is not None):
                    continue  # nothing to cross, or a match of these rules ends at the space before it
                if not self._may_cross(text, at, ctrl, priorities):
                    continue
            elif kind == _JUNCTION:  # a literal's start, then ESC/BS/DEL at end - 1
                after = _after_controls(text, end - 1)
                if after < n and low[at : end - 1] + low[after] not in starts:
                    continue
            elif kind == _AFTER:  # an escape's final and the rest of a literal: its start before the escapes
                run = _escapes_ending_at(text, at + 1)
                k = len(extra) if extra else 1
                if run < k or (extra and low[run - k : run] != extra):
                    continue
                at = run - k
            else:  # _ALONE: a word's first character, then an escape sequence
                if text[at] in _FINALS and _escapes_ending_at(text, at + 1) == -1 and "\x1b" in text[max(0, at - 64) : at]:
                    continue  # a letter of the text before it, not an escape's end (unless that is not here)
                after = _after_controls(text, end - 1)
                if after < n and low[end - 2] + low[after] not in starts:
                    continue
                at = end - 2
            lo = max(first - self._lookbehind, at - self._lookbehind - 1, 0)
            hi = min(n, at + reach)
            if regions and lo <= regions[-1][1]:
                regions[-1] = (regions[-1][0], max(regions[-1][1], hi))
            else:
                regions.append((lo, hi))
        return regions

    def _may_cross(self, text: str, at: int, ctrl: int, priorities: tuple[int, ...]) -> bool:
        """Return whether a match of one of the rules could start at ``at`` and go on past the
        ESC/BS/DEL at ``ctrl`` (its prefix regex holds up to it and one shown character on)."""
        after = _after_controls(text, ctrl)
        probe = text[at:ctrl] + text[after : after + 1]
        for priority in priorities:
            r = self.rules[priority]
            prefix = r.prefix.get() if r.prefix is not None else None
            if prefix is None or text[ctrl] != "\x1b" or prefix.fullmatch(probe) is not None:
                return True
        return False

    def _junction_automaton(self) -> tuple[tuple[Any, Any], tuple[tuple[int, int, Any], ...]]:
        """Return the automata (bytes, str) of the lower-cased literals and their cut forms,
        and per pattern (kind, reach in characters of raw text, what its check needs)."""
        built = self._junctions
        if built is None:
            with self._automaton_lock:
                built = self._junctions
                if built is None:
                    built = self._junctions = self._build_junctions()
        return built

    def _build_junctions(self) -> tuple[tuple[Any, Any], tuple[tuple[int, int, Any], ...]]:
        import ahocorasick_rs

        patterns: dict[str, tuple[int, int, Any]] = {}
        starts: set[str] = set()

        def add(pattern: str, kind: int, reach: int, extra: Any = None) -> None:
            old = patterns.get(pattern)
            if old is None:
                patterns[pattern] = (kind, reach, extra)
            elif old[0] == kind == _LITERAL:
                literal = old[2][0] if old[2][0] == extra[0] else None  # differing cases: check none
                priorities = tuple(sorted({*old[2][1], *extra[1]}))
                patterns[pattern] = (kind, max(reach, old[1]), (literal, priorities, old[2][2] and extra[2]))
            elif old[0] == kind:
                patterns[pattern] = (kind, max(reach, old[1]), old[2] if old[2] == extra else None)

        for r in self.rules:
            reach = min(r.window, _HOLD_UNBOUNDED) * _SCREEN_SPREAD + 256
            for lit in (r.scan_literals if not r.ci else r.literals) or ((r.needle,) if r.needle else ()):
                low = lit.lower()
                if len(low) != len(lit):
                    continue
                add(low, _LITERAL, reach, (None if r.ci else lit, (r.priority,), r.spaceless))
                starts.update(low[:k] for k in range(1, len(low) + 1))
                for k in range(1, len(low)):
                    for sep in _SCREEN_CONTROLS:
                        # Two characters then ESC end many coloured words ("main.py" ESC): those
                        # literals cut after 1 or 2 characters are found from the other side.
                        if k >= 3 or sep != "\x1b":
                            add(low[:k] + sep, _JUNCTION, reach)
                    if k <= 2 and len(low) - k >= 2:
                        for final in _COMMON_FINALS:
                            add(final + low[k:], _AFTER, reach + 64, low[:k])
                if low[0].isalnum():
                    for before in (*_COMMON_FINALS, *_WORD_STARTS):
                        add(before + low[0] + "\x1b", _ALONE, reach + 64)
        patterns = {k: v if v[0] != _AFTER or v[2] is not None else (v[0], v[1], "") for k, v in patterns.items()}
        self._screen_starts = frozenset(starts)
        keys = list(patterns)
        dfa = ahocorasick_rs.Implementation.DFA
        automata = (
            ahocorasick_rs.BytesAhoCorasick([k.encode() for k in keys], implementation=dfa),
            ahocorasick_rs.AhoCorasick(keys, implementation=dfa),
        ) if keys else (None, None)
        return automata, tuple(patterns[k] for k in keys)

    def hold_start(self, text: str, first: int, *, partials: bool = True) -> int:
        """Return where the tail that could still grow into a secret begins (len = none).

        Positions before ``first`` (context already written) are not considered.
        partials: a tail that is a rule's starting literal cut short (``gh`` of ``ghp_``)
        counts; False: only a tail from a whole starting literal on does (and, for rules
        without starting literals, any possible start).
        """
        n = len(text)
        best = n
        if partials and n > first and text[-1] in self._partial_last:  # a literal cut short
            if text.isascii():  # lower-casing is per character: walk the tries
                best = _partial_start(text, max(first, n - self._max_partial), self._partial_tries)
            else:
                for k in range(min(self._max_partial, n - first), 0, -1):
                    tail = text[n - k :]
                    if tail in self._partial_cs or (self._partial_ci and tail.lower() in self._partial_ci):
                        best = n - k
                        break
        if self._quiet(text) and (not self._any_ci or text.isascii()):
            # No literal, so no literal rule's hold but a literal cut short (just found); the
            # rules without one may still be starting (``deploy`` of a Terraform token).
            return self._literalless_hold(text, first, best) if self._literalless else best
        low_from = max(first, n - self._ci_window)
        low = self.lower(text[low_from:]) if self._any_ci else None
        word_from = max(first, max(text.rfind(" "), text.rfind("\n"), text.rfind("\r"), text.rfind("\t")) + 1)
        if word_from < best and self._word_finder is not None:
            best = self._word_hold(text, word_from, best)
        for r in self._other_rules:
            start = max(first, n - r.window, word_from if r.spaceless else 0)
            if start >= best:
                continue
            prefix = r.prefix.get() if r.prefix is not None and r.literals and (low is not None or not r.ci) else None
            if prefix is not None:
                hay, offset = (low, low_from) if r.ci else (text, 0)
                assert hay is not None
                for lit in r.literals:
                    pos = hay.find(lit, start - offset)
                    while pos != -1 and pos + offset < best:
                        if prefix.fullmatch(text, pos + offset) is not None:
                            best = pos + offset
                            break
                        pos = hay.find(lit, pos + 1)
                continue
            prefix_search = r.prefix_search.get() if r.prefix_search is not None else None
            if prefix_search is not None:
                m = prefix_search.search(text, start)
                if m is not None and m.start() < best:
                    best = m.start()
            else:  # no prefix regex could be derived: hold the whole window
                best = start
        return best

    def _literalless_hold(self, text: str, first: int, best: int) -> int:
        """Return the earliest start of a possible match of the rules without a starting literal
        that reaches the end of ``text`` (else ``best``); the loop of ``hold_start`` for them."""
        n = len(text)
        word_from = max(first, max(text.rfind(" "), text.rfind("\n"), text.rfind("\r"), text.rfind("\t")) + 1)
        if n - word_from <= self._literalless_window:  # every rule's search starts at word_from
            combined = self._literalless_search()
            if combined is not None:
                m = combined.search(text, word_from)  # the leftmost start of any of their holds
                return m.start() if m is not None and m.start() < best else best
        for r in self._literalless:
            start = max(first, n - r.window, word_from if r.spaceless else 0)
            if start >= best:
                continue
            prefix_search = r.prefix_search.get() if r.prefix_search is not None else None
            if prefix_search is None:  # no prefix regex could be derived: hold the whole window
                best = start
                continue
            m = prefix_search.search(text, start)
            if m is not None and m.start() < best:
                best = m.start()
        return best

    def _literalless_search(self) -> re.Pattern[str] | None:
        """Return one regex of the hold regexes (``prefix_search``) of the rules without a
        starting literal, built on first use; None when a rule lacks one or they cannot be joined."""
        combined = self._literalless_rx
        if combined is False:
            parts = []
            for r in self._literalless:
                rx = r.prefix_search.get() if r.prefix_search is not None else None
                flags = 0 if rx is None else rx.flags & ~re.UNICODE
                if rx is None or flags & ~(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.ASCII):
                    parts = []
                    break
                parts.append(f"(?{_flags(flags, 0)}:{rx.pattern})" if flags else f"(?:{rx.pattern})")
            try:
                combined = re.compile("|".join(parts)) if parts else None
            except (re.error, RecursionError):
                combined = None
            self._literalless_rx = combined
        return combined  # type: ignore[return-value]

    def _word_hold(self, text: str, word_from: int, best: int) -> int:
        """Return the earliest start, from ``word_from`` on, of a possible match of the
        whitespace-free literal rules that reaches the end of ``text`` (else ``best``)."""
        n = len(text)
        finder = self._word_finder.get() if self._word_finder is not None else None
        assert finder is not None
        for found in finder.finditer(text, word_from):
            at = found.start()
            if at >= best:
                break
            for lit_start in {lit for lit in self._word_literals if text.startswith(lit, at)}:
                for r in self._word_literals[lit_start]:
                    if at >= n - r.window:
                        prefix = r.prefix.get() if r.prefix is not None else None
                        if prefix is None or prefix.fullmatch(text, at) is not None:
                            return at
        return best

    def still_growing(self, text: str, start: int) -> _Rule | None:
        """Return the first rule whose match could start at ``start`` and go on past the end
        of ``text`` although it is longer than the rule's hold window (None: no such rule)."""
        length = len(text) - start
        for r in self._unbounded:
            if length <= r.window:
                continue
            if r.literals:
                hay = text[start : start + self._max_literal].lower() if r.ci else text
                at = 0 if r.ci else start
                if not any(hay.startswith(lit, at) for lit in r.literals):
                    continue
            prefix = r.prefix.get()
            if prefix is not None and prefix.fullmatch(text, start) is not None:
                return r
        return None

    def apply(self, text: str, hits: list[_Hit], base: int, cut: int, *, keep_columns: bool = False) -> str:
        """Return ``text[base:cut]`` with the secrets of the hits inside it replaced.

        keep_columns: a one-line secret's marker takes the secret's display width on the
        screen, so what follows on its line stays in its column (``_columns_kept``).
        """
        spans: list[tuple[int, int, int, str]] = []  # (start, end, priority, name), merged
        for start, end, _ms, _me, priority, name in sorted(hits):
            if end <= base or end > cut or self._allowed(text[start:end]):
                continue
            # A secret begun in text released before it was decided (``StreamRedactor.release``):
            # its part already written stays; the rest becomes the marker.
            start = max(start, base)
            if spans and start < spans[-1][1]:
                last_start, last_end, last_priority, last_name = spans[-1]
                if priority < last_priority:
                    last_priority, last_name = priority, name
                spans[-1] = (last_start, max(last_end, end), last_priority, last_name)
            else:
                spans.append((start, end, priority, name))
        out: list[str] = []
        pos = base
        for start, end, _priority, name in spans:
            out.append(text[pos:start])
            marker = MARKER.format(name=name)
            out.append(_columns_kept(marker, text[start:end]) if keep_columns else marker)
            pos = end
        out.append(text[pos:cut])
        return "".join(out)

    def _allowed(self, secret: str) -> bool:
        return any(rx.fullmatch(secret) is not None for rx in self._allow)


# --------------------------------------------------------------------------- the screen's text
#
# What a terminal shows of a text: escape sequences (ECMA-48 CSI, OSC, DCS/SOS/PM/APC strings,
# two-character escapes) draw nothing, a backspace moves the cursor one column left so that the
# next character overstrikes the one there (``ab\bc`` shows ``ac``; ``\b \b`` erases), and a
# DEL typed as input erases the character before it. A secret drawn with colours or cursor moves
# between its characters, or typed and corrected, is matched on that view.

_SCREEN_CONTROLS = ("\x1b", "\x08", "\x7f")
_COMMON_FINALS = ("m", "k", "h")  # SGR, EL and CUP end most escape sequences inside a word (lower-cased)
_FINALS = frozenset(map(chr, range(0x40, 0x7F)))  # the last character of a CSI sequence
_WORD_STARTS = tuple(" \t\n=:\"'>(/")  # what a secret's first character usually follows
_SCREEN_SPREAD = 12
"""Raw characters a secret may take per character shown (colour and cursor moves between them)."""
_SCREEN_TAIL = 8192
"""Raw characters at the end of the stream in which an ESC/BS/DEL makes its screen view checked for a hold."""
_SCREEN_BACK = 1024
"""Raw characters before the last ESC/BS/DEL of the stream where a hold across it may start."""
_REWRITE = 4
"""Characters after the last backspace at the end of a stream that may still be erased
(``\b \b`` cut after its space): the hold is also looked for before them."""
_LITERAL, _JUNCTION, _AFTER, _ALONE = 0, 1, 2, 3
"""Kinds of junction pattern: a literal; a literal's start, then ESC/BS/DEL; an escape's final
and a literal without its first character; a literal's first character alone before an escape."""

@functools.cache
def _escape_rx() -> re.Pattern[str]:
    """Return the regex of one escape sequence (ECMA-48; a cut one at the end of a text too)."""
    return re.compile(
        r"\x1b(?:\[[0-?]*[ -/]*[@-~]?"  # CSI
        r"|\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC, ended by BEL or ST
        r"|[PX^_][^\x1b]*(?:\x1b\\)?"  # DCS, SOS, PM, APC
        r"|[ -/]*[0-~]?)"  # two-character escapes: ESC ( B, ESC 7, ESC =
    )


@functools.cache
def _controls_rx() -> re.Pattern[str]:
    """Return the regex of a run of escape sequences, backspaces and DELs."""
    return re.compile(f"(?:{_escape_rx().pattern}|[\\x08\\x7f])+")


@functools.cache
def _space_rx() -> re.Pattern[str]:
    """Return the regex of one whitespace character."""
    return re.compile(r"\s")


@functools.cache
def _control_rx() -> re.Pattern[str]:
    """Return the regex of one ESC, BS or DEL."""
    return re.compile("[\\x1b\\x08\\x7f]")


def _cut_escape_start(text: str, start: int) -> int:
    """Return where an escape sequence cut by the end of ``text`` begins (-1: none is cut).

    Only a short one counts (a CSI or two-character escape, an OSC or DCS string up to 256
    characters): a longer unterminated string is written as it is.
    """
    esc = text.rfind("\x1b", start)
    if esc == -1:
        return -1
    m = _escape_rx().match(text, esc)
    if m is None or m.end() != len(text):
        return -1
    body = text[esc + 1 :]
    if not body:
        return esc
    if body[0] == "[":
        return esc if not ("\x40" <= body[-1] <= "\x7e") or len(body) == 1 else -1
    if body[0] in "]PX^_":
        return esc if len(body) <= 256 and not body.endswith(("\x07", "\x1b\\")) else -1
    return esc if not ("\x30" <= body[-1] <= "\x7e") else -1


def _escapes_ending_at(text: str, end: int) -> int:
    """Return where the run of escape sequences that ends at ``end`` starts (-1: none ends there)."""
    rx = _escape_rx()
    start = -1
    while True:
        esc = text.rfind("\x1b", max(0, end - 64), end)
        m = rx.match(text, esc) if esc != -1 else None
        if m is None or m.end() != end:
            return start
        start = end = esc


def _after_controls(text: str, pos: int) -> int:
    """Return the index after the escape sequences, backspaces and DELs starting at ``pos``."""
    m = _controls_rx().match(text, pos)
    return pos if m is None else m.end()


def _has_screen_controls(text: str, start: int = 0, end: int | None = None) -> bool:
    """Return whether ``text[start:end]`` holds an ESC, BS or DEL."""
    if start == 0 and end is None:
        return "\x1b" in text or "\x08" in text or "\x7f" in text
    return any(text.find(ch, start, end) != -1 for ch in _SCREEN_CONTROLS)


class _ScreenView:
    """What the screen shows of ``raw``: ``text``, and where each of its characters came from.

    Indices are 0-based; ``span`` maps a view span to the raw span holding all its characters
    (with what was removed between them), ``first_raw`` the raw index where a view suffix starts.
    The text is one regex substitution; the map back is built on first use only (most views
    show no secret).
    """

    __slots__ = ("_cum", "_index", "_stops", "_stripped", "changed", "raw", "rewritable", "text")

    def __init__(self, raw: str) -> None:
        self.raw = raw
        stripped = _escape_rx().sub("", raw) if "\x1b" in raw else raw
        self._stripped = stripped
        self._stops: list[int] | None = None  # view positions where removed text was
        self._cum: list[int] = [0]  # raw characters removed before each stop, cumulated
        self._index: list[int] | None = None  # view position -> stripped position, after backspaces
        text = stripped
        self.rewritable = len(text)  # where the cursor was after the last backspace: text from there may be redrawn
        if "\x08" in stripped or "\x7f" in stripped:
            text, self._index, self.rewritable = _overstrike(stripped)
        self.text = text
        self.changed = text != raw

    def _raw(self, pos: int) -> int:
        """Return the raw index of the stripped character at ``pos``."""
        stops = self._stops
        if stops is None:
            stops = self._stops = []
            removed = 0
            for m in _escape_rx().finditer(self.raw) if len(self._stripped) != len(self.raw) else ():
                a, b = m.span()
                stops.append(a - removed)
                removed += b - a
                self._cum.append(removed)
        return pos + self._cum[bisect.bisect_right(stops, pos)]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Return the raw span of the view's characters ``start:end`` (end > start)."""
        if self._index is None:
            return self._raw(start), self._raw(end - 1) + 1
        where = [self._raw(i) for i in self._index[start:end]]
        return min(where), max(where) + 1

    def first_raw(self, start: int) -> int:
        """Return the raw index where the view's characters from ``start`` on begin."""
        if start >= len(self.text):
            return len(self.raw)
        return self.span(start, len(self.text))[0]


def _overstrike(text: str) -> tuple[str, list[int], int]:
    """Apply backspaces (cursor one column left, never past a line start; the next character
    overstrikes) and DELs (erase the character before); return the text shown, for each of its
    characters its index in ``text``, and the cursor's position after the last of them."""
    out: list[str] = []
    index: list[int] = []
    cursor = line = back = 0
    for i, ch in enumerate(text):
        if ch == "\x08":
            if cursor > line:
                cursor -= 1
            back = cursor
        elif ch == "\x7f":
            if cursor > line:
                cursor -= 1
                del out[cursor], index[cursor]
            back = cursor
        elif ch == "\n":
            out.append(ch)
            index.append(i)
            cursor = line = len(out)
        elif cursor < len(out):
            out[cursor], index[cursor] = ch, i
            cursor += 1
        else:
            out.append(ch)
            index.append(i)
            cursor += 1
    return "".join(out), index, back


def _columns_kept(marker: str, secret: str) -> str:
    """Return ``marker`` fitted to the columns ``secret`` took on the screen: padded with
    spaces when the secret was wider, followed by a cursor-back (CUB, ECMA-48 ``CSI n D``)
    over its extra columns when it was narrower, so the text after it is drawn where it was.
    The marker itself stays whole in the recording. A secret over several lines, or one
    whose width is unknown (control characters), gets the bare marker."""
    if "\n" in secret or "\r" in secret:
        return marker
    shown = _ScreenView(secret).text if _has_screen_controls(secret) else secret
    if shown.isascii():
        width = len(shown) if shown.isprintable() else -1
    else:
        import wcwidth  # pyte's; only for a secret beyond ASCII

        width = wcwidth.wcswidth(shown)
    if width <= 0 or width == len(marker):
        return marker
    if width > len(marker):
        return marker + " " * (width - len(marker))
    return f"{marker}\x1b[{len(marker) - width}D"


_Trie = dict[str, "_Trie"]


def _reversed_trie(words: Iterable[str]) -> _Trie:
    """Return a trie of ``words`` read backwards; the key "" marks the end of a word."""
    root: _Trie = {}
    for word in words:
        node = root
        for ch in reversed(word):
            node = node.setdefault(ch, {})
        node[""] = {}
    return root


def _partial_start(text: str, lo: int, tries: tuple[_Trie, _Trie]) -> int:
    """Return where the longest tail of ``text`` from ``lo`` on that the first trie holds, or
    the second holds lower-cased, begins (``len(text)``: none). ASCII text only."""
    n = len(text)
    best = n
    for trie, fold in zip(tries, (False, True)):
        node = trie
        i = n - 1
        while i >= lo:
            node = node.get(text[i].lower() if fold else text[i])  # type: ignore[assignment]
            if node is None:
                break
            if "" in node and i < best:
                best = i
            i -= 1
    return best


def _add_hit(hits: list[_Hit], r: _Rule, m: re.Match[str]) -> None:
    start, end = m.span(r.secret) if r.secret and m.start(r.secret) != -1 else m.span()
    if end > start and (not r.min_entropy or _entropy(m.string[start:end]) >= r.min_entropy):
        hits.append((start, end, m.start(), m.end(), r.priority, r.name))


def _entropy(text: str) -> float:
    """Return the Shannon entropy of ``text`` in bits per character."""
    n = len(text)
    return -sum(k / n * math.log2(k / n) for k in collections.Counter(text).values())


# --------------------------------------------------------------------------- rule analysis
#
# What the engine needs from a regex beyond matching it: the literals every match starts
# with (for fast scanning), the longest a match can be (the hold window), and a "prefix"
# regex that matches every prefix of every match (for the hold). They come from the parse
# tree of Python's own regex parser (re._parser, sre_parse before 3.11). Where that fails
# (an unusual construct, a future parser) the engine falls back to slower scanning or a
# longer hold, never to missing a secret.


class _Unsupported(Exception):
    """The regex uses a construct the prefix builder does not handle."""


_Node = tuple[object, object]
"""One parse-tree node of Python's regex parser: (opcode, argument)."""


def _sre() -> tuple[ModuleType, ModuleType]:
    """Return Python's regex parser and constants modules."""
    try:
        return importlib.import_module("re._parser"), importlib.import_module("re._constants")
    except ImportError:  # Python 3.10
        return importlib.import_module("sre_parse"), importlib.import_module("sre_constants")


class _LazyPattern:
    """A regex compiled on first use. Most rules never need their main regex (a short read
    lacks their literal) and most never need their partial-match regexes (large); compiling
    them all up front cost about 5 ms at every session start, on the path to the first write.

    ``source`` is the regex, or a function that builds it. The main regex of a rule raises
    ``re.error`` when it does not compile (config validation has compiled it already); a
    partial-match regex that cannot be built is logged once and ``get`` returns None, so
    the caller holds back the whole window instead.
    """

    __slots__ = ("_compiled", "_failed", "_flags", "_optional", "_source")

    def __init__(self, source: str | Callable[[], str], flags: int = 0, *, optional: bool = False) -> None:
        self._source = source
        self._flags = flags
        self._optional = optional
        self._compiled: re.Pattern[str] | None = None
        self._failed = False

    def get(self) -> re.Pattern[str] | None:
        """Return the compiled regex (None only for an optional one that cannot be built)."""
        compiled = self._compiled
        if compiled is None and not self._failed:
            try:
                source = self._source() if callable(self._source) else self._source
                compiled = self._compiled = re.compile(source, self._flags)
            except (_Unsupported, re.error, RecursionError, AttributeError, TypeError, ValueError) as exc:
                if not self._optional:
                    raise
                self._failed = True
                log.warning("a redaction rule cannot check partial matches (%s); holding back more", exc)
        return compiled

    def _rx(self) -> re.Pattern[str]:
        compiled = self.get()
        assert compiled is not None
        return compiled

    def match(self, text: str, pos: int = 0) -> re.Match[str] | None:
        """Return ``re.Pattern.match(text, pos)``."""
        return self._rx().match(text, pos)

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        """Return ``re.Pattern.finditer(text)``."""
        return self._rx().finditer(text)


@dataclass(frozen=True, slots=True)
class RuleFacts:
    """What the engine derives from a rule's regex, apart from the regexes themselves.

    The built-in rules' facts are precomputed in ``rule_facts.FACTS`` as tuples in field
    order (parsing ~110 patterns costs ~15 ms, on the path of every short session); a test
    proves the table equals ``analyse_pattern`` for every rule, and
    ``scripts/update-redaction-facts`` writes it.
    """

    flags: int  # the pattern's global flags (re.IGNORECASE...), VERBOSE and DEBUG dropped
    window: int
    unbounded: bool
    literals: tuple[str, ...]
    scan_literals: tuple[str, ...]
    required: tuple[frozenset[str], ...]
    lookbehind: int
    spaceless: bool
    needle: str
    secret: int
    prefix_ok: bool  # a prefix regex can be derived (built on first use)


def analyse_pattern(pattern: str) -> RuleFacts | None:
    """Return the facts of one rule's regex, or None when Python's parser refuses it.

    Raises nothing: a pattern that does not parse gives None (``re.compile`` then raises).
    """
    try:
        parser, consts = _sre()
        tree = parser.parse(pattern)
    except (re.error, RecursionError, AttributeError, ImportError, TypeError, ValueError):
        return None
    flags = int(tree.state.flags & ~(re.VERBOSE | re.DEBUG))
    ci = bool(flags & re.IGNORECASE)
    window, unbounded, lookbehind = _HOLD_UNBOUNDED, True, _HOLD_UNBOUNDED
    literals: tuple[str, ...] = ()
    scan_literals: tuple[str, ...] = ()
    required: tuple[frozenset[str], ...] = ()
    prefix_ok = True
    try:
        hi = int(tree.getwidth()[1])
        window = hi if hi <= _HOLD_MAX else _HOLD_UNBOUNDED
        unbounded = hi > _HOLD_MAX
        literals = _starting_literals(list(tree), consts, ci)
        scan_literals = _starting_literals(list(tree), consts, ci, collapse=False) if literals and not ci else ()
        required = tuple(dict.fromkeys(_required_chars(list(tree), consts)))
        lookbehind = _lookbehind_width(list(tree), consts)
    except (_Unsupported, RecursionError, AttributeError, TypeError, ValueError):
        prefix_ok = False
    return RuleFacts(
        flags, window, unbounded, literals, scan_literals or literals, required, lookbehind,
        not _may_match_space(list(tree), consts), "" if literals else _inner_literal(list(tree), consts, ci),
        int(tree.state.groupdict.get("secret", 0)), prefix_ok,
    )


def _compile_rule(rule: RedactionRule, priority: int) -> _Rule:
    """Build one rule from its facts (precomputed for the built-in rules); regexes compile on first use.

    Raises re.error when the pattern does not parse.
    """
    from shellkeep.capture.rule_facts import FACTS  # data only: the built-in rules' facts

    known = FACTS.get(rule.pattern)
    facts = RuleFacts(*known) if known is not None else analyse_pattern(rule.pattern)
    if facts is None:
        # Python's parser moved or refused: compile now (raising for a bad pattern) and scan slowly.
        rx = re.compile(rule.pattern)
        log.warning("redaction rule %r: cannot check partial matches; holding back more", rule.name)
        return _Rule(rule.name, priority, _LazyPattern(rule.pattern), bool(rx.flags & re.IGNORECASE), (), False,
                     None, None, _HOLD_UNBOUNDED, True, rx.groupindex.get("secret", 0), (), _HOLD_UNBOUNDED)
    prefix: _LazyPattern | None = None
    prefix_search: _LazyPattern | None = None
    if facts.prefix_ok:

        @functools.cache
        def source() -> str:
            parser, consts = _sre()
            built = _Prefix(consts).of_sequence(list(parser.parse(rule.pattern)))
            if len(built) > 200_000:
                raise _Unsupported("prefix regex too large")
            return built

        prefix = _LazyPattern(source, facts.flags, optional=True)
        prefix_search = _LazyPattern(lambda: f"(?:{source()})\\Z", facts.flags, optional=True)
    else:
        log.warning("redaction rule %r: cannot check partial matches; holding back more", rule.name)
    ci = bool(facts.flags & re.IGNORECASE)
    find_literals = bool(facts.literals) and (ci or len(facts.literals) > 1)
    return _Rule(
        rule.name, priority, _LazyPattern(rule.pattern), ci, facts.literals, find_literals, prefix, prefix_search,
        facts.window, facts.unbounded, facts.secret, facts.required, facts.lookbehind, facts.spaceless,
        facts.needle, rule.min_entropy, facts.scan_literals,
    )


def _lookbehind_width(items: list[_Node], c: ModuleType) -> int:
    """Return the most characters any lookbehind in the tree looks back (0 for none)."""
    width = 0
    for op, av in items:
        if (op is c.ASSERT or op is c.ASSERT_NOT) and av[0] < 0:
            width = max(width, int(av[1].getwidth()[1]))
        for sub in _children(op, av, c):
            width = max(width, _lookbehind_width(list(sub), c))
    return min(width, _HOLD_UNBOUNDED)


def _children(op: Any, av: Any, c: ModuleType) -> list[Any]:
    """Return the node sequences directly inside one node."""
    if op is c.BRANCH:
        return list(av[1])
    if op is c.SUBPATTERN:
        return [av[3]]
    if op is c.ASSERT or op is c.ASSERT_NOT:
        return [av[1]]
    if op is getattr(c, "ATOMIC_GROUP", None):
        return [av]
    if op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
        return [av[2]]
    if op is getattr(c, "GROUPREF_EXISTS", None):
        return [x for x in av[1:] if x is not None]
    return []


_SPACE_CODES = frozenset(map(ord, " \t\n\r\x0b\x0c"))


def _may_match_space(items: list[_Node], c: ModuleType) -> bool:
    """Return whether a match of the node sequence may contain a whitespace character
    (True when unsure: the caller then looks further back)."""
    for op, av in items:
        if op is c.LITERAL:
            if av in _SPACE_CODES:
                return True
        elif op is c.IN:
            for o, v in av:
                if o is c.NEGATE or (o is c.LITERAL and v in _SPACE_CODES):
                    return True
                if o is c.RANGE and any(v[0] <= code <= v[1] for code in _SPACE_CODES):  # type: ignore[index]
                    return True
                if o is c.CATEGORY and str(v) not in ("CATEGORY_WORD", "CATEGORY_DIGIT", "CATEGORY_NOT_SPACE"):
                    return True
        elif op is c.BRANCH:
            if any(_may_match_space(list(alt), c) for alt in av[1]):  # type: ignore[index]
                return True
        elif op is c.SUBPATTERN:
            if _may_match_space(list(av[3]), c):  # type: ignore[index]
                return True
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)):
            if _may_match_space(list(av[2]), c):  # type: ignore[index]
                return True
        elif op is c.ASSERT or op is c.ASSERT_NOT or op is c.AT:
            continue  # zero-width
        else:
            return True
    return False


def _inner_literal(items: list[_Node], c: ModuleType, ci: bool) -> str:
    """Return the longest run of literal characters every match contains ("" for none useful).

    Only the top-level sequence is looked at. A run is useful with 3 or more characters, or
    2 when one is punctuation ("Q~"); for a case-insensitive rule it is lower-cased.
    """
    best, run = "", ""
    for op, av in [*items, (None, None)]:
        if op is c.LITERAL:
            run += chr(av)  # type: ignore[arg-type]
            continue
        if len(run) > len(best):
            best = run
        run = ""
    if ci:
        best = best.lower() if len(best.lower()) == len(best) else ""
    if len(best) >= 3 or (len(best) == 2 and not best.isalnum()):
        return best
    return ""


def _required_chars(items: list[_Node], c: ModuleType) -> list[frozenset[str]]:
    """Return sets of punctuation or space characters every match contains one of.

    Only characters that are not letters or digits are used: they are the rare ones in
    ordinary output, and case-insensitivity cannot change them.
    """
    found: list[frozenset[str]] = []
    for op, av in items:
        chars: set[str] | None = None
        if op is c.LITERAL:
            chars = {chr(av)}
        elif op is c.IN and all(o is c.LITERAL or o is c.RANGE for o, _ in av):
            chars = set()
            for o, v in av:
                lo, hi = (v, v) if o is c.LITERAL else v
                if hi - lo > 8:
                    chars = None
                    break
                chars.update(chr(x) for x in range(lo, hi + 1))
        elif op is c.SUBPATTERN:
            found += _required_chars(list(av[3]), c)
        elif op is c.BRANCH:  # one of each alternative's characters: their union
            per_alternative = [_required_chars(list(alt), c) for alt in av[1]]
            if all(per_alternative):
                chars = set().union(*(min(sets, key=len) for sets in per_alternative))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)) and av[0] >= 1:
            found += _required_chars(list(av[2]), c)
        if chars and len(chars) <= 6 and not any(ch.isalnum() for ch in chars):
            found.append(frozenset(chars))
    return found


def _starting_literals(items: list[_Node], c: ModuleType, ci: bool, *, collapse: bool = True) -> tuple[str, ...]:
    """Return strings one of which every match starts with, or () when there is none.

    collapse: several starts sharing a prefix of two or more characters become that prefix
    (fewer literals to hold back and look for one at a time); False spells them all out,
    for the one-pass scan, where longer literals mean fewer false starts.
    """
    found, _complete = _literals_of(items, c, limit=16)
    if any(not s for s in found):
        return ()
    if ci:
        lowered = [s.lower() for s in found]
        if any(len(a) != len(b) for a, b in zip(found, lowered)):
            return ()
        found = lowered
    unique = sorted(set(found))
    common = os.path.commonprefix(unique)
    if collapse and len(unique) > 1 and len(common) >= 2:
        unique = [common]
    return tuple(unique)


def _literals_of(items: list[_Node], c: ModuleType, limit: int) -> tuple[list[str], bool]:
    """Return (the literal starts of a node sequence, whether the sequence is all literal)."""
    acc = [""]
    for op, av in items:
        complete = True
        if op is c.ASSERT or op is c.ASSERT_NOT or op is c.AT:
            continue  # zero-width: the literal after it still starts the match
        if op is c.LITERAL:
            opts = [chr(av)]
        elif op is c.IN and all(o is c.LITERAL for o, _ in av):
            opts = [chr(v) for _, v in av]
        elif op is c.SUBPATTERN and not av[1] and not av[2]:
            opts, complete = _literals_of(list(av[3]), c, limit)
        elif op is c.BRANCH:
            opts = []
            for alt in av[1]:
                sub, sub_complete = _literals_of(list(alt), c, limit)
                opts += sub
                complete = complete and sub_complete
        else:
            return acc, False
        joined = [a + o for a in acc for o in opts]
        if len(joined) > limit:
            return acc, False
        acc = joined
        if not complete:
            return acc, False
    return acc, True


_CATEGORIES = {
    "CATEGORY_DIGIT": r"\d",
    "CATEGORY_NOT_DIGIT": r"\D",
    "CATEGORY_SPACE": r"\s",
    "CATEGORY_NOT_SPACE": r"\S",
    "CATEGORY_WORD": r"\w",
    "CATEGORY_NOT_WORD": r"\W",
}
_BACKWARD_AT = {"AT_BEGINNING": "^", "AT_BEGINNING_STRING": r"\A"}
_FORWARD_AT = {"AT_END": "$", "AT_END_STRING": r"\Z", "AT_BOUNDARY": r"\b", "AT_NON_BOUNDARY": r"\B"}
_FLAG_LETTERS = ((re.IGNORECASE, "i"), (re.MULTILINE, "m"), (re.DOTALL, "s"), (re.ASCII, "a"))


def _esc(code: int) -> str:
    """Return one character as regex source, escaped unless it is an ASCII letter or digit."""
    ch = chr(code)
    if ch.isascii() and ch.isalnum():
        return ch
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _flags(add: int, remove: int) -> str:
    """Return the letters of a scoped-flags group, as in ``(?i-s:...)``."""
    on = "".join(letter for bit, letter in _FLAG_LETTERS if add & bit)
    off = "".join(letter for bit, letter in _FLAG_LETTERS if remove & bit)
    return on + (f"-{off}" if off else "")


class _Prefix:
    """Build, from a parse tree, a regex matching every prefix of what the tree matches.

    For a sequence ``x rest`` the prefixes are ``x`` then a prefix of ``rest``, or a prefix
    of ``x``; for ``x{lo,hi}`` up to ``hi - 1`` whole ``x`` then a prefix of ``x``; every
    prefix regex also matches the empty string. The result may match more than the true
    prefixes (that holds back a little more), never less (that would let a split secret
    through), so assertions that look forward (lookaheads, ``$``, ``\b``) are dropped:
    the text they look at may not have arrived. Lookbehinds and ``^`` look at text that
    is already there and are kept.
    """

    def __init__(self, c: ModuleType) -> None:
        self.c = c

    def of_sequence(self, items: list[_Node]) -> str:
        """Return a regex matching every prefix of what the node sequence matches."""
        groups: list[list[int] | _Node] = []  # runs of literal codes, or single nodes
        for op, av in items:
            if op is self.c.LITERAL:
                if groups and isinstance(groups[-1], list):
                    groups[-1].append(av)
                else:
                    groups.append([av])
            else:
                groups.append((op, av))
        out = ""
        for group in reversed(groups):  # build from the end: out is the prefix regex of the rest
            out = self._of_group(group, out)
        return out

    def _of_group(self, group: list[int] | _Node, rest: str) -> str:
        if isinstance(group, list):
            chars = [_esc(code) for code in group]
            partials = ["".join(chars[:k]) for k in range(len(chars) - 1, 0, -1)]
            return "(?:" + "|".join(["".join(chars) + rest, *partials, ""]) + ")"
        op, av = group
        c = self.c
        if op is c.AT:
            if str(av) in _FORWARD_AT:
                return rest
            return f"(?:{self._backward_at(av)}{rest})"
        if op is c.ASSERT or op is c.ASSERT_NOT:
            if av[0] > 0:  # lookahead
                return rest
            return f"(?:{self.emit_node(op, av)}{rest})"
        return f"(?:{self.emit_node(op, av)}{rest}|{self._of_node(op, av)})"

    def _of_node(self, op: Any, av: Any) -> str:
        """Return a regex matching every prefix of what one (non-assertion) node matches."""
        c = self.c
        if op in (c.LITERAL, c.NOT_LITERAL, c.ANY, c.IN):
            return f"(?:{self.emit_node(op, av)})?"
        if op is c.BRANCH:
            return "(?:" + "|".join(self.of_sequence(list(alt)) for alt in av[1]) + ")"
        if op is c.SUBPATTERN:
            return f"(?{_flags(av[1], av[2])}:{self.of_sequence(list(av[3]))})"
        if op is getattr(c, "ATOMIC_GROUP", None):
            return f"(?:{self.of_sequence(list(av))})"
        if op in self._repeats():
            _lo, hi, sub = av
            if hi == 0:
                return ""
            upper = "" if hi == c.MAXREPEAT else str(hi - 1)
            return f"(?:(?:{self.emit(list(sub))}){{0,{upper}}}{self.of_sequence(list(sub))})"
        raise _Unsupported(str(op))

    def _repeats(self) -> tuple[Any, ...]:
        c = self.c
        return tuple(op for op in (c.MAX_REPEAT, c.MIN_REPEAT, getattr(c, "POSSESSIVE_REPEAT", None)) if op)

    def emit(self, items: list[_Node]) -> str:
        """Return regex source for a node sequence, forward assertions dropped."""
        return "".join(self.emit_node(op, av) for op, av in items)

    def emit_node(self, op: Any, av: Any) -> str:
        """Return regex source for one node, forward assertions dropped."""
        c = self.c
        if op is c.LITERAL:
            return _esc(av)
        if op is c.NOT_LITERAL:
            return f"[^{_esc(av)}]"
        if op is c.ANY:
            return "."
        if op is c.IN:
            return self._emit_class(av)
        if op is c.BRANCH:
            return "(?:" + "|".join(self.emit(list(alt)) for alt in av[1]) + ")"
        if op is c.SUBPATTERN:
            return f"(?{_flags(av[1], av[2])}:{self.emit(list(av[3]))})"
        if op is getattr(c, "ATOMIC_GROUP", None):
            return f"(?:{self.emit(list(av))})"
        if op in self._repeats():
            lo, hi, sub = av
            quant = f"{{{lo},}}" if hi == c.MAXREPEAT else f"{{{lo},{hi}}}"
            lazy = "?" if op is c.MIN_REPEAT else ""
            return f"(?:{self.emit(list(sub))}){quant}{lazy}"
        if op is c.AT:
            return "" if str(av) in _FORWARD_AT else self._backward_at(av)
        if op is c.ASSERT or op is c.ASSERT_NOT:
            direction, sub = av
            if direction > 0:
                return ""
            kind = "=" if op is c.ASSERT else "!"
            return f"(?<{kind}{self._emit_exact(list(sub))})"
        raise _Unsupported(str(op))

    def _backward_at(self, av: Any) -> str:
        if str(av) not in _BACKWARD_AT:
            raise _Unsupported(str(av))
        return _BACKWARD_AT[str(av)]

    def _emit_exact(self, items: list[_Node]) -> str:
        """Return a lookbehind's body as written, assertions kept (its width must not change)."""
        out = []
        for op, av in items:
            if op is self.c.AT:
                out.append({**_BACKWARD_AT, **_FORWARD_AT}.get(str(av)) or self._backward_at(av))
            elif op is self.c.ASSERT or op is self.c.ASSERT_NOT:
                raise _Unsupported("an assertion inside a lookbehind")
            else:
                out.append(self.emit_node(op, av))
        return "".join(out)

    def _emit_class(self, items: list[_Node]) -> str:
        c = self.c
        parts: list[str] = []
        for op, av in items:
            if op is c.NEGATE:
                parts.insert(0, "^")
            elif op is c.LITERAL:
                parts.append(_esc(av))
            elif op is c.RANGE:
                parts.append(f"{_esc(av[0])}-{_esc(av[1])}")
            elif op is c.CATEGORY and str(av) in _CATEGORIES:
                parts.append(_CATEGORIES[str(av)])
            else:
                raise _Unsupported(str(op))
        return "[" + "".join(parts) + "]"

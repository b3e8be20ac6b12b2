"""Redaction rules and the stream redactor: the shellkeep/capture/redaction package."""

from __future__ import annotations

import pytest

from shellkeep.capture.redaction import (
    FAKE_HEX,
    RULES,
    RedactionRule,
    Redactor,
    StreamRedactor,
    build_redactor,
    user_rule,
)
from shellkeep.config import RedactConfig, RedactPattern

REDACTOR = Redactor()


def stream(redactor: Redactor, *pieces: str) -> str:
    """Feed ``pieces`` one by one to a new StreamRedactor; return all it wrote."""
    s = StreamRedactor(redactor)
    return "".join(s.feed(p) for p in pieces) + s.flush()


def marker(name: str) -> str:
    return f"[REDACTED:{name}]"


# ----------------------------------------------------------------- the rule table


def secret_of(rule: RedactionRule) -> str:
    """Return the part of the rule's example that must not survive: its match, or its group 'secret'."""
    import re

    m = re.search(rule.pattern, rule.example)
    assert m is not None, f"{rule.name}: the example does not match"
    return m.group("secret") if "secret" in m.re.groupindex and m.group("secret") else m.group(0)


def test_rule_names_are_unique_and_every_rule_has_a_fake_example() -> None:
    names = [r.name for r in RULES]
    assert len(names) == len(set(names))
    for rule in RULES:
        # "FAKE" in any case; a hex body cannot spell it, so its digits run in order instead.
        fake = "FAKE" if "FAKE" in rule.example.upper() else FAKE_HEX[:8]
        assert fake in secret_of(rule).upper().replace(FAKE_HEX[:8].upper(), FAKE_HEX[:8]), f"{rule.name}: examples must be visibly fake"


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_example_is_caught_alone_inside_text_and_split_at_every_offset(rule: RedactionRule) -> None:
    secret = secret_of(rule)
    alone = REDACTOR.redact(rule.example)
    assert marker(rule.name) in alone
    assert secret not in alone

    texts = [
        f"$ cat .env\r\nbefore {rule.example} after\r\n",
        f"\x1b[32m{rule.example}\x1b[0m\r\n",
    ]
    for text in texts:
        whole = REDACTOR.redact(text)
        assert marker(rule.name) in whole and secret not in whole
        assert whole.endswith("\r\n")
        for i in range(len(text) + 1):
            assert stream(REDACTOR, text[:i], text[i:]) == whole, f"split at {i}"
    # Typed (or echoed) one character at a time.
    assert stream(REDACTOR, *texts[0]) == REDACTOR.redact(texts[0])


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "postgres://app:FAKEpassw0rd@db.example.com:5432/app",
            "postgres://app:[REDACTED:url-password]@db.example.com:5432/app",
        ),
        ("password=FAKEhunter2 next", "password=[REDACTED:password] next"),
        ('PASSWORD = "FAKE with spaces" # c', 'PASSWORD = "[REDACTED:password]" # c'),
        ('{"api_key": "FAKEkey0", "n": 1}', '{"api_key": "[REDACTED:api-key]", "n": 1}'),
        ("export DB_TOKEN=FAKEtok;", "export DB_TOKEN=[REDACTED:token];"),
        ("secret_key: FAKEsk", "secret_key: [REDACTED:secret]"),
        (
            "https://hooks.slack.com/services/T0/B0/FAKEFAKEFAKEFAKEFAKEFAKE",
            "https://hooks.slack.com/services/[REDACTED:slack-webhook]",
        ),
    ],
    ids=["url", "password", "quoted", "json", "env", "yaml", "webhook"],
)
def test_only_the_secret_part_is_replaced(text: str, expected: str) -> None:
    assert REDACTOR.redact(text) == expected


def test_overlapping_matches_are_replaced_together_under_the_more_specific_name() -> None:
    token = next(r.example for r in RULES if r.name == "github-token")
    assert REDACTOR.redact(f"GH_TOKEN={token}\n") == "GH_TOKEN=[REDACTED:github-token]\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "\x1b[1;34mpassword\x1b[0m: \x1b[32mFAKEhunter2\x1b[0m\r\n",
            "\x1b[1;34mpassword\x1b[0m: \x1b[32m[REDACTED:password]\x1b[0m\r\n",
        ),
        (
            "\x1b[2K\x1b[1Gkey \x1b[7mAKIAFAKE7EXAMPLE2KEY\x1b[27m\x1b[?25h",
            "\x1b[2K\x1b[1Gkey \x1b[7m[REDACTED:aws-access-key-id]\x1b[27m\x1b[?25h",
        ),
        ("token=FAKEabc\x1b[0K\r\n", "token=[REDACTED:token]\x1b[0K\r\n"),
    ],
    ids=["coloured-keyword-and-value", "between-escapes", "value-ends-at-escape"],
)
def test_escape_sequences_around_secrets_are_kept(text: str, expected: str) -> None:
    assert REDACTOR.redact(text) == expected
    for i in range(len(text) + 1):
        assert stream(REDACTOR, text[:i], text[i:]) == expected


PLAIN = [
    "total 48\r\ndrwxr-xr-x  5 alice staff  160 May  1 12:00 src\r\n",
    "\x1b[?1049h\x1b[1;1H\x1b[2J\x1b[38;5;245m─── htop ───\x1b[0m  CPU[|||   12.5%]\r\n",
    "The task-management dashboard uses 1.2k tokens; passed 12 tests, 0 failed.\n",
    "def check(password_hash: bytes) -> bool:\n    return bypass or verify(password_hash)\n",
    "see https://github.com/owner/repo/blob/main/README.md#install and ssh://git@host:22\n",
    "λ café ✓ 日本語 — emoji 🎉 and a bare 'eyJ' or 'sk-' or 'ghp_' mention\n",
]


@pytest.mark.parametrize("text", PLAIN, ids=["ls", "tui", "prose", "code", "urls", "unicode"])
def test_plain_text_is_unchanged_and_not_held_back(text: str) -> None:
    assert REDACTOR.redact(text) == text
    s = StreamRedactor(REDACTOR)
    assert s.feed(text) == text
    assert s.held == 0


def test_a_possible_secret_start_is_held_until_it_is_decided() -> None:
    s = StreamRedactor(REDACTOR)
    assert s.feed("$ echo ") == "$ echo "
    assert s.feed("gh") == ""  # could become ghp_...
    assert s.feed("p_FAKE0123") == ""
    assert s.held == len("ghp_FAKE0123")
    assert s.feed("456789abcdefghijklmnopqrstuv \r\n") == "[REDACTED:github-token] \r\n"
    assert s.held == 0
    assert s.feed("gh") == ""
    assert s.feed("ost\r\n") == "ghost\r\n"  # not a token after all
    assert s.feed("tail: gh") == "tail: "
    assert s.flush() == "gh"  # flush writes the rest as it stands


def test_private_key_block_is_held_from_begin_to_end() -> None:
    key = next(r.example for r in RULES if r.name == "private-key")
    s = StreamRedactor(REDACTOR)
    out = s.feed("$ cat id\r\n")
    lines = key.splitlines(keepends=True)
    for line in lines[:-1]:
        out += s.feed(line)
    assert "BEGIN" not in out and s.held > 0
    out += s.feed(lines[-1] + "\r\n$ ") + s.flush()
    assert out == "$ cat id\r\n[REDACTED:private-key]\r\n$ "


def test_private_key_without_end_is_redacted_anyway_and_hold_is_bounded() -> None:
    body = ("MIIEFAKEpAIBAAKCAQEAFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKEFAKE\n") * 150  # ~10 KiB
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + body
    s = StreamRedactor(REDACTOR)
    out = ""
    for i in range(0, len(text), 1000):
        out += s.feed(text[i : i + 1000])
        assert s.held <= 20 * 1024
    out += s.flush()
    assert out == "[REDACTED:private-key]"
    assert REDACTOR.redact(text + "$ ") == "[REDACTED:private-key]$ "


def test_text_after_a_private_key_block_is_written_once_the_block_cannot_grow() -> None:
    # Key-shaped text after a closed block may be a second copy interleaved with it, up to a
    # bound; past it the block is decided and what follows is written, not held or swallowed
    # (regex's partial match of a lazy repeat before a literal once said it could grow forever).
    key = next(r.example for r in RULES if r.name == "private-key")
    tail = "".join(f"line {i}: the quick brown fox, jumps over 12 dogs.\r\n" for i in range(600))
    text = "$ cat id\r\n" + key + "\r\n" + tail
    s = StreamRedactor(REDACTOR)
    out = "".join(s.feed(text[i : i + 4096]) for i in range(0, len(text), 4096)) + s.flush()
    assert out == REDACTOR.redact(text) == "$ cat id\r\n[REDACTED:private-key]\r\n" + tail


def test_hold_is_released_once_a_long_candidate_cannot_be_a_secret() -> None:
    # 'eyJ' followed by more than a JWT header can hold is not a JWT: nothing stays held.
    s = StreamRedactor(REDACTOR)
    text = "eyJ" + "A" * 5000
    out = s.feed(text)
    assert len(out) + s.held == len(text) and s.held < 1100
    assert out + s.flush() == text


# ----------------------------------------------------------------- allowlist, user rules


def test_allowlist_keeps_matching_secrets_in_full_only() -> None:
    r = Redactor(allowlist=["FAKEhunter2", r"glpat-FAKE-example-\d+"])
    assert r.redact("password=FAKEhunter2") == "password=FAKEhunter2"
    assert r.redact("password=FAKEhunter23") == "password=[REDACTED:password]"
    assert r.redact("glpat-FAKE-example-01234567") == "glpat-FAKE-example-01234567"


def test_build_redactor_adds_user_patterns_and_allowlist() -> None:
    config = RedactConfig(
        patterns=(
            RedactPattern("corp-token", r"corp_[A-Za-z0-9]{12}"),
            RedactPattern("pin", r"PIN: (?P<secret>\d{4})"),
        ),
        allowlist=("corp_FAKEallowed0",),
    )
    r = build_redactor(config)
    assert r.redact("x corp_FAKE00000000 y") == "x [REDACTED:corp-token] y"
    assert r.redact("PIN: 1234") == "PIN: [REDACTED:pin]"
    assert r.redact("corp_FAKEallowed0") == "corp_FAKEallowed0"
    assert r.redact("AKIAFAKE7EXAMPLE2KEY") == "[REDACTED:aws-access-key-id]"  # built-ins stay
    text = "a corp_FAKE00000000 b PIN: 9876\n"
    for i in range(len(text) + 1):
        assert stream(r, text[:i], text[i:]) == r.redact(text)


def test_disabled_redaction_changes_nothing() -> None:
    r = build_redactor(RedactConfig(enabled=False))
    example = RULES[1].example
    assert r.redact(example) == example
    assert stream(r, example[:5], example[5:]) == example


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?<=id=)[a-f0-9]{6}",
        r"(?i)zz(?:top|bottom)+\d{2,}",
        r"(?s)<<.{3,9}?>>",
        r"\bkey-\w{5}\b(?!x)",
        r"(?i:x(?-i:Y))z{2}",
        r"(ab)\1c",  # a backreference: no prefix regex, so the whole window is held
    ],
    ids=["lookbehind", "ignorecase-repeat", "lazy-dotall", "boundaries", "scoped-flags", "backref"],
)
def test_user_pattern_shapes_are_caught_across_any_split(pattern: str) -> None:
    r = Redactor([RedactionRule("u", pattern)])
    texts = ["id=abc123 zzTOPbottom42 <<a\nbc>> key-abcde xYzz ababc end\n", "zzto", "id=ab"]
    for text in texts:
        whole = r.redact(text)
        for i in range(len(text) + 1):
            assert stream(r, text[:i], text[i:]) == whole, f"{text!r} split at {i}"
    assert r.redact(texts[0]).count("[REDACTED:u]") >= 1


def test_regexes_compile_on_first_use_not_before() -> None:
    r = Redactor([RedactionRule("broken", "(")])  # no error yet: nothing is compiled
    with pytest.raises(Exception):
        r.redact("text")


def _reference_redact(text: str, rules: tuple[RedactionRule, ...] = RULES) -> str:
    """Redact with one plain ``re.finditer`` per rule: the slow, obvious reading of the table."""
    import re

    from shellkeep.capture.redaction.engine import _Engine

    engine = _Engine(rules, ())
    hits = []
    for priority, rule in enumerate(rules):
        rx = re.compile(rule.pattern)
        group = rx.groupindex.get("secret", 0)
        for m in rx.finditer(text):
            start, end = m.span(group) if group and m.start(group) != -1 else m.span()
            if end > start:
                hits.append((start, end, m.start(), m.end(), priority, rule.name))
    return engine.apply(text, hits, 0, len(text))


@pytest.mark.parametrize(
    "text",
    [
        "\n".join(rule.example for rule in RULES),
        " | ".join(rule.example for rule in reversed(RULES)),
        "ASIASIAFAKE7EXAMPLE2KEYASIAFAKE7EXAMPLE2KEY AKIAKIAFAKE7EXAMPLE2KEY0",
        "sk-ant-api03-FAKEexampleKEY000000000000000000000000000000 sk-FAKEexample0123456789abcdefghijkl",
        "ghp_ghp_FAKE0123456789abcdefghijklmnopqrstuv gho_FAKE0123456789abcdefghijklmnopqrstuvwx",
        "AIzaAIzaSyFAKE-EXAMPLE_key00000000000000000 eyJeyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsig00",
        "base64 QUtJQUZBS0U3RVhBTVBMRTJLRVk=\r\nAKIA+/AKIAFAKE7EXAMPLE2KEY/+=\r\n" * 50,
    ],
    ids=["examples", "reversed", "overlapping-aws", "sk-prefixes", "github", "google-jwt", "base64"],
)
def test_the_one_pass_literal_scan_finds_what_a_scan_per_rule_finds(text: str) -> None:
    assert Redactor().redact(text) == _reference_redact(text)


def test_a_possible_secret_longer_than_the_hold_bound_becomes_a_marker_not_clear_text() -> None:
    # A user pattern without a length bound: its hold stops at 4 KiB, and the secret, still
    # growing there, is written as its marker; what goes on continuing it is swallowed too.
    r = Redactor([RedactionRule("corp", r"corp_[A-Za-z0-9]+"), *RULES])
    body = "FAKE" * 3000  # 12 000 characters
    text = f"before corp_{body} after\n"
    for size in (1000, 4095, 65536):
        s = StreamRedactor(r)
        out = ""
        for i in range(0, len(text), size):
            out += s.feed(text[i : i + size])
            assert s.held <= 20 * 1024
        out += s.flush()
        assert out == "before [REDACTED:corp] after\n", size
    s = StreamRedactor(r)  # past the bound in one read, then the stream ends inside the secret
    assert s.feed("corp_" + body * 2) == "[REDACTED:corp]"
    assert s.feed("FAKE") == "" and s.flush() == ""


# ----------------------------------------------------------------- source code is not a secret

CODE = {
    "getpass": 'pw = getpass.getpass("Secret: ")\n',
    "getpass-password": "password = getpass.getpass(prompt='Password: ')\n",
    "input": "password = input()\n",
    "input-prompt": 'password = input("Password: ")\n',
    "call": "token = get_token()\n",
    "environ": 'api_key=os.environ["API_KEY"]\n',
    "environ-get": 'API_KEY = os.environ.get("API_KEY")\n',
    "getenv": "secret_key = os.getenv('SECRET_KEY')\n",
    "subscript": 'password = request.form["password"]\n',
    "none": "token = None\n",
    "bool": "passwd: false\n",
    "annotation": "def login(user: str, password: str) -> bool:\n",
    "optional": "    api_key: Optional[str] = None,\n",
    "js-null": "const token = null;\n",
    "ts-type": "  token: string;\n",
    "kwarg-call": "client = Client(api_key=load_key())\n",
    "prompt-string": 'read -s -p "Password: " pw\n',
    "key-path": "key_path = /home/alice/.ssh/id_ed25519\n",
    "keyboard": "keyboard_layout = us-intl\n",
    "access-mode": "access = read-only\n",
    "auth-url": "auth_url = https://login.example.com/authorize\n",
    # A prompt string followed by more code: the quote after "Secret: " closes the prompt.
    "prompt-then-statement": 'getpass.getpass("Secret: "); print("done")\n',
    "prompt-then-or": 'password = input("Password: ") or "changeme"\n',
    "prompt-then-or-subscript": 'pw = input("Token: ") or os.environ["TOKEN"]\n',
    "prompt-then-and": 'secret = input("Secret: ") and check("y")\n',
    "prompt-then-method": 'pw = prompt("Password: ").strip() + "x"\n',
    "prompt-walrus": 'if pw := getpass("Password: "): print("ok")\n',
    "prompt-concatenated": 'print("Token: " + token + "!")\n',
    "prompt-argument": 'key = ask("API key: ", default="none")\n',
    "prompt-format": "print('password: ' % pw, 'x')\n",
    "prompt-pipe": "echo 'token: ' | tee -a log 'x'\n",
    "prompt-and-and": "test 'Password: ' && echo 'ok'\n",
    "prompt-bracket": 'msgs = ["Password: "], ["x"]\n',
    "prompt-brace": "d = {'Password: '}, {'x'}\n",
    "prompt-dot": 'log("Secret: ".upper(), "x")\n',
    "prompt-if-else": 'msg = f("Token: ") if a else g("b")\n',
    "command-substitution": 'echo "token: $(cat token.txt)"\n',
    "variable": "export GITHUB_TOKEN=${GITHUB_TOKEN}\n",
}


@pytest.mark.parametrize("text", CODE.values(), ids=CODE.keys())
def test_source_code_that_names_secrets_is_stored_as_it_was(text: str) -> None:
    assert REDACTOR.redact(text) == text
    for i in range(len(text) + 1):
        assert stream(REDACTOR, text[:i], text[i:]) == text


# A vendor whose tokens have no format of their own (gitleaks finds them by the vendor's
# name beside them) is caught by the keyword rules: the variable names a key, token,
# secret, password or credential.
VENDOR_KEYWORDS = {
    "adafruit": "ADAFRUIT_IO_KEY=FAKE7d3kQ9zX1vB7nM2pL5wRaa",
    "algolia": "ALGOLIA_API_KEY=FAKE0123456789abcdef01234567",
    "asana": "asana_client_secret: FAKE0123456789abcdef0123456789",
    "bitbucket": "BITBUCKET_CLIENT_SECRET='FAKEbitbucketSecret0123456789abcdef'",
    "cloudflare": "CLOUDFLARE_API_TOKEN=FAKEcloudflare0123456789abcdefghijklmn",
    "cohere": "CO_API_KEY=FAKEcohere0123456789abcdefghijklmnopqrst",
    "contentful": "contentful_delivery_token = FAKEcontentful0123456789abcdefghij",
    "datadog": "DD_API_KEY=FAKEdatadog0123456789abcdef0123456789",
    "discord": "DISCORD_BOT_TOKEN=FAKEdiscord.0123456789.abcdefghijklmnop",
    "dropbox": "DROPBOX_ACCESS_TOKEN=FAKEdropbox0123",
    "fastly": "FASTLY_API_TOKEN=FAKEfastly0123456789abcdef012345",
    "heroku": "HEROKU_API_KEY=FAKE0000-1111-2222-3333-444455556666",
    "intercom": "INTERCOM_ACCESS_TOKEN=FAKEintercom0123456789",
    "jfrog": "JFROG_IDENTITY_TOKEN=FAKEjfrog0123456789abcdef",
    "kraken": "KRAKEN_PRIVATE_KEY=FAKEkraken0123456789abcdef+/0123456789==",
    "launchdarkly": "LAUNCHDARKLY_SDK_KEY=FAKE-sdk-0123-4567-89ab-cdef01234567",
    "linkedin": "LINKEDIN_CLIENT_SECRET=FAKElinkedin0123",
    "mattermost": "MATTERMOST_ACCESS_TOKEN=FAKEmattermost01234567890a",
    "netlify": "NETLIFY_AUTH_TOKEN=FAKEnetlify0123456789abcdef0123456789abcd",
    "okta": "OKTA_API_TOKEN=00FAKEokta0123456789abcdef0123456789abcd",
    "sentry": "SENTRY_AUTH_TOKEN=FAKEsentry0123456789abcdef0123456789",
    "snyk": "SNYK_TOKEN=FAKE0000-1111-2222-3333-444455556666",
    "sumologic": "SUMO_ACCESS_KEY=FAKEsumo0123456789abcdef01234567",
    "travis": "TRAVIS_API_TOKEN=FAKEtravis0123456789ab",
    "twitch": "TWITCH_CLIENT_SECRET=FAKEtwitch0123456789abcdef0123",
    "twitter": "TWITTER_ACCESS_SECRET=FAKEtwitter0123456789abcdef0123456789abcdef",
    "zendesk": "ZENDESK_API_TOKEN=FAKEzendesk0123456789abcdef0123456789",
}


@pytest.mark.parametrize("text", VENDOR_KEYWORDS.values(), ids=VENDOR_KEYWORDS.keys())
def test_a_vendor_token_without_a_format_is_caught_by_its_variable_name(text: str) -> None:
    redacted = REDACTOR.redact(text + "\n")
    assert "FAKE" not in redacted and "[REDACTED:" in redacted
    assert stream(REDACTOR, text[:20], text[20:] + "\n") == redacted


@pytest.mark.parametrize(
    ("text", "secret"),
    [
        ('password = "FAKEhunter2"; connect()\n', "FAKEhunter2"),
        ('login(user, password="FAKEhunter2")\n', "FAKEhunter2"),
        ('{"token": "FAKEtok3n", "n": 1}\n', "FAKEtok3n"),
        ("export TOKEN='FAKEtok3n' && run\n", "FAKEtok3n"),
        ('secret: "FAKE or not"\n', "FAKE or not"),
        ('AUTH_KEY="+FAKE8f3kQ9zX1vB7nM2pL5wR"\n', "FAKE8f3kQ9zX1vB7nM2pL5wR"),
    ],
    ids=["statement", "kwarg", "json", "shell-and", "value-with-or", "generic-plus"],
)
def test_a_quoted_secret_followed_by_code_is_still_caught(text: str, secret: str) -> None:
    assert secret not in REDACTOR.redact(text)
    assert secret not in stream(REDACTOR, text[:12], text[12:])


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_each_rule_declares_keywords_its_example_holds_where_it_says(rule: RedactionRule) -> None:
    """The prefilter tries a rule only at its keywords: a wrong table would miss its secrets."""
    import re

    assert rule.keywords, f"{rule.name}: every built-in rule declares its keywords"
    m = re.search(rule.pattern, rule.example)
    assert m is not None
    ci = rule.pattern.startswith("(?i)")
    match = m.group(0).lower() if ci else m.group(0)
    if ci:
        assert all(k == k.lower() for k in rule.keywords), f"{rule.name}: keywords of a (?i) rule are lower-case"
    if rule.keyword_within:
        at = min((match.find(k) for k in rule.keywords if k in match), default=-1)
        assert 0 <= at <= rule.keyword_within, f"{rule.name}: no keyword within {rule.keyword_within} of {match!r}"
    else:
        assert match.startswith(rule.keywords), f"{rule.name}: {match!r} starts with none of {rule.keywords}"
    if rule.requires:
        assert any(ch in m.group(0) for ch in rule.requires), f"{rule.name}: {match!r} holds none of {rule.requires!r}"


def test_a_user_pattern_is_keyword_free_unless_it_starts_with_plain_characters() -> None:
    from shellkeep.capture.redaction import user_rule

    assert user_rule("u", r"corp_[A-Za-z0-9]{12}").keywords == ("corp_",)
    assert user_rule("u", r"PIN: (?P<secret>\d{4})").keywords == ("PIN: ",)
    assert user_rule("u", r"ab?c").keywords == ()  # "b" is optional: "a" alone is too short
    assert user_rule("u", r"\.env-\w+").keywords == (".env-",)
    for free in (r"(?i)zz\d", r"(?<=id=)[a-f0-9]{6}", r"abc|xyz", r"\bkey-\w{5}"):
        assert user_rule("u", free).keywords == (), free


# ----------------------------------------------------------------- what the screen shows

TOKEN = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"
SCREEN = {
    # grep --color=always FAKE: the hit highlighted in the middle of the token
    "grep-middle": f"notes.txt:3:{TOKEN[:4]}\x1b[01;31m\x1b[K{TOKEN[4:8]}\x1b[m\x1b[K{TOKEN[8:]} end\r\n",
    # grep --color=always gh: the highlight cuts the literal itself
    "grep-literal": f"\x1b[01;31m\x1b[K{TOKEN[:2]}\x1b[m\x1b[K{TOKEN[2:]}\r\n",
    # syntax colouring from the second character on
    "first-char-alone": f"x = \x1b[33m{TOKEN[0]}\x1b[1;33m{TOKEN[1:]}\x1b[0m\r\n",
    # an SGR run between every two characters
    "sgr-each": "".join(f"\x1b[3{i % 8}m{c}" for i, c in enumerate(TOKEN)) + "\x1b[0m\r\n",
    # less/vim: the cursor placed before each of the first characters
    "cursor-moves": f"\x1b[3;5H{TOKEN[0]}\x1b[3;6H{TOKEN[1]}\x1b[3;7H{TOKEN[2:20]}\x1b[K{TOKEN[20:]}\r\n",
    # a typed token corrected: the tty's echo of a backspace erase, and an overstrike
    "erase-echo": f"$ {TOKEN[:10]}x\b \b{TOKEN[10:]}\r\n",
    "overstrike": f"{TOKEN[:10]}x\b{TOKEN[10:]}\r\n",
    # the keystrokes themselves: DEL erases the character before it
    "typed-del": f"{TOKEN[:10]}xy\x7f\x7f{TOKEN[10:]}\r",
    # a keyword rule with an erase-line between keyword and value
    "keyword-el": "password\x1b[K=\x1b[KFAKEhunter2 next\r\n",
}


def shown(text: str) -> str:
    """Return what a terminal shows of ``text`` (the redactor's own view, for the checks)."""
    from shellkeep.capture.redaction.screen_view import _ScreenView

    return _ScreenView(text).text


@pytest.mark.parametrize("text", SCREEN.values(), ids=SCREEN.keys())
def test_a_secret_drawn_with_escapes_or_backspaces_inside_is_caught_split_anywhere(text: str) -> None:
    whole = REDACTOR.redact(text)
    secret = "FAKEhunter2" if "password" in text else TOKEN
    assert secret in shown(text)  # the case is real: the screen shows the secret
    assert "[REDACTED:" in whole
    assert secret not in shown(whole) and "FAKE" not in whole and "FAKE" not in shown(whole)
    for i in range(len(text) + 1):
        assert stream(REDACTOR, text[:i], text[i:]) == whole, f"split at {i}"
    assert stream(REDACTOR, *text) == whole  # one character at a time


def test_the_escapes_around_a_secret_drawn_in_colour_are_kept() -> None:
    text = f"\x1b[35mnotes.txt\x1b[m: \x1b[1m{TOKEN[:4]}\x1b[31m{TOKEN[4:]}\x1b[m done\r\n"
    assert REDACTOR.redact(text) == "\x1b[35mnotes.txt\x1b[m: \x1b[1m[REDACTED:github-token]\x1b[m done\r\n"


COLOURED = [
    "drwxr-xr-x  5 root root 4096 May  9 \x1b[0m\x1b[01;34m__pycache__\x1b[0m\r\n-rw-r--r-- 1 root root 9 May  9 format.rst\r\n",
    "\x1b[35m\x1b[Klib/os.py\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\x1b[32m\x1b[K42\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K"
    "    \x1b[01;31m\x1b[Kdef\x1b[m\x1b[K path(self, key_name): return self.token_map[key_name]\r\n",
    "\x1b[?1049h\x1b[1;1H\x1b[2J\x1b[7m pass \x1b[0m\x1b[2;1Hsk\x1b[0m ip\x1b[3;1Hgh\x1b[1mo\x1b[0mst\r\n",
    "typed: ls\x7f\x7fcd src\r\n",
]


@pytest.mark.parametrize("text", COLOURED, ids=["ls", "grep", "tui", "del"])
def test_coloured_output_without_secrets_is_unchanged(text: str) -> None:
    assert REDACTOR.redact(text) == text
    for i in range(len(text) + 1):
        assert stream(REDACTOR, text[:i], text[i:]) == text, f"split at {i}"
    s = StreamRedactor(REDACTOR)
    assert s.feed(text) == text and s.held == 0


def test_an_escape_sequence_cut_by_a_read_is_held_until_it_ends() -> None:
    s = StreamRedactor(REDACTOR)
    assert s.feed("done \x1b[01;3") == "done "
    assert s.held == len("\x1b[01;3")
    assert s.feed("1mok\x1b[0m\r\n") == "\x1b[01;31mok\x1b[0m\r\n"
    assert s.held == 0


def test_output_markers_keep_the_columns_of_their_secrets_and_input_markers_do_not() -> None:
    token = "ghp_FAKE0123456789abcdefghijklmnopqrstuv"  # 40 columns; its marker 23
    text = f"a {token} b\r\npassword=FAKEhunter2 c\r\nd \x1b[1m{token[:10]}\x1b[0m{token[10:]} e\r\n"
    s = StreamRedactor(REDACTOR, keep_columns=True)
    out = s.feed(text) + s.flush()
    lines = out.split("\r\n")
    assert lines[0] == "a [REDACTED:github-token]" + " " * 17 + " b"
    assert lines[1] == "password=[REDACTED:password] c"  # 11 columns: " c" is drawn after the marker, not in it
    assert lines[2] == "d \x1b[1m[REDACTED:github-token]" + " " * 17 + " e"  # the width it showed
    assert stream(REDACTOR, text) == REDACTOR.redact(text)  # input: bare markers
    key = next(r.example for r in RULES if r.name == "private-key")
    s = StreamRedactor(REDACTOR, keep_columns=True)
    assert s.feed(key + "\r\n") + s.flush() == "[REDACTED:private-key]\r\n"  # over several lines: bare


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # The cursor moves on first: a cursor-back over the marker's 8 extra columns keeps them all.
        ("password=FAKEhunter2\r\nnext\r\n", "password=[REDACTED:password]\x1b[8D\r\nnext\r\n"),
        ("password=FAKEhunter2\x1b[0m\x1b[K\r\nx\r\n", "password=[REDACTED:password]\x1b[0m\x1b[K\x1b[8D\r\nx\r\n"),
        # Text drawn next goes after the marker; a run of padding on its row gives back the columns.
        ('password="FAKEhunter2" end\r\n', 'password="[REDACTED:password]" end\r\n'),
        ("│ password=FAKEhunter2 ok            │\r\n", "│ password=[REDACTED:password] ok    │\r\n"),
        ("password=FAKEhunter2\x1b[1m ok  \x1b[0m        |\r\n", "password=[REDACTED:password]\x1b[1m ok \x1b[0m |\r\n"),
    ],
    ids=["line-end", "cursor-move", "quote-after", "tui-padding", "padding-after-colour"],
)
def test_text_after_a_narrower_marker_never_lands_inside_it(text: str, expected: str) -> None:
    # Whole, or split at any offset (what the marker owes is settled by the next read). A run
    # of padding split by a read may give one space less: only the whole text is pinned then.
    offsets = range(len(text) + 1) if "  " not in text else (len(text),)
    for i in offsets:
        s = StreamRedactor(REDACTOR, keep_columns=True)
        assert s.feed(text[:i]) + s.feed(text[i:]) + s.flush() == expected, f"split at {i}"


def test_a_narrower_marker_at_the_end_of_a_read_owes_its_cursor_back_to_the_next_one() -> None:
    corp = Redactor(rules=(user_rule("corp", r"(?:corp|CORP)_[0-9]{6}"),))  # no keyword: release() writes it
    s = StreamRedactor(corp, keep_columns=True)
    assert s.feed("id corp_123456") + s.release() == "id [REDACTED:corp]"  # 11 columns, the marker 15
    assert s.feed("\x1b[0m next\r\n") + s.flush() == "\x1b[0m next\r\n"  # drawn next: after the marker
    s = StreamRedactor(corp, keep_columns=True)
    assert s.feed("id corp_123456") + s.release() == "id [REDACTED:corp]"
    assert s.feed("\x1b[0m\r\nok\r\n") + s.flush() == "\x1b[0m\x1b[4D\r\nok\r\n"  # the cursor moves first: back over 4



def test_an_edit_that_lands_inside_a_marker_is_followed_by_a_redraw_of_the_line() -> None:
    # bash's output for Left x3, BackSpace, "w" after a typed password (one read per key), and
    # the same edit with the next lines in the same read: the screen shows the marker whole.
    from shellkeep.terminal.emulator import Terminal
    from shellkeep.termsize import TermSize

    typed = ["$ ", *'password = "FAKEhunter2x"', "\b", "\b", "\b", '\b\x1b[1Pr2"\b\b\b', 'wr2"\b\b\b', "\r\nnext\r\n"]
    for reads in (typed, ["".join(typed)]):
        s = StreamRedactor(REDACTOR, keep_columns=True)
        out = "".join(s.feed(read) for read in reads) + s.flush()
        screen = Terminal(TermSize(60, 4))
        screen.feed(out)
        assert screen.text_lines()[:2] == ['$ password = "[REDACTED:password]"', "next"], repr(out)
        assert "hunter" not in out
    # An edit after the marker lands where bash meant it: nothing is redrawn.
    text = '$ password = "FAKEhunter2x" more\b\b\b\b\x1b[1Pmore\b\b\b\bX\r\n'
    s = StreamRedactor(REDACTOR, keep_columns=True)
    assert s.feed(text) + s.flush() == '$ password = "[REDACTED:password]" more\b\b\b\b\x1b[1Pmore\b\b\b\bX\r\n'


@pytest.mark.parametrize("pieces", ["whole", "by-character"], ids=str)
def test_a_secret_a_line_editor_wraps_at_the_margin_leaves_no_piece_in_clear(pieces: str) -> None:
    # readline on an 80-column xterm (xenl): the 80th character, then " \r", then the rest.
    secret = "sk-ant-api03-" + "A" * 90 + "-FAKEAA"
    first = 80 - len("$ echo ")
    text = f"$ echo {secret[:first]} \r{secret[first:]} done\r\nok\r\n"
    s = StreamRedactor(REDACTOR, keep_columns=True)
    out = s.feed(text) if pieces == "whole" else "".join(s.feed(ch) for ch in text)
    out += s.flush()
    assert "AAAA" not in out and "FAKEAA" not in out
    row1, row2 = out.split(" \r", 1)
    assert row1 == "$ echo [REDACTED:anthropic-key]" + " " * (first - len("[REDACTED:anthropic-key]"))
    assert row2 == " " * len(secret[first:]) + " done\r\nok\r\n"  # the columns of the row kept
    # A " \r" after a marker ends its wrapped part at the first character no token holds.
    s = StreamRedactor(REDACTOR, keep_columns=True)
    marker = "[REDACTED:anthropic-key]" + " " * (len(secret) - 24)
    assert s.feed(f"{secret} \r") + s.feed("xyz ok\r\n") == marker + " \r    ok\r\n"
    assert s.feed(" \rnext ok\r\n") == " \rnext ok\r\n"  # no marker before this wrap: nothing is blanked


# ----------------------------------------------------------------- release after a quiet spell (output)

KEY_EXAMPLE = next(r.example for r in RULES if r.name == "private-key")


def stream_columns(text: str) -> str:
    s = StreamRedactor(REDACTOR, keep_columns=True)
    return s.feed(text) + s.flush()


@pytest.mark.parametrize(
    "text, written",
    [
        ("Type yes to deploy", "Type yes to "),  # 'deploy': 14 characters of a Terraform token before '.atlasv1.'
        ("hello from vim", "hello from "),  # 'vim' + a digit + 'Q~' starts an Azure client secret
        ("Type yes", "Type "),  # 's' is the start of 's.' (Vault), 'sk-' (OpenAI)...: a literal cut short
        ("\x1b[?25h\x1b[2C\x1b[", "\x1b[?25h\x1b["),  # an escape sequence cut by the read (a TUI waiting)
    ],
    ids=["word", "vim", "cut-literal", "cut-escape"],
)
def test_release_writes_a_tail_no_starting_literal_begins(text: str, written: str) -> None:
    s = StreamRedactor(REDACTOR, keep_columns=True)
    assert s.feed(text) == written
    assert s.held > 0  # held while the output flows
    assert written + s.release() == text
    assert s.held == 0


@pytest.mark.parametrize(
    "first, rest",
    [
        ("$ echo ghp_FAKE0123456", "789abcdefghijklmnopqrstuv\r\n"),
        ("key AKIAFAKE7", "EXAMPLE2KEY\r\n"),
        ("sk-ant-api03-FAKE", "exampleKEY000000000000000000000000000000-FAKEAA\r\n"),
        ("\x1b[32mghp_FAKE01\x1b[", "0m23456789abcdefghijklmnopqrstuv\r\n"),
        (KEY_EXAMPLE[:60], KEY_EXAMPLE[60:] + "\r\n"),
        ("Enter your API token: ", "FAKEpastedTok3n00\r\n"),
        ("password: FAKE", "hunter2\r\n"),
        ("id pat-", "na1-01234567-89ab-cdef-0123-456789abcdef\r\n"),
    ],
    ids=["github", "aws", "anthropic", "coloured", "private-key", "prompt", "keyword", "shared-start"],
)
def test_release_keeps_holding_a_token_begun_with_its_literal_then_one_marker(first: str, rest: str) -> None:
    s = StreamRedactor(REDACTOR, keep_columns=True)
    out = s.feed(first)
    assert s.release() == ""  # quiet, but a token format's literal has been seen whole
    assert s.held > 0
    out += s.feed(rest) + s.flush()
    assert out.count("[REDACTED:") == 1
    whole = first + rest
    assert out == stream_columns(whole)


@pytest.mark.parametrize(
    "first, rest, name",
    [
        ("id abc8", "Q~FAKE-example.FAKE_example~FAKE00 ok\r\n", "azure-client-secret"),
        ("sent 123456789", ":AAFAKEFAKE0000FAKE0000FAKE0000FAKEE ok\r\n", "telegram-bot-token"),
        ("x g", "hp_FAKE0123456789abcdefghijklmnopqrstuv\r\n", "github-token"),
    ],
    ids=["azure", "telegram", "cut-literal"],
)
def test_a_secret_begun_in_released_text_still_has_its_rest_replaced(first: str, rest: str, name: str) -> None:
    s = StreamRedactor(REDACTOR)
    out = s.feed(first)
    out += s.release()
    assert s.held == 0
    later = s.feed(rest) + s.flush()
    assert later.startswith(marker(name)), later
    assert later.endswith(rest[len(rest.rstrip("\r\n ok")) :])
    assert rest.split()[0].strip(":") not in out + later


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.name)
def test_release_at_any_offset_leaves_no_clear_text_after_it(rule: RedactionRule) -> None:
    secret = secret_of(rule)
    text = "x " + rule.example + " \r\n"
    start = text.index(secret)
    for k in range(1, len(text)):
        s = StreamRedactor(REDACTOR)
        out = s.feed(text[:k]) + s.release()
        later = s.feed(text[k:]) + s.flush()
        assert "[REDACTED:" in out + later, (k, out, later)
        clear_after = secret[max(0, k - start) :]
        if k < start + len(secret) and len(clear_after) >= 4:
            assert clear_after not in later, (k, later)


def _quiet_texts() -> list[str]:
    """Short texts as typed keys and their echoes make them: every prefix of every example,
    after a space and glued to a word, and plain words."""
    texts = ["", "a", "deploy", "vim main", "ls -la\r\n", "abc1", "do", "dop_", "squ", "Pass", "x.atlasv1"]
    for rule in RULES:
        example = rule.example[:80]
        for k in range(1, len(example) + 1):
            texts += ["$ " + example[:k], "0" + example[:k]]
    return texts


def test_the_quiet_check_of_short_texts_gives_the_full_scans_answers() -> None:
    # The C-only path for short texts without a rule's literal (typed keys: the writer's slice
    # of work holds the GIL while the relay waits) must find what scanning every rule finds
    # and hold back at least as much (a start spelt out, ``dop_``, holds at once).
    from shellkeep.capture.redaction.engine import _Engine

    quick = _Engine(RULES, ())
    full = _Engine(RULES, ())
    full._can_be_quiet = False  # every text goes through the per-rule scans
    quiet_seen = 0
    for text in _quiet_texts():
        quiet_seen += quick._quiet(text)
        assert sorted(quick.hits(text)) == sorted(full.hits(text)), text
        for first in (0, min(2, len(text))):
            assert quick.hold_start(text, first) <= full.hold_start(text, first), (text, first)
            if text.startswith("$ "):
                assert quick.hold_start(text, first) == full.hold_start(text, first), (text, first)
    assert quiet_seen > 1000  # the path under test is taken


@pytest.mark.parametrize(
    ("pattern", "greedy"),
    [
        (r"B.{0,50}?EN", r"B.{0,50}EN"),
        (r"a*?b+?c??d{2}?e", r"a*b+c?d{2}e"),
        (r"\*?x[?*]?(?:y)?(?P<n>z)??", r"\*?x[?*]?(?:y)?(?P<n>z)?"),
        (r"(?i)(?<=k)x{2,}?y", r"(?i)(?<=k)x{2,}y"),
    ],
    ids=["bounded", "each-quantifier", "escapes-and-classes", "flags-and-lookbehind"],
)
def test_the_partial_match_regex_is_the_pattern_made_greedy(pattern: str, greedy: str) -> None:
    from shellkeep.capture.redaction.compiled import _greedy

    assert _greedy(pattern) == greedy


@pytest.mark.parametrize("literal", ["ghp_", "sk-", "glpat-", "AKIA"])
def test_a_token_literal_on_an_earlier_row_does_not_hold_a_later_row(literal: str) -> None:
    """A full-screen TUI (OpenCode) draws with cursor addressing and no CR or LF: a token
    format's literal drawn on one row must not keep the last word of another row held, as it
    did when every addressed row counted as one line (the answer never reached the disk)."""
    stream = StreamRedactor(Redactor(), keep_columns=True)
    written = stream.feed(f"\x1b[3;1Hnote {literal}")
    written += stream.feed("\x1b[4;1Hcolumns \x1b[K")
    written += stream.feed("\x1b[30;2H   Echo: the second word is")
    written += stream.feed(" pear\x1b[31;1H")
    written += stream.release()
    assert written.endswith("the second word is pear\x1b[31;1H") and stream.held == 0

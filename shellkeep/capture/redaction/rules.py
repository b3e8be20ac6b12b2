"""Own the redaction rules: the one table of (name, pattern, example, keywords).

``RULES`` covers the token formats of gitleaks' default rule set (config/gitleaks.toml, read
2026-07) written from the vendors' published formats, plus keyword and generic high-entropy
assignments. A pattern is a Python regex; when it has a group named ``secret`` only that
group is replaced (``password=[REDACTED:password]``), else the whole match; ``min_entropy``
drops a match whose secret is less random than that (Shannon bits per character). Every
example is fake, shaped so that its rule matches it; the tests feed each one alone, inside
text and split at every offset. Each rule declares its prefilter keywords, as gitleaks'
``keywords = [...]`` do, and a test proves every example holds one where the rule says.
"""

from __future__ import annotations

from dataclasses import dataclass

MARKER = "[REDACTED:{name}]"
"""What a secret becomes; ``{name}`` is the rule's name."""

MARKER_PREFIX = MARKER.split("{", 1)[0]
"""The start of every marker, to count them."""

@dataclass(frozen=True, slots=True)
class RedactionRule:
    """One redaction rule: its marker name, a Python regex, a fake example it matches, and
    the keywords the prefilter looks for.

    keywords: strings one of which every match starts with, lower-case for a pattern that is
    case-insensitive as a whole (``(?i)`` first); the rule is only tried where one is found.
    keyword_within: for a format without a fixed start (the Azure secret's ``Q~`` after 4
    characters), the most characters a match has before its keyword; the rule is then
    searched in a text that holds one, and a hold looked for that far before the keywords
    and the end. A rule without keywords (a user's pattern) is searched in every text.
    requires: characters one of which every match holds (``:=`` of an assignment); a text
    without any is not searched for the rule's matches (its hold is still looked for).
    """

    name: str
    pattern: str
    example: str = ""
    min_entropy: float = 0.0  # Shannon bits per character the secret needs (0: any)
    keywords: tuple[str, ...] = ()
    keyword_within: int = 0
    requires: str = ""


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


_RANDOM_VALUE = (
    r"(?P<secret>(?![./~])(?=[A-Za-z_.+/=~-]{0,256}[0-9])(?=[0-9_.+/=~-]{0,256}[A-Za-z])[A-Za-z0-9_.+/=~-]{16,256})"
    r"(?![A-Za-z0-9_.+/=~-])"
)
"""A value that looks random: 16+ characters of a token's alphabet, with letters and digits."""

VENDORS = (
    # gitleaks' keyword rules (config/gitleaks.toml, 2026-07): a vendor's name before the value.
    "adafruit", "adobe", "airtable", "algolia", "alibaba", "asana", "beamer", "bitbucket", "bittrex",
    "meraki", "cloudflare", "codecov", "cohere", "co_api_key", "coinbase", "confluent", "contentful",
    "datadog", "discord", "droneci", "dropbox", "etsy", "facebook", "fastly", "finicity", "finnhub",
    "flickr", "freshbooks", "gitter", "heroku", "hubspot", "intercom", "jfrog", "artifactory", "bintray",
    "kraken", "kucoin", "launchdarkly", "linear", "linkedin", "linked_in", "linked-in", "looker", "mailgun",
    "mattermost", "messagebird", "message_bird", "message-bird", "netlify", "new_relic", "newrelic",
    "new-relic", "nytimes", "okta", "plaid", "privateai", "private_ai", "private-ai", "rapidapi",
    "sendbird", "sentry", "snyk", "sonar", "squarespace", "sumo", "travis", "twitch", "twitter",
    "yandex", "zendesk",
    # Model routers, gateways and providers whose keys have no prefix of their own.
    "portkey", "helicone", "litellm", "openrouter", "mistral", "deepseek", "together", "fireworks",
    "groq", "perplexity", "anyscale", "deepinfra", "voyage", "cerebras", "replicate", "huggingface",
    "requesty", "sambanova", "baseten", "novita", "ai21", "wandb", "serper", "exa_", "brave", "kilocode",
    "martian",
)
"""Vendor names that make an assignment's random value a secret (the rule ``vendor-secret``)."""

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
    RedactionRule("private-key", _PRIVATE_KEY, _EXAMPLE_KEY, keywords=('-----BEGIN',)),
    # -- cloud providers
    RedactionRule(
        "aws-access-key-id", r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}", "AKIAFAKE7EXAMPLE2KEY",
        keywords=('A3T', 'ABIA', 'ACCA', 'AKIA', 'ASIA'),
    ),
    RedactionRule(
        "aws-secret-access-key",
        rf"(?i)(?:aws_?secret_?access_?key|secretaccesskey){_SEP}(?P<secret>[A-Za-z0-9/+=]{{40}})",
        "aws_secret_access_key = FAKEwJalrXUtnFEMI/K7MDENG/bPxRfiEXAMPLE1",
        keywords=('aws', 'secretaccesskey'), requires=":=",
    ),
    RedactionRule(
        "aws-bedrock-key",
        r"ABSK[A-Za-z0-9+/]{109,269}={0,2}|bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t[A-Za-z0-9+/=%&-]{0,4000}",
        "ABSK" + "QmVkcm9ja0FAKE" * 8 + "FAKE=",
        keywords=('ABSK', 'bedrock-api-key-YmVkcm9jay5hbWF6b25hd3MuY29t'),
    ),
    RedactionRule("google-api-key", r"AIza[0-9A-Za-z_-]{35}", "AIzaSyFAKE-EXAMPLE_key00000000000000000", keywords=('AIza',)),
    RedactionRule("alibaba-access-key-id", rf"{_NW}LTAI[A-Za-z0-9]{{20}}{_END}", "LTAIFAKE0123456789abcdef", keywords=('LTAI',)),
    RedactionRule(
        # A client secret has no prefix of its own: three characters, a digit, then "Q~".
        "azure-client-secret", r"(?<![A-Za-ln-z0-9_~.])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}",
        "abc8Q~FAKE-example.FAKE_example~FAKE00",
        keywords=('Q~',), keyword_within=4,
    ),
    RedactionRule("digitalocean-token", r"do[opr]_v1_[a-f0-9]{64}", "dop_v1_" + FAKE_HEX * 4, keywords=('doo_v1_', 'dop_v1_', 'dor_v1_')),
    RedactionRule("heroku-api-key", r"HRKU-AA[0-9A-Za-z_-]{58}", "HRKU-AA" + _F * 7 + "FA", keywords=('HRKU-AA',)),
    RedactionRule(
        "flyio-token",
        r"fo1_[\w-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,2048}={0,3}|fm2_[A-Za-z0-9+/]{100,2048}={0,3}",
        "fo1_" + _F * 5 + "FAK",
        keywords=('fm1a_', 'fm1r_', 'fm2_', 'fo1_'),
    ),
    RedactionRule("cloudflare-origin-ca-key", r"v1\.0-[a-f0-9]{24}-[a-f0-9]{146}", "v1.0-" + FAKE_HEX[:8] * 3 + "-" + (FAKE_HEX * 10)[:146], keywords=('v1.0-',)),
    RedactionRule("hashicorp-tf-token", r"(?<![A-Za-ln-z0-9])[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,70}", "FAKEexample000.atlasv1." + _F * 8, keywords=('.atlasv1.',), keyword_within=14),
    RedactionRule("scalingo-token", r"tk-us-[\w-]{48}", "tk-us-" + _F * 6, keywords=('tk-us-',)),
    RedactionRule("pulumi-token", r"pul-[a-f0-9]{40}", "pul-" + (FAKE_HEX * 3)[:40], keywords=('pul-',)),
    RedactionRule("infracost-token", r"ico-[A-Za-z0-9]{32}", "ico-" + _F * 4, keywords=('ico-',)),
    RedactionRule("openshift-token", r"sha256~[\w-]{43}", "sha256~" + _F * 5 + "FAK", keywords=('sha256~',)),
    RedactionRule("yandex-key", r"t1\.[A-Za-z0-9_-]{8,512}={0,2}\.[A-Za-z0-9_-]{86}={0,2}|AQVN[A-Za-z0-9_-]{35,38}|YC[A-Za-z0-9_-]{38}" + _END, "AQVN" + _F * 4 + "FAK", keywords=('AQVN', 'YC', 't1.')),
    # -- AI model providers
    RedactionRule(
        "anthropic-key",
        r"sk-ant-[A-Za-z0-9_-]{20,250}",
        "sk-ant-api03-FAKEexampleKEY000000000000000000000000000000-FAKEAA",
        keywords=('sk-ant-',),
    ),
    # Model routers, gateways and newer providers: formats from the vendors' own code and docs
    # and trufflehog's detectors (pkg/detectors, read 2026-08), not in gitleaks' default set.
    RedactionRule("openrouter-key", r"sk-or-v1-[a-f0-9]{64}", "sk-or-v1-" + FAKE_HEX * 4, keywords=('sk-or-v1-',)),
    RedactionRule(
        # LiteLLM proxy virtual keys: "sk-" + secrets.token_urlsafe(16) (key_management_endpoints.py).
        "litellm-key", r"(?<![A-Za-ln-z0-9_-])sk-(?=[\w-]{0,21}[0-9])(?=[\w-]{0,21}[A-Za-z])[A-Za-z0-9_-]{22}" + r"(?![\w-])",
        "sk-FAKE0ex_ample-Key00Abc", min_entropy=3.0, keywords=('sk-',),
    ),
    RedactionRule("helicone-key", r"sk-helicone-(?:eu-)?[a-z0-9]{7}(?:-[a-z0-9]{7}){3}", "sk-helicone-fake000-fake001-fake002-fake003", keywords=('sk-helicone-',)),
    RedactionRule("together-key", r"tgp_v1_[A-Za-z0-9_-]{43}", "tgp_v1_" + _F * 5 + "FAK", keywords=('tgp_v1_',)),
    RedactionRule("fireworks-key", rf"{_NW}fw_(?=[A-Za-z]{{0,63}}[0-9])[A-Za-z0-9]{{20,64}}{_END}", "fw_FAKE8f3kQ9zX1vB7nM2pL5wRt", min_entropy=3.0, keywords=('fw_',)),
    RedactionRule("langsmith-key", r"lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}", "lsv2_pt_" + FAKE_HEX * 2 + "_" + FAKE_HEX[:10], keywords=('lsv2_pt_', 'lsv2_sk_')),
    RedactionRule("langfuse-key", r"sk-lf-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "sk-lf-01234567-89ab-cdef-0123-456789abcdef", keywords=('sk-lf-',)),
    RedactionRule("pinecone-key", r"pcsk_[A-Za-z0-9]{5,6}_[A-Za-z0-9]{63}", "pcsk_FAKE0_" + _F * 7 + "FAKEEXA", keywords=('pcsk_',)),
    RedactionRule("elevenlabs-key", rf"{_NW}sk_[a-f0-9]{{48}}{_END}", "sk_" + FAKE_HEX * 3, keywords=('sk_',)),
    # Where no source gives a length, a bounded range (said beside the rule). Before openai-key:
    # csk-... and rqsty-sk-... hold "sk-" + a body that rule would take, leaving their prefix.
    RedactionRule(
        # Tavily: "tvly-" + 32 letters and digits (dashboards, SDK examples, 2025-26); newer keys
        # "tvly-dev-" + a body with dashes whose length no source gives: 32 to 64 characters.
        "tavily-key", r"tvly-(?:(?:dev|prod)-)?[A-Za-z0-9][A-Za-z0-9_-]{31,63}(?![\w-])",
        "tvly-" + _F * 4, keywords=('tvly-',),
    ),
    RedactionRule("vercel-ai-gateway-key", rf"{_NW}vck_[A-Za-z0-9]{{56}}{_END}", "vck_" + _F * 7, keywords=('vck_',)),
    RedactionRule(
        # Cerebras: "csk-" + 48 lower-case letters and digits as printed; detectors take 32 to 48.
        "cerebras-key", rf"{_NW}csk-[A-Za-z0-9]{{32,48}}{_END}", "csk-" + "fake0000" * 6, keywords=('csk-',),
    ),
    RedactionRule(
        # Requesty: "rqsty-sk-" + base64 of 80 bytes (108 characters as printed); no published
        # length: 100 to 120 characters.
        "requesty-key", r"rqsty-sk-[A-Za-z0-9+/]{100,120}={0,2}", "rqsty-sk-" + _F * 13 + "FAK=", keywords=('rqsty-sk-',),
    ),
    RedactionRule("firecrawl-key", rf"{_NW}fc-[a-f0-9]{{32}}{_END}", "fc-" + FAKE_HEX * 2, keywords=('fc-',)),
    RedactionRule("e2b-key", rf"{_NW}e2b_[a-f0-9]{{40}}{_END}", "e2b_" + (FAKE_HEX * 3)[:40], keywords=('e2b_',)),
    RedactionRule("daytona-key", rf"{_NW}dtn_[a-f0-9]{{64}}{_END}", "dtn_" + FAKE_HEX * 4, keywords=('dtn_',)),
    RedactionRule(
        # Jina: "jina_" + 32 hex digits + 27 or 28 more characters as printed; no published
        # length: 20 to 40 after the hex.
        "jina-key", rf"{_NW}jina_[a-f0-9]{{32}}[A-Za-z0-9_-]{{20,40}}(?![\w-])", "jina_" + FAKE_HEX * 2 + _F * 3 + "FAKE",
        keywords=('jina_',),
    ),
    RedactionRule(
        # Browserbase: "bb_live_" + 27 letters and digits as printed; no published length: 20 to 64.
        "browserbase-key", r"bb_live_[A-Za-z0-9_-]{20,64}(?![\w-])", "bb_live_" + _F * 3 + "FAK", keywords=('bb_live_',),
    ),
    RedactionRule("voyage-key", r"(?<![A-Za-ln-z0-9_-])pa-[A-Za-z0-9_-]{43}(?![\w-])", "pa-" + _F * 5 + "FAK", keywords=('pa-',)),
    RedactionRule(
        "openai-key",
        r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,250}|[A-Za-z0-9]{32,250})",
        "sk-proj-FAKEexample0000KEY0000fakeT3BlbkFJFAKE0000example",
        keywords=('sk-', 'sk-admin-', 'sk-proj-', 'sk-svcacct-'),
    ),
    RedactionRule("huggingface-token", r"(?:hf_|api_org_)[A-Za-z0-9]{34}" + _END, "hf_FAKEexampleTokenFAKEexampleTokenAb", keywords=('api_org_', 'hf_')),
    RedactionRule("perplexity-key", r"pplx-[A-Za-z0-9]{48}", "pplx-" + _F * 6, keywords=('pplx-',)),
    RedactionRule("groq-key", r"gsk_[A-Za-z0-9]{52}", "gsk_" + _F * 6 + "FAKE", keywords=('gsk_',)),
    RedactionRule("xai-key", r"xai-[A-Za-z0-9_]{80}", "xai-" + _F * 10, keywords=('xai-',)),
    RedactionRule("replicate-token", r"r8_[A-Za-z0-9_-]{37}", "r8_" + _F * 4 + "FAKEE", keywords=('r8_',)),
    # -- source hosting, packages and CI
    RedactionRule(
        "github-fine-grained",
        r"github_pat_[A-Za-z0-9_]{40,255}",
        "github_pat_11FAKE0000000000000000_FAKEexampleFineGrainedToken00000000000000000000000000000000",
        keywords=('github_pat_',),
    ),
    RedactionRule(
        "github-token",
        r"gh[pousr]_[A-Za-z0-9]{36,251}",
        "ghp_FAKE0123456789abcdefghijklmnopqrstuv",
        keywords=('gho_', 'ghp_', 'ghr_', 'ghs_', 'ghu_'),
    ),
    RedactionRule(
        "gitlab-token",
        r"(?:glpat|gldt|glft|glrt|glsoat|glffct|glimt|glagent|gloas|glptt)-[0-9A-Za-z_.-]{20,300}"
        r"|glcbt-[0-9A-Za-z]{1,5}_[0-9A-Za-z_-]{20}|_gitlab_session=[0-9a-z]{32}",
        "glpat-FAKE-example-01234567",
        keywords=('_gitlab_session=', 'glagent-', 'glcbt-', 'gldt-', 'glffct-', 'glft-', 'glimt-', 'gloas-', 'glpat-', 'glptt-', 'glrt-', 'glsoat-'),
    ),
    RedactionRule("gitlab-runner-token", r"GR1348941[\w-]{20}", "GR1348941" + _F * 2 + "FAKE", keywords=('GR1348941',)),
    RedactionRule("atlassian-token", r"ATATT3[A-Za-z0-9_=-]{100,300}", "ATATT3xFfGF0" + _F * 24, keywords=('ATATT3',)),
    RedactionRule("bitbucket-token", r"ATBB[A-Za-z0-9_=.-]{28,64}", "ATBB" + _F * 4, keywords=('ATBB',)),
    RedactionRule(
        "sourcegraph-token", r"sgp_(?:[a-fA-F0-9]{16}|local)_[a-fA-F0-9]{40}|sgp_[a-fA-F0-9]{40}", "sgp_local_" + (FAKE_HEX * 3)[:40],
        keywords=('sgp_',),
    ),
    RedactionRule("artifactory-token", rf"{_NW}(?:AKCp[A-Za-z0-9]{{69}}|cmVmd[A-Za-z0-9]{{59}}){_END}", "AKCp" + _F * 8 + "FAKEE", keywords=('AKCp', 'cmVmd')),
    RedactionRule("npm-token", r"npm_[A-Za-z0-9]{36}", "npm_FAKEexample0000000000000000000000000", keywords=('npm_',)),
    RedactionRule(
        "pypi-token",
        r"pypi-AgE[A-Za-z0-9_-]{50,1000}",
        "pypi-AgEIcHlwaS5vcmcCJDUyOTJjYTdkLWZBS0UtNDFBS0UtODAwMC1GQUtFRkFLRUZBS0UAAiFAKE",
        keywords=('pypi-AgE',),
    ),
    RedactionRule("rubygems-token", r"rubygems_[a-f0-9]{48}", "rubygems_" + FAKE_HEX * 3, keywords=('rubygems_',)),
    RedactionRule("clojars-token", r"(?i)clojars_[a-z0-9]{60}", "CLOJARS_" + _F * 7 + "FAKE", keywords=('clojars_',), requires="_"),
    RedactionRule("docker-token", r"dckr_(?:pat|oat)_[A-Za-z0-9_-]{27,64}", "dckr_pat_" + _F * 3 + "FAK", keywords=('dckr_oat_', 'dckr_pat_')),
    RedactionRule(
        "nuget-password",
        r"(?i)<add key=\"(?:cleartext)?password\"\s{0,8}value=\"(?P<secret>[^\"\x00-\x1f]{1,256})\"",
        '<add key="ClearTextPassword" value="FAKEnugetPassw0rd" />',
        keywords=('<add key="',), requires="=",
    ),
    RedactionRule("sonar-token", rf"{_NW}sq[apu]_[a-f0-9]{{40}}", "squ_" + (FAKE_HEX * 3)[:40], keywords=('sqa_', 'sqp_', 'squ_')),
    RedactionRule("readme-token", r"rdme_[a-z0-9]{70}", "rdme_" + (FAKE_HEX * 5)[:70], keywords=('rdme_',)),
    RedactionRule("postman-token", r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}", "PMAK-" + FAKE_HEX[:8] * 3 + "-" + (FAKE_HEX * 3)[:34], keywords=('PMAK-',)),
    RedactionRule("circleci-token", r"CCIPAT_[A-Za-z0-9]{22}_[a-f0-9]{40}", "CCIPAT_" + _F * 2 + "FAKEEX_" + (FAKE_HEX * 3)[:40], keywords=('CCIPAT_',)),
    RedactionRule("buildkite-token", r"bkua_[a-f0-9]{40}", "bkua_" + (FAKE_HEX * 3)[:40], keywords=('bkua_',)),
    RedactionRule("octopus-deploy-key", rf"{_NW}API-[A-Z0-9]{{26}}{_END}", "API-FAKE0000EXAMPLE00000000000", keywords=('API-',)),
    RedactionRule("harness-token", r"(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}", "pat." + _F * 2 + "FAKEEX." + _F * 3 + "." + _F * 2 + "FAKE", keywords=('pat.', 'sat.')),
    RedactionRule("prefect-token", r"pnu_[A-Za-z0-9]{36}", "pnu_" + _F * 4 + "FAKE", keywords=('pnu_',)),
    RedactionRule("linear-key", r"lin_api_[A-Za-z0-9]{40}", "lin_api_" + _F * 5, keywords=('lin_api_',)),
    RedactionRule("figma-token", r"figd_[A-Za-z0-9_-]{40}", "figd_" + _F * 5, keywords=('figd_',)),
    RedactionRule("airtable-token", r"pat[A-Za-z0-9]{14}\.[a-f0-9]{64}", "patFAKEexample000." + FAKE_HEX * 4, keywords=('pat',)),
    RedactionRule("adobe-client-secret", rf"{_NW}p8e-[A-Za-z0-9]{{32}}", "p8e-" + _F * 4, keywords=('p8e-',)),
    RedactionRule(
        "authress-key",
        r"(?:sc|ext|scauth|authress)_[A-Za-z0-9]{5,30}\.[A-Za-z0-9]{4,6}\.acc[_-][A-Za-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}",
        "authress_FAKEexample.FAKE.acc_FAKE000000." + _F * 4,
        keywords=('authress_', 'ext_', 'sc_', 'scauth_'),
    ),
    RedactionRule("dynatrace-token", r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}", "dt0c01." + _F * 3 + "." + _F * 8, keywords=('dt0c01.',)),
    RedactionRule("defined-networking-token", r"dnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}", "dnkey-" + "fake" * 6 + "00-" + "fake" * 13, keywords=('dnkey-',)),
    RedactionRule("settlemint-token", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}", "sm_pat_" + _F * 2, keywords=('sm_aat_', 'sm_pat_', 'sm_sat_')),
    # -- chat and mail
    RedactionRule(
        "slack-webhook",
        r"hooks\.slack\.com/(?:services|workflows|triggers)/(?P<secret>[A-Za-z0-9_/+]{20,200})",
        "https://hooks.slack.com/services/T00000000/B00000000/FAKEFAKEFAKEFAKEFAKEFAKE",
        keywords=('hooks.slack.com/services/', 'hooks.slack.com/triggers/', 'hooks.slack.com/workflows/'),
    ),
    RedactionRule(
        "slack-token",
        r"xox(?:[abposre]|e\.xox[bp])-[0-9A-Za-z][A-Za-z0-9-]{8,250}|xapp-[0-9]-[A-Z0-9]{1,64}-[0-9]{1,32}-[a-z0-9]{1,128}",
        "xoxb-0000000000-0000000000000-FAKEfakeFAKEfakeFAKEfake",
        keywords=('xapp-', 'xoxa-', 'xoxb-', 'xoxe-', 'xoxe.xoxb-', 'xoxe.xoxp-', 'xoxo-', 'xoxp-', 'xoxr-', 'xoxs-'),
    ),
    RedactionRule(
        "teams-webhook",
        r"webhook\.office\.com/webhookb2/(?P<secret>[A-Za-z0-9@/-]{40,400})",
        "https://example.webhook.office.com/webhookb2/FAKE0000-0000-0000-0000-000000000000@FAKE/IncomingWebhook/FAKE",
        keywords=('webhook.office.com/webhookb2/',),
    ),
    RedactionRule(
        "discord-webhook",
        r"discord(?:app)?\.com/api/webhooks/(?P<secret>[0-9]{17,20}/[A-Za-z0-9_-]{60,68})",
        "https://discord.com/api/webhooks/123456789012345678/" + _F * 8,
        keywords=('discord',),
    ),
    RedactionRule("telegram-bot-token", r"(?<![0-9])[0-9]{5,16}:A[A-Za-z0-9_-]{34}" + _END, "123456789:AAFAKE" + _F * 3 + "FAKEE", keywords=(':A',), keyword_within=16),
    RedactionRule(
        # Exactly 22 A's start it; not inside a run of base64 (zero bytes encode as A's).
        "twitter-bearer-token", r"(?<![A-Za-ln-z0-9_+/])" + "A" * 22 + r"(?!A)[A-Za-z0-9%]{80,100}" + _END, "A" * 22 + _F * 10,
        keywords=("A" * 22,),
    ),
    RedactionRule("sendgrid-key", r"SG\.[A-Za-z0-9_-]{20,24}\.[A-Za-z0-9_-]{39,50}", "SG.FAKEexample00000000FA." + _F * 5 + "FAK", keywords=('SG.',)),
    RedactionRule("sendinblue-key", r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}", "xkeysib-" + FAKE_HEX * 4 + "-" + _F * 2, keywords=('xkeysib-',)),
    RedactionRule("mailgun-key", rf"{_NW}(?:pub)?key-[a-f0-9]{{32}}{_END}", "key-" + FAKE_HEX * 2, keywords=('key-',), keyword_within=3),
    RedactionRule("mailchimp-key", r"(?<![A-Za-ln-z0-9])[a-f0-9]{32}-us[0-9]{1,2}" + _END, FAKE_HEX * 2 + "-us12", keywords=('-us',), keyword_within=32),
    RedactionRule("mapbox-token", r"(?:sk|pk|tk)\.eyJ1Ijoi[A-Za-z0-9_-]{10,400}\.[A-Za-z0-9_-]{20,100}", "sk.eyJ1IjoiFAKE" + _F * 2 + "." + _F * 3, keywords=('pk.eyJ1Ijoi', 'sk.eyJ1Ijoi', 'tk.eyJ1Ijoi')),
    RedactionRule("typeform-token", r"tfp_[A-Za-z0-9_.=-]{59}", "tfp_" + _F * 7 + "FAK", keywords=('tfp_',)),
    RedactionRule("frameio-token", r"fio-u-[A-Za-z0-9_=-]{64}", "fio-u-" + _F * 8, keywords=('fio-u-',)),
    RedactionRule("dropbox-token", r"sl\.(?:u\.)?[A-Za-z0-9_=-]{130,1400}", "sl." + _F * 17, keywords=('sl.',)),
    RedactionRule("intra42-secret", r"s-s4t2(?:ud|af)-[a-f0-9]{64}", "s-s4t2ud-" + FAKE_HEX * 4, keywords=('s-s4t2af-', 's-s4t2ud-')),
    RedactionRule("hubspot-token", r"pat-(?:na|eu)[0-9]-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}", "pat-na1-01234567-89ab-cdef-0123-456789abcdef", keywords=('pat-eu', 'pat-na')),
    RedactionRule("notion-token", r"ntn_[0-9]{11}[A-Za-z0-9]{35}|secret_[A-Za-z0-9]{43}" + _END, "ntn_01234567890" + _F * 4 + "FAK", keywords=('ntn_', 'secret_')),
    # -- payments
    RedactionRule(
        "stripe-key", r"(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{10,247}|whsec_[A-Za-z0-9]{32,64}", "sk_live_51FAKEexampleKEY0000000000",
        keywords=('rk_live_', 'rk_prod_', 'rk_test_', 'sk_live_', 'sk_prod_', 'sk_test_', 'whsec_'),
    ),
    RedactionRule("square-token", r"(?:EAAA|sq0atp-|sq0csp-)[\w-]{22,60}", "EAAA" + _F * 4, keywords=('EAAA', 'sq0atp-', 'sq0csp-')),
    RedactionRule("shopify-token", r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}", "shpat_" + FAKE_HEX * 2, keywords=('shpat_', 'shpca_', 'shppa_', 'shpss_')),
    RedactionRule("flutterwave-key", r"FLW(?:SECK|PUBK)_TEST-[a-hA-H0-9]{12,32}(?:-X)?", "FLWSECK_TEST-" + FAKE_HEX * 2 + "-X", keywords=('FLWPUBK_TEST-', 'FLWSECK_TEST-')),
    RedactionRule("duffel-token", r"duffel_(?:test|live)_[A-Za-z0-9_=-]{43}", "duffel_test_" + _F * 5 + "FAK", keywords=('duffel_live_', 'duffel_test_')),
    RedactionRule("easypost-key", r"EZ[AT]K[A-Za-z0-9]{54}", "EZAK" + _F * 6 + "FAKEEX", keywords=('EZAK', 'EZTK')),
    RedactionRule("shippo-token", r"shippo_(?:live|test)_[a-fA-F0-9]{40}", "shippo_test_" + (FAKE_HEX * 3)[:40], keywords=('shippo_live_', 'shippo_test_')),
    RedactionRule(
        "plaid-token", r"access-(?:sandbox|development|production)-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        "access-sandbox-01234567-89ab-cdef-0123-456789abcdef",
        keywords=('access-development-', 'access-production-', 'access-sandbox-'),
    ),
    RedactionRule("razorpay-key", r"rzp_(?:live|test)_[A-Za-z0-9]{14}", "rzp_test_FAKEexample0000", keywords=('rzp_live_', 'rzp_test_')),
    RedactionRule("braintree-token", r"access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}", "access_token$production$fake0000example0$" + FAKE_HEX * 2, keywords=('access_token$production$', 'access_token$sandbox$')),
    RedactionRule("facebook-token", r"EAA[MC][A-Za-z0-9]{100,1024}", "EAAC" + _F * 13, keywords=('EAAC', 'EAAM')),
    RedactionRule("facebook-app-token", r"(?<![0-9])[0-9]{15,16}[|%][0-9A-Za-z_-]{27,40}" + _END, "123456789012345|" + _F * 4, keywords=('%', '|'), keyword_within=16),
    RedactionRule("lob-key", rf"{_NW}(?:live|test)_(?:pub_[a-f0-9]{{31}}|[a-f0-9]{{35}}){_END}", "test_" + (FAKE_HEX * 3)[:35], keywords=('live_', 'live_pub_', 'test_', 'test_pub_')),
    RedactionRule("gocardless-token", rf"{_NW}live_[A-Za-z0-9_=-]{{40}}{_END}", "live_" + _F * 5, keywords=('live_',)),
    # -- databases and secret managers
    RedactionRule("planetscale-token", r"pscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}", "pscale_tkn_" + _F * 4, keywords=('pscale_oauth_', 'pscale_pw_', 'pscale_tkn_')),
    RedactionRule("clickhouse-key", rf"{_NW}4b1d[A-Za-z0-9]{{38}}{_END}", "4b1d" + _F * 4 + "FAKEEX", keywords=('4b1d',)),
    RedactionRule("databricks-token", rf"{_NW}dapi[a-f0-9]{{32}}(?:-[0-9])?", "dapi" + FAKE_HEX * 2, keywords=('dapi',)),
    RedactionRule("supabase-key", r"sbp_[a-f0-9]{40}|sb_secret_[A-Za-z0-9_-]{31,64}", "sb_secret_" + _F * 4, keywords=('sb_secret_', 'sbp_')),
    RedactionRule("vault-token", r"hvs\.[\w-]{90,120}|hvb\.[\w-]{138,300}|(?<![\w.-])s\.(?=[A-Za-z]{0,23}[0-9])[A-Za-z0-9]{24}" + _END, "hvs." + _F * 12, keywords=('hvb.', 'hvs.', 's.')),
    RedactionRule("doppler-token", r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}", "dp.pt." + _F * 5 + "FAK", keywords=('dp.audit.', 'dp.ct.', 'dp.pt.', 'dp.sa.', 'dp.scim.', 'dp.st.')),
    RedactionRule(
        "1password-token",
        r"ops_eyJ[A-Za-z0-9+/]{250,4096}={0,3}|A3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}",
        "A3-FAKE00-FAKEEXAMPLE-FAKE0-FAKE1-FAKE2",
        keywords=('A3-', 'ops_eyJ'),
    ),
    RedactionRule("age-secret-key", r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}", "AGE-SECRET-KEY-1" + "FAKE" * 14 + "QQ", keywords=('AGE-SECRET-KEY-1',)),
    RedactionRule("sidekiq-secret", r"BUNDLE_(?:ENTERPRISE|GEMS)__CONTRIBSYS__COM[ \t]{0,5}[:=][ \t]{0,5}[\"']?(?P<secret>[a-f0-9]{8}:[a-f0-9]{8})", "BUNDLE_GEMS__CONTRIBSYS__COM=01234567:89abcdef", keywords=('BUNDLE_ENTERPRISE__CONTRIBSYS__COM', 'BUNDLE_GEMS__CONTRIBSYS__COM')),
    # -- monitoring
    RedactionRule("grafana-token", r"glc_[A-Za-z0-9+/]{32,400}={0,3}|glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}", "glsa_" + _F * 4 + "_0123abcd", keywords=('glc_', 'glsa_')),
    RedactionRule("grafana-api-key", r"eyJrIjoi[A-Za-z0-9]{70,400}={0,3}", "eyJrIjoi" + _F * 9, keywords=('eyJrIjoi',)),
    RedactionRule("new-relic-key", r"NR(?:AK|II|JS|AA)-[A-Za-z0-9-]{19,40}", "NRAK-FAKE0000EXAMPLE0000FAKE000", keywords=('NRAA-', 'NRAK-', 'NRII-', 'NRJS-')),
    RedactionRule("sentry-token", r"sntryu_[a-f0-9]{64}|sntrys_eyJpYXQiO[A-Za-z0-9+/=_]{50,600}", "sntryu_" + FAKE_HEX * 4, keywords=('sntrys_eyJpYXQiO', 'sntryu_')),
    RedactionRule("twilio-key", rf"{_NW}SK[0-9a-fA-F]{{32}}{_END}", "SK" + FAKE_HEX * 2, keywords=('SK',)),
    # -- tokens of any issuer
    RedactionRule(
        "jwt",
        r"eyJ[A-Za-z0-9_-]{8,1024}\.eyJ[A-Za-z0-9_-]{8,2048}\.[A-Za-z0-9_-]{8,1024}",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJGQUtFIn0.FAKEsignatureFAKEsignature00",
        keywords=('eyJ',),
    ),
    RedactionRule("jwt-base64", r"ZXlK(?:aGJHY2lPaU|MGVYQWlPaU)[A-Za-z0-9+/]{20,4096}={0,2}", "ZXlKaGJHY2lPaU" + "FAKE" * 8, keywords=('ZXlKMGVYQWlPaU', 'ZXlKaGJHY2lPaU')),
    RedactionRule(
        "url-password",
        # From "://", so the scheme before it is kept; only the password is replaced.
        r"://[^\s:@/?#\[\]\"'<>\x00-\x1f\x7f]{1,128}:(?P<secret>[^\s@/\"'<>\x00-\x1f\x7f]{1,256})@",
        "postgres://app:FAKEpassw0rd@db.example.com:5432/app",
        keywords=('://',),
    ),
    RedactionRule(
        "basic-auth",
        r"(?i)authorization:[ \t]{0,5}basic[ \t]{1,5}(?P<secret>[A-Za-z0-9+/]{8,1024}={0,3})",
        "Authorization: Basic FAKEdXNlcjpwYXNzd29yZA==",
        keywords=('authorization:',), requires=":",
    ),
    RedactionRule(
        "bearer-token",
        r"(?i)bearer[ \t]+(?=[A-Za-z0-9._~+/-]{0,2048}[0-9])(?P<secret>[A-Za-z0-9._~+/-]{20,2048}={0,2})",
        "Authorization: Bearer FAKEopaqueToken0000000000",
        keywords=('bearer',), requires=" \t",
    ),
    RedactionRule(
        "curl-user",
        r"(?<![\w-])(?:-u|--user)(?:[ \t]{1,5}|=)[\"']?(?P<secret>[^\s\"':]{1,128}:[^\s\"']{1,256})",
        "curl -u admin:FAKEpassw0rd https://api.example.com",
        keywords=('--user', '-u'),
    ),
    RedactionRule(
        # A vendor's name in a credential's name, then a random value (HEROKU_API_KEY=...,
        # cohere: ..., x-portkey-api-key: ...): gitleaks' keyword rules, and the model routers
        # and providers whose keys have no prefix of their own.
        "vendor-secret",
        rf"(?i)(?:{'|'.join(VENDORS)})[\w.-]{{0,24}}{_SEP}{_RANDOM_VALUE}",
        "HEROKU_API_KEY=FAKEh3r0kuQ9zX1vB7nM2pL5",
        min_entropy=3.5, keywords=VENDORS, requires=":=",
    ),
    RedactionRule("api-key", _keyword(r"api[_-]?key"), 'api_key = "FAKE-api-key-0000"', keywords=('api',), requires=":="),
    RedactionRule("token", _keyword("token"), "GITHUB_TOKEN=FAKEtoken123", keywords=('token',), requires=":="),
    RedactionRule(
        "secret", _keyword(r"secret(?:[_-]?(?:access[_-]?)?key)?"), "client_secret: FAKEs3cr3tValue",
        keywords=('secret',), requires=":=",
    ),
    RedactionRule("password", _keyword(r"pass(?:word|wd|phrase)?"), "password='FAKE hunter2'", keywords=('pass',), requires=":="),
    RedactionRule(
        # Any other credential-named assignment whose value looks random: 16+ characters with
        # letters and digits and at least 3.5 bits of entropy per character (as gitleaks'
        # generic rule), so that `key_path = ...` or `access = read-only` stay as they are.
        "generic-secret",
        rf"(?i)(?:key|auth|credential|creds|access|private)[\w.-]{{0,20}}{_SEP}{_RANDOM_VALUE}",
        "DEPLOYMENT_KEY=FAKE8f3kQ9zX1vB7nM2pL5wR",
        min_entropy=3.5,
        keywords=('access', 'auth', 'credential', 'creds', 'key', 'private'), requires=":=",
    ),
)
"""The built-in rules, highest priority first (it names overlapping matches)."""


def user_rule(name: str, pattern: str) -> RedactionRule:
    """Return the rule of a user's ``[[redact.patterns]]`` entry.

    Its keyword is the run of plain characters the pattern starts with (``corp_`` of
    ``corp_[A-Za-z0-9]{12}``), when it has one of two or more and no alternation, so that
    ``StreamRedactor.release`` keeps holding a secret of it begun whole; else it has none
    and is searched in every text.
    """
    return RedactionRule(name, pattern, keywords=_leading_literal(pattern))


_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-:=@/!%&,;'\"<>~# ")
_ESCAPED = frozenset("._-:=@/!%&,;'\"<>~#$^*+?()[]{}|\\ ")


def _leading_literal(pattern: str) -> tuple[str, ...]:
    """Return (the plain characters ``pattern`` starts with,) or () (see ``user_rule``)."""
    if "|" in pattern or pattern.startswith("(?"):
        return ()
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern) and pattern[i + 1] in _ESCAPED:
            out.append(pattern[i + 1])
            i += 2
        elif ch in _PLAIN:
            out.append(ch)
            i += 1
        else:
            break
        if i < len(pattern) and pattern[i] in "?*{":  # the last character is optional
            out.pop()
            break
    return ("".join(out),) if len(out) >= 2 else ()

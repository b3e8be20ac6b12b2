"""Token formats beyond gitleaks' default set: model routers, gateways and newer AI providers,
and a vendor's name beside a value (the rules ``vendor-secret``). Every value here is fake,
shaped as the vendor's published format (see the comments in capture/redaction/rules.py)."""

from __future__ import annotations

import pytest

from shellkeep.capture.redaction import Redactor, StreamRedactor

REDACTOR = Redactor()

FORMATS = {
    "openrouter-key": "sk-or-v1-" + "0123456789abcdef" * 4,
    "litellm-key": "sk-FAKE_x7Qp2LmN9vR4tY-8a",  # "sk-" + secrets.token_urlsafe(16)
    "helicone-key": "sk-helicone-fake7a1-57wu7ii-rr3csyi-tox7nqy",
    "together-key": "tgp_v1_FAKEHtipTjCmGJ3M6rvjHrxtnKqWnbShrVHshVQtBf8",
    "fireworks-key": "fw_FAKEyE5kvyQX3i8JnFWj9N6jCTUeTjxE",
    "langsmith-key": "lsv2_sk_" + "0123456789abcdef" * 2 + "_0123456789",
    "langfuse-key": "sk-lf-01234567-89ab-cdef-0123-456789abcdef",
    "pinecone-key": "pcsk_FAKE0_" + "FAKE0123456789ab" * 3 + "FAKE0123456789a",
    "elevenlabs-key": "sk_" + "0123456789abcdef" * 3,
    "anthropic-key": "sk-ant-admin01-" + "FAKE0123456789_-" * 5 + "FAKEEFAKEEFAKAA",  # an admin key
    "xai-key": "xai-" + "FAKE_0123456789ab" * 4 + "FAKE01234567",
    "replicate-token": "r8_FAKE-0123456789_abcdefghijklmnopqrstu",
    "huggingface-token": "hf_FAKE0123456789abcdefghijklmnopqrst",
    "groq-key": "gsk_" + "FAKE0123456789ab" * 3 + "FAKE",
    "perplexity-key": "pplx-" + "FAKE0123456789ab" * 3,
    "tavily-key": "tvly-FAKE0123456789abcdefghijklmnopqr",
    "vercel-ai-gateway-key": "vck_" + "FAKE0123456789ab" * 3 + "FAKE0123",
    "cerebras-key": "csk-" + "fake0123456789ab" * 3,
    "requesty-key": "rqsty-sk-" + "FAKE0123abcdefgh" * 6 + "FAKE012+/45=",
    "firecrawl-key": "fc-" + "0123456789abcdef" * 2,
    "e2b-key": "e2b_" + ("0123456789abcdef" * 3)[:40],
    "voyage-key": "pa-" + "FAKE0123456789_-" * 2 + "FAKE0123456",
    "daytona-key": "dtn_" + "0123456789abcdef" * 4,
    "jina-key": "jina_" + "0123456789abcdef" * 2 + "FAKEq0123456789abcdefghij_k",
    "browserbase-key": "bb_live_FAKE0123456789abcdefghijklm",
}


@pytest.mark.parametrize(("name", "token"), FORMATS.items(), ids=FORMATS.keys())
def test_an_ai_provider_or_gateway_token_gets_its_own_marker(name: str, token: str) -> None:
    for text in (f"export KEY={token}\n", f"curl -H 'Authorization: Bearer {token}' x\n", f"{token}\n"):
        redacted = REDACTOR.redact(text)
        assert token not in redacted and f"[REDACTED:{name}]" in redacted, redacted
        assert redacted == text.replace(token, f"[REDACTED:{name}]"), redacted  # no stray prefix, one name
        s = StreamRedactor(REDACTOR)
        assert "".join(s.feed(ch) for ch in text) + s.flush() == redacted  # typed a key at a time


def test_the_formats_have_their_published_lengths() -> None:
    bodies = {
        "litellm-key": 22, "together-key": 43, "huggingface-token": 34, "replicate-token": 37, "tavily-key": 32,
        "vercel-ai-gateway-key": 56, "cerebras-key": 48, "requesty-key": 108, "firecrawl-key": 32, "e2b-key": 40,
        "voyage-key": 43, "daytona-key": 64, "browserbase-key": 27,
    }
    prefixes = {
        "litellm-key": "sk-", "together-key": "tgp_v1_", "huggingface-token": "hf_", "replicate-token": "r8_",
        "tavily-key": "tvly-", "vercel-ai-gateway-key": "vck_", "cerebras-key": "csk-", "requesty-key": "rqsty-sk-",
        "firecrawl-key": "fc-", "e2b-key": "e2b_", "voyage-key": "pa-",
        "daytona-key": "dtn_", "browserbase-key": "bb_live_",
    }
    for name, length in bodies.items():
        assert len(FORMATS[name]) - len(prefixes[name]) == length, name


VENDOR_VALUES = {
    "portkey": "x-portkey-api-key: FAKEpk8f3kQ9zX1vB7nM2pL5wR",
    "mistral": "MISTRAL_API_KEY=FAKEm1stral8f3kQ9zX1vB7nM2p",
    "cohere": "cohere: FAKEcoh3re8f3kQ9zX1vB7nM2pL5wRabcdefghij",
    "deepseek": 'DEEPSEEK_KEY="sk-FAKE0123456789abcdef0123456789"',
    "heroku": "heroku_api_key = FAKE0000-1111-2222-3333-444455556666",
}


# Routers, providers and tools whose keys have no published prefix of their own (or one too
# short to stand alone): the vendor's name in the variable names the value.
NAMED_BY_VENDOR = {
    "sambanova": ("SAMBANOVA_API_KEY", "FAKE0a1b-2c3d-4e5f-6a7b-8c9d0e1f2a3b"),
    "baseten": ("BASETEN_API_KEY", "FAKEab12.FAKEcd34ef56gh78ij90kl12mn34"),
    "novita": ("NOVITA_API_KEY", "sk_FAKEn0v1ta8f3kQ9zX1vB7nM2pL5"),
    "ai21": ("AI21_API_KEY", "FAKEa121k3yQ9zX1vB7nM2pL5wR"),
    "wandb": ("WANDB_API_KEY", "FAKE0123456789abcdef0123456789abcdef0123"),
    "serper": ("SERPER_API_KEY", "FAKE0123456789abcdef0123456789abcdef0123"),
    "exa": ("EXA_API_KEY", "FAKE0a1b-2c3d-4e5f-6a7b-8c9d0e1f2a3b"),
    "brave": ("BRAVE_API_KEY", "BSAFAKEbr4ve8f3kQ9zX1vB7nM2pL5"),
    "kilocode": ("KILOCODE_TOKEN", "FAKEk1l0c0de8f3kQ9zX1vB7nM2pL5"),
    "martian": ("MARTIAN_API_KEY", "sk-FAKEm4rt1an8f3kQ9zX1vB7nM2"),
    "requesty": ("REQUESTY_API_KEY", "FAKEr3qu3sty8f3kQ9zX1vB7nM2pL5"),
}


@pytest.mark.parametrize(("variable", "value"), NAMED_BY_VENDOR.values(), ids=NAMED_BY_VENDOR.keys())
def test_a_router_or_tool_key_beside_its_vendor_name_is_named_vendor_secret(variable: str, value: str) -> None:
    for text in (f"export {variable}={value}\n", f"{variable.lower()}: {value}\n"):
        assert REDACTOR.redact(text) == text.replace(value, "[REDACTED:vendor-secret]")


@pytest.mark.parametrize("text", VENDOR_VALUES.values(), ids=VENDOR_VALUES.keys())
def test_a_vendor_name_beside_a_random_value_is_a_vendor_secret(text: str) -> None:
    redacted = REDACTOR.redact(text + "\n")
    assert "FAKE" not in redacted and "[REDACTED:" in redacted


@pytest.mark.parametrize(
    "text",
    ["pip install scikit-learn sk-learn-is-great", "fw_version_string = 3", "linear_layer = nn.Linear(10, 20)", "together = 12345678901234567"],
    ids=["sk-words", "fw-word", "linear-code", "together-digits"],
)
def test_words_that_start_like_these_formats_are_kept(text: str) -> None:
    assert REDACTOR.redact(text) == text

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
}


@pytest.mark.parametrize(("name", "token"), FORMATS.items(), ids=FORMATS.keys())
def test_an_ai_provider_or_gateway_token_gets_its_own_marker(name: str, token: str) -> None:
    for text in (f"export KEY={token}\n", f"curl -H 'Authorization: Bearer {token}' x\n", f"{token}\n"):
        redacted = REDACTOR.redact(text)
        assert token not in redacted and f"[REDACTED:{name}]" in redacted, redacted
        s = StreamRedactor(REDACTOR)
        assert "".join(s.feed(ch) for ch in text) + s.flush() == redacted  # typed a key at a time


def test_the_formats_have_their_published_lengths() -> None:
    bodies = {"litellm-key": 22, "together-key": 43, "huggingface-token": 34, "replicate-token": 37}
    prefixes = {"litellm-key": "sk-", "together-key": "tgp_v1_", "huggingface-token": "hf_", "replicate-token": "r8_"}
    for name, length in bodies.items():
        assert len(FORMATS[name]) - len(prefixes[name]) == length, name


VENDOR_VALUES = {
    "portkey": "x-portkey-api-key: FAKEpk8f3kQ9zX1vB7nM2pL5wR",
    "mistral": "MISTRAL_API_KEY=FAKEm1stral8f3kQ9zX1vB7nM2p",
    "cohere": "cohere: FAKEcoh3re8f3kQ9zX1vB7nM2pL5wRabcdefghij",
    "deepseek": 'DEEPSEEK_KEY="sk-FAKE0123456789abcdef0123456789"',
    "heroku": "heroku_api_key = FAKE0000-1111-2222-3333-444455556666",
}


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

"""The ``[prices]`` table of config.toml (``config.Config.prices``) and how ``app.stats`` prices tokens."""

from __future__ import annotations

from pathlib import Path

import pytest

from shellkeep.app.stats import estimate_cost, price_of
from shellkeep.archive.usage import UsageTokens
from shellkeep.config import PROJECT_FILE_NAME, Config, ModelPrice, default_prices, load_config, load_config_with_fallback
from shellkeep.errors import ConfigError
from shellkeep.store.paths import Paths


def _paths(tmp_path: Path, text: str) -> Paths:
    config = tmp_path / "config.toml"
    config.write_text(text)
    return Paths(home=tmp_path / "home", config_file=config)


def test_the_shipped_table_prices_the_current_models_of_each_vendor() -> None:
    prices = default_prices()
    for model in ("claude-sonnet-4-5", "claude-opus-4-1", "claude-haiku-4-5", "gpt-5", "gpt-5-codex", "gemini-2.5-pro"):
        price = prices[model]
        assert price.output > price.input > price.cache_read > 0 and price.cache_write >= price.input
    assert Config().prices == prices


def test_a_user_price_overrides_some_keys_of_a_model_and_adds_new_models(tmp_path: Path) -> None:
    paths = _paths(tmp_path, '[prices."gpt-5"]\noutput = 20\n\n[prices."my-model"]\ninput = 1.5\noutput = 3\n')
    prices = load_config(paths, None, {}).prices
    assert prices["gpt-5"] == ModelPrice(input=1.25, output=20.0, cache_read=0.125, cache_write=1.25)
    assert prices["my-model"] == ModelPrice(1.5, 3.0, 1.5, 1.5)  # cache prices default to the input price
    assert prices["claude-sonnet-4-5"] == default_prices()["claude-sonnet-4-5"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[prices."gpt-5"]\ninput = -1\n', 'prices."gpt-5".input must be a number >= 0'),
        ('[prices."gpt-5"]\ninput = "cheap"\n', 'prices."gpt-5".input must be a number >= 0'),
        ('[prices."gpt-5"]\ninptu = 1\n', "did you mean 'prices.\"gpt-5\".input'?"),
        ('[prices."new"]\noutput = 1\n', 'prices."new" needs input'),
        ("[prices]\ngpt-5 = 1\n", 'prices."gpt-5" must be a table of input, output, cache_read, cache_write'),
    ],
    ids=["negative", "string", "typo", "new-without-input", "not-a-table"],
)
def test_a_bad_price_is_one_line_naming_the_file_and_key(tmp_path: Path, text: str, message: str) -> None:
    paths = _paths(tmp_path, text)
    with pytest.raises(ConfigError) as caught:
        load_config(paths, None, {})
    assert message in str(caught.value) and str(paths.config_file) in str(caught.value)
    assert "\n" not in str(caught.value)
    loaded = load_config_with_fallback(paths, None, {})
    assert loaded.config.prices == default_prices() and len(loaded.problems) == 1  # a reading command goes on with the shipped prices


def test_a_project_file_cannot_set_prices(tmp_path: Path) -> None:
    project = tmp_path / "project"  # made by the home fixture
    (project / PROJECT_FILE_NAME).write_text('[prices."gpt-5"]\ninput = 0\n')
    with pytest.raises(ConfigError, match=r"\[prices\] cannot be set in a project file"):
        load_config(Paths(home=tmp_path / "home", config_file=tmp_path / "none.toml"), project, {})


@pytest.mark.parametrize(
    ("model", "shipped"),
    [
        ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5"),
        ("anthropic/claude-opus-4-1@20250805", "claude-opus-4-1"),
        ("models/gemini-2.5-pro", "gemini-2.5-pro"),
        ("GPT-5-Codex", "gpt-5-codex"),
        ("gpt-5-2025-08-07", "gpt-5"),
    ],
    ids=["date", "provider-and-at-date", "models-prefix", "case", "iso-date"],
)
def test_a_model_id_finds_its_price_without_provider_and_date(model: str, shipped: str) -> None:
    assert price_of(default_prices(), model) == default_prices()[shipped]


def test_an_unknown_model_has_no_price_rather_than_a_wrong_one() -> None:
    assert price_of(default_prices(), "gpt-5-nano-experimental") is None
    assert price_of(default_prices(), "claude-sonnet-x") is None


def test_cached_input_is_billed_once_when_the_agent_counts_it_inside_input() -> None:
    price = ModelPrice(input=2.0, output=10.0, cache_read=0.5, cache_write=3.0)
    tokens = UsageTokens("", "m", "a", input=1_000_000, output=100_000, cache_read=400_000, cache_write=200_000)
    apart = estimate_cost(tokens, price, input_includes_cache_read=False)
    inside = estimate_cost(tokens, price, input_includes_cache_read=True)
    assert apart == pytest.approx(2.0 + 1.0 + 0.2 + 0.6)
    assert inside == pytest.approx(0.6 * 2.0 + 1.0 + 0.2 + 0.6)


def test_loading_a_config_without_prices_leaves_the_shipped_table_unread(tmp_path: Path) -> None:
    """The recording path loads the config: the shipped table is read only when prices are used."""
    default_prices.cache_clear()
    config = load_config(_paths(tmp_path, "[record]\ninput = true\n"), None, {})
    assert default_prices.cache_info().currsize == 0
    assert config.prices["gpt-5"].output == 10.0 and default_prices.cache_info().currsize == 1

"""Our warnings are masked before they exist: a library user's process shows them as they are.

A warning is built from values that may hold a secret (a URL, a setting, a model name from a
config); outside the ``openmolt`` command nothing masked it (``warnings.showwarning``, recorded
warnings). Every warning goes through `openmolt_core._support.masking.warn`.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest

from openmolt_core._support.masking import warn

ROOT = Path(__file__).resolve().parents[2]


def test_a_warning_is_masked_with_the_secrets_known_now(monkeypatch: pytest.MonkeyPatch) -> None:
	secret = "CANARY-warned-key-5150"
	monkeypatch.setenv("OPENMOLT_SOME_API_KEY", secret)
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		warn(f"the base URL https://x.example/?api-key={secret} was adjusted", UserWarning)
	assert len(seen) == 1 and seen[0].category is UserWarning
	assert secret not in str(seen[0].message) and "[redacted]" in str(seen[0].message)
	assert seen[0].filename == __file__  # the caller's line, as warnings.warn gives it


def test_a_provider_s_model_warning_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
	"""A real site: a provider warns about a model whose name came from a config."""
	import httpx

	from openmolt_providers._common import ModelConfigWarning
	from openmolt_providers.openai import OpenAIProvider

	secret = "CANARY-model-key-8086"
	monkeypatch.setenv("OPENMOLT_OTHER_TOKEN", secret)
	provider = OpenAIProvider({"api_key": "sk-test-0000000000"}, httpx.AsyncClient)
	with warnings.catch_warnings(record=True) as seen:
		warnings.simplefilter("always")
		provider.warn(f"m-{secret}", "temperature", "dropped")
	assert [w.category for w in seen] == [ModelConfigWarning]
	assert secret not in str(seen[0].message)


def test_no_module_warns_without_masking() -> None:
	"""Fail closed: a new ``warnings.warn`` call would bypass the mask."""
	direct = re.compile(r"\bwarnings\.warn\(|^from warnings import .*\bwarn\b", re.MULTILINE)
	found = [
		str(path.relative_to(ROOT))
		for path in ROOT.glob("openmolt_*/src/**/*.py")
		if direct.search(path.read_text("utf-8")) and path.name != "masking.py"
	]
	assert found == []

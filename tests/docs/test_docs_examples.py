"""Every Python example in README.md and docs/ runs, as written.

Each ```python block runs on its own, in a fresh namespace, in a temporary directory, with
``OPENMOLT_<PROVIDER>_BASE_URL`` pointing at a local fake of the model APIs (tests/docs/conftest.py):
an example that calls ``openai:``, ``anthropic:`` or ``google:`` models gets a finished run whose
output fits its schema.
A block that defines ``test_*`` functions is a test file: it runs under pytest, with the
openmolt pytest plugin, and must pass. The sample files the pages offer for download (`FILES`: the
OpenAPI guide's petstore.json) are in the directory, for examples that read one.

Two markers, HTML comments on the line just before a block (docs/contributing-docs.md):

- ``<!-- continued -->``: the block continues the one before it on the page (same namespace).
- ``<!-- not runnable: why -->``: the block is skipped; use it only for fragments that cannot
  run (a plugin's pyproject-bound module, output listings). The reason is required.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
FILES = [ROOT / "docs" / "guides" / "petstore.json"]
"""Sample files the docs site serves beside its pages, which examples read (one copy: the page links it)."""
_FENCE = re.compile(r"^```(\w*)\s*$")
# Local servers the docs name (Ollama, vLLM, LM Studio, llama.cpp) are served by the fake too.
_LOCAL = re.compile(r"http://localhost:(?:11434|8000|1234|8080)/v1")
_MARK = re.compile(r"^<!--\s*(continued|not runnable:\s*(\S.*?))\s*-->$")


@dataclass
class Example:
	"""One runnable example: a block, or a block and the blocks that continue it."""

	page: Path
	line: int  # of the first code line
	code: str
	skip: str | None = None
	parts: list[int] = field(default_factory=list)

	@property
	def id(self) -> str:
		return f"{self.page.relative_to(ROOT)}:{self.line}"


def examples(page: Path) -> list[Example]:
	"""The page's Python examples, with the markers applied."""
	lines = page.read_text(encoding="utf-8").splitlines()
	found: list[Example] = []
	i = 0
	while i < len(lines):
		fence = _FENCE.match(lines[i])
		if not fence:
			i += 1
			continue
		language, start = fence.group(1), i + 1
		end = next(j for j in range(start, len(lines)) if lines[j].startswith("```"))
		if language in ("python", "py"):
			before = next((lines[j].strip() for j in range(i - 1, -1, -1) if lines[j].strip()), "")
			mark = _MARK.match(before)
			# Blank lines keep the line numbers of the page, so tracebacks point into it.
			code = "\n" * start + "\n".join(lines[start:end]) + "\n"
			if mark and mark.group(1) == "continued" and found:
				previous = found[-1]
				previous.code += "\n".join(lines[start:end]) + "\n"
				previous.parts.append(start + 1)
			else:
				skip = mark.group(2) if mark and mark.group(2) else None
				found.append(Example(page, start + 1, code, skip, [start + 1]))
		i = end + 1
	return found


ALL = [e for page in PAGES for e in examples(page)]


def test_there_are_examples_on_the_pages_that_need_them() -> None:
	"""The collector finds the README's and the guides' examples (it is not silently empty)."""
	pages = {e.page.name for e in ALL}
	assert {"README.md", "index.md", "testing.md", "local-models.md", "schedules.md"} <= pages
	skipped = [e for e in ALL if e.skip]
	assert len(skipped) <= len(ALL) // 5, [e.id for e in skipped]  # sparingly


@pytest.mark.allow_model_requests  # to the local fake only
@pytest.mark.parametrize("example", ALL, ids=[e.id for e in ALL])
def test_the_example_runs(example: Example, fake_openai, tmp_path, monkeypatch) -> None:
	"""The example runs without error (a test file's tests pass)."""
	if example.skip:
		pytest.skip(f"not runnable: {example.skip}")
	for sample in FILES:  # files the examples read (petstore.json)
		shutil.copy(sample, tmp_path / sample.name)
	monkeypatch.chdir(tmp_path)
	for name in [n for n in __import__("os").environ if n.startswith("OPENMOLT_")]:
		monkeypatch.delenv(name)
	for provider in ("OPENAI", "ANTHROPIC", "GOOGLE"):
		monkeypatch.setenv(f"OPENMOLT_{provider}_BASE_URL", fake_openai.url)
		monkeypatch.setenv(f"OPENMOLT_{provider}_API_KEY", "docs-example-key")
	if re.search(r"^(async )?def test_", example.code, re.M):  # a test file: run it with pytest
		path = tmp_path / f"test_{example.page.stem.replace('-', '_')}_{example.line}.py"
		path.write_text(example.code.lstrip("\n"), encoding="utf-8")
		done = subprocess.run(
			[
				sys.executable,
				"-m",
				"pytest",
				"-q",
				"-p",
				"no:cacheprovider",
				"-W",
				"error",
				str(path),
			],
			capture_output=True,
			text=True,
			timeout=120,
		)
		assert done.returncode == 0, done.stdout + done.stderr
		assert " passed" in done.stdout
		return
	code = _LOCAL.sub(fake_openai.url, example.code)
	namespace = {"__name__": "__main__", "__file__": str(example.page)}
	try:
		exec(compile(code, str(example.page), "exec"), namespace)
	finally:
		# A durable example binds this process's DBOS engine to its store; the tests that run
		# next in this worker (tests/dbos, tests/serve) need a process without one.
		engine = sys.modules.get("openmolt_dbos._engine")
		if engine is not None:
			engine.reset_engine()
	# A documented program closes what it opened (`async with om:` or `await om.aclose()`).
	left_open = [
		name
		for name, value in namespace.items()
		if type(value).__name__ == "OpenMolt" and getattr(value, "_http", None) is not None
	]
	for name in left_open:
		anyio.run(namespace[name].aclose)
	assert not left_open, f"the example leaves {left_open} open: use `async with om:`"


def test_the_provider_settings_table_lists_every_setting() -> None:
	"""docs/guides/providers.md names each provider's settings, and only those."""
	from openmolt_providers.settings import AnthropicSettings, GeminiSettings, OpenAISettings

	text = (ROOT / "docs" / "guides" / "providers.md").read_text()
	rows = re.findall(r"^\| `(\w+)` \| `(\w+)` \| .*? \| ([\w, ]+) \| .* \|$", text, re.M)
	documented = {
		name: (camel, set(p.strip() for p in providers.split(",")))
		for name, camel, providers in rows
	}
	expected: dict[str, tuple[str, set[str]]] = {"provider": ("provider", {"any"})}
	for vendor, model in (
		("openai", OpenAISettings),
		("anthropic", AnthropicSettings),
		("google", GeminiSettings),
	):
		for name, info in model.model_fields.items():
			_, vendors = expected.setdefault(name, (info.alias or name, set()))
			vendors.add(vendor)
	assert documented == expected

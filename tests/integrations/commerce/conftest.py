"""Fixtures for the commerce and productivity integrations: official references and tool shapes.

The large official references come from npm tarballs cached in ``.cache/refs/`` (never committed).
``nox -s tests`` fills the cache; by hand: ``npm pack <package>@<version> --pack-destination .cache/refs``.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from openmolt_core.integrations import HttpTool

ROOT = Path(__file__).resolve().parents[3]
REFS = Path(os.environ.get("OPENMOLT_REFS_DIR", ROOT / ".cache" / "refs"))

# The npm packages the conformance tests read; noxfile.py packs the same list.
NPM_REFS = {
	"notion": ("@notionhq/client", "5.26.0", "notionhq-client-5.26.0.tgz"),
	"octokit": ("@octokit/openapi", "23.0.2", "octokit-openapi-23.0.2.tgz"),
	"shopify": ("@shopify/dev-mcp", "1.16.0", "shopify-dev-mcp-1.16.0.tgz"),
}

_TEMPLATE = re.compile(r"\{\{\s*input\.(\w+)(?:\s*\|[^}]*)?\s*\}\}")


def npm_tarball(key: str) -> Path:
	"""The cached tarball of an npm reference, or a test failure naming the command to run."""
	package, version, filename = NPM_REFS[key]
	path = REFS / filename
	if not path.is_file():
		pytest.fail(
			f"official reference {package}@{version} is not cached at {path}; run "
			f"`npm pack {package}@{version} --pack-destination .cache/refs` from the repository "
			"root (or `uv run nox -s tests`, which does it)",
			pytrace=False,
		)
	return path


def read_member(key: str, member: str) -> bytes:
	"""One file of a cached npm tarball."""
	with tarfile.open(npm_tarball(key), "r:gz") as tar:
		handle = tar.extractfile(member)
		if handle is None:
			pytest.fail(f"{member} is missing from {NPM_REFS[key][0]}", pytrace=False)
		return handle.read()


def members(key: str, prefix: str, suffix: str) -> dict[str, bytes]:
	"""Every file of a cached npm tarball under ``prefix`` ending with ``suffix``."""
	out = {}
	with tarfile.open(npm_tarball(key), "r:gz") as tar:
		for info in tar:
			if info.name.startswith(prefix) and info.name.endswith(suffix) and info.isfile():
				handle = tar.extractfile(info)
				assert handle is not None
				out[info.name] = handle.read()
	return out


def path_template(endpoint: str) -> str:
	"""``/v1/pages/{{ input.page_id }}`` → ``/v1/pages/{page_id}`` (filters dropped)."""
	return _TEMPLATE.sub(lambda m: "{" + m.group(1) + "}", endpoint)


def template_inputs(value: Any) -> set[str]:
	"""Names of the inputs a template value refers to."""
	return set(_TEMPLATE.findall(json.dumps(value)))


def body_keys(tool: HttpTool) -> set[str]:
	"""Top-level body keys (empty when the body is not a dict)."""
	return set(tool.body) if isinstance(tool.body, dict) else set()


def query_keys(tool: HttpTool) -> set[str]:
	"""Query keys without Airtable/Stripe's ``[]`` suffix."""
	return {k.removesuffix("[]") for k in tool.query_params}


@pytest.fixture(scope="session")
def notion_endpoints() -> list[dict[str, Any]]:
	"""Every endpoint of @notionhq/client: method, path, path/query/body/form params."""
	pattern = re.compile(
		r"exports\.(\w+) = \{\s*method: \"(\w+)\",\s*pathParams: \[(.*?)\],\s*"
		r"queryParams: \[(.*?)\],\s*bodyParams: \[(.*?)\],\s*"
		r"(?:formDataParams: \[(.*?)\],\s*)?path: \(p?\) => `(.*?)`",
		re.S,
	)

	def names(text: str | None) -> set[str]:
		return set(re.findall(r'"(\w+)"', text or ""))

	out = []
	files = members("notion", "package/build/src/api-endpoints/", ".js")
	for text in files.values():
		for m in pattern.finditer(text.decode()):
			out.append(
				{
					"name": m.group(1),
					"method": m.group(2).upper(),
					"path": "/v1/" + re.sub(r"\$\{p\.(\w+)\}", r"{\1}", m.group(7)),
					"pathParams": names(m.group(3)),
					"queryParams": names(m.group(4)),
					"bodyParams": names(m.group(5)),
					"formDataParams": names(m.group(6)),
				}
			)
	assert len(out) > 40, "the @notionhq/client endpoint format changed; update the parser"
	return out


@pytest.fixture(scope="session")
def notion_literals() -> dict[str, dict[str, set[str]]]:
	"""Endpoint name → top-level parameter → its string literal union in @notionhq/client's types
	(``mode?: "single_part" | "multi_part" | "external_url"``), over the union's branches."""
	block = re.compile(
		r"^type (\w+?)(?:Body|Query)Parameters = (.*?)^(?=export |type |declare )", re.S | re.M
	)
	field = re.compile(r'^ {4}(\w+)\??: ((?:"[^"]*"(?: \| )?)+);$', re.M)
	out: dict[str, dict[str, set[str]]] = {}
	for text in members("notion", "package/build/src/api-endpoints/", ".d.ts").values():
		for m in block.finditer(text.decode()):
			name = m.group(1)[0].lower() + m.group(1)[1:]
			for f in field.finditer(m.group(2)):
				out.setdefault(name, {}).setdefault(f.group(1), set()).update(
					re.findall(r'"([^"]*)"', f.group(2))
				)
	assert out.get("createFileUpload", {}).get("mode"), "the @notionhq/client types changed"
	return out


@pytest.fixture(scope="session")
def github_openapi() -> dict[str, Any]:
	"""GitHub's OpenAPI description from @octokit/openapi."""
	return json.loads(read_member("octokit", "package/generated/api.github.com.json"))


@pytest.fixture(scope="session")
def shopify_introspection() -> dict[str, Any]:
	"""The Admin API 2026-10 introspection (and per-field access scopes) from @shopify/dev-mcp."""
	raw = read_member("shopify", "package/dist/data/admin_2026-10.json.gz")
	return json.loads(gzip.decompress(raw))


@pytest.fixture
def shape() -> Callable[[HttpTool], dict[str, Any]]:
	"""A tool's request shape: method, path template, query keys, body keys, file fields."""

	def _shape(tool: HttpTool) -> dict[str, Any]:
		return {
			"method": tool.method,
			"path": path_template(tool.endpoint),
			"query": query_keys(tool),
			"body": body_keys(tool),
			"files": set(tool.files),
			"inputs": template_inputs(
				[tool.endpoint, tool.query_params, tool.body, tool.headers, tool.files]
			),
		}

	return _shape

"""The npm references of the social conformance tests, cached in ``.cache/refs/``.

``nox -s tests`` packs them (noxfile.py ``NPM_REFS``); by hand:
``npm pack <package>@<version> --pack-destination .cache/refs`` from the repository root.
"""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
REFS = Path(os.environ.get("OPENMOLT_REFS_DIR", ROOT / ".cache" / "refs"))

# package, version, tarball name; noxfile.py packs the same list.
NPM_REFS = {
	# Telegram Bot API type declarations (grammY), see test_social_telegram_reference.py.
	"grammy": ("@grammyjs/types", "5.0.0", "grammyjs-types-5.0.0.tgz"),
	# Meta's official Node.js Business SDK: how it encodes Graph API request bodies.
	"fb-node": (
		"facebook-nodejs-business-sdk",
		"24.0.1",
		"facebook-nodejs-business-sdk-24.0.1.tgz",
	),
	# Discord's OpenAPI document, as TypeScript and Zod schemas generated from it.
	"discord": ("discord-api-spec", "10.0.266135", "discord-api-spec-10.0.266135.tgz"),
	# Zod, whose own toJSONSchema turns discord-api-spec's Zod schemas back into JSON Schema.
	"zod": ("zod", "4.6.7", "zod-4.6.7.tgz"),
}


def npm_tarball(key: str) -> Path:
	"""The cached tarball of an npm reference, or a failure naming the command that fetches it."""
	package, version, filename = NPM_REFS[key]
	path = REFS / filename
	if not path.is_file():
		pytest.fail(
			f"reference package {package}@{version} is not cached at {path}; run "
			f"`npm pack {package}@{version} --pack-destination .cache/refs` from the repository "
			"root (or `uv run nox -s tests`, which does it)",
			pytrace=False,
		)
	return path


def npm_member(key: str, member: str) -> str:
	"""One text file of a cached npm reference."""
	package, version, _ = NPM_REFS[key]
	with tarfile.open(npm_tarball(key), "r:gz") as tar:
		handle = tar.extractfile(f"package/{member}")
		if handle is None:
			pytest.fail(f"{member} is missing from {package}@{version}", pytrace=False)
		return handle.read().decode("utf-8")


def npm_install(keys: list[str], into: Path) -> Path:
	"""Unpack cached npm references as ``into/node_modules/<name>``; return ``into``."""
	for key in keys:
		package = NPM_REFS[key][0]
		target = into / "node_modules" / package
		target.mkdir(parents=True, exist_ok=True)
		with tarfile.open(npm_tarball(key), "r:gz") as tar:
			for info in tar:
				if not info.isfile() or not info.name.startswith("package/"):
					continue
				dest = target / info.name.removeprefix("package/")
				dest.parent.mkdir(parents=True, exist_ok=True)
				handle = tar.extractfile(info)
				assert handle is not None
				dest.write_bytes(handle.read())
	return into

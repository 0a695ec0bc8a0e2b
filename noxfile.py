"""Every check runs here, the same for developers and CI: ``uv run nox -s tests``."""

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["tests", "lint"]
nox.options.reuse_existing_virtualenvs = True


def _sync(session: nox.Session, *groups: str) -> None:
	session.env["UV_PROJECT_ENVIRONMENT"] = session.virtualenv.location  # sync into nox's venv
	args = ["uv", "sync", "--all-packages", "--all-extras"]
	args += [f"--group={g}" for g in groups]
	session.run_install(*args, silent=True)


# Official API references the conformance tests read (tests/integrations/*/conftest.py); too
# large to commit, so they are packed from npm into .cache/refs/ once.
NPM_REFS = [
	"@notionhq/client@5.26.0",
	"@octokit/openapi@23.0.2",
	"@shopify/dev-mcp@1.16.0",
	"etsy-ts@8.0.1",
	"airtable@0.12.2",
	"google-proto-files@6.0.1",
	"@readme/oas-examples@8.2.2",
	"@grammyjs/types@5.0.0",
	"facebook-nodejs-business-sdk@24.0.1",
	"discord-api-spec@10.0.266135",
	"zod@4.6.7",
]

# npm tools the ecosystem tests start (tests/ecosystem/): a published reference MCP server and the
# Prism mock server that validates the imported OpenAPI tools' requests. Installed once into
# .cache/node/ (bin name -> package).
NPM_TOOLS = {
	"mcp-server-everything": "@modelcontextprotocol/server-everything@2026.8.18",
	"prism": "@stoplight/prism-cli@5.16.0",
}
# npm libraries the tests load with node, installed the same way: AG-UI's published TypeScript
# client drives `openmolt serve`'s AG-UI endpoint (tests/serve/test_serve_agui_client.py).
NPM_LIBS = ["@ag-ui/client@1.0.0"]


# PyPI source distributions the tests read: jsonschema's vendors the official
# JSON-Schema-Test-Suite (json/tests/), run against our validator (tests/core/test_jsonschema_suite.py).
PYPI_REFS = ["jsonschema==4.26.0"]


def _refs(session: nox.Session) -> None:
	"""Fill .cache/refs/ with the npm and PyPI reference tarballs that are missing (npm, uvx)."""
	from pathlib import Path

	cache = Path(".cache/refs")
	cache.mkdir(parents=True, exist_ok=True)
	for spec in NPM_REFS:
		name, version = spec.rsplit("@", 1)
		tarball = f"{name.lstrip('@').replace('/', '-')}-{version}.tgz"
		if not (cache / tarball).is_file():
			session.run(
				"npm", "pack", spec, "--pack-destination", str(cache), external=True, silent=True
			)
	for spec in PYPI_REFS:
		name, version = spec.split("==")
		if not (cache / f"{name}-{version}.tar.gz").is_file():
			session.run(
				*("uvx", "pip", "download", spec, "--no-binary", ":all:", "--no-deps"),
				*("-d", str(cache)),
				external=True,
				silent=True,
			)


def _node_tools(session: nox.Session) -> None:
	"""Install the npm test tools into .cache/node/ unless they are all there (needs npm)."""
	from pathlib import Path

	modules = Path(".cache/node/node_modules")
	libs = [spec.rsplit("@", 1)[0] for spec in NPM_LIBS]
	if all((modules / ".bin" / name).exists() for name in NPM_TOOLS) and all(
		(modules / lib / "package.json").is_file() for lib in libs
	):
		return
	session.run(
		"npm",
		"install",
		"--prefix",
		".cache/node",
		"--no-save",
		"--no-audit",
		"--no-fund",
		"--loglevel=error",
		*NPM_TOOLS.values(),
		*NPM_LIBS,
		external=True,
		silent=True,
	)


@nox.session(python="3.11")
def tests(session: nox.Session) -> None:
	"""Run the test suite (pass pytest options after --)."""
	from pathlib import Path

	_refs(session)
	_node_tools(session)
	_sync(session, "test")
	# loadgroup: tests marked xdist_group("browser") (tests/ui) share one worker, so the browser
	# tests run one after another; everything else spreads over the workers as before.
	# --durations: every run prints its 15 slowest tests (the suite is kept under 8 minutes).
	# tests/dbos run in five xdist groups (each serially, with per-test timeouts, the groups side
	# by side: per store, the tests that start worker processes and those that do not, and one
	# for the tests of no one store): they start real DBOS engines and worker processes. The
	# groups of process tests, the longest, are handed out first (tests/_xdist_order.py).
	# The tests that read the official SDKs' own types (anthropic, google-genai, google-ads:
	# tests/providers, tests/integrations/google; openai, fal-client, browser-use-sdk, dropbox:
	# tests/integrations/media) are one group, "sdk-types", and import them in the tests: those
	# imports cost about 5 s of CPU, paid by each worker that ran one of the tests or collected
	# a module importing one (all four), now by one.
	# PostgreSQL cases need OPENMOLT_TEST_POSTGRES_URL (.ci/run).
	# Four workers on a 2-core machine: the tests wait (for subprocesses, servers, DBOS
	# recovery, a crash harness's 60 s budget) about 40% of their time. Measured idle on
	# 2026-12-04, pytest's time and the share of one core used: two workers 9:49 (115%), three
	# 7:06-8:16 (132%), four 6:15 (157%); the durable groups stay serial per store.
	# Python's bytecode caches, in .cache/pycache (outside the source folders), whatever the
	# environment says: with PYTHONDONTWRITEBYTECODE set (as on the machine CI runs on), every
	# process compiled every module it imported from source, each time: each of the four workers
	# compiled and assertion-rewrote the whole suite (collection 35 s of CPU, 12 s with the
	# caches), and each interpreter a test starts compiled what it imports again (`import dbos`
	# 1.5 s of CPU, 0.5 s with the caches).
	cache = {
		"PYTHONDONTWRITEBYTECODE": None,  # None: unset for pytest and what it starts
		"PYTHONPYCACHEPREFIX": str(Path(".cache/pycache").resolve()),
	}
	session.run(
		*("pytest", "-n", "4", "--dist", "loadgroup", "--durations=15", *session.posargs),
		env=cache,
	)


@nox.session(python="3.11")
def lint(session: nox.Session) -> None:
	"""Ruff lint and format check; the layers and import cycles of openmolt_core (import-linter)."""
	_sync(session, "lint")
	session.run("ruff", "check", ".")
	session.run("ruff", "format", "--check", ".")
	# The contracts and their ratchets (the upward imports and cycles of today, listed one by
	# one) are in importlinter.toml; Architecture.md, section "Layers", explains them.
	session.run("lint-imports", "importlinter.toml", "--no-cache")


@nox.session(python="3.11")
def typing(session: nox.Session) -> None:
	"""mypy --strict on the packages."""
	_sync(session, "lint", "test")
	session.run(
		"mypy",
		"openmolt_core/src/openmolt_core",
		"openmolt_core/src/openmolt",
		"openmolt_providers/src/openmolt_providers",
		"openmolt_integrations/src/openmolt_integrations",
		"openmolt_mcp/src/openmolt_mcp",
		"openmolt_evals/src/openmolt_evals",
		"openmolt_ui/src/openmolt_ui",
		"openmolt_otel/src/openmolt_otel",
		"openmolt_dbos/src/openmolt_dbos",
		"openmolt_serve/src/openmolt_serve",
		"tests/typing",
	)


VERIFY_TYPES = {"openmolt_core": 0.95, "openmolt": 0.95}
"""The public packages whose typed completeness pyright checks, and the least score each needs."""


@nox.session(python="3.11")
def verifytypes(session: nox.Session) -> None:
	"""pyright --verifytypes on the public API, from the built wheel (at least 95% typed)."""
	import json
	import tempfile
	from pathlib import Path

	# pyright reads a package's py.typed from site-packages, so an editable install is not enough.
	out = Path(tempfile.mkdtemp(prefix="verifytypes-"))
	session.run(
		"uv",
		"build",
		"--package",
		"openmolt-core",
		"--wheel",
		"-o",
		str(out),
		external=True,
		silent=True,
	)
	session.install(*[str(w) for w in out.glob("*.whl")], "pyright>=1.1.400")
	for package, least in VERIFY_TYPES.items():
		report = session.run(
			"pyright",
			"--verifytypes",
			package,
			"--ignoreexternal",
			"--outputjson",
			silent=True,
			success_codes=[0, 1],
		)
		score = json.loads(str(report))["typeCompleteness"]["completenessScore"]
		session.log(f"{package}: {score:.1%} typed (at least {least:.0%})")
		if score < least:
			session.run(
				"pyright", "--verifytypes", package, "--ignoreexternal", success_codes=[0, 1]
			)
			session.error(f"{package} is {score:.1%} typed; at least {least:.0%} is needed")


@nox.session(python="3.11")
def docs(session: nox.Session) -> None:
	"""Build the documentation site (strict)."""
	_sync(session, "docs")
	session.run("mkdocs", "build", "--strict")


@nox.session(python="3.11")
def prices(session: nox.Session) -> None:
	"""Regenerate openmolt_providers/_price_table.py from the locked genai-prices."""
	_sync(session, "test")
	session.run("python", "tests/providers/update_prices.py")
	session.run("ruff", "format", "openmolt_providers/src/openmolt_providers/_price_table.py")


WHEEL_PACKAGES = {
	"openmolt": set(),
	"openmolt_core": {"openmolt_core", "openmolt"},
	"openmolt_providers": {"openmolt_providers"},
	"openmolt_integrations": {"openmolt_integrations"},
	"openmolt_mcp": {"openmolt_mcp"},
	"openmolt_ui": {"openmolt_ui"},
	"openmolt_otel": {"openmolt_otel"},
	"openmolt_dbos": {"openmolt_dbos"},
	"openmolt_serve": {"openmolt_serve"},
	"openmolt_evals": {"openmolt_evals"},
}


@nox.session(python="3.11")
def build(session: nox.Session) -> None:
	"""Build the wheels and check each holds only its packages (no tests, no docs)."""
	import shutil
	import zipfile
	from pathlib import Path

	out = Path(".nox/dist")
	shutil.rmtree(out, ignore_errors=True)
	for name in (
		"openmolt",
		"openmolt-core",
		"openmolt-providers",
		"openmolt-integrations",
		"openmolt-mcp",
		"openmolt-ui",
		"openmolt-otel",
		"openmolt-dbos",
		"openmolt-serve",
		"openmolt-evals",
	):
		session.run(
			"uv", "build", "--package", name, "--wheel", "-o", str(out), external=True, silent=True
		)
	for wheel in sorted(out.glob("*.whl")):
		dist = wheel.name.split("-")[0]
		tops = {n.split("/")[0] for n in zipfile.ZipFile(wheel).namelist()}
		packages = {t for t in tops if not t.endswith(".dist-info")}
		if packages != WHEEL_PACKAGES[dist]:
			session.error(
				f"{wheel.name} holds {sorted(packages)}, expected {sorted(WHEEL_PACKAGES[dist])}"
			)
		session.log(f"{wheel.name}: {sorted(packages) or 'metadata only'}")

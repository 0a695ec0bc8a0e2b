import importlib.util
import io
import itertools
import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest


def _load_activate():
	path = Path(__file__).parent / "plugins" / "activate.py"
	spec = importlib.util.spec_from_file_location("openmolt_test_plugins", path)
	module = importlib.util.module_from_spec(spec)
	spec.loader.exec_module(module)
	return module


_plugins = _load_activate()
_root = _plugins.activate()  # before any test (or plugin cache) reads the entry points

# Property tests judge behaviour, not speed: a loaded 2-core machine stalls a draw for a second
# now and then, which Hypothesis's deadline and too_slow health check took for a failure.
from hypothesis import HealthCheck, settings  # noqa: E402

settings.register_profile("openmolt", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("openmolt")


def _defer_the_ca_bundle() -> None:
	"""The tests' own httpx clients read their CA bundle at their first TLS handshake, not when made.

	httpx's default transport reads the whole bundle when a client is made (18-30 ms of CPU, in
	a C call): the clients the tests make to talk to their servers on 127.0.0.1 over plain HTTP
	(about one test in ten makes one) paid it for nothing. They get the context the shared client
	uses (`openmolt_core._tls`: httpx's settings, the bundle read at the first handshake,
	tests/core/test_tls.py), with the bundle httpx would read (``SSL_CERT_FILE``, else
	``SSL_CERT_DIR`` when the client trusts the environment, else certifi's); a client given its
	own ``verify`` or ``cert`` gets httpx's own context.
	"""
	import ssl

	import certifi
	from httpx._transports import default

	from openmolt_core import _tls

	class Deferred(_tls._DeferredTrust):
		where: dict[str, str]  # what load_verify_locations reads: httpx's choice

		def trust(self) -> None:
			with self._lock:
				if not self._trusted:
					self.load_verify_locations(**self.where)
					self._trusted = True

	made_by_httpx = default.create_ssl_context

	def create_ssl_context(verify: Any = True, cert: Any = None, trust_env: bool = True) -> Any:
		if verify is not True or cert is not None:
			return made_by_httpx(verify=verify, cert=cert, trust_env=trust_env)
		context = Deferred(ssl.PROTOCOL_TLS_CLIENT)  # as _tls.client_context() makes it
		if sys.version_info >= (3, 13):
			context.verify_flags |= ssl.VERIFY_X509_PARTIAL_CHAIN | ssl.VERIFY_X509_STRICT
		if trust_env and os.environ.get("SSL_CERT_FILE"):
			context.where = {"cafile": os.environ["SSL_CERT_FILE"]}
		elif trust_env and os.environ.get("SSL_CERT_DIR"):
			context.where = {"capath": os.environ["SSL_CERT_DIR"]}
		else:
			context.where = {"cafile": certifi.where()}
		keylog = os.environ.get("SSLKEYLOGFILE")  # as ssl.create_default_context reads it
		if keylog and not sys.flags.ignore_environment:
			context.keylog_filename = keylog
		return context

	default.create_ssl_context = create_ssl_context  # type: ignore[assignment]


_defer_the_ca_bundle()


def pytest_configure(config: pytest.Config) -> None:
	"""The tests' temporary folders (``tmp_path``) are kept in memory, on /dev/shm, where there is one.

	The tests' SQLite stores (sessions, run stores, DBOS's system database) live in ``tmp_path``,
	and each commit waited for the disk to sync: on this machine's ext4 /tmp, 14 of the session
	tests took 95 s of wall time for 17 s of CPU, 35 s for 11 s on tmpfs. pytest still numbers
	and cleans the folders (pytest-of-USER/pytest-N, the latest three kept); ``--basetemp``, or
	``PYTEST_DEBUG_TEMPROOT`` set to another folder, puts them elsewhere. xdist's workers get
	their folders under the controller's, so this is read once, before any folder is made.
	"""
	shm = Path("/dev/shm")
	if config.option.basetemp is None and shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
		os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", str(shm))


def pytest_unconfigure(config: pytest.Config) -> None:
	_plugins.deactivate(_root)


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook (`-p no:xdist` leaves it unused)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
	"""``--dist loadgroup`` hands the longest xdist groups out first (tests/_xdist_order.py)."""
	from tests._xdist_order import make_scheduler

	return make_scheduler(config, log)


@pytest.fixture
def anyio_backend() -> str:
	return "asyncio"


@pytest.fixture(autouse=True)
def _no_dns(monkeypatch: pytest.MonkeyPatch) -> None:
	"""Tests never resolve names: the SSRF guard's default resolver answers a public address.

	A test about resolution passes its own resolver (``SsrfGuard(resolver=...)``) or replaces
	this one; IP literals never reach a resolver.
	"""
	from openmolt_core.integrations import _ssrf

	async def public(host: str, port: int) -> list[str]:
		return ["93.184.216.34"]

	monkeypatch.setattr(_ssrf, "resolve_host", public)


@pytest.fixture(autouse=True)
def _secrets_stay_in_their_test() -> Iterator[None]:
	"""The log filter and every streamed text mask the secrets of every live holder in the
	process: what a test made that outlives it (not yet collected, or kept by a process-wide
	object such as DBOS's one instance) would mask its secrets in the next tests. A test with the
	short secret "to" made another test's log assertion fail at random; an approval key read from
	the environment by a durable test ("a shared approval key ...") held back the "a " a
	streaming test waited for, in a later test of the same worker. So the secret sets, the
	redactors and the keys given in code (`openmolt_core._support.secretset`) that a test made
	are forgotten at its end; what the holders of its fixtures made before it stays."""
	from openmolt_core._support import secretset

	before = set(secretset._LIVE)
	watched = set(secretset._WATCHED)
	with secretset._LOCK:
		keys = dict(secretset._KEYS)
	yield
	for left in set(secretset._LIVE) - before:
		secretset._LIVE.discard(left)
		left._live = False  # should it be used again, its next secret puts it back
	for left in set(secretset._WATCHED) - watched:
		secretset._WATCHED.discard(left)
	with secretset._LOCK:
		secretset._drop_dead()
		for owner in set(secretset._KEYS) - set(keys):
			del secretset._KEYS[owner]
		for owner, texts in keys.items():  # an owner that lives on and was given more keys
			if owner in secretset._KEYS:
				secretset._KEYS[owner] = texts
		secretset._UNION[0] = None  # `registered_keys` computes its kept union again


@pytest.fixture(autouse=True)
def _session_turn_lapse_stays_in_its_test() -> Iterator[None]:
	"""A durable engine sets the process's session-turn lapse to its own (`hold_turns_for`):
	one a test built (tests/dbos/test_paused_locks.py builds one for its tables) would leave its
	short lapse to every later PostgreSQL session test of the worker."""
	from openmolt_core import sessions

	before = sessions._TURN_LAPSE
	yield
	sessions._TURN_LAPSE = before


@pytest.fixture(autouse=True, scope="session")
def _run_store_in_a_temporary_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
	# The `openmolt` command records its runs under $XDG_STATE_HOME (openmolt_core.runstore):
	# tests, and the commands they start, write there instead of the user's home. Likewise the
	# key store of `openmolt keys` ($XDG_CONFIG_HOME/openmolt/keys.json), and the models a Tab
	# offers ($XDG_CACHE_HOME/openmolt/completion-models.json).
	names = ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME")
	old = {name: os.environ.get(name) for name in names}
	os.environ["XDG_STATE_HOME"] = str(tmp_path_factory.mktemp("state"))
	os.environ["XDG_CONFIG_HOME"] = str(tmp_path_factory.mktemp("config"))
	os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
	yield
	for name, value in old.items():
		if value is None:
			os.environ.pop(name, None)
		else:
			os.environ[name] = value


@pytest.fixture(scope="session")
def _state_folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
	"""The folder that holds each test's own state folder (``_state_folder_per_test``)."""
	return tmp_path_factory.mktemp("states")


_STATE_NUMBERS = itertools.count()


@pytest.fixture(autouse=True)
def _state_folder_per_test(_state_folders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
	# Each test's own state folder: the schedules the commands it starts serve keep their
	# cursors and leases there ($XDG_STATE_HOME/openmolt/schedules.db), and two tests serving
	# one agent file's schedule must not find each other's. Numbered here, in a folder of their
	# own: `tmp_path_factory.mktemp` lists the whole temporary folder to find its next number,
	# so one call per test cost each test time in proportion to the tests before it (a worker's
	# 3,500 tests spent 4.8 s of CPU listing, 0.07 s numbered here), and every `tmp_path` after
	# them listed them all again.
	folder = _state_folders / str(next(_STATE_NUMBERS))
	folder.mkdir()
	monkeypatch.setenv("XDG_STATE_HOME", str(folder))


class _Terminal(io.StringIO):
	"""A captured stdout that says it is a terminal (what a person at one sees)."""

	def isatty(self) -> bool:
		return True


def _in_process(
	args: list[str], *, cwd: Path, env: dict[str, str], stdin: str = "", tty: bool = False
) -> subprocess.CompletedProcess[str]:
	from openmolt_core import testing
	from openmolt_core.cli import main

	saved_allow = testing.ALLOW_MODEL_REQUESTS
	saved_env = dict(os.environ)
	saved_path = list(sys.path)
	saved_modules = set(sys.modules)
	saved_streams = (sys.stdin, sys.stdout, sys.stderr)
	saved_cwd = os.getcwd()
	out, err = (_Terminal() if tty else io.StringIO()), io.StringIO()
	try:
		os.environ.clear()
		os.environ.update(env)
		os.chdir(cwd)
		sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin), out, err
		# The command sends model requests as a user's does (the tests' go to local fakes).
		testing.ALLOW_MODEL_REQUESTS = True
		with warnings.catch_warnings():
			_python_default_warnings()
			try:
				code = main(args)
			except SystemExit as exc:  # argparse's usage errors and --help
				code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
	finally:
		testing.ALLOW_MODEL_REQUESTS = saved_allow
		sys.stdin, sys.stdout, sys.stderr = saved_streams
		os.chdir(saved_cwd)
		os.environ.clear()
		os.environ.update(saved_env)
		sys.path[:] = saved_path
		# Python agent files and --tool files, imported by path, and --tool modules beside them
		# (a test's folder, never the repository's own packages): the next test imports its own.
		here = Path(cwd).resolve()
		beside = not Path(__file__).resolve().parent.is_relative_to(here)
		for name in set(sys.modules) - saved_modules:
			module_file = getattr(sys.modules[name], "__file__", None)
			if name.startswith(("openmolt_agentfile_", "openmolt_toolfile_")) or (
				beside and module_file and Path(module_file).resolve().is_relative_to(here)
			):
				del sys.modules[name]
	return subprocess.CompletedProcess(
		["openmolt", *args], int(code), stdout=out.getvalue(), stderr=err.getvalue()
	)


def _python_default_warnings() -> None:
	"""The warning filters of a plain `python` process (pytest's turn warnings into errors)."""
	warnings.resetwarnings()
	warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
	for category in (DeprecationWarning, PendingDeprecationWarning, ImportWarning, ResourceWarning):
		warnings.simplefilter("ignore", category, append=True)


@pytest.fixture
def cli_in_process() -> Callable[..., subprocess.CompletedProcess[str]]:
	"""Run the ``openmolt`` command in this process: ``run(args, cwd=..., env=..., stdin="")``.

	``tty=True`` makes its stdout say it is a terminal (the summary, streamed text).

	It is `openmolt_core.cli.main(args)` with exactly that environment, folder and stdin and
	Python's default warning filters, its stdout, stderr and exit code returned as a
	``CompletedProcess``; what a test of arguments and output needs, without the second or more
	a fresh interpreter spends starting and importing. The environment, folder, streams,
	``sys.path`` and the Python agent files it imported are restored afterwards.
	"""
	return _in_process


def pytest_collection_finish(session: pytest.Session) -> None:
	"""What collection made (the modules, the test items: kept to the end) is frozen, out of the
	cyclic collector's walks, and the youngest generation is collected ten times less often.

	The collector walked every object the worker held at each full collection: in 869 tests of
	tests/core (test_[d-i]*, -n 0) it ran 6,027 times for 13.1 s of the run's 32.9 s of CPU.
	Frozen after collection (a collection first, so nothing dead is kept), 7.2 s of 26.7; with
	7,000 allocations between young collections instead of 700, 5.8 s of 25.5. What a test leaves
	in cycles is still freed, later; a test that needs it gone calls ``gc.collect()``.
	"""
	import gc

	gc.collect()
	gc.freeze()
	gc.set_threshold(7000, *gc.get_threshold()[1:])


@pytest.hookimpl(trylast=True)  # after pytest's own: the module's fixtures are finalized
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
	"""Between two test modules, what the tests left is collected and what lives on is frozen.

	What a module's tests import or cache stays for the rest of the worker's run, and each full
	collection walked it again: frozen once, after collection, the collector still took 5.2 s of
	24.2 s of CPU in tests/core/test_[d-i]* (-n 0); frozen at each module's end, 0.8 s of 19.5
	(the same peak memory). The collection first frees every cycle the module's tests left.
	"""
	if nextitem is not None and getattr(nextitem, "module", None) is not getattr(
		item, "module", None
	):
		import gc

		gc.collect()
		gc.freeze()

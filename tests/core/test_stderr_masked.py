"""What Python prints to stderr about an exception is masked: a failing log handler's report
(``logging.Handler.handleError`` prints the live exception chain, notes included) and the
``openmolt`` command's exception hooks (an uncaught exception, one in a thread, one Python could
not raise)."""

from __future__ import annotations

import gc
import logging
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from openmolt import OpenMolt
from openmolt_core._support.masking import mask_known
from openmolt_core._support.stderr_masking import install_masked_hooks, uninstall_masked_hooks

SECRET = "sk-HandleErrorCanary-000111"


class _BrokenStream:
	"""A stream whose every write fails (a closed pipe, a full disk)."""

	def write(self, text: str) -> int:
		raise OSError("the stream is gone")

	def flush(self) -> None:
		raise OSError("the stream is gone")


@contextmanager
def _broken_logger(name: str) -> Iterator[logging.Logger]:
	"""A logger whose one handler writes to a `_BrokenStream` (not propagated), put back after."""
	logger = logging.getLogger(name)
	handler = logging.StreamHandler(_BrokenStream())
	logger.addHandler(handler)
	logger.propagate = False
	try:
		yield logger
	finally:
		logger.removeHandler(handler)
		logger.propagate = True


@pytest.fixture
def om() -> Any:
	"""An instance that knows the secret (and so installs the log redaction)."""
	return OpenMolt(entry_points=False, secrets=[SECRET])


def test_a_failing_handler_prints_the_exception_being_handled_masked(
	om: Any, capsys: pytest.CaptureFixture[str]
) -> None:
	with _broken_logger("app.broken_handler") as logger:
		try:
			raise ValueError(f"the service refused token {SECRET}")
		except ValueError as exc:
			exc.add_note(f"sent Authorization: Bearer {SECRET}")
			logger.error("calling the service failed")
	err = capsys.readouterr().err
	assert "--- Logging error ---" in err and "the stream is gone" in err
	assert "the service refused token [redacted]" in err  # the chain is shown, masked
	assert SECRET not in err, err


def test_a_handler_failing_outside_an_exception_still_reports(
	om: Any, capsys: pytest.CaptureFixture[str]
) -> None:
	"""The wrapper shows what ``handleError`` printed, the record's message and arguments too."""
	with _broken_logger("app.broken_handler_plain") as logger:
		logger.error("key %s", SECRET)
	err = capsys.readouterr().err
	assert "--- Logging error ---" in err and "Message: " in err
	assert SECRET not in err


def test_the_commands_hooks_print_uncaught_exceptions_masked(
	om: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
	"""``sys.excepthook``, ``threading.excepthook`` and ``sys.unraisablehook``, as installed."""
	monkeypatch.setattr(sys, "excepthook", sys.__excepthook__)  # Python's, not pytest's
	monkeypatch.setattr(threading, "excepthook", threading.__excepthook__)
	monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)
	install_masked_hooks(mask_known)
	try:
		try:
			raise RuntimeError(f"uncaught with {SECRET}")
		except RuntimeError as exc:
			sys.excepthook(type(exc), exc, exc.__traceback__)

		def fail() -> None:
			raise RuntimeError(f"thread failed with {SECRET}")

		thread = threading.Thread(target=fail)
		thread.start()
		thread.join()

		class Finalized:
			def __del__(self) -> None:
				raise RuntimeError(f"finalizer failed with {SECRET}")

		Finalized()
		gc.collect()
	finally:
		uninstall_masked_hooks()
	err = capsys.readouterr().err
	for said in ("uncaught with", "thread failed with", "finalizer failed with"):
		assert f"{said} [redacted]" in err, err
	assert SECRET not in err
	assert sys.excepthook is sys.__excepthook__  # put back


def test_the_command_prints_an_uncaught_exception_masked(tmp_path: Any) -> None:
	"""An exception no handler of ``openmolt`` catches (a ``BaseException`` a tool raised)."""
	script = tmp_path / "boom.py"
	script.write_text(
		"import os\n"
		f"os.environ['OPENMOLT_OPENAI_API_KEY'] = {SECRET!r}\n"
		"from openmolt_core.cli import main\n"
		"from openmolt_core import cli\n"
		"class Abort(BaseException):\n"
		"    pass\n"
		"def boom(args):\n"
		f"    raise Abort('aborted with ' + {SECRET!r})\n"
		"cli._dispatch = boom\n"
		"main()\n"
	)
	done = subprocess.run(
		[sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
	)
	assert "Abort: aborted with [redacted]" in done.stderr, done.stderr
	assert SECRET not in done.stderr

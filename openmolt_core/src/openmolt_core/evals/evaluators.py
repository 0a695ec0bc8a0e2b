"""Moved: `openmolt_evals.evaluators` (``pip install "openmolt[evals]"``); re-exported here."""

from __future__ import annotations

from openmolt_evals.evaluators import *  # noqa: F403
from openmolt_evals.evaluators import __all__ as __all__

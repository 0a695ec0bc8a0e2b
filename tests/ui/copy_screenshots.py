"""Copy the browser tests' screenshots that the docs show into docs/guides/.

The browser tests save a screenshot of each page they check under ``.artifacts/ui/``
(git-ignored). To refresh the docs' pictures after the page changed:

```bash
uv run pytest tests/ui -q            # writes .artifacts/ui/*.png
uv run python tests/ui/copy_screenshots.py
```
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / ".artifacts" / "ui"
TARGET = ROOT / "docs" / "guides"

SHOWN = {
	"timeline.png": "ui-timeline.png",
	"decisions.png": "ui-decisions.png",
	"sub-agent.png": "ui-sub-agent.png",
	"nested-runs.png": "ui-nested-runs.png",
	"resumed-run.png": "ui-resumed-run.png",
	"filters.png": "ui-filters.png",
	"overview.png": "ui-overview.png",
	"run-phone.png": "ui-phone.png",
}
"""The screenshot each docs picture is (``.artifacts/ui/`` name → ``docs/guides/`` name)."""


def main() -> int:
	"""Copy them; say which are missing (run the browser tests first)."""
	missing = [name for name in SHOWN if not (SOURCE / name).exists()]
	if missing:
		print(
			f"missing in {SOURCE}: {', '.join(missing)}; run `uv run pytest tests/ui` first",
			file=sys.stderr,
		)
		return 1
	for name, target in SHOWN.items():
		shutil.copyfile(SOURCE / name, TARGET / target)
		print(f"{TARGET / target}")
	return 0


if __name__ == "__main__":
	sys.exit(main())

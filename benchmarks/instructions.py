"""Where figure 7's one-shot run spends its instructions, module by module (``valgrind``).

    benchmarks/.envs/openmolt/bin/python benchmarks/instructions.py openmolt --port P [--top 25]

Runs ``oneshot.py`` once under ``valgrind --tool=callgrind`` with ``PYTHONHASHSEED=0``, so the
figures do not depend on the machine's load: the same tree reads the same counts to within
0.01 % (an A/B against main: ``PYTHONPATH`` on either tree's ``src`` folders, as in ``run.py``).
Each module's load (finding it, unmarshalling its bytecode, running its body, with the
collector passes that fall inside) is cut out of the count by a marker call on either side
(``os.getppid``, which callgrind dumps before), its imports' loads excluded; what is left is
the run itself (configuration, the requests, the tool call) and the interpreter's exit.
Prints the totals, OpenMolt's modules and the largest others. The markers add about 1 % to
the process's count (compare totals with totals, not with a plain callgrind run).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import os, sys
import importlib._bootstrap as bootstrap

mark = os.getppid
owners = []
stack = ["(the run)"]
load = bootstrap._load_unlocked


def marked(spec):
	mark()
	owners.append(stack[-1])
	stack.append(spec.name)
	try:
		return load(spec)
	finally:
		mark()
		owners.append(stack.pop())


bootstrap._load_unlocked = marked
sys.argv = ["oneshot.py", *ARGS]
sys.path.insert(0, HERE)
import oneshot

oneshot.main()
bootstrap._load_unlocked = load
mark()
owners.append("(the run)")
with open(OWNERS, "w") as f:
	f.write("\n".join(owners))
"""
"""The child: oneshot.py with a marker around each module's load; who owned each stretch."""


def count(part: Path) -> tuple[int, int]:
	"""The part's number and its instruction count, from a callgrind dump's header."""
	head = part.read_text(errors="replace")[:4000]
	number = re.search(r"^part: (\d+)", head, re.M)
	total = re.search(r"^summary: (\d+)", head, re.M)
	if number is None or total is None:
		raise SystemExit(f"not a callgrind dump: {part}")
	return int(number.group(1)), int(total.group(1))


def measure(framework: str, port: int) -> tuple[collections.Counter[str], int]:
	"""Instructions by owner (a module's name, or the run), and the exit's."""
	with tempfile.TemporaryDirectory() as tmp:
		out = Path(tmp)
		owners_file = out / "owners.txt"
		code = (
			CHILD.replace("ARGS", repr([framework, "--port", str(port)]))
			.replace("HERE", repr(str(HERE)))
			.replace("OWNERS", repr(str(owners_file)))
		)
		env = {**os.environ, "PYTHONHASHSEED": "0"}
		done = subprocess.run(
			[
				"valgrind",
				"--tool=callgrind",
				"--dump-before=getppid",
				f"--callgrind-out-file={out / 'cg.out'}",
				sys.executable,
				"-c",
				code,
			],
			env=env,
			capture_output=True,
			text=True,
			check=False,
		)
		if done.returncode != 0 or not owners_file.exists():
			raise SystemExit(f"the run under valgrind failed:\n{done.stderr[-2000:]}")
		owners = owners_file.read_text().split("\n")
		parts = dict(count(p) for p in out.glob("cg.out*"))
	spent: collections.Counter[str] = collections.Counter()
	for number, owner in enumerate(owners, start=1):  # part k ends at the k-th marker
		spent[owner] += parts.get(number, 0)
	return spent, parts.get(len(owners) + 1, 0)  # the last part: after the last marker


def main() -> None:
	parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
	parser.add_argument("framework", choices=["openmolt", "openmolt-responses", "agno"])
	parser.add_argument("--port", type=int, required=True)
	parser.add_argument("--top", type=int, default=25, help="modules listed besides OpenMolt's")
	args = parser.parse_args()
	spent, exit_ = measure(args.framework, args.port)
	ours = {m: n for m, n in spent.items() if m.split(".")[0].startswith("openmolt")}
	others = {m: n for m, n in spent.items() if m not in ours and m != "(the run)"}
	total = sum(spent.values()) + exit_

	def mi(n: int) -> str:
		return f"{n / 1e6:9.1f} M"

	print(f"{args.framework}: instructions (callgrind, PYTHONHASHSEED=0)")
	print(f"  the process            {mi(total)}")
	print(f"  OpenMolt's modules     {mi(sum(ours.values()))}  ({len(ours)} modules)")
	print(f"  other modules          {mi(sum(others.values()))}  ({len(others)} modules)")
	print(f"  the run besides loads  {mi(spent['(the run)'])}")
	print(f"  the exit               {mi(exit_)}")
	print("  OpenMolt's, each (its own load, its imports' excluded):")
	for name, n in sorted(ours.items(), key=lambda kv: -kv[1]):
		print(f"    {mi(n)}  {name}")
	print(f"  the {args.top} largest others:")
	for name, n in collections.Counter(others).most_common(args.top):
		print(f"    {mi(n)}  {name}")


if __name__ == "__main__":
	main()

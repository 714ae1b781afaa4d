#!/usr/bin/env python3
"""Writes tests/ctest_costs.txt from a build's CTest cost data: the tests that take over a second, longest first.

CTest starts the longest tests first when it knows their times (Testing/Temporary/CTestCostData.txt, which every run
rewrites); a fresh build directory (CI's) has none, so tests/CMakeLists.txt seeds it with this file. Refresh it after
a full run when the slow tests change:  python3 tools/ctest_costs.py [build]
"""
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parent.parent
build = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else root / "build")
rows = {}
for line in (build / "Testing/Temporary/CTestCostData.txt").read_text().splitlines():
    if line.startswith("---"):
        break
    parts = line.rsplit(" ", 2)
    if len(parts) == 3 and parts[1].isdigit():
        try:
            c = float(parts[2])
            if c < 1e9:
                rows[parts[0]] = c
        except ValueError:
            pass
slow = sorted(((c, n) for n, c in rows.items() if c >= 1.0), reverse=True)
out = root / "tests/ctest_costs.txt"
out.write_text("".join(f"{n} 1 {c:.1f}\n" for c, n in slow) + "---\n")
print(f"{out}: {len(slow)} tests of {len(rows)}, {sum(c for c, _ in slow):.0f} s")

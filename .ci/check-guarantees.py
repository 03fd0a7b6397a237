#!/usr/bin/env python3
"""Every test the README's Guarantees section names must exist, so that no promise is left
pointing at a test that was renamed or removed. Names are `file::test` for tests/<file>.rs,
`module::...::test` for unit tests under src/, and `fuzz <target>` for fuzz targets."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
readme = (root / "README.md").read_text()
section = readme.split("## Guarantees", 1)[1].split("\n## ", 1)[0]
# Every `a::b` in a table row must name a test: promises name types without a path, so
# that no path in a row can be mistaken for a test that is not there.
proofs = "\n".join(
    line
    for line in section.splitlines()
    if line.startswith("| ") and not line.startswith("| promise")
)
names = re.findall(r"`([A-Za-z_0-9]+(?:::[A-Za-z_0-9]+)+)`", proofs)
missing = []
for name in names:
    parts = name.split("::")
    test = parts[-1]
    if (root / "tests" / f"{parts[0]}.rs").exists() and len(parts) == 2:
        files = [root / "tests" / f"{parts[0]}.rs"]
    else:
        # A unit test: src/<a>/<b>.rs, src/<a>/<b>/mod.rs or src/<a>.rs, for the module
        # path without its trailing `tests`.
        mods = [p for p in parts[:-1] if p != "tests"]
        base = root / "src" / pathlib.Path(*mods)
        files = [base.with_suffix(".rs"), base / "mod.rs"]
    if not any(f.exists() and re.search(rf"\bfn {test}\b", f.read_text()) for f in files):
        missing.append(name)
for target in re.findall(r"fuzz `([a-z_]+)`", proofs):
    if not (root / "fuzz" / "fuzz_targets" / f"{target}.rs").exists():
        missing.append(f"fuzz {target}")
if missing:
    sys.exit("README Guarantees name tests that do not exist: " + ", ".join(missing))
print(f"README Guarantees: all {len(names)} tests named exist")

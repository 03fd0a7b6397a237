#!/usr/bin/env python3
"""Every test the Guarantees ledger (docs/guarantees.md) names must exist, so that no
promise is left pointing at a test that was renamed or removed. Names are `file::test` for
tests/<file>.rs, `module::...::test` for unit tests under src/, `fuzz <target>` for fuzz
targets, "the `test` units of `a`, `b`" for a unit test of that name in each module, and a
backticked path (`firmware/...`, `.ci/...`) for a firmware check named in prose."""
import pathlib
import re
import sys

root = pathlib.Path(__file__).resolve().parent.parent
ledger = (root / "docs" / "guarantees.md").read_text()
# Every `a::b` in the ledger must name a test: promises name types without a path, so that
# no path in a promise can be mistaken for a test that is not there.
names = re.findall(r"`([A-Za-z_0-9]+(?:::[A-Za-z_0-9]+)+)`", ledger)
missing = []


def module_files(mods):
    """The files of module `a::b` under src/: src/a/b.rs or src/a/b/mod.rs."""
    base = root / "src" / pathlib.Path(*mods)
    return [base.with_suffix(".rs"), base / "mod.rs"]


def defines(files, test):
    return any(f.exists() and re.search(rf"\bfn {test}\b", f.read_text()) for f in files)


for name in names:
    parts = name.split("::")
    test = parts[-1]
    if (root / "tests" / f"{parts[0]}.rs").exists() and len(parts) == 2:
        files = [root / "tests" / f"{parts[0]}.rs"]
    else:
        # A unit test, for the module path without its trailing `tests`: in the module's
        # file, or in its own tests.rs (src/window/tests.rs).
        mods = [p for p in parts[:-1] if p != "tests"]
        files = module_files(mods) + [root / "src" / pathlib.Path(*mods) / "tests.rs"]
    if not defines(files, test):
        missing.append(name)
for target in re.findall(r"fuzz `([a-z_]+)`", ledger):
    if not (root / "fuzz" / "fuzz_targets" / f"{target}.rs").exists():
        missing.append(f"fuzz {target}")
for test, mods in re.findall(r"the `([a-z_0-9]+)` units of ((?:`[a-z_]+`(?:, )?)+)", ledger):
    for module in re.findall(r"`([a-z_]+)`", mods):
        # The module's own file, or any file of its folder (`budget`: ratio.rs, ...).
        files = module_files([module]) + sorted((root / "src" / module).glob("**/*.rs"))
        if not defines(files, test):
            missing.append(f"{module}: {test}")
for path in re.findall(r"`((?:\.ci|firmware|fuzz|tests|src)/[A-Za-z_0-9/.-]+)`", ledger):
    if not (root / path).exists():
        missing.append(path)
if missing:
    sys.exit("docs/guarantees.md names tests that do not exist: " + ", ".join(missing))
print(f"docs/guarantees.md: all {len(names)} tests named exist")

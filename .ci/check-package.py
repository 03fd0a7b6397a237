#!/usr/bin/env python3
"""Checks the file list of the published crate (`cargo package --list`).

The package must hold what a user of the crate needs, and nothing of CI, fuzzing, the
firmware, the benchmarks, the tests or the path-only dev-dependency crates: every file
must match ALLOWED, every file in REQUIRED must be there, and every file the library
includes at compile time (`include_str!`/`include_bytes!` in src/) must be there too.

    cargo package --locked --list | python3 .ci/check-package.py
"""
import fnmatch
import pathlib
import re
import sys

# What a user gets: the library's sources, its manifest and lock file (cargo adds
# Cargo.toml.orig and .cargo_vcs_info.json), the documents the README links to, the
# licenses. Examples, tests and benches need the dev-dependencies (and the path-only
# tailguard-support crate that publishing strips), so they stay in the repository.
ALLOWED = [
    ".cargo_vcs_info.json",
    "Cargo.toml",
    "Cargo.toml.orig",
    "Cargo.lock",
    "README.md",
    "ARCHITECTURE.md",
    "CHANGELOG.md",
    "BENCHMARKS.md",
    "LICENSE-MIT",
    "LICENSE-APACHE",
    "src/*.rs",  # fnmatch's `*` also matches `/`: every .rs file under src/
    "docs/*.md",
]

REQUIRED = [
    "Cargo.toml",
    "Cargo.lock",
    "README.md",
    "CHANGELOG.md",
    "LICENSE-MIT",
    "LICENSE-APACHE",
    "src/lib.rs",
    "docs/reference.md",
    "docs/guarantees.md",
]

INCLUDE = re.compile(r'include_(?:str|bytes)!\(\s*"([^"]+)"\s*\)')


def included_files(root):
    """Every file the library's sources include, relative to the crate root."""
    found = set()
    for path in sorted((root / "src").rglob("*.rs")):
        for rel in INCLUDE.findall(path.read_text(encoding="utf-8")):
            target = (path.parent / rel).resolve().relative_to(root.resolve())
            found.add(target.as_posix())
    return found


def main():
    root = pathlib.Path(__file__).resolve().parent.parent
    files = [line.strip() for line in sys.stdin if line.strip()]
    if not files:
        print("check-package: empty file list (pipe `cargo package --list` in)")
        return 1
    listed = set(files)
    forbidden = [f for f in files if not any(fnmatch.fnmatch(f, p) for p in ALLOWED)]
    missing = sorted((set(REQUIRED) | included_files(root)) - listed)
    for f in forbidden:
        print(f"check-package: {f} must not be in the package (exclude it in Cargo.toml)")
    for f in missing:
        print(f"check-package: {f} is missing from the package")
    if forbidden or missing:
        return 1
    print(f"check-package: {len(files)} files, all allowed, none missing")
    return 0


if __name__ == "__main__":
    sys.exit(main())

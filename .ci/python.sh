#!/usr/bin/env bash
# The Python binding (python/, PyO3): lint it, build its wheel with maturin, install the
# wheel into the venv .ci/run makes (made here too when this runs alone), run its tests.
set -euo pipefail
cd "$(dirname "$0")/.."

# As python/pyproject.toml's build-system pins it (checked below): a new maturin cannot
# change what CI builds.
maturin_version=1.16.0
grep -q "\"maturin==$maturin_version\"" python/pyproject.toml ||
  { echo "python.sh: python/pyproject.toml does not pin maturin==$maturin_version" >&2; exit 1; }

[ -x .venv/bin/python ] || python3 -m venv .venv
pip=(.venv/bin/pip install --quiet --disable-pip-version-check)
# The tests read DataDog's sketches (ddsketch) and OpenTelemetry's data points; mypy checks
# the type stubs.
"${pip[@]}" ddsketch==3.0.1 protobuf opentelemetry-proto==1.45.2 mypy==2.4.1 "maturin==$maturin_version"

# python/ is a workspace of its own (like firmware/); its build goes under target/, so the
# disk it takes is in what .ci/run's last step prints.
export CARGO_TARGET_DIR="$PWD/target/python"
manifest=(--manifest-path python/Cargo.toml)
cargo fmt "${manifest[@]}" -- --check

wheels="$(mktemp -d)"
trap 'rm -rf "$wheels"' EXIT
.venv/bin/maturin build --release --locked "${manifest[@]}" --out "$wheels"
# Lint after the build, in release too, and with the PyO3 configuration maturin wrote (if
# it is where maturin 1.16 puts it): then nothing of the wheel's build is built again.
pyo3_config=("$CARGO_TARGET_DIR"/maturin/pyo3-config-*.txt)
if [ -f "${pyo3_config[0]}" ]; then export PYO3_CONFIG_FILE="${pyo3_config[0]}"; fi
cargo clippy "${manifest[@]}" --locked --release --all-targets -- -D warnings
unset PYO3_CONFIG_FILE
"${pip[@]}" --force-reinstall --no-deps "$wheels"/tailguard-*.whl
# The stubs went into the wheel, and say what the module has (every name, signature and
# default): mypy's stubtest against the installed module.
.venv/bin/python -m mypy.stubtest tailguard --allowlist python/stubtest-allowlist.txt

.venv/bin/python -m unittest discover -v -s python/tests -t python/tests

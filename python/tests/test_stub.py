"""The type stub (tailguard.pyi) takes what the module takes: calls that run are typed.

stubtest (.ci/python.sh) checks the stub's names, signatures and defaults, not its
parameter types; here mypy checks calls the module accepts against the installed stub.
Skipped without mypy (.ci/python.sh installs it).
"""

import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

try:
    import mypy  # noqa: F401
except ImportError:  # pragma: no cover
    mypy = None

# Each line runs (see test_the_calls_run), and each must type-check.
CALLS = textwrap.dedent(
    """\
    import tailguard
    s = tailguard.Sketch("int")
    s.record_many(x * 1e6 for x in range(1, 4))
    s.record_many_int(x * 1_000_000 for x in range(1, 4))
    a = s.quantiles(q / 10 for q in range(11))
    b = s.quantiles({0.5: "keys are iterated"})
    """
)


class StubTest(unittest.TestCase):
    def test_the_calls_run(self):
        exec(CALLS, {})

    @unittest.skipIf(mypy is None, "mypy is not installed")
    def test_the_calls_type_check(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "calls.py")
            with open(path, "w") as f:
                f.write(CALLS)
            r = subprocess.run(
                [sys.executable, "-m", "mypy", "--strict", "--no-incremental", path],
                cwd=d,
                capture_output=True,
                text=True,
            )
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


if __name__ == "__main__":
    unittest.main()

"""Fleet aggregation: the firmware's device sketches (data/device_*.ddsketch, written by
tailguard's encoding on the device; tests/firmware_expected.rs keeps them current) and a
sketch of DataDog's Python `ddsketch` merge into one tailguard sketch; and tailguard's
bytes read by DataDog's library."""

import math
import pathlib
import unittest

import ddsketch
import ddsketch.pb.ddsketch_pb2 as pb
from ddsketch import LogCollapsingLowestDenseDDSketch
from ddsketch.pb.proto import DDSketchProto

import tailguard
from tailguard import Sketch

from workload import LATENCIES, QUANTILES, exact_quantile, latencies

DATA = pathlib.Path(__file__).resolve().parent / "data"


def device_bytes(name):
    return (DATA / ("%s.ddsketch" % name)).read_bytes()


def datadog_values():
    """What the Python service sketched: 600 known latencies from 0.5 ms to ~100 ms."""
    return [500_000 * 1.009**i for i in range(600)]


def datadog_sketch_bytes(values):
    """DataDog's own sketch of `values`, serialized as DataDog's library does."""
    sketch = LogCollapsingLowestDenseDDSketch(relative_accuracy=0.01, bin_limit=2048)
    for v in values:
        sketch.add(v)
    return DDSketchProto.to_proto(sketch).SerializeToString()


class FleetMergeTest(unittest.TestCase):
    def test_device_sketches_are_the_firmware_workload(self):
        values = latencies()
        whole = Sketch("int_coarse")
        whole.record_many_int(values)
        merged = Sketch.from_ddsketch(device_bytes("device_a"), "int_coarse")
        self.assertEqual(merged.count, LATENCIES // 2)
        report = merged.merge_ddsketch(device_bytes("device_b"))
        self.assertTrue(report.exact)
        self.assertEqual(report.added, LATENCIES - LATENCIES // 2)
        # Bin for bin the firmware's sketch of the whole workload, recorded here.
        self.assertEqual(merged.bins(), whole.bins())
        self.assertEqual(merged.count, LATENCIES)

    def test_devices_and_a_datadog_python_sketch_merge_within_the_combined_error(self):
        self.assertEqual(ddsketch.__version__, "3.0.1")
        py_values = datadog_values()
        union = sorted(latencies() + py_values)
        for preset in ("int_coarse", "log", "cubic", "int"):
            total = Sketch(preset)
            reports = [
                total.merge_ddsketch(device_bytes("device_a")),
                total.merge_ddsketch(device_bytes("device_b")),
                total.merge_ddsketch(datadog_sketch_bytes(py_values), "python"),
            ]
            self.assertEqual([r.added for r in reports], [2000, 2000, 600])
            alpha = total.relative_accuracy
            # The devices' bins are int_coarse's, DataDog's (1 % logarithmic) are "log"'s:
            # each decodes bin for bin into its own preset, and is re-binned elsewhere.
            for report, own in zip(reports, ("int_coarse", "int_coarse", "log")):
                self.assertEqual(report.exact, preset == own, (preset, own))
                self.assertEqual(report.rebinned, 0 if report.exact else report.added)
                writer = Sketch(own).relative_accuracy
                want = alpha if report.exact else writer + alpha + writer * alpha
                self.assertAlmostEqual(report.relative_error, want)
            self.assertEqual(total.count, len(union))
            self.assertEqual((total.zero_count, total.clamped, total.saturated), (0, 0, 0))
            # Every value carries at most its report's error: the union's quantiles too.
            bound = max(r.relative_error for r in reports)
            for q in QUANTILES:
                want = exact_quantile(union, q)
                got = total.quantile(q)
                self.assertLessEqual(abs(got - want), bound * want * (1 + 1e-9), (preset, q, got, want))
            # The same messages in another order give the same sketch.
            other = Sketch(preset)
            other.merge_ddsketch(datadog_sketch_bytes(py_values), "python")
            other.merge_ddsketch(device_bytes("device_b"))
            other.merge_ddsketch(device_bytes("device_a"))
            self.assertEqual(other.bins(), total.bins())

    def test_the_python_convention_matters(self):
        # DataDog's Python bytes read as Go/Java's are another gamma: still decoded (by
        # re-binning), but the keys mean other values. The convention is the caller's.
        data = datadog_sketch_bytes([5_000_000.0] * 10)
        right = Sketch("log")
        right.merge_ddsketch(data, "python")
        self.assertLessEqual(abs(right.quantile(0.5) - 5e6), 0.021 * 5e6)


class DataDogReadsTailguardTest(unittest.TestCase):
    def read(self, sketch):
        message = pb.DDSketch()
        message.ParseFromString(sketch.to_ddsketch("python"))
        return DDSketchProto.from_proto(message)

    def test_every_preset_round_trips_through_datadog(self):
        values = sorted(latencies())
        for preset in tailguard.PRESETS:
            s = Sketch(preset)
            s.record_many_int(values)
            theirs = self.read(s)
            self.assertEqual(theirs.count, len(values))
            # Their representative of each of tailguard's bins: within their mapping's
            # accuracy (the same bins, so the same gamma) of every value in it.
            alpha = theirs._mapping.relative_accuracy
            self.assertLessEqual(abs(alpha - s.relative_accuracy), 1e-9, preset)
            for q in QUANTILES[1:-1]:
                want = exact_quantile(values, q)
                got = theirs.get_quantile_value(q)
                self.assertLessEqual(abs(got - want), alpha * want * (1 + 1e-9), (preset, q))

    def test_the_merged_fleet_read_back_by_datadog(self):
        total = Sketch("int_coarse")
        total.merge_ddsketch(device_bytes("device_a"))
        total.merge_ddsketch(device_bytes("device_b"))
        theirs = self.read(total)
        values = sorted(latencies())
        self.assertEqual(theirs.count, LATENCIES)
        alpha = theirs._mapping.relative_accuracy
        for q in QUANTILES[1:-1]:
            want = exact_quantile(values, q)
            self.assertLessEqual(abs(theirs.get_quantile_value(q) - want), alpha * want * (1 + 1e-9))
        # And back: their proto of what they read is tailguard's sketch again.
        again = Sketch.from_ddsketch(
            DDSketchProto.to_proto(theirs).SerializeToString(), "int_coarse", "python"
        )
        self.assertEqual(again.bins(), total.bins())
        self.assertTrue(math.isfinite(again.sum))


if __name__ == "__main__":
    unittest.main()

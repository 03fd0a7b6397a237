"""DataDog's DDSketch protobuf and OpenTelemetry's data point, tailguard to tailguard, and
what the decoders refuse."""

import math
import unittest

import tailguard
from tailguard import DecodeError, Sketch

from workload import QUANTILES, exact_quantile, latencies


def filled(preset, values=None):
    s = Sketch(preset)
    s.record_many_int(latencies(1000) if values is None else values)
    return s


class DDSketchCodecTest(unittest.TestCase):
    def test_round_trip_every_preset_and_convention(self):
        for preset in tailguard.PRESETS:
            s = filled(preset)
            s.record(0.0)
            for convention in ("go_java", "python"):
                data = s.to_ddsketch(convention)
                self.assertIsInstance(data, bytes)
                t = Sketch.from_ddsketch(data, preset, convention)
                self.assertEqual(t.preset, preset)
                self.assertEqual(t.bins(), s.bins(), (preset, convention))
                self.assertEqual((t.count, t.zero_count), (s.count, s.zero_count))
                u = Sketch(preset)
                report = u.merge_ddsketch(data, convention)
                self.assertEqual(u.bins(), s.bins())
                self.assertEqual((report.added, report.rebinned, report.exact), (1001, 0, True))
                self.assertEqual(report.relative_error, s.relative_accuracy)
                self.assertEqual((report.below_range, report.above_range, report.saturated), (0, 0, 0))
                self.assertIn("Rebinned(added=1001", repr(report))
        self.assertEqual(Sketch().to_ddsketch(), Sketch().to_ddsketch("go_java"))

    def test_a_foreign_mapping_is_rebinned_within_the_bound(self):
        values = sorted(latencies())
        for src in tailguard.PRESETS:
            data = filled(src, values).to_ddsketch()
            for dst in tailguard.PRESETS:
                if dst == src:
                    continue
                t = Sketch(dst)
                report = t.merge_ddsketch(data)
                self.assertEqual(t.count, len(values))
                bound = report.relative_error
                for q in QUANTILES:
                    want = exact_quantile(values, q)
                    self.assertLessEqual(abs(t.quantile(q) - want), bound * want * (1 + 1e-9), (src, dst, q))

    def test_merge_adds_to_what_is_there(self):
        s = filled("log", [5_000_000])
        report = s.merge_ddsketch(filled("log", [7_000_000, 9_000_000]).to_ddsketch())
        self.assertEqual(report.added, 2)
        self.assertEqual(s.count, 3)

    def test_bad_bytes_are_a_decode_error_and_change_nothing(self):
        s = filled("cubic", [5_000_000])
        before = s.bins()
        good = filled("cubic").to_ddsketch()
        for bad in (b"\xff", b"\x0a\x05\x09", good[:-3], b"\x12\x03\x0a\x01", b"garbage!"):
            with self.assertRaises(DecodeError):
                s.merge_ddsketch(bad)
            with self.assertRaises(ValueError):
                Sketch.from_ddsketch(bad, "cubic")
        self.assertEqual(s.bins(), before)
        self.assertEqual(s.count, 1)

    def test_bad_arguments(self):
        s = filled("log")
        for bad in ("gojava", "Python", ""):
            with self.assertRaises(ValueError):
                s.to_ddsketch(bad)
            with self.assertRaises(ValueError):
                s.merge_ddsketch(s.to_ddsketch(), bad)
        with self.assertRaises(ValueError):
            Sketch.from_ddsketch(s.to_ddsketch(), "nope")
        with self.assertRaises(TypeError):
            s.merge_ddsketch("not bytes")
        with self.assertRaises(TypeError):
            s.merge_ddsketch(None)


class OtlpCodecTest(unittest.TestCase):
    def test_round_trip(self):
        s = filled("otel")
        s.record(0.0)
        data = s.to_otlp(1_700_000_000_000_000_000, 1_700_000_060_000_000_000)
        self.assertIsInstance(data, bytes)
        t = Sketch("otel")
        report = t.merge_otlp(data)
        self.assertEqual(t.bins(), s.bins())
        self.assertEqual((t.count, t.min, t.max, t.sum), (s.count, s.min, s.max, s.sum))
        self.assertEqual((report.added, report.scale, report.exact_stats), (1001, 5, True))
        self.assertEqual((report.start_unix_ns, report.end_unix_ns), (1_700_000_000_000_000_000, 1_700_000_060_000_000_000))
        self.assertEqual((report.below_range, report.above_range, report.saturated, report.wide_zero), (0, 0, 0, 0))
        self.assertIn("OtlpDecoded(added=1001", repr(report))
        self.assertEqual(Sketch("otel").to_otlp(), Sketch("otel").to_otlp(0, 0))

    def test_parsed_by_opentelemetry_proto(self):
        from opentelemetry.proto.metrics.v1 import metrics_pb2

        values = latencies(1000)
        s = filled("otel", values)
        point = metrics_pb2.ExponentialHistogramDataPoint()
        point.ParseFromString(s.to_otlp(10, 20))
        self.assertEqual((point.start_time_unix_nano, point.time_unix_nano), (10, 20))
        self.assertEqual(point.count, len(values))
        self.assertEqual(point.scale, 5)
        self.assertEqual(point.sum, float(sum(values)))
        self.assertEqual((point.min, point.max), (min(values), max(values)))
        counts = list(point.positive.bucket_counts)
        self.assertEqual(sum(counts), len(values))
        self.assertEqual(
            [(point.positive.offset + i, c) for i, c in enumerate(counts) if c], s.bins()
        )
        # And a data point written by opentelemetry-proto, at a finer scale, merges in.
        finer = metrics_pb2.ExponentialHistogramDataPoint(scale=6, count=3, sum=3 * 2.0e6, min=2.0e6, max=2.0e6)
        finer.positive.offset = math.ceil(math.log2(2.0e6) * 64) - 1  # 2e6's bucket at scale 6
        finer.positive.bucket_counts.append(3)
        t = Sketch("otel")
        report = t.merge_otlp(finer.SerializeToString())
        self.assertEqual((report.added, report.scale), (3, 6))
        self.assertLessEqual(abs(t.quantile(0.5) - 2.0e6), t.relative_accuracy * 2.0e6)

    def test_otel_preset_only(self):
        for preset in tailguard.PRESETS:
            if preset == "otel":
                continue
            s = filled(preset)
            with self.assertRaisesRegex(ValueError, "otel"):
                s.to_otlp()
            with self.assertRaisesRegex(ValueError, "otel"):
                s.merge_otlp(filled("otel").to_otlp())
            self.assertEqual(s.count, 1000)

    def test_bad_input(self):
        s = filled("otel", [5_000_000])
        for bad in (b"\xff", b"\x31\x00", b"\x42\x05\x08"):
            with self.assertRaises(DecodeError):
                s.merge_otlp(bad)
        # A data point at a coarser scale than the sketch's cannot be split: refused.
        from opentelemetry.proto.metrics.v1 import metrics_pb2

        point = metrics_pb2.ExponentialHistogramDataPoint(scale=4, count=1)
        point.positive.offset = 300
        point.positive.bucket_counts.append(1)
        with self.assertRaises(DecodeError):
            s.merge_otlp(point.SerializeToString())
        self.assertEqual(s.count, 1)
        for bad in (-1, 2**64):
            with self.assertRaises(ValueError):
                s.to_otlp(bad, 0)
            with self.assertRaises(ValueError):
                s.to_otlp(0, bad)
        with self.assertRaises(TypeError):
            s.to_otlp(1.5, 0)
        with self.assertRaises(TypeError):
            s.merge_otlp("x")


if __name__ == "__main__":
    unittest.main()

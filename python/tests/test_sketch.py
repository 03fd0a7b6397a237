"""The Sketch class: every method, and what it refuses."""

import copy
import math
import unittest

import tailguard
from tailguard import Sketch

from workload import QUANTILES, exact_quantile, latencies


class ConstructionTest(unittest.TestCase):
    def test_every_preset(self):
        self.assertEqual(
            tailguard.PRESETS, ("log", "cubic", "int", "int_coarse", "mcu", "otel")
        )
        for name in tailguard.PRESETS:
            s = Sketch(name)
            self.assertEqual(s.preset, name)
            self.assertEqual(s.count, 0)
            self.assertTrue(0 < s.relative_accuracy < 0.02)
            self.assertTrue(s.min_trackable < s.max_trackable)
        self.assertEqual(Sketch().preset, "log")
        self.assertIn("int_coarse", repr(Sketch("int_coarse")))

    def test_unknown_preset(self):
        for bad in ("", "LOG", "ddsketch", "int-coarse"):
            with self.assertRaises(ValueError):
                Sketch(bad)
        with self.assertRaises(TypeError):
            Sketch(3)

    def test_version(self):
        self.assertRegex(tailguard.__version__, r"^\d+\.\d+\.\d+")


class EmptyTest(unittest.TestCase):
    def test_empty_answers(self):
        s = Sketch("cubic")
        self.assertIsNone(s.quantile(0.5))
        self.assertEqual(s.quantiles([0.0, 1.0]), [None, None])
        self.assertIsNone(s.min)
        self.assertIsNone(s.max)
        self.assertIsNone(s.mean)
        self.assertIsNone(s.fraction_at_or_below(1e6))
        self.assertEqual(s.sum, 0.0)
        self.assertEqual(s.rank(1e6), 0)
        self.assertEqual(s.bins(), [])
        self.assertEqual((s.zero_count, s.clamped, s.saturated), (0, 0, 0))


class RecordTest(unittest.TestCase):
    def test_record_and_counters(self):
        s = Sketch("log")
        s.record(2e6)
        s.record(4e6, 3)
        s.record(0.0)
        s.record(10.0)  # below the range: the zero bin
        s.record(1e15)  # above: the top bin
        self.assertEqual(s.count, 7)
        self.assertEqual(s.zero_count, 2)
        self.assertEqual(s.clamped, 1)
        self.assertEqual(s.saturated, 0)
        self.assertEqual(s.min, 0.0)
        self.assertEqual(s.max, 1e15)
        self.assertEqual(s.sum, 2e6 + 3 * 4e6 + 10.0 + 1e15)
        self.assertAlmostEqual(s.mean, s.sum / 7)
        self.assertEqual(sum(c for _, c in s.bins()) + s.zero_count, s.count)
        # Python ints are floats' values too.
        s.record(3_000_000)
        self.assertEqual(s.count, 8)

    def test_record_refuses_nan_and_negatives(self):
        s = Sketch("log")
        for bad in (float("nan"), -1.0, float("-inf")):
            with self.assertRaises(ValueError):
                s.record(bad)
        with self.assertRaises(TypeError):
            s.record("1.0")
        with self.assertRaises(TypeError):
            s.record(None)
        with self.assertRaises(ValueError):
            s.record(10**400)  # an int too large for a float
        for bad_n in (-1, 2**32):
            with self.assertRaises(ValueError):
                s.record(1e6, bad_n)
        with self.assertRaises(TypeError):
            s.record(1e6, 1.5)
        self.assertEqual(s.count, 0)
        s.record(1e6, 0)
        self.assertEqual(s.count, 0)

    def test_record_int(self):
        s = Sketch("int")
        s.record_int(5_000_000)
        s.record_int(7_000_000, n=2)
        s.record_int(2**64 - 1)
        s.record_int(0)
        self.assertEqual(s.count, 5)
        self.assertEqual(s.clamped, 1)
        self.assertEqual(s.zero_count, 1)
        self.assertEqual(s.max, float(2**64 - 1))
        for bad in (-1, 2**64, -(2**70)):
            with self.assertRaises(ValueError):
                s.record_int(bad)
        for bad in (1.0, "5", None, 1e6):
            with self.assertRaises(TypeError):
                s.record_int(bad)

        class Index:  # NumPy's integers are not ints, but have __index__
            def __index__(self):
                return 6_000_000

        s.record_int(Index())
        self.assertEqual(s.count, 6)
        s.clear()
        s.record_many_int([5_000_000, 7_000_000, 7_000_000, 2**64 - 1, 0])
        with self.assertRaises(ValueError):
            s.record_int(1, n=-5)
        self.assertEqual(s.count, 5)

    def test_record_many(self):
        values = [float(v) for v in latencies(500)]
        one = Sketch("cubic")
        for v in values:
            one.record(v)
        many = Sketch("cubic")
        many.record_many(values)
        self.assertEqual(many.bins(), one.bins())
        self.assertEqual((many.count, many.sum, many.min, many.max), (one.count, one.sum, one.min, one.max))
        # All or nothing: a bad value anywhere records none.
        with self.assertRaisesRegex(ValueError, "position 2"):
            many.record_many([1e6, 2e6, -3.0, 4e6])
        with self.assertRaises(ValueError):
            many.record_many([float("nan")])
        with self.assertRaises(TypeError):
            many.record_many([1e6, "x"])
        self.assertEqual(many.count, 500)
        with self.assertRaises(ValueError):
            many.record_many([1e6, 10**400])  # too large for a float
        with self.assertRaises(TypeError):
            many.record_many(5.0)
        many.record_many([])
        self.assertEqual(many.count, 500)
        # Any iterable, as record_many_int takes.
        many.record_many(float(v) for v in latencies(10))
        self.assertEqual(many.count, 510)

    def test_record_many_int(self):
        values = latencies(500)
        one = Sketch("int_coarse")
        for v in values:
            one.record_int(v)
        many = Sketch("int_coarse")
        many.record_many_int(values)
        many.record_many_int(iter([]))
        self.assertEqual(many.bins(), one.bins())
        self.assertEqual(many.sum, one.sum)
        with self.assertRaises(ValueError):
            many.record_many_int([1, 2, -3])
        with self.assertRaises(ValueError):
            many.record_many_int([2**64])
        with self.assertRaises(TypeError):
            many.record_many_int([1, 2.0])
        with self.assertRaises(TypeError):
            many.record_many_int(5)
        self.assertEqual(many.count, 500)


class QueryTest(unittest.TestCase):
    def setUp(self):
        self.values = sorted(latencies())
        self.sketches = {}
        for name in tailguard.PRESETS:
            s = Sketch(name)
            s.record_many_int(self.values)
            self.sketches[name] = s

    def test_quantiles_within_the_relative_accuracy(self):
        for name, s in self.sketches.items():
            alpha = s.relative_accuracy
            for q in QUANTILES:
                want = exact_quantile(self.values, q)
                got = s.quantile(q)
                self.assertLessEqual(abs(got - want), alpha * want * (1 + 1e-12), (name, q))
            self.assertEqual(s.quantile(0.0), self.values[0])
            self.assertEqual(s.quantile(1.0), self.values[-1])
            self.assertEqual(s.quantiles(QUANTILES), [s.quantile(q) for q in QUANTILES])

    def test_bad_quantiles(self):
        s = self.sketches["log"]
        for bad in (-0.01, 1.01, float("nan"), float("inf")):
            with self.assertRaises(ValueError):
                s.quantile(bad)
            with self.assertRaises(ValueError):
                s.quantiles([0.5, bad])
        with self.assertRaises(TypeError):
            s.quantile("0.5")
        # An empty sketch refuses a bad q too.
        with self.assertRaises(ValueError):
            Sketch().quantile(2.0)

    def test_rank(self):
        n = len(self.values)
        for name, s in self.sketches.items():
            alpha = s.relative_accuracy
            self.assertEqual(s.rank(0.0), 0)
            self.assertEqual(s.rank(-5.0), 0)
            self.assertEqual(s.rank(self.values[-1]), n)
            self.assertEqual(s.rank(float("inf")), n)
            self.assertEqual(s.fraction_at_or_below(self.values[-1]), 1.0)
            for v in (2e6, 5e6, 8e6, 5e7):
                # Every value at most v(1 - 2 alpha) is counted, none above v(1 + 2 alpha).
                low = sum(1 for x in self.values if x <= v * (1 - 2 * alpha))
                high = sum(1 for x in self.values if x <= v * (1 + 2 * alpha))
                self.assertTrue(low <= s.rank(v) <= high, (name, v))
                self.assertAlmostEqual(s.fraction_at_or_below(v), s.rank(v) / n)
            with self.assertRaises(ValueError):
                s.rank(float("nan"))
            with self.assertRaises(ValueError):
                s.fraction_at_or_below(float("nan"))
            # An int beyond the floats is beyond every value, or below.
            self.assertEqual(s.rank(10**400), n)
            self.assertEqual(s.rank(-(10**400)), 0)
            self.assertEqual(s.fraction_at_or_below(10**400), 1.0)
            for q in (10**400, -(10**400)):
                with self.assertRaises(ValueError):
                    s.quantile(q)
                with self.assertRaises(ValueError):
                    s.quantiles([0.5, q])

    def test_stats(self):
        for s in self.sketches.values():
            self.assertEqual(s.count, len(self.values))
            self.assertEqual(s.min, self.values[0])
            self.assertEqual(s.max, self.values[-1])
            self.assertEqual(s.sum, float(sum(self.values)))
            self.assertEqual((s.zero_count, s.clamped, s.saturated), (0, 0, 0))


class MergeTest(unittest.TestCase):
    def test_halves_merge_into_the_whole(self):
        values = latencies()
        for name in tailguard.PRESETS:
            whole = Sketch(name)
            whole.record_many_int(values)
            a, b = Sketch(name), Sketch(name)
            a.record_many_int(values[:1000])
            b.record_many_int(values[1000:])
            a.merge(b)
            self.assertEqual(a.bins(), whole.bins())
            self.assertEqual((a.count, a.min, a.max, a.sum), (whole.count, whole.min, whole.max, whole.sum))
            self.assertEqual(b.count, 3000)  # other is unchanged

    def test_merge_with_itself_doubles(self):
        s = Sketch("mcu")
        s.record_int(1_000_000, 3)
        s.merge(s)
        self.assertEqual(s.count, 6)
        self.assertEqual(s.bins()[0][1], 6)

    def test_merge_refuses_another_preset_or_type(self):
        s = Sketch("log")
        s.record(1e6)
        for other in tailguard.PRESETS:
            if other != "log":
                with self.assertRaisesRegex(ValueError, "preset"):
                    s.merge(Sketch(other))
        for bad in (None, 1.0, s.to_ddsketch(), "log"):
            with self.assertRaises(TypeError):
                s.merge(bad)
        self.assertEqual(s.count, 1)

    def test_merge_of_full_bins_counts_saturated(self):
        a = Sketch("int")
        a.record_int(5_000_000, 2**32 - 1)
        b = a.copy()
        a.merge(b)
        self.assertEqual(a.count, 2**32 - 1)
        self.assertEqual(a.saturated, 2**32 - 1)


class LifecycleTest(unittest.TestCase):
    def test_clear_and_copies(self):
        s = Sketch("otel")
        s.record_many_int([1_000_000, 2_000_000])
        c, d, e = s.copy(), copy.copy(s), copy.deepcopy(s)
        s.clear()
        self.assertEqual(s.count, 0)
        self.assertEqual(s.bins(), [])
        self.assertIsNone(s.max)
        self.assertEqual(s.preset, "otel")
        for t in (c, d, e):
            self.assertEqual(t.count, 2)
            self.assertIsNot(t, s)
        s.record(3e6)
        self.assertEqual(c.count, 2)
        # The stub's keyword: memo.
        self.assertEqual(s.__deepcopy__(memo={}).count, 1)

    def test_merge_of_a_sketch_in_use_is_a_runtime_error(self):
        s, t = Sketch("log"), Sketch("log")
        t.record(1e6)

        def merging():
            yield 2e6
            t.merge(s)  # s is being recorded into
            yield 3e6

        with self.assertRaisesRegex(RuntimeError, "in use"):
            s.record_many(merging())

        def merged_into():
            yield 2e6
            s.merge(t)  # into s, which is being recorded into
            yield 3e6

        with self.assertRaisesRegex(RuntimeError, "in use"):
            s.record_many(merged_into())
        self.assertEqual((s.count, t.count), (0, 1))

    def test_bins_hold_every_value(self):
        s = Sketch("int_coarse")
        s.record_many_int(latencies())
        bins = s.bins()
        indices = [i for i, _ in bins]
        self.assertEqual(indices, sorted(indices))
        self.assertTrue(all(c > 0 for _, c in bins))
        self.assertEqual(sum(c for _, c in bins), s.count)

    def test_docstrings(self):
        for name in ("record", "record_int", "quantile", "merge", "to_ddsketch", "merge_ddsketch", "to_otlp", "merge_otlp"):
            self.assertTrue(getattr(Sketch, name).__doc__, name)
        self.assertTrue(Sketch.__doc__)
        self.assertTrue(issubclass(tailguard.DecodeError, ValueError))
        self.assertTrue(math.isfinite(Sketch().relative_accuracy))


if __name__ == "__main__":
    unittest.main()

"""What `Sketch.rank` and `Sketch.quantile` promise at the ends of the range."""

import math
import unittest

import tailguard
from tailguard import Sketch


class RankAndQuantileAtTheEnds(unittest.TestCase):
    def filled(self, p):
        """A sketch of preset `p` holding values below, across and above its range, and
        the values, sorted."""
        s = Sketch(p)
        lo, hi = s.min_trackable, s.max_trackable
        inside = [lo * 10 * i for i in range(1, 20)] + [hi * 0.999]
        xs = sorted([0.0, lo / 100, lo / 10, lo / 2] + inside + [hi * 2, hi * 10])
        s.record_many(xs)
        return s, xs

    def test_rank_bound_within_the_range_and_the_ends_as_documented(self):
        for p in tailguard.PRESETS:
            s, xs = self.filled(p)
            lo, hi, a = s.min_trackable, s.max_trackable, s.relative_accuracy

            def exact(v):
                return sum(1 for x in xs if x <= v)

            top = max(i for i, _ in s.bins())
            for v in xs + [lo / 50, lo / 3, hi * 0.9995, hi * 5]:
                r = s.rank(v)
                self.assertGreaterEqual(r, exact(v), (p, v))
                if v < xs[0] or v >= xs[-1]:
                    self.assertEqual(r, exact(v), (p, v))
                elif v < lo:  # the zero bin counts whole
                    self.assertEqual(r, s.zero_count, (p, v))
                elif v < hi:
                    in_top = Sketch(p)
                    in_top.record(v)
                    extra = s.clamped if in_top.bins()[0][0] == top else 0
                    self.assertLessEqual(r, exact(v * (1 + a) / (1 - a)) + extra, (p, v))
                else:  # from max_trackable up: every value
                    self.assertEqual(r, s.count, (p, v))

    def test_quantile_accuracy_within_the_range(self):
        for p in tailguard.PRESETS:
            s, xs = self.filled(p)
            lo, hi, a = s.min_trackable, s.max_trackable, s.relative_accuracy
            n = len(xs)
            for i in range(n):
                q = i / (n - 1)
                want, got = xs[math.floor(q * (n - 1))], s.quantile(q)
                self.assertTrue(s.min <= got <= s.max, (p, q))
                if lo <= want < hi:
                    self.assertLessEqual(abs(got - want), a * want, (p, q))


if __name__ == "__main__":
    unittest.main()

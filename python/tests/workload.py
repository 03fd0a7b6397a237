"""The firmware's workload (support/src/firmware.rs), ported: the values the device
sketches in data/ hold, so the tests can compute exact quantiles of them."""

import math

LATENCIES = 4000
"""How many latencies the firmware records (firmware::LATENCIES)."""

SEED = 0x12345678
"""The seed of the main workload (firmware::SEED)."""

MASK = 0xFFFFFFFF


def xorshift32(state):
    """The generator's next state, which is also its output (src/test_rng.rs)."""
    state ^= (state << 13) & MASK
    state ^= state >> 17
    state ^= (state << 5) & MASK
    return state


def latencies(n=LATENCIES, seed=SEED):
    """The first `n` latencies (ns) of the workload: 1 ms plus up to ~8.4 ms, and one time
    in 32 ten times that (firmware.rs's latency_ns)."""
    out = []
    x = seed
    for _ in range(n):
        x = xorshift32(x)
        base = 1_000_000 + (x & 0x7FFFFF)
        out.append(base * 10 if x >> 27 == 0 else base)
    return out


def exact_quantile(sorted_values, q):
    """The sample quantile tailguard (and DataDog) approximate: sorted[floor(q (n - 1))]."""
    return sorted_values[math.floor(q * (len(sorted_values) - 1))]


QUANTILES = [0.0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1.0]

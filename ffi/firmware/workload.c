#include "workload.h"

uint32_t xorshift32(uint32_t *state) {
    uint32_t x = *state;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *state = x;
    return x;
}

/* 1 ms plus up to ~8.4 ms, and one time in 32 ten times that (a straggler). */
static uint64_t latency_ns(uint32_t *rng) {
    uint32_t x = xorshift32(rng);
    uint64_t base = 1000000u + (uint64_t)(x & 0x7fffffu);
    return (x >> 27) == 0 ? base * 10u : base;
}

bool record_latencies(tg_sketch *s, uint32_t from, uint32_t to) {
    uint32_t rng = SEED;
    bool ok = true;
    for (uint32_t i = 0; i < to; i++) {
        uint64_t v = latency_ns(&rng);
        if (i >= from) {
            ok &= tg_sketch_record_u64(s, v) == TG_OK;
        }
    }
    return ok;
}

bool record_latencies_f64(tg_sketch *s, uint32_t from, uint32_t to) {
    uint32_t rng = SEED;
    bool ok = true;
    for (uint32_t i = 0; i < to; i++) {
        uint64_t v = latency_ns(&rng);
        if (i >= from) {
            ok &= tg_sketch_record(s, (double)v) == TG_OK;
        }
    }
    return ok;
}

bool record_edges(tg_sketch *s) {
    static const uint64_t values[] = {
        0, 1, 999, 1000, 1001, 99999999999u, 100000000000u, UINT64_MAX,
    };
    bool ok = true;
    for (unsigned i = 0; i < sizeof values / sizeof values[0]; i++) {
        ok &= tg_sketch_record_u64(s, values[i]) == TG_OK;
    }
    ok &= tg_sketch_record_duration(s, 1000000u, 0) == TG_OK; /* 1,000,000 s */
    ok &= tg_sketch_record_duration(s, 0, 250000u) == TG_OK;  /* 250 us */
    ok &= tg_sketch_record_u64_n(s, 5000000u, 1000u) == TG_OK;
    ok &= tg_sketch_record_u64_n(s, 0, 3u) == TG_OK;
    return ok;
}

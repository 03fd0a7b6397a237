#include "checks.h"

#include <string.h>

#include "expected.h" /* generated: see gen-expected.py */
#include "print.h"
#include "ram.h"
#include "tailguard.h"
#include "workload.h"

static const double QS[QUANTILES] = {0.0, 0.01, 0.1, 0.5, 0.9, 0.95, 0.99, 0.999, 1.0};


/* A fresh sketch of `preset` in `storage`; NULL (reported) if init refused. */
static tg_sketch *sketch_in(void *storage, size_t size, uint32_t preset) {
    tg_sketch *s = 0;
    tg_status status = tg_sketch_init(storage, size, preset, &s);
    if (status != TG_OK) {
        print_str("     tg_sketch_init: ");
        print_str(tg_status_str(status));
        print_end();
        return 0;
    }
    return s;
}

static summary summarize(const tg_sketch *s) {
    summary out;
    memset(&out, 0, sizeof out);
    bool ok = tg_sketch_count(s, &out.count) == TG_OK;
    ok &= tg_sketch_zero_count(s, &out.zero_count) == TG_OK;
    ok &= tg_sketch_clamped(s, &out.clamped) == TG_OK;
    ok &= tg_sketch_saturated(s, &out.saturated) == TG_OK;
    if (!ok) {
        out.count = UINT64_MAX; /* cannot match a host value */
    }
    for (unsigned i = 0; i < QUANTILES; i++) {
        double v;
        out.quantile_bits[i] = UINT64_MAX;
        if (tg_sketch_quantile(s, QS[i], &v) == TG_OK) {
            memcpy(&out.quantile_bits[i], &v, sizeof v);
        }
    }
    return out;
}

static void print_summary(const char *label, const summary *s) {
    print_str(label);
    print_str("count: ");
    print_u64(s->count);
    print_str(", zero_count: ");
    print_u64(s->zero_count);
    print_str(", clamped: ");
    print_u64(s->clamped);
    print_str(", saturated: ");
    print_u64(s->saturated);
    print_str(", quantile_bits: [");
    for (unsigned i = 0; i < QUANTILES; i++) {
        print_str(i == 0 ? "" : ", ");
        print_hex64(s->quantile_bits[i]);
    }
    print_str("]");
    print_end();
}

/* Compares and reports the difference. */
static bool same_summary(const tg_sketch *s, const summary *want) {
    if (s == 0) {
        return false;
    }
    summary got = summarize(s);
    bool same = got.count == want->count && got.zero_count == want->zero_count &&
                got.clamped == want->clamped && got.saturated == want->saturated &&
                memcmp(got.quantile_bits, want->quantile_bits, sizeof got.quantile_bits) == 0;
    if (!same) {
        print_summary("     got  ", &got);
        print_summary("     want ", want);
    }
    return same;
}

static bool int_coarse_record(void) {
    tg_sketch *s = sketch_in(RAM.coarse.a, sizeof RAM.coarse.a, TG_PRESET_INT_COARSE);
    return s != 0 && record_latencies(s, 0, LATENCIES) && same_summary(s, &EXPECTED_INT_COARSE);
}

static bool int_coarse_merge(void) {
    uint32_t half = LATENCIES / 2u;
    tg_sketch *a = sketch_in(RAM.coarse.a, sizeof RAM.coarse.a, TG_PRESET_INT_COARSE);
    tg_sketch *b = sketch_in(RAM.coarse.b, sizeof RAM.coarse.b, TG_PRESET_INT_COARSE);
    return a != 0 && b != 0 && record_latencies(a, 0, half) &&
           record_latencies(b, half, LATENCIES) && tg_sketch_merge(a, b) == TG_OK &&
           same_summary(a, &EXPECTED_INT_COARSE);
}

static bool int_record(void) {
    tg_sketch *s = sketch_in(RAM.fine, sizeof RAM.fine, TG_PRESET_INT);
    return s != 0 && record_latencies(s, 0, LATENCIES) && same_summary(s, &EXPECTED_INT);
}

static bool int_coarse_edges(void) {
    tg_sketch *s = sketch_in(RAM.coarse.a, sizeof RAM.coarse.a, TG_PRESET_INT_COARSE);
    return s != 0 && record_edges(s) && same_summary(s, &EXPECTED_INT_COARSE_EDGES);
}

/* DataDog's protobuf of the coarse sketch of the latencies, printed, against the host's
   bytes (ddsketch-int-coarse.hex, kept current by tests/ffi_firmware_fixture.rs); then
   decoded into a fresh sketch, which must hold the same count and encode to the same
   bytes. */
static bool int_coarse_ddsketch(void) {
    tg_sketch *s = sketch_in(RAM.coarse.a, sizeof RAM.coarse.a, TG_PRESET_INT_COARSE);
    tg_sketch *back = sketch_in(RAM.coarse.b, sizeof RAM.coarse.b, TG_PRESET_INT_COARSE);
    if (s == 0 || back == 0 || !record_latencies(s, 0, LATENCIES)) {
        return false;
    }
    size_t len = 0, again_len = 0;
    tg_status status = tg_sketch_encode_ddsketch(s, TG_CONVENTION_GO_JAVA, RAM.coarse.encoded,
                                                 sizeof RAM.coarse.encoded, &len);
    if (status != TG_OK) {
        print_str("     tg_sketch_encode_ddsketch: ");
        print_str(tg_status_str(status));
        print_end();
        return false;
    }
    print_str("ddsketch/int-coarse ");
    print_hex_bytes(RAM.coarse.encoded, len);
    print_end();
    bool same = len == sizeof EXPECTED_DDSKETCH_INT_COARSE &&
                memcmp(RAM.coarse.encoded, EXPECTED_DDSKETCH_INT_COARSE, len) == 0;
    if (!same) {
        print_str("     want ");
        print_hex_bytes(EXPECTED_DDSKETCH_INT_COARSE, sizeof EXPECTED_DDSKETCH_INT_COARSE);
        print_end();
    }
    uint64_t count = 0;
    bool round_trip =
        tg_sketch_decode_ddsketch(back, TG_CONVENTION_GO_JAVA, RAM.coarse.encoded, len) ==
            TG_OK &&
        tg_sketch_count(back, &count) == TG_OK && count == LATENCIES &&
        tg_sketch_encode_ddsketch(back, TG_CONVENTION_GO_JAVA, RAM.coarse.encoded,
                                  sizeof RAM.coarse.encoded, &again_len) == TG_OK &&
        again_len == sizeof EXPECTED_DDSKETCH_INT_COARSE &&
        memcmp(RAM.coarse.encoded, EXPECTED_DDSKETCH_INT_COARSE, again_len) == 0;
    if (!round_trip) {
        print_str("     the decoded sketch differs (count ");
        print_u64(count);
        print_str(")");
        print_end();
    }
    return same && round_trip;
}

#if defined(__ARM_FP)
static bool cubic_record(void) {
    tg_sketch *s = sketch_in(RAM.cubic.a, sizeof RAM.cubic.a, TG_PRESET_CUBIC);
    return s != 0 && record_latencies_f64(s, 0, LATENCIES) && same_summary(s, &EXPECTED_CUBIC);
}

static bool cubic_merge(void) {
    uint32_t half = LATENCIES / 2u;
    tg_sketch *a = sketch_in(RAM.cubic.a, sizeof RAM.cubic.a, TG_PRESET_CUBIC);
    tg_sketch *b = sketch_in(RAM.cubic.b, sizeof RAM.cubic.b, TG_PRESET_CUBIC);
    return a != 0 && b != 0 && record_latencies_f64(a, 0, half) &&
           record_latencies_f64(b, half, LATENCIES) && tg_sketch_merge(a, b) == TG_OK &&
           same_summary(a, &EXPECTED_CUBIC);
}

static bool cubic_edges(void) {
    tg_sketch *s = sketch_in(RAM.cubic.a, sizeof RAM.cubic.a, TG_PRESET_CUBIC);
    return s != 0 && record_edges(s) && same_summary(s, &EXPECTED_CUBIC_EDGES);
}
#endif

const check SKETCH_CHECKS[] = {
    {"sketch/int-coarse: record_u64", int_coarse_record},
    {"sketch/int-coarse: merge of two halves", int_coarse_merge},
    {"sketch/int: record_u64", int_record},
    {"sketch/int-coarse: edges of the range", int_coarse_edges},
#if defined(__ARM_FP)
    {"sketch/cubic: record(f64)", cubic_record},
    {"sketch/cubic: merge of two halves", cubic_merge},
    {"sketch/cubic: edges of the range", cubic_edges},
#endif
    {"ddsketch/int-coarse: encode_ddsketch equals the host's bytes, and decodes back",
     int_coarse_ddsketch},
};
const unsigned SKETCH_CHECK_COUNT = sizeof SKETCH_CHECKS / sizeof SKETCH_CHECKS[0];

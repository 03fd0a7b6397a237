/* The C side of the ABI: every exported function with good and bad input, linked
 * against the host staticlib (and once against the cdylib). Exits non-zero on the first
 * failure; prints one "covered" line per function. Built and run by .ci/ffi.sh:
 *   gcc -std=c11 -Wall -Wextra -Werror -Iinclude tests/host.c \
 *       target/release/libtailguard_ffi.a -lm -lpthread -ldl -o target/host
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tailguard.h"

static int checks;

#define EXPECT(call, want)                                                              \
  do {                                                                                  \
    tg_status got_ = (call);                                                            \
    checks++;                                                                           \
    if (got_ != (want)) {                                                               \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s\n", __FILE__, __LINE__, #call, \
              tg_status_str(got_), tg_status_str(want));                                \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

#define ASSERT(cond)                                                        \
  do {                                                                      \
    checks++;                                                               \
    if (!(cond)) {                                                          \
      fprintf(stderr, "%s:%d: assertion failed: %s\n", __FILE__, __LINE__, #cond); \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

static void covered(const char *name) { printf("covered %s\n", name); }

/* The manual clock: the callbacks read this counter, the test advances it. */
static uint64_t now_ns = 1000000000ull;
static uint64_t manual_now(void *ctx) { return *(uint64_t *)ctx; }
static tg_clock manual_clock(void) {
  tg_clock c = {manual_now, &now_ns};
  return c;
}
static const tg_clock no_clock = {NULL, NULL};

/* Storage: static, zeroed, aligned as uint64_t. */
static uint64_t sketch_mem[TG_SKETCH_INT_SIZE / 8];
static uint64_t other_mem[TG_SKETCH_INT_SIZE / 8];
static uint64_t window_mem[TG_WINDOW_INT_SIZE / 8];
static uint64_t hedger_mem[TG_HEDGER_MCU_SIZE / 8];
static uint64_t hedger2_mem[TG_HEDGER_CUBIC_SIZE / 8];
static uint64_t bucket_mem[TG_TOKEN_BUCKET_SIZE / 8];
static uint64_t ratio_mem[TG_RATIO_BUDGET_SIZE / 8];
static uint64_t zeroed[TG_HEDGER_INT_SIZE / 8];
static uint8_t buf[16384];

static const size_t sketch_sizes[] = {0,
                                      TG_SKETCH_LOG_SIZE,
                                      TG_SKETCH_CUBIC_SIZE,
                                      TG_SKETCH_INT_SIZE,
                                      TG_SKETCH_INT_COARSE_SIZE,
                                      TG_SKETCH_MCU_SIZE,
                                      TG_SKETCH_OTEL_SIZE};

static void misc(void) {
  ASSERT(strcmp(tg_status_str(TG_OK), "TG_OK") == 0);
  ASSERT(strcmp(tg_status_str(TG_ERR_DECODE), "TG_ERR_DECODE") == 0);
  ASSERT(strcmp(tg_status_str(12345), "TG_UNKNOWN") == 0);
  covered("tg_status_str");
  uint32_t v = 0;
  EXPECT(tg_version(&v), TG_OK);
  ASSERT(v == 0x000100);
  EXPECT(tg_version(NULL), TG_ERR_NULL);
  covered("tg_version");
  EXPECT(tg_set_panic_handler(abort), TG_OK);
  EXPECT(tg_set_panic_handler(NULL), TG_OK);
  covered("tg_set_panic_handler");
}

static void sketches(void) {
  tg_sketch *s = NULL, *o = NULL;
  /* init: every preset, then every bad input */
  for (uint32_t p = TG_PRESET_LOG; p <= TG_PRESET_OTEL; p++) {
    uint32_t got = 0;
    EXPECT(tg_sketch_init(sketch_mem, sketch_sizes[p], p, &s), TG_OK);
    EXPECT(tg_sketch_preset(s, &got), TG_OK);
    ASSERT(got == p);
    EXPECT(tg_sketch_init(sketch_mem, sketch_sizes[p] / 2, p, &s), TG_ERR_SIZE);
  }
  EXPECT(tg_sketch_init(NULL, sizeof sketch_mem, TG_PRESET_LOG, &s), TG_ERR_NULL);
  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, TG_PRESET_LOG, NULL), TG_ERR_NULL);
  EXPECT(tg_sketch_init((char *)sketch_mem + 4, sizeof sketch_mem - 4, TG_PRESET_LOG, &s),
         TG_ERR_MISALIGNED);
  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, 0, &s), TG_ERR_PRESET);
  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, 7, &s), TG_ERR_PRESET);
  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, 0xffffffffu, &s), TG_ERR_PRESET);
  covered("tg_sketch_init");
  uint32_t preset = 0;
  EXPECT(tg_sketch_preset((tg_sketch *)zeroed, &preset), TG_ERR_UNINIT);
  EXPECT(tg_sketch_preset(s, NULL), TG_ERR_NULL);
  covered("tg_sketch_preset");

  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, TG_PRESET_INT, &s), TG_OK);
  double d = 0;
  uint64_t u = 0;
  EXPECT(tg_sketch_quantile(s, 0.5, &d), TG_ERR_EMPTY);
  EXPECT(tg_sketch_min(s, &d), TG_ERR_EMPTY);
  EXPECT(tg_sketch_max(s, &d), TG_ERR_EMPTY);
  EXPECT(tg_sketch_sum(s, &d), TG_ERR_EMPTY);

  for (uint64_t ms = 1; ms <= 100; ms++) EXPECT(tg_sketch_record(s, (double)ms * 1e6), TG_OK);
  EXPECT(tg_sketch_record(s, NAN), TG_ERR_VALUE);
  EXPECT(tg_sketch_record(s, -1.0), TG_ERR_VALUE);
  EXPECT(tg_sketch_record(s, -INFINITY), TG_ERR_VALUE);
  EXPECT(tg_sketch_record(s, INFINITY), TG_OK); /* clamped to the top bin */
  EXPECT(tg_sketch_record(NULL, 1.0), TG_ERR_NULL);
  EXPECT(tg_sketch_record((tg_sketch *)zeroed, 1.0), TG_ERR_UNINIT);
  EXPECT(tg_sketch_record((tg_sketch *)((char *)sketch_mem + 1), 1.0), TG_ERR_MISALIGNED);
  covered("tg_sketch_record");
  EXPECT(tg_sketch_record_u64(s, 0), TG_OK);
  EXPECT(tg_sketch_record_u64(s, UINT64_MAX), TG_OK);
  EXPECT(tg_sketch_record_u64(NULL, 1), TG_ERR_NULL);
  covered("tg_sketch_record_u64");
  EXPECT(tg_sketch_record_u64_n(s, 5000000, 3), TG_OK);
  EXPECT(tg_sketch_record_u64_n(s, 5000000, 0), TG_OK);
  EXPECT(tg_sketch_record_u64_n(s, 5000000, (uint64_t)UINT32_MAX + 1), TG_ERR_VALUE);
  EXPECT(tg_sketch_record_u64_n((tg_sketch *)zeroed, 1, 1), TG_ERR_UNINIT);
  covered("tg_sketch_record_u64_n");
  EXPECT(tg_sketch_record_duration(s, 0, 2000000), TG_OK);
  EXPECT(tg_sketch_record_duration(s, UINT64_MAX, 999999999), TG_OK); /* saturates */
  EXPECT(tg_sketch_record_duration(s, UINT64_MAX, UINT32_MAX), TG_OK); /* carry: no panic */
  EXPECT(tg_sketch_record_duration(NULL, 0, 0), TG_ERR_NULL);
  covered("tg_sketch_record_duration");

  EXPECT(tg_sketch_count(s, &u), TG_OK);
  ASSERT(u == 100 + 1 + 2 + 3 + 3);
  EXPECT(tg_sketch_count(s, NULL), TG_ERR_NULL);
  EXPECT(tg_sketch_count((tg_sketch *)zeroed, &u), TG_ERR_UNINIT);
  covered("tg_sketch_count");
  EXPECT(tg_sketch_zero_count(s, &u), TG_OK);
  ASSERT(u == 1);
  EXPECT(tg_sketch_zero_count(NULL, &u), TG_ERR_NULL);
  covered("tg_sketch_zero_count");
  EXPECT(tg_sketch_clamped(s, &u), TG_OK);
  ASSERT(u == 4); /* +inf, UINT64_MAX and two saturated durations */
  EXPECT(tg_sketch_clamped(s, (uint64_t *)((char *)&u + 1)), TG_ERR_MISALIGNED);
  covered("tg_sketch_clamped");
  EXPECT(tg_sketch_saturated(s, &u), TG_OK);
  ASSERT(u == 0);
  EXPECT(tg_sketch_saturated((tg_sketch *)zeroed, &u), TG_ERR_UNINIT);
  covered("tg_sketch_saturated");

  EXPECT(tg_sketch_quantile(s, 0.5, &d), TG_OK);
  ASSERT(fabs(d - 50e6) <= 0.01 * 50e6);
  EXPECT(tg_sketch_quantile(s, 1.5, &d), TG_ERR_QUANTILE);
  EXPECT(tg_sketch_quantile(s, -0.1, &d), TG_ERR_QUANTILE);
  EXPECT(tg_sketch_quantile(s, NAN, &d), TG_ERR_QUANTILE);
  EXPECT(tg_sketch_quantile(s, 0.5, NULL), TG_ERR_NULL);
  covered("tg_sketch_quantile");
  EXPECT(tg_sketch_rank(s, 10.5e6, &u), TG_OK);
  ASSERT(u == 15); /* 1..10 ms, the zero, three of 5 ms, 2 ms */
  EXPECT(tg_sketch_rank(s, NAN, &u), TG_ERR_VALUE);
  EXPECT(tg_sketch_rank(NULL, 1.0, &u), TG_ERR_NULL);
  covered("tg_sketch_rank");
  EXPECT(tg_sketch_min(s, &d), TG_OK);
  ASSERT(d == 0.0);
  EXPECT(tg_sketch_min(s, NULL), TG_ERR_NULL);
  covered("tg_sketch_min");
  EXPECT(tg_sketch_max(s, &d), TG_OK);
  ASSERT(d > 1e11);
  EXPECT(tg_sketch_max((tg_sketch *)zeroed, &d), TG_ERR_UNINIT);
  covered("tg_sketch_max");
  EXPECT(tg_sketch_sum(s, &d), TG_OK);
  ASSERT(d > 0);
  EXPECT(tg_sketch_sum(NULL, &d), TG_ERR_NULL);
  covered("tg_sketch_sum");
  EXPECT(tg_sketch_relative_accuracy(s, &d), TG_OK);
  ASSERT(d > 0.007 && d < 0.008);
  EXPECT(tg_sketch_relative_accuracy(s, NULL), TG_ERR_NULL);
  covered("tg_sketch_relative_accuracy");

  /* merge: same preset, itself, another preset, uninitialised */
  EXPECT(tg_sketch_init(other_mem, sizeof other_mem, TG_PRESET_INT, &o), TG_OK);
  EXPECT(tg_sketch_record_u64(o, 7000000), TG_OK);
  EXPECT(tg_sketch_merge(o, s), TG_OK);
  EXPECT(tg_sketch_count(o, &u), TG_OK);
  ASSERT(u == 110);
  EXPECT(tg_sketch_merge(o, o), TG_OK);
  EXPECT(tg_sketch_count(o, &u), TG_OK);
  ASSERT(u == 220);
  EXPECT(tg_sketch_init(other_mem, sizeof other_mem, TG_PRESET_INT_COARSE, &o), TG_OK);
  EXPECT(tg_sketch_merge(o, s), TG_ERR_MISMATCH);
  EXPECT(tg_sketch_merge(o, (tg_sketch *)zeroed), TG_ERR_UNINIT);
  EXPECT(tg_sketch_merge(NULL, s), TG_ERR_NULL);
  covered("tg_sketch_merge");

  /* DataDog's codec: round trip, short buffers, conventions, garbage, foreign mapping */
  size_t len = 0, need = 0;
  EXPECT(tg_sketch_encode_ddsketch(s, TG_CONVENTION_GO_JAVA, NULL, 0, &need), TG_ERR_BUFFER);
  ASSERT(need > 0 && need <= sizeof buf);
  EXPECT(tg_sketch_encode_ddsketch(s, TG_CONVENTION_GO_JAVA, buf, need - 1, &len), TG_ERR_BUFFER);
  ASSERT(len == need);
  EXPECT(tg_sketch_encode_ddsketch(s, TG_CONVENTION_GO_JAVA, buf, sizeof buf, &len), TG_OK);
  ASSERT(len == need);
  EXPECT(tg_sketch_encode_ddsketch(s, 2, buf, sizeof buf, &len), TG_ERR_VALUE);
  /* a capacity no buffer can have (above PTRDIFF_MAX) */
  EXPECT(tg_sketch_encode_ddsketch(s, TG_CONVENTION_GO_JAVA, buf, SIZE_MAX, &len), TG_ERR_VALUE);
  EXPECT(tg_sketch_encode_ddsketch(s, TG_CONVENTION_GO_JAVA, NULL, 10, &len), TG_ERR_NULL);
  EXPECT(tg_sketch_encode_ddsketch(s, TG_CONVENTION_GO_JAVA, buf, sizeof buf, NULL), TG_ERR_NULL);
  EXPECT(tg_sketch_encode_ddsketch((tg_sketch *)zeroed, 0, buf, sizeof buf, &len), TG_ERR_UNINIT);
  covered("tg_sketch_encode_ddsketch");
  EXPECT(tg_sketch_init(other_mem, sizeof other_mem, TG_PRESET_INT, &o), TG_OK);
  EXPECT(tg_sketch_decode_ddsketch(o, TG_CONVENTION_GO_JAVA, buf, len), TG_OK);
  EXPECT(tg_sketch_count(o, &u), TG_OK);
  ASSERT(u == 109);
  /* a foreign mapping (the log preset's) is re-binned */
  EXPECT(tg_sketch_init(other_mem, sizeof other_mem, TG_PRESET_LOG, &o), TG_OK);
  EXPECT(tg_sketch_decode_ddsketch(o, TG_CONVENTION_GO_JAVA, buf, len), TG_OK);
  EXPECT(tg_sketch_count(o, &u), TG_OK);
  ASSERT(u == 109);
  EXPECT(tg_sketch_decode_ddsketch(o, TG_CONVENTION_GO_JAVA, buf, len / 2), TG_ERR_DECODE);
  EXPECT(tg_sketch_decode_ddsketch(o, TG_CONVENTION_GO_JAVA, NULL, 0), TG_ERR_DECODE);
  EXPECT(tg_sketch_decode_ddsketch(o, TG_CONVENTION_GO_JAVA, NULL, 5), TG_ERR_NULL);
  EXPECT(tg_sketch_decode_ddsketch(o, 9, buf, len), TG_ERR_VALUE);
  EXPECT(tg_sketch_decode_ddsketch(o, TG_CONVENTION_GO_JAVA, buf, SIZE_MAX), TG_ERR_VALUE);
  {
    uint8_t garbage[64];
    for (size_t i = 0; i < sizeof garbage; i++) garbage[i] = (uint8_t)(i * 37 + 11);
    EXPECT(tg_sketch_decode_ddsketch(o, TG_CONVENTION_PYTHON, garbage, sizeof garbage),
           TG_ERR_DECODE);
  }
  EXPECT(tg_sketch_count(o, &u), TG_OK);
  ASSERT(u == 109); /* failed decodes changed nothing */
  EXPECT(tg_sketch_decode_ddsketch((tg_sketch *)zeroed, 0, buf, len), TG_ERR_UNINIT);
  covered("tg_sketch_decode_ddsketch");

  /* OTLP: the OTEL preset only */
  EXPECT(tg_sketch_encode_otlp(s, 1, 2, buf, sizeof buf, &len), TG_ERR_PRESET);
  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, TG_PRESET_OTEL, &s), TG_OK);
  for (uint64_t us = 1; us <= 50; us++) EXPECT(tg_sketch_record_u64(s, us * 100000), TG_OK);
  EXPECT(tg_sketch_encode_otlp(s, 1700000000000000000ull, 1700000060000000000ull, NULL, 0, &need),
         TG_ERR_BUFFER);
  EXPECT(tg_sketch_encode_otlp(s, 1700000000000000000ull, 1700000060000000000ull, buf, need - 1,
                               &len),
         TG_ERR_BUFFER);
  EXPECT(tg_sketch_encode_otlp(s, 1700000000000000000ull, 1700000060000000000ull, buf,
                               sizeof buf, &len),
         TG_OK);
  ASSERT(len == need);
  EXPECT(tg_sketch_encode_otlp(s, 0, 0, buf, sizeof buf, NULL), TG_ERR_NULL);
  EXPECT(tg_sketch_encode_otlp(s, 0, 0, buf, SIZE_MAX, &len), TG_ERR_VALUE);
  EXPECT(tg_sketch_encode_otlp(NULL, 0, 0, buf, sizeof buf, &len), TG_ERR_NULL);
  covered("tg_sketch_encode_otlp");
  EXPECT(tg_sketch_init(other_mem, sizeof other_mem, TG_PRESET_OTEL, &o), TG_OK);
  EXPECT(tg_sketch_decode_otlp(o, buf, len), TG_OK);
  EXPECT(tg_sketch_count(o, &u), TG_OK);
  ASSERT(u == 50);
  EXPECT(tg_sketch_decode_otlp(o, buf, 3), TG_ERR_DECODE);
  EXPECT(tg_sketch_decode_otlp(o, NULL, 3), TG_ERR_NULL);
  EXPECT(tg_sketch_decode_otlp(o, buf, SIZE_MAX), TG_ERR_VALUE);
  EXPECT(tg_sketch_init(other_mem, sizeof other_mem, TG_PRESET_MCU, &o), TG_OK);
  EXPECT(tg_sketch_decode_otlp(o, buf, len), TG_ERR_PRESET);
  EXPECT(tg_sketch_decode_otlp((tg_sketch *)zeroed, buf, len), TG_ERR_UNINIT);
  covered("tg_sketch_decode_otlp");

  EXPECT(tg_sketch_clear(s), TG_OK);
  EXPECT(tg_sketch_count(s, &u), TG_OK);
  ASSERT(u == 0);
  EXPECT(tg_sketch_clear(NULL), TG_ERR_NULL);
  EXPECT(tg_sketch_clear((tg_sketch *)zeroed), TG_ERR_UNINIT);
  covered("tg_sketch_clear");
}

static void windows(void) {
  tg_window_config c;
  EXPECT(tg_window_config_default(&c), TG_OK);
  ASSERT(c.interval_ns == 30000000000ull && c.quantile == 0.9 && c.rotate_on_record);
  EXPECT(tg_window_config_default(NULL), TG_ERR_NULL);
  covered("tg_window_config_default");

  tg_window *w = NULL;
  const size_t sizes[] = {0, TG_WINDOW_LOG_SIZE, TG_WINDOW_CUBIC_SIZE, TG_WINDOW_INT_SIZE, 0,
                          TG_WINDOW_MCU_SIZE};
  for (uint32_t p = TG_PRESET_LOG; p <= TG_PRESET_MCU; p++) {
    if (p == TG_PRESET_INT_COARSE) continue;
    EXPECT(tg_window_init(window_mem, sizes[p], p, manual_clock(), NULL, &w), TG_OK);
    EXPECT(tg_window_init(window_mem, sizes[p] / 2, p, manual_clock(), NULL, &w), TG_ERR_SIZE);
  }
  EXPECT(tg_window_init(window_mem, sizeof window_mem, TG_PRESET_INT_COARSE, manual_clock(), NULL,
                        &w),
         TG_ERR_PRESET);
  EXPECT(tg_window_init(window_mem, sizeof window_mem, TG_PRESET_OTEL, manual_clock(), NULL, &w),
         TG_ERR_PRESET);
  EXPECT(tg_window_init(window_mem, sizeof window_mem, 99, manual_clock(), NULL, &w), TG_ERR_PRESET);
  EXPECT(tg_window_init(window_mem, sizeof window_mem, TG_PRESET_INT, no_clock, NULL, &w),
         TG_ERR_NULL);
  EXPECT(tg_window_init(NULL, sizeof window_mem, TG_PRESET_INT, manual_clock(), NULL, &w),
         TG_ERR_NULL);
  EXPECT(tg_window_init(window_mem, sizeof window_mem, TG_PRESET_INT, manual_clock(), NULL, NULL),
         TG_ERR_NULL);
  EXPECT(tg_window_init((char *)window_mem + 2, sizeof window_mem - 2, TG_PRESET_INT,
                        manual_clock(), NULL, &w),
         TG_ERR_MISALIGNED);
  tg_window_config bad = c;
  bad.quantile = NAN;
  EXPECT(tg_window_init(window_mem, sizeof window_mem, TG_PRESET_INT, manual_clock(), &bad, &w),
         TG_ERR_CONFIG);
  bad = c;
  bad.interval_ns = 1;
  EXPECT(tg_window_init(window_mem, sizeof window_mem, TG_PRESET_INT, manual_clock(), &bad, &w),
         TG_ERR_CONFIG);
  c.interval_ns = 1000000000ull; /* 1 s intervals */
  EXPECT(tg_window_init(window_mem, sizeof window_mem, TG_PRESET_INT, manual_clock(), &c, &w),
         TG_OK);
  covered("tg_window_init");

  const tg_window *zw = (const tg_window *)zeroed;
  for (uint64_t ms = 1; ms <= 100; ms++) EXPECT(tg_window_record(w, (double)ms * 1e6), TG_OK);
  EXPECT(tg_window_record(w, NAN), TG_ERR_VALUE);
  EXPECT(tg_window_record(w, -3.0), TG_ERR_VALUE);
  EXPECT(tg_window_record(zw, 1.0), TG_ERR_UNINIT);
  EXPECT(tg_window_record(NULL, 1.0), TG_ERR_NULL);
  covered("tg_window_record");
  EXPECT(tg_window_record_u64(w, 50000000), TG_OK);
  EXPECT(tg_window_record_u64(zw, 1), TG_ERR_UNINIT);
  covered("tg_window_record_u64");
  uint64_t u = 0;
  uint32_t r = 0;
  double d = 0;
  EXPECT(tg_window_count(w, &u), TG_OK);
  ASSERT(u == 101);
  EXPECT(tg_window_count(w, NULL), TG_ERR_NULL);
  covered("tg_window_count");
  EXPECT(tg_window_quantile(w, 0.9, &d), TG_OK);
  ASSERT(fabs(d - 90e6) <= 0.01 * 90e6);
  EXPECT(tg_window_quantile(w, 2.0, &d), TG_ERR_QUANTILE);
  EXPECT(tg_window_quantile(zw, 0.5, &d), TG_ERR_UNINIT);
  covered("tg_window_quantile");
  EXPECT(tg_window_rank(w, 1e12, &u), TG_OK);
  ASSERT(u == 101);
  EXPECT(tg_window_rank(w, NAN, &u), TG_ERR_VALUE);
  covered("tg_window_rank");

  tg_sketch *s = NULL;
  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, TG_PRESET_INT, &s), TG_OK);
  EXPECT(tg_window_snapshot(w, s), TG_OK);
  EXPECT(tg_sketch_count(s, &u), TG_OK);
  ASSERT(u == 101);
  EXPECT(tg_sketch_init(sketch_mem, sizeof sketch_mem, TG_PRESET_MCU, &s), TG_OK);
  EXPECT(tg_window_snapshot(w, s), TG_ERR_MISMATCH);
  EXPECT(tg_window_snapshot(w, (tg_sketch *)zeroed), TG_ERR_UNINIT);
  EXPECT(tg_window_snapshot(w, NULL), TG_ERR_NULL);
  covered("tg_window_snapshot");

  /* the manual clock drives rotations: three intervals later all is forgotten */
  now_ns += 3500000000ull;
  EXPECT(tg_window_count(w, &u), TG_OK);
  ASSERT(u == 0);
  EXPECT(tg_window_quantile(w, 0.5, &d), TG_ERR_EMPTY);
  EXPECT(tg_window_rotations(w, &r), TG_OK);
  ASSERT(r >= 1);
  EXPECT(tg_window_rotations(zw, &r), TG_ERR_UNINIT);
  covered("tg_window_rotations");
  EXPECT(tg_window_expired(w, &r), TG_OK);
  ASSERT(r == 101);
  EXPECT(tg_window_expired(w, NULL), TG_ERR_NULL);
  covered("tg_window_expired");
}

static void budgets(void) {
  tg_token_bucket *b = NULL;
  bool granted = false;
  uint32_t n = 0;
  double d = 0;
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, manual_clock(), 10.0, 2, &b), TG_OK);
  EXPECT(tg_token_bucket_init(bucket_mem, TG_TOKEN_BUCKET_SIZE / 2, manual_clock(), 10.0, 2, &b),
         TG_ERR_SIZE);
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, no_clock, 10.0, 2, &b), TG_ERR_NULL);
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, manual_clock(), NAN, 2, &b),
         TG_ERR_CONFIG);
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, manual_clock(), -1.0, 2, &b),
         TG_ERR_CONFIG);
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, manual_clock(), INFINITY, 2, &b),
         TG_ERR_CONFIG);
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, manual_clock(), 10.0, 0, &b),
         TG_ERR_CONFIG);
  EXPECT(tg_token_bucket_init((char *)bucket_mem + 4, 64, manual_clock(), 10.0, 2, &b),
         TG_ERR_MISALIGNED);
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, manual_clock(), 10.0, 2, NULL),
         TG_ERR_NULL);
  EXPECT(tg_token_bucket_init(bucket_mem, sizeof bucket_mem, manual_clock(), 10.0, 2, &b), TG_OK);
  covered("tg_token_bucket_init");
  const tg_token_bucket *zb = (const tg_token_bucket *)zeroed;
  EXPECT(tg_token_bucket_try_acquire(b, &granted), TG_OK);
  ASSERT(granted);
  EXPECT(tg_token_bucket_try_acquire(b, &granted), TG_OK);
  ASSERT(granted);
  EXPECT(tg_token_bucket_try_acquire(b, &granted), TG_OK);
  ASSERT(!granted);
  now_ns += 100000000ull; /* 100 ms: one token at 10/s */
  EXPECT(tg_token_bucket_try_acquire(b, &granted), TG_OK);
  ASSERT(granted);
  EXPECT(tg_token_bucket_try_acquire(b, NULL), TG_ERR_NULL);
  EXPECT(tg_token_bucket_try_acquire(zb, &granted), TG_ERR_UNINIT);
  /* a ratio budget's handle is not a token bucket's */
  EXPECT(tg_token_bucket_try_acquire((const tg_token_bucket *)ratio_mem, &granted), TG_ERR_UNINIT);
  covered("tg_token_bucket_try_acquire");
  EXPECT(tg_token_bucket_on_request(b), TG_OK);
  EXPECT(tg_token_bucket_on_request(NULL), TG_ERR_NULL);
  covered("tg_token_bucket_on_request");
  now_ns += 1000000000ull;
  EXPECT(tg_token_bucket_balance(b, &d), TG_OK);
  ASSERT(d > 1.99 && d <= 2.0);
  EXPECT(tg_token_bucket_balance(zb, &d), TG_ERR_UNINIT);
  covered("tg_token_bucket_balance");
  EXPECT(tg_token_bucket_penalize(b, 1), TG_OK);
  EXPECT(tg_token_bucket_balance(b, &d), TG_OK);
  ASSERT(d > 0.99 && d < 1.01);
  EXPECT(tg_token_bucket_penalize(zb, 1), TG_ERR_UNINIT);
  covered("tg_token_bucket_penalize");
  EXPECT(tg_token_bucket_drain(b), TG_OK);
  EXPECT(tg_token_bucket_balance(b, &d), TG_OK);
  ASSERT(d < 0.01);
  EXPECT(tg_token_bucket_drain(NULL), TG_ERR_NULL);
  covered("tg_token_bucket_drain");
  EXPECT(tg_token_bucket_granted(b, &n), TG_OK);
  ASSERT(n == 3);
  EXPECT(tg_token_bucket_granted(b, NULL), TG_ERR_NULL);
  covered("tg_token_bucket_granted");
  EXPECT(tg_token_bucket_denied(b, &n), TG_OK);
  ASSERT(n == 1);
  EXPECT(tg_token_bucket_denied(zb, &n), TG_ERR_UNINIT);
  covered("tg_token_bucket_denied");

  tg_ratio_budget *rb = NULL;
  EXPECT(tg_ratio_budget_init(ratio_mem, sizeof ratio_mem, 0.5, 2, &rb), TG_OK);
  EXPECT(tg_ratio_budget_init(ratio_mem, 8, 0.5, 2, &rb), TG_ERR_SIZE);
  EXPECT(tg_ratio_budget_init(ratio_mem, sizeof ratio_mem, NAN, 2, &rb), TG_ERR_CONFIG);
  EXPECT(tg_ratio_budget_init(ratio_mem, sizeof ratio_mem, -0.5, 2, &rb), TG_ERR_CONFIG);
  EXPECT(tg_ratio_budget_init(ratio_mem, sizeof ratio_mem, 0.5, 0, &rb), TG_ERR_CONFIG);
  EXPECT(tg_ratio_budget_init(NULL, sizeof ratio_mem, 0.5, 2, &rb), TG_ERR_NULL);
  EXPECT(tg_ratio_budget_init(ratio_mem, sizeof ratio_mem, 0.5, 2, &rb), TG_OK);
  covered("tg_ratio_budget_init");
  const tg_ratio_budget *zr = (const tg_ratio_budget *)zeroed;
  EXPECT(tg_ratio_budget_drain(rb), TG_OK);
  EXPECT(tg_ratio_budget_drain(zr), TG_ERR_UNINIT);
  covered("tg_ratio_budget_drain");
  EXPECT(tg_ratio_budget_try_acquire(rb, &granted), TG_OK);
  ASSERT(!granted);
  EXPECT(tg_ratio_budget_try_acquire(rb, NULL), TG_ERR_NULL);
  EXPECT(tg_ratio_budget_try_acquire((const tg_ratio_budget *)bucket_mem, &granted), TG_ERR_UNINIT);
  EXPECT(tg_ratio_budget_on_request(rb), TG_OK);
  EXPECT(tg_ratio_budget_on_request(rb), TG_OK);
  EXPECT(tg_ratio_budget_on_request(zr), TG_ERR_UNINIT);
  covered("tg_ratio_budget_on_request");
  EXPECT(tg_ratio_budget_balance(rb, &d), TG_OK);
  ASSERT(fabs(d - 1.0) < 1e-6);
  EXPECT(tg_ratio_budget_balance(rb, NULL), TG_ERR_NULL);
  covered("tg_ratio_budget_balance");
  EXPECT(tg_ratio_budget_try_acquire(rb, &granted), TG_OK);
  ASSERT(granted);
  covered("tg_ratio_budget_try_acquire");
  EXPECT(tg_ratio_budget_on_request(rb), TG_OK);
  EXPECT(tg_ratio_budget_penalize(rb, 5), TG_OK);
  EXPECT(tg_ratio_budget_balance(rb, &d), TG_OK);
  ASSERT(d < 1e-6);
  EXPECT(tg_ratio_budget_penalize(NULL, 5), TG_ERR_NULL);
  covered("tg_ratio_budget_penalize");
  EXPECT(tg_ratio_budget_granted(rb, &n), TG_OK);
  ASSERT(n == 1);
  EXPECT(tg_ratio_budget_granted(zr, &n), TG_ERR_UNINIT);
  covered("tg_ratio_budget_granted");
  EXPECT(tg_ratio_budget_denied(rb, &n), TG_OK);
  ASSERT(n == 1);
  EXPECT(tg_ratio_budget_denied(rb, NULL), TG_ERR_NULL);
  covered("tg_ratio_budget_denied");
}

static void hedgers(void) {
  tg_hedge_config c;
  EXPECT(tg_hedge_config_default(&c), TG_OK);
  ASSERT(c.percentile_count == 1 && c.percentiles[0] == 0.9 && c.min_samples == 20);
  ASSERT(c.budget_cap == 50 && c.max_hedges == 1 && c.cold_start_delay_ns == 0);
  EXPECT(tg_hedge_config_default(NULL), TG_ERR_NULL);
  covered("tg_hedge_config_default");

  tg_hedger *h = NULL, *h2 = NULL;
  EXPECT(tg_hedger_init(hedger2_mem, sizeof hedger2_mem, TG_PRESET_CUBIC, manual_clock(), NULL,
                        &h2),
         TG_OK);
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_CUBIC, manual_clock(), NULL, &h),
         TG_ERR_SIZE);
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_OTEL, manual_clock(), NULL, &h),
         TG_ERR_PRESET);
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, 0, manual_clock(), NULL, &h), TG_ERR_PRESET);
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, no_clock, NULL, &h),
         TG_ERR_NULL);
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), NULL, NULL),
         TG_ERR_NULL);
  EXPECT(tg_hedger_init((char *)hedger_mem + 1, sizeof hedger_mem - 1, TG_PRESET_MCU,
                        manual_clock(), NULL, &h),
         TG_ERR_MISALIGNED);
  tg_hedge_config bad = c;
  bad.percentile_count = 0;
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), &bad, &h),
         TG_ERR_CONFIG);
  bad = c;
  bad.percentiles[0] = NAN;
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), &bad, &h),
         TG_ERR_CONFIG);
  bad = c;
  bad.max_hedges = 300;
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), &bad, &h),
         TG_ERR_CONFIG);
  bad = c;
  bad.budget_ratio = -1.0;
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), &bad, &h),
         TG_ERR_CONFIG);
  bad = c;
  bad.min_delay_ns = 10;
  bad.max_delay_ns = 5;
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), &bad, &h),
         TG_ERR_CONFIG);
  bad = c;
  bad.on_time_chance = NAN;
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), &bad, &h),
         TG_ERR_CONFIG);
  c.min_samples = 10;
  c.min_delay_ns = 100000; /* 100 us */
  EXPECT(tg_hedger_init(hedger_mem, sizeof hedger_mem, TG_PRESET_MCU, manual_clock(), &c, &h),
         TG_OK);
  covered("tg_hedger_init");

  const tg_hedger *zh = (const tg_hedger *)zeroed;
  tg_ticket t, zt;
  memset(&zt, 0, sizeof zt);
  tg_decision dec;
  uint64_t u = 0;
  EXPECT(tg_hedger_delay(h, &u), TG_ERR_EMPTY); /* cold start */
  /* learn: 20 requests of 800 us */
  for (int i = 0; i < 20; i++) {
    EXPECT(tg_hedger_start(h, &t), TG_OK);
    now_ns += 800000;
    EXPECT(tg_hedger_on_success(h, &t, 0, i == 0 ? NULL : &u), TG_OK);
    if (i > 0) ASSERT(u == 800000);
  }
  EXPECT(tg_hedger_start(h, NULL), TG_ERR_NULL);
  EXPECT(tg_hedger_start(zh, &t), TG_ERR_UNINIT);
  EXPECT(tg_hedger_start((const tg_hedger *)window_mem, &t), TG_ERR_UNINIT);
  covered("tg_hedger_start");
  EXPECT(tg_hedger_delay(h, &u), TG_OK);
  ASSERT(u >= 800000 && u <= 826000);
  EXPECT(tg_hedger_delay(h, NULL), TG_ERR_NULL);
  EXPECT(tg_hedger_delay(zh, &u), TG_ERR_UNINIT);
  covered("tg_hedger_delay");

  /* a slow request: Wait -> Hedge -> the hedge wins */
  EXPECT(tg_hedger_start(h, &t), TG_OK);
  EXPECT(tg_hedger_should_hedge(h, &t, &dec), TG_OK);
  ASSERT(dec.kind == TG_DECISION_WAIT && dec.skip_reason == TG_SKIP_NONE);
  ASSERT(dec.wait_ns >= 800000 && dec.wait_ns <= 826000);
  now_ns += dec.wait_ns;
  EXPECT(tg_hedger_should_hedge(h, &t, &dec), TG_OK);
  ASSERT(dec.kind == TG_DECISION_HEDGE);
  EXPECT(tg_hedger_should_hedge(h, &t, &dec), TG_OK);
  ASSERT(dec.kind == TG_DECISION_SKIP && dec.skip_reason == TG_SKIP_MAX_HEDGES);
  EXPECT(tg_hedger_should_hedge(h, &zt, &dec), TG_ERR_UNINIT);
  EXPECT(tg_hedger_should_hedge(h2, &t, &dec), TG_ERR_MISMATCH);
  EXPECT(tg_hedger_should_hedge(h, &t, NULL), TG_ERR_NULL);
  EXPECT(tg_hedger_should_hedge(h, NULL, &dec), TG_ERR_NULL);
  EXPECT(tg_hedger_should_hedge(h, (tg_ticket *)((char *)&t + 4), &dec), TG_ERR_MISALIGNED);
  covered("tg_hedger_should_hedge");
  now_ns += 300000;
  EXPECT(tg_hedger_on_success(h, &t, 1, &u), TG_OK);
  ASSERT(u >= 1100000);
  EXPECT(tg_hedger_on_success(h, &t, 256, &u), TG_ERR_VALUE);
  EXPECT(tg_hedger_on_success(h, &zt, 0, &u), TG_ERR_UNINIT);
  EXPECT(tg_hedger_on_success(h2, &t, 0, &u), TG_ERR_MISMATCH);
  EXPECT(tg_hedger_on_success(h, NULL, 0, &u), TG_ERR_NULL);
  EXPECT(tg_hedger_on_success(h, &t, 0, (uint64_t *)((char *)&u + 2)), TG_ERR_MISALIGNED);
  covered("tg_hedger_on_success");

  EXPECT(tg_hedger_start_with_deadline(h, now_ns + 500000, &t), TG_OK);
  EXPECT(tg_hedger_should_hedge(h, &t, &dec), TG_OK);
  ASSERT(dec.kind == TG_DECISION_SKIP && dec.skip_reason == TG_SKIP_DEADLINE);
  EXPECT(tg_hedger_start_with_deadline(zh, 0, &t), TG_ERR_UNINIT);
  EXPECT(tg_hedger_start_with_deadline(h, 0, NULL), TG_ERR_NULL);
  covered("tg_hedger_start_with_deadline");
  EXPECT(tg_hedger_on_deadline_exceeded(h, &t), TG_OK);
  EXPECT(tg_hedger_on_deadline_exceeded(h, &zt), TG_ERR_UNINIT);
  EXPECT(tg_hedger_on_deadline_exceeded(h2, &t), TG_ERR_MISMATCH);
  covered("tg_hedger_on_deadline_exceeded");

  EXPECT(tg_hedger_start(h, &t), TG_OK);
  EXPECT(tg_hedger_on_error(h, &t, 0), TG_OK);
  EXPECT(tg_hedger_on_error(h, &t, 1000), TG_ERR_VALUE);
  EXPECT(tg_hedger_on_error(h, &zt, 0), TG_ERR_UNINIT);
  EXPECT(tg_hedger_on_error(NULL, &t, 0), TG_ERR_NULL);
  covered("tg_hedger_on_error");
  EXPECT(tg_hedger_record(h, 900000), TG_OK);
  EXPECT(tg_hedger_record(zh, 1), TG_ERR_UNINIT);
  covered("tg_hedger_record");
  EXPECT(tg_hedger_on_rate_limited(h), TG_OK);
  EXPECT(tg_hedger_on_rate_limited(NULL), TG_ERR_NULL);
  covered("tg_hedger_on_rate_limited");
  EXPECT(tg_hedger_on_rate_limited_for(h, 2000000000ull), TG_OK);
  EXPECT(tg_hedger_on_rate_limited_for(h, UINT64_MAX), TG_OK);
  EXPECT(tg_hedger_on_rate_limited_for(zh, 1), TG_ERR_UNINIT);
  EXPECT(tg_hedger_delay(h, &u), TG_ERR_EMPTY); /* the pushback holds hedging off */
  covered("tg_hedger_on_rate_limited_for");

  tg_hedge_stats st;
  EXPECT(tg_hedger_stats(h, &st), TG_OK);
  ASSERT(st.requests == 23 && st.hedges == 1 && st.hedge_wins == 1 && st.primary_wins == 20);
  ASSERT(st.errors == 1 && st.rate_limited == 3 && st.pushbacks == 2 && st.pushbacks_clamped == 1);
  ASSERT(st.deadline_exceeded == 1 && st.skipped_deadline == 1 && !st.has_delay);
  EXPECT(tg_hedger_stats(h, NULL), TG_ERR_NULL);
  EXPECT(tg_hedger_stats(zh, &st), TG_ERR_UNINIT);
  covered("tg_hedger_stats");
}

int main(void) {
  misc();
  sketches();
  windows();
  budgets();
  hedgers();
  printf("host.c: %d checks passed\n", checks);
  return 0;
}

/* The sketch checks: the Rust firmware's (firmware/src/checks.rs), through the C ABI, each
   against the values the host computed (firmware/src/expected.rs, turned into a header at
   build time by gen-expected.py), and DataDog's encoding against the host's. */
#ifndef TG_FW_CHECKS_H
#define TG_FW_CHECKS_H

#include <stdbool.h>
#include <stdint.h>

/* What a check reads back from a sketch (support/src/firmware.rs's Summary): its counters
   and the bits of its quantiles at QS (UINT64_MAX for "no answer"). */
#define QUANTILES 9
typedef struct {
    uint64_t count;
    uint64_t zero_count;
    uint64_t clamped;
    uint64_t saturated;
    uint64_t quantile_bits[QUANTILES];
} summary;

typedef struct {
    const char *name;
    bool (*run)(void);
} check;

/* The checks, in the Rust firmware's order (the cubic ones on the Cortex-M4F only). */
extern const check SKETCH_CHECKS[];
extern const unsigned SKETCH_CHECK_COUNT;

#endif

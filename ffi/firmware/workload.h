/* The Rust firmware's known workload (support/src/firmware.rs), in C: xorshift32
   latencies and the edges of the range. Integer arithmetic only (and exactly rounded
   conversions), so the sketches must match the host's to the bit. */
#ifndef TG_FW_WORKLOAD_H
#define TG_FW_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "tailguard.h"

/* How many latencies the main workload records, and its seed. */
#define LATENCIES 4000u
#define SEED 0x12345678u

/* xorshift32 (shifts 13, 17, 5; src/test_rng.rs): the next state, which is the output. */
uint32_t xorshift32(uint32_t *state);

/* Records latencies number from..to of the main workload with record_u64. */
bool record_latencies(tg_sketch *s, uint32_t from, uint32_t to);
/* The same with record (as doubles). */
bool record_latencies_f64(tg_sketch *s, uint32_t from, uint32_t to);
/* Values at and beyond the edges of the range. */
bool record_edges(tg_sketch *s);

#endif

/* The static RAM the checks and the hedging run use, one after the other: they share it
   (the micro:bit has 16 KiB). Object storage for tailguard is 8-byte aligned words, as
   tailguard.h asks (TG_ALIGN). */
#ifndef TG_FW_RAM_H
#define TG_FW_RAM_H

#include <stdint.h>

#include "tailguard.h"

#define WORDS(bytes) (((bytes) + 7u) / 8u)

/* DataDog's bytes of the coarse latency sketch: 8 per bin from the least to the greatest,
   and a few dozen more. */
#define ENCODED_MAX 2048u

/* The hedger's preset: the microcontroller's (integer mapping, no float on the record
   path) on the Cortex-M0; the logarithmic one on the Cortex-M4F (-DHEDGER_MCU: the
   microcontroller's there too). The summary sketch is the microcontroller preset on
   both. */
#if defined(__ARM_FP) && !defined(HEDGER_MCU)
#define HEDGER_PRESET TG_PRESET_LOG
#define HEDGER_SIZE TG_HEDGER_LOG_SIZE
#define HEDGER_PRESET_NAME "log"
#else
#define HEDGER_PRESET TG_PRESET_MCU
#define HEDGER_SIZE TG_HEDGER_MCU_SIZE
#define HEDGER_PRESET_NAME "mcu"
#endif

typedef union {
    /* checks.c: two coarse sketches (a merge) and DataDog's bytes. */
    struct {
        uint64_t a[WORDS(TG_SKETCH_INT_COARSE_SIZE)];
        uint64_t b[WORDS(TG_SKETCH_INT_COARSE_SIZE)];
        uint8_t encoded[ENCODED_MAX];
    } coarse;
    /* checks.c: one fine sketch. */
    uint64_t fine[WORDS(TG_SKETCH_INT_SIZE)];
#if defined(__ARM_FP)
    /* checks.c: two cubic sketches. */
    struct {
        uint64_t a[WORDS(TG_SKETCH_CUBIC_SIZE)];
        uint64_t b[WORDS(TG_SKETCH_CUBIC_SIZE)];
    } cubic;
#endif
    /* hedge.c: the hedger and the sketch of the answers' latencies. */
    struct {
        uint64_t hedger[WORDS(HEDGER_SIZE)];
        uint64_t summary[WORDS(TG_SKETCH_MCU_SIZE)];
    } hedge;
} shared_ram;

extern shared_ram RAM; /* main.c */

#endif

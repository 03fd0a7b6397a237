/* Hedging a stalling sensor from a super-loop (the embassy firmware's experiment,
   firmware/embassy/src/run.rs, without an executor): unhedged reads of sensor A; a
   warm-up in which the hedger learns the latency; the same reads of A again, each hedged
   to sensor B when the hedger says so, the first read to finish winning. Judged by the
   embassy firmware's criteria (firmware/embassy/src/checks.rs). */
#ifndef TG_FW_HEDGE_H
#define TG_FW_HEDGE_H

#include <stdint.h>

/* Runs the experiment (SysTick must be running: clock_start), prints its figures and a
   line per check; returns how many checks failed and adds to *passed those that passed. */
uint32_t hedge_run(uint32_t *passed);

#endif

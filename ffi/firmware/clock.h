/* The firmware's time: SysTick on the core clock, one exception per millisecond counting
   milliseconds, and the counter's current value for the time within the millisecond, so
   the clock reads to the core cycle (62.5 ns on the micro:bit, 40 ns on the MPS2). */
#ifndef TG_FW_CLOCK_H
#define TG_FW_CLOCK_H

#include <stdint.h>

#include "tailguard.h"

/* Starts SysTick. */
void clock_start(void);

/* Nanoseconds since clock_start. Callable from an interrupt handler too. */
uint64_t clock_now_ns(void);

/* The clock as tailguard's callback. */
tg_clock clock_tg(void);

#endif

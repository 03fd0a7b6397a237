#include "clock.h"

/* CORE_HZ comes from the build: 16 MHz on the micro:bit (the nRF51's HCLK), 25 MHz on the
   MPS2 (AN386), as QEMU models them; under -icount it is virtual time, so a run is
   deterministic. */
#ifndef CORE_HZ
#error "build with -DCORE_HZ=<the core clock in Hz>"
#endif
#if CORE_HZ % 1000000 != 0
#error "CORE_HZ must be a whole number of MHz"
#endif
#define CYCLES_PER_MS (CORE_HZ / 1000u)
#define RELOAD (CYCLES_PER_MS - 1u)
_Static_assert(RELOAD < (1u << 24), "SysTick's reload register has 24 bits");

#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
#define SCB_ICSR (*(volatile uint32_t *)0xE000ED04u)
#define SYST_CSR_ENABLE (1u << 0)
#define SYST_CSR_TICKINT (1u << 1)
#define SYST_CSR_CLKSOURCE_CORE (1u << 2)
#define SCB_ICSR_PENDSTSET (1u << 26)

/* Milliseconds since clock_start. 64 bits (never wraps), so read with interrupts off: the
   Cortex-M has no 64-bit atomic load. */
static volatile uint64_t millis;

void SysTick_Handler(void) { millis = millis + 1u; }

void clock_start(void) {
    SYST_RVR = RELOAD;
    SYST_CVR = 0; /* any write clears it: the count restarts from RELOAD */
    SYST_CSR = SYST_CSR_CLKSOURCE_CORE | SYST_CSR_TICKINT | SYST_CSR_ENABLE;
}

uint64_t clock_now_ns(void) {
    uint32_t primask;
    __asm__ volatile("mrs %0, primask" : "=r"(primask));
    __asm__ volatile("cpsid i" ::: "memory");
    uint64_t ms = millis;
    uint32_t value = SYST_CVR;
    /* The counter wrapped but its exception has not run yet (interrupts are off here, or
       we are in a handler of higher priority): that millisecond is not counted yet, and
       the value read may be from before or after the wrap, so read it again. */
    if ((SCB_ICSR & SCB_ICSR_PENDSTSET) != 0) {
        ms += 1u;
        value = SYST_CVR;
    }
    if ((primask & 1u) == 0) {
        __asm__ volatile("cpsie i" ::: "memory");
    }
    uint32_t cycles = RELOAD - value; /* counts down from RELOAD */
    return ms * 1000000u + cycles * 1000u / (CORE_HZ / 1000000u);
}

static uint64_t now_ns(void *ctx) {
    (void)ctx;
    return clock_now_ns();
}

tg_clock clock_tg(void) {
    tg_clock clock = {.now_ns = now_ns, .ctx = 0};
    return clock;
}

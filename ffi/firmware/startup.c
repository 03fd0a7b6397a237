/* Start-up: the vector table (the initial stack pointer, the reset handler, the faults and
   SysTick), .data copied from flash, .bss zeroed, the stack painted (so main can measure
   its peak, stack.h), the FPU on for the Cortex-M4F, then main. */
#include <stdint.h>

#include "semihosting.h"
#include "stack.h"

/* From the linker script (sections.ld). */
extern uint32_t _sidata, _sdata, _edata, _sbss, _ebss, _estack;

int main(void);
void SysTick_Handler(void); /* clock.c */
void Reset_Handler(void);

static void fault(const char *what) {
    sh_write(what);
    sh_exit(1);
}

/* The stack sits above .bss: a stack pointer below its end at the fault says the stack
   overflowed (into the statics, or off the start of RAM), the likely fault on the
   micro:bit's 16 KiB. */
static void HardFault_Handler(void) {
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    fault(sp < (uintptr_t)&_ebss ? "FAIL hard fault: the stack overflowed\n"
                                 : "FAIL hard fault\n");
}
static void Default_Handler(void) { fault("FAIL unexpected exception\n"); }

typedef void (*vector)(void);

/* The Cortex-M's 16 system entries; no device interrupt is used. */
__attribute__((section(".vectors"), used)) static const vector vectors[16] = {
    (vector)&_estack,  /* initial stack pointer */
    Reset_Handler,     /* reset */
    Default_Handler,   /* NMI */
    HardFault_Handler, /* hard fault */
    Default_Handler,   /* memory management fault (M4) */
    Default_Handler,   /* bus fault (M4) */
    Default_Handler,   /* usage fault (M4) */
    0,
    0,
    0,
    0,
    Default_Handler, /* SVCall */
    Default_Handler, /* debug monitor (M4) */
    0,
    Default_Handler, /* PendSV */
    SysTick_Handler,
};

void Reset_Handler(void) {
    /* volatile: keeps the compiler from making these loops calls to memcpy and memset,
       which could be the Rust library's, before their .data is in place. */
    for (volatile uint32_t *src = &_sidata, *dst = &_sdata; dst < &_edata;) {
        *dst++ = *src++;
    }
    for (volatile uint32_t *dst = &_sbss; dst < &_ebss;) {
        *dst++ = 0;
    }
    stack_paint();
#if defined(__ARM_FP)
    /* CP10 and CP11 (the FPU) fully accessible: the C code and the Rust library are built
       for the hard-float ABI. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
    int failed = main();
    sh_exit((uint32_t)failed);
}

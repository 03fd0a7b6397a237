#include "stack.h"

extern uint32_t _ebss, _estack;

#define PAINT 0x5aa5f00du
/* Left unpainted below the caller's stack pointer: the frame of stack_paint itself. */
#define MARGIN_WORDS 16u

void stack_paint(void) {
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (volatile uint32_t *p = &_ebss; p < sp - MARGIN_WORDS;) {
        *p++ = PAINT;
    }
}

stack_use stack_high_water(void) {
    const uint32_t *p = &_ebss;
    while (p < &_estack && *p == PAINT) {
        p++;
    }
    stack_use use = {
        .peak = (uint32_t)((uintptr_t)&_estack - (uintptr_t)p),
        .size = (uint32_t)((uintptr_t)&_estack - (uintptr_t)&_ebss),
    };
    return use;
}

uint32_t stack_below(uintptr_t sp) {
    const uint32_t *p = &_ebss;
    while ((uintptr_t)p < sp && *p == PAINT) {
        p++;
    }
    return (uint32_t)(sp - (uintptr_t)p);
}

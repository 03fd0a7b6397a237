/* The stack's peak, by painting: start-up fills the free stack with a pattern, and the
   peak is how far down the pattern has been overwritten. The stack is the RAM above .bss
   (sections.ld). */
#ifndef TG_FW_STACK_H
#define TG_FW_STACK_H

#include <stdint.h>

/* Fills the stack below the caller's frame with the pattern (start-up). */
void stack_paint(void);

/* The deepest the stack has been, in bytes, and the stack's size. */
typedef struct {
    uint32_t peak;
    uint32_t size;
} stack_use;
stack_use stack_high_water(void);

/* The stack pointer where it is read (inlined into the caller). */
static inline __attribute__((always_inline)) uintptr_t stack_pointer(void) {
    uintptr_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}

/* How far below `sp` (a stack_pointer() read before a stack_paint() and a call) the stack
   has been since that paint: the stack the call took. */
uint32_t stack_below(uintptr_t sp);

#endif

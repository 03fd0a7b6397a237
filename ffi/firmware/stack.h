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

#endif

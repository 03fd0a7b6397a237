/* tailguard through its C ABI (ffi/include/tailguard.h) on a microcontroller, under QEMU:
   the Rust firmware's sketch checks (checks.c) against the host's values, DataDog's
   encoding against the host's bytes, and a stalling sensor hedged from a super-loop on a
   SysTick clock (hedge.c); then the stack's peak. Prints a line per check and exits
   through semihosting: 0 if every check passed, 1 otherwise (a panic in the library, a
   fault: 1 too). Built and run by .ci/ffi-firmware.sh for the Cortex-M0 (-machine
   microbit) and the Cortex-M4F (-machine mps2-an386). */
#include <stdbool.h>
#include <stdint.h>

#include "checks.h"
#include "clock.h"
#include "hedge.h"
#include "print.h"
#include "ram.h"
#include "semihosting.h"
#include "stack.h"
#include "tailguard.h"

shared_ram RAM;

/* The library never panics by design; if it did, this is where it would end. */
static void on_panic(void) {
    sh_write("FAIL panic in tailguard\n");
    sh_exit(1);
}

static void report(bool ok, const char *name, uint32_t *passed, uint32_t *failed) {
    print_str(ok ? "ok   " : "FAIL ");
    print_str(name);
    print_end();
    *(ok ? passed : failed) += 1u;
}

int main(void) {
    uint32_t passed = 0, failed = 0;
    (void)tg_set_panic_handler(on_panic);
    for (unsigned i = 0; i < SKETCH_CHECK_COUNT; i++) {
        report(SKETCH_CHECKS[i].run(), SKETCH_CHECKS[i].name, &passed, &failed);
    }
    clock_start();
    failed += hedge_run(&passed);

    /* Last, so that it covers the whole run. */
    stack_use stack = stack_high_water();
    print_str("stack: peak ");
    print_u64(stack.peak);
    print_str(" B of ");
    print_u64(stack.size);
    print_str(" B; static RAM ");
    print_u64(sizeof RAM);
    print_str(" B shared by the checks and the hedging");
    print_end();
    report(stack.peak < stack.size, "stack: the peak stays inside the stack region", &passed,
           &failed);

    print_u64(passed);
    print_str(" passed, ");
    print_u64(failed);
    print_str(" failed");
    print_end();
    return failed == 0 ? 0 : 1;
}

/* tailguard through its C ABI (ffi/include/tailguard.h) on a microcontroller, under QEMU:
   the Rust firmware's sketch checks (checks.c) against the host's values, DataDog's
   encoding against the host's bytes, and a stalling sensor hedged from a super-loop on a
   SysTick clock (hedge.c); then the stack's peak, and the stack each set-up call takes.
   Prints a line per check and exits through semihosting: 0 if every check passed, 1
   otherwise (a panic in the library, a fault: 1 too). Built and run by .ci/ffi-firmware.sh for the Cortex-M0 (-machine
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

/* Prints the stack each set-up call takes (its own, from the caller's stack pointer), for
   the presets this image uses: what a firmware must leave free for them. After the run,
   whose peak they would otherwise hide (each call paints the stack again). Reports
   whether every call returned TG_OK. */
#define STACK_OF(label, call)                                                                 \
    do {                                                                                      \
        uintptr_t sp = stack_pointer();                                                       \
        stack_paint();                                                                        \
        ok &= (call) == TG_OK;                                                                \
        print_str("stack: " label " ");                                                       \
        print_u64(stack_below(sp));                                                           \
        print_str(" B");                                                                      \
        print_end();                                                                          \
    } while (0)

__attribute__((noinline)) static bool stack_per_call(void) {
    bool ok = true;
    tg_sketch *a = 0, *b = 0;
    void *mem_a = RAM.coarse.a, *mem_b = RAM.coarse.b;
    size_t size = sizeof RAM.coarse.a;
    STACK_OF("tg_sketch_init(int-coarse)",
             tg_sketch_init(mem_a, size, TG_PRESET_INT_COARSE, &a));
    ok &= tg_sketch_init(mem_b, size, TG_PRESET_INT_COARSE, &b) == TG_OK;
    ok &= tg_sketch_record_u64(b, 1000000u) == TG_OK;
    STACK_OF("tg_sketch_merge(int-coarse)", tg_sketch_merge(a, b));
    STACK_OF("tg_sketch_merge(int-coarse, itself)", tg_sketch_merge(a, a));
    STACK_OF("tg_sketch_clear(int-coarse)", tg_sketch_clear(a));
    STACK_OF("tg_sketch_init(int)", tg_sketch_init(RAM.fine, sizeof RAM.fine, TG_PRESET_INT, &a));
    STACK_OF("tg_sketch_init(mcu)", tg_sketch_init(RAM.hedge.summary, sizeof RAM.hedge.summary,
                                                   TG_PRESET_MCU, &a));
#if defined(__ARM_FP)
    STACK_OF("tg_sketch_init(cubic)",
             tg_sketch_init(RAM.cubic.a, sizeof RAM.cubic.a, TG_PRESET_CUBIC, &a));
#endif
    tg_hedge_config c;
    ok &= tg_hedge_config_default(&c) == TG_OK;
    tg_hedger *h = 0;
    STACK_OF("tg_hedger_init(" HEDGER_PRESET_NAME ")",
             tg_hedger_init(RAM.hedge.hedger, sizeof RAM.hedge.hedger, HEDGER_PRESET, clock_tg(),
                            &c, &h));
    return ok;
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
    report(stack_per_call(), "stack: each set-up call measured returned TG_OK", &passed,
           &failed);

    print_u64(passed);
    print_str(" passed, ");
    print_u64(failed);
    print_str(" failed");
    print_end();
    return failed == 0 ? 0 : 1;
}

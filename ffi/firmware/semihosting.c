#include "semihosting.h"

/* The operations (ARM's semihosting specification) and the exit reasons QEMU maps to its
   exit status: ApplicationExit is 0, anything else 1 (as cortex-m-semihosting's
   EXIT_SUCCESS and EXIT_FAILURE). */
#define SYS_WRITE0 0x04u
#define SYS_EXIT 0x18u
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define ADP_STOPPED_RUN_TIME_ERROR_UNKNOWN 0x20023u

static uintptr_t sh_call(uintptr_t op, uintptr_t arg) {
    register uintptr_t r0 __asm__("r0") = op;
    register uintptr_t r1 __asm__("r1") = arg;
    /* The host reads the operation's argument block through r1: memory must be written
       before the trap. */
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void sh_write(const char *s) { (void)sh_call(SYS_WRITE0, (uintptr_t)s); }

void sh_exit(uint32_t failed) {
    (void)sh_call(SYS_EXIT, failed == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                        : ADP_STOPPED_RUN_TIME_ERROR_UNKNOWN);
    /* Under QEMU the call does not return; on a probe that ignores it, stop here. */
    for (;;) {
    }
}

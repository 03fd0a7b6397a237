#include "semihosting.h"

#include <stddef.h>

/* The operations (ARM's semihosting specification) and the exit reasons QEMU maps to its
   exit status: ApplicationExit is 0, anything else 1 (as cortex-m-semihosting's
   EXIT_SUCCESS and EXIT_FAILURE). */
#define SYS_OPEN 0x01u
#define SYS_WRITE 0x05u
#define SYS_EXIT 0x18u
/* SYS_OPEN's mode "w": with the name ":tt", the host's stdout. */
#define OPEN_MODE_W 4u
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

/* The host's stdout, as cortex-m-semihosting's hprintln writes it (QEMU sends SYS_WRITE0,
   the console, to its stderr instead): opened on first use. */
static uintptr_t stdout_handle = UINTPTR_MAX;

void sh_write(const char *s) {
    size_t len = 0;
    while (s[len] != '\0') {
        len++;
    }
    if (stdout_handle == UINTPTR_MAX) {
        static const char tt[] = ":tt";
        const uintptr_t open[3] = {(uintptr_t)tt, OPEN_MODE_W, sizeof tt - 1};
        stdout_handle = sh_call(SYS_OPEN, (uintptr_t)open);
    }
    const uintptr_t write[3] = {stdout_handle, (uintptr_t)s, len};
    (void)sh_call(SYS_WRITE, (uintptr_t)write);
}

void sh_exit(uint32_t failed) {
    (void)sh_call(SYS_EXIT, failed == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                        : ADP_STOPPED_RUN_TIME_ERROR_UNKNOWN);
    /* Under QEMU the call does not return; on a probe that ignores it, stop here. */
    for (;;) {
    }
}

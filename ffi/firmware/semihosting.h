/* Semihosting, the debugger's trap that QEMU implements (-semihosting-config enable=on):
   text to the host's stdout and the exit status. Our own two calls rather than newlib's
   rdimon, whose start-up code (heap, argv, its own crt0) this firmware does not need. */
#ifndef TG_FW_SEMIHOSTING_H
#define TG_FW_SEMIHOSTING_H

#include <stdint.h>

/* Writes a NUL-terminated string to the host's stdout. */
void sh_write(const char *s);

/* Ends the run: QEMU exits 0 if `failed` is 0, and 1 otherwise. */
__attribute__((noreturn)) void sh_exit(uint32_t failed);

#endif

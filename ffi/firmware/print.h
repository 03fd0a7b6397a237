/* Line output over semihosting: pieces appended to a line buffer, written when the line
   ends (or the buffer fills), so each trap carries a line rather than a digit. No printf:
   newlib's would bring its float formatting into the image whose size we report. */
#ifndef TG_FW_PRINT_H
#define TG_FW_PRINT_H

#include <stddef.h>
#include <stdint.h>

void print_str(const char *s);
void print_u64(uint64_t v);
/* 0x and 16 hex digits, as Rust's {:#018x}. */
void print_hex64(uint64_t v);
/* Two hex digits per byte, no separator. */
void print_hex_bytes(const uint8_t *bytes, size_t len);
/* Ends the line: writes it with a newline. */
void print_end(void);

#endif

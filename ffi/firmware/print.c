#include "print.h"

#include "semihosting.h"

static char line[128];
static size_t used;

static void flush(void) {
    line[used] = '\0';
    sh_write(line);
    used = 0;
}

static void put(char c) {
    if (used == sizeof line - 1) {
        flush();
    }
    line[used++] = c;
}

void print_str(const char *s) {
    while (*s != '\0') {
        put(*s++);
    }
}

void print_u64(uint64_t v) {
    char digits[20];
    size_t n = 0;
    do {
        digits[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0);
    while (n > 0) {
        put(digits[--n]);
    }
}

static void put_hex_digits(uint64_t v, unsigned digits) {
    static const char hex[] = "0123456789abcdef";
    while (digits > 0) {
        digits--;
        put(hex[(v >> (4u * digits)) & 0xfu]);
    }
}

void print_hex64(uint64_t v) {
    print_str("0x");
    put_hex_digits(v, 16);
}

void print_hex_bytes(const uint8_t *bytes, size_t len) {
    for (size_t i = 0; i < len; i++) {
        put_hex_digits(bytes[i], 2);
    }
}

void print_end(void) {
    put('\n');
    flush();
}

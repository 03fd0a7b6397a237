#include "sensor.h"

#include "workload.h"

#define NORMAL_US 1000u
#define JITTER_US 250u

sensor sensor_new(uint32_t seed) {
    sensor s = {.state = seed == 0 ? 1u : seed};
    return s;
}

sensor_read sensor_next(sensor *s) {
    uint32_t draw = xorshift32(&s->state);
    sensor_read read;
    /* The high bits pick stall and jitter (xorshift's low bits are its weakest). */
    read.stalls = (draw >> 16) % 100u < STALLS_PER_100;
    read.micros = read.stalls ? STALL_US : NORMAL_US + (draw >> 8) % JITTER_US;
    read.value = (uint16_t)(draw & 0x3ffu);
    return read;
}

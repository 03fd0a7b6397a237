#include "sensor.h"

#include "workload.h"

#define NORMAL_US 1000u
#define JITTER_US 250u

sensor sensor_new(uint32_t seed) {
    sensor s = {.state = seed == 0 ? 1u : seed};
    return s;
}

/* splitmix64's increment and output function (support/src/rng.rs). */
#define GOLDEN 0x9e3779b97f4a7c15ull

static uint64_t mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

sensor sensor_keyed(uint32_t seed, uint32_t key) {
    uint64_t h = mix((uint64_t)seed ^ GOLDEN);
    h = mix(h + key + GOLDEN);
    return sensor_new((uint32_t)(mix(h + GOLDEN) >> 32));
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

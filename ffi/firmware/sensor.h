/* The simulated sensor whose reads sometimes stall (support/src/sensor.rs, in C): 1 ms
   plus up to 0.25 ms of jitter normally, 20 ms on 7 % of reads, from a seeded xorshift32,
   so every run sees the same reads; two sensors with the same seed read alike. */
#ifndef TG_FW_SENSOR_H
#define TG_FW_SENSOR_H

#include <stdbool.h>
#include <stdint.h>

#define STALL_US 20000u
#define STALLS_PER_100 7u

typedef struct {
    uint32_t state;
} sensor;

/* One read, drawn before it runs, so the caller knows whether it will stall. */
typedef struct {
    bool stalls;
    uint32_t micros;
    uint16_t value;
} sensor_read;

/* A sensor whose reads follow `seed` (0 becomes 1: xorshift's one fixed point is 0). */
sensor sensor_new(uint32_t seed);

/* The sensor keyed by `seed` and `key` (support's Sensor::keyed: the high half of the
   first draw of splitmix64 keyed by the two), so request `key`'s backup reads the same
   whatever the hedges before it drew. */
sensor sensor_keyed(uint32_t seed, uint32_t key);

/* Draws the next read. */
sensor_read sensor_next(sensor *s);

#endif

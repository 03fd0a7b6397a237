#include "hedge.h"

#include <stdbool.h>

#include "clock.h"
#include "print.h"
#include "ram.h"
#include "sensor.h"
#include "tailguard.h"

/* Reads per phase. */
#define READS 400u
#define WARMUP 100u
/* A read slower than this is a stall nobody rescued (a normal read takes 1-1.25 ms, a
   rescued stall the hedge delay plus a normal read). */
#define SLOW_NS 10000000u

#define SEED_A 0x12345678u
#define SEED_B 0x9abcdef0u
#define SEED_WARM_A 0x0badcafeu
#define SEED_WARM_B 0x5eed1e55u

/* A phase's answers: how many, their p50 and p99, and how many were slower than SLOW_NS. */
typedef struct {
    uint64_t count;
    uint32_t p50_us;
    uint32_t p99_us;
    uint32_t slow;
} phase;

/* What the hedged phase did with the reads that stalled. */
typedef struct {
    uint32_t stalls;        /* primary reads that stalled */
    uint32_t rescued;       /* of those, answered within SLOW_NS (by the hedge) */
    uint32_t hedge_answers; /* answers from the backup */
} rescue;

typedef struct {
    phase unhedged;
    phase hedged;
    rescue rescue;
    tg_hedge_stats warm; /* the hedger's counters after the warm-up */
    tg_hedge_stats end;  /* and at the end */
} figures;

/* One race's end: the attempt that answered first (0 the primary, 1 the hedge) and the
   request's latency as the hedger measured it. */
typedef struct {
    bool ok;
    uint32_t attempt;
    uint64_t latency_ns;
} won;

static uint64_t saturating_add(uint64_t a, uint64_t b) { return b > UINT64_MAX - a ? UINT64_MAX : a + b; }

static uint64_t micros_to_ns(uint32_t micros) { return (uint64_t)micros * 1000u; }

/* Sends the primary read and polls until a read finishes, asking the hedger whenever the
   delay it last gave has passed (first just after the primary is sent, as race_embassy
   does); a hedge sends the backup read to `backup`. The sensor's reads are simulated: a
   read is done once the clock passes its start plus its duration. */
static won race(const tg_hedger *hedger, sensor_read primary, sensor *backup) {
    won result = {false, 0, 0};
    tg_ticket ticket;
    if (tg_hedger_start(hedger, &ticket) != TG_OK) {
        return result;
    }
    uint64_t start = clock_now_ns();
    uint64_t primary_done = saturating_add(start, micros_to_ns(primary.micros));
    uint64_t backup_done = UINT64_MAX; /* no backup sent */
    uint64_t ask_at = start;
    bool asking = true;
    for (;;) {
        uint64_t now = clock_now_ns();
        if (now >= primary_done) {
            result.attempt = 0;
            break;
        }
        if (now >= backup_done) {
            result.attempt = 1;
            break;
        }
        if (asking && now >= ask_at) {
            tg_decision decision;
            if (tg_hedger_should_hedge(hedger, &ticket, &decision) != TG_OK) {
                return result;
            }
            if (decision.kind == TG_DECISION_WAIT) {
                ask_at = saturating_add(now, decision.wait_ns);
            } else if (decision.kind == TG_DECISION_HEDGE) {
                /* One backup: the configuration's max_hedges is 1 (the default), so the
                   next question is answered Skip. */
                if (backup_done == UINT64_MAX) {
                    backup_done = saturating_add(clock_now_ns(), micros_to_ns(sensor_next(backup).micros));
                }
                ask_at = now;
            } else {
                asking = false;
            }
        }
    }
    result.ok = tg_hedger_on_success(hedger, &ticket, result.attempt, &result.latency_ns) == TG_OK;
    return result;
}

/* Records a latency; 1 if it was slow, else 0. */
static uint32_t record(tg_sketch *sketch, uint64_t latency_ns) {
    (void)tg_sketch_record_u64(sketch, latency_ns);
    return latency_ns > SLOW_NS ? 1u : 0u;
}

static uint32_t micros_at(const tg_sketch *sketch, double q) {
    double ns;
    return tg_sketch_quantile(sketch, q, &ns) == TG_OK ? (uint32_t)(ns / 1000.0) : 0u;
}

static phase summarize(const tg_sketch *sketch, uint32_t slow) {
    phase p = {0, micros_at(sketch, 0.5), micros_at(sketch, 0.99), slow};
    (void)tg_sketch_count(sketch, &p.count);
    return p;
}

static void print_phase(const char *label, const phase *p) {
    print_str(label);
    print_str(" Summary { count: ");
    print_u64(p->count);
    print_str(", p50_us: ");
    print_u64(p->p50_us);
    print_str(", p99_us: ");
    print_u64(p->p99_us);
    print_str(", slow: ");
    print_u64(p->slow);
    print_str(" }");
    print_end();
}

static void print_field(const char *name, uint64_t v) {
    print_str(name);
    print_str(": ");
    print_u64(v);
    print_str(", ");
}

static void print_stats(const char *label, const tg_hedge_stats *s) {
    print_str(label);
    print_str(" Stats { ");
    print_field("requests", s->requests);
    print_field("hedges", s->hedges);
    print_field("hedge_wins", s->hedge_wins);
    print_field("primary_wins", s->primary_wins);
    print_field("denied_budget", s->denied_budget);
    print_field("skipped_cold", s->skipped_cold);
    print_field("skipped_deadline", s->skipped_deadline);
    print_field("skipped_backpressure", s->skipped_backpressure);
    print_field("errors", s->errors);
    print_field("rate_limited", s->rate_limited);
    print_field("pushbacks", s->pushbacks);
    print_field("pushbacks_clamped", s->pushbacks_clamped);
    print_field("deadline_exceeded", s->deadline_exceeded);
    print_str("delay_ns: ");
    if (s->has_delay) {
        print_u64(s->delay_ns);
    } else {
        print_str("none");
    }
    print_str(" }");
    print_end();
}

/* Hedge at the p90 (the default) after 20 samples (the default), no sooner than 200 us;
   a window of 1-2 s, so it rotates during the run; 10 % of reads in hedges (the default
   ratio; the stalls are 7 %), at most 10 tokens saved up: the embassy firmware's
   CONFIG. */
static tg_hedge_config config(void) {
    tg_hedge_config c;
    tg_hedge_config_default(&c);
    c.min_delay_ns = 200000u;
    c.interval_ns = 1000000000u;
    c.budget_cap = 10u;
    return c;
}

/* The three phases; false if a call failed. */
static bool run(const tg_hedger *hedger, tg_sketch *sketch, figures *f) {
    bool ok = true;

    /* 1. Unhedged. */
    sensor a = sensor_new(SEED_A);
    uint32_t slow = 0;
    for (uint32_t i = 0; i < READS; i++) {
        uint64_t start = clock_now_ns();
        uint64_t done = start + micros_to_ns(sensor_next(&a).micros);
        uint64_t now;
        while ((now = clock_now_ns()) < done) {
        }
        slow += record(sketch, now - start);
    }
    f->unhedged = summarize(sketch, slow);

    /* 2. Warm-up. */
    sensor warm_a = sensor_new(SEED_WARM_A);
    for (uint32_t i = 0; i < WARMUP; i++) {
        sensor warm_b = sensor_keyed(SEED_WARM_B, i); /* one per read, as run.rs's */
        ok &= race(hedger, sensor_next(&warm_a), &warm_b).ok;
    }
    ok &= tg_hedger_stats(hedger, &f->warm) == TG_OK;

    /* 3. Hedged, the same reads of A as in phase 1. */
    a = sensor_new(SEED_A);
    ok &= tg_sketch_clear(sketch) == TG_OK;
    rescue r = {0, 0, 0};
    slow = 0;
    for (uint32_t i = 0; i < READS; i++) {
        sensor_read read = sensor_next(&a);
        sensor b = sensor_keyed(SEED_B, i);
        won w = race(hedger, read, &b);
        ok &= w.ok;
        uint32_t was_slow = record(sketch, w.latency_ns);
        slow += was_slow;
        r.stalls += read.stalls ? 1u : 0u;
        r.rescued += read.stalls && was_slow == 0 ? 1u : 0u;
        r.hedge_answers += w.attempt != 0 ? 1u : 0u;
    }
    f->hedged = summarize(sketch, slow);
    f->rescue = r;
    ok &= tg_hedger_stats(hedger, &f->end) == TG_OK;
    return ok;
}

static void report(bool ok, const char *name, uint32_t *passed, uint32_t *failed) {
    print_str(ok ? "ok   " : "FAIL ");
    print_str(name);
    print_end();
    *(ok ? passed : failed) += 1u;
}

uint32_t hedge_run(uint32_t *passed) {
    uint32_t failed = 0;
    tg_hedge_config c = config();
    tg_clock clock = clock_tg();
    tg_hedger *hedger = 0;
    tg_sketch *sketch = 0;
    tg_status status = tg_hedger_init(RAM.hedge.hedger, sizeof RAM.hedge.hedger, HEDGER_PRESET,
                                      clock, &c, &hedger);
    if (status == TG_OK) {
        status = tg_sketch_init(RAM.hedge.summary, sizeof RAM.hedge.summary, TG_PRESET_MCU,
                                &sketch);
    }
    if (status != TG_OK) {
        print_str("FAIL hedge: init: ");
        print_str(tg_status_str(status));
        print_end();
        return 1;
    }
    print_str("hedge: " HEDGER_PRESET_NAME " hedger ");
    print_u64(HEDGER_SIZE);
    print_str(" B of storage, summary sketch (mcu) ");
    print_u64(TG_SKETCH_MCU_SIZE);
    print_str(" B");
    print_end();

    figures f;
    bool ran = run(hedger, sketch, &f);
    report(ran, "hedge: every call returned TG_OK", passed, &failed);
    print_phase("unhedged", &f.unhedged);
    print_phase("hedged", &f.hedged);
    print_str("rescue Rescue { stalls: ");
    print_u64(f.rescue.stalls);
    print_str(", rescued: ");
    print_u64(f.rescue.rescued);
    print_str(", hedge_answers: ");
    print_u64(f.rescue.hedge_answers);
    print_str(" }");
    print_end();
    print_stats("after warm-up", &f.warm);
    print_stats("at the end", &f.end);

    /* The embassy firmware's checks (firmware/embassy/src/checks.rs), by the same names. */
    const tg_hedge_stats *end = &f.end, *warm = &f.warm;
    uint32_t races = WARMUP + READS;
    /* Hedges granted <= ratio * requests + cap (RatioBudget's bound, which starts full),
       in millionths of a token as the budget counts. */
    uint64_t ratio_ppm = (uint64_t)(c.budget_ratio * 1e6 + 0.5);
    uint64_t bound_ppm = ratio_ppm * end->requests + 1000000u * (uint64_t)c.budget_cap;
    report(f.unhedged.slow * 100u >= 3u * READS && f.unhedged.slow * 100u <= 12u * READS &&
               f.unhedged.p99_us >= 10u * f.unhedged.p50_us,
           "unhedged: the stalls are there (slow reads 3-12 %, p99 >= 10x p50)", passed, &failed);
    report(f.rescue.stalls == f.unhedged.slow && STALLS_PER_100 > 0,
           "hedged: the primary stalled as often as unhedged", passed, &failed);
    report(f.rescue.rescued * 4u >= f.rescue.stalls * 3u && f.rescue.stalls > 0,
           "hedged: hedges rescue at least 3 stalls in 4", passed, &failed);
    report(f.hedged.slow * 4u <= f.unhedged.slow && f.hedged.p99_us * 3u <= f.unhedged.p99_us,
           "hedged: slow reads at most 1/4 of unhedged, and p99 at most 1/3", passed, &failed);
    report(warm->skipped_cold >= c.min_samples && warm->hedges > 0,
           "warm-up: hedging starts after min_samples", passed, &failed);
    report((uint64_t)end->hedges * 1000000u <= bound_ppm,
           "budget: hedges <= ratio * requests + cap", passed, &failed);
    report(end->requests == races && end->primary_wins + end->hedge_wins == races &&
               end->errors == 0 && end->deadline_exceeded == 0,
           "stats: requests = races = primary wins + hedge wins", passed, &failed);
    report(end->hedge_wins <= end->hedges &&
               end->hedge_wins - warm->hedge_wins == f.rescue.hedge_answers,
           "stats: hedge wins <= hedges, and the hedged phase's hedge answers are its hedge wins",
           passed, &failed);
    return failed;
}

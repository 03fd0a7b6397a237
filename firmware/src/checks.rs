//! The checks the firmware runs, each against values computed on the host (`expected.rs`).
//! To add one (a window, a budget...): write a `fn() -> bool` and list it in [`CHECKS`].

use crate::expected;
use tailguard::sketch::presets;
#[cfg(target_abi = "eabihf")]
use tailguard_support::firmware::record_latencies_f64;
use tailguard_support::firmware::{record_edges, record_latencies, summarize, Summary, LATENCIES};

/// A named check; `run` returns whether the firmware got what the host got.
pub struct Check {
    pub name: &'static str,
    pub run: fn() -> bool,
}

/// Every check, in order. The Cortex-M0 (no FPU) runs the integer-mapping ones.
pub const CHECKS: &[Check] = &[
    Check {
        name: "sketch/int-coarse: record_u64",
        run: int_coarse_record,
    },
    Check {
        name: "sketch/int-coarse: merge of two halves",
        run: int_coarse_merge,
    },
    Check {
        name: "sketch/int: record_u64",
        run: int_record,
    },
    Check {
        name: "sketch/int-coarse: edges of the range",
        run: int_coarse_edges,
    },
    #[cfg(target_abi = "eabihf")]
    Check {
        name: "sketch/cubic: record(f64)",
        run: cubic_record,
    },
    #[cfg(target_abi = "eabihf")]
    Check {
        name: "sketch/cubic: merge of two halves",
        run: cubic_merge,
    },
    #[cfg(target_abi = "eabihf")]
    Check {
        name: "sketch/cubic: edges of the range",
        run: cubic_edges,
    },
];

/// Compares and reports the first difference.
fn same(got: Summary, want: Summary) -> bool {
    if got != want {
        crate::report_mismatch(&got, &want);
    }
    got == want
}

fn int_coarse_record() -> bool {
    let mut s = presets::int_latency_coarse();
    record_latencies(&mut s, 0, LATENCIES);
    same(summarize(&s), expected::INT_COARSE)
}

fn int_coarse_merge() -> bool {
    let half = LATENCIES / 2;
    let mut a = presets::int_latency_coarse();
    record_latencies(&mut a, 0, half);
    let mut b = presets::int_latency_coarse();
    record_latencies(&mut b, half, LATENCIES);
    a.merge(&b).is_ok() && same(summarize(&a), expected::INT_COARSE)
}

fn int_record() -> bool {
    let mut s = presets::int_latency();
    record_latencies(&mut s, 0, LATENCIES);
    same(summarize(&s), expected::INT)
}

fn int_coarse_edges() -> bool {
    let mut s = presets::int_latency_coarse();
    record_edges(&mut s);
    same(summarize(&s), expected::INT_COARSE_EDGES)
}

#[cfg(target_abi = "eabihf")]
fn cubic_record() -> bool {
    let mut s = presets::cubic_latency();
    record_latencies_f64(&mut s, 0, LATENCIES) && same(summarize(&s), expected::CUBIC)
}

#[cfg(target_abi = "eabihf")]
fn cubic_merge() -> bool {
    let half = LATENCIES / 2;
    let mut a = presets::cubic_latency();
    let mut b = presets::cubic_latency();
    record_latencies_f64(&mut a, 0, half)
        && record_latencies_f64(&mut b, half, LATENCIES)
        && a.merge(&b).is_ok()
        && same(summarize(&a), expected::CUBIC)
}

#[cfg(target_abi = "eabihf")]
fn cubic_edges() -> bool {
    let mut s = presets::cubic_latency();
    record_edges(&mut s);
    same(summarize(&s), expected::CUBIC_EDGES)
}

// The presets' memory on the microcontroller: the same as on x86-64 (BENCHMARKS.md).
const _: () = {
    use core::mem::size_of;
    use tailguard::sketch::presets::{CubicLatency, IntLatency, IntLatencyCoarse, LogLatency};
    assert!(size_of::<LogLatency>() == 3856);
    assert!(size_of::<CubicLatency>() == 3904);
    assert!(size_of::<IntLatency>() == 6944);
    assert!(size_of::<IntLatencyCoarse>() == 3552);
};

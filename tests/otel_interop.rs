//! Interop with the real thing: the OpenTelemetry Python SDK's exponential histograms
//! (`opentelemetry-sdk`) and OTLP's own protobuf classes (`opentelemetry-proto`), at
//! scales 0 to 8, on several data sets.
//!
//! Needs a Python with `opentelemetry-sdk` and `opentelemetry-proto` installed, named by
//! `TAILGUARD_PYTHON` (`.ci/run` makes a venv). Without it the test is skipped with a loud
//! message, unless `TAILGUARD_REQUIRE_INTEROP=1`, which turns the skip into a failure (CI
//! sets it).
//!
//! ```sh
//! python3 -m venv .venv
//! .venv/bin/pip install opentelemetry-sdk==1.45.2 opentelemetry-proto==1.45.2
//! TAILGUARD_PYTHON=.venv/bin/python cargo test --test otel_interop -- --nocapture
//! ```
//!
//! What is checked, for every data set and scale:
//!
//! 1. tailguard -> Python: the bytes of `otlp::encode` parse with opentelemetry-proto's
//!    `ExponentialHistogramDataPoint`, and equal, field by field, the point the SDK's
//!    exponential histogram aggregation builds from the same values at the same scale
//!    (scale, offset, every bucket count, zero count, count, min, max, sum to 1e-12);
//!    the script (tests/interop/otel_interop.py) does this comparison.
//! 2. Python -> tailguard: the SDK's point, serialized by opentelemetry-proto, decodes
//!    with `otlp::decode_into` into a sketch equal bin for bin to tailguard's own, with
//!    the exact count, min, max and sum; and into a sketch two scales coarser, equal bin
//!    for bin to tailguard's own sketch at that scale (downscaling is exact).

use std::path::{Path, PathBuf};

use tailguard::otlp::{self, Timestamps};
use tailguard::sketch::{DDSketch, OtelMapping};
use tailguard_support::dist::Dist;
use tailguard_support::{python, Rng};

/// 2^15 bins from 2^-40: at scale 8 up to 2^88, which holds every data set below.
const BINS: usize = 1 << 15;
const MIN_VALUE: f64 = 1.0 / (1u64 << 40) as f64;
const N_VALUES: usize = 4000;

type Sketch = DDSketch<OtelMapping, BINS>;

/// A value as both sides record it: integers through `record_u64` and as Python ints.
#[derive(Debug, Clone, Copy)]
enum Value {
    Int(u64),
    Float(f64),
}

/// The data sets: integers, whole milliseconds in ns, powers of two (every one a bucket
/// edge at every scale >= 0, 2^-25 to 2^34) with zeros, values below 1, and random floats.
fn data_sets() -> Vec<(&'static str, Vec<Value>)> {
    let mut rng = Rng::new(0x07e1);
    let integers = (0..N_VALUES)
        .map(|_| Value::Int(1 + rng.next_u64() % 1000))
        .collect();
    let millis = (0..N_VALUES)
        .map(|_| Value::Int((1 + rng.next_u64() % 5000) * 1_000_000))
        .collect();
    let powers = (0..N_VALUES)
        .map(|i| match i % 7 {
            0 => Value::Float(0.0),
            _ => Value::Float(2f64.powi((rng.next_u64() % 60) as i32 - 25)),
        })
        .collect();
    let below_one = (0..N_VALUES)
        .map(|i| match i % 3 {
            0 => Value::Float(1.0 / (1 + i) as f64),
            _ => Value::Float(rng.unit().max(1e-9)),
        })
        .collect();
    let floats = Dist::LogNormalWide
        .samples(21, N_VALUES / 2)
        .into_iter()
        .chain(Dist::Pareto.samples(22, N_VALUES / 2))
        .map(Value::Float)
        .collect();
    vec![
        ("integers", integers),
        ("millis", millis),
        ("powers_of_two", powers),
        ("below_one", below_one),
        ("floats", floats),
    ]
}

fn sketch_of(scale: i32, values: &[Value]) -> Box<Sketch> {
    let mapping = OtelMapping::with_scale(scale).unwrap();
    let mut s = Box::new(Sketch::new(mapping, MIN_VALUE).unwrap());
    for &v in values {
        match v {
            Value::Int(n) => s.record_u64(n),
            Value::Float(x) => s.record(x).unwrap(),
        }
    }
    assert_eq!(s.clamped(), 0);
    assert!(s.bins().next().is_some());
    s
}

fn encode(s: &Sketch) -> Vec<u8> {
    let mut buf = vec![0u8; otlp::encoded_len(s, Timestamps::default())];
    let len = otlp::encode(s, Timestamps::default(), &mut buf).unwrap();
    assert_eq!(len, buf.len());
    buf
}

#[test]
fn otlp_points_equal_the_opentelemetry_sdks_both_ways() {
    let Some(python) = python::interpreter(
        "OpenTelemetry interop test",
        "`opentelemetry-sdk` and `opentelemetry-proto`",
    ) else {
        return;
    };
    let dir = python::fresh_dir(env!("CARGO_TARGET_TMPDIR"), "otel-interop");

    let sets = data_sets();
    let mut cases = Vec::new();
    let mut cases_txt = String::new();
    for (set, values) in &sets {
        let text: String = values
            .iter()
            .map(|v| match v {
                Value::Int(n) => format!("{n}\n"),
                Value::Float(x) => format!("{x:?}\n"),
            })
            .collect();
        std::fs::write(dir.join(format!("{set}.values")), text).unwrap();
        for scale in 0..=8 {
            let name = format!("{set}-{scale}");
            let sketch = sketch_of(scale, values);
            std::fs::write(dir.join(format!("{name}.tg.pb")), encode(&sketch)).unwrap();
            cases_txt.push_str(&format!("{name} {scale} {set}\n"));
            cases.push((name, scale, values, sketch));
        }
    }
    std::fs::write(dir.join("cases.txt"), cases_txt).unwrap();
    python::run(&python, &script("otel_interop.py"), &dir, &[]);

    for (name, scale, values, ours) in &cases {
        let bytes = std::fs::read(dir.join(format!("{name}.sdk.pb"))).unwrap();
        assert_eq!(otlp::read_scale(&bytes), Ok(*scale), "{name}");
        // At the same scale: tailguard's own sketch, bin for bin, with the exact stats.
        let mut back = Box::new(Sketch::new(*ours.mapping(), MIN_VALUE).unwrap());
        let report =
            otlp::decode_into(&bytes, &mut *back).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(report.added, values.len() as u64, "{name}");
        assert_eq!(
            (
                report.below_range,
                report.above_range,
                report.saturated,
                report.wide_zero
            ),
            (0, 0, 0, 0),
            "{name}"
        );
        assert!(report.exact_stats, "{name}");
        assert!(back.bins().eq(ours.bins()), "{name}: bins");
        assert_eq!(back.zero_count(), ours.zero_count(), "{name}");
        assert_eq!((back.min(), back.max()), (ours.min(), ours.max()), "{name}");
        let (a, b) = (back.sum(), ours.sum());
        assert!((a - b).abs() <= 1e-12 * b, "{name}: sum {a} vs {b}");
        // Two scales coarser: downscaled exactly, as if recorded at that scale.
        let coarse = sketch_of(scale - 2, values);
        let mut down = Box::new(Sketch::new(*coarse.mapping(), MIN_VALUE).unwrap());
        let report = otlp::decode_into(&bytes, &mut *down).unwrap();
        assert_eq!((report.added, report.scale), (values.len() as u64, *scale));
        assert!(
            down.bins().eq(coarse.bins()),
            "{name} at scale {}",
            scale - 2
        );
        assert_eq!(down.zero_count(), coarse.zero_count());
    }
    println!("OTLP INTEROP OK: {} cases both ways", cases.len());
}

/// A script of tests/interop/.
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

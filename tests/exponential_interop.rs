//! The auto-scaling sketch against the real thing: for the same values, an
//! `ExponentialSketch<u32, B>` has the scale, offset, bucket counts, zero count, count, min
//! and max (and the sum to 1e-12) of the OpenTelemetry Python SDK's exponential histogram
//! aggregated with `max_size = B` and `max_scale = 8` (tailguard's finest scale; the SDK's
//! default is 20), at several `B`, on data spanning 1 to 12 decades, with zeros and with
//! values on power-of-two edges.
//!
//! Needs a Python with `opentelemetry-sdk`, named by `TAILGUARD_PYTHON` (`.ci/run` makes
//! a venv). Without it the test is skipped with a loud message, unless
//! `TAILGUARD_REQUIRE_INTEROP=1`, which turns the skip into a failure (CI sets it).
//!
//! ```sh
//! python3 -m venv .venv
//! .venv/bin/pip install opentelemetry-sdk==1.45.2
//! TAILGUARD_PYTHON=.venv/bin/python cargo test --test exponential_interop -- --nocapture
//! ```
//!
//! The Python side (tests/interop/exponential_interop.py) writes the SDK's points; this
//! side compares, prints the table, and fails on any difference. It also decodes each
//! SDK point, as opentelemetry-proto serializes it, with `otlp::decode_into` into an
//! empty `ExponentialSketch<u32, B>`: bucket for bucket the sketch that recorded the
//! values, with the point's exact min, max and sum; and the sketch's own `otlp::encode`
//! decodes back into an equal one.

use std::path::{Path, PathBuf};

use tailguard::otlp::{self, Timestamps};
use tailguard::sketch::ExponentialSketch;
use tailguard_support::{python, Rng};

const N_VALUES: usize = 3000;

/// A value as both sides record it: integers through `record_u64` and as Python ints.
#[derive(Debug, Clone, Copy)]
enum Value {
    Int(u64),
    Float(f64),
}

/// `10^(lo + u * decades)`, `u` uniform: log-uniform over `decades` decades from `10^lo`.
fn log_uniform(rng: &mut Rng, lo: f64, decades: f64) -> f64 {
    10f64.powf(lo + rng.unit() * decades)
}

/// The data sets: integers (nanoseconds, say) spanning 1, 3, 6, 9 and 12 decades; floats
/// spanning 2 and 12 decades, below and above 1; powers of two (edges at every scale),
/// with zeros, as floats and as integers; and one value repeated.
fn data_sets() -> Vec<(String, Vec<Value>)> {
    let mut rng = Rng::new(0x0e28);
    let mut sets = Vec::new();
    for decades in [1u32, 3, 6, 9, 12] {
        let values = (0..N_VALUES)
            .map(|_| Value::Int(log_uniform(&mut rng, 3.0, f64::from(decades)) as u64))
            .collect();
        sets.push((format!("ints_{decades}d"), values));
    }
    let floats = (0..N_VALUES)
        .map(|_| Value::Float(log_uniform(&mut rng, -3.0, 2.0)))
        .collect();
    sets.push(("floats_2d".into(), floats));
    let floats = (0..N_VALUES)
        .map(|i| match i % 11 {
            0 => Value::Float(0.0),
            _ => Value::Float(log_uniform(&mut rng, -6.0, 12.0)),
        })
        .collect();
    sets.push(("floats_12d_zeros".into(), floats));
    let powers = (0..N_VALUES)
        .map(|i| match i % 7 {
            0 => Value::Float(0.0),
            _ => Value::Float(2f64.powi((rng.next_u64() % 60) as i32 - 25)),
        })
        .collect();
    sets.push(("powers_of_two_zeros".into(), powers));
    let powers = (0..N_VALUES)
        .map(|i| match i % 5 {
            0 => Value::Int(0),
            1 => Value::Int((1u64 << (rng.next_u64() % 40)) + 1),
            _ => Value::Int(1u64 << (rng.next_u64() % 40)),
        })
        .collect();
    sets.push(("int_powers_of_two".into(), powers));
    sets.push(("one_value".into(), vec![Value::Int(1_500_000); 100]));
    sets
}

/// The SDK's point, as tests/interop/exponential_interop.py writes it.
#[derive(Debug)]
struct Point {
    scale: i32,
    offset: i32,
    zero_count: u64,
    count: u64,
    counts: Vec<u64>,
    min: f64,
    max: f64,
    sum: f64,
}

fn parse(text: &str) -> (Point, Vec<u64>) {
    let lines: Vec<&str> = text.lines().collect();
    let nums = |line: &str| -> Vec<u64> {
        line.split_whitespace()
            .map(|n| n.parse().unwrap())
            .collect()
    };
    let head: Vec<i64> = lines[0]
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let floats: Vec<f64> = lines[2]
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let point = Point {
        scale: head[0] as i32,
        offset: head[1] as i32,
        zero_count: head[2] as u64,
        count: head[3] as u64,
        counts: nums(lines[1]),
        min: floats[0],
        max: floats[1],
        sum: floats[2],
    };
    (point, nums(lines.get(3).copied().unwrap_or("")))
}

fn point_of<const B: usize>(s: &ExponentialSketch<u32, B>) -> Point {
    Point {
        scale: s.scale(),
        offset: s.offset(),
        zero_count: s.zero_count(),
        count: s.count(),
        counts: s.bucket_counts().collect(),
        min: s.min().unwrap(),
        max: s.max().unwrap(),
        sum: s.sum(),
    }
}

fn recorded<const B: usize>(values: &[Value]) -> Box<ExponentialSketch<u32, B>> {
    let mut s = Box::new(ExponentialSketch::<u32, B>::new());
    for &v in values {
        match v {
            Value::Int(n) => s.record_u64(n),
            Value::Float(x) => s.record(x).unwrap(),
        }
    }
    assert_eq!((s.saturated(), s.clamped()), (0, 0));
    s
}

fn ours<const B: usize>(values: &[Value]) -> Point {
    point_of(&recorded::<B>(values))
}

/// The SDK's serialized point decoded into an empty sketch of `B` buckets, and the
/// recorded sketch's own point decoded back: both as points, for comparison.
fn decoded<const B: usize>(values: &[Value], sdk_bytes: &[u8]) -> (Point, Point) {
    let mut from_sdk = Box::new(ExponentialSketch::<u32, B>::new());
    let report = otlp::decode_into(sdk_bytes, &mut *from_sdk).unwrap();
    assert!(report.exact_stats && report.saturated == 0);
    let mine = recorded::<B>(values);
    let mut buf = vec![0u8; otlp::encoded_len(&*mine, Timestamps::default())];
    otlp::encode(&*mine, Timestamps::default(), &mut buf).unwrap();
    let mut back = Box::new(ExponentialSketch::<u32, B>::new());
    otlp::decode_into(&buf, &mut *back).unwrap();
    (point_of(&from_sdk), point_of(&back))
}

fn decoded_at(b: usize, values: &[Value], sdk_bytes: &[u8]) -> (Point, Point) {
    match b {
        2 => decoded::<2>(values, sdk_bytes),
        16 => decoded::<16>(values, sdk_bytes),
        64 => decoded::<64>(values, sdk_bytes),
        160 => decoded::<160>(values, sdk_bytes),
        _ => unreachable!(),
    }
}

const SIZES: [usize; 4] = [2, 16, 64, 160];

fn ours_at(b: usize, values: &[Value]) -> Point {
    match b {
        2 => ours::<2>(values),
        16 => ours::<16>(values),
        64 => ours::<64>(values),
        160 => ours::<160>(values),
        _ => unreachable!(),
    }
}

#[test]
fn auto_scaling_sketches_equal_the_opentelemetry_sdks_aggregation() {
    let Some(python) =
        python::interpreter("auto-scaling sketch's interop test", "`opentelemetry-sdk`")
    else {
        return;
    };
    let dir = python::fresh_dir(env!("CARGO_TARGET_TMPDIR"), "exponential-interop");

    let sets = data_sets();
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
        for b in SIZES {
            cases_txt.push_str(&format!("{set}-{b} {b} {set}\n"));
        }
    }
    std::fs::write(dir.join("cases.txt"), cases_txt).unwrap();
    python::run(&python, &script("exponential_interop.py"), &dir, &[]);

    let mut differences = Vec::new();
    println!("| B | data set | scale | offset | buckets | equal | SDK point decodes equal |");
    println!("|---|---|---|---|---|---|---|");
    for (set, values) in &sets {
        for b in SIZES {
            let name = format!("{set}-{b}");
            let text = std::fs::read_to_string(dir.join(format!("{name}.sdk.txt"))).unwrap();
            let (sdk, negative) = parse(&text);
            let mine = ours_at(b, values);
            // The sum to 1e-12: Python adds ints and floats in one running sum, tailguard
            // integers exactly apart from the floats.
            let sums_agree = (mine.sum - sdk.sum).abs() <= 1e-12 * sdk.sum.abs();
            let bytes = std::fs::read(dir.join(format!("{name}.sdk.pb"))).unwrap();
            let (from_sdk, back) = decoded_at(b, values, &bytes);
            let key = |p: &Point| {
                let counts = p.counts.clone();
                (
                    p.scale,
                    p.offset,
                    p.zero_count,
                    p.count,
                    counts,
                    p.min,
                    p.max,
                )
            };
            let equal = negative.is_empty() && sums_agree && key(&mine) == key(&sdk);
            // The decoded point: the recorded sketch's buckets, the SDK's exact sum (a
            // sketch that held only zeros stays at scale 8, as the recording one does).
            let decodes = key(&from_sdk) == key(&mine)
                && from_sdk.sum.to_bits() == sdk.sum.to_bits()
                && key(&back) == key(&mine)
                && back.sum.to_bits() == mine.sum.to_bits();
            println!(
                "| {b} | {set} | {} | {} | {} | {} | {} |",
                mine.scale,
                mine.offset,
                mine.counts.len(),
                if equal { "yes" } else { "NO" },
                if decodes { "yes" } else { "NO" }
            );
            if !equal {
                differences.push(format!("{name}: tailguard {mine:?}\n  SDK {sdk:?}"));
            }
            if !decodes {
                differences.push(format!(
                    "{name}: decoded from the SDK {from_sdk:?}\n  recorded {mine:?}\n  own point decoded {back:?}"
                ));
            }
            // tailguard's point never ends in an empty bucket.
            assert!(mine.counts.first() != Some(&0) && mine.counts.last() != Some(&0));
        }
    }
    assert!(
        differences.is_empty(),
        "the SDK disagrees:\n{}",
        differences.join("\n")
    );
}

/// A script of tests/interop/.
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

/// Where the Python SDK and this sketch differ, as the docs say, with the SDK's answers
/// (opentelemetry-sdk 1.45.2, `max_size = 160`, `max_scale = 8`) as constants, so that
/// this runs without Python:
///
/// * the integer 2^49 - 2 (or its float, the same number) is `2^-48` (relative) below
///   the edge 2^49, farther than `2^-50` but within `(|ln v| + 1) * 2^-50`: the SDK's
///   `floor(ln(v) * 256 / ln 2)` rounds it into bucket 12,544, above the edge; its exact
///   bucket, this sketch's, is 12,543;
/// * zeros alone: the SDK reports scale 0, this sketch stays at scale 8 (no bucket either
///   way).
#[test]
fn where_the_python_sdk_differs_it_is_as_documented() {
    const SDK_OFFSET_OF_2_49_MINUS_2: i32 = 12_544;
    const SDK_SCALE_OF_ZEROS_ALONE: i32 = 0;

    let v = (1u64 << 49) - 2;
    let mut by_int = ExponentialSketch::<u32, 160>::new();
    by_int.record_u64(v);
    let mut by_float = ExponentialSketch::<u32, 160>::new();
    by_float.record(v as f64).unwrap();
    for s in [&by_int, &by_float] {
        assert_eq!((s.scale(), s.offset()), (8, 49 * 256 - 1));
        assert_eq!(s.offset(), SDK_OFFSET_OF_2_49_MINUS_2 - 1);
        assert_eq!(s.bucket_counts().collect::<Vec<_>>(), [1]);
    }
    // Its distance to the edge, against the documented bounds.
    let distance = 2.0 / (1u64 << 49) as f64;
    assert_eq!(distance, 2f64.powi(-48));
    assert!(distance > 2f64.powi(-50));
    assert!(distance <= ((v as f64).ln() + 1.0) * 2f64.powi(-50));

    let mut zeros = ExponentialSketch::<u32, 160>::new();
    for _ in 0..5 {
        zeros.record(0.0).unwrap();
    }
    assert_ne!(zeros.scale(), SDK_SCALE_OF_ZEROS_ALONE);
    assert_eq!((zeros.scale(), zeros.zero_count()), (8, 5));
    assert_eq!(zeros.bucket_counts().count(), 0);
}

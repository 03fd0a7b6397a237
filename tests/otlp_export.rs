//! The whole OTLP export body (`otlp::encode_export_request`) against the real thing:
//! opentelemetry-proto's `ExportMetricsServiceRequest` parser, and what the OpenTelemetry
//! Python SDK's OTLP exporter (`opentelemetry-exporter-otlp-proto-common`'s
//! `encode_metrics`) writes for the same data.
//!
//! Needs a Python with `opentelemetry-sdk`, `opentelemetry-proto` and
//! `opentelemetry-exporter-otlp-proto-common` installed, named by `TAILGUARD_PYTHON`
//! (`.ci/run` makes a venv). Without it the test is skipped with a loud message, unless
//! `TAILGUARD_REQUIRE_INTEROP=1`, which turns the skip into a failure (CI sets it).
//!
//! ```sh
//! python3 -m venv .venv
//! .venv/bin/pip install opentelemetry-sdk==1.45.2 opentelemetry-proto==1.45.2 \
//!     opentelemetry-exporter-otlp-proto-common==1.45.2
//! TAILGUARD_PYTHON=.venv/bin/python cargo test --test otlp_export -- --nocapture
//! ```
//!
//! For every case, this test writes tailguard's body (`NAME.tg.pb`) and the case's data
//! (`NAME.json`: the resource, the scope, each metric's name, unit, description and
//! points, each point's attributes and recorded values, the scale, the temporality and the
//! times). The script (tests/interop/otlp_export.py) records the same values in the SDK
//! (a `MeterProvider` with that resource, a meter of that scope, one histogram per
//! metric with an exponential aggregation at that scale, the temporality asked of the
//! reader), encodes them with the SDK's OTLP encoder, and checks that tailguard's body
//! parses and equals the SDK's field for field, after normalising only what legitimately
//! differs (its docstring lists it: the times, the zero threshold, the SDK's empty
//! buckets at the ends, and attribute order), and byte for byte after the same
//! normalisation.

use std::path::{Path, PathBuf};

use tailguard::otlp::{
    encode_export_request, export_request_len, DataPoint, ExportRequest, KeyValue, Metric, Scope,
    Temporality, Timestamps, Value,
};
use tailguard::sketch::{presets, DDSketch, OtelMapping};
use tailguard_support::dist::Dist;
use tailguard_support::{python, Rng};

/// A recorded value: integers through `record_u64` (Python ints), floats through `record`.
#[derive(Debug, Clone, Copy)]
enum V {
    Int(u64),
    Float(f64),
}

type Fine = DDSketch<OtelMapping, 4096>;
/// Scale 8 from 1e-6: 2^32 times that, past every value of case 2.
type Wide = DDSketch<OtelMapping, 8192>;

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_attrs(attrs: &[KeyValue<'_>]) -> String {
    let items: Vec<String> = attrs
        .iter()
        .map(|kv| {
            let (kind, value) = match kv.value {
                Value::Str(s) => ("str", json_str(s)),
                Value::Bool(b) => ("bool", b.to_string()),
                Value::Int(i) => ("int", i.to_string()),
                Value::Double(d) => ("double", format!("{d:?}")),
                Value::Bytes(b) => (
                    "bytes",
                    json_str(&b.iter().map(|x| format!("{x:02x}")).collect::<String>()),
                ),
                _ => unreachable!(),
            };
            format!("[{}, \"{kind}\", {value}]", json_str(kv.key))
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn json_values(values: &[V]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| match v {
            V::Int(n) => n.to_string(),
            V::Float(x) => format!("{x:?}"),
        })
        .collect();
    format!("[{}]", items.join(", "))
}

fn record<const N: usize>(s: &mut DDSketch<OtelMapping, N>, values: &[V]) {
    for &v in values {
        match v {
            V::Int(n) => s.record_u64(n),
            V::Float(x) => s.record(x).unwrap(),
        }
    }
    assert_eq!(s.clamped(), 0);
}

/// One metric of a case, as the JSON the script reads: `points` pairs each point's
/// attributes with its values; `thresholds` are the points' zero thresholds.
struct MetricSpec<'a> {
    name: &'a str,
    description: &'a str,
    unit: &'a str,
    points: Vec<(&'a [KeyValue<'a>], &'a [V], f64)>,
}

#[allow(clippy::too_many_arguments)]
fn write_case(
    dir: &Path,
    name: &str,
    scale: i32,
    temporality: Temporality,
    times: Timestamps,
    resource: &[KeyValue<'_>],
    scope: (&str, &str, &[KeyValue<'_>]),
    metrics: &[MetricSpec<'_>],
    body: &[u8],
) {
    let metrics_json: Vec<String> = metrics
        .iter()
        .map(|m| {
            let points: Vec<String> = m
                .points
                .iter()
                .map(|(attrs, values, threshold)| {
                    format!(
                        "{{\"attributes\": {}, \"values\": {}, \"zero_threshold\": {threshold:?}}}",
                        json_attrs(attrs),
                        json_values(values)
                    )
                })
                .collect();
            format!(
                "{{\"name\": {}, \"description\": {}, \"unit\": {}, \"points\": [{}]}}",
                json_str(m.name),
                json_str(m.description),
                json_str(m.unit),
                points.join(", ")
            )
        })
        .collect();
    let json = format!(
        "{{\"scale\": {scale}, \"temporality\": \"{}\", \"start\": {}, \"time\": {}, \
         \"resource\": {}, \"scope\": {{\"name\": {}, \"version\": {}, \"attributes\": {}}}, \
         \"metrics\": [{}]}}\n",
        match temporality {
            Temporality::Delta => "delta",
            Temporality::Cumulative => "cumulative",
        },
        times.start_unix_nano,
        times.time_unix_nano,
        json_attrs(resource),
        json_str(scope.0),
        json_str(scope.1),
        json_attrs(scope.2),
        metrics_json.join(", ")
    );
    std::fs::write(dir.join(format!("{name}.json")), json).unwrap();
    std::fs::write(dir.join(format!("{name}.tg.pb")), body).unwrap();
}

fn encode(request: &ExportRequest<'_>) -> Vec<u8> {
    let mut buf = vec![0u8; export_request_len(request)];
    let len = encode_export_request(request, &mut buf).unwrap();
    assert_eq!(len, buf.len());
    buf
}

#[test]
fn export_bodies_equal_the_python_sdk_exporters() {
    let Some(python) = python::interpreter(
        "OTLP export interop test",
        "`opentelemetry-sdk`, `opentelemetry-proto` and `opentelemetry-exporter-otlp-proto-common`",
    ) else {
        return;
    };
    let dir = python::fresh_dir(env!("CARGO_TARGET_TMPDIR"), "otlp-export");
    let mut rng = Rng::new(0x0e7b);

    // Case 1, delta, at the preset's scale 5: a resource and a scope with attributes of
    // every kind, two metrics (sketches of two sizes), one with two points told apart by
    // their attributes.
    let reads: Vec<V> = (0..3000)
        .map(|_| V::Int(1_000 + rng.next_u64() % 50_000_000))
        .collect();
    let writes: Vec<V> = (0..1000)
        .map(|_| V::Int((1 + rng.next_u64() % 900) * 1_000_000))
        .collect();
    let sizes: Vec<V> = Dist::LogNormalWide
        .samples(31, 2000)
        .into_iter()
        .map(|x| V::Float(x * 1e-3 + 1.0))
        .collect();
    let mut read_sketch = presets::otel_latency();
    record(&mut read_sketch, &reads);
    let mut write_sketch = presets::otel_latency();
    record(&mut write_sketch, &writes);
    let mut size_sketch = Fine::new(OtelMapping::with_scale(5).unwrap(), 1e-3).unwrap();
    record(&mut size_sketch, &sizes);
    let resource = [
        KeyValue::new("service.name", Value::Str("pump-controller")),
        KeyValue::new("service.instance.id", Value::Str("unit-0042")),
        KeyValue::new("device.rev", Value::Int(-42)),
        KeyValue::new("device.slots", Value::Int(0)),
        KeyValue::new("device.vref", Value::Double(3.3)),
        KeyValue::new("device.debug", Value::Bool(false)),
        KeyValue::new("device.secure", Value::Bool(true)),
    ];
    let scope_attrs = [
        KeyValue::new("build", Value::Str("release")),
        KeyValue::new("build.id", Value::Bytes(&[0xde, 0xad, 0xbe, 0xef])),
    ];
    let op_read = [
        KeyValue::new("op", Value::Str("read")),
        KeyValue::new("target", Value::Int(1)),
    ];
    let op_write = [
        KeyValue::new("op", Value::Str("write")),
        KeyValue::new("target", Value::Int(2)),
    ];
    let latency_points = [
        DataPoint::new(&read_sketch).with_attributes(&op_read),
        DataPoint::new(&write_sketch).with_attributes(&op_write),
    ];
    let size_points = [DataPoint::new(&size_sketch)];
    let times = Timestamps::new(1_700_000_000_000_000_000, 1_700_000_060_000_000_000);
    let metrics = [
        Metric::new("valve.latency", Temporality::Delta, times, &latency_points)
            .with_unit("ns")
            .with_description("time from command to valve feedback"),
        Metric::new("frame.size", Temporality::Delta, times, &size_points).with_unit("By"),
    ];
    let scope = Scope::new("pump.firmware")
        .with_version("2.1.0")
        .with_attributes(&scope_attrs);
    let body = encode(&ExportRequest::new(&resource, scope, &metrics));
    let threshold = |t: f64| t.next_down();
    write_case(
        &dir,
        "delta",
        5,
        Temporality::Delta,
        times,
        &resource,
        ("pump.firmware", "2.1.0", &scope_attrs),
        &[
            MetricSpec {
                name: "valve.latency",
                description: "time from command to valve feedback",
                unit: "ns",
                points: vec![
                    (&op_read, &reads, threshold(read_sketch.min_trackable())),
                    (&op_write, &writes, threshold(write_sketch.min_trackable())),
                ],
            },
            MetricSpec {
                name: "frame.size",
                description: "",
                unit: "By",
                points: vec![(&[], &sizes, threshold(size_sketch.min_trackable()))],
            },
        ],
        &body,
    );

    // Case 2, cumulative, at scale 8: an empty resource, a scope with a name only, one
    // metric with no unit or description, floats below and above 1 with zeros.
    let floats: Vec<V> = (0..4000)
        .map(|i| match i % 11 {
            0 => V::Float(0.0),
            _ => V::Float(rng.unit().max(1e-6) * 4.0),
        })
        .collect();
    let mut fine = Wide::new(OtelMapping::with_scale(8).unwrap(), 1e-6).unwrap();
    record(&mut fine, &floats);
    let points = [DataPoint::new(&fine)];
    let times = Timestamps::new(1_600_000_000_000_000_000, 1_700_000_000_000_000_123);
    let metrics = [Metric::new(
        "ratio",
        Temporality::Cumulative,
        times,
        &points,
    )];
    let body = encode(&ExportRequest::new(&[], Scope::new("s"), &metrics));
    write_case(
        &dir,
        "cumulative",
        8,
        Temporality::Cumulative,
        times,
        &[],
        ("s", "", &[]),
        &[MetricSpec {
            name: "ratio",
            description: "",
            unit: "",
            points: vec![(&[], &floats, threshold(fine.min_trackable()))],
        }],
        &body,
    );

    python::run(
        &python,
        &script("otlp_export.py"),
        &dir,
        &["delta", "cumulative"],
    );
}

/// A script of tests/interop/.
fn script(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop")
        .join(name)
}

//! Bin for bin with DataDog's Go and Java libraries: the key tailguard gives each value of
//! five data sets, for its three mappings, against the keys the real libraries computed
//! (tests/interop/datadog: `values.txt` in, `go-keys.txt` and `java-keys.txt` out, made by
//! `run.sh` from sketches-go and sketches-java; see the README there).
//!
//! Where Go and Java agree, tailguard must give their key. Where they disagree with each
//! other (they derive their multipliers from gamma with different roundings), tailguard
//! must give one of the two; the test prints how often that happens.
//!
//! `TAILGUARD_BLESS=1 cargo test --test datadog_keys` rewrites `values.txt` (then rerun
//! `run.sh` to refresh the keys).

use std::fmt::Write as _;
use std::path::PathBuf;

use tailguard::sketch::{CubicMapping, IndexMapping, IntMapping, Interpolation, LogMapping};
use tailguard_support::Rng;

/// A mapping as the libraries see it (interpolation, gamma and offset as tailguard writes
/// them), and tailguard's key of a value under it.
struct Case {
    name: &'static str,
    interpolation: &'static str,
    gamma: f64,
    offset: f64,
    key: Box<dyn Fn(f64) -> i64>,
}

fn case<M: IndexMapping + 'static>(name: &'static str, m: M) -> Case {
    // tailguard writes LINEAR with Go's default layout (indexOffset = 2^k, keys 2^k higher)
    // and the others with offset 0: see the proto module's docs.
    let (interpolation, offset) = match M::INTERPOLATION {
        Interpolation::None => ("NONE", 0.0),
        Interpolation::Cubic => ("CUBIC", 0.0),
        _ => ("LINEAR", (1.0 / m.gamma().log2()).round()),
    };
    Case {
        name,
        interpolation,
        gamma: m.gamma(),
        offset,
        key: Box::new(move |v| i64::from(m.index(v)) + offset as i64),
    }
}

fn cases() -> Vec<Case> {
    vec![
        case("log-1%", LogMapping::with_relative_accuracy(0.01).unwrap()),
        case("log-2%", LogMapping::with_relative_accuracy(0.02).unwrap()),
        case(
            "log-0.5%",
            LogMapping::with_relative_accuracy(0.005).unwrap(),
        ),
        case(
            "cubic-1%",
            CubicMapping::with_relative_accuracy(0.01).unwrap(),
        ),
        case(
            "cubic-2%",
            CubicMapping::with_relative_accuracy(0.02).unwrap(),
        ),
        case(
            "cubic-0.5%",
            CubicMapping::with_relative_accuracy(0.005).unwrap(),
        ),
        case("linear-k5", IntMapping::K5),
        case("linear-k6", IntMapping::K6),
        case("linear-k7", IntMapping::K7),
    ]
}

/// The data sets: (name, values).
fn data_sets() -> Vec<(&'static str, Vec<f64>)> {
    let mut rng = Rng::new(0x00da_7ad0_6000);
    let integers: Vec<f64> = (1..=1024u64)
        .chain((0..200).map(|_| rng.next_u64() >> (rng.next_u64() % 40 + 24)))
        .filter(|&v| v > 0)
        .map(|v| v as f64)
        .collect();
    // Whole milliseconds, in milliseconds and in nanoseconds.
    let millis: Vec<f64> = (1..=500u64)
        .map(|ms| ms as f64)
        .chain((1..=500u64).map(|ms| (ms * 1_000_000) as f64))
        .collect();
    let powers: Vec<f64> = (-60..=60)
        .flat_map(|e| {
            let p = libm::ldexp(1.0, e);
            [p, next_down(p), next_up(p), 1.5 * p, 1.25 * p]
        })
        .collect();
    // Sensor readings in units where they fall below 1: decimals, random values, and the
    // value of the issue report (its log index is exactly -9 at 1 %).
    let below_one: Vec<f64> = (1..1000u32)
        .map(|i| f64::from(i) / 1000.0)
        .chain((0..200).map(|_| rng.unit()))
        .chain([0.8352651995043221])
        .collect();
    let floats: Vec<f64> = (0..600)
        .map(|_| libm::exp(rng.unit() * 50.0 - 20.0))
        .collect();
    vec![
        ("integers", integers),
        ("whole milliseconds", millis),
        ("powers of two", powers),
        ("values below 1", below_one),
        ("random floats", floats),
    ]
}

fn next_up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

fn next_down(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - 1)
}

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/interop/datadog")
}

/// values.txt: the mappings, then every value (with its data set).
fn render_values() -> String {
    let mut out = String::from(
        "# Input of run.sh: made by `TAILGUARD_BLESS=1 cargo test --test datadog_keys`.\n",
    );
    for c in cases() {
        writeln!(
            out,
            "mapping {} {} {:016x} {:016x}",
            c.name,
            c.interpolation,
            c.gamma.to_bits(),
            c.offset.to_bits()
        )
        .unwrap();
    }
    for (name, values) in data_sets() {
        writeln!(out, "set {name}").unwrap();
        for v in values {
            writeln!(out, "value {:016x}", v.to_bits()).unwrap();
        }
    }
    out
}

/// The keys a library wrote, one line per value: the value's bits, then one key per case.
fn read_keys(file: &str) -> Vec<(u64, Vec<i64>)> {
    let text = std::fs::read_to_string(dir().join(file))
        .unwrap_or_else(|e| panic!("{file}: {e} (run tests/interop/datadog/run.sh)"));
    text.lines()
        .map(|line| {
            let mut f = line.split_whitespace();
            let bits = u64::from_str_radix(f.next().unwrap(), 16).unwrap();
            (bits, f.map(|k| k.parse().unwrap()).collect())
        })
        .collect()
}

#[test]
fn every_value_lands_in_the_bin_go_and_java_put_it_in() {
    let values = render_values();
    let path = dir().join("values.txt");
    if std::env::var_os("TAILGUARD_BLESS").is_some() {
        std::fs::write(&path, &values).unwrap();
    }
    assert!(
        std::fs::read_to_string(&path).unwrap() == values,
        "{} is not current: run `TAILGUARD_BLESS=1 cargo test --test datadog_keys`, then run.sh",
        path.display()
    );
    let go = read_keys("go-keys.txt");
    let java = read_keys("java-keys.txt");
    let cases = cases();
    let all: Vec<(&str, f64)> = data_sets()
        .into_iter()
        .flat_map(|(name, values)| values.into_iter().map(move |v| (name, v)))
        .collect();
    assert_eq!((go.len(), java.len()), (all.len(), all.len()));
    let mut report = String::new();
    for (c, case) in cases.iter().enumerate() {
        let (mut agreed, mut split) = (0, 0);
        for (((set, v), (go_bits, go_keys)), (java_bits, java_keys)) in
            all.iter().zip(&go).zip(&java)
        {
            assert_eq!((*go_bits, *java_bits), (v.to_bits(), v.to_bits()));
            let (g, j, ours) = (go_keys[c], java_keys[c], (case.key)(*v));
            if g == j {
                agreed += 1;
                assert_eq!(ours, g, "{} {set}: {v:e} (Go and Java: {g})", case.name);
            } else {
                split += 1;
                assert!(
                    ours == g || ours == j,
                    "{} {set}: {v:e}: tailguard {ours}, Go {g}, Java {j}",
                    case.name
                );
            }
        }
        writeln!(
            report,
            "{:>10}: {agreed} values where Go and Java agree (tailguard too), {split} where they differ",
            case.name
        )
        .unwrap();
    }
    println!("{report}");
}

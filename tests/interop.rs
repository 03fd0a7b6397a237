//! Interop with the real thing: DataDog's Python `ddsketch` (3.x), through the protobuf
//! wire format, for the three mappings, several accuracies and several data sets.
//!
//! Needs a Python with `ddsketch` and `protobuf` installed, named by `TAILGUARD_PYTHON`
//! (`.ci/run` makes a venv). Without it the test is skipped with a loud message, unless
//! `TAILGUARD_REQUIRE_INTEROP=1`, which turns the skip into a failure (CI sets it).
//!
//! ```sh
//! python3 -m venv .venv && .venv/bin/pip install ddsketch==3.0.1 protobuf
//! TAILGUARD_PYTHON=.venv/bin/python cargo test --test interop -- --nocapture
//! ```
//!
//! What is checked, for every case (data set x mapping):
//!
//! 1. tailguard -> Python: both of tailguard's encodings parse with ddsketch's protobuf
//!    classes, with the gamma, offset, interpolation and bins expected (the Python
//!    convention writes the very gamma Python's own mapping has); `DDSketchProto.from_proto`
//!    of the Python-convention bytes holds tailguard's bins (key = index + 1), and answers
//!    every quantile from the bin tailguard answers from, with the value of that bin (for
//!    `NONE`, the same number to 1e-9; for `LINEAR` and `CUBIC` each library's own
//!    representative, within `2 alpha` of each other).
//! 2. Python -> tailguard: Python's sketch of the same data, written by `to_proto`,
//!    decodes with `IndexConvention::Python` into tailguard bin for bin (index = key - 1),
//!    and answers every quantile from Python's bin. With the Go/Java convention it reads
//!    one bin high (`NONE`) or is refused (`LINEAR`, `CUBIC`: another gamma).
//! 3. Python's sketch, tailguard's sketch and tailguard's decoding of Python's sketch are
//!    each within alpha of the exact quantiles.
//! 4. Python's sketches at gammas tailguard does not use (log at 1.3 %, 2 %, 5 %, the
//!    collapsing sketch, LINEAR and CUBIC at 1 % and 5 %) decode with re-binning
//!    (`proto::decode_rebinned`) into each preset, within the stated bound `a + b + a b`
//!    of the exact quantiles.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tailguard::proto::{self, DecodeError, IndexConvention};
use tailguard::sketch::{CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};
use tailguard_support::dist::{exact_quantile, Dist, DISTS, QUANTILES};
use tailguard_support::{python, Rng};

const BINS: usize = 8192;
const MIN_VALUE: f64 = 1e-3;
const N_VALUES: usize = 20_000;

type Sketch<M> = DDSketch<M, BINS>;

/// The interpreter, the interop script and a fresh directory `name` for the files the two
/// libraries exchange; `None` to skip (see [`python::interpreter`]).
fn interop_setup(name: &str) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let python = python::interpreter("ddsketch interop test", "`ddsketch` and `protobuf`")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/interop/ddsketch_interop.py");
    Some((
        python,
        script,
        python::fresh_dir(env!("CARGO_TARGET_TMPDIR"), name),
    ))
}

/// The data sets: the accuracy tests' distributions, integers (many of them exact bin
/// boundaries for LINEAR), and a mix with zeros.
fn data_sets() -> Vec<(String, Vec<f64>)> {
    let mut sets: Vec<(String, Vec<f64>)> = DISTS
        .iter()
        .map(|&d| {
            (
                format!("{d:?}").to_lowercase(),
                d.samples(0xd06 ^ d as u64, N_VALUES),
            )
        })
        .collect();
    let mut rng = Rng::new(7);
    let integers = (0..N_VALUES)
        .map(|_| (1 + rng.next_u64() % 1000) as f64)
        .collect();
    sets.push(("integers".into(), integers));
    let with_zeros = Dist::Stragglers
        .samples(11, N_VALUES)
        .into_iter()
        .enumerate()
        .map(|(i, v)| if i % 10 == 0 { 0.0 } else { v })
        .collect();
    sets.push(("zeros".into(), with_zeros));
    sets
}

/// Which bin a sketch answers quantile `q` from, by Python's rule (`None`: the zero bin).
fn bin_at_quantile<M: IndexMapping>(s: &Sketch<M>, q: f64) -> Option<i32> {
    let rank = q * (s.count() - 1) as f64;
    let mut cumulative = f64::from(s.zero_count());
    if cumulative > rank {
        return None;
    }
    for bin in s.bins() {
        cumulative += f64::from(bin.count);
        if cumulative > rank {
            return Some(bin.index);
        }
    }
    panic!("rank {rank} beyond the count");
}

/// Checks Python's reading `file` of `s` (from_proto of tailguard's encoding, or Python's
/// own sketch of the same values): tailguard's bins one key higher, and every quantile
/// answered from the bin tailguard answers it from (Python's rule), within alpha of the
/// exact quantile; then `each(answer, that bin, the exact quantile)`.
fn check_python_reading<M: IndexMapping>(
    r: &Results,
    file: &str,
    s: &Sketch<M>,
    exact: &dyn Fn(f64) -> f64,
    within_alpha: &dyn Fn(f64, f64) -> bool,
    mut each: impl FnMut(&PyQuantile, Option<i32>, f64),
) {
    let keys: Vec<(i64, f64)> = s
        .bins()
        .map(|b| (i64::from(b.index) + 1, f64::from(b.count)))
        .collect();
    assert_eq!(r.keys[file], keys, "{file}: bins");
    for pq in &r.quantiles[file] {
        let bin = bin_at_quantile(s, pq.q);
        assert_eq!(
            pq.key.map(|k| k - 1),
            bin.map(i64::from),
            "{file} q={}",
            pq.q
        );
        let want = exact(pq.q);
        assert!(
            within_alpha(pq.value, want),
            "{file} q={}: {} vs exact {want}",
            pq.q,
            pq.value
        );
        each(pq, bin, want);
    }
}

/// One line of results.txt: `quantile SOURCE Q VALUE KEY`.
#[derive(Debug, Clone, Copy)]
struct PyQuantile {
    q: f64,
    value: f64,
    /// `None` for the zero bin.
    key: Option<i64>,
}

#[derive(Default, Debug)]
struct Results {
    fields: HashMap<String, HashMap<String, String>>,
    quantiles: HashMap<String, Vec<PyQuantile>>,
    keys: HashMap<String, Vec<(i64, f64)>>,
    native: HashMap<String, HashMap<String, String>>,
    version: String,
}

fn key_values(words: &[&str]) -> HashMap<String, String> {
    words
        .iter()
        .filter_map(|w| w.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn parse_results(text: &str) -> Results {
    let mut r = Results::default();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["version", v] => r.version = v.to_string(),
            ["case", _] => {}
            ["field", source, rest @ ..] => {
                r.fields.insert(source.to_string(), key_values(rest));
            }
            ["native", source, rest @ ..] => {
                r.native.insert(source.to_string(), key_values(rest));
            }
            ["quantile", source, q, value, key] => r
                .quantiles
                .entry(source.to_string())
                .or_default()
                .push(PyQuantile {
                    q: q.parse().unwrap(),
                    value: value.parse().unwrap(),
                    key: (*key != "zero").then(|| key.parse().unwrap()),
                }),
            ["keys", source, pairs @ ..] => {
                let bins = pairs
                    .iter()
                    .map(|p| {
                        let (k, c) = p.split_once(':').unwrap();
                        (k.parse().unwrap(), c.parse().unwrap())
                    })
                    .collect();
                r.keys.insert(source.to_string(), bins);
            }
            _ => panic!("unexpected line in results.txt: {line}"),
        }
    }
    r
}

fn field(r: &Results, source: &str, name: &str) -> f64 {
    r.fields[source][name].parse().unwrap()
}

fn encode<M: IndexMapping>(s: &Sketch<M>, convention: IndexConvention) -> Vec<u8> {
    let mut buf = vec![0u8; proto::encoded_len(s, convention)];
    let len = proto::encode(s, convention, &mut buf).unwrap();
    assert_eq!(len, buf.len());
    buf
}

fn rel(a: f64, b: f64) -> f64 {
    if a == b {
        0.0
    } else {
        (a - b).abs() / b.abs()
    }
}

/// The figures reported per case.
#[derive(Debug, Default)]
struct Figures {
    /// Largest relative error against the exact quantiles of: tailguard's own sketch,
    /// Python's own sketch, tailguard's decoding of Python's proto.
    err_tailguard: f64,
    err_python: f64,
    err_decoded: f64,
    /// Largest relative difference between Python's and tailguard's answer for the same bin.
    py_vs_tg: f64,
    /// Values Python and tailguard put in different bins when each records the data itself.
    differing_values: f64,
    bins: usize,
    bytes: usize,
}

struct Case {
    name: String,
    mapping: &'static str,
    values: Vec<f64>,
}

/// Writes the case's inputs for the Python script.
fn prepare<M: IndexMapping>(dir: &Path, case: &Case, sketch: &Sketch<M>) {
    let values: String = case.values.iter().map(|v| format!("{v:?}\n")).collect();
    std::fs::write(dir.join(format!("{}.values", case.name)), values).unwrap();
    for (convention, tag) in [
        (IndexConvention::Python, "python"),
        (IndexConvention::GoJava, "gojava"),
    ] {
        std::fs::write(
            dir.join(format!("{}.tg-{tag}.pb", case.name)),
            encode(sketch, convention),
        )
        .unwrap();
    }
}

fn check<M: IndexMapping>(dir: &Path, case: &Case, sketch: &Sketch<M>, r: &Results) -> Figures {
    let name = &case.name;
    let alpha = sketch.relative_accuracy();
    let interpolation = M::INTERPOLATION as i32;
    let mut sorted = case.values.clone();
    sorted.sort_by(f64::total_cmp);
    let exact = |q: f64| exact_quantile(&sorted, q);
    // Python's own float math at bin edges costs a hair beyond alpha.
    let within_alpha = |got: f64, want: f64| {
        if want == 0.0 {
            got == 0.0
        } else {
            rel(got, want) <= alpha * (1.0 + 1e-9)
        }
    };
    let mut fig = Figures {
        bins: sketch.bins().count(),
        ..Figures::default()
    };
    let first = sketch.bins().next().unwrap().index;

    // --- 1. tailguard -> Python -------------------------------------------------------
    let go = format!("{name}.tg-gojava.pb");
    let py = format!("{name}.tg-python.pb");
    let native = format!("{name}.py.pb");
    fig.bytes = std::fs::metadata(dir.join(&go)).unwrap().len() as usize;
    // Go/Java convention: the sketch's gamma, Go's default offset, tailguard's bins.
    let go_shift = if M::INTERPOLATION == tailguard::sketch::Interpolation::Linear {
        (1.0 / sketch.mapping().gamma().log2()).round()
    } else {
        0.0
    };
    assert_eq!(field(r, &go, "gamma"), sketch.mapping().gamma(), "{go}");
    assert_eq!(field(r, &go, "indexOffset"), go_shift, "{go}");
    assert_eq!(field(r, &go, "offset"), f64::from(first) + go_shift, "{go}");
    // Python convention: Python's own gamma for this accuracy, offset 0, keys + 1.
    let native_gamma: f64 = r.native[&native]["gamma"].parse().unwrap();
    assert!(
        rel(field(r, &py, "gamma"), native_gamma) <= 1e-12,
        "{py}: gamma {} vs Python's {native_gamma}",
        field(r, &py, "gamma")
    );
    assert_eq!(
        field(r, &py, "indexOffset"),
        field(r, &native, "indexOffset")
    );
    assert_eq!(field(r, &py, "offset"), f64::from(first) + 1.0, "{py}");
    for source in [&go, &py] {
        assert_eq!(field(r, source, "interpolation"), f64::from(interpolation));
        assert_eq!(field(r, &native, "interpolation"), f64::from(interpolation));
        let last = sketch.bins().last().unwrap().index;
        assert_eq!(field(r, source, "bins"), f64::from(last - first + 1));
        assert_eq!(field(r, source, "nonzero"), fig.bins as f64);
        assert_eq!(
            field(r, source, "total"),
            (sketch.count() - u64::from(sketch.zero_count())) as f64
        );
        assert_eq!(field(r, source, "zero"), f64::from(sketch.zero_count()));
        assert_eq!(field(r, source, "sparse"), 0.0);
        assert_eq!(field(r, source, "negative"), 0.0);
    }
    // from_proto holds tailguard's bins, one key higher, and answers every quantile from
    // tailguard's bin, with that bin's value.
    check_python_reading(r, &py, sketch, &exact, &within_alpha, |pq, bin, _| {
        if let Some(i) = bin {
            let ours = sketch.mapping().value(i);
            let diff = rel(pq.value, ours);
            fig.py_vs_tg = fig.py_vs_tg.max(diff);
            let bound = if interpolation == 0 {
                1e-9
            } else {
                2.0 * alpha
            };
            assert!(
                diff <= bound,
                "{py} q={}: Python {} vs tailguard {ours}",
                pq.q,
                pq.value
            );
        }
    });

    // --- 2. Python -> tailguard -------------------------------------------------------
    let bytes = std::fs::read(dir.join(&native)).unwrap();
    let mut decoded = sketch.clone();
    decoded.clear();
    let report = proto::decode_into(&bytes, IndexConvention::Python, &mut decoded)
        .unwrap_or_else(|e| panic!("{native}: {e}"));
    assert_eq!(report.added, case.values.len() as u64, "{native}");
    assert_eq!(
        (report.below_range, report.above_range, report.saturated),
        (0, 0, 0)
    );
    check_python_reading(
        r,
        &native,
        &decoded,
        &exact,
        &within_alpha,
        |pq, bin, want| {
            fig.err_python = fig.err_python.max(rel(pq.value, want));
            let got = decoded.quantile(pq.q).unwrap().unwrap();
            fig.err_decoded = fig.err_decoded.max(rel(got, want));
            assert!(
                within_alpha(got, want),
                "decoded {native} q={}: {got} vs {want}",
                pq.q
            );
            if let (Some(i), 0) = (bin, interpolation) {
                let ours = decoded.mapping().value(i);
                assert!(rel(pq.value, ours) <= 1e-9, "{native} q={}", pq.q);
            }
        },
    );
    // Read with the Go/Java convention, Python's sketch is a bin high, or refused.
    let mut misread = decoded.clone();
    misread.clear();
    match proto::decode_into(&bytes, IndexConvention::GoJava, &mut misread) {
        Ok(_) => {
            assert_eq!(interpolation, 0);
            assert!(misread
                .bins()
                .map(|b| (b.index - 1, b.count))
                .eq(decoded.bins().map(|b| (b.index, b.count))));
        }
        Err(e) => {
            assert_ne!(interpolation, 0);
            assert!(matches!(e, DecodeError::Gamma { .. }), "{e}");
        }
    }

    // --- 3. Each sketch within alpha of the exact quantiles -----------------------------
    for q in QUANTILES {
        let got = sketch.quantile(q).unwrap().unwrap();
        fig.err_tailguard = fig.err_tailguard.max(rel(got, exact(q)));
        assert!(within_alpha(got, exact(q)), "{name} q={q}");
    }
    // How many values the two libraries, each recording the data itself, bin apart:
    // only values on a bin boundary (ceil against floor) may differ.
    fig.differing_values = decoded
        .bins()
        .map(|b| (b.index, f64::from(b.count)))
        .chain(sketch.bins().map(|b| (b.index, -f64::from(b.count))))
        .fold(HashMap::<i32, f64>::new(), |mut m, (i, c)| {
            *m.entry(i).or_default() += c;
            m
        })
        .values()
        .map(|c| c.abs())
        .sum::<f64>()
        / 2.0;
    let boundaries = case
        .values
        .iter()
        .filter(|&&v| {
            v > 0.0 && {
                let m = sketch.mapping();
                let i = m.index(v);
                rel(m.lower_bound(i), v) < 1e-9 || rel(m.lower_bound(i + 1), v) < 1e-9
            }
        })
        .count();
    assert!(
        fig.differing_values <= boundaries as f64,
        "{name}: {} values binned apart, only {boundaries} on a boundary",
        fig.differing_values
    );
    fig
}

fn run_case<M: IndexMapping>(alpha: f64, case: &Case, dir: &Path) -> Sketch<M> {
    let mut s = Sketch::<M>::with_relative_accuracy(alpha, MIN_VALUE).unwrap();
    for &v in &case.values {
        s.record(v).unwrap();
    }
    assert_eq!(s.clamped(), 0);
    prepare(dir, case, &s);
    s
}

enum Built {
    Log(Box<Sketch<LogMapping>>),
    Cubic(Box<Sketch<CubicMapping>>),
    Int(Box<Sketch<IntMapping>>),
}

#[test]
fn tailguard_and_python_ddsketch_read_each_other() {
    let Some((python, script, dir)) = interop_setup("ddsketch-interop") else {
        return;
    };

    let mappings: [(&str, f64); 7] = [
        ("log", 0.01),
        ("log", 0.005),
        ("cubic", 0.01),
        ("cubic", 0.02),
        ("int", 0.02),  // k = 5, alpha 1.56 %
        ("int", 0.01),  // k = 6, alpha 0.78 %
        ("int", 0.005), // k = 7, alpha 0.39 %
    ];
    let mut cases = Vec::new();
    let mut cases_txt = String::new();
    for (set, values) in data_sets() {
        for (mapping, alpha) in mappings {
            let case = Case {
                name: format!("{set}-{mapping}-{alpha}"),
                mapping,
                values: values.clone(),
            };
            let built = match mapping {
                "log" => Built::Log(Box::new(run_case::<LogMapping>(alpha, &case, &dir))),
                "cubic" => Built::Cubic(Box::new(run_case::<CubicMapping>(alpha, &case, &dir))),
                _ => Built::Int(Box::new(run_case::<IntMapping>(alpha, &case, &dir))),
            };
            let accuracy = match &built {
                Built::Log(s) => s.relative_accuracy(),
                Built::Cubic(s) => s.relative_accuracy(),
                Built::Int(s) => s.relative_accuracy(),
            };
            writeln!(cases_txt, "{} {} {accuracy:?}", case.name, case.mapping).unwrap();
            cases.push((case, built));
        }
    }
    std::fs::write(dir.join("cases.txt"), cases_txt).unwrap();
    let quantiles: String = QUANTILES.iter().map(|q| format!("{q:?}\n")).collect();
    std::fs::write(dir.join("quantiles.txt"), quantiles).unwrap();

    python::run(&python, &script, &dir, &[]);
    let results = parse_results(&std::fs::read_to_string(dir.join("results.txt")).unwrap());

    println!(
        "\n{:<34} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9} {:>6}",
        "case (data-mapping-alpha)",
        "bins",
        "bytes",
        "err tg",
        "err py",
        "err dec",
        "py~tg",
        "apart"
    );
    for (case, built) in &cases {
        let fig = match built {
            Built::Log(s) => check(&dir, case, s, &results),
            Built::Cubic(s) => check(&dir, case, s, &results),
            Built::Int(s) => check(&dir, case, s, &results),
        };
        println!(
            "{:<34} {:>6} {:>6} {:>8.4}% {:>8.4}% {:>8.4}% {:>8.4}% {:>6}",
            case.name,
            fig.bins,
            fig.bytes,
            100.0 * fig.err_tailguard,
            100.0 * fig.err_python,
            100.0 * fig.err_decoded,
            100.0 * fig.py_vs_tg,
            fig.differing_values
        );
    }
    println!(
        "INTEROP OK: {} cases checked against Python ddsketch {}",
        cases.len(),
        results.version
    );
}

/// Python's own sketches at gammas tailguard does not use (log at 1.3 %, 2 % and 5 %, its
/// collapsing sketch, LINEAR and CUBIC at 1 % and 5 %) decode with re-binning
/// (`proto::decode_rebinned`, Python convention) into each of tailguard's presets, every
/// quantile within the stated bound `a + b + a b` of the exact quantile of the data.
#[test]
fn python_sketches_at_foreign_gammas_rebin_within_the_bound() {
    let Some((python, script, dir)) = interop_setup("ddsketch-rebin") else {
        return;
    };

    // Latencies in ns inside the presets' range (1 µs .. 100 s), and some zeros.
    let mut rng = Rng::new(15);
    let sets: Vec<(&str, Vec<f64>)> = vec![
        ("stragglers", Dist::Stragglers.samples(3, N_VALUES)),
        ("lognormal", Dist::LogNormalNarrow.samples(4, N_VALUES)),
        // From 2 µs: a bin's representative may be up to alpha below its values.
        (
            "pareto",
            Dist::Pareto
                .samples(5, N_VALUES)
                .into_iter()
                .map(|v| 2.0 * v)
                .collect(),
        ),
        (
            "whole-ms",
            (0..N_VALUES)
                .map(|i| match i % 50 {
                    0 => 0.0,
                    _ => (1 + rng.next_u64() % 2000) as f64 * 1e6,
                })
                .collect(),
        ),
    ];
    let writers = [
        ("ddsketch", 0.013),
        ("ddsketch", 0.02),
        ("ddsketch", 0.05),
        ("collapsing", 0.013),
        ("linear", 0.01),
        ("linear", 0.05),
        ("cubic", 0.01),
        ("cubic", 0.02),
    ];
    let mut cases_txt = String::new();
    for (set, values) in &sets {
        let text: String = values.iter().map(|v| format!("{v:?}\n")).collect();
        std::fs::write(dir.join(format!("{set}.values")), text).unwrap();
        for (kind, alpha) in writers {
            writeln!(
                cases_txt,
                "{set}-{kind}-{alpha} {kind} {alpha} {set}.values"
            )
            .unwrap();
        }
    }
    std::fs::write(dir.join("rebin-cases.txt"), cases_txt).unwrap();
    python::run(&python, &script, &dir, &["rebin"]);
    let written = std::fs::read_to_string(dir.join("rebin-results.txt")).unwrap();

    println!(
        "\n{:<36} {:>7} {:>7} {:>9} {:>9}",
        "python sketch -> preset", "alpha", "exact", "max err", "bound"
    );
    let mut checked = 0;
    for line in written.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let ["written", name, rest @ ..] = words.as_slice() else {
            panic!("unexpected line in rebin-results.txt: {line}");
        };
        let facts = key_values(rest);
        let py_alpha: f64 = facts["alpha"].parse().unwrap();
        let set = name.split('-').next().unwrap();
        let set = if set == "whole" { "whole-ms" } else { set };
        let values = &sets.iter().find(|(s, _)| *s == set).unwrap().1;
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let bytes = std::fs::read(dir.join(format!("{name}.pb"))).unwrap();
        let row = |preset: &str, got: (proto::Rebinned, Vec<f64>, f64)| {
            let (report, answers, b) = got;
            assert_eq!(report.added, values.len() as u64, "{name} -> {preset}");
            assert_eq!((report.below_range, report.above_range), (0, 0));
            let bound = if report.exact {
                b
            } else {
                py_alpha + b + py_alpha * b
            };
            assert!(
                rel(report.relative_error, bound) <= 1e-9,
                "{name} -> {preset}: reported {} for alpha {py_alpha} and {b}",
                report.relative_error
            );
            let mut worst: f64 = 0.0;
            for (&q, got) in QUANTILES.iter().zip(answers) {
                let exact = exact_quantile(&sorted, q);
                let err = if exact == 0.0 { got } else { rel(got, exact) };
                assert!(
                    err <= bound * (1.0 + 1e-9),
                    "{name} -> {preset}: q={q} got {got}, exact {exact}, bound {bound}"
                );
                worst = worst.max(err);
            }
            println!(
                "{:<36} {:>6.3}% {:>7} {:>8.4}% {:>8.4}%",
                format!("{name} -> {preset}"),
                100.0 * py_alpha,
                report.exact,
                100.0 * worst,
                100.0 * bound
            );
        };
        row(
            "log",
            decode_preset(&bytes, tailguard::sketch::presets::log_latency()),
        );
        row(
            "cubic",
            decode_preset(&bytes, tailguard::sketch::presets::cubic_latency()),
        );
        row(
            "int",
            decode_preset(&bytes, tailguard::sketch::presets::int_latency()),
        );
        checked += 1;
    }
    assert_eq!(checked, sets.len() * writers.len());
    println!("REBIN OK: {checked} Python sketches re-binned into 3 presets each");
}

/// Decodes `bytes` (Python convention) into `sketch`: the report, the answers at
/// `QUANTILES`, and the sketch's accuracy.
fn decode_preset<M: IndexMapping, const N: usize>(
    bytes: &[u8],
    mut sketch: DDSketch<M, N>,
) -> (proto::Rebinned, Vec<f64>, f64) {
    let report = proto::decode_rebinned(bytes, IndexConvention::Python, &mut sketch).unwrap();
    let answers = QUANTILES
        .iter()
        .map(|&q| sketch.quantile(q).unwrap().unwrap())
        .collect();
    (report, answers, sketch.relative_accuracy())
}

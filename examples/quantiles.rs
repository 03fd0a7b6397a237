//! Quantiles of numbers read from stdin, one per line, through a tailguard DDSketch; and
//! the command-line way to merge DDSketch protobufs collected from many devices.
//!
//! ```text
//! cargo run --release --example quantiles -- [--q Q]... [--alpha A]
//!     [--mapping log|cubic|int|otel] [--skip-invalid] [--proto-in FILE]... [--proto-out FILE]
//!     [--python-convention] [--rebin] [--otlp-in FILE]... [--otlp-out FILE] [--no-stdin]
//!     < values.txt
//! ```
//!
//! Prints `count N`, `min X`, `max X`, then one line per quantile (`p50 X`, `p99.9 X`, ...;
//! defaults 0.5 0.9 0.95 0.99 0.999). Every answer is within the sketch's relative accuracy
//! of the exact quantile `sorted[floor(q * (n - 1))]` when that is 0 or in the sketch's range
//! (every normal float at the default accuracy); a note on stderr counts the values read
//! below the range (subnormals, say), which count as 0 or as the range's bottom.
//!
//! A line that is not a finite, non-negative number is reported on stderr with its line
//! number and makes the exit code 2 (the valid lines are still counted); `--skip-invalid`
//! keeps the exit code 0. Usage errors, unreadable files and protos that do not decode
//! exit with 1.
//!
//! Wire format (DataDog's DDSketch protobuf, see `tailguard::proto`):
//!
//! * `--proto-in FILE` (repeatable) merges a DDSketch protobuf into the sketch before
//!   printing. Without `--mapping` and `--alpha`, the first file's mapping picks them.
//!   Protos whose mapping differs from the sketch's are an error, unless `--rebin`.
//! * `--rebin` also reads protos of other mappings (another accuracy, DataDog's Go or Java
//!   defaults, `QUADRATIC` or `QUARTIC`): each of their bins is re-binned into the sketch
//!   (`proto::decode_rebinned`), and a note says how many values were and the relative
//!   error they now carry. Without `--mapping`, a proto whose interpolation tailguard does
//!   not have picks the log mapping.
//! * `--proto-out FILE` writes the sketch (stdin values and merged protos) as a protobuf.
//! * `--python-convention` reads and writes protos in the convention of DataDog's Python
//!   library (`ddsketch`) instead of Go's and Java's.
//! * `--no-stdin` reads no values: merge the protos and report.
//!
//! ```text
//! quantiles --no-stdin --proto-in dev1.pb --proto-in dev2.pb --proto-out all.pb
//! ```
//!
//! OpenTelemetry (an OTLP `ExponentialHistogramDataPoint`, see `tailguard::otlp`), with
//! `--mapping otel`: OpenTelemetry's buckets, the coarsest scale at least as accurate as
//! `--alpha` (scale 6 at the default 1 %):
//!
//! * `--otlp-in FILE` (repeatable) merges a data point into the sketch. Without
//!   `--mapping` and `--alpha`, the first file's scale is the sketch's; finer points are
//!   downscaled exactly, coarser ones are an error.
//! * `--otlp-out FILE` writes the sketch as a data point (the mapping defaults to `otel`).
//!
//! ```text
//! quantiles --no-stdin --otlp-in dev1.otlp --otlp-in dev2.otlp --otlp-out all.otlp
//! ```

use std::io::{self, BufRead, Write};
use std::process::ExitCode;

use tailguard::otlp::{self, Timestamps};
use tailguard::proto::{self, IndexConvention};
use tailguard::sketch::{
    BinLayout, CubicMapping, DDSketch, IndexMapping, IntMapping, Interpolation, LogMapping,
    OtelMapping,
};

/// 2^18 bins (1 MiB): at 1 % the sketch spans every positive f64, at finer accuracies as
/// much of it as fits (the range is printed when it does not).
const BINS: usize = 1 << 18;

const USAGE: &str = "usage: quantiles [--q Q]... [--alpha A] [--mapping log|cubic|int|otel] \
[--skip-invalid] [--proto-in FILE]... [--proto-out FILE] [--python-convention] [--rebin] \
[--otlp-in FILE]... [--otlp-out FILE] [--no-stdin] < values";

struct Options {
    quantiles: Vec<f64>,
    alpha: Option<f64>,
    mapping: Option<String>,
    skip_invalid: bool,
    proto_in: Vec<String>,
    proto_out: Option<String>,
    convention: IndexConvention,
    rebin: bool,
    otlp_in: Vec<String>,
    /// The `--otlp-in` files' paths and bytes, read by `configure_otlp`.
    otlp_points: Vec<(String, Vec<u8>)>,
    otlp_out: Option<String>,
    no_stdin: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut opts = Options {
        quantiles: Vec::new(),
        alpha: None,
        mapping: None,
        skip_invalid: false,
        proto_in: Vec::new(),
        proto_out: None,
        convention: IndexConvention::GoJava,
        rebin: false,
        otlp_in: Vec::new(),
        otlp_points: Vec::new(),
        otlp_out: None,
        no_stdin: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| args.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--q" => {
                let v = value("--q")?;
                match v.parse::<f64>() {
                    Ok(q) if (0.0..=1.0).contains(&q) => opts.quantiles.push(q),
                    _ => return Err(format!("--q {v}: a quantile must be a number in [0, 1]")),
                }
            }
            "--alpha" => {
                let v = value("--alpha")?;
                match v.parse::<f64>() {
                    Ok(a) if a > 0.0 && a < 1.0 => opts.alpha = Some(a),
                    _ => return Err(format!("--alpha {v}: must be a number in (0, 1)")),
                }
            }
            "--mapping" => {
                let v = value("--mapping")?;
                if !["log", "cubic", "int", "otel"].contains(&v.as_str()) {
                    return Err(format!("--mapping {v}: must be log, cubic, int or otel"));
                }
                opts.mapping = Some(v);
            }
            "--skip-invalid" => opts.skip_invalid = true,
            "--proto-in" => opts.proto_in.push(value("--proto-in")?),
            "--proto-out" => opts.proto_out = Some(value("--proto-out")?),
            "--python-convention" => opts.convention = IndexConvention::Python,
            "--rebin" => opts.rebin = true,
            "--otlp-in" => opts.otlp_in.push(value("--otlp-in")?),
            "--otlp-out" => opts.otlp_out = Some(value("--otlp-out")?),
            "--no-stdin" => opts.no_stdin = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if opts.quantiles.is_empty() {
        opts.quantiles = vec![0.5, 0.9, 0.95, 0.99, 0.999];
    }
    // OTLP data points hold OpenTelemetry's buckets: only an `otel` sketch reads or
    // writes them.
    if !opts.otlp_in.is_empty() || opts.otlp_out.is_some() {
        match opts.mapping.as_deref() {
            None | Some("otel") => {}
            Some(other) => {
                return Err(format!(
                    "--otlp-in and --otlp-out need --mapping otel, not {other}"
                ))
            }
        }
    }
    Ok(opts)
}

/// The widest sketch of `BINS` bins: every positive normal float when the accuracy allows,
/// otherwise a range centred (geometrically) on 1.
fn widest_sketch<M: IndexMapping>(alpha: f64) -> Result<Box<DDSketch<M, BINS>>, String> {
    let mapping = M::with_relative_accuracy(alpha).map_err(|e| e.to_string())?;
    // From the bin of the smallest normal float; or from the bin above it when that is
    // zero's (a coarse cubic or integer mapping gives 0 and 2^-1022 one index). At a
    // fine accuracy the indices of the smallest floats overflow an i32: then either the
    // layout is refused or it cannot reach f64::MAX, and the range is centred on 1.
    let bottom = mapping
        .index(f64::MIN_POSITIVE)
        .max(mapping.index(0.0).saturating_add(1));
    if let Ok(layout) = BinLayout::<M, BINS>::from_min_index(mapping, bottom) {
        let from_bottom = DDSketch::with_layout(layout);
        if from_bottom.max_trackable() >= f64::MAX {
            if from_bottom.min_trackable() > f64::MIN_POSITIVE {
                eprintln!(
                    "note: at this accuracy values below {:e} count as 0",
                    from_bottom.min_trackable()
                );
            }
            return Ok(Box::new(from_bottom));
        }
    }
    let min_value = mapping.lower_bound(mapping.index(1.0) - BINS as i32 / 2);
    let sketch = DDSketch::new(mapping, min_value).map_err(|e| e.to_string())?;
    eprintln!(
        "note: at this accuracy {BINS} bins track [{:e}, {:e}); smaller values count as 0, \
         larger ones are clamped",
        sketch.min_trackable(),
        sketch.max_trackable()
    );
    Ok(Box::new(sketch))
}

/// `p50`, `p99.9`, `p0`, `p100`: the quantile as a percentage without trailing zeros.
fn quantile_name(q: f64) -> String {
    let pct = format!("{:.6}", q * 100.0);
    let pct = pct.trim_end_matches('0').trim_end_matches('.');
    format!("p{pct}")
}

/// Reads the `--proto-in` files, and picks the mapping and accuracy: the command line's,
/// or else the first proto's, or else log at 1 %.
fn configure(opts: &mut Options) -> Result<Vec<(String, Vec<u8>)>, String> {
    let protos = opts
        .proto_in
        .iter()
        .map(|path| {
            std::fs::read(path)
                .map(|bytes| (path.clone(), bytes))
                .map_err(|e| format!("reading {path}: {e}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    if let Some((path, bytes)) = protos.first() {
        if opts.mapping.is_none() || opts.alpha.is_none() {
            let wire = proto::read_mapping(bytes).map_err(|e| format!("{path}: {e}"))?;
            let unsupported = || {
                format!(
                    "{path}: interpolation {} is not supported",
                    wire.interpolation_code()
                )
            };
            let mapping = match wire.interpolation() {
                Some(Interpolation::None) => "log",
                Some(Interpolation::Cubic) => "cubic",
                Some(Interpolation::Linear) => "int",
                // Re-binned into the log mapping (at --alpha, or 1 %).
                _ if opts.rebin => "log",
                _ => return Err(unsupported()),
            };
            let mut alpha = match wire.relative_accuracy(opts.convention) {
                Some(alpha) => alpha,
                None if opts.rebin => opts.alpha.unwrap_or(0.01),
                None => return Err(unsupported()),
            };
            if mapping == "int" {
                // IntMapping rounds the accuracy down to its own steps: keep float noise
                // from rounding it one step too far.
                alpha *= 1.0 + 1e-9;
            }
            let mapping = opts.mapping.get_or_insert_with(|| mapping.to_string());
            let alpha = opts.alpha.get_or_insert(alpha);
            eprintln!("note: {mapping} sketch at alpha {alpha} (from {path})");
        }
    }
    Ok(protos)
}

/// Reads the `--otlp-in` files; with OTLP flags the mapping is `otel`, and without
/// `--alpha` the first data point's scale picks the accuracy.
fn configure_otlp(opts: &mut Options) -> Result<(), String> {
    for path in &opts.otlp_in {
        let bytes = std::fs::read(path).map_err(|e| format!("reading {path}: {e}"))?;
        opts.otlp_points.push((path.clone(), bytes));
    }
    if opts.otlp_in.is_empty() && opts.otlp_out.is_none() {
        return Ok(());
    }
    opts.mapping.get_or_insert_with(|| "otel".to_string());
    if let (Some((path, bytes)), None) = (opts.otlp_points.first(), opts.alpha) {
        let scale = otlp::read_scale(bytes).map_err(|e| format!("{path}: {e}"))?;
        let mapping = OtelMapping::with_scale(scale).map_err(|e| format!("{path}: {e}"))?;
        // The accuracy of exactly this scale: keep float noise from picking the next one.
        let alpha = mapping.relative_accuracy() * (1.0 + 1e-9);
        opts.alpha = Some(alpha);
        eprintln!("note: otel sketch at scale {scale} (from {path})");
    }
    Ok(())
}

/// The sketch as an `otel` one, which `parse_args` and `configure_otlp` make sure it is
/// when any OTLP flag is given.
fn as_otel<M: IndexMapping + 'static>(
    sketch: &mut DDSketch<M, BINS>,
) -> Result<&mut DDSketch<OtelMapping, BINS>, String> {
    (sketch as &mut dyn std::any::Any)
        .downcast_mut()
        .ok_or_else(|| "OTLP data points need --mapping otel".to_string())
}

/// Merges the `--otlp-in` data points into the sketch.
fn merge_otlp<M: IndexMapping + 'static>(
    opts: &Options,
    sketch: &mut DDSketch<M, BINS>,
) -> Result<(), String> {
    if opts.otlp_points.is_empty() {
        return Ok(());
    }
    let sketch = as_otel(sketch)?;
    for (path, bytes) in &opts.otlp_points {
        let report = otlp::decode_into(bytes, sketch).map_err(|e| format!("{path}: {e}"))?;
        if report.below_range + report.above_range + report.saturated + report.wide_zero > 0 {
            eprintln!(
                "note: {path}: {} values below the range (counted as 0), {} above it \
                 (clamped), {} dropped from full bins, {} in a zero bucket wider than ours",
                report.below_range, report.above_range, report.saturated, report.wide_zero
            );
        }
        if !report.exact_stats {
            eprintln!("note: {path}: min, max and sum estimated from the buckets");
        }
    }
    Ok(())
}

/// Writes the sketch to `--otlp-out` as a data point.
fn write_otlp<M: IndexMapping + 'static>(
    opts: &Options,
    sketch: &mut DDSketch<M, BINS>,
) -> Result<(), String> {
    let Some(path) = &opts.otlp_out else {
        return Ok(());
    };
    let sketch = as_otel(sketch)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    let times = Timestamps::new(0, now);
    let mut buf = vec![0u8; otlp::encoded_len(sketch, times)];
    let len = otlp::encode(sketch, times, &mut buf).map_err(|e| e.to_string())?;
    std::fs::write(path, &buf[..len]).map_err(|e| format!("writing {path}: {e}"))
}

fn read_stdin<M: IndexMapping>(sketch: &mut DDSketch<M, BINS>) -> Result<usize, String> {
    let mut invalid = 0usize;
    // Values above 0 below the range (subnormals at the default accuracy): recorded, but
    // answered as 0 or as the range's bottom, not within alpha.
    let bottom = sketch.min_trackable().max(f64::MIN_POSITIVE);
    let mut below = 0u64;
    let stdin = io::stdin().lock();
    for (number, line) in stdin.split(b'\n').enumerate() {
        let line = line.map_err(|e| format!("reading stdin: {e}"))?;
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        let recorded = match text.parse::<f64>() {
            Ok(v) if v.is_finite() => {
                if v > 0.0 && v < bottom {
                    below += 1;
                }
                sketch.record(v).map_err(|e| e.to_string())
            }
            Ok(v) => Err(format!("{v} is not finite")),
            Err(_) if text.is_empty() => Err("empty line".to_string()),
            Err(_) => Err("not a number".to_string()),
        };
        if let Err(why) = recorded {
            invalid += 1;
            eprintln!("line {}: {why}: {text:?}", number + 1);
        }
    }
    if below > 0 {
        eprintln!(
            "note: {below} values below {bottom:e}, the sketch's range, count as 0 or as its \
             bottom: quantiles among them are not within the accuracy"
        );
    }
    Ok(invalid)
}

fn run<M: IndexMapping + 'static>(
    opts: &Options,
    protos: &[(String, Vec<u8>)],
) -> Result<ExitCode, String> {
    let mut sketch = widest_sketch::<M>(opts.alpha.unwrap_or(0.01))?;
    for (path, bytes) in protos {
        // (below the range, above it, saturated) from either decoder.
        let (below_range, above_range, saturated) = if opts.rebin {
            let report = proto::decode_rebinned(bytes, opts.convention, &mut *sketch)
                .map_err(|e| format!("{path}: {e}"))?;
            if !report.exact {
                eprintln!(
                    "note: {path}: {} values re-binned from another mapping: their quantiles \
                     are within {:.4}% of the data's",
                    report.rebinned,
                    100.0 * report.relative_error
                );
            }
            (report.below_range, report.above_range, report.saturated)
        } else {
            let report = proto::decode_into(bytes, opts.convention, &mut *sketch)
                .map_err(|e| format!("{path}: {e}"))?;
            (report.below_range, report.above_range, report.saturated)
        };
        if below_range + above_range + saturated > 0 {
            eprintln!(
                "note: {path}: {below_range} values below the range (counted as 0), \
                 {above_range} above it (clamped), {saturated} dropped from full bins"
            );
        }
    }
    merge_otlp(opts, &mut sketch)?;
    let invalid = if opts.no_stdin {
        0
    } else {
        read_stdin(&mut sketch)?
    };

    let mut out = io::stdout().lock();
    let show = |v: Option<f64>| v.map_or("none".to_string(), |v| format!("{v:?}"));
    let mut print = || -> io::Result<()> {
        writeln!(out, "count {}", sketch.count())?;
        writeln!(out, "min {}", show(sketch.min()))?;
        writeln!(out, "max {}", show(sketch.max()))?;
        for &q in &opts.quantiles {
            let v = sketch.quantile(q).map_err(io::Error::other)?;
            writeln!(out, "{} {}", quantile_name(q), show(v))?;
        }
        Ok(())
    };
    print().map_err(|e| format!("writing stdout: {e}"))?;
    write_otlp(opts, &mut sketch)?;
    if let Some(path) = &opts.proto_out {
        let mut buf = vec![0u8; proto::encoded_len(&*sketch, opts.convention)];
        let len = proto::encode(&*sketch, opts.convention, &mut buf).map_err(|e| e.to_string())?;
        std::fs::write(path, &buf[..len]).map_err(|e| format!("writing {path}: {e}"))?;
    }
    if sketch.clamped() > 0 {
        eprintln!(
            "note: {} values above the range were clamped",
            sketch.clamped()
        );
    }
    if invalid > 0 {
        eprintln!("{invalid} invalid lines");
        if !opts.skip_invalid {
            return Ok(ExitCode::from(2));
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn main() -> ExitCode {
    let mut opts = match parse_args() {
        Ok(opts) => opts,
        Err(msg) => {
            if !msg.is_empty() {
                eprintln!("error: {msg}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(1);
        }
    };
    if let Err(msg) = configure_otlp(&mut opts) {
        eprintln!("error: {msg}");
        return ExitCode::from(1);
    }
    let protos = match configure(&mut opts) {
        Ok(protos) => protos,
        Err(msg) => {
            eprintln!("error: {msg}");
            return ExitCode::from(1);
        }
    };
    // The 1 MiB sketch is built on the stack before it is boxed: give it room in debug builds.
    let worker = std::thread::Builder::new()
        .stack_size(32 << 20)
        .spawn(move || match opts.mapping.as_deref() {
            Some("cubic") => run::<CubicMapping>(&opts, &protos),
            Some("int") => run::<IntMapping>(&opts, &protos),
            Some("otel") => run::<OtelMapping>(&opts, &protos),
            _ => run::<LogMapping>(&opts, &protos),
        });
    let result = match worker.map(|w| w.join()) {
        Ok(Ok(result)) => result,
        _ => Err("the worker thread failed".to_string()),
    };
    result.unwrap_or_else(|msg| {
        eprintln!("error: {msg}");
        ExitCode::from(1)
    })
}

#[cfg(test)]
mod tests {
    use super::quantile_name;

    #[test]
    fn quantile_names() {
        assert_eq!(quantile_name(0.5), "p50");
        assert_eq!(quantile_name(0.999), "p99.9");
        assert_eq!(quantile_name(0.9999), "p99.99");
        assert_eq!(quantile_name(0.0), "p0");
        assert_eq!(quantile_name(1.0), "p100");
    }
}

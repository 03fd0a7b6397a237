//! The text exposition (version 0.0.4), for a scrape that does not ask for protobuf:
//! [`encode_text`] and [`text_len`], a classic histogram of the same buckets.

use super::buckets::{Buckets, Schema};
use super::family::{Family, Series};
use super::kind::NativeHistogram;
use super::EncodeError;
use crate::sketch::{IndexMapping, OtelMapping};
use core::fmt::{self, Write};

/// Text into a caller's buffer that never fails: past the end it writes nothing but
/// counts on, so `pos` is the length the text needs either way.
struct Text<'a> {
    buf: &'a mut [u8],
    pos: usize,
}

impl Write for Text<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        for &b in s.as_bytes() {
            if let Some(slot) = self.buf.get_mut(self.pos) {
                *slot = b;
            }
            self.pos = self.pos.saturating_add(1);
        }
        Ok(())
    }
}

impl Text<'_> {
    fn float(&mut self, v: f64) -> fmt::Result {
        if v == f64::INFINITY {
            self.write_str("+Inf")
        } else if v == f64::NEG_INFINITY {
            self.write_str("-Inf")
        } else if v.is_nan() {
            self.write_str("NaN")
        } else {
            // Rust's shortest representation that reads back as the same float.
            write!(self, "{v}")
        }
    }

    /// `s` with `\` and newlines escaped, and `"` too inside a label value.
    fn escaped(&mut self, s: &str, quote: bool) -> fmt::Result {
        for c in s.chars() {
            match c {
                '\\' => self.write_str("\\\\")?,
                '\n' => self.write_str("\\n")?,
                '"' if quote => self.write_str("\\\"")?,
                c => self.write_char(c)?,
            }
        }
        Ok(())
    }

    /// `name{labels}` or, for a bucket, `name{labels,le="edge"}`.
    fn series(
        &mut self,
        name: &str,
        suffix: &str,
        labels: &[(&str, &str)],
        le: Option<f64>,
    ) -> fmt::Result {
        write!(self, "{name}{suffix}")?;
        if labels.is_empty() && le.is_none() {
            return self.write_char(' ');
        }
        self.write_char('{')?;
        for (i, &(label, value)) in labels.iter().enumerate() {
            if i > 0 {
                self.write_char(',')?;
            }
            write!(self, "{label}=\"")?;
            self.escaped(value, true)?;
            self.write_char('"')?;
        }
        if let Some(le) = le {
            if !labels.is_empty() {
                self.write_char(',')?;
            }
            self.write_str("le=\"")?;
            self.float(le)?;
            self.write_char('"')?;
        }
        self.write_str("} ")
    }

    /// The family's `# HELP` and `# TYPE` lines, then each series' samples.
    fn family<S: NativeHistogram>(&mut self, family: &Family<'_, S>) -> fmt::Result {
        let name = family.name;
        if !family.help.is_empty() {
            write!(self, "# HELP {name} ")?;
            self.escaped(family.help, false)?;
            self.write_char('\n')?;
        }
        writeln!(self, "# TYPE {name} histogram")?;
        for series in family.series {
            // Checked by `write`: the schema is in -4..=8.
            if let Ok(schema) = Schema::of(&series.sketch.buckets_mapping()) {
                self.samples(name, series, schema)?;
            }
        }
        Ok(())
    }

    /// One series' cumulative buckets, `_sum` and `_count`.
    fn samples<S: NativeHistogram>(
        &mut self,
        name: &str,
        series: &Series<'_, S>,
        schema: Schema,
    ) -> fmt::Result {
        let (sketch, labels) = (series.sketch, series.labels);
        let mut cumulative = sketch.zeros();
        if cumulative > 0 {
            self.series(name, "_bucket", labels, Some(sketch.zero_threshold()))?;
            writeln!(self, "{cumulative}")?;
        }
        // Prometheus's bucket j is (b^(j-1), b^j]: its upper edge is OpenTelemetry's
        // lower edge of bucket j at the schema.
        // The schema is in -4..=8 (`Schema::of`): a valid scale.
        let edges = OtelMapping::with_scale(schema.schema).unwrap_or(sketch.buckets_mapping());
        // The top bucket's edge is 2^1024: written as the largest float, as Prometheus
        // does, since `+Inf` is the last line's (a second one would repeat the series).
        // Buckets above it (a decoded peer's, past the floats) have that edge too: one
        // line, after the last of them, carries them all, so each `le` stands once.
        let edge = |index: i32| edges.lower_bound(index).min(f64::MAX);
        let mut buckets = Buckets::new(sketch.buckets(), schema).peekable();
        while let Some((index, count)) = buckets.next() {
            cumulative = cumulative.saturating_add(count);
            let le = edge(index);
            if buckets.peek().is_some_and(|&(next, _)| edge(next) == le) {
                continue;
            }
            self.series(name, "_bucket", labels, Some(le))?;
            writeln!(self, "{cumulative}")?;
        }
        self.series(name, "_bucket", labels, Some(f64::INFINITY))?;
        writeln!(self, "{}", sketch.sample_count())?;
        self.series(name, "_sum", labels, None)?;
        self.float(sketch.sample_sum())?;
        self.write_char('\n')?;
        self.series(name, "_count", labels, None)?;
        writeln!(self, "{}", sketch.sample_count())
    }
}

/// Writes `family` into `buf` (as far as it goes: the length is what it would take).
fn write<S: NativeHistogram>(family: &Family<'_, S>, buf: &mut [u8]) -> Result<usize, EncodeError> {
    family.check()?;
    for series in family.series {
        Schema::of(&series.sketch.buckets_mapping())?;
    }
    let mut text = Text { buf, pos: 0 };
    // `Text` never fails, and neither do the integer and float formatters.
    let _ = text.family(family);
    Ok(text.pos)
}

/// The length of what [`encode_family`] writes, or why it would fail (other than for
/// the buffer).
pub(super) fn family_len<S: NativeHistogram>(family: &Family<'_, S>) -> Result<usize, EncodeError> {
    write(family, &mut [])
}

/// Writes `family` in the text format: one `# TYPE` line, then every series' samples.
pub(super) fn encode_family<S: NativeHistogram>(
    family: &Family<'_, S>,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let needed = family_len(family)?;
    if buf.len() < needed {
        return Err(EncodeError::BufferTooSmall { needed });
    }
    write(family, buf)
}

/// The length of what [`encode_text`] writes, or why it would fail (other than for the
/// buffer).
///
/// ```
/// use tailguard::prometheus::{encode_text, text_len};
/// use tailguard::sketch::presets;
///
/// let mut s = presets::otel_latency();
/// s.record_u64(750_000);
/// let needed = text_len("task_ns", "Task latency.", &s, &[("task", "flush")]).unwrap();
/// let mut buf = vec![0u8; needed];
/// let written = encode_text("task_ns", "Task latency.", &s, &[("task", "flush")], &mut buf).unwrap();
/// assert_eq!(written, needed);
/// assert!(buf.ends_with(b"task_ns_count{task=\"flush\"} 1\n"));
/// ```
pub fn text_len<S: NativeHistogram>(
    name: &str,
    help: &str,
    sketch: &S,
    labels: &[(&str, &str)],
) -> Result<usize, EncodeError> {
    let series = [Series { sketch, labels }];
    family_len(&Family {
        name,
        help,
        series: &series,
    })
}

/// Writes `sketch` into `buf` in Prometheus's text exposition format (version 0.0.4) as
/// a classic histogram, and returns the number of bytes written ([`text_len`]). No heap.
///
/// The buckets are the native histogram's ([`encode_metric_family`](super::encode_metric_family)),
/// cumulative, each `le` its upper edge: the zero bucket's (its threshold, when it holds
/// values), each non-empty bucket's, and `+Inf`; then `_sum` and `_count`. Label values
/// and the help text are escaped as the format says. This is what a scrape gets that
/// does not ask for protobuf ([`Format`](super::Format)): a Prometheus without native
/// histograms stores it as classic buckets, whose edges move as the sketch's bins fill.
///
/// ```
/// use tailguard::prometheus::encode_text;
/// use tailguard::sketch::{DDSketch, OtelMapping};
///
/// let mut s: DDSketch<OtelMapping, 64> =
///     DDSketch::new(OtelMapping::with_scale(0).unwrap(), 1.0).unwrap(); // buckets (2^(j-1), 2^j]
/// s.record(3.0).unwrap();
/// s.record(4.0).unwrap();
/// let mut buf = [0u8; 512];
/// let len = encode_text("m", "", &s, &[("a", "x")], &mut buf).unwrap();
/// assert_eq!(
///     core::str::from_utf8(&buf[..len]).unwrap(),
///     "# TYPE m histogram\n\
///      m_bucket{a=\"x\",le=\"4\"} 2\n\
///      m_bucket{a=\"x\",le=\"+Inf\"} 2\n\
///      m_sum{a=\"x\"} 7\n\
///      m_count{a=\"x\"} 2\n"
/// );
/// ```
pub fn encode_text<S: NativeHistogram>(
    name: &str,
    help: &str,
    sketch: &S,
    labels: &[(&str, &str)],
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let series = [Series { sketch, labels }];
    encode_family(
        &Family {
            name,
            help,
            series: &series,
        },
        buf,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prometheus::kind::sealed::Sealed;
    use crate::sketch::DDSketch;
    use std::string::String;
    use std::vec;

    fn text<const N: usize>(
        name: &str,
        help: &str,
        s: &DDSketch<OtelMapping, N>,
        labels: &[(&str, &str)],
    ) -> String {
        let mut buf = vec![0u8; text_len(name, help, s, labels).unwrap()];
        let len = encode_text(name, help, s, labels, &mut buf).unwrap();
        assert_eq!(len, buf.len());
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn cumulative_buckets_zero_bucket_and_escapes() {
        let mut s: DDSketch<OtelMapping, 64> =
            DDSketch::new(OtelMapping::with_scale(-1).unwrap(), 1.0).unwrap(); // (4^(j-1), 4^j]
        s.record(0.0).unwrap();
        s.record(2.0).unwrap(); // (1, 4]: j = 1
        s.record(4.0).unwrap();
        s.record(60.0).unwrap(); // (16, 64]: j = 3
        let t = text("m", "a\\b\nc", &s, &[("k", "q\"\\\n")]);
        let zt = s.zero_threshold();
        let want = std::format!(
            "# HELP m a\\\\b\\nc\n# TYPE m histogram\n\
             m_bucket{{k=\"q\\\"\\\\\\n\",le=\"{zt}\"}} 1\n\
             m_bucket{{k=\"q\\\"\\\\\\n\",le=\"4\"}} 3\n\
             m_bucket{{k=\"q\\\"\\\\\\n\",le=\"64\"}} 4\n\
             m_bucket{{k=\"q\\\"\\\\\\n\",le=\"+Inf\"}} 4\n\
             m_sum{{k=\"q\\\"\\\\\\n\"}} 66\n\
             m_count{{k=\"q\\\"\\\\\\n\"}} 4\n"
        );
        assert_eq!(t, want);
    }

    #[test]
    fn no_labels_no_braces_and_downscaled_edges() {
        let mut s: DDSketch<OtelMapping, 4096> =
            DDSketch::new(OtelMapping::with_scale(10).unwrap(), 1.0).unwrap();
        s.record(3.0).unwrap();
        let t = text("m", "", &s, &[]);
        // Schema 8: log2(3) * 256 = 405.75, so 3 is in Prometheus's bucket 406,
        // (2^(405/256), 2^(406/256)].
        let m8 = OtelMapping::with_scale(8).unwrap();
        let edge = m8.lower_bound(406);
        assert!(edge >= 3.0 && m8.lower_bound(405) < 3.0);
        assert!(
            t.contains(&std::format!("m_bucket{{le=\"{edge}\"}} 1\n")),
            "{t}"
        );
        assert!(t.ends_with("m_sum 3\nm_count 1\n"), "{t}");
    }

    /// The bucket of the largest floats has the edge 2^1024: written as the largest float,
    /// so `+Inf` stands once, on the last line.
    #[test]
    fn the_top_bucket_is_finite() {
        let mut s = crate::sketch::ExponentialSketch::<u32, 160>::new();
        s.record(3.0).unwrap();
        s.record(f64::INFINITY).unwrap(); // kept as f64::MAX
        let mut buf = vec![0u8; 4096];
        let len = encode_text("m", "", &s, &[], &mut buf).unwrap();
        let t = core::str::from_utf8(&buf[..len]).unwrap();
        assert_eq!(t.matches("le=\"+Inf\"").count(), 1, "{t}");
        assert!(
            t.contains(&std::format!("m_bucket{{le=\"{}\"}} 2\n", f64::MAX)),
            "{t}"
        );
    }

    #[test]
    fn every_short_buffer_is_refused() {
        let mut s = crate::sketch::presets::otel_latency();
        s.record_u64_n(5_000_000, 7);
        s.record_u64(0);
        let full = text("m", "h", &s, &[("i", "x")]);
        for len in 0..full.len() {
            let mut buf = vec![0u8; len];
            let err = encode_text("m", "h", &s, &[("i", "x")], &mut buf);
            assert_eq!(err, Err(EncodeError::BufferTooSmall { needed: full.len() }));
        }
    }
}

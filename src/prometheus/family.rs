//! [`Family`] and [`Series`]: one metric name with a sketch per label set, as Prometheus
//! groups series (a `MetricFamily` of several `Metric`s; in the text format, one `# TYPE`
//! line before all of the name's samples).

use super::{names, EncodeError, NativeHistogram};

/// One series of a [`Family`]: a sketch and the labels that tell it from the family's
/// other series.
///
/// ```
/// use tailguard::prometheus::{EncodeError, Family, Format, Series};
/// use tailguard::sketch::presets;
///
/// let mut get = presets::otel_latency();
/// get.record_u64(3_000_000);
/// let put = presets::otel_latency();
/// // Label sets tell a family's series apart: the same set twice is refused.
/// let twice = [
///     Series { sketch: &get, labels: &[("method", "GET"), ("route", "/a")] },
///     Series { sketch: &put, labels: &[("route", "/a"), ("method", "GET")] }, // any order
/// ];
/// let family = Family { name: "latency_ns", help: "", series: &twice };
/// assert_eq!(Format::Text.family_len(&family), Err(EncodeError::DuplicateSeries));
/// // And each label name must be a valid one, not `le`.
/// let le = [Series { sketch: &get, labels: &[("le", "1")] }];
/// let family = Family { name: "latency_ns", help: "", series: &le };
/// assert_eq!(Format::Text.family_len(&family), Err(EncodeError::InvalidName));
/// ```
#[derive(Debug)]
pub struct Series<'a, S> {
    /// The sketch, written as a native histogram.
    pub sketch: &'a S,
    /// Its labels, in the order written; each name `[a-zA-Z_][a-zA-Z0-9_]*` and not `le`.
    pub labels: &'a [(&'a str, &'a str)],
}

impl<S> Clone for Series<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Series<'_, S> {}

/// A metric family: a name, its help text, and one [`Series`] per label set (a route
/// each, say), written by [`Format::encode_family`](super::Format::encode_family) and
/// served by `scrape` (feature `std`).
///
/// ```
/// use tailguard::prometheus::{Family, Format, Series};
/// use tailguard::sketch::presets;
///
/// let (mut api, mut health) = (presets::otel_latency(), presets::otel_latency());
/// api.record_u64(5_000_000);
/// health.record_u64(200_000);
/// let series = [
///     Series { sketch: &api, labels: &[("route", "/api")] },
///     Series { sketch: &health, labels: &[("route", "/health")] },
/// ];
/// let family = Family { name: "http_latency_ns", help: "Request latency.", series: &series };
/// let mut buf = [0u8; 1024];
/// let len = Format::Text.encode_family(&family, &mut buf).unwrap();
/// let text = core::str::from_utf8(&buf[..len]).unwrap();
/// assert_eq!(text.matches("# TYPE http_latency_ns histogram").count(), 1);
/// assert!(text.contains("http_latency_ns_count{route=\"/health\"} 1"));
/// ```
#[derive(Debug)]
pub struct Family<'a, S> {
    /// The metric name, `[a-zA-Z_:][a-zA-Z0-9_:]*`.
    pub name: &'a str,
    /// The help text (left out when empty).
    pub help: &'a str,
    /// The series, each with a label set no other series of the family has.
    pub series: &'a [Series<'a, S>],
}

impl<S> Clone for Family<'_, S> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<S> Copy for Family<'_, S> {}

impl<S: NativeHistogram> Family<'_, S> {
    /// The names valid ([`EncodeError::InvalidName`]) and no two series with the same
    /// label set, in any order ([`EncodeError::DuplicateSeries`]): Prometheus would
    /// refuse the scrape.
    pub(super) fn check(&self) -> Result<(), EncodeError> {
        for (i, series) in self.series.iter().enumerate() {
            names::check(self.name, series.labels)?;
            let earlier = self.series.get(..i).unwrap_or(&[]);
            if earlier.iter().any(|e| same_labels(e.labels, series.labels)) {
                return Err(EncodeError::DuplicateSeries);
            }
        }
        names::check(self.name, &[])
    }
}

/// Whether two label sets are the same series to Prometheus: the same labels in any order,
/// a label with an empty value being no label (Prometheus drops those).
fn same_labels(a: &[(&str, &str)], b: &[(&str, &str)]) -> bool {
    let within = |x: &[(&str, &str)], y: &[(&str, &str)]| {
        x.iter().filter(|l| !l.1.is_empty()).all(|l| y.contains(l))
    };
    within(a, b) && within(b, a)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prometheus::test_decode::{family, family_metrics};
    use crate::prometheus::{encode_metric_family, encode_text, Format};
    use crate::sketch::{presets, ExponentialSketch};
    use std::vec;

    /// Each series of a family is the `Metric` one-series encoding writes for it, under
    /// one name: in protobuf one `MetricFamily`, in text one `# TYPE` line and each
    /// series' samples as `encode_text` writes them.
    #[test]
    fn a_family_holds_each_series_as_its_own_encoding_would() {
        let (mut a, mut b) = (
            ExponentialSketch::<u16, 64>::new(),
            ExponentialSketch::<u16, 64>::new(),
        );
        for v in 1..=100u64 {
            a.record_u64(v * 1_000);
            b.record_u64(v * v * 10_000);
        }
        b.record_u64(0);
        let series = [
            Series {
                sketch: &a,
                labels: &[("route", "/a")],
            },
            Series {
                sketch: &b,
                labels: &[("route", "/b"), ("code", "200")],
            },
        ];
        let fam = Family {
            name: "rpc_ns",
            help: "RPC.",
            series: &series,
        };

        let mut buf = vec![0u8; Format::Protobuf.family_len(&fam).unwrap()];
        let len = Format::Protobuf.encode_family(&fam, &mut buf).unwrap();
        assert_eq!(len, buf.len());
        let (name, help, metrics) = family_metrics(&buf);
        assert_eq!(
            (name.as_str(), help.as_str(), metrics.len()),
            ("rpc_ns", "RPC.", 2)
        );
        for (metric, s) in metrics.iter().zip(&series) {
            let mut one = vec![0u8; 4096];
            let n = encode_metric_family("rpc_ns", "RPC.", s.sketch, s.labels, &mut one).unwrap();
            let alone = family(&one[..n]);
            assert_eq!(metric.labels, alone.labels);
            assert_eq!(metric.histogram.buckets(), alone.histogram.buckets());
            assert_eq!(
                (
                    metric.histogram.count,
                    metric.histogram.schema,
                    metric.histogram.zero_count
                ),
                (
                    alone.histogram.count,
                    alone.histogram.schema,
                    alone.histogram.zero_count
                )
            );
        }

        let mut text = vec![0u8; Format::Text.family_len(&fam).unwrap()];
        Format::Text.encode_family(&fam, &mut text).unwrap();
        let text = std::string::String::from_utf8(text).unwrap();
        let mut want = std::string::String::from("# HELP rpc_ns RPC.\n# TYPE rpc_ns histogram\n");
        for s in &series {
            let mut one = vec![0u8; 8192];
            let n = encode_text("rpc_ns", "", s.sketch, s.labels, &mut one).unwrap();
            let one = core::str::from_utf8(&one[..n]).unwrap();
            want.push_str(one.strip_prefix("# TYPE rpc_ns histogram\n").unwrap());
        }
        assert_eq!(text, want);
    }

    #[test]
    fn a_repeated_label_set_or_a_bad_name_is_a_typed_error_in_both_formats() {
        let s = presets::otel_latency();
        let twice = [
            Series {
                sketch: &s,
                labels: &[("a", "1"), ("b", "2")],
            },
            Series {
                sketch: &s,
                labels: &[("b", "2"), ("a", "1")],
            },
        ];
        // A label with an empty value is no label to Prometheus: the same series.
        let empty = [
            Series {
                sketch: &s,
                labels: &[("route", "")],
            },
            Series {
                sketch: &s,
                labels: &[],
            },
        ];
        let bad_label = [Series {
            sketch: &s,
            labels: &[("le", "1")],
        }];
        for format in [Format::Protobuf, Format::Text] {
            for series in [&twice[..], &empty[..]] {
                let fam = Family {
                    name: "m",
                    help: "",
                    series,
                };
                assert_eq!(format.family_len(&fam), Err(EncodeError::DuplicateSeries));
                assert_eq!(
                    format.encode_family(&fam, &mut [0u8; 4096]),
                    Err(EncodeError::DuplicateSeries)
                );
            }
            let fam = Family {
                name: "m",
                help: "",
                series: &bad_label,
            };
            assert_eq!(
                format.encode_family(&fam, &mut [0u8; 4096]),
                Err(EncodeError::InvalidName)
            );
            let fam: Family<'_, presets::OtelLatency> = Family {
                name: "1m",
                help: "",
                series: &[],
            };
            assert_eq!(
                format.encode_family(&fam, &mut [0u8; 64]),
                Err(EncodeError::InvalidName)
            );
            // Different values are different series.
            let other = [
                Series {
                    sketch: &s,
                    labels: &[("a", "1")],
                },
                Series {
                    sketch: &s,
                    labels: &[("a", "2")],
                },
            ];
            let fam = Family {
                name: "m",
                help: "",
                series: &other,
            };
            let needed = format.family_len(&fam).unwrap();
            assert_eq!(
                format.encode_family(&fam, &mut vec![0u8; needed - 1]),
                Err(EncodeError::BufferTooSmall { needed })
            );
            assert_eq!(
                format.encode_family(&fam, &mut vec![0u8; needed]),
                Ok(needed)
            );
        }
    }
}

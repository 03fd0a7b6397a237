//! A `/metrics` handler's whole answer (feature `std`): [`scrape`], the families in the
//! exposition a scrape's `Accept` header asks for, with the `Content-Type` to send.

use std::vec;
use std::vec::Vec;

use super::{EncodeError, Family, Format, NativeHistogram};

/// What a `/metrics` handler sends: the `Content-Type` header's value and the body.
///
/// ```
/// use tailguard::prometheus::{scrape, EncodeError, Family, Series};
/// use tailguard::sketch::presets;
///
/// let mut latency = presets::otel_latency();
/// latency.record_u64(5_000_000);
/// let series = [Series { sketch: &latency, labels: &[] }];
/// let families = [Family { name: "job_latency_ns", help: "", series: &series }];
/// // No Accept header (or one without protobuf): the text format.
/// let answer = scrape("", &families).unwrap();
/// assert!(answer.content_type.starts_with("text/plain"));
/// assert!(String::from_utf8(answer.body).unwrap().contains("job_latency_ns_count 1\n"));
/// // Two families of one name: Prometheus would refuse the scrape, so this does.
/// let twice = [families[0], families[0]];
/// assert_eq!(scrape("", &twice), Err(EncodeError::DuplicateSeries));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scrape {
    /// The format's media type ([`Format::content_type`]).
    pub content_type: &'static str,
    /// Every family, in the order given.
    pub body: Vec<u8>,
}

/// Whether two families' names clash in one scrape: the same name, or one the other's with
/// a suffix of the text format's histogram samples (`m` writes `m_bucket`, `m_count` and
/// `m_sum`, so a family `m_count` beside it is a second `TYPE` for `m` to the Go parser).
fn collide(a: &str, b: &str) -> bool {
    let suffixed = |long: &str, short: &str| {
        long.strip_prefix(short)
            .is_some_and(|rest| ["_bucket", "_count", "_sum"].contains(&rest))
    };
    a == b || suffixed(a, b) || suffixed(b, a)
}

/// The answer to a scrape whose `Accept` header is `accept` (empty if it sent none):
/// every family in the format it asks for ([`Format::from_accept`]: protobuf native
/// histograms for a Prometheus with them enabled, the text format otherwise), one after
/// the other. A handler in any HTTP server is then three lines: read the header, call
/// this, answer with the content type and the body (and 500 on an error, which is the
/// program's: bad names or a repeated series, never the scraper's input).
///
/// Families must have distinct names, none another's with `_bucket`, `_count` or `_sum`
/// appended (the text format's samples of a histogram: the Go parser and client_golang
/// refuse such a scrape in either format), [`EncodeError::DuplicateSeries`] otherwise: put
/// a name's label sets in one [`Family`]. With hyper (`examples/prometheus_gateway.rs`):
///
/// ```
/// use tailguard::prometheus::{scrape, Family, Series};
/// use tailguard::sketch::presets;
///
/// let mut latency = presets::otel_latency();
/// latency.record_u64(5_000_000);
/// let series = [Series { sketch: &latency, labels: &[("route", "/api")] }];
/// let families = [Family { name: "http_latency_ns", help: "Request latency.", series: &series }];
///
/// // let accept = request.headers().get(ACCEPT).and_then(|v| v.to_str().ok()).unwrap_or("");
/// let accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";
/// let answer = scrape(accept, &families).unwrap();
/// assert!(answer.content_type.starts_with("application/vnd.google.protobuf"));
/// // Response::builder().header(CONTENT_TYPE, answer.content_type).body(answer.body)
/// let text = scrape("text/plain", &families).unwrap();
/// assert!(String::from_utf8(text.body).unwrap().contains("http_latency_ns_count{route=\"/api\"} 1"));
/// ```
pub fn scrape<S: NativeHistogram>(
    accept: &str,
    families: &[Family<'_, S>],
) -> Result<Scrape, EncodeError> {
    let format = Format::from_accept(accept);
    let mut len = 0usize;
    for (i, family) in families.iter().enumerate() {
        let earlier = families.get(..i).unwrap_or(&[]);
        if earlier.iter().any(|e| collide(e.name, family.name)) {
            return Err(EncodeError::DuplicateSeries);
        }
        len = len.saturating_add(format.family_len(family)?);
    }
    let mut body = vec![0u8; len];
    let mut at = 0usize;
    for family in families {
        let rest = body.get_mut(at..).unwrap_or(&mut []);
        at = at.saturating_add(format.encode_family(family, rest)?);
    }
    body.truncate(at);
    Ok(Scrape {
        content_type: format.content_type(),
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prometheus::{encode_metric_family, encode_text, Series};
    use crate::sketch::presets;

    #[test]
    fn families_follow_one_another_in_the_format_asked_for() {
        let (mut a, mut b) = (presets::otel_latency(), presets::otel_latency());
        a.record_u64(5_000_000);
        b.record_u64_n(9_000_000, 3);
        let sa = [Series {
            sketch: &a,
            labels: &[],
        }];
        let sb = [Series {
            sketch: &b,
            labels: &[("x", "1")],
        }];
        let families = [
            Family {
                name: "a_ns",
                help: "A.",
                series: &sa,
            },
            Family {
                name: "b_ns",
                help: "",
                series: &sb,
            },
        ];
        let delimited = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";
        for (accept, format) in [(delimited, Format::Protobuf), ("", Format::Text)] {
            let got = scrape(accept, &families).unwrap();
            assert_eq!(got.content_type, format.content_type());
            let mut want = vec![0u8; 4096];
            let n = match format {
                Format::Protobuf => encode_metric_family("a_ns", "A.", &a, &[], &mut want),
                Format::Text => encode_text("a_ns", "A.", &a, &[], &mut want),
            }
            .unwrap();
            let rest = &mut want[n..];
            let m = match format {
                Format::Protobuf => encode_metric_family("b_ns", "", &b, &[("x", "1")], rest),
                Format::Text => encode_text("b_ns", "", &b, &[("x", "1")], rest),
            }
            .unwrap();
            assert_eq!(got.body, want[..n + m]);
        }
    }

    /// A histogram `m` writes `m_bucket`, `m_count` and `m_sum` in the text format, so a
    /// family named one of those in the same scrape collides with it: the Go parser
    /// (`expfmt`, promtool's `check metrics`, client_golang's gatherer) refuses the body
    /// ("second TYPE line for metric name"). Refused, in either order and either format.
    #[test]
    fn a_family_named_as_another_histograms_samples_is_refused() {
        let s = presets::otel_latency();
        let series = [Series {
            sketch: &s,
            labels: &[],
        }];
        fn fam<'a, S>(name: &'a str, series: &'a [Series<'a, S>]) -> Family<'a, S> {
            Family {
                name,
                help: "",
                series,
            }
        }
        for suffix in ["_bucket", "_count", "_sum"] {
            let other = std::format!("m{suffix}");
            for accept in ["", "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited"] {
                assert_eq!(
                    scrape(accept, &[fam("m", &series), fam(&other, &series)]),
                    Err(EncodeError::DuplicateSeries),
                    "{other}"
                );
                assert_eq!(
                    scrape(accept, &[fam(&other, &series), fam("m", &series)]),
                    Err(EncodeError::DuplicateSeries),
                    "{other}"
                );
            }
        }
        // Other names that merely share a prefix are fine.
        for other in ["m_buckets", "m_total", "mm_count", "m_count_x", "n_sum"] {
            assert!(
                scrape("", &[fam("m", &series), fam(other, &series)]).is_ok(),
                "{other}"
            );
        }
    }

    #[test]
    fn a_repeated_name_or_a_bad_one_is_a_typed_error() {
        let s = presets::otel_latency();
        let series = [Series {
            sketch: &s,
            labels: &[],
        }];
        let f = Family {
            name: "a",
            help: "",
            series: &series,
        };
        assert_eq!(scrape("", &[f, f]), Err(EncodeError::DuplicateSeries));
        let bad = Family {
            name: "1a",
            help: "",
            series: &series,
        };
        assert_eq!(scrape("", &[bad]), Err(EncodeError::InvalidName));
        let empty: [Family<'_, presets::OtelLatency>; 0] = [];
        assert_eq!(scrape("", &empty).unwrap().body, Vec::<u8>::new());
    }
}

//! Which exposition a scrape asked for: [`Format`], from its `Accept` header.

use super::{protobuf, text, EncodeError, Family, NativeHistogram, Series};

/// The `Content-Type` of [`Format::Protobuf`].
const PROTOBUF: &str =
    "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited";
/// The `Content-Type` of [`Format::Text`].
const TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The two expositions a scrape can get: the delimited protobuf Prometheus asks for
/// first when it ingests native histograms, and the text format for every other scrape.
///
/// ```
/// use tailguard::prometheus::Format;
///
/// // What Prometheus 2.42 with --enable-feature=native-histograms sends.
/// let accept = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;\
///               encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3,*/*;q=0.1";
/// assert_eq!(Format::from_accept(accept), Format::Protobuf);
/// assert_eq!(Format::from_accept("text/plain;version=0.0.4"), Format::Text);
/// assert_eq!(Format::from_accept(""), Format::Text);
/// assert!(Format::Protobuf.content_type().contains("encoding=delimited"));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub enum Format {
    /// One length-delimited `io.prometheus.client.MetricFamily`
    /// ([`encode_metric_family`](super::encode_metric_family)): native histograms.
    Protobuf,
    /// The text format, version 0.0.4 ([`encode_text`](super::encode_text)): a classic histogram.
    Text,
}

/// Whether a media range's parameters name the delimited `MetricFamily` and its weight
/// is not 0.
fn delimited_metric_family<'a>(params: impl Iterator<Item = &'a str>) -> bool {
    let (mut proto, mut delimited, mut weighted) = (false, false, true);
    for param in params {
        let (key, value) = param.split_once('=').unwrap_or((param, ""));
        let (key, value) = (key.trim(), value.trim().trim_matches('"'));
        if key.eq_ignore_ascii_case("proto") {
            proto = value == "io.prometheus.client.MetricFamily";
        } else if key.eq_ignore_ascii_case("encoding") {
            delimited = value == "delimited";
        } else if key.eq_ignore_ascii_case("q") {
            // "0", "0.0", "0.000": refused. Anything else is some weight above 0.
            weighted = !value
                .trim_start_matches('0')
                .trim_start_matches('.')
                .trim_start_matches('0')
                .is_empty();
        }
    }
    proto && delimited && weighted
}

impl Format {
    /// [`Protobuf`](Format::Protobuf) if `accept` (an HTTP `Accept` header's value)
    /// lists `application/vnd.google.protobuf` with `proto=io.prometheus.client.MetricFamily`
    /// and `encoding=delimited` and a weight above 0, whatever the other ranges'
    /// weights; otherwise [`Text`](Format::Text), which every scraper reads.
    pub fn from_accept(accept: &str) -> Format {
        let protobuf = accept.split(',').any(|range| {
            let mut parts = range.split(';');
            let media = parts.next().unwrap_or("").trim();
            media.eq_ignore_ascii_case("application/vnd.google.protobuf")
                && delimited_metric_family(parts)
        });
        if protobuf {
            Format::Protobuf
        } else {
            Format::Text
        }
    }

    /// The response's `Content-Type`.
    pub fn content_type(self) -> &'static str {
        match self {
            Format::Protobuf => PROTOBUF,
            Format::Text => TEXT,
        }
    }

    /// The length of what [`encode`](Self::encode) writes
    /// ([`metric_family_len`](super::metric_family_len) or [`text_len`](super::text_len)).
    ///
    /// ```
    /// use tailguard::prometheus::{EncodeError, Format};
    /// use tailguard::sketch::presets;
    ///
    /// let mut s = presets::otel_latency();
    /// s.record_u64(2_000_000);
    /// let needed = Format::Protobuf.encoded_len("rpc_ns", "RPC latency.", &s, &[]).unwrap();
    /// let mut buf = vec![0u8; needed]; // exactly what `encode` writes
    /// assert_eq!(Format::Protobuf.encode("rpc_ns", "RPC latency.", &s, &[], &mut buf), Ok(needed));
    /// // A bad name is refused before any buffer is involved.
    /// assert_eq!(Format::Text.encoded_len("rpc-ns", "", &s, &[]), Err(EncodeError::InvalidName));
    /// ```
    pub fn encoded_len<S: NativeHistogram>(
        self,
        name: &str,
        help: &str,
        sketch: &S,
        labels: &[(&str, &str)],
    ) -> Result<usize, EncodeError> {
        let series = [Series { sketch, labels }];
        self.family_len(&Family {
            name,
            help,
            series: &series,
        })
    }

    /// Writes `sketch` in this format ([`encode_metric_family`](super::encode_metric_family)
    /// or [`encode_text`](super::encode_text)).
    ///
    /// ```
    /// use tailguard::prometheus::{EncodeError, Format};
    /// use tailguard::sketch::presets;
    ///
    /// let mut s = presets::otel_latency();
    /// s.record_u64_n(2_000_000, 3);
    /// let mut buf = [0u8; 1024];
    /// let len = Format::Text.encode("rpc_ns", "RPC latency.", &s, &[("peer", "db")], &mut buf).unwrap();
    /// let text = core::str::from_utf8(&buf[..len]).unwrap();
    /// assert!(text.starts_with("# HELP rpc_ns RPC latency.\n# TYPE rpc_ns histogram\n"));
    /// assert!(text.contains("rpc_ns_count{peer=\"db\"} 3\n"));
    /// // Too small a buffer says how much is needed.
    /// let err = Format::Text.encode("rpc_ns", "RPC latency.", &s, &[("peer", "db")], &mut buf[..16]);
    /// assert_eq!(err, Err(EncodeError::BufferTooSmall { needed: len }));
    /// ```
    pub fn encode<S: NativeHistogram>(
        self,
        name: &str,
        help: &str,
        sketch: &S,
        labels: &[(&str, &str)],
        buf: &mut [u8],
    ) -> Result<usize, EncodeError> {
        let series = [Series { sketch, labels }];
        self.encode_family(
            &Family {
                name,
                help,
                series: &series,
            },
            buf,
        )
    }

    /// The length of what [`encode_family`](Self::encode_family) writes, or why it would
    /// fail (other than for the buffer).
    ///
    /// ```
    /// use tailguard::prometheus::{Family, Format, Series};
    /// use tailguard::sketch::presets;
    ///
    /// let (mut a, mut b) = (presets::otel_latency(), presets::otel_latency());
    /// a.record_u64(1_000_000);
    /// b.record_u64(9_000_000);
    /// let series = [
    ///     Series { sketch: &a, labels: &[("shard", "a")] },
    ///     Series { sketch: &b, labels: &[("shard", "b")] },
    /// ];
    /// let family = Family { name: "shard_latency_ns", help: "Per shard.", series: &series };
    /// for format in [Format::Text, Format::Protobuf] {
    ///     let needed = format.family_len(&family).unwrap();
    ///     let mut buf = vec![0u8; needed];
    ///     assert_eq!(format.encode_family(&family, &mut buf), Ok(needed));
    /// }
    /// ```
    pub fn family_len<S: NativeHistogram>(
        self,
        family: &Family<'_, S>,
    ) -> Result<usize, EncodeError> {
        match self {
            Format::Protobuf => protobuf::family_len(family),
            Format::Text => text::family_len(family),
        }
    }

    /// Writes `family` in this format, a series per label set under one name: one
    /// delimited `MetricFamily` with a `Metric` per series, or one `# TYPE` line before
    /// every series' samples. [`encode`](Self::encode) is a family of one series.
    /// Series with the same label set are [`EncodeError::DuplicateSeries`].
    ///
    /// ```
    /// use tailguard::prometheus::{Family, Format, Series};
    /// use tailguard::sketch::presets;
    ///
    /// let (mut a, mut b) = (presets::otel_latency(), presets::otel_latency());
    /// a.record_u64(1_000_000);
    /// b.record_u64_n(9_000_000, 2);
    /// let series = [
    ///     Series { sketch: &a, labels: &[("shard", "a")] },
    ///     Series { sketch: &b, labels: &[("shard", "b")] },
    /// ];
    /// let family = Family { name: "shard_latency_ns", help: "Per shard.", series: &series };
    /// let mut buf = [0u8; 2048];
    /// let len = Format::Text.encode_family(&family, &mut buf).unwrap();
    /// let text = core::str::from_utf8(&buf[..len]).unwrap();
    /// // One TYPE line for the name, then each series' samples.
    /// assert_eq!(text.matches("# TYPE shard_latency_ns histogram").count(), 1);
    /// assert!(text.contains("shard_latency_ns_count{shard=\"a\"} 1\n"));
    /// assert!(text.contains("shard_latency_ns_count{shard=\"b\"} 2\n"));
    /// ```
    pub fn encode_family<S: NativeHistogram>(
        self,
        family: &Family<'_, S>,
        buf: &mut [u8],
    ) -> Result<usize, EncodeError> {
        match self {
            Format::Protobuf => protobuf::encode_family(family, buf),
            Format::Text => text::encode_family(family, buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accept_headers() {
        let p = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited";
        assert_eq!(Format::from_accept(p), Format::Protobuf);
        let spaced = "text/plain;q=0.5, Application/Vnd.Google.Protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited; q=0.9";
        assert_eq!(Format::from_accept(spaced), Format::Protobuf);
        for text in [
            "",
            "*/*",
            "text/plain; version=0.0.4",
            "application/openmetrics-text; version=1.0.0",
            // Not delimited, another message, or refused.
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=text",
            "application/vnd.google.protobuf;proto=other.Message;encoding=delimited",
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0",
            "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.000",
        ] {
            assert_eq!(Format::from_accept(text), Format::Text, "{text}");
        }
        let weighted = "application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.01";
        assert_eq!(Format::from_accept(weighted), Format::Protobuf);
    }
}

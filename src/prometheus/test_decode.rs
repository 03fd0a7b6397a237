//! For the tests: a small decoder of what the encoder writes (one delimited
//! `MetricFamily`, its `Metric`s and native `Histogram`s), written from the .proto's
//! field numbers, not from the encoder.

use std::string::String;
use std::vec::Vec;

#[derive(Debug, Default)]
pub(super) struct Histogram {
    pub(super) count: u64,
    pub(super) sum: f64,
    pub(super) schema: i32,
    pub(super) zero_threshold: f64,
    pub(super) zero_count: u64,
    pub(super) spans: Vec<(i32, u32)>,
    pub(super) deltas: Vec<i64>,
}

impl Histogram {
    /// The non-empty buckets, `(index, count)`, from the spans and deltas.
    pub(super) fn buckets(&self) -> Vec<(i32, u64)> {
        let (mut out, mut index, mut count, mut deltas) =
            (Vec::new(), 0i32, 0i64, self.deltas.iter());
        for &(offset, len) in &self.spans {
            index += offset;
            for _ in 0..len {
                count += deltas.next().unwrap();
                if count > 0 {
                    out.push((index, count as u64));
                }
                index += 1;
            }
        }
        assert!(deltas.next().is_none(), "more deltas than the spans hold");
        out
    }
}

#[derive(Debug, Default)]
pub(super) struct Family {
    pub(super) name: String,
    pub(super) labels: Vec<(String, String)>,
    pub(super) histogram: Histogram,
}

struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    fn varint(&mut self) -> u64 {
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.0[0];
            self.0 = &self.0[1..];
            v |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return v;
            }
        }
        panic!("varint too long")
    }

    fn take(&mut self, n: usize) -> &'a [u8] {
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        head
    }

    fn len_delimited(&mut self) -> &'a [u8] {
        let n = self.varint() as usize;
        self.take(n)
    }

    fn double(&mut self) -> f64 {
        f64::from_le_bytes(self.take(8).try_into().unwrap())
    }

    /// Each field: (number, wire type); the caller reads the value.
    fn fields(mut self, mut f: impl FnMut(u32, u8, &mut Bytes<'a>)) {
        while !self.0.is_empty() {
            let tag = self.varint();
            f((tag >> 3) as u32, (tag & 7) as u8, &mut self);
        }
    }
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

fn string(b: &[u8]) -> String {
    String::from_utf8(b.to_vec()).unwrap()
}

fn histogram(bytes: &[u8]) -> Histogram {
    let mut h = Histogram::default();
    Bytes(bytes).fields(|field, wire, b| match (field, wire) {
        (1, 0) => h.count = b.varint(),
        (2, 1) => h.sum = b.double(),
        (5, 0) => h.schema = unzigzag(b.varint()) as i32,
        (6, 1) => h.zero_threshold = b.double(),
        (7, 0) => h.zero_count = b.varint(),
        (12, 2) => {
            let (mut offset, mut len) = (0, 0);
            Bytes(b.len_delimited()).fields(|field, _, b| match field {
                1 => offset = unzigzag(b.varint()) as i32,
                2 => len = b.varint() as u32,
                _ => panic!("span field {field}"),
            });
            h.spans.push((offset, len));
        }
        (13, 2) => {
            let mut packed = Bytes(b.len_delimited());
            while !packed.0.is_empty() {
                h.deltas.push(unzigzag(packed.varint()));
            }
        }
        _ => panic!("histogram field {field} wire type {wire}"),
    });
    h
}

/// A `Metric`: its labels and its histogram.
#[derive(Debug, Default)]
pub(super) struct Metric {
    pub(super) labels: Vec<(String, String)>,
    pub(super) histogram: Histogram,
}

/// The family of `bytes`, which it must fill exactly, with every metric (of type
/// histogram).
pub(super) fn family_metrics(bytes: &[u8]) -> (String, String, Vec<Metric>) {
    let mut outer = Bytes(bytes);
    let body = outer.len_delimited();
    assert!(outer.0.is_empty(), "bytes after the family");
    let (mut name, mut help, mut kind, mut metrics) = (String::new(), String::new(), 0, Vec::new());
    Bytes(body).fields(|field, wire, b| match (field, wire) {
        (1, 2) => name = string(b.len_delimited()),
        (2, 2) => help = string(b.len_delimited()),
        (3, 0) => kind = b.varint(),
        (4, 2) => {
            let mut m = Metric::default();
            Bytes(b.len_delimited()).fields(|field, wire, b| match (field, wire) {
                (1, 2) => {
                    let (mut name, mut value) = (String::new(), String::new());
                    Bytes(b.len_delimited()).fields(|field, _, b| match field {
                        1 => name = string(b.len_delimited()),
                        2 => value = string(b.len_delimited()),
                        _ => panic!("label field {field}"),
                    });
                    m.labels.push((name, value));
                }
                (7, 2) => m.histogram = histogram(b.len_delimited()),
                _ => panic!("metric field {field} wire type {wire}"),
            });
            metrics.push(m);
        }
        _ => panic!("family field {field} wire type {wire}"),
    });
    assert_eq!(kind, 4, "a histogram family");
    (name, help, metrics)
}

/// The one family of `bytes`, which it must fill exactly, with its one metric.
pub(super) fn family(bytes: &[u8]) -> Family {
    let (name, _help, mut metrics) = family_metrics(bytes);
    assert_eq!(metrics.len(), 1, "one histogram metric");
    let Metric { labels, histogram } = metrics.remove(0);
    Family {
        name,
        labels,
        histogram,
    }
}

//! Merging with DataDog's Go and Java libraries: the mappings their accuracy constructors
//! build, against the mapping tailguard writes for the same accuracy (tests/interop/datadog:
//! `go-constructors.txt` and `java-constructors.txt`, made by `run.sh` from sketches-go and
//! sketches-java with `constructors.go` and `Constructors.java`; see the README there).
//!
//! Go merges two sketches whose gamma and `indexOffset` are each within a relative `1e-12`
//! (`withinTolerance` in its mappings' `Equals`); Java only when both are the same bits
//! (`Double.compare` in `LogLikeIndexMapping.equals`). This test pins where a sketch the
//! library built from an accuracy merges with tailguard's message of that accuracy, as the
//! proto module's docs ("Merging in Go and Java") list it.

use std::path::PathBuf;

use tailguard::proto::{self, decode_into, decode_rebinned, DecodeError, IndexConvention};
use tailguard::sketch::{CubicMapping, DDSketch, IndexMapping, IntMapping, LogMapping};

/// `(kind, i, x, y)` of every line of a fixture.
fn read(name: &str) -> Vec<(String, u32, f64, f64)> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/interop/datadog")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    let hex = |s: &str| f64::from_bits(u64::from_str_radix(s, 16).unwrap());
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (
                f[0].to_string(),
                f[1].parse().unwrap(),
                hex(f[2]),
                hex(f[3]),
            )
        })
        .collect()
}

/// Go's `withinTolerance(x, y, 1e-12)`.
fn go_equal(x: f64, y: f64) -> bool {
    if x == 0.0 || y == 0.0 {
        x.abs() <= 1e-12 && y.abs() <= 1e-12
    } else {
        (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
    }
}

/// The accuracy of line `i`: `i * 0.00025`, one multiplication, as Go and Java compute it.
fn accuracy(i: u32) -> f64 {
    f64::from(i) * 0.00025
}

/// gamma and `indexOffset` of the message tailguard writes for `IntMapping` of `k`.
fn int_layout(k: u32) -> (f64, f64) {
    let mut s =
        DDSketch::<IntMapping, 64>::new(IntMapping::with_mantissa_bits(k).unwrap(), 1.0).unwrap();
    s.record(1.0).unwrap();
    let mut buf = [0u8; 256];
    let len = proto::encode(&s, IndexConvention::GoJava, &mut buf).unwrap();
    let m = proto::read_mapping(&buf[..len]).unwrap();
    (m.gamma(), m.index_offset())
}

/// A message of one value at key `key` under a `LINEAR` mapping of this gamma and offset.
fn linear_message(gamma: f64, offset: f64, key: i32) -> Vec<u8> {
    // mapping {gamma, indexOffset, LINEAR}, positiveValues {binCounts {key: 1}}
    let mut mapping = vec![0x09];
    mapping.extend(gamma.to_le_bytes());
    mapping.push(0x11);
    mapping.extend(offset.to_le_bytes());
    mapping.extend([0x18, 0x01]);
    let zigzag = ((key << 1) ^ (key >> 31)) as u32;
    let mut entry = vec![0x08];
    let mut v = zigzag;
    while v >= 0x80 {
        entry.push((v as u8) | 0x80);
        v >>= 7;
    }
    entry.push(v as u8);
    entry.push(0x11);
    entry.extend(1.0f64.to_le_bytes());
    let mut store = vec![0x0a, entry.len() as u8];
    store.extend(entry);
    let mut msg = vec![0x0a, mapping.len() as u8];
    msg.extend(mapping);
    msg.extend([0x12, store.len() as u8]);
    msg.extend(store);
    msg
}

#[test]
fn log_and_cubic_accuracy_constructors_merge_as_documented() {
    let (go, java) = (read("go-constructors.txt"), read("java-constructors.txt"));
    let mut java_cubic_off = Vec::new();
    let mut n = 0;
    for ((kind, i, go_log, go_cubic), (kind_j, i_j, java_log, java_cubic)) in go.iter().zip(&java) {
        assert_eq!((kind, i), (kind_j, i_j));
        if kind != "accuracy" {
            continue;
        }
        n += 1;
        let a = accuracy(*i);
        let log = LogMapping::with_relative_accuracy(a).unwrap().gamma();
        let cubic = CubicMapping::with_relative_accuracy(a).unwrap().gamma();
        // Go: every accuracy, both mappings (indexOffset 0 on both sides).
        assert!(go_equal(log, *go_log), "Go log at {a}");
        assert!(go_equal(cubic, *go_cubic), "Go cubic at {a}");
        // Java: the same bits for the logarithmic mapping at every accuracy ...
        assert_eq!(log.to_bits(), java_log.to_bits(), "Java log at {a}");
        // ... and for the cubic one but where Java's Math.pow rounds another way.
        if cubic.to_bits() != java_cubic.to_bits() {
            assert!(go_equal(cubic, *java_cubic));
            java_cubic_off.push(*i);
        }
    }
    assert_eq!(n, 400);
    println!("Java's cubic gamma is not tailguard's at {java_cubic_off:?} (x 0.025 %)");
    assert_eq!(
        java_cubic_off,
        [63, 69, 89, 147, 186, 187, 226, 235, 245, 252, 285, 288, 318, 361, 364, 365, 385]
    );
    // None at a multiple of 0.5 %.
    assert!(java_cubic_off.iter().all(|i| i % 20 != 0));
}

#[test]
fn linear_accuracy_constructors_merge_and_decode_as_documented() {
    let (go, java) = (read("go-constructors.txt"), read("java-constructors.txt"));
    let linear = |lines: &[(String, u32, f64, f64)]| -> Vec<(u32, f64, f64)> {
        lines
            .iter()
            .filter(|l| l.0 == "linear")
            .map(|l| (l.1, l.2, l.3))
            .collect()
    };
    let (go, java) = (linear(&go), linear(&java));
    assert_eq!(go.len(), 21);
    let (mut go_merges, mut java_merges, mut go_decodes) = (vec![], vec![], vec![]);
    for (&(k, go_gamma, go_offset), &(k_j, java_gamma, java_offset)) in go.iter().zip(&java) {
        assert_eq!(k, k_j);
        let (gamma, offset) = int_layout(k);
        assert_eq!(offset, f64::from(1u32 << k), "tailguard's layout, k = {k}");
        if go_equal(gamma, go_gamma) && go_equal(offset, go_offset) {
            go_merges.push(k);
        }
        if gamma.to_bits() == java_gamma.to_bits() && offset.to_bits() == java_offset.to_bits() {
            java_merges.push(k);
        }
        // The other way: their message of one value at 1.0 (key 2^k in both), decoded
        // into tailguard's sketch of k.
        let key = 1i32 << k;
        let sketch = || {
            DDSketch::<IntMapping, 64>::new(IntMapping::with_mantissa_bits(k).unwrap(), 1.0)
                .unwrap()
        };
        let mut s = sketch();
        match decode_into(
            &linear_message(go_gamma, go_offset, key),
            IndexConvention::GoJava,
            &mut s,
        ) {
            Ok(d) => {
                assert_eq!(d.added, 1);
                assert_eq!(s.bins().next().map(|b| b.index), Some(0));
                go_decodes.push(k);
            }
            Err(e) => {
                assert!(matches!(e, DecodeError::Offset { .. }), "k = {k}: {e:?}");
                // Re-binning reads it.
                let r = decode_rebinned(
                    &linear_message(go_gamma, go_offset, key),
                    IndexConvention::GoJava,
                    &mut s,
                )
                .unwrap();
                assert_eq!((r.added, r.exact), (1, false));
            }
        }
        // Java's offset is within 1e-9 of 2^k at every k: always bin for bin.
        let mut s = sketch();
        let d = decode_into(
            &linear_message(java_gamma, java_offset, key),
            IndexConvention::GoJava,
            &mut s,
        )
        .unwrap();
        assert_eq!(d.added, 1);
        assert_eq!(s.bins().next().map(|b| b.index), Some(0));
    }
    println!("Go merges k = {go_merges:?}; Java merges k = {java_merges:?}; decode_into takes Go's k = {go_decodes:?}");
    assert_eq!(go_merges, (0..=13).collect::<Vec<_>>());
    assert_eq!(java_merges, [0, 1, 3, 4, 6, 11, 13, 17, 18, 19, 20]);
    assert_eq!(go_decodes, (0..=12).collect::<Vec<_>>());
}

//! Prometheus's metric and label names, checked before anything is written.

use super::EncodeError;

fn valid(name: &str, colon: bool) -> bool {
    let ok = |b: u8, first: bool| {
        b.is_ascii_alphabetic()
            || b == b'_'
            || (colon && b == b':')
            || (!first && b.is_ascii_digit())
    };
    let mut bytes = name.bytes();
    match bytes.next() {
        Some(b) if ok(b, true) => bytes.all(|b| ok(b, false)),
        _ => false,
    }
}

/// `name` is a metric name and every label name a label name: not `le` (which the text
/// format's buckets carry), not starting with `__` (Prometheus's own), and not twice in one
/// set (Prometheus refuses such a sample).
pub(crate) fn check(name: &str, labels: &[(&str, &str)]) -> Result<(), EncodeError> {
    let labels_ok = labels.iter().enumerate().all(|(i, &(label, _))| {
        let earlier = labels.get(..i).unwrap_or(&[]);
        valid(label, false)
            && label != "le"
            && !label.starts_with("__")
            && earlier.iter().all(|&(other, _)| other != label)
    });
    if valid(name, true) && labels_ok {
        Ok(())
    } else {
        Err(EncodeError::InvalidName)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(check("rpc:latency_ns", &[("instance", "a b\"c"), ("_x1", "")]).is_ok());
        for bad in ["", "1x", "a-b", "a b", "é"] {
            assert_eq!(check(bad, &[]), Err(EncodeError::InvalidName), "{bad:?}");
            assert_eq!(check("ok", &[(bad, "v")]), Err(EncodeError::InvalidName));
        }
        assert_eq!(check("ok", &[("a:b", "v")]), Err(EncodeError::InvalidName));
        assert_eq!(check("ok", &[("le", "v")]), Err(EncodeError::InvalidName));
        // Reserved, or named twice in one set.
        assert_eq!(
            check("ok", &[("__name__", "x")]),
            Err(EncodeError::InvalidName)
        );
        assert_eq!(
            check("ok", &[("a", "1"), ("b", "2"), ("a", "1")]),
            Err(EncodeError::InvalidName)
        );
    }
}

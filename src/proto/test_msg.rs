//! For the tests: small sketches, `encode` into a `Vec`, and DDSketch messages built
//! field by field (on [`Msg`], so that they need not come from [`encode`]).

use super::{encode, encoded_len, IndexConvention};
use crate::sketch::{DDSketch, IndexMapping, LogMapping};
use crate::wire::test_msg::encoded;
use std::vec::Vec;

pub(super) use crate::wire::test_msg::Msg;

pub(super) type Log = DDSketch<LogMapping, 512>;

pub(super) fn log() -> Log {
    Log::with_relative_accuracy(0.01, 1.0).unwrap()
}

pub(super) fn encode_vec<M: IndexMapping, const N: usize>(
    s: &DDSketch<M, N>,
    convention: IndexConvention,
) -> Vec<u8> {
    encoded(encoded_len(s, convention), |buf| encode(s, convention, buf))
}

pub(super) fn mapping_of<M: IndexMapping>(m: &M) -> Msg {
    Msg::default()
        .double(1, m.gamma())
        .double(2, m.index_offset())
        .uint(3, M::INTERPOLATION as u64)
}

pub(super) fn entry(key: i32, count: f64) -> Msg {
    Msg::default().sint(1, key).double(2, count)
}

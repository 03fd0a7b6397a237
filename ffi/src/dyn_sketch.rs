//! What a C caller can do with a sketch of any preset: the crate's `DDSketch` methods
//! behind one object-safe trait, so each C function is written once, not once per preset.

use core::any::Any;

use tailguard::proto::{self, DecodeError, EncodeError, IndexConvention};
use tailguard::sketch::{DDSketch, IndexMapping, InvalidQuantile, InvalidValue, RecordError};

/// A sketch of any preset.
pub(crate) trait DynSketch: Any {
    fn record(&mut self, value: f64) -> Result<(), RecordError>;
    fn record_u64(&mut self, value: u64);
    fn record_u64_n(&mut self, value: u64, n: u32);
    fn quantile(&self, q: f64) -> Result<Option<f64>, InvalidQuantile>;
    fn rank(&self, v: f64) -> Result<u64, InvalidValue>;
    fn count(&self) -> u64;
    fn zero_count(&self) -> u32;
    fn clamped(&self) -> u64;
    fn saturated(&self) -> u64;
    fn min(&self) -> Option<f64>;
    fn max(&self) -> Option<f64>;
    fn sum(&self) -> f64;
    fn relative_accuracy(&self) -> f64;
    /// Merges `other` if it is of the same preset (type); `false` and nothing changed if not.
    fn merge_same(&mut self, other: &dyn DynSketch) -> bool;
    /// Merges the sketch into itself (a C caller may pass one sketch as both arguments).
    fn merge_self(&mut self);
    fn clear(&mut self);
    fn encode_ddsketch(
        &self,
        convention: IndexConvention,
        buf: &mut [u8],
    ) -> Result<usize, EncodeError>;
    /// Merges a DataDog message in, re-binning a foreign mapping.
    fn decode_ddsketch(
        &mut self,
        bytes: &[u8],
        convention: IndexConvention,
    ) -> Result<(), DecodeError>;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<M: IndexMapping + 'static, const N: usize> DynSketch for DDSketch<M, N> {
    fn record(&mut self, value: f64) -> Result<(), RecordError> {
        DDSketch::record(self, value)
    }
    fn record_u64(&mut self, value: u64) {
        DDSketch::record_u64(self, value)
    }
    fn record_u64_n(&mut self, value: u64, n: u32) {
        DDSketch::record_u64_n(self, value, n)
    }
    fn quantile(&self, q: f64) -> Result<Option<f64>, InvalidQuantile> {
        DDSketch::quantile(self, q)
    }
    fn rank(&self, v: f64) -> Result<u64, InvalidValue> {
        DDSketch::rank(self, v)
    }
    fn count(&self) -> u64 {
        DDSketch::count(self)
    }
    fn zero_count(&self) -> u32 {
        DDSketch::zero_count(self)
    }
    fn clamped(&self) -> u64 {
        DDSketch::clamped(self)
    }
    fn saturated(&self) -> u64 {
        DDSketch::saturated(self)
    }
    fn min(&self) -> Option<f64> {
        DDSketch::min(self)
    }
    fn max(&self) -> Option<f64> {
        DDSketch::max(self)
    }
    fn sum(&self) -> f64 {
        DDSketch::sum(self)
    }
    fn relative_accuracy(&self) -> f64 {
        DDSketch::relative_accuracy(self)
    }
    fn merge_same(&mut self, other: &dyn DynSketch) -> bool {
        match other.as_any().downcast_ref::<Self>() {
            // Same preset, so same layout: the crate's merge cannot refuse it.
            Some(other) => self.merge(other).is_ok(),
            None => false,
        }
    }
    fn merge_self(&mut self) {
        let copy = self.clone();
        // The same layout: cannot fail.
        let _ = self.merge(&copy);
    }
    fn clear(&mut self) {
        DDSketch::clear(self)
    }
    fn encode_ddsketch(
        &self,
        convention: IndexConvention,
        buf: &mut [u8],
    ) -> Result<usize, EncodeError> {
        proto::encode(self, convention, buf)
    }
    fn decode_ddsketch(
        &mut self,
        bytes: &[u8],
        convention: IndexConvention,
    ) -> Result<(), DecodeError> {
        proto::decode_rebinned(bytes, convention, self).map(|_| ())
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

//! Sketches on the wire: DataDog's DDSketch protobuf (every preset) and OpenTelemetry's
//! `ExponentialHistogramDataPoint` (the OTEL preset), into and out of caller buffers.

use tailguard::otlp::{self, Timestamps};
use tailguard::proto::{EncodeError, IndexConvention};
use tailguard::sketch::presets::OtelLatency;

use crate::object::{self, Out};
use crate::sketch::{sketch_mut, sketch_ref, tg_sketch};
use crate::status::{
    status_of, tg_status, Result, TG_ERR_BUFFER, TG_ERR_DECODE, TG_ERR_PRESET, TG_ERR_VALUE,
};

/// DataDog's Go and Java libraries' index convention (tailguard's, the default).
pub const TG_CONVENTION_GO_JAVA: u32 = 0;
/// DataDog's Python library's index convention (`ddsketch` 3.x).
pub const TG_CONVENTION_PYTHON: u32 = 1;

/// The convention of a `TG_CONVENTION_*` constant, or TG_ERR_VALUE.
fn convention(code: u32) -> Result<IndexConvention> {
    match code {
        TG_CONVENTION_GO_JAVA => Ok(IndexConvention::GoJava),
        TG_CONVENTION_PYTHON => Ok(IndexConvention::Python),
        _ => Err(TG_ERR_VALUE),
    }
}

/// Writes `encode`'s length to `written`, or the length needed on a short buffer.
///
/// # Safety
/// `written` is valid for a write (the caller's contract).
unsafe fn finish(r: core::result::Result<usize, EncodeError>, written: Out<usize>) -> Result<()> {
    let (len, status) = match r {
        Ok(len) => (len, Ok(())),
        Err(EncodeError::BufferTooSmall { needed }) => (needed, Err(TG_ERR_BUFFER)),
        // Every preset's mapping has a finite gamma: not reached.
        Err(_) => return Err(TG_ERR_PRESET),
    };
    // SAFETY: `written` was checked by `Out::new`; the caller's contract makes it writable.
    unsafe { written.set(len) };
    status
}

/// Encodes the sketch as a DataDog DDSketch protobuf message in `convention`
/// (`TG_CONVENTION_*`) into `cap` bytes at `buf` (null if `cap` is 0), and writes the
/// length to `*written`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_VALUE (unknown
/// convention) or TG_ERR_BUFFER (`*written` is then the length needed).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_encode_ddsketch(
    s: *const tg_sketch,
    convention: u32,
    buf: *mut u8,
    cap: usize,
    written: *mut usize,
) -> tg_status {
    status_of((|| {
        let written = Out::new(written)?;
        let (sketch, _) = sketch_ref(s)?;
        let convention = self::convention(convention)?;
        let buf = object::bytes_mut(buf, cap)?;
        finish(sketch.encode_ddsketch(convention, buf), written)
    })())
}

/// Merges a DataDog DDSketch protobuf message (`len` bytes at `bytes`, in `convention`)
/// into the sketch, re-binning a foreign mapping; all or nothing.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_VALUE (unknown
/// convention) or TG_ERR_DECODE (not a message, negative values, or a mapping it cannot
/// re-bin: the sketch unchanged).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_decode_ddsketch(
    s: *mut tg_sketch,
    convention: u32,
    bytes: *const u8,
    len: usize,
) -> tg_status {
    status_of((|| {
        let (sketch, _) = sketch_mut(s)?;
        let convention = self::convention(convention)?;
        let bytes = object::bytes(bytes, len)?;
        sketch
            .decode_ddsketch(bytes, convention)
            .map_err(|_| TG_ERR_DECODE)
    })())
}

/// Encodes an OTEL-preset sketch as an OTLP `ExponentialHistogramDataPoint` (protobuf)
/// with its start and end times (Unix nanoseconds, 0 for absent) into `cap` bytes at
/// `buf` (null if `cap` is 0), and writes the length to `*written`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_PRESET (not the
/// OTEL preset) or TG_ERR_BUFFER (`*written` is then the length needed).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_encode_otlp(
    s: *const tg_sketch,
    start_unix_ns: u64,
    end_unix_ns: u64,
    buf: *mut u8,
    cap: usize,
    written: *mut usize,
) -> tg_status {
    status_of((|| {
        let written = Out::new(written)?;
        let (sketch, _) = sketch_ref(s)?;
        let otel = sketch
            .as_any()
            .downcast_ref::<OtelLatency>()
            .ok_or(TG_ERR_PRESET)?;
        let buf = object::bytes_mut(buf, cap)?;
        let times = Timestamps::new(start_unix_ns, end_unix_ns);
        finish(otlp::encode(otel, times, buf), written)
    })())
}

/// Merges an OTLP `ExponentialHistogramDataPoint` (`len` bytes at `bytes`) into an
/// OTEL-preset sketch; all or nothing.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_PRESET (not the
/// OTEL preset) or TG_ERR_DECODE (not a data point, negative buckets, or a coarser scale:
/// the sketch unchanged).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_decode_otlp(
    s: *mut tg_sketch,
    bytes: *const u8,
    len: usize,
) -> tg_status {
    status_of((|| {
        let (sketch, _) = sketch_mut(s)?;
        let otel = sketch
            .as_any_mut()
            .downcast_mut::<OtelLatency>()
            .ok_or(TG_ERR_PRESET)?;
        let bytes = object::bytes(bytes, len)?;
        otlp::decode_into(bytes, otel)
            .map(|_| ())
            .map_err(|_| TG_ERR_DECODE)
    })())
}

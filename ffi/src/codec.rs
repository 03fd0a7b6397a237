//! Sketches on the wire: DataDog's DDSketch protobuf (every preset) and OpenTelemetry's
//! `ExponentialHistogramDataPoint` (the OTEL preset), into and out of caller buffers.

use tailguard::otlp::{self, Timestamps};
use tailguard::proto::{self, EncodeError, IndexConvention};
use tailguard::sketch::presets::OtelLatency;

use crate::object::{self, Handle, HandleMut, Kind, Out, TG_PRESET_OTEL};
use crate::sketch::{same_preset, same_preset_mut, tg_sketch, with_sketch};
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

/// The OTEL-preset sketch of `h`; TG_ERR_PRESET if it is another preset's.
fn otel(h: &Handle) -> Result<&OtelLatency> {
    if h.preset(Kind::Sketch)? != TG_PRESET_OTEL {
        return Err(TG_ERR_PRESET);
    }
    // SAFETY: `OtelLatency` is the type of TG_PRESET_OTEL's sketches.
    unsafe { same_preset::<OtelLatency>(h, TG_PRESET_OTEL) }
}

/// [`otel`], exclusive.
fn otel_mut(h: &mut HandleMut) -> Result<&mut OtelLatency> {
    if h.preset(Kind::Sketch)? != TG_PRESET_OTEL {
        return Err(TG_ERR_PRESET);
    }
    // SAFETY: `OtelLatency` is the type of TG_PRESET_OTEL's sketches.
    unsafe { same_preset_mut::<OtelLatency>(h, TG_PRESET_OTEL) }
}

/// Writes `encode`'s length to `written`, or the length needed on a short buffer.
fn finish(r: core::result::Result<usize, EncodeError>, written: Out<usize>) -> Result<()> {
    let (len, status) = match r {
        Ok(len) => (len, Ok(())),
        Err(EncodeError::BufferTooSmall { needed }) => (needed, Err(TG_ERR_BUFFER)),
        // Every preset's mapping has a finite gamma: not reached.
        Err(_) => return Err(TG_ERR_PRESET),
    };
    written.set(len);
    status
}

/// Encodes the sketch as a DataDog DDSketch protobuf message in `convention`
/// (`TG_CONVENTION_*`) into `cap` bytes at `buf` (null if `cap` is 0), and writes the
/// length to `*written`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_VALUE (unknown
/// convention, or `cap` above PTRDIFF_MAX) or TG_ERR_BUFFER (`*written` is then the length
/// needed).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_encode_ddsketch(
    s: *const tg_sketch,
    convention: u32,
    buf: *mut u8,
    cap: usize,
    written: *mut usize,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, `written` and the `cap` bytes at `buf`.
    let (s, written, buf) = unsafe {
        (
            Handle::new(s),
            Out::new(written),
            object::bytes_mut(buf, cap),
        )
    };
    status_of((|| {
        let written = written?;
        let convention = self::convention(convention)?;
        let buf = buf?;
        with_sketch!(s, value, |sk, _| finish(
            proto::encode(sk, convention, buf),
            written
        ))
    })())
}

/// Merges a DataDog DDSketch protobuf message (`len` bytes at `bytes`, in `convention`)
/// into the sketch, re-binning a foreign mapping; all or nothing.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_VALUE (unknown
/// convention, or `len` above PTRDIFF_MAX) or TG_ERR_DECODE (not a message, negative
/// values, or a mapping it cannot re-bin: the sketch unchanged).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_decode_ddsketch(
    s: *mut tg_sketch,
    convention: u32,
    bytes: *const u8,
    len: usize,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, a sketch no other call uses meanwhile, and
    // the `len` bytes at `bytes`.
    let (mut s, bytes) = unsafe { (HandleMut::new(s), object::bytes(bytes, len)) };
    status_of((|| {
        let convention = self::convention(convention)?;
        let bytes = bytes?;
        with_sketch!(s, value_mut, |sk, _| {
            proto::decode_rebinned(bytes, convention, sk)
                .map(|_| ())
                .map_err(|_| TG_ERR_DECODE)
        })
    })())
}

/// Encodes an OTEL-preset sketch as an OTLP `ExponentialHistogramDataPoint` (protobuf)
/// with its start and end times (Unix nanoseconds, 0 for absent) into `cap` bytes at
/// `buf` (null if `cap` is 0), and writes the length to `*written`.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_PRESET (not the
/// OTEL preset), TG_ERR_VALUE (`cap` above PTRDIFF_MAX) or TG_ERR_BUFFER (`*written` is
/// then the length needed).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_encode_otlp(
    s: *const tg_sketch,
    start_unix_ns: u64,
    end_unix_ns: u64,
    buf: *mut u8,
    cap: usize,
    written: *mut usize,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, `written` and the `cap` bytes at `buf`.
    let (s, written, buf) = unsafe {
        (
            Handle::new(s),
            Out::new(written),
            object::bytes_mut(buf, cap),
        )
    };
    status_of((|| {
        let written = written?;
        let otel = otel(&s)?;
        let buf = buf?;
        let times = Timestamps::new(start_unix_ns, end_unix_ns);
        finish(otlp::encode(otel, times, buf), written)
    })())
}

/// Merges an OTLP `ExponentialHistogramDataPoint` (`len` bytes at `bytes`) into an
/// OTEL-preset sketch; all or nothing.
/// Returns TG_OK, TG_ERR_NULL, TG_ERR_MISALIGNED, TG_ERR_UNINIT, TG_ERR_PRESET (not the
/// OTEL preset), TG_ERR_VALUE (`len` above PTRDIFF_MAX) or TG_ERR_DECODE (not a data
/// point, negative buckets, or a coarser scale: the sketch unchanged).
#[no_mangle]
pub unsafe extern "C" fn tg_sketch_decode_otlp(
    s: *mut tg_sketch,
    bytes: *const u8,
    len: usize,
) -> tg_status {
    // SAFETY: the contract (crate docs) for `s`, a sketch no other call uses meanwhile, and
    // the `len` bytes at `bytes`.
    let (mut s, bytes) = unsafe { (HandleMut::new(s), object::bytes(bytes, len)) };
    status_of((|| {
        let otel = otel_mut(&mut s)?;
        let bytes = bytes?;
        otlp::decode_into(bytes, otel)
            .map(|_| ())
            .map_err(|_| TG_ERR_DECODE)
    })())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::object::{TG_PRESET_CUBIC, TG_PRESET_OTEL};
    use crate::sketch::{
        tg_sketch_count, tg_sketch_init, tg_sketch_record_u64, TG_SKETCH_CUBIC_SIZE,
    };
    use crate::status::{TG_ERR_NULL, TG_OK};
    use core::ptr::null_mut;

    fn sketch(mem: &mut [u64], preset: u32) -> *mut tg_sketch {
        let mut s = null_mut();
        // SAFETY: `mem` is writable for its length, and outlives the handle's uses.
        let status =
            unsafe { tg_sketch_init(mem.as_mut_ptr().cast(), mem.len() * 8, preset, &mut s) };
        assert_eq!(status, TG_OK);
        s
    }

    #[test]
    fn ddsketch_round_trips_and_refuses_short_buffers_and_garbage() {
        let mut a = std::vec![0u64; TG_SKETCH_CUBIC_SIZE / 8];
        let mut b = std::vec![0u64; TG_SKETCH_CUBIC_SIZE / 8];
        let (x, y) = (
            sketch(&mut a, TG_PRESET_CUBIC),
            sketch(&mut b, TG_PRESET_CUBIC),
        );
        let mut buf = [0u8; 256];
        let (mut len, mut n) = (0, 0);
        // SAFETY: live sketches; `buf` is writable for its length.
        unsafe {
            assert_eq!(tg_sketch_record_u64(x, 3_000_000), TG_OK);
            let g = TG_CONVENTION_GO_JAVA;
            assert_eq!(
                tg_sketch_encode_ddsketch(x, g, null_mut(), 0, &mut len),
                TG_ERR_BUFFER
            );
            let needed = len;
            assert_eq!(
                tg_sketch_encode_ddsketch(x, g, buf.as_mut_ptr(), 3, &mut len),
                TG_ERR_BUFFER
            );
            assert_eq!(len, needed);
            assert_eq!(
                tg_sketch_encode_ddsketch(x, g, buf.as_mut_ptr(), 256, &mut len),
                TG_OK
            );
            assert_eq!(
                tg_sketch_encode_ddsketch(x, 7, buf.as_mut_ptr(), 256, &mut len),
                TG_ERR_VALUE
            );
            assert_eq!(tg_sketch_decode_ddsketch(y, g, buf.as_ptr(), needed), TG_OK);
            assert_eq!(
                tg_sketch_decode_ddsketch(y, g, buf.as_ptr(), needed - 1),
                TG_ERR_DECODE
            );
            assert_eq!(
                tg_sketch_decode_ddsketch(y, g, core::ptr::null(), 1),
                TG_ERR_NULL
            );
            assert_eq!(tg_sketch_count(y, &mut n), TG_OK);
            assert_eq!(n, 1);
            // OTLP is the OTEL preset's only.
            assert_eq!(
                tg_sketch_encode_otlp(x, 0, 0, buf.as_mut_ptr(), 256, &mut len),
                TG_ERR_PRESET
            );
            assert_eq!(tg_sketch_decode_otlp(y, buf.as_ptr(), 0), TG_ERR_PRESET);
        }
    }

    /// A length no buffer can have (above PTRDIFF_MAX, SIZE_MAX say) is refused before a
    /// slice is made of it: a slice that long is undefined behaviour however few of its
    /// bytes are touched (a debug build aborts on it, miri reports it).
    #[test]
    fn lengths_above_isize_max_are_refused() {
        let mut mem = std::vec![0u64; crate::sketch::TG_SKETCH_OTEL_SIZE / 8];
        let s = sketch(&mut mem, TG_PRESET_OTEL);
        let mut buf = [0u8; 256];
        let mut len = 7;
        // SAFETY: a live sketch; the lengths are refused before `buf` is touched.
        unsafe {
            assert_eq!(tg_sketch_record_u64(s, 3_000_000), TG_OK);
            for huge in [usize::MAX, isize::MAX as usize + 1] {
                let (b, g) = (buf.as_mut_ptr(), TG_CONVENTION_GO_JAVA);
                assert_eq!(
                    tg_sketch_encode_ddsketch(s, g, b, huge, &mut len),
                    TG_ERR_VALUE
                );
                assert_eq!(
                    tg_sketch_encode_otlp(s, 1, 2, b, huge, &mut len),
                    TG_ERR_VALUE
                );
                assert_eq!(tg_sketch_decode_ddsketch(s, g, b, huge), TG_ERR_VALUE);
                assert_eq!(tg_sketch_decode_otlp(s, b, huge), TG_ERR_VALUE);
            }
            assert_eq!(len, 7);
        }
    }

    #[test]
    fn otlp_round_trips() {
        let mut a = std::vec![0u64; crate::sketch::TG_SKETCH_OTEL_SIZE / 8];
        let mut b = std::vec![0u64; crate::sketch::TG_SKETCH_OTEL_SIZE / 8];
        let (x, y) = (
            sketch(&mut a, TG_PRESET_OTEL),
            sketch(&mut b, TG_PRESET_OTEL),
        );
        let mut buf = [0u8; 256];
        let (mut len, mut n) = (0, 0);
        // SAFETY: live sketches; `buf` is writable for its length.
        unsafe {
            assert_eq!(tg_sketch_record_u64(x, 3_000_000), TG_OK);
            assert_eq!(
                tg_sketch_encode_otlp(x, 1, 2, buf.as_mut_ptr(), 256, &mut len),
                TG_OK
            );
            assert_eq!(tg_sketch_decode_otlp(y, buf.as_ptr(), len), TG_OK);
            assert_eq!(tg_sketch_count(y, &mut n), TG_OK);
            assert_eq!(n, 1);
            assert_eq!(
                tg_sketch_decode_otlp(y, [0xffu8; 4].as_ptr(), 4),
                TG_ERR_DECODE
            );
        }
    }
}

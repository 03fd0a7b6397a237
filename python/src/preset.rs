//! The presets a Python `Sketch` can be: one Rust sketch type each, behind one enum, so that
//! every method is a `match` over six monomorphic sketches (no trait objects, no heap).

use tailguard::sketch::presets::{
    self, CubicLatency, IntLatency, IntLatencyCoarse, LogLatency, McuLatency, OtelLatency,
};

/// A sketch of one of tailguard's presets (`tailguard::sketch::presets`).
// Unboxed: the enum lives in the Python object's own allocation, so the smaller presets
// waste a few kilobytes there rather than every call paying for a second allocation.
#[allow(clippy::large_enum_variant)]
#[derive(Clone)]
pub enum AnySketch {
    /// `"log"`: [`LogLatency`].
    Log(LogLatency),
    /// `"cubic"`: [`CubicLatency`].
    Cubic(CubicLatency),
    /// `"int"`: [`IntLatency`].
    Int(IntLatency),
    /// `"int_coarse"`: [`IntLatencyCoarse`] (the firmware's).
    IntCoarse(IntLatencyCoarse),
    /// `"mcu"`: [`McuLatency`].
    Mcu(McuLatency),
    /// `"otel"`: [`OtelLatency`] (OpenTelemetry's buckets, scale 5).
    Otel(OtelLatency),
}

/// The preset names, in the order the Python module lists them (`tailguard.PRESETS`).
pub const NAMES: [&str; 6] = ["log", "cubic", "int", "int_coarse", "mcu", "otel"];

/// Runs `$body` with `$s` bound to the sketch inside `$any` (by reference or by mutable
/// reference, as `$any` is borrowed), whatever its preset.
macro_rules! each {
    ($any:expr, $s:ident => $body:expr) => {
        match $any {
            $crate::preset::AnySketch::Log($s) => $body,
            $crate::preset::AnySketch::Cubic($s) => $body,
            $crate::preset::AnySketch::Int($s) => $body,
            $crate::preset::AnySketch::IntCoarse($s) => $body,
            $crate::preset::AnySketch::Mcu($s) => $body,
            $crate::preset::AnySketch::Otel($s) => $body,
        }
    };
}
pub(crate) use each;

impl AnySketch {
    /// An empty sketch of the preset `name`, or `None` if no preset has that name.
    pub fn new(name: &str) -> Option<Self> {
        Some(match name {
            "log" => AnySketch::Log(presets::log_latency()),
            "cubic" => AnySketch::Cubic(presets::cubic_latency()),
            "int" => AnySketch::Int(presets::int_latency()),
            "int_coarse" => AnySketch::IntCoarse(presets::int_latency_coarse()),
            "mcu" => AnySketch::Mcu(presets::mcu_latency()),
            "otel" => AnySketch::Otel(presets::otel_latency()),
            _ => return None,
        })
    }

    /// The preset's name (one of [`NAMES`]).
    pub fn name(&self) -> &'static str {
        match self {
            AnySketch::Log(_) => "log",
            AnySketch::Cubic(_) => "cubic",
            AnySketch::Int(_) => "int",
            AnySketch::IntCoarse(_) => "int_coarse",
            AnySketch::Mcu(_) => "mcu",
            AnySketch::Otel(_) => "otel",
        }
    }

    /// Adds `other`'s values, or returns `false` (and changes nothing) if it is another
    /// preset. Two sketches of one preset always merge: they share mapping and layout.
    pub fn merge(&mut self, other: &AnySketch) -> bool {
        let merged = match (self, other) {
            (AnySketch::Log(a), AnySketch::Log(b)) => a.merge(b),
            (AnySketch::Cubic(a), AnySketch::Cubic(b)) => a.merge(b),
            (AnySketch::Int(a), AnySketch::Int(b)) => a.merge(b),
            (AnySketch::IntCoarse(a), AnySketch::IntCoarse(b)) => a.merge(b),
            (AnySketch::Mcu(a), AnySketch::Mcu(b)) => a.merge(b),
            (AnySketch::Otel(a), AnySketch::Otel(b)) => a.merge(b),
            _ => return false,
        };
        merged.is_ok()
    }
}

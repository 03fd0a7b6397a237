//! [`Timestamps`]: the time fields of a data point.

/// When a data point's values were collected, in nanoseconds since the Unix epoch
/// (OTLP's `start_time_unix_nano` and `time_unix_nano`). 0 means "not given" and is not
/// written, as protobuf omits a default.
///
/// OTLP wants `time_unix_nano` on every point, and `start_time_unix_nano` for cumulative
/// and delta points; a sketch knows neither (its clock need not be wall time), so the
/// caller gives them. For a window snapshot the start is the window's start, for a
/// cumulative sketch the time of its first `clear`.
///
/// ```
/// use tailguard::otlp::Timestamps;
/// let t = Timestamps::new(1_700_000_000_000_000_000, 1_700_000_010_000_000_000);
/// assert_eq!(t.time_unix_nano, 1_700_000_010_000_000_000);
/// assert_eq!(Timestamps::default(), Timestamps::new(0, 0));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "defmt", derive(defmt::Format))]
pub struct Timestamps {
    /// `start_time_unix_nano`: the start of the collection interval (0: absent).
    pub start_unix_nano: u64,
    /// `time_unix_nano`: when the point was collected (0: absent).
    pub time_unix_nano: u64,
}

impl Timestamps {
    /// The interval from `start_unix_nano` to `time_unix_nano`.
    pub const fn new(start_unix_nano: u64, time_unix_nano: u64) -> Self {
        Timestamps {
            start_unix_nano,
            time_unix_nano,
        }
    }
}

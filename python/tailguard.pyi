"""Type stubs of the `tailguard` extension module (python/src, built by maturin)."""

from typing import Iterable, List, Optional, Tuple, final

__all__ = ["Sketch", "Rebinned", "OtlpDecoded", "DecodeError", "PRESETS", "__version__"]

__version__: str
PRESETS: Tuple[str, ...]
"""The preset names: "log", "cubic", "int", "int_coarse", "mcu", "otel"."""

class DecodeError(ValueError):
    """Bytes the sketch cannot read; the sketch is unchanged."""

@final
class Rebinned:
    """What `Sketch.merge_ddsketch` added."""

    @property
    def added(self) -> int: ...
    @property
    def rebinned(self) -> int: ...
    @property
    def below_range(self) -> int: ...
    @property
    def above_range(self) -> int: ...
    @property
    def saturated(self) -> int: ...
    @property
    def exact(self) -> bool: ...
    @property
    def relative_error(self) -> float: ...

@final
class OtlpDecoded:
    """What `Sketch.merge_otlp` added."""

    @property
    def added(self) -> int: ...
    @property
    def below_range(self) -> int: ...
    @property
    def above_range(self) -> int: ...
    @property
    def saturated(self) -> int: ...
    @property
    def wide_zero(self) -> int: ...
    @property
    def scale(self) -> int: ...
    @property
    def exact_stats(self) -> bool: ...
    @property
    def start_unix_ns(self) -> int: ...
    @property
    def end_unix_ns(self) -> int: ...

@final
class Sketch:
    """A DDSketch of one of tailguard's presets, in nanoseconds."""

    def __new__(cls, preset: str = "log") -> "Sketch":
        """An empty sketch of `preset` (one of PRESETS); ValueError for another name."""
    def record(self, value: float, n: Optional[int] = None) -> None:
        """Records `value` `n` times (default 1); ValueError if NaN or negative."""
    def record_int(self, value: int, n: Optional[int] = None) -> None:
        """Records the integer `value` in [0, 2**64) `n` times; TypeError if not an int,
        ValueError if out of range."""
    def record_many(self, values: Iterable[float]) -> None:
        """Records every value, all or nothing (ValueError on a NaN or negative one)."""
    def record_many_int(self, values: Iterable[int]) -> None:
        """Records every integer in [0, 2**64), all or nothing."""
    def quantile(self, q: float) -> Optional[float]:
        """The value at quantile `q` in [0, 1]; None if empty; ValueError on a bad `q`."""
    def quantiles(self, qs: Iterable[float]) -> List[Optional[float]]:
        """`[self.quantile(q) for q in qs]`: any iterable of quantiles."""
    def rank(self, v: float) -> int:
        """How many values are at most `v`, counted by bins: at least the exact count at
        `v`; for `v` in [min_trackable, max_trackable), at most the exact count at
        `v * (1 + alpha) / (1 - alpha)`, plus `clamped` if `v` is in the top bin. Below
        min_trackable the whole zero bin counts; from max_trackable up, every value.
        ValueError if `v` is NaN."""
    def fraction_at_or_below(self, v: float) -> Optional[float]: ...
    def merge(self, other: "Sketch") -> None:
        """Adds `other`'s values; ValueError if its preset differs, TypeError if it is
        not a Sketch, RuntimeError if either is in use (another thread, or an iterator
        a record_many is reading)."""
    def clear(self) -> None: ...
    def copy(self) -> "Sketch": ...
    def __copy__(self) -> "Sketch": ...
    def __deepcopy__(self, memo: object) -> "Sketch": ...
    def bins(self) -> List[Tuple[int, int]]:
        """The non-empty bins as (index, count), lowest first."""
    @property
    def preset(self) -> str: ...
    @property
    def count(self) -> int: ...
    @property
    def zero_count(self) -> int: ...
    @property
    def clamped(self) -> int: ...
    @property
    def saturated(self) -> int: ...
    @property
    def min(self) -> Optional[float]: ...
    @property
    def max(self) -> Optional[float]: ...
    @property
    def sum(self) -> float: ...
    @property
    def mean(self) -> Optional[float]: ...
    @property
    def relative_accuracy(self) -> float: ...
    @property
    def min_trackable(self) -> float: ...
    @property
    def max_trackable(self) -> float: ...
    def to_ddsketch(self, convention: str = "go_java") -> bytes:
        """DataDog's DDSketch protobuf; convention "go_java" or "python"."""
    @classmethod
    def from_ddsketch(
        cls, data: bytes, preset: str = "log", convention: str = "go_java"
    ) -> "Sketch":
        """A new sketch of `preset` holding `data` (any mapping; re-binned if foreign)."""
    def merge_ddsketch(self, data: bytes, convention: str = "go_java") -> Rebinned:
        """Adds `data` (any mapping; re-binned if foreign); DecodeError on bad bytes."""
    def to_otlp(self, start_unix_ns: Optional[int] = None, end_unix_ns: Optional[int] = None) -> bytes:
        """An OTLP ExponentialHistogramDataPoint ("otel" preset only)."""
    def merge_otlp(self, data: bytes) -> OtlpDecoded:
        """Adds an OTLP ExponentialHistogramDataPoint ("otel" preset only)."""

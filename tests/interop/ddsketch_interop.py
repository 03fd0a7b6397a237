"""The Python side of tailguard's interop test against DataDog's `ddsketch` (3.x).

Driven by tests/interop.rs, which writes into WORKDIR:

  cases.txt            one case per line: NAME MAPPING ALPHA  (MAPPING: log | cubic | int)
  NAME.values          the data set, one float per line
  NAME.tg-python.pb    tailguard's sketch of it, written with IndexConvention::Python
  NAME.tg-gojava.pb    the same, written with IndexConvention::GoJava
  quantiles.txt        the quantiles to report, one per line

For every case this script

  * parses both tailguard protos with ddsketch's protobuf classes and reports their
    fields (gamma, indexOffset, interpolation, the contiguous run, zeroCount);
  * loads the Python-convention proto with DDSketchProto.from_proto and reports, for
    each quantile, the value and the key of the bin it comes from;
  * builds Python's own sketch of the data set with the same mapping, writes it to
    NAME.py.pb (DDSketchProto.to_proto) and reports its quantiles and keys the same way;
  * loads the Go/Java-convention proto with from_proto as well (it reads a bin low
    for NONE, and with the wrong bin width for LINEAR and CUBIC: reported, not judged).

and writes WORKDIR/results.txt, one fact per line, which the Rust test checks (the
re-binning mode, `ddsketch_interop.py WORKDIR rebin`, is described at `rebin` below):

  case NAME
  field NAME.tg-python.pb gamma=... indexOffset=... interpolation=... offset=... bins=... total=... nonzero=... zero=...
  quantile SOURCE Q VALUE KEY       (KEY is "zero" for the zero bin, "none" if empty)
  keys SOURCE K:C K:C ...           (the non-zero bins of a sketch, key:count)
"""

import sys

import ddsketch
import ddsketch.pb.ddsketch_pb2 as pb
from ddsketch.ddsketch import BaseDDSketch, DDSketch, LogCollapsingLowestDenseDDSketch
from ddsketch.mapping import (
    CubicallyInterpolatedMapping,
    LinearlyInterpolatedMapping,
    LogarithmicMapping,
)
from ddsketch.pb.proto import DDSketchProto
from ddsketch.store import DenseStore

MAPPINGS = {
    "log": LogarithmicMapping,
    "cubic": CubicallyInterpolatedMapping,
    "int": LinearlyInterpolatedMapping,
}


def read_lines(path):
    with open(path) as f:
        return [line.strip() for line in f if line.strip()]


def key_at_quantile(sketch, q):
    """The key of the bin get_quantile_value(q) answers from, as ddsketch computes it."""
    if sketch.count == 0:
        return "none"
    rank = q * (sketch.count - 1)
    if rank < sketch._negative_store.count + sketch._zero_count:
        return "zero"
    return str(sketch._store.key_at_rank(rank - sketch._zero_count - sketch._negative_store.count))


def report_quantiles(out, source, sketch, quantiles):
    for q in quantiles:
        value = sketch.get_quantile_value(q)
        out.append("quantile %s %r %r %s" % (source, q, value, key_at_quantile(sketch, q)))
    store = sketch._store
    pairs = [
        "%d:%r" % (i + store.offset, c) for i, c in enumerate(store.bins) if c != 0
    ]
    out.append("keys %s %s" % (source, " ".join(pairs)))


def report_fields(out, source, message):
    m = message.mapping
    p = message.positiveValues
    counts = list(p.contiguousBinCounts)
    out.append(
        "field %s gamma=%r indexOffset=%r interpolation=%d offset=%d bins=%d total=%r "
        "nonzero=%d sparse=%d negative=%d zero=%r"
        % (
            source,
            m.gamma,
            m.indexOffset,
            m.interpolation,
            p.contiguousBinIndexOffset,
            len(counts),
            sum(counts),
            sum(1 for c in counts if c != 0),
            len(p.binCounts),
            len(message.negativeValues.contiguousBinCounts) + len(message.negativeValues.binCounts),
            message.zeroCount,
        )
    )


def main(workdir):
    quantiles = [float(q) for q in read_lines(workdir + "/quantiles.txt")]
    out = ["version %s" % ddsketch.__version__]
    for line in read_lines(workdir + "/cases.txt"):
        name, mapping_name, alpha = line.split()
        alpha = float(alpha)
        out.append("case %s" % name)
        values = [float(v) for v in read_lines("%s/%s.values" % (workdir, name))]

        # tailguard -> Python
        for convention in ("python", "gojava"):
            source = "%s.tg-%s.pb" % (name, convention)
            message = pb.DDSketch()
            with open("%s/%s" % (workdir, source), "rb") as f:
                message.ParseFromString(f.read())
            report_fields(out, source, message)
            report_quantiles(out, source, DDSketchProto.from_proto(message), quantiles)

        # Python -> tailguard
        mapping = MAPPINGS[mapping_name](alpha)
        native = BaseDDSketch(
            mapping=mapping, store=DenseStore(), negative_store=DenseStore(), zero_count=0.0
        )
        for v in values:
            native.add(v)
        source = "%s.py.pb" % name
        message = DDSketchProto.to_proto(native)
        with open("%s/%s" % (workdir, source), "wb") as f:
            f.write(message.SerializeToString())
        report_fields(out, source, message)
        report_quantiles(out, source, native, quantiles)
        out.append("native %s gamma=%r multiplier=%r" % (source, mapping.gamma, mapping._multiplier))

    with open(workdir + "/results.txt", "w") as f:
        f.write("\n".join(out) + "\n")
    print("ddsketch %s: %d cases" % (ddsketch.__version__, len(read_lines(workdir + "/cases.txt"))))


def rebin(workdir):
    """Python's own sketches at gammas tailguard does not use, for the re-binning test.

    Reads WORKDIR/rebin-cases.txt, one case per line: NAME KIND ALPHA VALUES, where KIND is
    `ddsketch` (DDSketch, the log mapping), `collapsing` (LogCollapsingLowestDenseDDSketch)
    or `linear` / `cubic` (BaseDDSketch with that mapping), and VALUES a file of floats.
    Writes NAME.pb (DDSketchProto.to_proto) and a line per case to rebin-results.txt:

      written NAME gamma=... indexOffset=... interpolation=... alpha=... count=...
    """
    out = []
    for line in read_lines(workdir + "/rebin-cases.txt"):
        name, kind, alpha, values_file = line.split()
        alpha = float(alpha)
        if kind == "ddsketch":
            sketch = DDSketch(alpha)
        elif kind == "collapsing":
            sketch = LogCollapsingLowestDenseDDSketch(alpha, bin_limit=4096)
        else:
            mapping = MAPPINGS["int" if kind == "linear" else kind](alpha)
            sketch = BaseDDSketch(
                mapping=mapping, store=DenseStore(), negative_store=DenseStore(), zero_count=0.0
            )
        for v in read_lines("%s/%s" % (workdir, values_file)):
            sketch.add(float(v))
        message = DDSketchProto.to_proto(sketch)
        with open("%s/%s.pb" % (workdir, name), "wb") as f:
            f.write(message.SerializeToString())
        m = message.mapping
        out.append(
            "written %s gamma=%r indexOffset=%r interpolation=%d alpha=%r count=%r"
            % (name, m.gamma, m.indexOffset, m.interpolation, sketch._mapping.relative_accuracy,
               sketch.count)
        )
    with open(workdir + "/rebin-results.txt", "w") as f:
        f.write("\n".join(out) + "\n")
    print("ddsketch %s: %d sketches written" % (ddsketch.__version__, len(out)))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[2] == "rebin":
        rebin(sys.argv[1])
    elif len(sys.argv) == 2:
        main(sys.argv[1])
    else:
        sys.exit("usage: ddsketch_interop.py WORKDIR [rebin]")

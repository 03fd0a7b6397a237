// The mappings DataDog's Java library (sketches-java) builds from an accuracy, as its
// protobuf carries them (gamma and indexOffset as f64 bit patterns), for
// tests/datadog_mappings.rs: the lines constructors.go writes, from LogarithmicMapping,
// CubicallyInterpolatedMapping and LinearlyInterpolatedMapping. See README.md in this
// folder; run by run.sh, not by CI.
import com.datadoghq.sketch.ddsketch.mapping.CubicallyInterpolatedMapping;
import com.datadoghq.sketch.ddsketch.mapping.IndexMapping;
import com.datadoghq.sketch.ddsketch.mapping.LinearlyInterpolatedMapping;
import com.datadoghq.sketch.ddsketch.mapping.LogarithmicMapping;
import com.datadoghq.sketch.ddsketch.Serializer;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

public class Constructors {
  static PrintWriter out = new PrintWriter(System.out);

  // gamma and indexOffset, read back from the library's own protobuf serialization of the
  // mapping: doubles 1 and 2 (0 when absent), varint 3 (the interpolation) skipped.
  static double[] fields(IndexMapping m) {
    Serializer serializer = new Serializer(m.serializedSize());
    m.serialize(serializer);
    ByteBuffer b = serializer.getBuffer();
    b.rewind();
    b.order(ByteOrder.LITTLE_ENDIAN);
    double[] fields = new double[2];
    while (b.hasRemaining()) {
      int tag = b.get();
      if (tag == 0x09 || tag == 0x11) {
        fields[tag >> 3 == 1 ? 0 : 1] = b.getDouble();
      } else if (tag == 0x18) {
        while ((b.get() & 0x80) != 0) {}
      } else {
        throw new IllegalStateException("unexpected tag " + tag);
      }
    }
    return fields;
  }

  static void line(String kind, int i, double x, double y) {
    out.printf(
        "%s %d %016x %016x%n",
        kind,
        i,
        Double.doubleToRawLongBits(x),
        Double.doubleToRawLongBits(y));
  }

  public static void main(String[] args) {
    for (int i = 1; i <= 400; i++) {
      double a = i * 0.00025;
      double[] log = fields(new LogarithmicMapping(a));
      double[] cubic = fields(new CubicallyInterpolatedMapping(a));
      if (log[1] != 0 || cubic[1] != 0) {
        throw new IllegalStateException("an offset");
      }
      line("accuracy", i, log[0], cubic[0]);
    }
    for (int k = 0; k <= 20; k++) {
      double[] f = fields(new LinearlyInterpolatedMapping(Math.tanh(Math.pow(2, -(k + 1)))));
      line("linear", k, f[0], f[1]);
    }
    out.flush();
  }
}

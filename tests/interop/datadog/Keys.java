// Keys that DataDog's Java library (sketches-java) gives the values of values.txt, for each
// mapping listed there. See README.md in this folder; run by run.sh, not by CI.
import com.datadoghq.sketch.ddsketch.mapping.CubicallyInterpolatedMapping;
import com.datadoghq.sketch.ddsketch.mapping.IndexMapping;
import com.datadoghq.sketch.ddsketch.mapping.LinearlyInterpolatedMapping;
import com.datadoghq.sketch.ddsketch.mapping.LogarithmicMapping;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;

public class Keys {
  static double fromHex(String hex) {
    return Double.longBitsToDouble(Long.parseUnsignedLong(hex, 16));
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    PrintWriter out = new PrintWriter(System.out);
    List<IndexMapping> mappings = new ArrayList<>();
    String line;
    while ((line = in.readLine()) != null) {
      String[] f = line.trim().split("\\s+");
      if (f[0].equals("mapping")) { // mapping NAME INTERPOLATION GAMMA OFFSET
        double gamma = fromHex(f[3]), offset = fromHex(f[4]);
        switch (f[2]) {
          case "NONE": mappings.add(new LogarithmicMapping(gamma, offset)); break;
          case "LINEAR": mappings.add(new LinearlyInterpolatedMapping(gamma, offset)); break;
          case "CUBIC": mappings.add(new CubicallyInterpolatedMapping(gamma, offset)); break;
          default: throw new IllegalArgumentException(line);
        }
      } else if (f[0].equals("value")) { // value HEX
        StringBuilder sb = new StringBuilder(f[1]);
        double v = fromHex(f[1]);
        for (IndexMapping m : mappings) {
          sb.append(' ').append(m.index(v));
        }
        out.println(sb);
      }
    }
    out.flush();
  }
}

// Keys that DataDog's Go library (sketches-go) gives the values of values.txt, for each
// mapping listed there. See README.md in this folder; run by run.sh, not by CI.
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

func float(hex string) float64 {
	bits, err := strconv.ParseUint(hex, 16, 64)
	if err != nil {
		panic(err)
	}
	return math.Float64frombits(bits)
}

func main() {
	in := bufio.NewScanner(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var mappings []mapping.IndexMapping
	for in.Scan() {
		f := strings.Fields(in.Text())
		switch f[0] {
		case "mapping": // mapping NAME INTERPOLATION GAMMA OFFSET
			gamma, offset := float(f[3]), float(f[4])
			var m mapping.IndexMapping
			var err error
			switch f[2] {
			case "NONE":
				m, err = mapping.NewLogarithmicMappingWithGamma(gamma, offset)
			case "LINEAR":
				m, err = mapping.NewLinearlyInterpolatedMappingWithGamma(gamma, offset)
			case "CUBIC":
				m, err = mapping.NewCubicallyInterpolatedMappingWithGamma(gamma, offset)
			}
			if err != nil || m == nil {
				panic(fmt.Sprint("bad mapping line: ", in.Text()))
			}
			mappings = append(mappings, m)
		case "value": // value HEX
			fmt.Fprint(out, f[1])
			v := float(f[1])
			for _, m := range mappings {
				fmt.Fprint(out, " ", m.Index(v))
			}
			fmt.Fprintln(out)
		}
	}
}

// The mappings DataDog's Go library (sketches-go) builds from an accuracy, as its
// protobuf carries them (gamma and indexOffset as f64 bit patterns), for
// tests/datadog_mappings.rs. See README.md in this folder; run by run.sh, not by CI.
//
//	accuracy I LOG CUBIC    gamma of NewLogarithmicMapping(a), NewCubicallyInterpolatedMapping(a)
//	                        for a = I * 0.00025, I = 1..400 (their indexOffset is 0)
//	linear K GAMMA OFFSET   NewLinearlyInterpolatedMapping(tanh(2^-(K+1))), K = 0..20
package main

import (
	"bufio"
	"fmt"
	"math"
	"os"

	"github.com/DataDog/sketches-go/ddsketch/mapping"
)

func main() {
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	line := func(kind string, i int, x, y float64) {
		fmt.Fprintf(out, "%s %d %016x %016x\n", kind, i, math.Float64bits(x), math.Float64bits(y))
	}
	for i := 1; i <= 400; i++ {
		a := float64(i) * 0.00025
		l, err := mapping.NewLogarithmicMapping(a)
		if err != nil {
			panic(err)
		}
		c, err := mapping.NewCubicallyInterpolatedMapping(a)
		if err != nil {
			panic(err)
		}
		if l.ToProto().IndexOffset != 0 || c.ToProto().IndexOffset != 0 {
			panic("an offset")
		}
		line("accuracy", i, l.ToProto().Gamma, c.ToProto().Gamma)
	}
	for k := 0; k <= 20; k++ {
		m, err := mapping.NewLinearlyInterpolatedMapping(math.Tanh(math.Pow(2, -float64(k+1))))
		if err != nil {
			panic(err)
		}
		p := m.ToProto()
		line("linear", k, p.Gamma, p.IndexOffset)
	}
}

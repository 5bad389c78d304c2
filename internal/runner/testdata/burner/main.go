// Command burner burns a calibrated amount of CPU time, set by a flag: the
// stand-in variant of the statistics check of compare (make statcheck),
// whose "old" and "new" builds differ by a known amount of work.
//
//	burner -work 150    # 150 million steps of a xorshift generator
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	work := flag.Float64("work", 100, "millions of steps to run")
	flag.Parse()
	if *work < 0 {
		fmt.Fprintln(os.Stderr, "burner: -work must not be negative")
		os.Exit(2)
	}
	x := uint64(88172645463325252)
	for i := int64(*work * 1e6); i > 0; i-- {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
	}
	fmt.Println(x)
}

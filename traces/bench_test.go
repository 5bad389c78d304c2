package traces

import (
	"io"
	"testing"
)

// countingDiscard counts what it throws away.
type countingDiscard struct{ n int64 }

func (c *countingDiscard) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkGenerate measures the generator's throughput (MB/s of pcap
// output) and allocations on 32 MB traces with the default settings.
func BenchmarkGenerate(b *testing.B) {
	for _, bc := range []struct {
		name string
		mix  Mix
	}{
		{"default", DefaultMix},
		{"http", Mix{HTTP: 1}},
		{"dns", Mix{DNS: 1}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Size = 32 << 20
			cfg.Mix = bc.mix
			b.ReportAllocs()
			var total int64
			for i := 0; i < b.N; i++ {
				cfg.Seed = uint64(i + 1)
				w := &countingDiscard{}
				if _, err := Generate(w, cfg); err != nil {
					b.Fatal(err)
				}
				total += w.n
			}
			b.SetBytes(total / int64(b.N))
		})
	}
}

var _ io.Writer = (*countingDiscard)(nil)

package traces

import "math/bits"

// rng is xoshiro256** seeded through splitmix64. The generator uses its own
// generator and only integer arithmetic for everything that reaches the
// output, so a seed gives the same bytes on every Go version and CPU (the
// standard library may change its algorithms, and floating point results can
// differ in the last bit between architectures that fuse multiply-adds).
type rng struct{ s [4]uint64 }

// newRNG returns a generator for the stream (seed, stream): every session has
// its own stream so its content does not depend on how sessions interleave.
func newRNG(seed, stream uint64) rng {
	var r rng
	x := seed ^ (stream * 0x9e3779b97f4a7c15)
	for i := range r.s {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		r.s[i] = z ^ (z >> 31)
	}
	return r
}

// u64 returns 64 random bits.
func (r *rng) u64() uint64 {
	s := &r.s
	res := bits.RotateLeft64(s[1]*5, 7) * 9
	t := s[1] << 17
	s[2] ^= s[0]
	s[3] ^= s[1]
	s[1] ^= s[2]
	s[0] ^= s[3]
	s[2] ^= t
	s[3] = bits.RotateLeft64(s[3], 45)
	return res
}

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int {
	hi, _ := bits.Mul64(r.u64(), uint64(n))
	return int(hi)
}

// between returns a number in [lo, hi] (inclusive).
func (r *rng) between(lo, hi int) int {
	if hi <= lo {
		return lo
	}
	return lo + r.intn(hi-lo+1)
}

// between64 is between for int64.
func (r *rng) between64(lo, hi int64) int64 {
	if hi <= lo {
		return lo
	}
	h, _ := bits.Mul64(r.u64(), uint64(hi-lo+1))
	return lo + int64(h)
}

// chance reports true with probability ppm parts per million.
func (r *rng) chance(ppm int) bool {
	return ppm > 0 && r.intn(1_000_000) < ppm
}

// pct reports true with probability p percent.
func (r *rng) pct(p int) bool { return r.intn(100) < p }

// pick returns an index into weights chosen with probability proportional to
// its weight.
func (r *rng) pick(weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.intn(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// fill writes random bytes into p.
func (r *rng) fill(p []byte) {
	for len(p) >= 8 {
		v := r.u64()
		p[0], p[1], p[2], p[3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
		p[4], p[5], p[6], p[7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
		p = p[8:]
	}
	if len(p) > 0 {
		v := r.u64()
		for i := range p {
			p[i] = byte(v >> (8 * i))
		}
	}
}

// exp returns an exponentially distributed duration with the given mean,
// computed in fixed point: -ln(u) = ln2 * -log2(u), with log2(1+f) of the
// mantissa approximated by f + 0.3465*f*(1-f) (error below 0.5%).
func (r *rng) exp(mean int64) int64 {
	u := r.u64() | 1
	lz := bits.LeadingZeros64(u)
	// u/2^64 = 2^-(lz+1) * (1+f), with f in [0,1) as a Q32 fraction.
	f := (u << uint(lz+1)) >> 32
	fq := (f * ((1 << 32) - f)) >> 32     // f*(1-f), Q32
	log2m := f + (fq*22707)>>16           // 0.3465 is 22707 in Q16
	neg := uint64(lz+1)<<32 - log2m       // -log2(u/2^64), Q32
	hi, lo := bits.Mul64(neg, 2977044472) // ln2 in Q32
	ln := hi<<32 | lo>>32                 // -ln(u/2^64), Q32
	hi, lo = bits.Mul64(ln, uint64(mean))
	return int64(hi<<32 | lo>>32)
}

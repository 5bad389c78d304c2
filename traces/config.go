package traces

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Format is the capture file format the generator writes.
type Format string

// Capture formats.
const (
	PCAP   Format = "pcap"   // libpcap format, microsecond timestamps
	PCAPNG Format = "pcapng" // pcapng, one interface, nanosecond resolution
)

// Config says which trace to generate. The zero value is not usable; start
// from DefaultConfig and change what you need.
type Config struct {
	// Seed selects the trace: the same Config gives the same bytes.
	Seed uint64 `json:"seed"`
	// Size stops the generator from starting new sessions once this many
	// bytes are written; the sessions still open then run to their end, so
	// the file is somewhat larger. 0 means no size limit.
	Size int64 `json:"size,omitempty"`
	// Sessions stops the generator after starting this many sessions (an
	// HTTP connection, a DNS exchange, a TLS/SSH/NTP/ping flow). 0 means
	// no limit. At least one of Size and Sessions must be set.
	Sessions int `json:"sessions,omitempty"`
	// Format is the capture format.
	Format Format `json:"format"`
	// Link is the link layer of the frames ("": Ethernet).
	Link Link `json:"link,omitempty"`
	// Mix weighs the kinds of sessions.
	Mix Mix `json:"mix"`
	// Impair sets the impairment rates.
	Impair Impairments `json:"impair"`
	// IPv6 and VLAN are the percentages of sessions carried over IPv6 and
	// tagged with an 802.1Q VLAN header.
	IPv6 int `json:"ipv6_percent"`
	VLAN int `json:"vlan_percent"`
	// Concurrency is the number of sessions open at the same time.
	Concurrency int `json:"concurrency"`
	// MaxBody caps HTTP body sizes (and TLS/SSH transfers); body sizes are
	// heavy-tailed up to this size.
	MaxBody int64 `json:"max_body"`
	// StartNS is the timestamp of the trace's start, ns since the epoch.
	StartNS int64 `json:"start_ns"`
}

// Mix holds the relative weights of the kinds of sessions. A session's kind
// is drawn with probability proportional to its weight.
type Mix struct {
	HTTP int `json:"http"` // HTTP/1.x connections to port 80
	DNS  int `json:"dns"`  // DNS exchanges over UDP (with TCP retries)
	TLS  int `json:"tls"`  // TLS-like connections to port 443
	SSH  int `json:"ssh"`  // SSH-like connections to port 22
	NTP  int `json:"ntp"`  // NTP client/server exchanges on port 123
	ICMP int `json:"icmp"` // ICMP / ICMPv6 echo (ping)
}

// Impairments holds impairment rates in parts per million of the packets
// each impairment may hit (see the package documentation for which those
// are).
type Impairments struct {
	Loss       int `json:"loss_ppm"`       // segment missing from the capture (a gap)
	Reorder    int `json:"reorder_ppm"`    // segment captured after its successor
	Retransmit int `json:"retransmit_ppm"` // segment sent again after a timeout
	Duplicate  int `json:"duplicate_ppm"`  // packet captured twice
	Fragment   int `json:"fragment_ppm"`   // IP packet split into fragments
}

// maxWeight bounds a mix weight, so that weights add up without overflow.
const maxWeight = 1_000_000

// DefaultMix is the session mix of DefaultConfig.
var DefaultMix = Mix{HTTP: 45, DNS: 40, TLS: 6, SSH: 2, NTP: 4, ICMP: 3}

// DefaultImpairments are small rates of every impairment.
var DefaultImpairments = Impairments{Loss: 2000, Reorder: 2000, Retransmit: 3000, Duplicate: 1000, Fragment: 2000}

// DefaultConfig returns the generator's defaults: seed 1, 10 MB of pcap,
// the default mix and impairments, 10% IPv6, 5% VLAN-tagged sessions.
func DefaultConfig() Config {
	return Config{
		Seed:        1,
		Size:        10_000_000,
		Format:      PCAP,
		Mix:         DefaultMix,
		Impair:      DefaultImpairments,
		IPv6:        10,
		VLAN:        5,
		Concurrency: 64,
		MaxBody:     8 << 20,
		StartNS:     1710234000_000_000_000, // 2024-03-12 09:00:00 UTC
	}
}

// Validate reports the first setting that cannot work.
func (c *Config) Validate() error {
	switch {
	case c.Size < 0:
		return errors.New("size must not be negative")
	case c.Sessions < 0:
		return errors.New("the number of sessions must not be negative")
	case c.Size == 0 && c.Sessions == 0:
		return errors.New("set a size or a number of sessions")
	case c.Format != PCAP && c.Format != PCAPNG:
		return fmt.Errorf("unknown format %q (want pcap or pcapng)", c.Format)
	case c.Link.linkType() == 0:
		return fmt.Errorf("unknown link layer %q (want one of %v)", c.Link, Links)
	case c.Mix.HTTP < 0 || c.Mix.DNS < 0 || c.Mix.TLS < 0 || c.Mix.SSH < 0 || c.Mix.NTP < 0 || c.Mix.ICMP < 0:
		return errors.New("mix weights must not be negative")
	case c.Mix.total() <= 0:
		return errors.New("the mix has no session kind with a positive weight")
	case c.IPv6 < 0 || c.IPv6 > 100:
		return fmt.Errorf("IPv6 share %d%% is not a percentage", c.IPv6)
	case c.VLAN < 0 || c.VLAN > 100:
		return fmt.Errorf("VLAN share %d%% is not a percentage", c.VLAN)
	case c.Concurrency < 1 || c.Concurrency > 100_000:
		return fmt.Errorf("concurrency %d is outside 1..100000", c.Concurrency)
	case c.MaxBody < 1024:
		return fmt.Errorf("maximum body size %d is below 1 KiB", c.MaxBody)
	}
	for _, w := range []int{c.Mix.HTTP, c.Mix.DNS, c.Mix.TLS, c.Mix.SSH, c.Mix.NTP, c.Mix.ICMP} {
		if w < 0 || w > maxWeight {
			return fmt.Errorf("mix weights must be between 0 and %d", maxWeight)
		}
	}
	for _, r := range []int{c.Impair.Loss, c.Impair.Reorder, c.Impair.Retransmit, c.Impair.Duplicate, c.Impair.Fragment} {
		if r < 0 || r > 1_000_000 {
			return errors.New("impairment rates must be between 0 and 1")
		}
	}
	return nil
}

func (m Mix) total() int { return m.HTTP + m.DNS + m.TLS + m.SSH + m.NTP + m.ICMP }

func (m Mix) weights() []int { return []int{m.HTTP, m.DNS, m.TLS, m.SSH, m.NTP, m.ICMP} }

// String formats m the way ParseMix reads it.
func (m Mix) String() string {
	return fmt.Sprintf("http=%d,dns=%d,tls=%d,ssh=%d,ntp=%d,icmp=%d", m.HTTP, m.DNS, m.TLS, m.SSH, m.NTP, m.ICMP)
}

// ParseMix reads a mix such as "http=60,dns=30,tls=10": relative weights of
// the kinds named; kinds not named get weight 0. "default" is DefaultMix.
func ParseMix(s string) (Mix, error) {
	if strings.TrimSpace(s) == "default" {
		return DefaultMix, nil
	}
	var m Mix
	fields := map[string]*int{"http": &m.HTTP, "dns": &m.DNS, "tls": &m.TLS, "ssh": &m.SSH, "ntp": &m.NTP, "icmp": &m.ICMP}
	err := parsePairs(s, func(k, v string) error {
		p, ok := fields[k]
		if !ok {
			return fmt.Errorf("unknown kind %q (want %s)", k, keys(fields))
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > maxWeight {
			return fmt.Errorf("weight of %s: %q is not a whole number from 0 to %d", k, v, maxWeight)
		}
		*p = n
		return nil
	})
	if err != nil {
		return Mix{}, err
	}
	if m.total() == 0 {
		return Mix{}, fmt.Errorf("mix %q: no kind has a positive weight", s)
	}
	return m, nil
}

// String formats im the way ParseImpairments reads it.
func (im Impairments) String() string {
	if im == (Impairments{}) {
		return "none"
	}
	f := func(ppm int) string { return strconv.FormatFloat(float64(ppm)/1e4, 'f', -1, 64) + "%" }
	return fmt.Sprintf("loss=%s,reorder=%s,retransmit=%s,duplicate=%s,fragment=%s",
		f(im.Loss), f(im.Reorder), f(im.Retransmit), f(im.Duplicate), f(im.Fragment))
}

// ParseImpairments reads impairment rates such as "loss=0.5%,reorder=0.001":
// each a fraction or a percentage of the packets it may hit. Impairments
// not named are off. "none" turns all off; "default" is DefaultImpairments.
func ParseImpairments(s string) (Impairments, error) {
	switch strings.TrimSpace(s) {
	case "none", "off", "0":
		return Impairments{}, nil
	case "default":
		return DefaultImpairments, nil
	}
	var im Impairments
	fields := map[string]*int{"loss": &im.Loss, "reorder": &im.Reorder, "retransmit": &im.Retransmit,
		"duplicate": &im.Duplicate, "fragment": &im.Fragment}
	err := parsePairs(s, func(k, v string) error {
		p, ok := fields[k]
		if !ok {
			return fmt.Errorf("unknown impairment %q (want %s)", k, keys(fields))
		}
		ppm, err := parseRate(v)
		if err != nil {
			return fmt.Errorf("rate of %s: %w", k, err)
		}
		*p = ppm
		return nil
	})
	return im, err
}

// parseRate reads "0.002" or "0.2%" as parts per million.
func parseRate(v string) (int, error) {
	scale := 1e6
	num := v
	if strings.HasSuffix(v, "%") {
		scale, num = 1e4, strings.TrimSuffix(v, "%")
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*scale > 1e6 {
		return 0, fmt.Errorf("%q is not a rate between 0 and 1 (or 0%% and 100%%)", v)
	}
	return int(math.Round(f * scale)), nil
}

func parsePairs(s string, set func(k, v string) error) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty list (want name=value,...)")
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return fmt.Errorf("%q is not name=value", kv)
		}
		if err := set(strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	return nil
}

func keys(m map[string]*int) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// ParseSize reads a size with an optional unit: "1500", "20MB", "1.5GB",
// "500KiB", "64k". Decimal units (kB, MB, GB, TB; k, M, G, T) are powers of
// 1000, binary ones (KiB, MiB, GiB, TiB) powers of 1024; a trailing "B" is
// optional and case does not matter.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	units := map[string]int64{
		"": 1, "b": 1,
		"k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
		"ki": 1 << 10, "kib": 1 << 10, "mi": 1 << 20, "mib": 1 << 20, "gi": 1 << 30, "gib": 1 << 30, "ti": 1 << 40, "tib": 1 << 40,
	}
	mult, ok := units[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("size %q: want a number with an optional unit such as 500KiB, 20MB or 1GB", s)
	}
	whole, frac, _ := strings.Cut(num, ".")
	if strings.Contains(frac, ".") || len(frac) > 9 || whole == "" && frac == "" {
		return 0, fmt.Errorf("size %q: malformed number", s)
	}
	w, err := strconv.ParseInt("0"+whole, 10, 64)
	if err != nil || w > math.MaxInt64/mult {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	n := w * mult
	if frac != "" {
		// Exact decimal fraction: frac/10^len(frac) * mult, in integers.
		f, _ := strconv.ParseInt(frac, 10, 64)
		den := int64(1)
		for range frac {
			den *= 10
		}
		hi, lo := mulDiv(f, mult, den)
		if hi {
			return 0, fmt.Errorf("size %q: too large", s)
		}
		n += lo
	}
	return n, nil
}

// mulDiv returns a*b/den, reporting overflow.
func mulDiv(a, b, den int64) (overflow bool, q int64) {
	if a != 0 && b > math.MaxInt64/a {
		// Divide first; the fractions here are small enough to lose nothing
		// that matters in a byte count.
		return b/den > math.MaxInt64/a, a * (b / den)
	}
	return false, a * b / den
}

// FormatSize formats n bytes with a binary unit for messages.
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

package traces

import (
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{"0", 0, false},
		{"1500", 1500, false},
		{"20MB", 20_000_000, false},
		{"20mb", 20_000_000, false},
		{"1GB", 1_000_000_000, false},
		{"1.5GB", 1_500_000_000, false},
		{"500KiB", 500 << 10, false},
		{"64k", 64_000, false},
		{"2GiB", 2 << 30, false},
		{" 3 MiB ", 3 << 20, false},
		{"0.5KiB", 512, false},
		{".5MB", 500_000, false},
		{"1TB", 1_000_000_000_000, false},
		{"", 0, true},
		{"MB", 0, true},
		{"12XB", 0, true},
		{"1.2.3MB", 0, true},
		{"-5MB", 0, true},
		{"99999999999999999999GB", 0, true},
		{"9999999999TiB", 0, true},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}

func TestParseMix(t *testing.T) {
	m, err := ParseMix("http=60, DNS=30,tls=10")
	if err != nil || m != (Mix{HTTP: 60, DNS: 30, TLS: 10}) {
		t.Fatalf("ParseMix = %+v, %v", m, err)
	}
	if m, err := ParseMix(DefaultMix.String()); err != nil || m != DefaultMix {
		t.Fatalf("ParseMix(String()) = %+v, %v; want %+v", m, err, DefaultMix)
	}
	for _, bad := range []string{"", "http", "http=x", "smtp=3", "http=-1", "http=0,dns=0", "http=9223372036854775807,dns=1"} {
		if _, err := ParseMix(bad); err == nil {
			t.Errorf("ParseMix(%q) succeeded", bad)
		}
	}
}

func TestParseImpairments(t *testing.T) {
	im, err := ParseImpairments("loss=0.5%,reorder=0.001,fragment=1%")
	if err != nil || im != (Impairments{Loss: 5000, Reorder: 1000, Fragment: 10000}) {
		t.Fatalf("ParseImpairments = %+v, %v", im, err)
	}
	if im, err := ParseImpairments("none"); err != nil || im != (Impairments{}) {
		t.Fatalf("none = %+v, %v", im, err)
	}
	if im, err := ParseImpairments(DefaultImpairments.String()); err != nil || im != DefaultImpairments {
		t.Fatalf("round trip = %+v, %v; want %+v", im, err, DefaultImpairments)
	}
	for _, bad := range []string{"loss", "loss=2", "loss=-1%", "loss=150%", "jitter=1%", "loss=NaN"} {
		if _, err := ParseImpairments(bad); err == nil {
			t.Errorf("ParseImpairments(%q) succeeded", bad)
		}
	}
}

func TestValidate(t *testing.T) {
	mod := func(f func(*Config)) Config {
		c := DefaultConfig()
		f(&c)
		return c
	}
	tests := []struct {
		name string
		cfg  Config
		want string // part of the error, "" for none
	}{
		{"default", DefaultConfig(), ""},
		{"no limit", mod(func(c *Config) { c.Size = 0 }), "size or a number of sessions"},
		{"sessions only", mod(func(c *Config) { c.Size, c.Sessions = 0, 10 }), ""},
		{"format", mod(func(c *Config) { c.Format = "erf" }), "unknown format"},
		{"empty mix", mod(func(c *Config) { c.Mix = Mix{} }), "mix"},
		{"ipv6", mod(func(c *Config) { c.IPv6 = 101 }), "percentage"},
		{"concurrency", mod(func(c *Config) { c.Concurrency = 0 }), "concurrency"},
		{"max body", mod(func(c *Config) { c.MaxBody = 10 }), "body"},
		{"rate", mod(func(c *Config) { c.Impair.Loss = 2_000_000 }), "rates"},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Validate() = %v, want error containing %q", tt.name, err, tt.want)
		}
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"1GB", "500KiB", "1.5GB", "0", ".5MB", "12XB"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s)
		if err == nil && n < 0 {
			t.Fatalf("ParseSize(%q) = %d", s, n)
		}
	})
}

func FuzzParseImpairments(f *testing.F) {
	for _, s := range []string{"none", "loss=0.5%,reorder=0.001", "default", "loss=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		im, err := ParseImpairments(s)
		if err != nil {
			return
		}
		back, err := ParseImpairments(im.String())
		if err != nil || back != im {
			t.Fatalf("%q: %+v does not round-trip through %q: %+v, %v", s, im, im.String(), back, err)
		}
	})
}

func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"http=60,dns=30,tls=10", "default", "http=1", "smtp=2", "http=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMix(s)
		if err != nil {
			return
		}
		if m.total() <= 0 {
			t.Fatalf("%q: accepted a mix without weight: %+v", s, m)
		}
		back, err := ParseMix(m.String())
		if err != nil || back != m {
			t.Fatalf("%q: %+v does not round-trip through %q: %+v, %v", s, m, m.String(), back, err)
		}
	})
}

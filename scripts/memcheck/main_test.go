package main

import "testing"

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
	}{
		{"1GB", 1e9}, {"150MB", 150e6}, {"150mb", 150e6}, {"500MiB", 500 << 20}, {"2GiB", 2 << 30},
		{"1.5KB", 1500}, {"100000", 100000}, {"64 KiB", 64 << 10},
		{"", 0}, {"0", 0}, {"GB", 0}, {"-1GB", 0}, {"lots", 0},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if tt.want == 0 {
			if err == nil {
				t.Errorf("parseSize(%q) = %d, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v, want %d", tt.in, got, err, tt.want)
		}
	}
}

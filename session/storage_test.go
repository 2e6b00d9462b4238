package session

import (
	"testing"
)

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1,000 bytes",
		27_000_000: "27,000,000 bytes", 26214400: "26,214,400 bytes", -1234: "-1,234 bytes"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestParseLimitMB(t *testing.T) {
	for in, want := range map[string]int{"": 0, " 1 ": 1, "1024": 1024} {
		if got, err := ParseLimitMB(in); err != nil || got != want {
			t.Errorf("ParseLimitMB(%q) = %d %v", in, got, err)
		}
	}
	for _, in := range []string{"0", "-5", "1.5", "lots", "1GB"} {
		if _, err := ParseLimitMB(in); err == nil {
			t.Errorf("ParseLimitMB(%q) accepted", in)
		}
	}
}

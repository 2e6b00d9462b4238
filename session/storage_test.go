package session

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestWriteOutput(t *testing.T) { forEachStore(t, testWriteOutput) }

// TestListFiles: sources/ lists the files added, results/ (and the other
// output folders) every file below it, sorted by path; fileCount counts
// sources/.
func TestListFiles(t *testing.T) { forEachStore(t, testListFiles) }

func TestAddFileFromPathTooLargeSaysExactSizes(t *testing.T) {
	forEachStore(t, testAddFileFromPathTooLargeSaysExactSizes)
}

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1,000 bytes",
		27_000_000: "27,000,000 bytes", 26214400: "26,214,400 bytes", -1234: "-1,234 bytes"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestEnforceSoftLimitFollowsNoLinks: a data/ folder that is a symbolic
// link, or a link inside data/, never leads the clean-up outside.
func TestEnforceSoftLimitFollowsNoLinks(t *testing.T) {
	forEachStore(t, testEnforceSoftLimitFollowsNoLinks)
}

func TestPruneInactive(t *testing.T) { forEachStore(t, testPruneInactive) }

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

func TestOutputTarget(t *testing.T) { forEachStore(t, testOutputTarget) }


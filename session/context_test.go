package session

import (
	"errors"
	"testing"
)

func TestNormalizeFileItem(t *testing.T) {
	roots := []string{"/w/app"}
	for in, want := range map[string]string{
		"main.go":                 "/w/app/main.go",
		"./a/../b.go":             "/w/app/b.go",
		"file:///w/app/x%20y.go":  "/w/app/x y.go",
		"/etc/../w/z.go":          "/w/z.go",
		"  spaced.go ":            "/w/app/spaced.go",
		"file:///w/app/docs/a.md": "/w/app/docs/a.md",
		"../outside/of/workspace": "/w/outside/of/workspace",
	} {
		got, err := NormalizeFileItem(in, roots)
		if err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "a\x00", "https://example.com/x"} {
		if _, err := NormalizeFileItem(bad, roots); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	if _, err := NormalizeFileItem("rel.go", nil); !errors.Is(err, ErrInvalid) {
		t.Errorf("relative without roots: %v", err)
	}
}

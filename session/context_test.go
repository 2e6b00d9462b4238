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

// TestPathFromURI: a file URI's path, percent-decoded; a host other than
// localhost, another scheme, a relative path or a NUL is none.
func TestPathFromURI(t *testing.T) {
	for in, want := range map[string]string{
		"file:///home/ann/w%C3%B6rt%20space/main.go": "/home/ann/wört space/main.go",
		"file://localhost/tmp/a/../b.go":             "/tmp/b.go",
		"file:///tmp/100%25.txt":                     "/tmp/100%.txt",
		"file://server/share/x.go":                   "",
		"file:relative.go":                           "",
		"untitled:Untitled-1":                        "",
		"file:///tmp/a%00b":                          "",
		"file://":                                    "",
	} {
		got, ok := PathFromURI(in)
		if got != want || ok != (want != "") {
			t.Errorf("PathFromURI(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}

package search

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestRequired: the literal the prefilter looks for, and whether the
// pattern is nothing more.
func TestRequired(t *testing.T) {
	for _, c := range []struct {
		pattern    string
		ignoreCase bool
		lit        string
		pure       bool
	}{
		{`func main`, false, "func main", true},
		{`func \w+Handler\(`, false, "Handler(", false},
		{`(foo)bar`, false, "foobar", false},
		{`errors\.New\(`, false, "errors.New(", true},
		{`^package \w+$`, false, "package ", false},
		{`abc|abd`, false, "ab", false},
		{`a+bc`, false, "bc", false},
		{`x(?:yz){2,}`, false, "xyz", false}, // then (yz)+
		{`foo|bar`, false, "", false},
		{`a*`, false, "", false},
		{`Hello`, true, "hello", true},
		{`(?i)Hello World`, false, "hello world", true},
		{`(?i)héllo`, false, "", false}, // no ASCII folding: line by line
		{`héllo`, false, "héllo", true},
		{`a.b`, false, "a", false},
	} {
		m, err := newMatcher(c.pattern, c.ignoreCase)
		if err != nil {
			t.Fatal(err)
		}
		if string(m.lit) != c.lit || m.pure != c.pure {
			t.Errorf("%s: %q pure %v, want %q pure %v", c.pattern, m.lit, m.pure, c.lit, c.pure)
		}
	}
}

// TestASCIIFolds: the case-insensitive prefilter compares ASCII letters
// ignoring case, and looks line by line where k or s meet the Kelvin sign
// or the long s. That is right only if no other ASCII letter folds with
// a non-ASCII rune.
func TestASCIIFolds(t *testing.T) {
	for c := 'a'; c <= 'z'; c++ {
		var orbit []rune
		for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
			orbit = append(orbit, r)
		}
		want := []rune{unicode.ToUpper(c)}
		switch c {
		case 'k':
			want = append(want, '\u212A')
		case 's':
			want = append(want, '\u017F')
		}
		slices.Sort(orbit)
		if string(orbit) != string(want) {
			t.Errorf("%c folds with %q", c, string(orbit))
		}
	}
	if string(kelvin) != "\u212A" || string(longS) != "\u017F" {
		t.Error("the fold exceptions changed")
	}
}

// TestIndexFold: found by its rarest byte in either case, at any offset.
func TestIndexFold(t *testing.T) {
	m, err := newMatcher("Quiz", true)
	if err != nil {
		t.Fatal(err)
	}
	if m.lit[m.rare] != 'z' && m.lit[m.rare] != 'q' {
		t.Errorf("rarest byte of %q: %c", m.lit, m.lit[m.rare])
	}
	for _, c := range []struct {
		hay  string
		want int
	}{
		{"quiz", 0}, {"a QUIZ", 2}, {"qui", -1}, {"zzz quiZ", 4}, {"quIzquiz", 0}, {"qu iz", -1}, {"", -1}, {"z", -1},
		{strings.Repeat("z", 100) + "QuIz", 100},
	} {
		if got := m.indexFold([]byte(c.hay), m.lit); got != c.want {
			t.Errorf("%q: %d, want %d", c.hay, got, c.want)
		}
	}
}

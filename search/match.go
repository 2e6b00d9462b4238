package search

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// A matcher finds the lines of a text that match a pattern. It never runs
// the regular expression over a whole file: when every match must contain
// some literal text (found in the pattern's syntax tree), it looks for
// that text with bytes.Index and runs the expression only on the lines
// holding it (not at all when the pattern is that text); otherwise it runs
// the expression line by line.
type matcher struct {
	re *regexp.Regexp
	// lit is a literal every match contains, nil when there is none (or
	// none worth searching for); when fold, it is in ASCII lower case and
	// searched for in the text's ASCII lower-cased copy.
	lit  []byte
	fold bool
	// foldKS: lit holds k or s, which Unicode folds with the Kelvin sign
	// and the long s; in a text with non-ASCII bytes the lower-cased copy
	// would miss those, so such a text is searched line by line.
	foldKS bool
	// pure: the pattern is lit itself, so a line holding it matches.
	pure bool
}

func newMatcher(pattern string, ignoreCase bool) (*matcher, error) {
	if pattern == "" {
		return nil, errors.New("empty pattern: give a regular expression to search for")
	}
	expr := pattern
	if ignoreCase {
		expr = "(?i)" + pattern
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), "error parsing regexp: ")
		return nil, fmt.Errorf("invalid regular expression %q: %s (Go RE2 syntax; to search for the text as written, escape it: %s)", pattern, msg, regexp.QuoteMeta(pattern))
	}
	tree, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %q: %v", pattern, err)
	}
	if hasNewline(tree) {
		return nil, fmt.Errorf("the pattern %q contains a line break, but lines are searched one at a time: search for one line's text", pattern)
	}
	tree = tree.Simplify()
	m := &matcher{re: re}
	lit, fold := required(tree)
	if strings.ContainsRune(string(lit), utf8.RuneError) {
		// The expression matches invalid bytes as U+FFFD; the text does
		// not hold that rune's bytes.
		return m, nil
	}
	s := string(lit)
	if fold {
		for _, r := range lit {
			if r >= utf8.RuneSelf {
				return m, nil // no ASCII folding for it: line by line
			}
		}
		s = strings.ToLower(s)
		m.fold = true
		m.foldKS = strings.ContainsAny(s, "ks")
	}
	if s != "" {
		m.lit = []byte(s)
		body := tree
		for body.Op == syntax.OpCapture {
			body = body.Sub[0]
		}
		m.pure = body.Op == syntax.OpLiteral && string(body.Rune) == string(lit)
	}
	return m, nil
}

// hasNewline reports a literal line break in the pattern.
func hasNewline(re *syntax.Regexp) bool {
	if re.Op == syntax.OpLiteral {
		for _, r := range re.Rune {
			if r == '\n' {
				return true
			}
		}
	}
	for _, s := range re.Sub {
		if hasNewline(s) {
			return true
		}
	}
	return false
}

// required returns the longest literal that every match of re contains,
// and whether it is matched case-insensitively.
func required(re *syntax.Regexp) (lit []rune, fold bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return re.Rune, re.Flags&syntax.FoldCase != 0
	case syntax.OpCapture, syntax.OpPlus:
		return required(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return required(re.Sub[0])
		}
	case syntax.OpConcat:
		var best, run []rune
		var bestFold, runFold bool
		flush := func() {
			if len(run) > len(best) {
				best, bestFold = run, runFold
			}
			run = nil
		}
		for _, sub := range re.Sub {
			s := sub
			for s.Op == syntax.OpCapture {
				s = s.Sub[0]
			}
			if s.Op == syntax.OpLiteral {
				f := s.Flags&syntax.FoldCase != 0
				if len(run) > 0 && f != runFold {
					flush()
				}
				run = append(run[:len(run):len(run)], s.Rune...)
				runFold = f
				continue
			}
			flush()
			if l, f := required(sub); len(l) > len(best) {
				best, bestFold = l, f
			}
		}
		flush()
		return best, bestFold
	}
	return nil, false
}

// A span is a matching line: [start, end) without its line break (nor a
// carriage return before it); at is where in the line a match (or the
// literal every match holds) starts, -1 when not known.
type span struct {
	start, end, at int
}

// scan calls fn for each matching line of data in order; lower is scratch
// space for a lower-cased copy.
func (m *matcher) scan(data []byte, lower *[]byte, fn func(span)) {
	if m.lit == nil {
		m.eachLine(data, fn)
		return
	}
	hay := data
	if m.fold {
		var nonASCII bool
		*lower, nonASCII = lowerASCII((*lower)[:0], data)
		if nonASCII && m.foldKS {
			m.eachLine(data, fn)
			return
		}
		hay = *lower
	}
	lit := m.lit
	for pos := 0; pos+len(lit) <= len(hay); {
		i := bytes.Index(hay[pos:], lit)
		if i < 0 {
			return
		}
		i += pos
		ls := pos + bytes.LastIndexByte(data[pos:i], '\n') + 1
		next := len(data)
		le := len(data)
		if j := bytes.IndexByte(data[i:], '\n'); j >= 0 {
			le, next = i+j, i+j+1
		}
		if le > ls && data[le-1] == '\r' {
			le--
		}
		if m.pure || m.re.Match(data[ls:le]) {
			fn(span{ls, le, i - ls})
		}
		pos = next
	}
}

// eachLine runs the expression on every line.
func (m *matcher) eachLine(data []byte, fn func(span)) {
	for pos := 0; pos < len(data); {
		le, next := len(data), len(data)
		if j := bytes.IndexByte(data[pos:], '\n'); j >= 0 {
			le, next = pos+j, pos+j+1
		}
		end := le
		if end > pos && data[end-1] == '\r' {
			end--
		}
		if m.re.Match(data[pos:end]) {
			fn(span{pos, end, -1})
		}
		pos = next
	}
}

// lowerASCII appends src with ASCII letters lower-cased to dst, and
// reports whether src has non-ASCII bytes.
func lowerASCII(dst, src []byte) ([]byte, bool) {
	if cap(dst) < len(src) {
		dst = make([]byte, len(src), len(src)+len(src)/8)
	}
	dst = dst[:len(src)]
	var high byte
	for i, c := range src {
		high |= c
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
	return dst, high >= utf8.RuneSelf
}

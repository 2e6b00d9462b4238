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
	// matched ignoring ASCII case, found by its rarest byte (rare, at
	// that offset in lit) in either case.
	lit  []byte
	fold bool
	rare int
	// foldK, foldS: lit holds k or s, which Unicode folds with the Kelvin
	// sign and the long s; a text holding those is searched line by line.
	foldK, foldS bool
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
		m.foldK, m.foldS = strings.Contains(s, "k"), strings.Contains(s, "s")
		for i := range len(s) {
			if byteRank(s[i]) < byteRank(s[m.rare]) {
				m.rare = i
			}
		}
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
		for _, s := range flatten(re, nil) {
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
			if l, f := required(s); len(l) > len(best) {
				best, bestFold = l, f
			}
		}
		flush()
		return best, bestFold
	}
	return nil, false
}

// flatten lists a concatenation's parts, nested concatenations and groups
// opened up, so that their literals join.
func flatten(re *syntax.Regexp, into []*syntax.Regexp) []*syntax.Regexp {
	for _, s := range re.Sub {
		for s.Op == syntax.OpCapture {
			s = s.Sub[0]
		}
		if s.Op == syntax.OpConcat {
			into = flatten(s, into)
		} else {
			into = append(into, s)
		}
	}
	return into
}

// A span is a matching line: [start, end) without its line break (nor a
// carriage return before it); at is where in the line a match (or the
// literal every match holds) starts, -1 when not known.
type span struct {
	start, end, at int
}

// scan calls fn for each matching line of data in order.
func (m *matcher) scan(data []byte, fn func(span)) {
	if m.lit == nil {
		m.eachLine(data, fn)
		return
	}
	index := bytes.Index
	if m.fold {
		if (m.foldK && bytes.Contains(data, kelvin)) || (m.foldS && bytes.Contains(data, longS)) {
			m.eachLine(data, fn)
			return
		}
		index = m.indexFold
	}
	lit := m.lit
	for pos := 0; pos+len(lit) <= len(data); {
		i := index(data[pos:], lit)
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

var (
	kelvin = []byte("\u212A")
	longS  = []byte("\u017F")
)

// indexFold finds lit (lower case) in hay ignoring ASCII case: it looks
// for lit's rarest byte in both cases with bytes.IndexByte, remembering
// where each case next occurs, and compares around it.
func (m *matcher) indexFold(hay, lit []byte) int {
	k := m.rare
	lo := lit[k]
	up := lo
	if 'a' <= lo && lo <= 'z' {
		up = lo - ('a' - 'A')
	}
	nextLo, nextUp := -1, -1 // next occurrence at or after pos; len(hay) for none
	for pos := k; pos < len(hay); {
		if nextLo < pos {
			nextLo = len(hay)
			if j := bytes.IndexByte(hay[pos:], lo); j >= 0 {
				nextLo = pos + j
			}
		}
		if nextUp < pos {
			nextUp = len(hay)
			if j := bytes.IndexByte(hay[pos:], up); j >= 0 {
				nextUp = pos + j
			}
		}
		i := min(nextLo, nextUp)
		if i == len(hay) {
			return -1
		}
		if start := i - k; start+len(lit) <= len(hay) && equalFoldASCII(hay[start:start+len(lit)], lit) {
			return start
		}
		pos = i + 1
	}
	return -1
}

// equalFoldASCII compares a with lower (in lower case) ignoring ASCII case.
func equalFoldASCII(a, lower []byte) bool {
	for i, c := range a {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// byteRank is how common a byte is in source code and prose, either case
// (higher is more common): letters by their frequency in English, then
// spaces and the usual punctuation; everything else counts as rare.
func byteRank(c byte) int {
	const common = "etaoinsrhldcumfpgwybvkxjqz" // rarest last
	if 'A' <= c && c <= 'Z' {
		c += 'a' - 'A'
	}
	if i := strings.IndexByte(common, c); i >= 0 {
		return 100 - i
	}
	switch c {
	case ' ', '\t', '\n':
		return 200
	case '(', ')', '.', ',', ';', '"', '_', '=', '{', '}', '*', '/', '-', ':':
		return 90
	}
	return 10
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

package prompts

import (
	"sync"
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers below are hand-written equivalents of the split
// regexes of cl100k_base and o200k_base as tiktoken-go runs them: with
// github.com/dlclark/regexp2 (backtracking, .NET semantics) over the text's
// runes, where \s is unicode.IsSpace, \p{..} are Go's unicode tables and
// (?i) compares unicode.ToLower of each character. Each next* function
// returns where the match starting at i ends; the regex matches every
// character somewhere, so the matches tile the text.

// Character class bits. U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// W = [\p{Ll}\p{Lm}\p{Lo}\p{M}] are o200k's upper- and lower-case word
// classes.
const (
	cL  uint8 = 1 << iota // \p{L}
	cN                    // \p{N}
	cS                    // \s
	cM                    // \p{M}
	cUp                   // \p{Lu} or \p{Lt}
	cLo                   // \p{Ll}
	cMo                   // \p{Lm} or \p{Lo}

	cU = cUp | cMo | cM
	cW = cLo | cMo | cM
)

var (
	asciiClass [256]uint8 // by byte; only the ASCII half is used
	bmpOnce    sync.Once
	bmpClass   []uint8 // classes of U+0000..U+FFFF, built on first use
)

func init() {
	for r := range rune(utf8.RuneSelf) {
		asciiClass[r] = slowClass(r)
	}
}

// slowClass computes a rune's class bits from the unicode tables, exactly
// as regexp2 tests them.
func slowClass(r rune) uint8 {
	var c uint8
	if unicode.Is(unicode.L, r) {
		c |= cL
	}
	if unicode.Is(unicode.N, r) {
		c |= cN
	}
	if unicode.IsSpace(r) {
		c |= cS
	}
	if unicode.Is(unicode.M, r) {
		c |= cM
	}
	if unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r) {
		c |= cUp
	}
	if unicode.Is(unicode.Ll, r) {
		c |= cLo
	}
	if unicode.Is(unicode.Lm, r) || unicode.Is(unicode.Lo, r) {
		c |= cMo
	}
	return c
}

// loadClasses builds the table for the Basic Multilingual Plane from the
// same unicode range tables, walking their ranges (under a millisecond)
// rather than testing 65,536 runes one by one.
func loadClasses() {
	bmpOnce.Do(func() {
		t := make([]uint8, 1<<16)
		mark := func(tab *unicode.RangeTable, bit uint8) {
			for _, r := range tab.R16 {
				for c := int(r.Lo); c <= int(r.Hi); c += int(r.Stride) {
					t[c] |= bit
				}
			}
		}
		mark(unicode.L, cL)
		mark(unicode.N, cN)
		mark(unicode.M, cM)
		mark(unicode.Lu, cUp)
		mark(unicode.Lt, cUp)
		mark(unicode.Ll, cLo)
		mark(unicode.Lm, cMo)
		mark(unicode.Lo, cMo)
		// unicode.IsSpace: its own list in Latin-1, White_Space above.
		for _, r := range unicode.White_Space.R16 {
			for c := int(r.Lo); c <= int(r.Hi); c += int(r.Stride) {
				if c > unicode.MaxLatin1 {
					t[c] |= cS
				}
			}
		}
		for c := range unicode.MaxLatin1 + 1 {
			if unicode.IsSpace(rune(c)) {
				t[c] |= cS
			}
		}
		bmpClass = t
	})
}

// at returns the class bits and the width of the rune at s[i] (i < len(s)).
// s must be valid UTF-8 (see validUTF8).
func at(s string, i int) (uint8, int) {
	if b := s[i]; b < utf8.RuneSelf {
		return asciiClass[b], 1
	}
	return atRune(s, i)
}

// atRune is at for a rune outside ASCII. Hot loops test for ASCII
// themselves and call it only for other runes (at does not inline).
func atRune(s string, i int) (uint8, int) {
	r, w := utf8.DecodeRuneInString(s[i:])
	if r < 1<<16 {
		return bmpClass[r], w
	}
	return slowClass(r), w
}

// validUTF8 returns s with each byte that is not part of a valid UTF-8
// sequence replaced by U+FFFD, as Go's []rune(s) conversion does: that is
// the text tiktoken-go matches and encodes.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+len(s)/2)
	for i := 0; i < len(s); {
		r, w := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && w == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+w]...)
		}
		i += w
	}
	return string(b)
}

func isNewline(b byte) bool { return b == '\r' || b == '\n' }

// contraction returns the length of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i:],
// or 0. Only ASCII letters lower-case to these letters, so comparing bytes
// with the case bit cleared is exact.
func contraction(s string, i int) int {
	if i >= len(s) || s[i] != '\'' {
		return 0
	}
	return contractionAfterQuote(s, i)
}

// contractionAfterQuote is contraction after finding the apostrophe at
// s[i], kept apart so that contraction inlines.
func contractionAfterQuote(s string, i int) int {
	if i+1 >= len(s) {
		return 0
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return 2
	case 'r':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return 3
		}
	}
	return 0
}

// run returns the end of the run of characters from i whose class has
// one of the bits in set.
func run(s string, i int, set uint8) int {
	for i < len(s) {
		c, w := asciiClass[s[i]], 1 // at(s, i), inlined by hand
		if s[i] >= utf8.RuneSelf {
			c, w = atRune(s, i)
		}
		if c&set == 0 {
			break
		}
		i += w
	}
	return i
}

// punctRun returns the end of the run of [^\s\p{L}\p{N}] from i.
func punctRun(s string, i int) int {
	for i < len(s) {
		c, w := asciiClass[s[i]], 1
		if s[i] >= utf8.RuneSelf {
			c, w = atRune(s, i)
		}
		if c&(cS|cL|cN) != 0 {
			break
		}
		i += w
	}
	return i
}

// digits returns the end of \p{N}{1,3} at i, whose first rune has width w.
func digits(s string, i, w int) int {
	i += w
	for range 2 {
		if i == len(s) {
			break
		}
		c, w := at(s, i)
		if c&cN == 0 {
			break
		}
		i += w
	}
	return i
}

// spaces returns the end of the match at i for a whitespace character,
// the last three alternatives of both patterns:
//
//	\s*[\r\n]+   up to the last \r or \n of the whitespace run, if any;
//	\s+(?!\S)    the run but its last character, when something follows;
//	\s+          the whole run (a run of one character before \S).
func spaces(s string, i int) int {
	q, last, nl := i, i, -1
	for q < len(s) {
		c, w := asciiClass[s[q]], 1
		if s[q] >= utf8.RuneSelf {
			c, w = atRune(s, q)
		}
		if c&cS == 0 {
			break
		}
		if isNewline(s[q]) {
			nl = q
		}
		last = q
		q += w
	}
	switch {
	case nl >= 0:
		return nl + 1
	case q == len(s) || last == i:
		return q
	default:
		return last
	}
}

// nextCL100k matches at s[i:]:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
func nextCL100k(s string, i int) int {
	if n := contraction(s, i); n > 0 {
		return i + n
	}
	c, w := asciiClass[s[i]], 1 // at(s, i), inlined by hand
	if s[i] >= utf8.RuneSelf {
		c, w = atRune(s, i)
	}
	if c&cL != 0 {
		return run(s, i+w, cL)
	}
	if c&(cL|cN) == 0 && !isNewline(s[i]) && i+w < len(s) {
		if c2, _ := at(s, i+w); c2&cL != 0 {
			return run(s, i+w, cL)
		}
	}
	if c&cN != 0 {
		return digits(s, i, w)
	}
	if j := punctuation(s, i, c); j > i {
		for j < len(s) && isNewline(s[j]) {
			j++
		}
		return j
	}
	return spaces(s, i)
}

// punctuation returns the end of " ?[^\s\p{L}\p{N}]+" at i, whose rune has
// class c, or i.
func punctuation(s string, i int, c uint8) int {
	if s[i] == ' ' && i+1 < len(s) {
		if c2, _ := at(s, i+1); c2&(cS|cL|cN) == 0 {
			return punctRun(s, i+1)
		}
	}
	if c&(cS|cL|cN) == 0 {
		return punctRun(s, i)
	}
	return i
}

// nextO200k matches at s[i:]:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// The backtracking order of the two word alternatives (call them 1 and 2)
// is: 1 with the optional leading character taken, 1 without it, 2 with
// it, 2 without it. Only letters and marks are in U or W, which settles
// most of these tries from the class of the first character.
func nextO200k(s string, i int) int {
	c, w := asciiClass[s[i]], 1 // at(s, i), inlined by hand
	if s[i] >= utf8.RuneSelf {
		c, w = atRune(s, i)
	}
	switch {
	case c&cL != 0:
		// Not a leading character: 1 then 2 from i, and one succeeds.
		return word(s, i, true)
	case c&cN != 0:
		return digits(s, i, w) // no word starts with a number
	case c&cM != 0:
		// A mark can lead; if 1 fails after it, 1 from the mark itself
		// succeeds (a mark is in U and in W).
		if e := word(s, i+w, false); e >= 0 {
			return e
		}
		return word(s, i, false)
	case !isNewline(s[i]):
		// A leading character outside U and W: 1 and 2 after it.
		if e := word(s, i+w, true); e >= 0 {
			return e
		}
	}
	if j := punctuation(s, i, c); j > i {
		for j < len(s) && (isNewline(s[j]) || s[j] == '/') {
			j++
		}
		return j
	}
	return spaces(s, i)
}

// word matches U*W+ (alternative 1) at j, or if that fails and alt2 is
// set, U+W* (alternative 2), each with an optional contraction, and
// returns where the match ends, or -1. Backtracking U* from its longest
// run, W+ first succeeds at the last position k in [j, u] holding a W
// character: at u itself (a \p{Ll}, the only W that is not U) W+ runs on
// greedily; before u it takes one character, since the U characters after
// k are not W. Alternative 2 is tried only when 1 fails, so there is no W
// at or before u and its W* is empty.
func word(s string, j int, alt2 bool) int {
	u, lastW := j, -1
	for u < len(s) {
		c, w := asciiClass[s[u]], 1 // at(s, u), inlined by hand
		if s[u] >= utf8.RuneSelf {
			c, w = atRune(s, u)
		}
		if c&cU == 0 {
			if c&cW != 0 {
				e := run(s, u+w, cW)
				return e + contraction(s, e)
			}
			break
		}
		u += w
		if c&cW != 0 {
			lastW = u
		}
	}
	e := lastW
	if e < 0 {
		if !alt2 || u == j {
			return -1
		}
		e = u
	}
	return e + contraction(s, e)
}

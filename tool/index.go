package tool

import "strings"

// indexLarge is strings.Index(s, sub) for a large s (a file an edit is
// looked for in). strings.Index goes from one occurrence of sub's first
// byte to the next, and in code that byte is often on every line (a tab,
// a space): 1.3 ms for a one-line old_string in a 10 MB file. This looks
// for sub's least common byte instead (strings.IndexByte reads at memory
// speed) and checks sub around each hit; when that byte proves common
// here too, strings.Index does the rest.
func indexLarge(s, sub string) int {
	if len(s) < 64<<10 || len(sub) < 2 {
		return strings.Index(s, sub)
	}
	r := rarest(sub)
	c := sub[r]
	hits := 0
	for from := 0; ; {
		j := strings.IndexByte(s[from+r:], c)
		if j < 0 {
			return -1
		}
		at := from + j // where sub would start
		if at+len(sub) > len(s) {
			return -1
		}
		if s[at:at+len(sub)] == sub {
			return at
		}
		from = at + 1
		if from+r >= len(s) {
			return -1
		}
		// More than one false hit in 256 bytes: the byte is common here.
		if hits++; hits > 256 && hits > from>>8 {
			if k := strings.Index(s[from:], sub); k >= 0 {
				return from + k
			}
			return -1
		}
	}
}

// commonBytes are the bytes of source code and prose, the most common
// first (roughly); a byte not here is rarer than all of them.
const commonBytes = " etaoinsrlcd\n\tuphmf.g()_,\"y=b;w:/{}vk0-1SETACxIRN>*PLOD[]<F2M'B&U!GH#+$qWjVzKY3|Xx%\\?@~^`Q5Z4J6789"

// byteRank is how common each byte is: 0 the rarest.
var byteRank = func() (r [256]int) {
	for i := 0; i < len(commonBytes); i++ {
		if r[commonBytes[i]] == 0 {
			r[commonBytes[i]] = len(commonBytes) - i
		}
	}
	return r
}()

// rarest is the position of sub's least common byte (the first of the
// rarest).
func rarest(sub string) int {
	best := 0
	for i := 1; i < len(sub); i++ {
		if byteRank[sub[i]] < byteRank[sub[best]] {
			best = i
		}
	}
	return best
}

package tool

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestIndexLarge: indexLarge finds what strings.Index finds, in large
// texts of a few bytes (every byte common, the fallback taken), of code,
// with the needle anywhere (start, end, across the point where it falls
// back, absent), and at the first of several occurrences.
func TestIndexLarge(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	line := "\tfmt.Println(\"a line of some Go code, é\") // 😀\n"
	code := strings.Repeat(line, 3000)
	texts := []string{code, strings.Repeat("ab", 50000), strings.Repeat("kkkkkkkkx", 20000)}
	for range 20 {
		b := make([]byte, 70000+rng.IntN(30000))
		for i := range b {
			b[i] = "abk\n\t(){}"[rng.IntN(9)]
		}
		texts = append(texts, string(b))
	}
	for ti, text := range texts {
		subs := []string{"\tmarker()\n", "zz", text[:5], text[len(text)-7:], text[40000:40009], "kx", "xk", "a line of some Go code, é\") // 😀\n\tfmt"}
		for range 20 {
			at, n := rng.IntN(len(text)-20), 2+rng.IntN(18)
			subs = append(subs, text[at:at+n])
		}
		for _, sub := range subs {
			for _, s := range []string{text, text + sub, sub + text, text[:len(text)/2] + sub + text[len(text)/2:]} {
				if got, want := indexLarge(s, sub), strings.Index(s, sub); got != want {
					t.Fatalf("text %d, %q: %d, want %d", ti, sub, got, want)
				}
			}
		}
	}
}

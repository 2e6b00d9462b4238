package prompts

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// ranksFile builds a ranks file: the 256 single bytes, then extra tokens.
func ranksFile(extra ...string) []byte {
	var b strings.Builder
	r := 0
	for c := range 256 {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte{byte(c)}), r)
		r++
	}
	for _, tok := range extra {
		fmt.Fprintf(&b, "%s %d\n", base64.StdEncoding.EncodeToString([]byte(tok)), r)
		r++
	}
	return []byte(b.String())
}

func TestParseRanks(t *testing.T) {
	tab, err := parseRanks("test", ranksFile("ab", "abc", "bc", "abcd"))
	if err != nil {
		t.Fatal(err)
	}
	for tok, want := range map[string]uint32{"a": 'a', "ab": 256, "abc": 257, "bc": 258, "abcd": 259} {
		if r, ok := tab.rank(tok); !ok || r != want {
			t.Errorf("rank(%q) = %d, %v; want %d", tok, r, ok, want)
		}
	}
	if r, ok := tab.rank("bcd"); ok {
		t.Errorf("rank(bcd) = %d, want none", r)
	}
	if tab.pairOf("ab", 0) != 256 || tab.pairOf("ba", 0) != noRank {
		t.Error("pair table wrong")
	}
	// "abcd": ab (256) merges first, then abc (257) with d... abcd (259).
	if n := tab.tokens("abcd"); n != 1 {
		t.Errorf("tokens(abcd) = %d, want 1", n)
	}
	if n := tab.tokens("abcda"); n != 2 {
		t.Errorf("tokens(abcda) = %d, want 2", n)
	}

	for _, tc := range []struct {
		name string
		data []byte
		err  string
	}{
		{"duplicate", ranksFile("ab", "cd", "ab"), "rank 258 appears twice"},
		{"missing byte", []byte(strings.Replace(string(ranksFile()), "AA== 0\n", "AAA= 0\n", 1)), "255 of the 256 single bytes"},
		{"rank out of order", []byte(strings.Replace(string(ranksFile("ab")), "YWI= 256", "YWI= 300", 1)), "line 257 is not"},
		{"no rank", []byte(strings.Replace(string(ranksFile("ab")), "YWI= 256", "YWI=", 1)), "line 257 is not"},
		{"bad base64", []byte(strings.Replace(string(ranksFile("ab")), "YWI= 256", "Y!I= 256", 1)), "line 257: bad token"},
	} {
		_, err := parseRanks("test", tc.data)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.err)
		}
	}
}

// TestMergeLongMatchesShort checks the heap merge against tiktoken's linear
// one on the same pieces, real and random bytes.
func TestMergeLongMatchesShort(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	text := stressText(rng, 64<<10) + goLikeFile(0)[:32<<10]
	for _, enc := range encodings {
		tk := &Tokenizer{encoding: enc}
		tk.Count("")
		check := func(p string) {
			if a, b := tk.ranks.mergeShort(p), tk.ranks.mergeLong(p); a != b {
				t.Fatalf("%s %q: mergeShort %d, mergeLong %d", enc, p, a, b)
			}
		}
		for range sample(8000) {
			i := rng.IntN(len(text) - 128)
			check(text[i : i+2+rng.IntN(127)])
		}
		for range sample(1000) {
			b := make([]byte, 2+rng.IntN(127))
			for i := range b {
				b[i] = byte(rng.IntN(256))
			}
			check(string(b))
		}
	}
}

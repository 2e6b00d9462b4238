package prompts

// Differential tests: our counter against tiktoken-go, the reference kept
// for tests only. Each text is checked twice: the count against
// tiktoken-go's EncodeOrdinary, and the pre-tokens against regexp2 running
// the encoding's split pattern (copied from tiktoken-go's encoding.go), so
// a wrong split is caught even when the counts happen to agree.

import (
	"compress/gzip"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/dlclark/regexp2"
	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

var encodings = []string{"cl100k_base", "o200k_base"}

// raceEnabled is set by race_test.go.
var raceEnabled bool

// sample scales a number of test cases down under -short and -race.
func sample(n int) int {
	if testing.Short() || raceEnabled {
		return max(1, n/10)
	}
	return n
}

// Split patterns from tiktoken-go v0.1.8 encoding.go.
var splitPatterns = map[string]string{
	"cl100k_base": `(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`,
	"o200k_base": strings.Join([]string{
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?`,
		`\p{N}{1,3}`,
		` ?[^\s\p{L}\p{N}]+[\r\n/]*`,
		`\s*[\r\n]+`,
		`\s+(?!\S)`,
		`\s+`,
	}, "|"),
}

type reference struct {
	tk    *tiktoken.Tiktoken
	split *regexp2.Regexp
}

var (
	referencesOnce sync.Once
	references     map[string]reference
)

func referenceFor(t testing.TB, enc string) reference {
	referencesOnce.Do(func() {
		tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
		references = map[string]reference{}
		for _, e := range encodings {
			tk, err := tiktoken.GetEncoding(e)
			if err != nil {
				panic(err)
			}
			references[e] = reference{tk, regexp2.MustCompile(splitPatterns[e], regexp2.None)}
		}
	})
	return references[enc]
}

// referencePieces is the split as tiktoken-go does it: regexp2 over the
// text's runes.
func (r reference) pieces(text string) []string {
	var out []string
	m, _ := r.split.FindStringMatch(text)
	for m != nil {
		out = append(out, m.String())
		m, _ = r.split.FindNextMatch(m)
	}
	return out
}

func ourPieces(tk *Tokenizer, text string) []string {
	tk.Count("") // load
	text = validUTF8(text)
	var out []string
	for i := 0; i < len(text); {
		j := tk.next(text, i)
		out = append(out, text[i:j])
		i = j
	}
	return out
}

// checkMatches fails t if our count or split of text differs from
// tiktoken-go's, naming the first differing pre-token.
func checkMatches(t testing.TB, enc, name, text string) {
	t.Helper()
	ref := referenceFor(t, enc)
	tk := TokenizerFor(map[string]string{"cl100k_base": "gpt-4", "o200k_base": "gpt-4o"}[enc])
	want := len(ref.tk.EncodeOrdinary(text))
	got := tk.Count(text)
	ours, theirs := ourPieces(tk, text), ref.pieces(text)
	if got == want && slices.Equal(ours, theirs) {
		return
	}
	i := 0
	for i < len(ours) && i < len(theirs) && ours[i] == theirs[i] {
		i++
	}
	at := func(p []string) string {
		if i < len(p) {
			return fmt.Sprintf("%q", p[i])
		}
		return "(end)"
	}
	context := strings.Join(theirs[max(0, i-3):i], "")
	if got != want && i == len(ours) && i == len(theirs) {
		for _, p := range theirs {
			if a, b := tk.ranks.tokens(p), len(ref.tk.EncodeOrdinary(p)); a != b {
				t.Fatalf("%s %s: %d tokens, tiktoken-go %d; same split, piece %q: %d, want %d", enc, name, got, want, p, a, b)
			}
		}
	}
	t.Fatalf("%s %s: %d tokens, tiktoken-go %d; pre-token %d after %q: ours %s, tiktoken-go %s",
		enc, name, got, want, i, context, at(ours), at(theirs))
}

// realFiles returns a deterministic sample of up to limit bytes of text
// files from the Go tree and /usr/share/doc (gzipped changelogs included).
func realFiles(t *testing.T, limit int) map[string]string {
	var paths []string
	for _, root := range []string{filepath.Join(runtime.GOROOT(), "src"), "/usr/share/doc"} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				paths = append(paths, p)
			}
			return nil
		})
	}
	if len(paths) < 100 {
		t.Fatalf("only %d files under GOROOT/src and /usr/share/doc", len(paths))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(paths), func(i, j int) { paths[i], paths[j] = paths[j], paths[i] })
	files, total := map[string]string{}, 0
	for _, p := range paths {
		if total >= limit {
			break
		}
		data, err := readMaybeGzip(p)
		if err != nil || len(data) == 0 || len(data) > 48<<10 {
			continue
		}
		files[p] = string(data)
		total += len(data)
	}
	return files
}

func readMaybeGzip(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(p, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			return nil, err
		}
		r = z
	}
	return io.ReadAll(io.LimitReader(r, 48<<10+1))
}

var realBytes = flag.Int("realbytes", 768<<10, "bytes of real files TestCountMatchesTiktokenOnRealFiles compares (tiktoken-go does ~0.2 MB/s)")

func TestCountMatchesTiktokenOnRealFiles(t *testing.T) {
	limit := *realBytes
	if testing.Short() || raceEnabled {
		limit = min(limit, 64<<10)
	}
	files := realFiles(t, limit)
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range files {
			if !yield(k) {
				return
			}
		}
	})
	invalid, size := 0, 0
	for _, name := range names {
		size += len(files[name])
		if !utf8.ValidString(files[name]) {
			invalid++
		}
	}
	t.Logf("%d files, %d bytes, %d of them not valid UTF-8", len(names), size, invalid)
	for _, enc := range encodings {
		var wg sync.WaitGroup
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		for _, name := range names {
			wg.Go(func() {
				sem <- struct{}{}
				defer func() { <-sem }()
				checkMatches(t, enc, name, files[name])
			})
		}
		wg.Wait()
	}
}

// stressSeeds are texts built to hit every branch of both split patterns.
func stressSeeds() []string {
	seeds := []string{
		"", " ", "  ", "\n", "\r\n", " \n", "\n ", "a", "'", "''", "'s", "'S", "'ll", "'LL", "'Ll", "'re", "'Re",
		"'RE", "'ve", "'VE", "'m", "'M", "'d", "'D", "'t", "'T", "'x", "'l", "'r",
		"don't", "DON'T", "we'll", "WE'LL", "you're", "YOU'RE", "I've", "I'M", "he'd", "it's", "IT'S",
		"John's'S'd", "can't've", "x'", "x'l", "x're'", "'''s", "he's's",
		"hello world", "Hello World", "HTTPServer", "iPhone", "camelCaseWord", "SCREAMING_SNAKE", "ÉCOLE été",
		"Ǆǅǆ titlecase ǅungla", "ʰʱʲ modifier", "é", "e\u0301", "E\u0301COLE", "\u0301", "\u0301\u0301A",
		" \u0301", "!\u0301", "a\u0301b", "A\u0301b", "\u0301'S", "x\u0301's",
		"日本語のテキスト、漢字とかなカナ。", "中文字符，标点。", "한국어 텍스트", "\u3000全角空白\u3000",
		"مرحبا بالعالم، كيف حالك؟", "नमस्ते दुनिया। हिन्दी", "Ελληνικά ΚΕΦΑΛΑΙΑ", "Кириллица ТЕКСТ",
		"👨‍👩‍👧‍👦 family", "👍🏽 ok", "🏳️‍🌈", "a👍b", "\U0001F600\U0001F601", "𝔘𝔫𝔦𝔠𝔬𝔡𝔢", "𐐀𐐨 deseret",
		"x\ty", "\t\tfoo", "a \t b", "foo\u00a0bar", "\u00a0\u00a0x", "a\u2028b", "\u2028\u2029", "a\u3000b",
		"\u0085x", "\v\f", "\x1c\x1d\x1e\x1f", "\x00\x01", "trailing   ", "trailing  \n", "line  \nnext",
		"a  \r\n  b", "\r\r\n\n", " \r \n ", "x \n\n\n  y", "end \n", "   \t\n\t  x",
		"!!!\n", "?!\r\n", "...\n\n", "/", "//", "a/b", "!/", "!\n/", "!\n/\n/x", " //comment", " ///\n",
		"#!/bin/sh\n", "x := y // z\n", "<|endoftext|>", "<|fim_prefix|>", " $$$$", " ((( ", "  ...",
		"Ⅻ ⅻ ½ ² ٣ ४", "½½½½", "١٢٣٤٥", "٣4", "x²", "ⅫⅫ", "𝟘𝟙𝟚𝟛",
		"\uFFFD", "\uFEFF", "\u200d", "\u200b", "a\u200db", "\u00ad", "\u180e", "\u061c",
	}
	for n := 1; n <= 40; n++ {
		seeds = append(seeds, strings.Repeat("7", n), "x"+strings.Repeat("0123456789", n/10+1)[:n]+"y",
			" "+strings.Repeat("9", n)+" ", strings.Repeat("١", n))
	}
	for n := 1; n <= 12; n++ {
		for _, w := range []string{" ", "\t", "\n", "\r\n", "\u00a0", "\u3000", "\u2028"} {
			ws := strings.Repeat(w, n)
			seeds = append(seeds, ws, "x"+ws, ws+"x", "x"+ws+"x", "!"+ws+"!", ws+"\n", "\n"+ws+"1")
		}
	}
	return seeds
}

// stressText builds mixed-script text from the seeds' parts at random.
func stressText(rng *rand.Rand, n int) string {
	parts := []string{
		"the", "The", "THE", " word", "'s", "'S", "'ll", "'LL", "'Re", "'ve", "'d", "'m", "'t", "'",
		"0", "12", "345", "6789", " 2024", "٣", "½", "日本", "語", "中文", "한국", "مرحبا", "नमस्ते", "ि", "्",
		"\u0301", "\u0308", "é", "É", "ǅ", "ʰ", "👨‍👩‍👧", "👍🏽", "\u200d", "🏳️‍🌈", "𝔘", "𐐀",
		" ", "  ", "\t", "\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\u0085", "\v",
		"!", "?", ".", ",", "...", "/", "//", "(", ")", "{", "}", "\"", "`", "#", "$", "%", "&", "*", "-", "_",
		"<|endoftext|>", "\uFFFD", "\uFEFF", "\u200b",
	}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(parts[rng.IntN(len(parts))])
	}
	return b.String()
}

var stressTexts = flag.Int("stresstexts", 1500, "random texts TestCountMatchesTiktokenOnStressText compares, besides the seeds")

func TestCountMatchesTiktokenOnStressText(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	texts := stressSeeds()
	for range sample(*stressTexts) {
		texts = append(texts, stressText(rng, 1+rng.IntN(200)))
	}
	// Long runs exercise the heap merge (pieces over 128 bytes).
	texts = append(texts, strings.Repeat(" ", 1000)+"x", strings.Repeat("=", 5000), strings.Repeat("ab", 3000),
		strings.Repeat("日本語", 500), strings.Repeat("Supercalifragilistic", 50), strings.Repeat("\u0301", 300),
		strings.Repeat("👍🏽", 200), strings.Repeat("!?", 700)+"\n\n/", strings.Repeat("\n", 300))
	for _, enc := range encodings {
		for i, text := range texts {
			checkMatches(t, enc, fmt.Sprintf("text %d %q", i, text), text)
		}
	}
}

// TestCountInvalidUTF8 checks that bytes that are not UTF-8 count as
// U+FFFD each, as in tiktoken-go, whose regex runs over []rune(text).
func TestCountMatchesTiktokenOnInvalidUTF8(t *testing.T) {
	for _, enc := range encodings {
		for _, text := range []string{"\xff", "a\xffb", "\xe2\x82", "\xe2\x82x", "\xed\xa0\x80", "\xc0\xaf",
			"caf\xe9 cr\xe8me", "\x80\x80\x80 x", "it\xff's", "12\xff34", " \xff\n", "\xf4\x90\x80\x80",
			"\x00i" + strings.Repeat("\xc5", 300)} {
			checkMatches(t, enc, fmt.Sprintf("%q", text), text)
		}
	}
}

func FuzzCountMatchesTiktoken(f *testing.F) {
	for _, s := range stressSeeds() {
		f.Add(s)
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for range 50 {
		f.Add(stressText(rng, 64))
	}
	f.Add("caf\xe9 \xff's")
	// Load both sides before fuzzing: the fuzzer counts a slow first
	// input (loading tiktoken-go takes seconds) as a hung worker.
	for _, enc := range encodings {
		checkMatches(f, enc, "warm-up", "warm up")
	}
	f.Fuzz(func(t *testing.T, text string) {
		if len(text) > 1024 {
			// tiktoken-go's merge is quadratic in the length of a piece
			// (ours is not): a long run of one symbol, or of invalid bytes
			// (each a 3-byte U+FFFD), takes it past the fuzzer's timeout
			// for a hung worker. The stress test covers long pieces.
			t.Skip()
		}
		for _, enc := range encodings {
			checkMatches(t, enc, fmt.Sprintf("%q", text), text)
		}
	})
}

// sampleRunes is every rune of the Basic Multilingual Plane and every
// 7th above it (every 50th rune under -race).
func sampleRunes(yield func(rune) bool) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r > 0xffff && r%7 != 0 || r >= 0xd800 && r <= 0xdfff || raceEnabled && r%50 != 0 {
			continue
		}
		if !yield(r) {
			return
		}
	}
}

// TestCharClassesMatchRegexp2 checks each class bit against regexp2
// itself, so the scanner's classes are those of the regex engine.
func TestCharClassesMatchRegexp2(t *testing.T) {
	loadClasses()
	classes := []struct {
		bit uint8
		re  *regexp2.Regexp
	}{
		{cL, regexp2.MustCompile(`\A\p{L}\z`, regexp2.None)},
		{cN, regexp2.MustCompile(`\A\p{N}\z`, regexp2.None)},
		{cS, regexp2.MustCompile(`\A\s\z`, regexp2.None)},
		{cM, regexp2.MustCompile(`\A\p{M}\z`, regexp2.None)},
		{cUp, regexp2.MustCompile(`\A[\p{Lu}\p{Lt}]\z`, regexp2.None)},
		{cLo, regexp2.MustCompile(`\A\p{Ll}\z`, regexp2.None)},
		{cMo, regexp2.MustCompile(`\A[\p{Lm}\p{Lo}]\z`, regexp2.None)},
	}
	contractionRe := regexp2.MustCompile(`\A(?i:'s|'t|'re|'ve|'m|'ll|'d)`, regexp2.None)
	for r := range sampleRunes {
		s := string(r)
		c, _ := at(s, 0)
		for _, cl := range classes {
			if ok, _ := cl.re.MatchString(s); ok != (c&cl.bit != 0) {
				t.Fatalf("%U: %s is %v in regexp2, %v here", r, cl.re, ok, !ok)
			}
		}
		for _, text := range []string{"'" + s, "'" + s + "e", "'" + s + "l", "'r" + s, "'v" + s, "'l" + s} {
			want := 0
			if m, _ := contractionRe.FindStringMatch(text); m != nil {
				want = len(m.String())
			}
			if got := contraction(text, 0); got != want {
				t.Fatalf("%q: contraction of %d bytes, regexp2 %d", text, got, want)
			}
		}
	}
}

// TestCharClasses checks the table of the Basic Multilingual Plane
// against the unicode predicates regexp2 uses (above it, at calls them).
func TestCharClasses(t *testing.T) {
	loadClasses()
	for r := range rune(0x10000) {
		if r >= 0xd800 && r <= 0xdfff {
			continue // not encodable in UTF-8
		}
		s := string(r)
		got, w := at(s, 0)
		if w != len(s) || got != slowClass(r) {
			t.Fatalf("%U: class %08b, want %08b", r, got, slowClass(r))
		}
	}
}

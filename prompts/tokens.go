package prompts

import (
	"fmt"
	"hash/maphash"
	"strings"
	"sync"
)

// Counter counts tokens the way the model's tokenizer does.
type Counter interface {
	Count(text string) int
}

// EncodingFor names the tiktoken encoding for a model: o200k_base for the
// GPT-4o/4.1/5 and o-series families, cl100k_base for everything else
// (GPT-4, GPT-3.5 and local models, whose own tokenizers are close enough
// to cl100k for budgeting).
func EncodingFor(model string) string {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-4o", "gpt-4.1", "gpt-4.5", "gpt-5", "o1", "o3", "o4", "chatgpt-4o"} {
		if strings.HasPrefix(m, p) {
			return "o200k_base"
		}
	}
	return "cl100k_base"
}

// Tokenizer is a Counter giving the exact token counts of OpenAI's
// tiktoken for cl100k_base and o200k_base: the split regex is hand-written
// (split.go) and the byte-pair merge runs over the ranks embedded by
// tiktoken-go-loader (bpe.go). The ranks are loaded on first use, never at
// start-up (see BenchmarkLoadRanks for the cost). Counts are not cached:
// counting a 64k-token prompt from scratch takes a few milliseconds
// (BenchmarkSystemCold), so a cache would save little per turn and cost
// memory. A Tokenizer is safe for concurrent use.
type Tokenizer struct {
	encoding string
	once     sync.Once
	ranks    *rankTable
	next     func(s string, i int) int // the encoding's pre-tokenizer
	err      error

	// counted remembers the counts of longer texts by their hash and
	// length: a turn counts the session's kept turns again (tens of
	// thousands of tokens, the same texts as the turn before), and a
	// lookup costs a hundredth of a count. Emptied when full.
	countedMu sync.Mutex
	counted   map[countKey]int
}

type countKey struct {
	hash uint64
	len  int
}

const (
	// countMemoMin is the shortest text whose count is remembered.
	countMemoMin = 256
	// countMemoMax bounds the counts remembered (about 40 bytes each).
	countMemoMax = 1 << 14
)

var countSeed = maphash.MakeSeed()

var (
	tokenizersMu sync.Mutex
	tokenizers   = map[string]*Tokenizer{}
)

// TokenizerFor returns the shared tokenizer for a model's encoding.
func TokenizerFor(model string) *Tokenizer {
	enc := EncodingFor(model)
	tokenizersMu.Lock()
	defer tokenizersMu.Unlock()
	t, ok := tokenizers[enc]
	if !ok {
		t = &Tokenizer{encoding: enc}
		tokenizers[enc] = t
	}
	return t
}

// Encoding is the tiktoken encoding name.
func (t *Tokenizer) Encoding() string { return t.encoding }

func (t *Tokenizer) load() {
	switch t.encoding {
	case "cl100k_base":
		t.next = nextCL100k
	case "o200k_base":
		t.next = nextO200k
	default:
		t.err = fmt.Errorf("unknown encoding %q", t.encoding)
		return
	}
	loadClasses()
	t.ranks, t.err = loadRanks(t.encoding + ".tiktoken")
}

// Count returns the number of tokens in text, as tiktoken's
// encode_ordinary gives (special tokens such as <|endoftext|> count as
// plain text). Bytes that are not valid UTF-8 count as U+FFFD each, as in
// tiktoken-go. If the ranks cannot be loaded (they are embedded, so this
// means a broken build) it falls back to a deliberately pessimistic one
// token per two bytes.
func (t *Tokenizer) Count(text string) int {
	t.once.Do(t.load)
	if t.err != nil {
		return (len(text) + 1) / 2
	}
	if len(text) < countMemoMin {
		return t.count(text)
	}
	key := countKey{maphash.String(countSeed, text), len(text)}
	t.countedMu.Lock()
	n, ok := t.counted[key]
	t.countedMu.Unlock()
	if ok {
		return n
	}
	n = t.count(text)
	t.countedMu.Lock()
	if t.counted == nil || len(t.counted) >= countMemoMax {
		t.counted = make(map[countKey]int)
	}
	t.counted[key] = n
	t.countedMu.Unlock()
	return n
}

// count counts text's tokens (see Count).
func (t *Tokenizer) count(text string) int {
	text = validUTF8(text)
	n := 0
	for i := 0; i < len(text); {
		j := t.next(text, i)
		n += t.ranks.tokens(text[i:j])
		i = j
	}
	return n
}

package prompts

import (
	"hash/fnv"
	"strings"
	"sync"

	"github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"
)

// Counter counts tokens the way the model's tokenizer does.
type Counter interface {
	Count(text string) int
}

func init() {
	// The BPE tables are embedded in the binary: nothing is downloaded at
	// run time.
	tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader())
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

// Tokenizer is a Counter backed by tiktoken. The encoding is loaded on
// first use (100–300 ms), never at start-up.
type Tokenizer struct {
	encoding string
	once     sync.Once
	tk       *tiktoken.Tiktoken
	err      error

	// mu guards cache: token counts of short texts (prompt lines) by a
	// 64-bit hash, so lines unchanged since the last turn are not
	// tokenized again. Cleared when it grows past maxCached entries.
	mu    sync.Mutex
	cache map[uint64]int
}

const (
	maxCached    = 200_000
	maxCachedLen = 4096 // longer texts are counted directly
)

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

// Count returns the number of tokens in text. If the encoding cannot be
// loaded (it is embedded, so this means a broken build) it falls back to a
// deliberately pessimistic one token per two bytes.
func (t *Tokenizer) Count(text string) int {
	t.once.Do(func() { t.tk, t.err = tiktoken.GetEncoding(t.encoding) })
	if t.err != nil {
		return (len(text) + 1) / 2
	}
	if len(text) > maxCachedLen {
		return len(t.tk.EncodeOrdinary(text))
	}
	h := fnv.New64a()
	h.Write([]byte(text))
	key := h.Sum64()
	t.mu.Lock()
	n, ok := t.cache[key]
	t.mu.Unlock()
	if ok {
		return n
	}
	n = len(t.tk.EncodeOrdinary(text))
	t.mu.Lock()
	if t.cache == nil || len(t.cache) >= maxCached {
		t.cache = make(map[uint64]int)
	}
	t.cache[key] = n
	t.mu.Unlock()
	return n
}

package storetest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// The search fixture: a store shaped like a long-used one. Sessions of 50
// messages alternate a short user message and a longer answer (word counts
// drawn log-normally: user median 20, answer median 110, so about 70 words a
// message), written in a Zipf-distributed vocabulary of common English and
// made-up technical words. A few words are planted at known rates so the
// benchmark queries match a known share of the messages:
//
//	"deploy canary"  both words in ~10% of the messages (broad)
//	"kubelet evict"  ~0.06% of the messages (narrow; evict* = evicted, eviction)
//	"deploy ca"      ~19% (a prefix still being typed)
//
// and a few session titles contain "deploy canary" (fewer than a page).
const (
	fixtureMessagesPerSession = 50
	FixtureBroadQuery         = "deploy canary"
	FixtureNarrowQuery        = "kubelet evict"
	FixtureTypingQuery        = "deploy ca"
)

var fixtureCommon = strings.Fields(`the a to of and in is it that for you this with on be
not are as can if or your but by from at use have an will should so do when which we
then there what its one all need need also more here would like just make sure way
check file run set value new add default error because only same than into other
first each get does see any some these after before now how where want change line
try using used them same step version works case data call return first time
problem might could between instead example issue code output test`)

// fixtureVocab is the filler vocabulary: common words first (the most
// frequent under Zipf), then made-up technical words.
func fixtureVocab(r *rand.Rand) []string {
	syll := strings.Fields("ka ro mi ten sul var pod net log ex por tal gri mon sta fi lo ber cus dra ven qui zor pal tek hub ser ion ath ule")
	vocab := append([]string(nil), fixtureCommon...)
	seen := map[string]bool{}
	for _, w := range vocab {
		seen[w] = true
	}
	for len(vocab) < 8000 {
		n := 2 + r.IntN(3)
		var b strings.Builder
		for range n {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		w := b.String()
		// Keep the planted words and their prefixes unique to the plants.
		if seen[w] || strings.HasPrefix(w, "deploy") || strings.HasPrefix(w, "canary") ||
			strings.HasPrefix(w, "kubelet") || strings.HasPrefix(w, "evict") {
			continue
		}
		seen[w] = true
		vocab = append(vocab, w)
	}
	return vocab
}

// fixtureText returns a message of about words words, with the planted words
// inserted at random positions.
func fixtureText(r *rand.Rand, vocab []string, zipf *rand.Zipf, words int, plants []string) string {
	out := make([]string, 0, words+len(plants))
	for range words {
		out = append(out, vocab[zipf.Uint64()])
	}
	for _, p := range plants {
		i := r.IntN(len(out) + 1)
		out = append(out, "")
		copy(out[i+1:], out[i:])
		out[i] = p
	}
	s := strings.Join(out, " ")
	if len(s) > 0 {
		s = strings.ToUpper(s[:1]) + s[1:] + "."
	}
	return s
}

func logNormal(r *rand.Rand, median, sigma float64, max int) int {
	n := int(median * math.Exp(sigma*r.NormFloat64()))
	return min(max, n+1)
}

// SearchFixture makes the search fixture's n messages and their sessions,
// the same for every store, handing each row to a store's writer.
func SearchFixture(n int, session func(id, title string, created, updated int64), message func(id, role, content string, created int64)) {
	r := rand.New(rand.NewPCG(1, 2))
	vocab := fixtureVocab(r)
	zipf := rand.NewZipf(r, 1.07, 2, uint64(len(vocab)-1))
	var id string
	for i := range n {
		t := int64(1_700_000_000_000 + i*60_000)
		if i%fixtureMessagesPerSession == 0 {
			id = fmt.Sprintf("fixture%019d", i/fixtureMessagesPerSession)
			var plants []string
			if r.Float64() < 0.05 {
				plants = append(plants, "deploy")
			}
			if r.Float64() < 0.05 {
				plants = append(plants, "canary")
			}
			title := fixtureText(r, vocab, zipf, 3+r.IntN(4), plants)
			title = strings.TrimSuffix(title, ".")
			session(id, title, t, t+int64(fixtureMessagesPerSession)*60_000)
		}
		role, words := "user", logNormal(r, 20, 0.8, 400)
		if i%2 == 1 {
			role, words = "assistant", logNormal(r, 110, 0.7, 1500)
		}
		var plants []string
		if r.Float64() < 0.32 {
			plants = append(plants, "deploy")
		}
		if r.Float64() < 0.31 {
			plants = append(plants, "canary")
		}
		if r.Float64() < 0.003 {
			plants = append(plants, "kubelet")
		}
		if r.Float64() < 0.2 {
			plants = append(plants, []string{"evicted", "eviction"}[r.IntN(2)])
		}
		message(id, role, fixtureText(r, vocab, zipf, words, plants), t)
	}
}

package api

import (
	"fmt"
	"strings"

	"github.com/ctxls/ctxls/internal/human"
)

// Text is a session's usage as lines a person reads (ACP's /usage, the
// CLI's "sessions usage").
func (u *SessionUsageResult) Text() string {
	var b strings.Builder
	if u.Answers == 0 {
		b.WriteString("No answer in this session has reported its tokens yet.\n")
	} else {
		fmt.Fprintf(&b, "%d answers: %s prompt tokens%s, %s completion tokens.\n", u.Answers, human.Thousands(u.PromptTokens), cachedText(u.CachedTokens), human.Thousands(u.CompletionTokens))
		for _, m := range u.Models {
			name := m.Model
			if name == "" {
				name = "(model not recorded)"
			}
			fmt.Fprintf(&b, "- %s: %d answers, %s prompt%s, %s completion\n", name, m.Answers, human.Thousands(m.PromptTokens), cachedText(m.CachedTokens), human.Thousands(m.CompletionTokens))
		}
	}
	if u.Unreported > 0 {
		// A tool-call round of a provider that reports no usage for it
		// counts here too: not only cancelled or failed answers.
		fmt.Fprintf(&b, "%d answers have no token count: the provider did not report one (some servers do not for tool-call rounds), or the answer was cancelled or failed first.\n", u.Unreported)
	}
	return b.String()
}

// Text is one answer's usage in a few words: "1,500 tokens in (1,024
// cached), 25 out" ("" for none).
func (u *Usage) Text() string {
	if u == nil || u.PromptTokens+u.CompletionTokens == 0 {
		return ""
	}
	in := human.Thousands(u.PromptTokens) + " tokens in"
	if u.CachedTokens > 0 {
		in += " (" + human.Thousands(u.CachedTokens) + " cached)"
	}
	return in + ", " + human.Thousands(u.CompletionTokens) + " out"
}

// cachedText says how much of the prompt tokens were cached ("" for none).
func cachedText(n int) string {
	if n == 0 {
		return ""
	}
	return " (" + human.Thousands(n) + " of them cached)"
}

// Package mdtext holds what ctxls's Markdown writers share: the model's
// input (prompts), exports and history.md (session).
package mdtext

import "strings"

// Fence is a backtick code fence longer than any run of backticks in s
// (at least three), so that s can be quoted in a fenced block whole.
func Fence(s string) string {
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

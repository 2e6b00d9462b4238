package prompts

import (
	"fmt"
	"unicode/utf8"
)

// TitleSystem is the system prompt of the request that names a session.
func TitleSystem() string {
	return "Reply with a 3 to 7 word title for this conversation. No quotes, no trailing punctuation."
}

// maxTitleInput is how much of the first message and of the first answer
// (each, in bytes) the title request carries: the opening says what the
// conversation is about, and a long answer would only cost tokens.
const maxTitleInput = 4000

// TitleInput is the title request's user message: the session's first
// message and its first complete answer ("" when there is none yet), each
// cut to size.
func TitleInput(first, answer string) string {
	in := "The user wrote:\n\n" + cutText(first, maxTitleInput)
	if answer != "" {
		in += "\n\nThe assistant answered:\n\n" + cutText(answer, maxTitleInput)
	}
	return in
}

// cutText cuts s to at most n bytes on a rune boundary, marking the cut.
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// DroppedNote marks where the history was cut to fit the context window:
// it ends the system prompt, right before the first message kept.
func DroppedNote(dropped int) string {
	return fmt.Sprintf("\n[%d earlier messages not shown]\n", dropped)
}

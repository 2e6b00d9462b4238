package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/ctxls/ctxls/internal/human"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// The model's window: what the turn assembles is trimmed to fit it (the
// relevant files to their budget, the history by whole turns, the oldest
// first, or summarised), but the question, the system prompt and the
// tools' definitions are sent whole. When those alone are over the window
// the turn fails before the provider is asked (it would refuse the request
// with a 400, or bill it and answer from a cut input), with an error of
// kind "too large" that says what is too big and by how much.

// questionFits refuses a question that alone is over the window, before
// anything of the turn is stored or asked: it could never be sent.
func (e *Engine) questionFits(ctx context.Context, t Turn) error {
	window := t.Provider.ContextWindow - t.Provider.MaxOutputTokens
	images := ImageTokens * len(ImageNames(t.Message))
	if len(t.Message)+images+perMessage <= window {
		return nil // a token holds a byte at least: no need to count
	}
	n := prompts.TokenizerFor(e.sessionModel(ctx, t)).Count(t.Message) + images
	if n+perMessage <= window {
		return nil
	}
	return fmt.Errorf("%w: the question is %s tokens; the model's window is %s tokens, %s of them kept for the answer: shorten it, or attach the text as a file (files are cut to fit)",
		session.ErrTooLarge, human.Thousands(n), human.Thousands(t.Provider.ContextWindow), human.Thousands(t.Provider.MaxOutputTokens))
}

// inputParts is what the turn sends whole, in tokens.
type inputParts struct {
	question, system, files, tools, summary int
}

// overWindow is the error of a turn whose whole parts p (with their
// messages' framing) are over window tokens; nil when they fit.
func overWindow(p inputParts, window, contextWindow int) error {
	total := p.question + p.system + p.tools + p.summary + 2*perMessage
	if total <= window {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "the input is %s tokens, %s over the model's window of %s tokens (%s less %s kept for the answer): the question %s, the system prompt and context %s",
		human.Thousands(total), human.Thousands(total-window), human.Thousands(window), human.Thousands(contextWindow), human.Thousands(contextWindow-window), human.Thousands(p.question), human.Thousands(p.system))
	if p.files > 0 {
		fmt.Fprintf(&b, " (the relevant files %s of it)", human.Thousands(p.files))
	}
	if p.tools > 0 {
		fmt.Fprintf(&b, ", the tools' definitions %s", human.Thousands(p.tools))
	}
	if p.summary > 0 {
		fmt.Fprintf(&b, ", the summary of earlier turns %s", human.Thousands(p.summary))
	}
	b.WriteString("; shorten the question, or remove relevant files or tools")
	return fmt.Errorf("%w: %s", session.ErrTooLarge, b.String())
}

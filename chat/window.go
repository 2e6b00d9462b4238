package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/sashabaranov/go-openai"

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

// A turn's rounds each send the turn's input and what its tool calls
// added: the model's calls and the tools' results. The input fits the
// window (assemble); the results are each at most a tool's cap (read_file's
// 256 KiB, an MCP result's), but over several rounds they add up. Before
// each round's request the turn counts what it would send; past the window
// it cuts this turn's results in what it sends, the oldest first, each
// first to its first keptHead tokens and then, when that is not enough, to
// its note alone, the newest last. What is stored stays whole. When even
// that cannot fit (the calls' arguments, or the input beside them, fill the
// window), the turn ends with an error of kind "too large" before the
// provider is asked.

// keptHead is what a cut result keeps of its start, in tokens, before
// results are cut to their notes alone.
const keptHead = 200

// sentResult is one of this turn's tool results as the rounds send it.
type sentResult struct {
	at   int    // its index in run.messages
	full string // the tool's output, whole (as stored)
	cost int    // the tokens it takes as sent now
}

// sent counts a message the turn appended to what it sends: calls are the
// model's message with its tool calls, a result a tool's (full its output).
func (r *run) sent(m openai.ChatCompletionMessage) {
	cost := messageCost(m, r.counter)
	r.sentTokens += cost
	if m.Role == openai.ChatMessageRoleTool {
		r.results = append(r.results, sentResult{at: len(r.messages) - 1, full: m.Content, cost: cost})
	} else {
		r.callTokens += cost
	}
}

// fitWindow makes round n's request fit the window by cutting this turn's
// tool results in what is sent (see above); an error of kind too large
// when it cannot.
func (r *run) fitWindow(n int) error {
	p := r.t.Provider
	window := p.ContextWindow - p.MaxOutputTokens
	tools := 0
	if n < MaxToolRounds {
		tools = r.defTokens
	}
	over := r.sentTokens + tools - window
	if over <= 0 {
		return nil
	}
	cut := map[int]bool{}
	for _, head := range []int{keptHead, 0} {
		for i := range r.results {
			if over <= 0 {
				break
			}
			res := &r.results[i]
			text, cost := cutResult(res.full, max(res.cost-over, head+perMessage), r.counter)
			if cost >= res.cost {
				continue
			}
			over -= res.cost - cost
			r.sentTokens -= res.cost - cost
			res.cost = cost
			r.messages[res.at].Content = text
			cut[i] = true
		}
	}
	if over > 0 {
		results := 0
		for _, res := range r.results {
			results += res.cost
		}
		input := r.sentTokens - r.callTokens - results
		return fmt.Errorf("%w: the input is %s tokens, %s over the model's window of %s tokens (%s less %s kept for the answer), even with its tools' results cut to a note: the system prompt, question and history %s, the tools' definitions %s, this turn's tool calls %s and their results %s; ask for less in one turn, or use a model with a larger window",
			session.ErrTooLarge, human.Thousands(r.sentTokens+tools), human.Thousands(over), human.Thousands(window), human.Thousands(p.ContextWindow), human.Thousands(p.MaxOutputTokens),
			human.Thousands(input), human.Thousands(tools), human.Thousands(r.callTokens), human.Thousands(results))
	}
	if len(cut) > 0 {
		r.e.Log.Info("tool results cut to fit the window", "session", r.t.SessionID, "round", n, "cut", len(cut), "tokens", r.sentTokens+tools, "window", window)
		r.ev.Emit(Activity{Message: fmt.Sprintf("%d tool results of this turn are cut to fit the model's context window", len(cut))})
	}
	return nil
}

// cutResult is a tool's output cut to what costs at most target tokens as
// a message (the note saying so included), and its cost; the note alone
// when nothing of the output fits beside it.
func cutResult(full string, target int, c prompts.Counter) (string, int) {
	cost := func(text string) int { return c.Count(text) + perMessage }
	if n := cost(full); n <= target {
		return full, n
	}
	runes := []rune(full)
	note := func(kept int) string {
		return fmt.Sprintf("\n[output cut: %s of its %s characters left out: the results of this turn's tools are over the model's context window]",
			human.Thousands(len(runes)-kept), human.Thousands(len(runes)))
	}
	// Shrink the head kept in proportion to what it costs: a few counts.
	keep := len(runes)
	for keep > 0 {
		text := string(runes[:keep]) + note(keep)
		n := cost(text)
		if n <= target {
			return text, n
		}
		keep = min(keep-1, keep*target/n-16)
	}
	text := strings.TrimPrefix(note(0), "\n")
	return text, cost(text)
}

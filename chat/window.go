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
func (e *Engine) questionFits(ctx context.Context, t TurnSpec) error {
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
// window (assemble); each result is at most its tool's cap (read_file's
// 256 KiB, an MCP result's), but over several rounds they add up, and a
// call's arguments (write_file's content) may be long too. Before each
// later round's request the turn counts what it would send, and past the
// window it makes room in what it sends, in this order: the calls of this
// turn as they are stored (write_file's content a note of its size, as
// later turns see them), the oldest first; then this turn's results, the
// oldest first, each to its first keptHead tokens, then to its note alone,
// the newest last. What is stored stays whole. When even that cannot fit
// (the calls' arguments, or the input beside them, fill the window), the
// turn ends with an error of kind "too large" before the provider is
// asked.
//
// Counting is lazy: a message added counts as its bytes (a token holds a
// byte at least) until the window is in question, and one longer than
// maxCounted bytes is never counted (a long run of one character counts at
// about half a megabyte a second).

// keptHead is what a cut result keeps of its start, in tokens, before
// results are cut to their notes alone.
const keptHead = 200

// maxCounted is the longest message a turn counts the tokens of; a
// longer one costs its bytes.
const maxCounted = 1 << 20

// added is one of the messages this turn's rounds added to what is sent.
type added struct {
	at      int               // its index in run.messages
	result  bool              // a tool's result; else the model's message with its calls
	full    string            // a result: the tool's output, whole (as stored)
	stored  []openai.ToolCall // the calls: as stored (Toolbox.Stored)
	cost    int               // the tokens it takes as sent now, or its bytes until counted
	counted bool
}

// sent notes the message the turn just appended to what it sends: the
// model's, with its calls (stored: as stored), or a tool's result.
func (r *run) sent(stored []openai.ToolCall) {
	m := r.messages[len(r.messages)-1]
	a := added{at: len(r.messages) - 1, result: m.Role == openai.ChatMessageRoleTool, full: m.Content, stored: stored, cost: messageBytes(m)}
	r.sentTokens += a.cost
	r.added = append(r.added, a)
}

// messageBytes is what bounds a message's cost (see messageCost).
func messageBytes(m openai.ChatCompletionMessage) int {
	n := len(m.Content) + perMessage
	for _, c := range m.ToolCalls {
		n += len(c.Function.Name) + len(c.Function.Arguments) + perMessage
	}
	return n
}

// recost sets what a's message costs as sent now: counted, unless it is
// longer than maxCounted bytes.
func (r *run) recost(a *added) {
	m := r.messages[a.at]
	cost, counted := messageBytes(m), false
	if cost <= maxCounted {
		cost, counted = messageCost(m, r.counter), true
	}
	r.sentTokens += cost - a.cost
	a.cost, a.counted = cost, counted
}

// fitWindow makes round n's request fit the window (see above); an error
// of kind too large when it cannot.
func (r *run) fitWindow(n int) error {
	p := r.t.Provider
	window := p.ContextWindow - p.MaxOutputTokens
	tools := 0
	if n < MaxToolRounds {
		tools = r.defTokens
	}
	if r.sentTokens+tools <= window {
		return nil
	}
	for i := range r.added {
		if !r.added[i].counted {
			r.recost(&r.added[i])
		}
	}
	stored, cut := 0, map[int]bool{}
	for i := range r.added {
		a := &r.added[i]
		if r.sentTokens+tools <= window {
			break
		}
		if !a.result && a.stored != nil && messageBytes(openai.ChatCompletionMessage{ToolCalls: a.stored}) < messageBytes(r.messages[a.at]) {
			r.messages[a.at].ToolCalls = a.stored
			a.stored = nil
			r.recost(a)
			stored++
		}
	}
	for _, head := range []int{keptHead, 0} {
		for i := range r.added {
			over := r.sentTokens + tools - window
			a := &r.added[i]
			if over <= 0 {
				break
			}
			if !a.result {
				continue
			}
			text, cost := cutResult(a.full, max(a.cost-over, head+perMessage), r.counter)
			if cost >= a.cost {
				continue
			}
			r.sentTokens += cost - a.cost
			a.cost = cost
			r.messages[a.at].Content = text
			cut[i] = true
		}
	}
	if over := r.sentTokens + tools - window; over > 0 {
		calls, results := 0, 0
		for _, a := range r.added {
			if a.result {
				results += a.cost
			} else {
				calls += a.cost
			}
		}
		input := r.sentTokens - calls - results
		return fmt.Errorf("%w: the input is %s tokens, %s over the model's window of %s tokens (%s less %s kept for the answer), even with its tools' results cut to a note: the system prompt, question and history %s, the tools' definitions %s, this turn's tool calls %s and their results %s; ask for less in one turn, or use a model with a larger window",
			session.ErrTooLarge, human.Thousands(r.sentTokens+tools), human.Thousands(over), human.Thousands(window), human.Thousands(p.ContextWindow), human.Thousands(p.MaxOutputTokens),
			human.Thousands(input), human.Thousands(tools), human.Thousands(calls), human.Thousands(results))
	}
	if stored+len(cut) > 0 {
		r.e.Log.Info("tool calls and results cut to fit the window", "session", r.t.SessionID, "round", n, "calls", stored, "results", len(cut), "tokens", r.sentTokens+tools, "window", window)
	}
	if len(cut) > 0 {
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

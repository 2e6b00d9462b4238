package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// Compaction: when a session's history no longer fits comfortably in the
// model's window, its older whole turns are summarised by the model and the
// summary is stored as a message of its own (session.Message.SummaryOf);
// from then on the model is given the system prompt, the newest summary and
// the turns after it. Nothing is deleted. A summary that fails falls back
// to leaving the oldest whole turns out, as before.

// CompactAt values besides a percentage (the setting is read by
// api.ParseCompactAt).
const (
	DefaultCompactAt = api.DefaultCompactAt
	CompactOff       = api.CompactOff
)

// compactLimit is the input size (tokens) over which a turn compacts: 0
// when automatic compaction is off.
func compactLimit(compactAt, window int) int {
	switch {
	case compactAt == CompactOff:
		return 0
	case compactAt <= 0 || compactAt > 100:
		compactAt = DefaultCompactAt
	}
	return window * compactAt / 100
}

// Compaction is a summary just made.
type Compaction struct {
	SessionID string
	Summary   *session.Message // stored; Summary.SummaryOf is its range
	Covered   int              // messages it covers (the previous summary's included)
	// Tokens is what the model input takes now (system prompt, summary,
	// the turns kept, the turn's message); Window the context window.
	Tokens, Window int
}

// ErrNothingToCompact: an on-demand compaction found no whole turn to
// summarise before the last one.
var ErrNothingToCompact = fmt.Errorf("%w: nothing to compact: the session has no earlier turn that is not summarised already", session.ErrInvalid)

// summaryCap is the most tokens a summary may take: an eighth of the
// window, between 200 and 2,000. The prompt asks for three quarters of it
// in words; a longer answer is cut at twice the cap.
func summaryCap(window int) int {
	return min(max(window/8, 200), 2000)
}

// DefaultSummaryTimeout bounds one summary request (a local model
// summarising a full window may be slow).
const DefaultSummaryTimeout = 3 * time.Minute

// compactor is how assemble has older turns summarised (Run's; a preview
// has none): it stores and returns the summary that replaces previous (nil
// if none) and older.
type compactor func(ctx context.Context, previous *session.Message, older []histTurn) (*session.Message, error)

// turnCompactor is a turn's compactor: it tells the user what happens
// (Activity) and says why when it fails (the caller falls back to
// trimming).
func (e *Engine) turnCompactor(t TurnSpec, ev Events) compactor {
	return func(ctx context.Context, previous *session.Message, older []histTurn) (*session.Message, error) {
		// Told in questions, as people count a conversation: the new
		// summary covers the previous one's and older's.
		n := 0
		if previous != nil && previous.SummaryOf != nil {
			n = previous.SummaryOf.Questions
		}
		for _, h := range older {
			for _, m := range h.stored {
				if m.Role == session.RoleUser {
					n++
				}
			}
		}
		ev.Emit(Activity{Message: fmt.Sprintf("summarising %s to fit the context window", session.FirstQuestions(n))})
		s, err := e.storeSummary(ctx, t.SessionID, t.Provider, previous, older)
		if err != nil {
			e.Log.Warn("compaction failed; leaving the oldest turns out instead", "session", t.SessionID, "err", err)
			ev.Emit(Activity{Message: "summarising the earlier turns failed (" + err.Error() + "); the oldest turns are left out instead"})
		}
		return s, err
	}
}

// storeSummary summarises older (after previous) and stores the summary,
// covering previous's range and older's messages.
func (e *Engine) storeSummary(ctx context.Context, sessionID string, p Resolved, previous *session.Message, older []histTurn) (*session.Message, error) {
	prev := ""
	first := older[0].stored[0].ID
	if previous != nil {
		prev, first = previous.Content, previous.SummaryOf.First
	}
	last := older[len(older)-1].stored[len(older[len(older)-1].stored)-1].ID
	text, err := e.summarise(ctx, p, prev, older)
	if err != nil {
		return nil, err
	}
	m := &session.Message{SessionID: sessionID, Role: session.RoleSystem, Content: text, SummaryOf: &session.Span{First: first, Last: last}}
	if err := e.Store.AppendMessage(context.WithoutCancel(ctx), m); err != nil {
		return nil, fmt.Errorf("storing the summary: %w", err)
	}
	e.Log.Info("session compacted", "session", sessionID, "first", first, "last", last, "summary", len(text))
	return m, nil
}

// summarise asks the model for a summary of turns, folding previous (""
// for none) in. Turns that do not fit one request go in several, each
// folding the summary of the one before.
func (e *Engine) summarise(ctx context.Context, p Resolved, previous string, turns []histTurn) (string, error) {
	counter := prompts.TokenizerFor(p.Model)
	window := p.ContextWindow - p.MaxOutputTokens
	limit := summaryCap(window)
	sys := prompts.SummarySystem(limit * 3 / 4)
	wrapper := counter.Count(prompts.SummaryInput("", nil))
	room := window - counter.Count(sys) - wrapper - 2*limit - 100 // the previous summary may take up to 2*limit
	if room < 200 {
		return "", fmt.Errorf("the context window (%d tokens) is too small to summarise in", p.ContextWindow)
	}
	var lines []prompts.SummaryLine
	for _, h := range turns {
		for _, m := range h.stored {
			if l, ok := summaryLine(m); ok {
				lines = append(lines, l)
			}
		}
	}
	summary := previous
	for len(lines) > 0 {
		n, used := 0, 0
		for n < len(lines) {
			c := counter.Count(prompts.SummaryInput("", lines[n:n+1])) - wrapper
			if n > 0 && used+c > room {
				break
			}
			used += c
			n++
		}
		text, err := e.summaryRequest(ctx, p, sys, prompts.SummaryInput(summary, lines[:n]))
		if err != nil {
			return "", err
		}
		summary = cutTokens(text, 2*limit, counter)
		lines = lines[n:]
	}
	return summary, nil
}

// summaryLine is a stored message as a summary request shows it; failed
// answers and empty messages are left out.
func summaryLine(m session.Message) (prompts.SummaryLine, bool) {
	if m.IsSummary() || (m.Role == session.RoleAssistant && m.Status == session.StatusError) {
		return prompts.SummaryLine{}, false
	}
	l := prompts.SummaryLine{ID: m.ID, Role: string(m.Role), Text: m.Content}
	var calls []openai.ToolCall
	if len(m.ToolCalls) > 0 && json.Unmarshal(m.ToolCalls, &calls) == nil {
		for _, c := range calls {
			l.Calls = append(l.Calls, c.Function.Name+" "+c.Function.Arguments)
		}
	}
	if strings.TrimSpace(l.Text) == "" && len(l.Calls) == 0 {
		return l, false
	}
	return l, true
}

// summaryRequest is one summary request: not streamed, not retried (a
// failure falls back to trimming), bounded by Engine.SummaryTimeout.
func (e *Engine) summaryRequest(ctx context.Context, p Resolved, system, input string) (string, error) {
	timeout := e.SummaryTimeout
	if timeout <= 0 {
		timeout = DefaultSummaryTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, err := e.complete(ctx, p, p.Model, system, input)
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", redactedError{err: fmt.Errorf("the provider did not answer within %s", timeout)}
	case ctx.Err() != nil:
		return "", ctx.Err()
	case err != nil:
		return "", describe(err, p, false)
	}
	if strings.TrimSpace(text) == "" {
		return "", redactedError{err: errors.New("the model sent an empty summary")}
	}
	return strings.TrimSpace(text), nil
}

// cutTokens cuts text to about n tokens, on a line boundary when it can.
func cutTokens(text string, n int, counter prompts.Counter) string {
	if counter.Count(text) <= n {
		return text
	}
	cut := text
	for len(cut) > 0 && counter.Count(cut) > n {
		cut = cut[:len(cut)*3/4]
		if i := strings.LastIndexByte(cut, '\n'); i > len(cut)/2 {
			cut = cut[:i]
		}
	}
	return strings.ToValidUTF8(cut, "") + "\n[summary cut]"
}

// keepFrom is the index of the first of the newest whole turns that fit in
// budget tokens together (len(turns) when not even the last one does).
func keepFrom(turns []histTurn, budget int) int {
	i, used := len(turns), 0
	for i > 0 && used+turns[i-1].cost <= budget {
		i--
		used += turns[i].cost
	}
	return i
}

// summaryInput is the summary as the model's input carries it.
func summaryInput(s *session.Message) openai.ChatCompletionMessage {
	marker := session.SummaryMarker(*s.SummaryOf)
	return openai.ChatCompletionMessage{Role: openai.ChatMessageRoleSystem, Content: prompts.SummaryMessage(marker, s.Content)}
}

// Compact summarises a session's turns now (ctxls.session.compact, /compact,
// ctxls sessions compact): every whole turn since the last summary except
// the newest, which stays as it is when it fits in half the window. It
// takes the session as a turn does (ErrBusy while one runs). A failure
// stores nothing.
func (e *Engine) Compact(ctx context.Context, sessionID string, p Resolved) (*Compaction, error) {
	var c *Compaction
	err := e.Exclusive(ctx, sessionID, func(ctx context.Context) (err error) {
		c, err = e.compact(ctx, sessionID, p)
		return err
	})
	return c, err
}

// compact is Compact once the session is held.
func (e *Engine) compact(ctx context.Context, sessionID string, p Resolved) (*Compaction, error) {
	p.Model = e.sessionModel(ctx, TurnSpec{SessionID: sessionID, Provider: p})
	previous, rest, err := e.Store.ModelHistory(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	counter := prompts.TokenizerFor(p.Model)
	window := p.ContextWindow - p.MaxOutputTokens
	turns := groupTurns(rest, counter, nil, nil)
	keep := len(turns) - 1
	if keep >= 0 && turns[keep].cost > window/2 {
		keep = len(turns)
	}
	if keep <= 0 {
		return nil, ErrNothingToCompact
	}
	s, err := e.storeSummary(ctx, sessionID, p, previous, turns[:keep])
	if err != nil {
		return nil, err
	}
	c := &Compaction{SessionID: sessionID, Summary: s, Covered: s.SummaryOf.Covered, Window: p.ContextWindow}
	c.Tokens = messageCost(summaryInput(s), counter)
	for _, h := range turns[keep:] {
		c.Tokens += h.cost
	}
	return c, nil
}

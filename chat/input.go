package chat

import (
	"context"
	"crypto/sha256"
	"io"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// assembled is a turn's model input and what its parts cost.
type assembled struct {
	Messages []openai.ChatCompletionMessage
	// Tokens of what ctxls adds (the system prompt, and the turn's context
	// before the message, files included), of the relevant files' contents
	// in it, of the earlier messages kept, and of this turn's message as the
	// user wrote it; Budget is the context window less the output reserve.
	System, Files, History, Message, Budget int
	Tools                                   int // the tools' schemas
	Dropped                                 int // earlier messages left out
	// Compacted is the summary this assembly made (Run's only), and
	// Covered the messages it covers.
	Compacted *session.Message
	Covered   int
}

// assemble gathers the session's state and renders the model input: the
// system prompt, the newest summary of earlier turns if there is one, the
// history after it kept within the budget (whole turns, oldest dropped
// first) and the new message. history is the session's stored messages
// without this turn's. guard decides which relevant files may be read.
// record notes the files' contents as sent (for "changed since the last
// turn"); a preview does not. compact, when not nil (a turn's), is called
// when the input would pass t.CompactAt of the window: it summarises the
// older turns, and when it fails the oldest turns are left out as usual.
//
// st is what the turn read of its session (Store.TurnState; nil for a
// preview of a session's first turn, before there is one): its context,
// its files, and its history as the model sees it, the newest summary
// and the messages after it, without this turn's message.
func (e *Engine) assemble(ctx context.Context, t Turn, guard *toolEnv, tools []openai.Tool, st *session.TurnState, record bool, compact compactor) (*assembled, error) {
	in := prompts.Input{Resumed: t.Resumed, Candidates: t.Candidates}
	var (
		sets    session.Context
		summary *session.Message
		rest    []session.Message
	)
	if st != nil {
		in.Env = st.Session.Meta.EnvHint // the reminder's first line
		in.SessionFiles = st.Sources
		if st.SourcesErr != nil {
			e.Log.Warn("listing session files failed", "session", t.SessionID, "err", st.SourcesErr)
		}
		sets, summary, rest = st.Context, st.Summary, st.History
	}
	if t.Env != "" {
		in.Env = t.Env
	}
	in.Context = sets
	e.relevantFiles(t, guard, sets, record, &in)
	counter := prompts.TokenizerFor(t.Provider.Model)
	in.Counter = counter
	window := t.Provider.ContextWindow - t.Provider.MaxOutputTokens
	in.FileBudget = window / 2
	// What changes least comes first (see prompts.System): the system
	// prompt, the history, then the turn's context with the message.
	system := prompts.System(in)
	turnContext, fileTokens := prompts.TurnContext(in)
	message := prompts.WithContext(turnContext, t.Message)

	out := &assembled{Files: fileTokens, Budget: window, Message: counter.Count(t.Message), Tools: toolTokens(tools, counter)}
	contextTokens := counter.Count(message) - out.Message
	sysTokens := counter.Count(system) + contextTokens
	room := window - sysTokens - out.Message - out.Tools // for the summary and the history
	turns := groupTurns(rest, counter)
	summaryCost := 0
	if summary != nil {
		summaryCost = messageCost(summaryInput(summary), counter)
	}
	if s := compactIfOver(ctx, t, compact, window, sysTokens+out.Message+out.Tools, summary, summaryCost, turns); s != nil {
		turns = turns[len(turns)-s.kept:]
		summary, summaryCost = s.summary, messageCost(summaryInput(s.summary), counter)
		out.Compacted, out.Covered = s.summary, s.summary.SummaryOf.Covered
	}
	kept, dropped, used := trimTurns(turns, room-summaryCost)
	out.Messages = []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem}}
	if summary != nil {
		sm := summaryInput(summary)
		if dropped > 0 {
			// The cut is marked where it is: right before the first message kept.
			sm.Content += prompts.DroppedNote(dropped)
		}
		out.Messages = append(out.Messages, sm)
		used += messageCost(sm, counter)
	} else if dropped > 0 {
		system += prompts.DroppedNote(dropped)
	}
	out.Messages[0].Content = system
	out.System, out.History, out.Dropped = counter.Count(system)+contextTokens, used, dropped
	out.Messages = append(append(out.Messages, kept...),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: message})
	return out, nil
}

// MissingFiles lists the paths that are neither an open editor buffer nor
// a regular file on disk. The turn's prompt and the resume result both use
// it, so they agree on what is missing.
func MissingFiles(paths []string, b Buffers) []string {
	missing := []string{}
	for _, p := range paths {
		if _, ok := b.TextByPath(p); ok {
			continue
		}
		if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
			missing = append(missing, p)
		}
	}
	return missing
}

func readLimited(path string, limit int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit))
	return string(data), err
}

// sentIdle is how long a session's record of sent files is kept without a
// turn: after that a turn's files are new to it again ("changed since the
// last turn" needs a last turn the model still has in mind).
const sentIdle = time.Hour

// sentFiles records, for one session, a hash of each relevant file's
// content as last sent, so the next turn can say which changed. Hashes,
// not texts: the daemon would otherwise keep every relevant file of every
// session it served for its whole life.
type sentFiles struct {
	mu   sync.Mutex
	hash map[string][sha256.Size]byte
	used time.Time
}

// note records content as sent for path and reports whether it differs
// from what was sent last time (false the first time). A nil record (a
// preview) notes nothing.
func (s *sentFiles) note(path, content string) (changed bool) {
	if s == nil {
		return false
	}
	h := sha256.Sum256([]byte(content))
	s.mu.Lock()
	defer s.mu.Unlock()
	prev, ok := s.hash[path]
	s.hash[path] = h
	return ok && prev != h
}

// sentFor returns the session's record, and drops the records of sessions
// idle for more than sentIdle.
func (e *Engine) sentFor(id string) *sentFiles {
	now := e.clock()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sent == nil {
		e.sent = map[string]*sentFiles{}
	}
	for sid, s := range e.sent {
		if sid != id && now.Sub(s.used) > sentIdle {
			delete(e.sent, sid)
		}
	}
	s := e.sent[id]
	if s == nil || now.Sub(s.used) > sentIdle {
		s = &sentFiles{hash: map[string][sha256.Size]byte{}}
		e.sent[id] = s
	}
	s.used = now
	return s
}

// Forget drops what the engine keeps about a session (its record of sent
// files, an answer a lost store did not take): the session was deleted.
func (e *Engine) Forget(id string) {
	e.mu.Lock()
	delete(e.sent, id)
	delete(e.unsaved, id)
	e.mu.Unlock()
}

func (e *Engine) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// relevantFiles reads the relevant files (the files set and the turn's own)
// into in: the editor's text where it has the file open, else the disk;
// missing ones noted, ones the model added outside the workspace or that look
// like secrets withheld, and (with record) those changed since last sent.
func (e *Engine) relevantFiles(t Turn, guard *toolEnv, sets session.Context, record bool, in *prompts.Input) {
	in.Missing = MissingFiles(sets[prompts.SetFiles], e.buffers(t))
	paths := append(append([]string(nil), sets[prompts.SetFiles]...), t.Files...)
	seen := map[string]bool{}
	var last *sentFiles // nil for a preview: nothing is noted as sent
	if record {
		last = e.sentFor(t.SessionID)
	}
	for _, p := range paths {
		if seen[p] || slices.Contains(in.Missing, p) {
			continue
		}
		seen[p] = true
		if why := guard.refusal(p); why != "" {
			// Added by the model and outside the workspace: never sent.
			in.Withheld = append(in.Withheld, prompts.Withheld{Path: p, Why: prompts.WhyOutside})
			continue
		}
		f := prompts.File{Path: p}
		if l, ok := t.Lines[p]; ok {
			f.Lines = [2]int{l.First, l.Last}
		}
		if text, ok := e.buffers(t).TextByPath(p); ok {
			f.Content, f.Unsaved = text, true
		} else {
			data, err := readLimited(p, 4<<20)
			if err != nil {
				in.Missing = append(in.Missing, p)
				e.Log.Info("relevant file not read", "path", p, "err", err)
				continue
			}
			f.Content = data
		}
		if LooksSecret(p, f.Content) && !guard.userSet[p] {
			in.Withheld = append(in.Withheld, prompts.Withheld{Path: p, Why: prompts.WhySecret})
			continue
		}
		if last.note(p, f.Content) {
			in.Changed = append(in.Changed, p)
		}
		in.Relevant = append(in.Relevant, f)
	}
}

// compacted is what compactIfOver did: the new summary, and how many of the
// newest turns are kept after it.
type compacted struct {
	summary *session.Message
	kept    int
}

// compactIfOver summarises the older whole turns when the input (fixed:
// the system prompt and the message) would pass the turn's compactAt share
// of the window: it keeps the newest whole turns that fit in half of what
// the history may take under the limit beside a summary, so the next
// compaction is half a limit of turns away. (When they all fit there is
// nothing to gain: trimming handles the rest.) nil when it did not.
func compactIfOver(ctx context.Context, t Turn, compact compactor, window, fixed int, summary *session.Message, summaryCost int, turns []histTurn) *compacted {
	limit := compactLimit(t.CompactAt, window)
	if compact == nil || limit <= 0 {
		return nil
	}
	total := fixed + summaryCost
	for _, h := range turns {
		total += h.cost
	}
	keepBudget := max(min(limit, window)-fixed-summaryCap(window), 0) / 2
	keep := keepFrom(turns, keepBudget)
	if total <= limit || keep == 0 {
		return nil
	}
	s, err := compact(ctx, summary, turns[:keep])
	if err != nil {
		return nil
	}
	return &compacted{summary: s, kept: len(turns) - keep}
}

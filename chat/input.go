package chat

import (
	"context"
	"os"
	"slices"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
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
	// Instructions are the project's instructions files the system
	// prompt gives.
	Instructions []prompts.Instruction
	// Record notes in the session's view what the turn's block showed,
	// given the id of the turn's stored message (a turn's only).
	Record func(msg int64)
}

// assemble gathers the session's state and renders the model input: the
// system prompt, the newest summary of earlier turns if there is one, the
// history after it kept within the budget (whole turns, oldest dropped
// first), each earlier user message with the context block it was sent
// with, and the new message with this turn's block (what is new or changed
// since: see modelView). history is the session's stored messages without
// this turn's. guard decides which relevant files may be read. A turn
// (record) gets Record, to note what its block showed once its message is
// stored; a preview records nothing and shows exactly what a turn would
// send. compact, when not nil (a turn's), is called when the input would
// pass t.CompactAt of the window: it summarises the older turns, and when
// it fails the oldest turns are left out as usual.
//
// st is what the turn read of its session (Store.TurnState; nil for a
// preview of a session's first turn, before there is one): its context,
// its files, and its history as the model sees it, the newest summary
// and the messages after it, without this turn's message.
func (e *Engine) assemble(ctx context.Context, t TurnSpec, guard *workspace.Guard, tools []openai.Tool, st *session.TurnState, record bool, compact compactor) (*assembled, error) {
	a := &assembly{e: e, t: t}
	a.input(guard, st, record)
	a.counter = prompts.TokenizerFor(t.Provider.Model)
	a.in.Counter = a.counter
	a.window = t.Provider.ContextWindow - t.Provider.MaxOutputTokens
	a.in.FileBudget = a.window / 2
	// What changes least comes first (see prompts.System): the system
	// prompt, the history with the blocks its messages were sent with,
	// then this turn's block with the message.
	a.system = prompts.System(a.in)
	a.baseTokens = a.counter.Count(a.system)
	a.seen = a.view.state()
	a.out = &assembled{Instructions: a.in.Instructions, Budget: a.window, Message: a.counter.Count(t.Message) + ImageTokens*len(ImageNames(t.Message)), Tools: toolTokens(tools, a.counter)}
	if err := a.fit(ctx, compact); err != nil {
		return nil, err
	}
	out := a.messages()
	folder := ""
	if st != nil {
		folder = st.Session.Folder
	} else if t.Session != nil {
		folder = t.Session.Folder
	}
	e.withImages(ctx, t.SessionID, folder, out.Messages)
	if record {
		view, message, planned, fresh, counter := a.view, a.message, a.planned, a.fresh, a.counter
		keptIDs := userIn(keptFrom(a.turns[a.from:], a.kept))
		out.Record = func(msg int64) { view.record(msg, message, planned, fresh, keptIDs, counter) }
	}
	return out, nil
}

// An assembly is one turn's model input being put together: the system
// prompt (input), the history within the budget and the turn's context
// block (fit), then the messages in order (messages).
type assembly struct {
	e       *Engine
	t       TurnSpec
	in      prompts.Input
	counter prompts.Counter
	window  int // the context window less the output reserve

	summary *session.Message
	rest    []session.Message // the history after the summary
	view    *modelView
	seen    viewState

	system      string // the system prompt
	baseTokens  int    // its tokens
	sysTokens   int    // the system prompt's and the turn's block's, beside the question
	summaryCost int

	// The blocks of the history as sent, unless the context is shown
	// afresh: when the superseded file text they carry outweighs the
	// current text, or when the turns holding a part's text are left out.
	fresh   bool
	turns   []histTurn // the turns the model may be given
	from    int        // turns[from:] are after the summary
	planned prompts.Input
	message string                         // the question with the turn's block
	used    int                            // the kept turns' tokens
	kept    []openai.ChatCompletionMessage // the newest of turns[from:], within the budget
	out     *assembled
}

// input is what the system prompt and the turn's block are made of: the
// session's state, the relevant files and the instructions.
func (a *assembly) input(guard *workspace.Guard, st *session.TurnState, record bool) {
	e, t := a.e, a.t
	a.in = prompts.Input{Resumed: t.Resumed, Candidates: t.Candidates}
	var sets session.Context
	if st != nil {
		a.in.Env = st.Session.Meta.EnvHint // the reminder's first line
		a.in.SessionFiles = st.Sources
		a.in.Plan = st.Session.Meta.Plan
		a.in.EditNotes = st.Session.Meta.EditNotes
		if st.SourcesErr != nil {
			e.Log.Warn("listing session files failed", "session", t.SessionID, "err", st.SourcesErr)
		}
		sets, a.summary, a.rest = st.Context, st.Summary, st.History
		a.view = e.viewFor(t.SessionID)
		if record {
			a.view.hold(a.summary, a.rest)
		}
	}
	if t.Env != "" {
		a.in.Env = t.Env
	}
	a.in.Context = sets
	e.relevantFiles(t, guard, sets, &a.in)
	if !t.NoInstructions {
		// In the system prompt, the input's stable prefix: they change
		// only when a file's text does, or when the files the turn
		// involves bring another folder's AGENTS.md.
		a.in.Instructions = e.Instructions(t.Roots, slices.Concat(sets[prompts.SetFiles], t.Files), e.buffers(t))
	}
}

// fit chooses the history the model gets within the window: the turns
// grouped with the blocks they were sent with, compacted when over the
// window, the oldest left out when still over, and the context shown
// afresh when the kept turns no longer carry what the plan counted on.
func (a *assembly) fit(ctx context.Context, compact compactor) error {
	t, out := a.t, a.out
	a.fresh = len(a.seen.blocks) == 0
	a.group()
	a.sysTokens = a.plan(userIn(a.turns))
	if a.fresh && len(a.seen.blocks) > 0 {
		a.group() // the plan chose to show the context afresh
	}
	if err := overWindow(inputParts{question: out.Message, system: a.sysTokens, files: out.Files, tools: out.Tools}, a.window, t.Provider.ContextWindow); err != nil {
		return err // before a compaction would ask the provider
	}
	if a.summary != nil {
		a.summaryCost = messageCost(summaryInput(a.summary), a.counter)
	}
	if s := compactIfOver(ctx, t, compact, a.window, a.sysTokens+out.Message+out.Tools, a.summary, a.summaryCost, a.turns); s != nil {
		a.from = len(a.turns) - s.kept
		a.summary, a.summaryCost = s.summary, messageCost(summaryInput(s.summary), a.counter)
		out.Compacted, out.Covered = s.summary, s.summary.SummaryOf.Covered
	}
	a.trim()
	if !a.fresh && a.from+out.Dropped > 0 {
		// The plan counted on every turn, and some are left out (summarised
		// or over the budget): plan with those kept, so what the others'
		// blocks held is shown again; and when that leaves out more,
		// show the context afresh.
		before := len(a.kept)
		a.sysTokens = a.plan(userIn(keptFrom(a.turns[a.from:], a.kept)))
		if a.fresh {
			a.group()
		}
		a.trim()
		if !a.fresh && len(a.kept) < before {
			a.fresh = true
			a.sysTokens = a.plan(nil)
			a.group()
			a.trim()
		}
	}
	if err := overWindow(inputParts{question: out.Message, system: a.sysTokens, files: out.Files, tools: out.Tools, summary: a.summaryCost}, a.window, t.Provider.ContextWindow); err != nil {
		return err // the plan showed the context again, or the summary does not fit beside it
	}
	return nil
}

// plan plans the turn's context block, given which messages of the
// history the model gets (present), and returns the tokens of the system
// prompt and the block beside the question's own.
func (a *assembly) plan(present func(int64) bool) (sysTokens int) {
	a.planned = a.in
	if !a.fresh {
		stale, live := a.seen.plan(&a.planned, present, a.counter)
		if stale > max(live, minStale) {
			a.fresh = true
			a.planned = a.in
		}
	}
	turnContext, fileTokens := prompts.TurnContext(a.planned)
	a.message = prompts.WithContext(turnContext, a.t.Message)
	a.out.Files = fileTokens
	return a.baseTokens + a.counter.Count(a.message) - a.out.Message
}

// group groups the history into turns, with the blocks they were sent
// with unless the context is shown afresh.
func (a *assembly) group() {
	blocks := a.seen.blocks
	if a.fresh {
		blocks = nil
	}
	a.turns = a.view.group(a.rest, session.SummaryID(a.summary), a.counter, blocks, !a.fresh)
}

// trim keeps the newest turns after the summary that fit the history's
// room: the system message and the question take their framing beside
// their text.
func (a *assembly) trim() {
	out := a.out
	room := a.window - a.sysTokens - out.Message - out.Tools - a.summaryCost - 2*perMessage
	a.kept, out.Dropped, a.used = trimTurns(a.turns[a.from:], room)
	if out.Dropped > 0 {
		// The cut is marked with a note, which takes room too.
		note := a.counter.Count(prompts.DroppedNote(len(a.turns) * 2))
		a.kept, out.Dropped, a.used = trimTurns(a.turns[a.from:], room-note)
	}
}

// messages are the model's input in order: the system prompt, the
// summary, the kept turns, the question with the turn's block.
func (a *assembly) messages() *assembled {
	out, counter, system := a.out, a.counter, a.system
	out.Messages = make([]openai.ChatCompletionMessage, 1, len(a.kept)+3) // system, summary, kept, message
	out.Messages[0].Role = openai.ChatMessageRoleSystem
	used := a.used
	if a.summary != nil {
		sm := summaryInput(a.summary)
		if out.Dropped > 0 {
			// The cut is marked where it is: right before the first message kept.
			sm.Content += prompts.DroppedNote(out.Dropped)
		}
		out.Messages = append(out.Messages, sm)
		used += messageCost(sm, counter)
	} else if out.Dropped > 0 {
		system += prompts.DroppedNote(out.Dropped)
	}
	out.Messages[0].Content = system
	out.System, out.History = a.sysTokens+counter.Count(system)-a.baseTokens, used
	out.Messages = append(append(out.Messages, a.kept...),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: a.message})
	return out
}

// userIn reports whether a message of the history is among turns, the
// newest turns of the history (a suffix: the test is one comparison).
func userIn(turns []histTurn) func(int64) bool {
	if len(turns) == 0 || len(turns[0].stored) == 0 {
		return func(int64) bool { return false }
	}
	first := turns[0].stored[0].ID
	return func(id int64) bool { return id >= first }
}

// keptFrom is the newest turns whose messages make up kept (trimTurns
// keeps whole turns, newest first).
func keptFrom(turns []histTurn, kept []openai.ChatCompletionMessage) []histTurn {
	n, i := 0, len(turns)
	for i > 0 && n+len(turns[i-1].msgs) <= len(kept) {
		i--
		n += len(turns[i].msgs)
	}
	return turns[i:]
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

// Forget drops what the engine keeps about a session (its model view, an
// answer a lost store did not take): the session was deleted.
func (e *Engine) Forget(id string) {
	e.mu.Lock()
	delete(e.views, id)
	delete(e.unsaved, id)
	e.mu.Unlock()
}

// dropView drops a session's model view: its history changed under it
// (Rewind), so the next turn reads the session whole.
func (e *Engine) dropView(id string) {
	e.mu.Lock()
	delete(e.views, id)
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
// missing ones noted, and ones the model added outside the workspace, that
// look like secrets or that hold NUL bytes (binary) withheld.
func (e *Engine) relevantFiles(t TurnSpec, guard *workspace.Guard, sets session.Context, in *prompts.Input) {
	in.Missing = MissingFiles(sets[prompts.SetFiles], e.buffers(t))
	paths := append(append([]string(nil), sets[prompts.SetFiles]...), t.Files...)
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] || slices.Contains(in.Missing, p) {
			continue
		}
		seen[p] = true
		if why := guard.Refusal(p); why != "" {
			// Added by the model and outside the workspace: never sent.
			in.Withheld = append(in.Withheld, prompts.Withheld{Path: p, Why: prompts.WhyOutside})
			continue
		}
		f := prompts.File{Path: p}
		if l, ok := t.Lines[p]; ok {
			f.Lines = [2]int{l.First, l.Last}
		}
		onDisk := ""
		if text, ok := e.buffers(t).TextByPath(p); ok {
			f.Content, f.Unsaved = text, true
		} else {
			onDisk = p
			data, err := workspace.ReadLimited(p, 4<<20)
			if err != nil {
				in.Missing = append(in.Missing, p)
				e.Log.Info("relevant file not read", "path", p, "err", err)
				continue
			}
			f.Content = data
		}
		if guard.Withheld(p, f.Content) {
			in.Withheld = append(in.Withheld, prompts.Withheld{Path: p, Why: prompts.WhySecret})
			continue
		}
		if note := workspace.BinaryNote(p, onDisk, f.Content); note != "" {
			// Named with its size, as read_file names it: NULs are no
			// use to the model, and a sparse file's holes are megabytes
			// of them.
			in.Withheld = append(in.Withheld, prompts.Withheld{Path: p, Note: note})
			continue
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
func compactIfOver(ctx context.Context, t TurnSpec, compact compactor, window, fixed int, summary *session.Message, summaryCost int, turns []histTurn) *compacted {
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

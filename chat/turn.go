package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ctxls/ctxls/api"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// ErrBusy: a turn is already running in the session.
var ErrBusy = errors.New("a turn is already running in this session; wait for it or cancel it")

// errBusyElsewhere is ErrBusy for a turn another process runs (another
// machine or editor on the same PostgreSQL store).
var errBusyElsewhere = &busyElsewhere{}

type busyElsewhere struct{}

func (*busyElsewhere) Error() string {
	return "a turn is already running in this session in another editor or on another machine; wait for it or cancel it there"
}
func (*busyElsewhere) Is(target error) bool { return target == ErrBusy }

// lostSaveTimeout bounds the one try to save a turn's final state after
// the store's database could not be reached.
const lostSaveTimeout = 3 * time.Second

// ErrProviderFailed: the provider was asked and failed (refused, unknown
// model, rate limited, unreachable, an unusable answer). Errors from a
// provider request wrap it, beside the provider's own error.
var ErrProviderFailed = errors.New("the model provider failed")

// ErrSessionDeleted ends a turn whose session was deleted while it ran (by
// this daemon, the CLI or another process).
var ErrSessionDeleted = errors.New("the session was deleted while its turn ran; the answer is not kept")

// Buffers gives the editor's unsaved text of open files.
type Buffers interface {
	TextByPath(path string) (string, bool)
}

// Events receives a turn's events (events.go). Emit is called from the
// turn's goroutine, except for TitleChanged, which may come later from the
// title job.
type Events interface{ Emit(Event) }

// ToolCall is one call of the model's to a tool: Name is the name the
// model used; Server and Tool say which server's tool it is ("" and Name
// for ctxls's own), with what its server says of it.
type ToolCall struct {
	// ID is ctxls's, unique in the session (CallID): the one clients see;
	// ProviderID the provider's.
	ID, ProviderID                string
	Name, Arguments, Server, Tool string
	ToolInfo
}

// ToolInfo is what a toolbox's server says of a tool.
type ToolInfo struct {
	Title                 string
	ReadOnly, Destructive bool
	// Asks: the call may wait for the user (a permission question, an
	// edit's review) before it runs, so it starts pending.
	Asks bool
}

// Engine runs turns. It is safe for concurrent use: turns of different
// sessions run at once; a second turn in the same session is refused.
type Engine struct {
	Store      session.Store
	Buffers    Buffers
	Log        *slog.Logger
	HTTPClient *http.Client
	// Checkpoint is how often a streaming answer is saved (default
	// DefaultCheckpoint).
	Checkpoint time.Duration
	// Stall ends a stream that sends nothing for this long (default 90 s).
	Stall time.Duration
	// SummaryTimeout bounds each request of a compaction (default
	// DefaultSummaryTimeout); past it the turn leaves the oldest turns out
	// instead.
	SummaryTimeout time.Duration
	// RetryWait is the wait before the first retry of a busy provider (429
	// or 5xx before the first token), doubled for each next one (default
	// 1 s); a Retry-After the provider sends takes its place.
	RetryWait time.Duration
	// Unavailable reports whether an error of a Store call says the
	// store's database could not be reached (a PostgreSQL store's
	// connection lost); such errors end a turn as ErrStoreUnreachable.
	// Nil: none does (the SQLite store's never do).
	Unavailable func(error) bool

	// bg tracks background jobs (titles) so Close can stop and wait for them.
	bg       sync.WaitGroup
	bgOnce   sync.Once
	bgCtx    context.Context
	bgCancel context.CancelFunc

	// mu guards running, views and unsaved.
	mu      sync.Mutex
	running map[string]runningTurn   // session → its running turn
	views   map[string]*modelView    // session → what its model was shown of its context
	unsaved map[string]unsavedAnswer // session → the final state a lost store did not take
	images  imageCache               // questions' images as data URLs (see withImages)
	now     func() time.Time         // the clock (tests)

	// encoded holds the JSON of messages sent recently (see encode.go).
	encoded msgCache
}

// TurnSpec is one user message.
type TurnSpec struct {
	SessionID string
	Message   string
	Files     []string // absolute paths added for this turn only
	// Lines are the lines of a turn's file the user selected (1-based,
	// inclusive), by path.
	Lines      map[string]Lines
	Resumed    bool // the first turn after a resume
	Candidates []string
	Roots      []string // workspace folders
	Provider   Resolved
	// Env is the session's envHint as the turn records it (the reminder's
	// first line); "" uses the one stored with the session. A preview
	// passes what its turn would record.
	Env string
	// Buffers, when set, gives the editor's text for this turn instead of
	// Engine.Buffers (the ACP door: embedded resources, fs/read_text_file).
	Buffers Buffers
	// WriteFile, when set, writes the model's output files (write_file)
	// instead of the store: path is absolute, inside the session folder,
	// and checked by the store first.
	WriteFile func(ctx context.Context, path, content string) error
	// CompactAt is when the turn summarises earlier turns: the input's
	// share of the window, in percent (0: DefaultCompactAt; CompactOff:
	// never, the oldest turns are left out instead).
	CompactAt int
	// Tools offers the model its tools (package tool's box; nil: none).
	Tools Toolbox
	// NoInstructions leaves the project's instructions files (AGENTS.md
	// and the like, Engine.Instructions) out of the model's input.
	NoInstructions bool
	// Session is the session as read when the turn was asked for (nil:
	// the engine reads it). The engine keeps it current through its own
	// changes (a new title moves the folder), so a turn reads the session
	// once or twice, not at every step.
	Session *session.Session
	// Rewind, when not 0, is the id of one of the session's questions: the
	// turn first takes the session back to before it (session.Rewinder:
	// that question and everything after it removed, under the turn's
	// lock), then asks Message in its place. The same text regenerates
	// or retries an answer; another text edits and resends the question.
	Rewind int64
}

// Lines is a range of lines, 1-based, both ends included.
type Lines struct{ First, Last int }

// buffers is where the turn reads the editor's text.
func (e *Engine) buffers(t TurnSpec) Buffers {
	if t.Buffers != nil {
		return t.Buffers
	}
	return e.Buffers
}

// Result is the end of a turn.
type Result struct {
	SessionID    string
	MessageID    int64
	Text         string
	FinishReason string // stop, length, cancelled, error
	Usage        session.Usage
	// ToolLimit: the turn stopped at MaxToolRounds (FinishReason "stop").
	ToolLimit bool
	// Edited are the user's files the turn's edits changed.
	Edited []string
	// Instructions are the project's instructions files the model was
	// given (Engine.Instructions).
	Instructions []prompts.Instruction
}

// Finish reasons.
const (
	FinishStop      = api.FinishStop
	FinishLength    = api.FinishLength
	FinishCancelled = api.FinishCancelled
	FinishError     = api.FinishError
)

// runningTurn is a session's running turn: how to stop it, and a channel
// closed once it has ended.
type runningTurn struct {
	cancel context.CancelCauseFunc
	done   chan struct{}
}

func (e *Engine) claim(id string, cancel context.CancelCauseFunc) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == nil {
		e.running = map[string]runningTurn{}
	}
	if _, busy := e.running[id]; busy {
		return false
	}
	e.running[id] = runningTurn{cancel: cancel, done: make(chan struct{})}
	return true
}

// Abort ends the session's running turn, if any, because the session was
// deleted: the turn ends with FinishReason "error" and ErrSessionDeleted,
// its answer not kept. What the engine keeps about the session is dropped
// (Forget). The channel returned is closed once the turn has ended (at
// once when none was running), so a caller can delete the session only
// after its turn wrote its last.
func (e *Engine) Abort(sessionID string) <-chan struct{} {
	e.Forget(sessionID)
	e.mu.Lock()
	r, ok := e.running[sessionID]
	e.mu.Unlock()
	if !ok {
		done := make(chan struct{})
		close(done)
		return done
	}
	r.cancel(ErrSessionDeleted)
	return r.done
}

// Busy reports whether a turn is running in the session.
func (e *Engine) Busy(sessionID string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.running[sessionID]
	return ok
}

func (e *Engine) release(id string) {
	e.mu.Lock()
	if r, ok := e.running[id]; ok {
		close(r.done)
		delete(e.running, id)
	}
	e.mu.Unlock()
}

// Run runs a turn. The user message is stored before the provider is
// called; the answer is checkpointed while it streams and ends complete,
// cancelled (the returned error is the context's) or error; an answer a
// daemon left streaming when it died is marked interrupted by the store.
// A failure returns both the Result (partial text, FinishReason "error")
// and the error.
func (e *Engine) Run(ctx context.Context, t TurnSpec, ev Events) (res *Result, err error) {
	parent := ctx
	defer func() {
		// Written to the log, not only shown: a failure the user saw and
		// dismissed is still there to read (the error never holds the key).
		if err != nil && parent.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, ErrBusy) && !errors.Is(err, session.ErrInvalid) {
			e.Log.Warn("chat turn failed", "session", t.SessionID, "model", t.Provider.Model, "err", err)
		}
	}()
	if strings.TrimSpace(t.Message) == "" {
		return nil, fmt.Errorf("%w: message is empty", session.ErrInvalid)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !e.claim(t.SessionID, cancel) {
		return nil, ErrBusy
	}
	defer e.release(t.SessionID)
	unlock, err := e.lockTurn(ctx, t.SessionID, cancel)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r := &run{e: e, t: t, ev: ev, ctx: ctx, cancel: cancel, res: &Result{SessionID: t.SessionID}}
	defer r.cleanup()
	if err := r.begin(); err != nil {
		return nil, err
	}
	for round := 0; ; round++ {
		more, err := r.round(round)
		var ab abort
		switch {
		case errors.Is(err, errDeleted):
			return r.deleted()
		case errors.As(err, &ab):
			return nil, ab.err
		case !more:
			r.res.Text = r.all.String()
			if t.Tools != nil {
				r.res.Edited = t.Tools.Edited()
			}
			if err == nil {
				e.nameLater(r.t, ev)
			}
			return r.res, err
		}
	}
}

// lockTurn takes the session's turn lock across processes; when the lock
// can be lost (its database connection broke), losing it ends the turn as
// an outage of the store ends it, since another daemon could start a turn.
func (e *Engine) lockTurn(ctx context.Context, id string, cancel context.CancelCauseFunc) (unlock func(), err error) {
	unlock, lockLost, err := e.Store.LockTurn(ctx, id)
	if errors.Is(err, session.ErrTurnElsewhere) {
		return nil, errBusyElsewhere
	}
	if err != nil {
		return nil, e.storeError(err)
	}
	if lockLost != nil {
		go func() {
			select {
			case <-lockLost:
				cancel(Unreachable(session.ErrTurnLockLost))
			case <-ctx.Done():
			}
		}()
	}
	return unlock, nil
}

// run is a turn in progress: what its rounds share.
type run struct {
	e        *Engine
	t        TurnSpec
	ev       Events
	ctx      context.Context
	cancel   context.CancelCauseFunc
	tt       *ToolTurn
	defs     []openai.Tool // the tools offered (TurnSpec.Tools's)
	messages []openai.ChatCompletionMessage
	res      *Result
	all      strings.Builder // the answer's text over all rounds
	cleanups []func()
	// userStored waits until the turn's message is stored (see begin).
	userStored func() error
	// What the rounds send (see fitWindow): messages costs sentTokens
	// (what this turn added, added, in bytes until counted); the tools'
	// definitions defTokens.
	counter               prompts.Counter
	sentTokens, defTokens int
	added                 []added
}

// errDeleted: a round found the session deleted under the turn.
var errDeleted = errors.New("deleted")

// abort is a store failure that ends the turn with no result.
type abort struct{ err error }

func (a abort) Error() string { return a.err.Error() }

// stored is the error of a store call: errDeleted when the session is gone,
// else an abort.
func (r *run) stored(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, session.ErrNotFound):
		return errDeleted
	}
	return abort{r.e.storeError(err)}
}

func (r *run) cleanup() {
	for _, f := range r.cleanups {
		f()
	}
}

// tookEditNotes removes the n edit notes the turn's message told the
// model (a failure is logged: the model would be told again).
func (e *Engine) tookEditNotes(ctx context.Context, sessionID string, n int) {
	if n == 0 {
		return
	}
	l, ok := e.Store.(session.EditLog)
	if !ok {
		return
	}
	if err := l.TakeEditNotes(ctx, sessionID, n); err != nil {
		e.Log.Warn("the notes of undone changes were not cleared", "session", sessionID, "err", err)
	}
}

// deleted ends the turn of a session deleted under it.
func (r *run) deleted() (*Result, error) {
	r.cancel(ErrSessionDeleted)
	r.res.Text, r.res.FinishReason = r.all.String(), FinishError
	r.e.Log.Info("session deleted during its turn", "session", r.t.SessionID)
	return r.res, ErrSessionDeleted
}

// begin saves what a lost store left unsaved, begins the turn in the store
// (answers left streaming by a daemon that is gone marked interrupted, the
// user message stored, and what the model is given of the session read
// back, in one call), names a new session, and builds the model's input.
func (r *run) begin() error {
	e, t, ctx := r.e, &r.t, r.ctx
	if err := e.saveUnsaved(ctx, t.SessionID); err != nil {
		return e.storeError(err)
	}
	if err := e.questionFits(ctx, *t); err != nil {
		return err // before a rewind or the question is stored
	}
	if t.Rewind != 0 {
		rw, ok := e.Store.(session.Rewinder)
		if !ok {
			return session.Invalidf("this store cannot ask a question again")
		}
		if _, err := rw.Rewind(ctx, t.SessionID, t.Rewind); err != nil {
			return e.storeError(err)
		}
		e.dropView(t.SessionID) // it held what is gone
	}
	var err error
	if t.Session, err = e.turnSession(ctx, *t); err != nil {
		return e.storeError(err)
	}
	t.Provider.Model = e.sessionModel(ctx, *t)
	e.Log.Debug("turn started", "session", t.SessionID, "provider", t.Provider, "files", len(t.Files), "resumed", t.Resumed)
	user := &session.Message{SessionID: t.SessionID, Role: session.RoleUser, Content: t.Message, Files: questionFiles(*t)}
	view := e.viewFor(t.SessionID)
	st, err := e.Store.TurnState(ctx, t.SessionID, user, view.mark())
	if err != nil {
		return e.storeError(err)
	}
	st.History = view.history(st) // what the view held, and what is new
	t.Session = st.Session
	e.autoTitle(ctx, t, r.ev)
	st.Session = t.Session // renamed, its folder moved, when autoTitle titled it
	stored := st.Stored
	if stored == nil { // stored already, and read with the rest
		st.History = slices.DeleteFunc(st.History, func(m session.Message) bool { return m.ID == user.ID })
		stored = func() error { return nil }
	}
	r.tt = e.toolTurn(*t, st, r.ev)
	r.defs = turnTools(ctx, *t, r.tt)
	in, err := e.assemble(ctx, *t, &r.tt.Guard, r.defs, st, true, e.turnCompactor(*t, r.ev))
	if err != nil {
		if errors.Is(err, session.ErrTooLarge) {
			// Over the window beside the system prompt and tools: the
			// question is stored, so its answer says why there is none,
			// as a provider's failure would.
			r.failedAnswer(stored, err)
		}
		return err
	}
	r.res.Instructions = in.Instructions
	// The message may still be being stored (Store.TurnState): the first
	// round's answer row waits for it, and the view notes the block
	// under its id.
	r.userStored = sync.OnceValue(func() error {
		err := stored()
		if err == nil {
			in.Record(user.ID)
			e.tookEditNotes(ctx, t.SessionID, len(st.Session.Meta.EditNotes))
		}
		return err
	})
	r.tt.Question = func() int64 {
		if r.userStored() != nil {
			return 0
		}
		return user.ID
	}
	if in.Compacted != nil {
		r.ev.Emit(Compacted{Compaction{SessionID: t.SessionID, Summary: in.Compacted, Covered: in.Covered,
			Tokens: in.System + in.History + in.Message + in.Tools, Window: t.Provider.ContextWindow}})
	}
	r.messages = in.Messages
	r.counter = prompts.TokenizerFor(t.Provider.Model)
	r.sentTokens, r.defTokens = in.System+in.History+in.Message+2*perMessage, in.Tools
	return nil
}

// failedAnswer stores err as the answer of a turn that failed before the
// provider was asked, once its question is stored.
func (r *run) failedAnswer(stored func() error, err error) {
	if stored() != nil {
		return
	}
	m := &session.Message{SessionID: r.t.SessionID, Role: session.RoleAssistant, Status: session.StatusError, Model: r.t.Provider.Model, Content: withError("", err)}
	if aerr := r.e.Store.AppendMessage(context.WithoutCancel(r.ctx), m); aerr != nil {
		r.e.Log.Warn("storing a failed answer failed", "session", r.t.SessionID, "err", aerr)
	}
}

// round asks the provider once and stores its answer; with tool calls it
// runs them and reports more. err is the turn's error (the stream's, a
// cancel, the store's), errDeleted when the session went.
func (r *run) round(n int) (more bool, err error) {
	e, t, ctx := r.e, r.t, r.ctx
	if n > 0 { // the first round's input fits already (assemble)
		if err := r.fitWindow(n); err != nil {
			r.res.FinishReason = FinishError
			r.failedAnswer(r.userStored, err)
			return false, err
		}
	}
	// The answer's row is created while the request goes out: the insert
	// overlaps the provider's time to first byte instead of adding to it.
	// Its first delta waits for the row (ready), so nothing reaches the
	// editor that a checkpoint could not save.
	answer := &session.Message{SessionID: t.SessionID, Role: session.RoleAssistant, Status: session.StatusStreaming, Model: t.Provider.Model}
	created := make(chan struct{})
	var createErr error
	go func() {
		// After the turn's message (ids in order), which may still be being
		// written.
		if createErr = r.userStored(); createErr == nil {
			createErr = e.Store.AppendMessage(ctx, answer)
		}
		close(created)
	}()
	ready := func() error { <-created; return createErr }
	// gone is called by the checkpoints when the answer's row is gone;
	// lost when the store's database cannot be reached: the turn ends
	// there, since neither its answer nor its turn lock (held on a
	// connection to the database) survives the outage.
	gone := func() { r.cancel(ErrSessionDeleted) }
	lost := func(err error) {
		e.Log.Warn("session store unreachable during a turn", "session", t.SessionID, "err", err)
		r.cancel(Unreachable(err))
	}
	setText, stopCheckpoints := e.checkpoints(ctx, answer, created, ready, gone, lost)
	var defs []openai.Tool
	if n < MaxToolRounds {
		defs = r.defs
	}
	text, finish, usage, calls, err := e.stream(ctx, t.Provider, r.messages, ready, setText, r.ev, defs)
	stopCheckpoints()
	r.all.WriteString(text)
	if cerr := ready(); cerr != nil {
		if errors.Is(cerr, session.ErrNotFound) || errors.Is(context.Cause(ctx), ErrSessionDeleted) {
			return false, errDeleted
		}
		return false, abort{r.e.storeError(cerr)}
	}
	r.res.MessageID = answer.ID
	r.res.Usage.PromptTokens += usage.PromptTokens
	r.res.Usage.CompletionTokens += usage.CompletionTokens
	r.res.Usage.CachedTokens += usage.CachedTokens
	if errors.Is(context.Cause(ctx), ErrSessionDeleted) {
		return false, errDeleted
	}
	saveCtx, err := r.save(answer, text, finish, usage, err)
	if errors.Is(err, errDeleted) || err != nil || len(calls) == 0 {
		return false, err
	}
	return r.runTools(saveCtx, n, answer, text, calls)
}

// save stores an answer's final state, even when the turn was cancelled,
// and sets the result's finish reason; it returns the context later writes
// of the round use and the turn's error.
func (r *run) save(answer *session.Message, text, finish string, usage session.Usage, err error) (context.Context, error) {
	e, ctx := r.e, r.ctx
	status := session.StatusComplete
	storeLost := errors.Is(context.Cause(ctx), ErrStoreUnreachable)
	switch {
	case storeLost:
		r.res.FinishReason, status = FinishError, session.StatusError
		err = context.Cause(ctx)
	case err != nil && ctx.Err() != nil:
		r.res.FinishReason, status = FinishCancelled, session.StatusCancelled
		err = ctx.Err()
	case err != nil:
		r.res.FinishReason, status = FinishError, session.StatusError
	case finish == string(openai.FinishReasonLength):
		r.res.FinishReason = FinishLength
	default:
		r.res.FinishReason = FinishStop
	}
	content := text
	if status == session.StatusError {
		// Kept with the answer, so show, export and history.md say why.
		content = withError(text, err)
	}
	saveCtx := context.WithoutCancel(ctx)
	if storeLost {
		// One try, bounded: the database may be back already (a restart),
		// or not (then the last checkpoint stays).
		var cancelSave context.CancelFunc
		saveCtx, cancelSave = context.WithTimeout(saveCtx, lostSaveTimeout)
		r.cleanups = append(r.cleanups, cancelSave)
	}
	if uerr := e.Store.UpdateMessage(saveCtx, answer.ID, content, status, &usage); errors.Is(uerr, session.ErrNotFound) {
		return saveCtx, errDeleted
	} else if uerr != nil {
		e.Log.Error("saving the answer failed", "session", r.t.SessionID, "err", uerr)
		if storeLost {
			e.keepUnsaved(r.t.SessionID, unsavedAnswer{id: answer.ID, content: content, status: status, usage: usage})
		}
	}
	return saveCtx, err
}

// runTools records a round's tool calls, runs them and stores their
// results; at MaxToolRounds it stops the turn with a note instead.
func (r *run) runTools(saveCtx context.Context, n int, answer *session.Message, text string, calls []openai.ToolCall) (more bool, err error) {
	e, t := r.e, r.t
	stored := storedCalls(t.Tools, calls)
	ids := make([]string, len(calls))
	for i := range calls {
		ids[i] = CallID(answer.ID, i)
	}
	raw, _ := json.Marshal(withIDs(stored, ids))
	if err := e.Store.SetToolCalls(saveCtx, answer.ID, raw); err != nil {
		return false, r.stored(err)
	}
	r.messages = append(r.messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text, ToolCalls: calls})
	r.sent(stored)
	for i, c := range calls {
		res := r.call(ids[i], c)
		out := res.Output
		// The result's status tells history what became of the call.
		status := session.StatusComplete
		switch {
		case res.Cancelled:
			status = session.StatusCancelled
		case res.Declined:
			status = session.StatusDeclined
		case res.Failed:
			status = session.StatusError
		}
		tm := &session.Message{SessionID: t.SessionID, Role: session.RoleTool, Content: out, ToolCallID: ids[i], Status: status}
		if err := e.Store.AppendMessage(saveCtx, tm); err != nil {
			return false, r.stored(err)
		}
		r.messages = append(r.messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: out, ToolCallID: c.ID})
		r.sent(nil)
	}
	if err := r.ctx.Err(); err != nil {
		// Cancelled while the tools ran (a call waiting for a server or
		// for the user): every call has its result stored, the turn ends.
		r.res.FinishReason = FinishCancelled
		return false, err
	}
	if n+1 < MaxToolRounds {
		return true, nil
	}
	note := fmt.Sprintf("\n\n[stopped: the model used tools %d times in this turn, the limit; ask again to continue]", MaxToolRounds)
	r.ev.Emit(TextDelta{Text: note})
	r.all.WriteString(note)
	nm := &session.Message{SessionID: t.SessionID, Role: session.RoleAssistant, Content: strings.TrimSpace(note)}
	if err := e.Store.AppendMessage(saveCtx, nm); err == nil {
		r.res.MessageID = nm.ID
	}
	r.res.FinishReason, r.res.ToolLimit = FinishStop, true
	return false, nil
}

// call runs one tool call (id: ctxls's, see CallID) through the turn's
// toolbox, bracketed by ToolStarted and ToolFinished, and returns what
// became of it.
func (r *run) call(id string, c openai.ToolCall) ToolResult {
	tc := ToolCall{ID: id, ProviderID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments, Tool: c.Function.Name}
	ok := false
	if r.t.Tools != nil {
		tc.Server, tc.Tool, tc.ToolInfo, ok = r.t.Tools.Describe(tc.Name)
		tc.Tool = cmp.Or(tc.Tool, tc.Name)
	}
	r.ev.Emit(ToolStarted{Call: tc, Pending: tc.Asks})
	res := ToolResult{Output: fmt.Sprintf("error: unknown tool %q", tc.Name), Failed: true}
	if ok {
		res = r.t.Tools.Call(r.ctx, r.tt, tc)
	}
	// A call that did not end well once its turn was cancelled (its
	// question or its run stopped by the cancel) reads "cancelled", not
	// "declined" or "failed": nobody said no and nothing went wrong.
	if (res.Failed || res.Declined) && r.ctx.Err() != nil {
		res.Cancelled = true
	}
	r.ev.Emit(ToolFinished{Call: tc, ToolResult: res})
	return res
}

// unsavedAnswer is an answer's final state that could not be saved because
// the store's database could not be reached; the session's next turn in
// this daemon saves it first (until then the answer shows its last
// checkpoint, "streaming", which the next turn's Store.TurnState ends).
type unsavedAnswer struct {
	id      int64
	content string
	status  session.Status
	usage   session.Usage
}

func (e *Engine) keepUnsaved(sessionID string, u unsavedAnswer) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.unsaved == nil {
		e.unsaved = map[string]unsavedAnswer{}
	}
	e.unsaved[sessionID] = u
}

// saveUnsaved saves the session's answer a lost store did not take, if
// any; an answer since deleted is forgotten.
func (e *Engine) saveUnsaved(ctx context.Context, sessionID string) error {
	e.mu.Lock()
	u, ok := e.unsaved[sessionID]
	e.mu.Unlock()
	if !ok {
		return nil
	}
	if err := e.Store.UpdateMessage(ctx, u.id, u.content, u.status, &u.usage); err != nil && !errors.Is(err, session.ErrNotFound) {
		return err
	}
	e.mu.Lock()
	delete(e.unsaved, sessionID)
	e.mu.Unlock()
	return nil
}

// sessionModel is the model a turn uses: the session's own
// (ctxls.session.setModel), else the provider's.
func (e *Engine) sessionModel(ctx context.Context, t TurnSpec) string {
	if t.SessionID != "" {
		if s, err := e.turnSession(ctx, t); err == nil && s.Meta.Model != "" {
			return s.Meta.Model
		}
	}
	return t.Provider.Model
}

// autoTitle gives a session still under the default title the first line
// of the turn's message. A session titled already when the turn read it
// (by the user, the model or an earlier turn) goes back to the default
// only through a clear, which the next turn sees: the store is not asked.
func (e *Engine) autoTitle(ctx context.Context, t *TurnSpec, ev Events) {
	if t.Session.Title != session.DefaultTitle || t.Session.TitleSource != session.TitleAuto {
		return
	}
	changed, err := e.Store.SetAutoTitle(ctx, t.SessionID, FirstLineTitle(t.Message))
	if err != nil {
		e.Log.Warn("auto title failed", "session", t.SessionID, "err", err)
		return
	}
	if changed {
		if s, err := e.Store.Get(ctx, t.SessionID); err == nil {
			t.Session = s
			ev.Emit(TitleChanged{Session: s})
		}
	}
}

// turnSession is the turn's session: as the turn carries it, else read.
func (e *Engine) turnSession(ctx context.Context, t TurnSpec) (*session.Session, error) {
	if t.Session != nil {
		return t.Session, nil
	}
	return e.Store.Get(ctx, t.SessionID)
}

// withError is what a failed answer is stored as: the text that arrived,
// then the error that ended it.
func withError(text string, err error) string {
	if text != "" {
		text += "\n\n"
	}
	return text + "Error: " + err.Error()
}

// retryWait is the wait before retry attempt+1 of a busy provider when it
// sent no Retry-After.
func (e *Engine) retryWait(attempt int) time.Duration {
	if e.RetryWait > 0 {
		return e.RetryWait << attempt
	}
	return time.Second << attempt
}

// questionFiles are the files that went with t's question, as its stored
// message records them: each absolute, with the lines it named.
func questionFiles(t TurnSpec) []string {
	var out []string
	for _, f := range t.Files {
		if l, ok := t.Lines[f]; ok {
			if l.First == l.Last {
				f = fmt.Sprintf("%s:%d", f, l.First)
			} else {
				f = fmt.Sprintf("%s:%d-%d", f, l.First, l.Last)
			}
		}
		out = append(out, f)
	}
	return out
}

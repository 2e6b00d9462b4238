package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/sourcegraph/conc/panics"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
)

// DefaultCheckpoint is how often a streaming answer is saved unless
// Engine.Checkpoint says otherwise: a daemon killed mid-answer loses at most
// the text of the last DefaultCheckpoint (plus the time one save takes).
const DefaultCheckpoint = 500 * time.Millisecond

// ErrBusy: a turn is already running in the session.
var ErrBusy = errors.New("a turn is already running in this session; wait for it or cancel it")

// ErrSessionDeleted ends a turn whose session was deleted while it ran (by
// this daemon, the CLI or another process).
var ErrSessionDeleted = errors.New("the session was deleted while its turn ran; the answer is not kept")

// Buffers gives the editor's unsaved text of open files.
type Buffers interface {
	TextByPath(path string) (string, bool)
}

// Events receives a turn's progress. Methods are called from the turn's
// goroutine, except TitleChanged, which may come later from the title job.
type Events interface {
	Delta(text string)
	Activity(message string)
	TitleChanged(s *session.Session)
	ContextChanged(ch *session.ContextChange)
	// FilesChanged: a file in the session folder was written or removed
	// (size 0); by is "model" (write_file) or "user".
	FilesChanged(sessionID, subdir, name string, size int64, by string)
	// ToolStarted and ToolFinished bracket each tool call of the model's;
	// failed: the tool returned an error (the model got it as text).
	ToolStarted(c ToolCall)
	ToolFinished(c ToolCall, output string, failed bool)
}

// ToolCall is one call of the model's to a tool.
type ToolCall struct{ ID, Name, Arguments string }

// Engine runs turns. It is safe for concurrent use: turns of different
// sessions run at once; a second turn in the same session is refused.
type Engine struct {
	Store      *session.Store
	Buffers    Buffers
	Log        *slog.Logger
	HTTPClient *http.Client
	// Checkpoint is how often a streaming answer is saved (default
	// DefaultCheckpoint).
	Checkpoint time.Duration
	// Stall ends a stream that sends nothing for this long (default 90 s).
	Stall time.Duration

	// bg tracks background jobs (titles) so Close can stop and wait for them.
	bg       sync.WaitGroup
	bgOnce   sync.Once
	bgCtx    context.Context
	bgCancel context.CancelFunc

	// mu guards running and sent.
	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // session → its running turn
	sent    map[string]map[string]string       // session → path → content last sent
}

// Turn is one user message.
type Turn struct {
	SessionID  string
	Message    string
	Files      []string // absolute paths added for this turn only
	Resumed    bool     // the first turn after a resume
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
}

// buffers is where the turn reads the editor's text.
func (e *Engine) buffers(t Turn) Buffers {
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
}

// Finish reasons.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishCancelled = "cancelled"
	FinishError     = "error"
)

func (e *Engine) claim(id string, cancel context.CancelCauseFunc) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == nil {
		e.running = map[string]context.CancelCauseFunc{}
	}
	if e.running[id] != nil {
		return false
	}
	e.running[id] = cancel
	return true
}

// Abort ends the session's running turn, if any, because the session was
// deleted: the turn ends with FinishReason "error" and ErrSessionDeleted.
func (e *Engine) Abort(sessionID string) {
	e.mu.Lock()
	cancel := e.running[sessionID]
	e.mu.Unlock()
	if cancel != nil {
		cancel(ErrSessionDeleted)
	}
}

func (e *Engine) release(id string) {
	e.mu.Lock()
	delete(e.running, id)
	e.mu.Unlock()
}

// Run runs a turn. The user message is stored before the provider is
// called; the answer is checkpointed while it streams and ends complete,
// interrupted (cancelled: the returned error is the context's) or error.
// A failure returns both the Result (partial text, FinishReason "error")
// and the error.
func (e *Engine) Run(ctx context.Context, t Turn, ev Events) (*Result, error) {
	if strings.TrimSpace(t.Message) == "" {
		return nil, fmt.Errorf("%w: message is empty", session.ErrInvalid)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	if !e.claim(t.SessionID, cancel) {
		return nil, ErrBusy
	}
	defer e.release(t.SessionID)
	t.Provider.Model = e.sessionModel(ctx, t)
	e.Log.Debug("turn started", "session", t.SessionID, "provider", t.Provider, "files", len(t.Files), "resumed", t.Resumed)

	if err := e.Store.InterruptStale(ctx, t.SessionID); err != nil {
		return nil, err
	}
	user := &session.Message{SessionID: t.SessionID, Role: session.RoleUser, Content: t.Message}
	if err := e.Store.AppendMessage(ctx, user); err != nil {
		return nil, err
	}
	if changed, err := e.Store.SetAutoTitle(ctx, t.SessionID, FirstLineTitle(t.Message)); err != nil {
		e.Log.Warn("auto title failed", "session", t.SessionID, "err", err)
	} else if changed {
		if s, err := e.Store.Get(ctx, t.SessionID); err == nil {
			ev.TitleChanged(s)
		}
	}
	tools, err := e.toolEnv(ctx, t, ev)
	if err != nil {
		return nil, err
	}
	history, err := e.Store.Messages(ctx, t.SessionID)
	if err != nil {
		return nil, err
	}
	history = slices.DeleteFunc(history, func(m session.Message) bool { return m.ID == user.ID })
	in, err := e.assemble(ctx, t, tools, history, true)
	if err != nil {
		return nil, err
	}
	messages := in.Messages

	res := &Result{SessionID: t.SessionID}
	var all strings.Builder
	// deleted ends the turn of a session deleted under it.
	deleted := func() (*Result, error) {
		cancel(ErrSessionDeleted)
		res.Text, res.FinishReason = all.String(), FinishError
		e.Log.Info("session deleted during its turn", "session", t.SessionID)
		return res, ErrSessionDeleted
	}
	// gone is called by the checkpoints when the answer's row is gone.
	gone := func() { cancel(ErrSessionDeleted) }
	var streamErr error
	for round := 0; ; round++ {
		// The answer's row is created while the request goes out: the
		// insert overlaps the provider's time to first byte instead of
		// adding to it. Its first delta waits for the row (ready), so
		// nothing reaches the editor that a checkpoint could not save.
		answer := &session.Message{SessionID: t.SessionID, Role: session.RoleAssistant, Status: session.StatusStreaming, Model: t.Provider.Model}
		created := make(chan struct{})
		var createErr error
		go func() { createErr = e.Store.AppendMessage(ctx, answer); close(created) }()
		ready := func() error { <-created; return createErr }
		withTools := round < MaxToolRounds
		setText, stopCheckpoints := e.checkpoints(ctx, answer, created, ready, gone)
		text, finish, usage, calls, err := e.stream(ctx, t.Provider, messages, ready, setText, ev, withTools)
		stopCheckpoints()
		all.WriteString(text)
		if cerr := ready(); cerr != nil {
			if errors.Is(cerr, session.ErrNotFound) || errors.Is(context.Cause(ctx), ErrSessionDeleted) {
				return deleted()
			}
			return nil, cerr
		}
		res.MessageID = answer.ID
		res.Usage.PromptTokens += usage.PromptTokens
		res.Usage.CompletionTokens += usage.CompletionTokens
		if errors.Is(context.Cause(ctx), ErrSessionDeleted) {
			return deleted()
		}
		status := session.StatusComplete
		switch {
		case err != nil && ctx.Err() != nil:
			res.FinishReason, status = FinishCancelled, session.StatusInterrupted
			err = ctx.Err()
		case err != nil:
			res.FinishReason, status = FinishError, session.StatusError
		case finish == string(openai.FinishReasonLength):
			res.FinishReason = FinishLength
		default:
			res.FinishReason = FinishStop
		}
		content := text
		if status == session.StatusError {
			// Kept with the answer, so show, export and history.md say why.
			content = withError(text, err)
		}
		// Save the final state even when ctx is cancelled.
		saveCtx := context.WithoutCancel(ctx)
		if uerr := e.Store.UpdateMessage(saveCtx, answer.ID, content, status, &usage); errors.Is(uerr, session.ErrNotFound) {
			return deleted()
		} else if uerr != nil {
			e.Log.Error("saving the answer failed", "session", t.SessionID, "err", uerr)
		}
		if err != nil || len(calls) == 0 {
			streamErr = err
			break
		}
		// Tool round: record the calls, run them, and go on.
		raw, _ := json.Marshal(storedCalls(calls))
		if err := e.Store.SetToolCalls(saveCtx, answer.ID, raw); err != nil {
			if errors.Is(err, session.ErrNotFound) {
				return deleted()
			}
			return nil, err
		}
		messages = append(messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text, ToolCalls: calls})
		for _, c := range calls {
			tc := ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
			ev.ToolStarted(tc)
			out, failed := tools.run(ctx, c.Function.Name, c.Function.Arguments)
			ev.ToolFinished(tc, out, failed)
			tm := &session.Message{SessionID: t.SessionID, Role: session.RoleTool, Content: out, ToolCallID: c.ID}
			if err := e.Store.AppendMessage(saveCtx, tm); err != nil {
				if errors.Is(err, session.ErrNotFound) {
					return deleted()
				}
				return nil, err
			}
			messages = append(messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: out, ToolCallID: c.ID})
		}
		if round+1 == MaxToolRounds {
			note := fmt.Sprintf("\n\n[stopped: the model used tools %d times in this turn, the limit; ask again to continue]", MaxToolRounds)
			ev.Delta(note)
			all.WriteString(note)
			nm := &session.Message{SessionID: t.SessionID, Role: session.RoleAssistant, Content: strings.TrimSpace(note)}
			if err := e.Store.AppendMessage(saveCtx, nm); err == nil {
				res.MessageID = nm.ID
			}
			res.FinishReason, res.ToolLimit = FinishStop, true
			break
		}
	}
	res.Text = all.String()
	if streamErr == nil {
		e.nameLater(t, ev)
	}
	return res, streamErr
}

// sessionModel is the model a turn uses: the session's own
// (ctxls.session.setModel), else the provider's.
func (e *Engine) sessionModel(ctx context.Context, t Turn) string {
	if t.SessionID != "" {
		if s, err := e.Store.Get(ctx, t.SessionID); err == nil && s.Meta.Model != "" {
			return s.Meta.Model
		}
	}
	return t.Provider.Model
}

// withError is what a failed answer is stored as: the text that arrived,
// then the error that ended it.
func withError(text string, err error) string {
	if text != "" {
		text += "\n\n"
	}
	return text + "Error: " + err.Error()
}

// FirstLineTitle is a new session's instant title: the message's first
// non-empty line, cut at a word boundary to at most 60 characters.
func FirstLineTitle(msg string) string {
	line := ""
	for _, l := range strings.Split(msg, "\n") {
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			line = l
			break
		}
	}
	r := []rune(line)
	if len(r) <= 60 {
		return line
	}
	cut := string(r[:60])
	if i := strings.LastIndex(cut, " "); i > 20 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,.;:-") + "…"
}

// toolEnv gathers what a turn may read and who added which relevant file.
func (e *Engine) toolEnv(ctx context.Context, t Turn, ev Events) (*toolEnv, error) {
	sess, err := e.Store.Get(ctx, t.SessionID)
	if err != nil {
		return nil, err
	}
	addedBy, err := e.Store.AddedBy(ctx, t.SessionID, prompts.SetFiles)
	if err != nil {
		return nil, err
	}
	env := &toolEnv{e: e, turn: t, folder: sess.Folder, ev: ev, userSet: map[string]bool{}}
	for p, by := range addedBy {
		if by == session.AddedByUser {
			env.userSet[p] = true
		}
	}
	for _, p := range t.Files {
		env.userSet[p] = true
	}
	return env, nil
}

// assembled is a turn's model input and what its parts cost.
type assembled struct {
	Messages []openai.ChatCompletionMessage
	// Tokens of the system prompt (files included), of the relevant files'
	// contents in it, of the earlier messages kept, and of this turn's
	// message; Budget is the context window less the output reserve.
	System, Files, History, Message, Budget int
	Dropped                                 int // earlier messages left out
}

// assemble gathers the session's state and renders the model input: the
// system prompt, the history kept within the budget (whole turns, oldest
// dropped first) and the new message. history is the session's stored
// messages without this turn's. guard decides which relevant files may be
// read. record notes the files' contents as sent (for "changed since the
// last turn"); a preview does not.
func (e *Engine) assemble(ctx context.Context, t Turn, guard *toolEnv, history []session.Message, record bool) (*assembled, error) {
	in := prompts.Input{Resumed: t.Resumed, Candidates: t.Candidates}
	var sets session.Context
	if t.SessionID != "" {
		if sess, err := e.Store.Get(ctx, t.SessionID); err == nil {
			in.Env = sess.Meta.EnvHint // the reminder's first line
		}
		if names, err := e.Store.ListFiles(ctx, t.SessionID, "sources"); err != nil {
			e.Log.Warn("listing session files failed", "session", t.SessionID, "err", err)
		} else {
			in.SessionFiles = names
		}
		var err error
		if sets, err = e.Store.Context(ctx, t.SessionID); err != nil {
			return nil, err
		}
	}
	if t.Env != "" {
		in.Env = t.Env
	}
	in.Context = sets
	in.Missing = MissingFiles(sets[prompts.SetFiles], e.buffers(t))
	paths := append(append([]string(nil), sets[prompts.SetFiles]...), t.Files...)
	seen := map[string]bool{}
	last := map[string]string{}
	if record {
		e.mu.Lock()
		if e.sent == nil {
			e.sent = map[string]map[string]string{}
		}
		if e.sent[t.SessionID] == nil {
			e.sent[t.SessionID] = map[string]string{}
		}
		last = e.sent[t.SessionID]
		e.mu.Unlock()
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
		e.mu.Lock()
		if prev, ok := last[p]; ok && prev != f.Content {
			in.Changed = append(in.Changed, p)
		}
		last[p] = f.Content
		e.mu.Unlock()
		in.Relevant = append(in.Relevant, f)
	}
	counter := prompts.TokenizerFor(t.Provider.Model)
	in.Counter = counter
	window := t.Provider.ContextWindow - t.Provider.MaxOutputTokens
	in.FileBudget = window / 2
	system, fileTokens := prompts.SystemParts(in)

	out := &assembled{Files: fileTokens, Budget: window, Message: counter.Count(t.Message)}
	budget := window - counter.Count(system) - out.Message
	kept, dropped, used := trimHistory(history, budget, counter)
	if dropped > 0 {
		// The cut is marked where it is: right before the first message kept.
		system += fmt.Sprintf("\n[%d earlier messages not shown]\n", dropped)
	}
	out.System, out.History, out.Dropped = counter.Count(system), used, dropped
	out.Messages = append(append([]openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}, kept...),
		openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.Message})
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

// client builds a go-openai client for a provider.
func (e *Engine) client(p Resolved, capture *retryAfter) *openai.Client {
	cfg := openai.DefaultConfig(p.APIKey())
	cfg.BaseURL = p.BaseURL
	// Keep-alive comments must not end a slow local model's stream.
	cfg.EmptyMessagesLimit = 1 << 30
	base := e.HTTPClient
	if base == nil {
		base = http.DefaultClient
	}
	hc := *base
	transport := hc.Transport
	if transport == nil {
		transport = http.DefaultTransport
	}
	hc.Transport = &captureTransport{next: transport, capture: capture}
	cfg.HTTPClient = &hc
	return openai.NewClientWithConfig(cfg)
}

// retryAfter remembers the last Retry-After header (go-openai does not
// expose it on errors).
type retryAfter struct {
	mu sync.Mutex
	d  time.Duration
}

type captureTransport struct {
	next    http.RoundTripper
	capture *retryAfter
}

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && c.capture != nil {
		if s := resp.Header.Get("Retry-After"); s != "" {
			if secs, perr := strconv.Atoi(s); perr == nil {
				c.capture.mu.Lock()
				c.capture.d = time.Duration(secs) * time.Second
				c.capture.mu.Unlock()
			}
		}
	}
	return resp, err
}

// stream runs the streamed completion with retries before the first token,
// checkpointing the answer.
func (e *Engine) stream(ctx context.Context, p Resolved, messages []openai.ChatCompletionMessage, ready func() error, checkpoint func(string), ev Events, withTools bool) (string, string, session.Usage, []openai.ToolCall, error) {
	var usage session.Usage
	var calls []openai.ToolCall
	capture := &retryAfter{}
	client := e.client(p, capture)
	req := openai.ChatCompletionRequest{
		Model:         p.Model,
		Messages:      messages,
		Stream:        true,
		StreamOptions: &openai.StreamOptions{IncludeUsage: true},
	}
	if withTools {
		req.Tools = toolDefs
	}
	streamCtx, cancelStream := context.WithCancelCause(ctx)
	defer cancelStream(nil)
	var stream *openai.ChatCompletionStream
	var err error
	for attempt := 0; ; attempt++ {
		stream, err = client.CreateChatCompletionStream(streamCtx, req)
		if err == nil || attempt == 3 || !retryable(err) || ctx.Err() != nil {
			break
		}
		wait := time.Duration(1<<attempt) * time.Second
		capture.mu.Lock()
		if capture.d > 0 {
			wait = min(capture.d, 30*time.Second)
			capture.d = 0
		}
		capture.mu.Unlock()
		ev.Activity(fmt.Sprintf("the provider is busy; retrying in %s", wait))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
	}
	if err != nil {
		return "", "", usage, nil, describe(err, p, false)
	}
	defer stream.Close()

	stall := e.Stall
	if stall <= 0 {
		stall = 90 * time.Second
	}
	errStalled := fmt.Errorf("the provider sent nothing for %s; the answer so far is kept", stall)
	timer := time.AfterFunc(stall, func() { cancelStream(errStalled) })
	defer timer.Stop()

	var text strings.Builder
	finish := ""
	for {
		resp, err := stream.Recv()
		timer.Reset(stall)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if cause := context.Cause(streamCtx); cause == errStalled {
				return text.String(), finish, usage, nil, errStalled
			}
			if ctx.Err() != nil {
				return text.String(), finish, usage, nil, ctx.Err()
			}
			return text.String(), finish, usage, nil, describe(err, p, true)
		}
		if resp.Usage != nil {
			usage = session.Usage{PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens}
		}
		for _, c := range resp.Choices {
			if c.Delta.Content != "" {
				if err := ready(); err != nil {
					return text.String(), finish, usage, nil, err
				}
				text.WriteString(c.Delta.Content)
				checkpoint(text.String()) // no copy: a Builder's strings stay valid
				ev.Delta(c.Delta.Content)
			}
			for _, tc := range c.Delta.ToolCalls {
				i := len(calls)
				if tc.Index != nil {
					i = *tc.Index
				}
				for len(calls) <= i {
					calls = append(calls, openai.ToolCall{Type: openai.ToolTypeFunction})
				}
				if tc.ID != "" {
					calls[i].ID = tc.ID
				}
				if tc.Function.Name != "" {
					calls[i].Function.Name += tc.Function.Name
				}
				calls[i].Function.Arguments += tc.Function.Arguments
			}
			if c.FinishReason != "" {
				finish = string(c.FinishReason)
			}
		}
	}
	return text.String(), finish, usage, calls, nil
}

// checkpoints saves a streaming answer every Engine.Checkpoint while its
// text changes, and otherwise writes a heartbeat at least every
// session.HeartbeatEvery (so other processes see the turn is alive), on a
// goroutine of its own: neither a pause of the provider nor an editor slow
// to take the deltas (ev.Delta blocks on a full pipe) holds a checkpoint
// up (found by the crash test). It starts once the answer's row exists
// (created, then ready reports how that went). set hands it the text so
// far; stop ends it and waits for a save in progress, so the final state
// is always written after the last checkpoint. When the row is gone (the
// session was deleted) it calls gone once and stops.
func (e *Engine) checkpoints(ctx context.Context, answer *session.Message, created <-chan struct{}, ready func() error, gone func()) (set func(string), stop func()) {
	every := e.Checkpoint
	if every <= 0 {
		every = DefaultCheckpoint
	}
	var mu sync.Mutex
	latest := ""
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-quit:
			return
		case <-created:
		}
		if ready() != nil {
			return
		}
		var pc panics.Catcher
		pc.Try(func() {
			saved := 0 // the text only grows
			lastWrite := time.Now()
			tick := time.NewTimer(min(every, session.HeartbeatEvery))
			defer tick.Stop()
			for {
				select {
				case <-quit:
					return
				case <-tick.C:
				}
				if ctx.Err() != nil {
					return // the turn is ending; its final state is written by Run
				}
				mu.Lock()
				text := latest
				mu.Unlock()
				var err error
				switch {
				case len(text) != saved && time.Since(lastWrite) >= every*9/10:
					err = e.Store.UpdateMessage(ctx, answer.ID, text, session.StatusStreaming, nil)
					saved, lastWrite = len(text), time.Now()
				case time.Since(lastWrite) >= session.HeartbeatEvery:
					err = e.Store.Heartbeat(ctx, answer.ID)
					lastWrite = time.Now()
				}
				if errors.Is(err, session.ErrNotFound) {
					gone()
					return
				}
				if err != nil && ctx.Err() == nil {
					e.Log.Warn("checkpoint failed", "err", err)
				}
				// A whole interval after this save ended: a slow save (a
				// long answer) never runs back to back with the next.
				tick.Reset(min(every, session.HeartbeatEvery))
			}
		})
		if r := pc.Recovered(); r != nil {
			e.Log.Error("checkpoints panicked", "panic", r.Value)
		}
	}()
	set = func(text string) {
		mu.Lock()
		latest = text
		mu.Unlock()
	}
	stop = func() {
		select {
		case <-quit:
		default:
			close(quit)
		}
		<-done
	}
	return set, stop
}

func retryable(err error) bool {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	switch {
	case errors.As(err, &apiErr):
		return apiErr.HTTPStatusCode == 429 || apiErr.HTTPStatusCode >= 500
	case errors.As(err, &reqErr):
		return reqErr.HTTPStatusCode == 429 || reqErr.HTTPStatusCode >= 500
	}
	return false
}

// describe turns a provider error into a message a person can act on;
// started says whether a stream had begun.
func describe(err error, p Resolved, started bool) error {
	return redactedError{describeRaw(err, p, started), p.APIKey()}
}

// redactedError hides the API key in a provider's error text: some
// proxies echo the key they were given in their error bodies, and the text
// goes to the editor, the logs and the stored answer.
type redactedError struct {
	err error
	key string
}

func (r redactedError) Error() string {
	msg := r.err.Error()
	if len(r.key) >= 8 {
		msg = strings.ReplaceAll(msg, r.key, "[API key]")
	}
	return msg
}

func (r redactedError) Unwrap() error { return r.err }

func describeRaw(err error, p Resolved, started bool) error {
	status := 0
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	msg := err.Error()
	if errors.As(err, &apiErr) {
		status, msg = apiErr.HTTPStatusCode, apiErr.Message
	} else if errors.As(err, &reqErr) {
		status = reqErr.HTTPStatusCode
	}
	keyEnv := p.APIKeyEnv
	if keyEnv == "" {
		keyEnv = "OPENAI_API_KEY"
	}
	switch {
	case status == 401 || status == 403:
		return fmt.Errorf("the provider at %s refused the API key (HTTP %d): check %s (%s)", p.BaseURL, status, keyEnv, msg)
	case status == 404:
		return fmt.Errorf("the provider at %s does not know model %q or the URL is wrong (HTTP 404): %s", p.BaseURL, p.Model, msg)
	case status == 429:
		return fmt.Errorf("the provider at %s is rate limiting (HTTP 429) and retries did not help; try again later: %s", p.BaseURL, msg)
	case status >= 500:
		return fmt.Errorf("the provider at %s failed (HTTP %d): %s", p.BaseURL, status, msg)
	case status != 0:
		return fmt.Errorf("the provider at %s answered HTTP %d: %s", p.BaseURL, status, msg)
	}
	if started {
		return fmt.Errorf("the stream from %s broke: %v", p.BaseURL, err)
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		err = urlErr.Err // "Post URL: " says nothing the message does not
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) {
		return fmt.Errorf("could not reach the provider at %s (is it running, and is the URL right?): %v", p.BaseURL, err)
	}
	return fmt.Errorf("the request to the provider at %s failed: %v", p.BaseURL, err)
}

func (e *Engine) background() context.Context {
	e.bgOnce.Do(func() { e.bgCtx, e.bgCancel = context.WithCancel(context.Background()) })
	return e.bgCtx
}

// Close cancels background jobs and waits for them.
func (e *Engine) Close() {
	e.background()
	e.bgCancel()
	e.bg.Wait()
}

// nameLater asks the model for a better title, once per session, in the
// background: from the session's first user message and its first complete
// answer, so a failed first turn does not move the request to a later
// message. It waits for a complete answer, records that the title was asked
// for (Meta.TitleRequested), and replaces only an "auto" title.
func (e *Engine) nameLater(t Turn, ev Events) {
	ctx := e.background()
	s, err := e.Store.Get(ctx, t.SessionID)
	if err != nil || s.TitleSource != session.TitleAuto || s.Meta.TitleRequested {
		return
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		var pc panics.Catcher
		pc.Try(func() {
			first, answer, err := e.Store.FirstExchange(ctx, t.SessionID)
			if err != nil || first == "" || answer == "" {
				return // no complete answer yet: a later turn asks
			}
			if asked, err := e.Store.MarkTitleRequested(ctx, t.SessionID); err != nil || !asked {
				return
			}
			title, err := e.suggestTitle(ctx, t.Provider, first, answer)
			if err != nil {
				e.Log.Info("title suggestion failed; keeping the title", "session", t.SessionID, "err", err)
				return
			}
			changed, err := e.Store.SetTitleIfAuto(ctx, t.SessionID, title)
			if err != nil || !changed {
				return
			}
			if s, err := e.Store.Get(ctx, t.SessionID); err == nil {
				ev.TitleChanged(s)
			}
		})
		if r := pc.Recovered(); r != nil {
			e.Log.Error("title job panicked", "panic", r.Value)
		}
	}()
}

// RegenerateTitle asks the model for a title from the session's first user
// message and first complete answer and sets it (source "model"), even over
// a user's title.
func (e *Engine) RegenerateTitle(ctx context.Context, sessionID string, p Resolved) (*session.Session, error) {
	first, answer, err := e.Store.FirstExchange(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	if first == "" {
		return nil, fmt.Errorf("%w: the session has no message to name it from", session.ErrInvalid)
	}
	title, err := e.suggestTitle(ctx, p, first, answer)
	if err != nil {
		return nil, fmt.Errorf("the title request failed; the title is unchanged: %w", err)
	}
	return e.Store.Rename(ctx, sessionID, title, session.TitleModel)
}

// suggestTitle asks p's title model for a title of the conversation that
// first and answer open.
func (e *Engine) suggestTitle(ctx context.Context, p Resolved, first, answer string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := e.client(p, nil)
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: p.TitleModel,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "Reply with a 3 to 7 word title for this conversation. No quotes, no trailing punctuation."},
			{Role: openai.ChatMessageRoleUser, Content: titleInput(first, answer)},
		},
	})
	if err != nil {
		return "", describe(err, p, false)
	}
	if len(resp.Choices) == 0 {
		return "", errors.New("no title in the answer")
	}
	title := strings.Trim(strings.TrimSpace(resp.Choices[0].Message.Content), "\"'.")
	if title == "" || len(strings.Fields(title)) > 12 {
		return "", fmt.Errorf("unusable title %q", title)
	}
	return title, nil
}

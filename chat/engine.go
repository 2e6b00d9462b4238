package chat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
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
}

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
	running map[string]bool
	sent    map[string]map[string]string // session → path → content last sent
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
}

// Result is the end of a turn.
type Result struct {
	SessionID    string
	MessageID    int64
	Text         string
	FinishReason string // stop, length, cancelled, error
	Usage        session.Usage
}

// Finish reasons.
const (
	FinishStop      = "stop"
	FinishLength    = "length"
	FinishCancelled = "cancelled"
	FinishError     = "error"
)

func (e *Engine) claim(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.running == nil {
		e.running = map[string]bool{}
	}
	if e.running[id] {
		return false
	}
	e.running[id] = true
	return true
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
	if !e.claim(t.SessionID) {
		return nil, ErrBusy
	}
	defer e.release(t.SessionID)
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
	messages, err := e.buildMessages(ctx, t, tools)
	if err != nil {
		return nil, err
	}

	res := &Result{SessionID: t.SessionID}
	var all strings.Builder
	var streamErr error
	for round := 0; ; round++ {
		// The answer's row is created while the request goes out: the
		// insert overlaps the provider's time to first byte instead of
		// adding to it. Its first delta waits for the row (ready), so
		// nothing reaches the editor that a checkpoint could not save.
		answer := &session.Message{SessionID: t.SessionID, Role: session.RoleAssistant, Status: session.StatusStreaming}
		created := make(chan error, 1)
		go func() { created <- e.Store.AppendMessage(ctx, answer) }()
		ready := sync.OnceValue(func() error { return <-created })
		withTools := round < MaxToolRounds
		text, finish, usage, calls, err := e.stream(ctx, t.Provider, messages, answer, ready, ev, withTools)
		if cerr := ready(); cerr != nil {
			return nil, cerr
		}
		res.MessageID = answer.ID
		all.WriteString(text)
		res.Usage.PromptTokens += usage.PromptTokens
		res.Usage.CompletionTokens += usage.CompletionTokens
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
		// Save the final state even when ctx is cancelled.
		saveCtx := context.WithoutCancel(ctx)
		if uerr := e.Store.UpdateMessage(saveCtx, answer.ID, text, status, &usage); uerr != nil {
			e.Log.Error("saving the answer failed", "session", t.SessionID, "err", uerr)
		}
		if err != nil || len(calls) == 0 {
			streamErr = err
			break
		}
		// Tool round: record the calls, run them, and go on.
		raw, _ := json.Marshal(storedCalls(calls))
		if err := e.Store.SetToolCalls(saveCtx, answer.ID, raw); err != nil {
			return nil, err
		}
		messages = append(messages, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: text, ToolCalls: calls})
		for _, c := range calls {
			out := tools.run(ctx, c.Function.Name, c.Function.Arguments)
			tm := &session.Message{SessionID: t.SessionID, Role: session.RoleTool, Content: out, ToolCallID: c.ID}
			if err := e.Store.AppendMessage(saveCtx, tm); err != nil {
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
			res.FinishReason = FinishStop
			break
		}
	}
	res.Text = all.String()
	if streamErr == nil {
		e.nameLater(t, ev)
	}
	return res, streamErr
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

// buildMessages gathers the session's state and renders the model input;
// guard decides which relevant files may be read.
func (e *Engine) buildMessages(ctx context.Context, t Turn, guard *toolEnv) ([]openai.ChatCompletionMessage, error) {
	in := prompts.Input{Resumed: t.Resumed, Candidates: t.Candidates}
	if names, err := e.Store.ListFiles(ctx, t.SessionID, "sources"); err != nil {
		e.Log.Warn("listing session files failed", "session", t.SessionID, "err", err)
	} else {
		in.SessionFiles = names
	}
	sets, err := e.Store.Context(ctx, t.SessionID)
	if err != nil {
		return nil, err
	}
	in.Context = sets
	paths := append(append([]string(nil), sets[prompts.SetFiles]...), t.Files...)
	seen := map[string]bool{}
	e.mu.Lock()
	if e.sent == nil {
		e.sent = map[string]map[string]string{}
	}
	last := e.sent[t.SessionID]
	if last == nil {
		last = map[string]string{}
		e.sent[t.SessionID] = last
	}
	e.mu.Unlock()
	for _, p := range paths {
		if seen[p] {
			continue
		}
		seen[p] = true
		if !guard.allowed(p) {
			// Added by the model and outside the workspace: never sent.
			in.Withheld = append(in.Withheld, p)
			continue
		}
		f := prompts.File{Path: p}
		if text, ok := e.Buffers.TextByPath(p); ok {
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
			in.Withheld = append(in.Withheld, p)
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
	system := prompts.System(in)

	history, err := e.Store.Messages(ctx, t.SessionID)
	if err != nil {
		return nil, err
	}
	// The last two stored messages are this turn's user message and nothing
	// else yet; the new message is always kept.
	newMsg := openai.ChatCompletionMessage{Role: openai.ChatMessageRoleUser, Content: t.Message}
	budget := window - counter.Count(system) - counter.Count(t.Message)
	var kept []openai.ChatCompletionMessage
	for i := len(history) - 2; i >= 0; i-- {
		m := history[i]
		if m.Role != session.RoleUser && m.Role != session.RoleAssistant || m.Content == "" {
			continue
		}
		cost := counter.Count(m.Content) + 4
		if cost > budget {
			break // oldest dropped first
		}
		budget -= cost
		kept = append(kept, openai.ChatCompletionMessage{Role: string(m.Role), Content: m.Content})
	}
	out := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}}
	for i := len(kept) - 1; i >= 0; i-- {
		out = append(out, kept[i])
	}
	return append(out, newMsg), nil
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
func (e *Engine) stream(ctx context.Context, p Resolved, messages []openai.ChatCompletionMessage, answer *session.Message, ready func() error, ev Events, withTools bool) (string, string, session.Usage, []openai.ToolCall, error) {
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
		return "", "", usage, nil, describe(err, p)
	}
	defer stream.Close()

	stall := e.Stall
	if stall <= 0 {
		stall = 90 * time.Second
	}
	errStalled := fmt.Errorf("the provider sent nothing for %s; the answer so far is kept", stall)
	timer := time.AfterFunc(stall, func() { cancelStream(errStalled) })
	defer timer.Stop()

	every := e.Checkpoint
	if every <= 0 {
		every = DefaultCheckpoint
	}
	// The answer so far is saved by its own goroutine, so neither a pause
	// of the provider nor an editor slow to take the deltas (ev.Delta
	// blocks on a full pipe) holds a checkpoint up: saving from this loop
	// only when a chunk arrived left the text before a pause unsaved until
	// the pause ended (found by the crash test). It is stopped before
	// stream returns, so the final state is always written after the last
	// checkpoint.
	checkpoint, stopCheckpoints := e.checkpoints(ctx, answer, every)
	defer stopCheckpoints()
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
			return text.String(), finish, usage, nil, describe(err, p)
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

// checkpoints saves a streaming answer every interval while its text
// changes, on a goroutine of its own. set hands it the text so far (only
// after the answer's row exists: its ID is read at the first save); stop
// ends it and waits for a save in progress.
func (e *Engine) checkpoints(ctx context.Context, answer *session.Message, every time.Duration) (set func(string), stop func()) {
	var mu sync.Mutex
	latest := ""
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var pc panics.Catcher
		pc.Try(func() {
			saved := 0 // the text only grows
			tick := time.NewTimer(every)
			defer tick.Stop()
			for {
				select {
				case <-quit:
					return
				case <-tick.C:
				}
				mu.Lock()
				text := latest
				mu.Unlock()
				if len(text) != saved {
					if err := e.Store.UpdateMessage(ctx, answer.ID, text, session.StatusStreaming, nil); err != nil {
						e.Log.Warn("checkpoint failed", "err", err)
					}
					saved = len(text)
				}
				// A whole interval after this save ended: a slow save (a
				// long answer) never runs back to back with the next.
				tick.Reset(every)
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
		close(quit)
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

// describe turns a provider error into a message a person can act on.
func describe(err error, p Resolved) error {
	return redactedError{describeRaw(err, p), p.APIKey()}
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

func describeRaw(err error, p Resolved) error {
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
	return fmt.Errorf("the stream from %s broke: %v", p.BaseURL, err)
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

// nameLater asks the model for a better title after the first answer,
// in the background; it replaces only an "auto" title.
func (e *Engine) nameLater(t Turn, ev Events) {
	ctx := e.background()
	s, err := e.Store.Get(ctx, t.SessionID)
	if err != nil || s.TitleSource != session.TitleAuto {
		return
	}
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		var pc panics.Catcher
		pc.Try(func() {
			title, err := e.suggestTitle(ctx, t)
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
// message and sets it (source "model") unless the user named the session.
func (e *Engine) RegenerateTitle(ctx context.Context, sessionID string, p Resolved) (*session.Session, error) {
	msgs, err := e.Store.Messages(ctx, sessionID)
	if err != nil {
		return nil, err
	}
	first := ""
	for _, m := range msgs {
		if m.Role == session.RoleUser {
			first = m.Content
			break
		}
	}
	if first == "" {
		return nil, fmt.Errorf("%w: the session has no message to name it from", session.ErrInvalid)
	}
	title, err := e.suggestTitle(ctx, Turn{SessionID: sessionID, Message: first, Provider: p})
	if err != nil {
		return nil, fmt.Errorf("the title request failed; the title is unchanged: %w", err)
	}
	return e.Store.Rename(ctx, sessionID, title, session.TitleModel)
}

func (e *Engine) suggestTitle(ctx context.Context, t Turn) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	client := e.client(t.Provider, nil)
	resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{
		Model: t.Provider.TitleModel,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: "Reply with a 3 to 7 word title for this conversation. No quotes, no trailing punctuation."},
			{Role: openai.ChatMessageRoleUser, Content: t.Message},
		},
	})
	if err != nil {
		return "", err
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

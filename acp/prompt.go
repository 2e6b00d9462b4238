package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/api"
	"github.com/ctxls/ctxls/service"
)

// Prompt runs one turn: text blocks are the message, resource blocks (the
// editor's text, possibly unsaved) and resource_link blocks (file URIs) are
// the turn's files. A slash command runs in the daemon instead. The answer
// streams as agent_message_chunk; the stop reason says how it ended.
func (a *Agent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, err := a.opened(ctx, p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	in, err := decodePrompt(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	if strings.TrimSpace(in.text) == "" && len(in.images) == 0 {
		return sdk.PromptResponse{}, invalid("the prompt has no text")
	}
	if a.runSlash(ctx, s, in.text) {
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	}
	// The SDK cancels a session's running prompt when a new one arrives;
	// wait for it to end so the new turn does not find the session busy.
	a.waitIdle(s)

	t, err := a.svc.StartTurn(ctx, &api.ChatArgs{SessionID: s.id, Message: in.text, Files: in.files, Images: in.images}, service.TurnOptions{
		Roots: []string{s.cwd}, Buffers: a.buffers(ctx, s.id, in.embedded), WriteFile: a.writer(s.id),
	})
	if err != nil {
		return sdk.PromptResponse{}, rpcError(err)
	}
	defer t.Abandon() // a no-op once the stream was read to its end
	done := make(chan struct{})
	a.mu.Lock()
	s.turn, s.done = t, done
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		if s.turn == t {
			s.turn = nil
		}
		a.mu.Unlock()
		close(done)
	}()

	return a.response(a.relay(ctx, s, t))
}

// relay sends a turn's events to the client as session updates, and
// returns the event it ended with.
func (a *Agent) relay(ctx context.Context, s *openSession, t *service.Turn) service.Event {
	var final service.Event
	for ev := range t.Events() {
		switch ev := ev.(type) {
		case service.TextDelta:
			a.send(ctx, s.id, sdk.UpdateAgentMessageText(ev.Text))
		case service.ToolStarted:
			u, _ := toolUpdate(ev)
			a.send(ctx, s.id, u)
			a.shownCalls.Shown(s.id, ev.Call.ID)
		case service.ToolFinished:
			u, _ := toolUpdate(ev)
			if term := a.terminals.take(ev.Call.ID); term != "" && u.ToolCallUpdate != nil {
				// Ran in the client's terminal: the call keeps showing it.
				u.ToolCallUpdate.Content = []sdk.ToolCallContent{sdk.ToolTerminalRef(term)}
			}
			a.send(ctx, s.id, u)
			a.shownCalls.Ended(s.id, ev.Call.ID)
		case service.ToolAllowed, service.ToolProgress, service.Activity, service.EditProposed:
			if u, ok := toolUpdate(ev); ok {
				a.send(ctx, s.id, u)
			}
		case service.PlanChanged:
			a.send(ctx, s.id, planUpdate(service.PlanParams(ev).Entries))
		case service.TokenUsage:
			a.send(ctx, s.id, sdk.SessionUpdate{UsageUpdate: &sdk.SessionUsageUpdate{
				SessionUpdate: "usage_update", Size: ev.Window, Used: ev.Usage.PromptTokens + ev.Usage.CompletionTokens,
			}})
		case service.Done, service.Cancelled, service.Failed:
			final = ev
		}
	}
	if d, ok := final.(service.Done); ok && len(d.Result.Edited) > 0 {
		a.send(ctx, s.id, sdk.UpdateAgentMessageText(fmt.Sprintf("\n\n_Changed: %s_", strings.Join(d.Result.Edited, ", "))))
	}
	return final
}

// response is the prompt's response to the turn's last event.
func (a *Agent) response(final service.Event) (sdk.PromptResponse, error) {
	switch f := final.(type) {
	case service.Done:
		r := f.Result
		reason := sdk.StopReasonEndTurn
		switch {
		case r.ToolLimit:
			reason = sdk.StopReasonMaxTurnRequests
		case r.FinishReason == api.FinishLength:
			reason = sdk.StopReasonMaxTokens
		}
		return sdk.PromptResponse{StopReason: reason, Usage: usageOf(r.Usage.PromptTokens, r.Usage.CompletionTokens, r.Usage.CachedTokens)}, nil
	case service.Cancelled:
		var u *sdk.Usage
		if f.Result != nil {
			u = usageOf(f.Result.Usage.PromptTokens, f.Result.Usage.CompletionTokens, f.Result.Usage.CachedTokens)
		}
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled, Usage: u}, nil
	case service.Failed:
		return sdk.PromptResponse{}, rpcError(f.Err)
	}
	return sdk.PromptResponse{}, rpcError(fmt.Errorf("the turn ended without a result"))
}

// Cancel stops the session's running turn. The SDK has already cancelled
// the prompt's context; this covers a turn started by another path.
func (a *Agent) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	a.mu.Lock()
	s := a.open[string(p.SessionId)]
	var t *service.Turn
	if s != nil {
		t = s.turn
	}
	a.mu.Unlock()
	if t != nil {
		t.Cancel()
	}
	return nil
}

// waitIdle waits (a little) for the session's previous turn to end.
func (a *Agent) waitIdle(s *openSession) {
	a.mu.Lock()
	done := s.done
	running := s.turn != nil
	a.mu.Unlock()
	if !running {
		return
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

func usageOf(prompt, completion, cached int) *sdk.Usage {
	u := &sdk.Usage{InputTokens: prompt, OutputTokens: completion, TotalTokens: prompt + completion}
	if cached > 0 {
		u.CachedReadTokens = &cached
	}
	return u
}

// promptInput is a decoded prompt.
type promptInput struct {
	text     string
	files    []string          // file URIs and paths for the turn
	embedded map[string]string // path → the editor's text
	images   []string          // data URLs
}

func decodePrompt(blocks []sdk.ContentBlock) (*promptInput, error) {
	in := &promptInput{embedded: map[string]string{}}
	var texts []string
	for i, b := range blocks {
		switch {
		case b.Text != nil:
			texts = append(texts, b.Text.Text)
		case b.Resource != nil:
			r := b.Resource.Resource.TextResourceContents
			if r == nil {
				return nil, invalid(fmt.Sprintf("prompt block %d: only text resources are supported", i+1))
			}
			p, ok := service.PathFromURI(r.Uri)
			if !ok {
				// Not a file: its text is part of the message.
				texts = append(texts, fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.Uri, r.Text))
				continue
			}
			in.files = append(in.files, p)
			in.embedded[p] = r.Text
		case b.ResourceLink != nil:
			p, ok := service.PathFromURI(b.ResourceLink.Uri)
			if !ok {
				texts = append(texts, fmt.Sprintf("[%s](%s)", b.ResourceLink.Name, b.ResourceLink.Uri))
				continue
			}
			in.files = append(in.files, p)
		case b.Image != nil:
			// Checked and stored by the service (service.StartTurn).
			in.images = append(in.images, "data:"+b.Image.MimeType+";base64,"+b.Image.Data)
		case b.Audio != nil:
			return nil, invalid(fmt.Sprintf("prompt block %d: audio is not supported (promptCapabilities says so)", i+1))
		}
	}
	in.text = strings.Join(texts, "\n\n")
	return in, nil
}

// buffers is where a turn reads the editor's text of a file: the prompt's
// embedded resources first, then the client's fs/read_text_file when it
// offers it, then (returning false) the disk. Answers are kept for the
// turn, so a file is asked for once.
func (a *Agent) buffers(ctx context.Context, id string, embedded map[string]string) *turnBuffers {
	a.mu.Lock()
	read := a.caps.Fs.ReadTextFile
	a.mu.Unlock()
	return &turnBuffers{a: a, ctx: ctx, id: id, known: embedded, read: read}
}

type turnBuffers struct {
	a     *Agent
	ctx   context.Context
	id    string
	read  bool
	mu    sync.Mutex
	known map[string]string
	asked map[string]bool
}

func (b *turnBuffers) TextByPath(path string) (string, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if text, ok := b.known[path]; ok {
		return text, true
	}
	if !b.read || b.asked[path] {
		return "", false
	}
	if b.asked == nil {
		b.asked = map[string]bool{}
	}
	b.asked[path] = true
	text, err := b.a.readClientFile(b.ctx, b.id, path)
	if err != nil {
		b.a.log.Info("fs/read_text_file failed; reading the disk", "path", path, "err", err)
		return "", false
	}
	b.known[path] = text
	return text, true
}

// EachText calls fn with the texts the turn knows (its embedded files and
// those read from the client), for a search of the workspace: the client
// is not asked for others.
func (b *turnBuffers) EachText(fn func(path, text string) bool) {
	b.mu.Lock()
	known := maps.Clone(b.known)
	b.mu.Unlock()
	for p, t := range known {
		if !fn(p, t) {
			return
		}
	}
}

// readClientFile reads a file as the client has it (fs/read_text_file: its
// buffer, unsaved edits included), within 5 s.
func (a *Agent) readClientFile(ctx context.Context, sessionID, path string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := a.conn.ReadTextFile(ctx, sdk.ReadTextFileRequest{SessionId: sdk.SessionId(sessionID), Path: path})
	if err != nil {
		return "", err
	}
	return resp.Content, nil
}

// writer is how the model's output files are written: through the
// client's fs/write_text_file when it offers it (the editor then knows the
// file changed), else nil (the store writes to the disk). The store has
// already checked that the path is inside the session folder.
func (a *Agent) writer(id string) func(ctx context.Context, path, content string) error {
	a.mu.Lock()
	write := a.caps.Fs.WriteTextFile
	a.mu.Unlock()
	if !write {
		return nil
	}
	return func(ctx context.Context, path, content string) error {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		_, err := a.conn.WriteTextFile(ctx, sdk.WriteTextFileRequest{SessionId: sdk.SessionId(id), Path: path, Content: content})
		return err
	}
}

// toolCallTitle is a call's title: the tool (an MCP server's: "server ·
// tool") and what it works on (a path, a context set, a search pattern).
// in is the call's arguments, decoded.
func toolCallTitle(c service.ToolCall, in map[string]any) string {
	if c.Server != "" {
		return c.Server + " · " + cmp.Or(c.Title, c.Tool)
	}
	title := c.Name
	if path, _ := in["path"].(string); path != "" {
		title = c.Name + " " + path
	}
	if set, _ := in["setName"].(string); set != "" {
		title = c.Name + " " + set
	}
	if pattern, _ := in["pattern"].(string); pattern != "" {
		title = c.Name + " " + pattern
	}
	if command, _ := in["command"].(string); command != "" {
		title = c.Name + " " + command
	}
	return title
}

// toolArgs is a call's arguments decoded (nil when they are not an
// object).
func toolArgs(args string) map[string]any {
	var in map[string]any
	_ = json.Unmarshal([]byte(args), &in)
	return in
}

// toolCallStart is the tool_call update for a call of the model's.
func toolCallStart(c service.ToolCall, status sdk.ToolCallStatus) sdk.SessionUpdate {
	id, name, args := c.ID, c.Name, c.Arguments
	kind := sdk.ToolKind(service.KindOf(name))
	switch {
	case c.Server != "" && c.ReadOnly:
		kind = sdk.ToolKindRead
	case c.Server != "":
		kind = sdk.ToolKindOther
	}
	in := toolArgs(args)
	title := toolCallTitle(c, in)
	opts := []sdk.ToolCallStartOpt{sdk.WithStartKind(kind), sdk.WithStartStatus(status)}
	if path, _ := in["path"].(string); path != "" {
		opts = append(opts, sdk.WithStartLocations([]sdk.ToolCallLocation{{Path: path}}))
	}
	if name == "write_file" {
		delete(in, "content") // the file is in the session folder
	}
	if in != nil {
		opts = append(opts, sdk.WithStartRawInput(in))
	}
	return sdk.StartToolCall(sdk.ToolCallId(id), title, opts...)
}

// maxToolOutput bounds the tool output shown in a tool_call_update.
const maxToolOutput = 4 << 10

// toolCallDone is the tool_call_update that ends a call, with ctxls's
// status of it (api.ToolDone, ToolFailed, ToolDeclined, ToolCancelled).
// ACP's ToolCallStatus has no "declined" or "cancelled": those are
// "failed", and _meta.ctxls.status says which.
func toolCallDone(id, output string, end api.ToolStatus, title string) sdk.SessionUpdate {
	status := sdk.ToolCallStatusCompleted
	if end != api.ToolDone {
		status = sdk.ToolCallStatusFailed
	}
	if len(output) > maxToolOutput {
		n := maxToolOutput
		for n > 0 && !utf8.RuneStart(output[n]) {
			n--
		}
		output = output[:n] + fmt.Sprintf("\n[%d more bytes]", len(output)-n)
	}
	opts := []sdk.ToolCallUpdateOpt{sdk.WithUpdateStatus(status), sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(output))})}
	if title != "" {
		opts = append(opts, sdk.WithUpdateTitle(title))
	}
	u := sdk.UpdateToolCall(sdk.ToolCallId(id), opts...)
	if end == api.ToolDeclined || end == api.ToolCancelled {
		u.ToolCallUpdate.Meta = map[string]any{"ctxls": map[string]any{"status": string(end)}}
	}
	return u
}

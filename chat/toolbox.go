package chat

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
	"github.com/ctxls/ctxls/session"
	"github.com/ctxls/ctxls/workspace"
)

// MaxToolRounds bounds the tool calls of one turn.
const MaxToolRounds = 8

// Toolbox is every tool a turn offers the model: ctxls's own, the edit
// tools, the user's MCP servers' (package tool's box). The engine asks for
// its tools once per turn (so their schemas count in the turn's budget) and
// hands it the calls of the tools it offered. A turn without one offers
// no tools.
type Toolbox interface {
	// Tools are the tools to offer. tt.Events reports what it does
	// meanwhile (starting servers); nil in a preview.
	Tools(ctx context.Context, tt *ToolTurn) []openai.Tool
	// Describe says what a name offered by Tools is: the server whose tool
	// it is ("" for ctxls's own) and that tool's name there, and what is
	// known of it. ok is false for a name it did not offer.
	Describe(name string) (server, tool string, info ToolInfo, ok bool)
	// Call runs one call; it emits ToolAllowed once it may run (after
	// asking the user).
	Call(ctx context.Context, tt *ToolTurn, call ToolCall) ToolResult
	// Stored is what is stored of a call's arguments (write_file's content
	// becomes a note of its size: the file is in the session folder).
	Stored(name, arguments string) string
	// Edited are the user's files the turn's calls changed.
	Edited() []string
}

// ToolResult is what became of a tool call: Output is what the model is
// given; Failed, that the tool refused or failed (Output says why);
// Declined, that the user said no; Summary, when set, says the outcome in
// a few words for the user's tool card ("12 matches in 4 files").
type ToolResult struct {
	Output           string
	Failed, Declined bool
	// Cancelled: the call's turn was cancelled while the call waited for
	// the user or ran, and it did not end on its own (set by the turn,
	// never by a toolbox; Failed or Declined may be set too, for what the
	// model is told).
	Cancelled bool
	Summary   string
}

// ToolTurn is what a turn's tools may use: its session, its workspace
// folders and the guard of what the model may read, the editor's text, the
// door's way to write the model's output files, and the turn's events.
type ToolTurn struct {
	SessionID string
	workspace.Guard
	Buffers Buffers
	// WriteFile is Turn.WriteFile (nil: the store writes).
	WriteFile func(ctx context.Context, path, content string) error
	Events    Events
	// KeyEnv is the variable the turn's provider key is read from: a
	// command a tool runs never gets it.
	KeyEnv string
	// Question is the id of the turn's user message once stored (0 for a
	// preview, or when it could not be stored): what the turn's changes to
	// files are kept under, for undo.
	Question func() int64
}

// toolTurn gathers what a turn's tools may use, from what the turn read of
// its session (st; nil for a preview of a first turn).
func (e *Engine) toolTurn(t TurnSpec, st *session.TurnState, ev Events) *ToolTurn {
	tt := &ToolTurn{SessionID: t.SessionID, Buffers: e.buffers(t), WriteFile: t.WriteFile, Events: ev, KeyEnv: t.Provider.KeyEnv()}
	tt.Roots, tt.UserFiles = t.Roots, map[string]bool{}
	folder := ""
	if st != nil {
		folder = st.Session.Folder
		for p, by := range st.AddedBy {
			if by == session.AddedByUser {
				tt.UserFiles[p] = true
			}
		}
	}
	for _, p := range t.Files {
		tt.UserFiles[p] = true
	}
	// The session folder now: a rename during the turn (the user's, or the
	// model's title) moves it.
	tt.Folder = func() string {
		if t.SessionID != "" {
			if s, err := e.Store.Get(context.Background(), t.SessionID); err == nil {
				return s.Folder
			}
		}
		return folder
	}
	return tt
}

// turnTools is the tools a turn offers.
func turnTools(ctx context.Context, t TurnSpec, tt *ToolTurn) []openai.Tool {
	if t.Tools == nil {
		return nil
	}
	return t.Tools.Tools(ctx, tt)
}

// toolTokens is what the tools' names, descriptions and schemas cost.
func toolTokens(tools []openai.Tool, c prompts.Counter) int {
	if len(tools) == 0 {
		return 0
	}
	b, _ := json.Marshal(tools)
	return c.Count(string(b))
}

// CallID is the id ctxls gives the index-th tool call of the answer whose
// message id is answer: unique in its session, where the provider's own
// ids need not be (a local server numbers every turn's calls call_1, …).
// Clients see only this id (ctxls/toolCall, session.show, ACP's
// toolCallId); the provider's is kept beside it (StoredCall.ProviderID)
// and is the one the provider gets back.
func CallID(answer int64, index int) string { return fmt.Sprintf("%d:%d", answer, index) }

// StoredCall is a tool call as a session stores it (the answer's toolCalls):
// OpenAI's shape with ctxls's id (CallID) as its id, the provider's beside
// it. A call stored before ctxls gave ids of its own has no ProviderID: its
// id is the provider's.
type StoredCall struct {
	openai.ToolCall
	ProviderID string `json:"providerId,omitempty"`
}

// providerCall is the call as the provider made it.
func (c StoredCall) providerCall() openai.ToolCall {
	pc := c.ToolCall
	pc.ID = cmp.Or(c.ProviderID, c.ID)
	return pc
}

// withIDs gives a round's calls (as stored, with the provider's ids) the
// ids of ctxls's own.
func withIDs(calls []openai.ToolCall, ids []string) []StoredCall {
	out := make([]StoredCall, len(calls))
	for i, c := range calls {
		out[i] = StoredCall{ToolCall: c, ProviderID: c.ID}
		out[i].ID = ids[i]
	}
	return out
}

// storedCalls is what is stored of a round's tool calls (Toolbox.Stored).
func storedCalls(box Toolbox, calls []openai.ToolCall) []openai.ToolCall {
	if box == nil {
		return calls
	}
	out := make([]openai.ToolCall, len(calls))
	for i, c := range calls {
		out[i] = c
		out[i].Function.Arguments = box.Stored(c.Function.Name, c.Function.Arguments)
	}
	return out
}

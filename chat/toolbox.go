package chat

import (
	"context"
	"encoding/json"

	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/prompts"
)

// Toolbox is the tools a turn offers beside ctxls's own: the user's MCP
// servers', which the service provides and guards with the user's
// permission. The engine asks for its tools once per turn (so their
// schemas count in the turn's budget) and hands it the calls of the tools
// it offered.
type Toolbox interface {
	// Tools are the tools to offer; names must not clash with ctxls's own
	// (the engine drops one that does). ev reports what it does meanwhile
	// (starting servers).
	Tools(ctx context.Context, ev Events) []openai.Tool
	// Describe says which server's tool a name offered by Tools is.
	Describe(name string) (server, tool string, info ToolInfo, ok bool)
	// Call runs one call; it emits ToolAllowed once it may run (after
	// asking the user), and says whether the call failed or the user
	// declined it. out is what the model is given.
	Call(ctx context.Context, sessionID string, call ToolCall, ev Events) (out string, failed, declined bool)
	// Edited are the user's files the turn's calls changed.
	Edited() []string
}

// turnTools is the tools a turn offers: ctxls's own, then its toolbox's.
func turnTools(ctx context.Context, t Turn, ev Events) []openai.Tool {
	if t.Tools == nil {
		return toolDefs
	}
	tools := append([]openai.Tool{}, toolDefs...)
	own := map[string]bool{}
	for _, d := range toolDefs {
		own[d.Function.Name] = true
	}
	for _, d := range t.Tools.Tools(ctx, ev) {
		if d.Function != nil && !own[d.Function.Name] {
			tools = append(tools, d)
		}
	}
	return tools
}

// toolTokens is what the tools' names, descriptions and schemas cost.
func toolTokens(tools []openai.Tool, c prompts.Counter) int {
	if len(tools) == 0 {
		return 0
	}
	b, _ := json.Marshal(tools)
	return c.Count(string(b))
}

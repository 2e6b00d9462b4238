package tool

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/ctxls/ctxls/chat"
	"github.com/ctxls/ctxls/session"
)

// The session's relevant context: named sets of files and other items the
// model keeps with set_relevant_context and reads with get_relevant_context.

type setContextArgs struct {
	SetName string   `json:"setName" jsonschema:"files, applet, endpoints, ports, or a custom name"`
	Items   []string `json:"items"`
	Mode    string   `json:"mode,omitempty" jsonschema:"replace (default) or merge"`
}

var setContextTool = define(Tool{
	Name:        "set_relevant_context",
	Kind:        "think",
	Description: "Set or extend one named set of the session's relevant context (files, applet, endpoints, ports, or another name). At most 10 items per set and 50 in all.",
}, map[string][]string{"mode": {"replace", "merge"}}, func(ctx context.Context, c *Call, a setContextArgs) (string, error) {
	c.emit(chat.Activity{Message: fmt.Sprintf("updating the %s context", a.SetName)})
	ch, err := c.store().UpdateContext(ctx, c.TT.SessionID, a.SetName, a.Items, session.Mode(a.Mode), session.AddedByModel, c.TT.Roots)
	if err != nil {
		return "", err
	}
	c.emit(chat.ContextChanged{SessionID: c.TT.SessionID, Change: ch})
	b, _ := json.Marshal(map[string]any{"setName": ch.SetName, "items": ch.Items, "warnings": ch.Warnings})
	return string(b), nil
})

type getContextArgs struct {
	SetName string `json:"setName,omitempty"`
}

var getContextTool = define(Tool{
	Name:        "get_relevant_context",
	Kind:        "think",
	Description: "Read the session's relevant context: all sets as an object of set name to items, or the items of the one named as a list ([] for a set that does not exist).",
	ReadOnly:    true,
}, nil, func(ctx context.Context, c *Call, a getContextArgs) (string, error) {
	sets, err := c.store().Context(ctx, c.TT.SessionID)
	if err != nil {
		return "", err
	}
	if a.SetName != "" {
		b, _ := json.Marshal(append([]string{}, sets[a.SetName]...)) // [] for a set that does not exist
		return string(b), nil
	}
	if len(sets) == 0 {
		return "No context stored for this session", nil
	}
	b, _ := json.Marshal(sets)
	return string(b), nil
})

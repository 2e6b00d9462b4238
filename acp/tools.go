package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/ctxls/ctxls/service"
)

// mcpCapabilities: servers over stdio (every agent's) and streamable HTTP;
// not the deprecated SSE transport, nor ACP-carried servers.
var mcpCapabilities = sdk.McpCapabilities{Http: true}

// useMCPServers gives a session the MCP servers its client sent with
// session/new, load or resume, in the "mcpServers" format the service
// reads; a server it cannot use is logged here and told the user in the
// session's next turn.
func (a *Agent) useMCPServers(id string, list []sdk.McpServer) {
	servers := map[string]json.RawMessage{}
	var problems []string
	for i, m := range list {
		var entry any
		name := ""
		switch {
		case m.Stdio != nil:
			name = m.Stdio.Name
			env := map[string]string{}
			for _, e := range m.Stdio.Env {
				env[e.Name] = e.Value
			}
			entry = map[string]any{"command": m.Stdio.Command, "args": nonNilStrings(m.Stdio.Args), "env": env}
		case m.Http != nil:
			name = m.Http.Name
			headers := map[string]string{}
			for _, h := range m.Http.Headers {
				headers[h.Name] = h.Value
			}
			entry = map[string]any{"type": "http", "url": m.Http.Url, "headers": headers}
		case m.Sse != nil:
			problems = append(problems, fmt.Sprintf("server %q: the SSE transport is not supported (mcpCapabilities.sse is false)", m.Sse.Name))
			continue
		default:
			problems = append(problems, fmt.Sprintf("mcpServers[%d]: a transport ctxls does not support", i))
			continue
		}
		raw, _ := json.Marshal(entry)
		servers[name] = raw
	}
	for _, err := range a.svc.Tools().SetSessionMCPServers(id, servers, "the ACP client") {
		problems = append(problems, err.Error())
	}
	names := make([]string, 0, len(servers))
	for n := range servers {
		names = append(names, n)
	}
	a.log.Info("mcp servers of the session", "session", id, "servers", names, "problems", problems)
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// storedCall is a stored tool call as the tool events carry it: an MCP
// tool's name (mcp__SERVER__TOOL) says its server and tool.
func storedCall(id, name, args string) service.ToolCall {
	c := service.ToolCall{ID: id, Name: name, Arguments: args, Tool: name}
	if rest, ok := strings.CutPrefix(name, "mcp__"); ok {
		if server, tool, ok := strings.Cut(rest, "__"); ok {
			c.Server, c.Tool = server, tool
		}
	}
	return c
}

// The permission options, as ACP names their kinds.
var permissionOptions = []sdk.PermissionOption{
	{OptionId: "allow_once", Name: "Allow once", Kind: sdk.PermissionOptionKindAllowOnce},
	{OptionId: "allow_always", Name: "Always allow in this session", Kind: sdk.PermissionOptionKindAllowAlways},
	{OptionId: "reject_once", Name: "Reject", Kind: sdk.PermissionOptionKindRejectOnce},
	{OptionId: "reject_always", Name: "Always reject in this session", Kind: sdk.PermissionOptionKindRejectAlways},
}

// askPermission asks with session/request_permission; the tool call was
// shown pending before (ToolStarted). A cancelled outcome, or a failed
// request, counts as rejected once.
func (a *Agent) askPermission(ctx context.Context, r service.PermissionRequest) (service.Decision, error) {
	start := toolCallStart(r.Call, sdk.ToolCallStatusPending)
	// The prompt's loop shows the call (and every earlier call's end)
	// first.
	a.shownCalls.Wait(ctx, r.SessionID, r.Call.ID)
	tc := start.ToolCall
	title, kind, status := tc.Title, tc.Kind, tc.Status
	resp, err := a.conn.RequestPermission(ctx, sdk.RequestPermissionRequest{
		SessionId: sdk.SessionId(r.SessionID),
		ToolCall:  sdk.ToolCallUpdate{ToolCallId: tc.ToolCallId, Title: &title, Kind: &kind, Status: &status, RawInput: tc.RawInput},
		Options:   permissionOptions,
	})
	if err != nil {
		return service.RejectOnce, err
	}
	if resp.Outcome.Selected == nil {
		return service.RejectOnce, nil // cancelled
	}
	switch resp.Outcome.Selected.OptionId {
	case "allow_once":
		return service.AllowOnce, nil
	case "allow_always":
		return service.AllowAlways, nil
	case "reject_always":
		return service.RejectAlways, nil
	}
	return service.RejectOnce, nil
}

// toolUpdate is a turn's tool event as a session/update.
func toolUpdate(ev service.Event) (sdk.SessionUpdate, bool) {
	switch ev := ev.(type) {
	case service.ToolStarted:
		status := sdk.ToolCallStatusInProgress
		if ev.Pending {
			status = sdk.ToolCallStatusPending
		}
		return toolCallStart(ev.Call, status), true
	case service.ToolAllowed:
		return sdk.UpdateToolCall(sdk.ToolCallId(ev.Call.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress)), true
	case service.ToolProgress:
		return sdk.UpdateToolCall(sdk.ToolCallId(ev.Call.ID), sdk.WithUpdateStatus(sdk.ToolCallStatusInProgress),
			sdk.WithUpdateContent([]sdk.ToolCallContent{sdk.ToolContent(sdk.TextBlock(ev.Message))})), true
	case service.ToolFinished:
		title := ""
		if ev.Summary != "" {
			title = toolCallTitle(ev.Call, toolArgs(ev.Call.Arguments)) + " — " + ev.Summary
		}
		return toolCallDone(ev.Call.ID, ev.Output, service.EndStatus(ev), title), true
	case service.EditProposed:
		content := diffContent(ev.Path, ev.Create, ev.OldText, ev.NewText())
		return sdk.UpdateToolCall(sdk.ToolCallId(ev.Call.ID), sdk.WithUpdateContent([]sdk.ToolCallContent{content}),
			sdk.WithUpdateLocations([]sdk.ToolCallLocation{{Path: ev.Path}})), true
	case service.Activity:
		if ev.Warning {
			return sdk.UpdateAgentMessageText("> ⚠ " + strings.ReplaceAll(ev.Message, "\n", " ") + "\n\n"), true
		}
	}
	return sdk.SessionUpdate{}, false
}

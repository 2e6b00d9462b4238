// Package tool is every tool the model may call, in a room of its own:
// ctxls's own (the session's relevant context, its files, reading the
// workspace, searching it, the editor's diagnostics), the edit tools, and
// the user's MCP servers' tools, with the permission flow and the
// workspace-trust decision they share.
//
// A built-in tool is declared once, in a file of its own (or of its
// family): its name, its description, its input type (the JSON schema the
// model gets is generated from that Go type), whether it only reads, and
// its function; the registry (builtins) lists them. A connection's Box
// holds what the tools need from the door (the permission asker, the edit
// door, the editor's diagnostics, the MCP servers) and a narrow view of the
// store; for each turn it makes a Turn, which implements chat.Toolbox: the
// chat engine offers its tools and hands it the model's calls. The service
// builds the box and keeps the operations (ctxls.mcp.list, …); the doors
// adapt the questions (PermissionRequest, EditRequest) to their protocol.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/sashabaranov/go-openai"

	"github.com/ctxls/ctxls/chat"
)

// A Tool is one of ctxls's built-in tools.
type Tool struct {
	Name        string
	Description string
	// schema is the tool's input schema, generated from its argument type
	// when first asked for (reflection over a dozen types at start-up cost
	// the daemon's first answer milliseconds).
	schema func() json.RawMessage
	// ReadOnly: the tool only reads (the workspace, the session), so it
	// runs without asking.
	ReadOnly bool
	// Harmless: the tool changes only the session's own notes (the plan),
	// nothing on disk, so it is offered in every review mode, off too,
	// and runs without asking.
	Harmless bool
	// Asks: a call may wait for the user (an edit's review) before it
	// runs.
	Asks bool
	// Kind is what kind of call it is, as ACP names kinds: read, edit,
	// search, think, execute or other ("" is other).
	Kind string
	// Offered reports whether a turn offers the tool (nil: every turn).
	Offered func(ctx context.Context, t *TurnTools) bool
	// run decodes the arguments and runs the call.
	run func(ctx context.Context, c *Call, args string) (string, error)
	// stored, when set, is what is stored of a call's arguments.
	stored func(args string) string
}

// Call is one call of a built-in tool: the turn it is made in, and the call.
type Call struct {
	*TurnTools
	TT   *chat.ToolTurn
	Call chat.ToolCall
	// summary says the outcome in a few words for the user's card.
	summary string
}

// Summarize sets what the user's tool card says of the call's outcome.
func (c *Call) Summarize(s string) { c.summary = s }

// emit reports an event of the call's turn.
func (c *Call) emit(ev chat.Event) {
	if c.TT != nil && c.TT.Events != nil {
		c.TT.Events.Emit(ev)
	}
}

// Declined is the error of a call the user declined: its text is what the
// model is told.
type Declined string

func (d Declined) Error() string { return string(d) }

// Refused is the error of a call that ran but whose outcome is to be read
// as a failure with this exact text (no "error: " before it).
type Refused string

func (r Refused) Error() string { return string(r) }

// define declares a tool whose arguments are A: the schema is generated
// from A (field descriptions from `jsonschema:"…"` tags; enums given by
// field name), and the call's JSON arguments are decoded into an A before
// run is called.
func define[A any](t Tool, enums map[string][]string, run func(ctx context.Context, c *Call, a A) (string, error)) Tool {
	t.schema = lazySchema[A](enums)
	t.run = func(ctx context.Context, c *Call, args string) (string, error) {
		var a A
		if strings.TrimSpace(args) != "" {
			if err := json.Unmarshal([]byte(args), &a); err != nil {
				return "", fmt.Errorf("the arguments are not valid JSON: %v", err)
			}
		}
		return run(ctx, c, a)
	}
	return t
}

// lazySchema is schemaFor, made once when first called.
func lazySchema[A any](enums map[string][]string) func() json.RawMessage {
	return sync.OnceValue(func() json.RawMessage { return schemaFor[A](enums) })
}

// schemaFor is A's JSON schema as the model gets it: an object whose
// optional fields (pointers, slices) are of their own type, not also null.
func schemaFor[A any](enums map[string][]string) json.RawMessage {
	s, err := jsonschema.For[A](nil)
	if err != nil {
		panic(fmt.Sprintf("tool: the schema of %s: %v", reflect.TypeFor[A](), err))
	}
	if s.Properties == nil {
		s.Properties = map[string]*jsonschema.Schema{}
	}
	for name, p := range s.Properties {
		if len(p.Types) == 2 && slices.Contains(p.Types, "null") {
			p.Type, p.Types = p.Types[slices.IndexFunc(p.Types, func(t string) bool { return t != "null" })], nil
		}
		for _, e := range enums[name] {
			p.Enum = append(p.Enum, e)
		}
	}
	s.AdditionalProperties = nil
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

// def is the tool as the model is offered it.
func (t *Tool) def() openai.Tool {
	return openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
		Name: t.Name, Description: t.Description, Parameters: t.schema(),
	}}
}

// builtins are ctxls's own tools, in the order the model is offered them.
var builtins = []*Tool{
	&setContextTool, &getContextTool, &readFileTool, &listSessionFilesTool, &writeFileTool,
	&grepTool, &findFilesTool, &listDirectoryTool, &diagnosticsTool,
	&editFileTool, &createFileTool, &updatePlanTool, &runCommandTool,
}

// builtin is the built-in tool named name, or nil.
func builtin(name string) *Tool {
	for _, t := range builtins {
		if t.Name == name {
			return t
		}
	}
	return nil
}

// KindOf is the kind of a built-in tool's call (see Tool.Kind): "other"
// for a name that is not one.
func KindOf(name string) string {
	if t := builtin(name); t != nil && t.Kind != "" {
		return t.Kind
	}
	return "other"
}

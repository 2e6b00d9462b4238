package api

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
)

// The editor clients' protocol bindings are generated from the tables in
// this package, so a command, request or notification declared here reaches
// the VS Code extension (a TypeScript module) and the Neovim plugin (a Lua
// table) without being copied by hand. go test ./api -update
// rewrites them; a test fails when they are stale.
const (
	TypeScriptPath = "editors/vscode/src/generated/protocol.ts"
	LuaPath        = "editors/nvim/lua/ctxls/protocol.lua"
)

// enums are the string types with a closed set of values (built when the
// bindings are generated, not at start-up).
var enums = sync.OnceValue(func() map[reflect.Type][]string {
	return map[reflect.Type][]string{
		reflect.TypeFor[TitleSource](): {string(TitleAuto), string(TitleModel), string(TitleUser)},
		reflect.TypeFor[Role](): {string(RoleSystem), string(RoleUser), string(RoleAssistant),
			string(RoleTool)},
		reflect.TypeFor[Status](): {string(StatusComplete), string(StatusInterrupted), string(StatusCancelled),
			string(StatusError), string(StatusStreaming), string(StatusDeclined)},
		reflect.TypeFor[Visibility]():     {string(VisibilityPrivate), string(VisibilityTeam)},
		reflect.TypeFor[ReviewMode]():     {string(ReviewAsk), string(ReviewAuto), string(ReviewOff)},
		reflect.TypeFor[ReviewDecision](): {string(ReviewAccept), string(ReviewAcceptAll), string(ReviewReject)},
		reflect.TypeFor[QuestionKind]():   {string(QuestionPermission), string(QuestionTrust), string(QuestionReview)},
		reflect.TypeFor[ToolStatus](): {string(ToolPending), string(ToolRunning), string(ToolDone), string(ToolFailed),
			string(ToolDeclined), string(ToolCancelled)},
		reflect.TypeFor[PlanStatus]():   {string(PlanPending), string(PlanInProgress), string(PlanCompleted)},
		reflect.TypeFor[PlanPriority](): {string(PlanHigh), string(PlanMedium), string(PlanLow)},
	}
})

// Name is the identifier a client uses for an ID: "ctxls.session.new" →
// "sessionNew", "ctxls/contextChanged" → "contextChanged".
func Name(id string) string {
	id = strings.TrimPrefix(strings.TrimPrefix(id, "ctxls."), "ctxls/")
	parts := strings.FieldsFunc(id, func(r rune) bool { return r == '.' || r == '/' })
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// snake is Name in snake_case, for Lua.
func snake(id string) string { return separated(id, '_') }

// separated is Name in lower case with sep between words; a run of capitals
// is one word ("storageSoftLimitMB" → "storage_soft_limit_mb").
func separated(id string, sep byte) string {
	var b strings.Builder
	prevUpper := false
	for _, r := range Name(id) {
		if r == '_' || r == '-' { // a value's own separator ("in_progress"): the binding's
			b.WriteByte(sep)
			prevUpper = false
			continue
		}
		upper := unicode.IsUpper(r)
		if upper {
			if !prevUpper {
				b.WriteByte(sep)
			}
			r = unicode.ToLower(r)
		}
		prevUpper = upper
		b.WriteRune(r)
	}
	return b.String()
}

// TypeScript renders the extension's protocol module.
func TypeScript() string {
	g := &tsGen{declared: map[reflect.Type]bool{}}
	var head strings.Builder
	head.WriteString("// Generated from package api by `go test ./api -update`. DO NOT EDIT.\n")
	head.WriteString("// The ctxls protocol for editor clients: command, request and notification\n")
	head.WriteString("// names with their argument and result types. See docs/protocol.md.\n\n")
	fmt.Fprintf(&head, "/** The version every command result carries as `v`. */\nexport const V = %d;\n\n", V)

	var maps strings.Builder
	maps.WriteString("/** Command IDs (workspace/executeCommand), as declared in package api. */\nexport const Commands = {\n")
	for _, c := range Commands {
		fmt.Fprintf(&maps, "  %s: %q,\n", Name(c.ID), c.ID)
	}
	maps.WriteString("} as const;\n\n/** The argument and result type of every command. */\nexport interface CommandTypes {\n")
	for _, c := range Commands {
		fmt.Fprintf(&maps, "  %q: { args: %s; result: %s };\n", c.ID, g.argType(c.Args), g.ref(reflect.TypeOf(c.Result)))
	}
	maps.WriteString("}\n\n/** Requests other than executeCommand. */\nexport const Requests = {\n")
	for _, r := range Requests {
		fmt.Fprintf(&maps, "  %s: %q,\n", Name(r.ID), r.ID)
	}
	maps.WriteString("} as const;\n\nexport interface RequestTypes {\n")
	for _, r := range Requests {
		fmt.Fprintf(&maps, "  %q: { params: %s; result: %s };\n", r.ID, g.argType(r.Args), g.ref(reflect.TypeOf(r.Result)))
	}
	maps.WriteString("}\n\n/** Notifications the server sends. */\nexport const Notifications = {\n")
	for _, n := range Notifications {
		fmt.Fprintf(&maps, "  %s: %q,\n", Name(n.ID), n.ID)
	}
	maps.WriteString("} as const;\n\nexport interface NotificationTypes {\n")
	for _, n := range Notifications {
		fmt.Fprintf(&maps, "  %q: %s;\n", n.ID, g.ref(reflect.TypeOf(n.Result)))
	}
	maps.WriteString("}\n\n/** Requests the server makes of a client that declared it answers them. */\nexport const ServerRequests = {\n")
	for _, r := range ServerRequests {
		fmt.Fprintf(&maps, "  %s: %q,\n", Name(r.ID), r.ID)
	}
	maps.WriteString("} as const;\n\nexport interface ServerRequestTypes {\n")
	for _, r := range ServerRequests {
		fmt.Fprintf(&maps, "  %q: { params: %s; result: %s };\n", r.ID, g.argType(r.Args), g.ref(reflect.TypeOf(r.Result)))
	}
	maps.WriteString("}\n\n/** Notifications the editor sends. */\nexport const ClientNotifications = {\n")
	for _, n := range ClientNotifications {
		fmt.Fprintf(&maps, "  %s: %q,\n", Name(n.ID), n.ID)
	}
	maps.WriteString("} as const;\n\nexport interface ClientNotificationTypes {\n")
	for _, n := range ClientNotifications {
		fmt.Fprintf(&maps, "  %q: %s;\n", n.ID, g.argType(n.Args))
	}
	g.ref(reflect.TypeFor[Provider]())
	g.ref(reflect.TypeFor[InitializationOptions]())
	g.ref(reflect.TypeFor[Settings]())
	fmt.Fprintf(&maps, "}\n\n/** A session folder's subfolders, in the order they are listed. */\nexport const Subfolders = [%s] as const;\n", quoted(Subfolders))
	maps.WriteString("\n/** The kind every error carries in its data (`{kind}`): decide on it, never on the message. */\nexport const ErrorKinds = {\n")
	for _, k := range ErrorKinds {
		fmt.Fprintf(&maps, "  %s: %q,\n", k.Kind, k.Kind)
	}
	maps.WriteString("} as const;\n\nexport type ErrorKind = (typeof ErrorKinds)[keyof typeof ErrorKinds];\n\n/** An error's data. */\nexport interface ErrorData {\n  kind: ErrorKind;\n}\n")
	return head.String() + g.decls.String() + maps.String()
}

type tsGen struct {
	declared map[reflect.Type]bool
	decls    strings.Builder
}

func (g *tsGen) argType(v any) string {
	if v == nil {
		return "Record<string, never>"
	}
	return g.ref(reflect.TypeOf(v))
}

// ref returns the TypeScript for t, declaring named structs and enums.
func (g *tsGen) ref(t reflect.Type) string {
	if t == reflect.TypeFor[time.Time]() {
		return "string"
	}
	if t == reflect.TypeFor[json.RawMessage]() {
		return "unknown"
	}
	if vals, ok := enums()[t]; ok {
		if !g.declared[t] {
			g.declared[t] = true
			quoted := make([]string, len(vals))
			for i, v := range vals {
				quoted[i] = fmt.Sprintf("%q", v)
			}
			fmt.Fprintf(&g.decls, "export type %s = %s;\n\n", t.Name(), strings.Join(quoted, " | "))
		}
		return t.Name()
	}
	switch t.Kind() {
	case reflect.Pointer:
		return g.ref(t.Elem())
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32, reflect.Float64:
		return "number"
	case reflect.Slice:
		return g.ref(t.Elem()) + "[]"
	case reflect.Map:
		return "Record<string, " + g.ref(t.Elem()) + ">"
	case reflect.Struct:
		if !g.declared[t] {
			g.declared[t] = true
			var body strings.Builder
			for _, f := range jsonFields(t) {
				opt := ""
				if f.optional {
					opt = "?"
				}
				typ := f.ts
				if typ == "" {
					typ = g.ref(f.typ)
				}
				fmt.Fprintf(&body, "  %s%s: %s;\n", f.name, opt, typ)
			}
			fmt.Fprintf(&g.decls, "export interface %s {\n%s}\n\n", t.Name(), body.String())
		}
		return t.Name()
	}
	return "unknown"
}

type jsonField struct {
	name     string
	typ      reflect.Type
	optional bool
	ts       string // the ts tag: the field's TypeScript type, when Go's does not say it
}

// jsonFields lists a struct's JSON fields (embedded structs flattened).
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			out = append(out, jsonFields(f.Type)...)
			continue
		}
		if name == "" {
			name = f.Name
		}
		optional := slices.Contains(strings.Split(opts, ","), "omitempty")
		out = append(out, jsonField{name: name, typ: f.Type, optional: optional, ts: f.Tag.Get("ts")})
	}
	return out
}

// Lua renders the plugin's protocol table.
func Lua() string {
	var b strings.Builder
	b.WriteString("-- Generated from package api by `go test ./api -update`. DO NOT EDIT.\n")
	b.WriteString("-- The ctxls protocol's names: commands (workspace/executeCommand), requests and\n")
	b.WriteString("-- notifications. See docs/protocol.md.\nreturn {\n")
	fmt.Fprintf(&b, "  v = %d,\n", V)
	section := func(name string, infos []Info) {
		fmt.Fprintf(&b, "  %s = {\n", name)
		for _, c := range infos {
			fmt.Fprintf(&b, "    %s = %q,\n", snake(c.ID), c.ID)
		}
		b.WriteString("  },\n")
	}
	section("commands", Commands)
	section("requests", Requests)
	section("notifications", Notifications)
	section("server_requests", ServerRequests)
	section("client_notifications", ClientNotifications)
	names := func(section string, t reflect.Type) {
		fmt.Fprintf(&b, "  %s = {\n", section)
		for _, f := range jsonFields(t) {
			fmt.Fprintf(&b, "    %s = %q,\n", snake(f.name), f.name)
		}
		b.WriteString("  },\n")
	}
	names("init_options", reflect.TypeFor[InitializationOptions]())
	names("settings", reflect.TypeFor[Settings]())
	b.WriteString("  -- The values of the protocol's closed string types.\n")
	for _, e := range sortedEnums() {
		fmt.Fprintf(&b, "  %s = {\n", snake(e.name))
		for _, v := range e.values {
			fmt.Fprintf(&b, "    %s = %q,\n", snake(v), v)
		}
		b.WriteString("  },\n")
	}
	b.WriteString("  -- The kind every error carries in its data ({kind}): decide on it, never on the message.\n  error_kinds = {\n")
	for _, k := range ErrorKinds {
		fmt.Fprintf(&b, "    %s = %q,\n", snake(string(k.Kind)), k.Kind)
	}
	b.WriteString("  },\n}\n")
	return b.String()
}

// enumValues is one closed string type: its name with a lower-case first
// letter, and its values.
type enumValues struct {
	name   string
	values []string
}

// sortedEnums are the closed string types, by name.
func sortedEnums() []enumValues {
	var out []enumValues
	for t, vals := range enums() {
		out = append(out, enumValues{strings.ToLower(t.Name()[:1]) + t.Name()[1:], vals})
	}
	slices.SortFunc(out, func(a, b enumValues) int { return strings.Compare(a.name, b.name) })
	return out
}

// quoted is items as a comma-separated list of JSON strings.
func quoted(items []string) string {
	q := make([]string, len(items))
	for i, it := range items {
		q[i] = fmt.Sprintf("%q", it)
	}
	return strings.Join(q, ", ")
}

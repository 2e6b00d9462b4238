package command

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// Reference renders the command and notification reference that
// docs/protocol.md embeds between its GENERATED markers.
func Reference() string {
	var b strings.Builder
	b.WriteString("## Commands\n\n")
	b.WriteString("Every command is sent as `workspace/executeCommand` with exactly one argument, a JSON object; ")
	b.WriteString("unknown fields are rejected. Every result carries `\"v\": 1`.\n\n")
	b.WriteString("| command | summary |\n| --- | --- |\n")
	for _, c := range Commands {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", c.ID, anchor(c.ID), firstSentence(c.Doc))
	}
	for _, c := range Commands {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", c.ID, c.Doc)
		b.WriteString(fieldTable("Argument", reflect.TypeOf(c.Args)))
		fmt.Fprintf(&b, "\nExample:\n\n```json\n%s\n```\n\nResult:\n\n```json\n%s\n```\n",
			indent(fmt.Sprintf(`{"jsonrpc": "2.0", "id": 1, "method": "workspace/executeCommand", "params": {"command": %q, "arguments": [%s]}}`, c.ID, c.ExampleArgs)),
			indent(c.ExampleResult))
	}
	b.WriteString("\n## Notifications from the server\n")
	for _, n := range Notifications {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", n.ID, n.Doc)
		b.WriteString(fieldTable("Param", reflect.TypeOf(n.Result)))
		fmt.Fprintf(&b, "\nExample:\n\n```json\n%s\n```\n",
			indent(fmt.Sprintf(`{"jsonrpc": "2.0", "method": %q, "params": %s}`, n.ID, n.ExampleResult)))
	}
	return b.String()
}

func anchor(id string) string { return strings.ReplaceAll(id, ".", "") }

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		return s[:i+1]
	}
	return s
}

// fieldTable describes a struct's JSON fields.
func fieldTable(kind string, t reflect.Type) string {
	if t == nil || t.NumField() == 0 {
		return "No " + strings.ToLower(kind) + "s: send `{}`.\n"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | type | required |\n| --- | --- | --- |\n", strings.ToLower(kind))
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		required := "yes"
		if strings.Contains(opts, "omitempty") {
			required = "no"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, typeName(f.Type), required)
	}
	return b.String()
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int32, reflect.Int64, reflect.Uint32:
		return "number"
	case reflect.Slice:
		return typeName(t.Elem()) + "[]"
	case reflect.Map:
		return "object of " + typeName(t.Elem())
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Struct:
		if t.Name() == "Time" {
			return "string (RFC 3339)"
		}
		return t.Name()
	}
	return t.String()
}

// indent pretty-prints a JSON example.
func indent(s string) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, []byte(s), "", "  "); err != nil {
		panic(fmt.Sprintf("invalid JSON example %s: %v", s, err))
	}
	return buf.String()
}

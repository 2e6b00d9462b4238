package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/ctxls/ctxls/buffer"
)

// Reference renders the command and notification reference that
// docs/protocol.md embeds between its GENERATED markers.
func Reference() string {
	var b strings.Builder
	b.WriteString("## Error kinds\n\n")
	b.WriteString("Each door maps an error's kind to its codes from this one table (`api.ErrorKinds`): the LSP and ACP ")
	b.WriteString("JSON-RPC error codes (the kind itself is in the error's `data`), and the exit status of a `ctxls` ")
	b.WriteString("subcommand (2 is also a usage mistake). Over ACP a slash command's failure is its reply, with the ")
	b.WriteString("kind in the chunk's `_meta` as `{\"ctxls\": {\"error\": {\"kind\": ...}}}`.\n\n")
	b.WriteString("| kind | when | LSP | ACP | CLI |\n| --- | --- | --- | --- | --- |\n")
	for _, k := range ErrorKinds {
		fmt.Fprintf(&b, "| `%s` | %s | %d | %d | %d |\n", k.Kind, k.Doc, k.LSP, k.ACP, k.CLI)
	}
	b.WriteString("\n## initializationOptions and settings\n\n")
	b.WriteString("What an editor sends as `initialize`'s `initializationOptions` (`InitializationOptions` in the bindings), ")
	b.WriteString("every field optional, and later as `workspace/didChangeConfiguration`'s `settings.ctxls` (`Settings`), ")
	b.WriteString("where an absent field keeps its value and null goes back to the default. `provider` is a Provider: ")
	b.WriteString("`api` (`openai` or `anthropic`), `baseURL`, `model`, `apiKeyEnv`, `titleModel`, `contextWindow`, `maxOutputTokens`.\n\n")
	b.WriteString(fieldTable("Option", reflect.TypeFor[InitializationOptions]()))
	b.WriteString("\n")
	b.WriteString(fieldTable("Setting", reflect.TypeFor[Settings]()))
	b.WriteString("\n## Commands\n\n")
	b.WriteString("Every command is sent as `workspace/executeCommand` with exactly one argument, a JSON object; ")
	b.WriteString("unknown fields are rejected. Every result carries `\"v\": 1`. ")
	b.WriteString("A missing required field, a value of the wrong type or one over the limit its table states is ")
	b.WriteString("answered with error -32602 (InvalidParams, kind `invalidArgument`) naming the field (and the limit).\n\n")
	b.WriteString(limitsText())
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
	b.WriteString("\n## Requests from the server\n")
	for _, r := range ServerRequests {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", r.ID, r.Doc)
		b.WriteString(fieldTable("Param", reflect.TypeOf(r.Args)))
		fmt.Fprintf(&b, "\nExample:\n\n```json\n%s\n```\n\nAnswer:\n\n```json\n%s\n```\n",
			indent(fmt.Sprintf(`{"jsonrpc": "2.0", "id": 7, "method": %q, "params": %s}`, r.ID, r.ExampleArgs)),
			indent(fmt.Sprintf(`{"jsonrpc": "2.0", "id": 7, "result": %s}`, r.ExampleResult)))
	}
	b.WriteString("\n## Notifications from the client\n")
	for _, n := range ClientNotifications {
		fmt.Fprintf(&b, "\n### %s\n\n%s\n\n", n.ID, n.Doc)
		b.WriteString(fieldTable("Param", reflect.TypeOf(n.Args)))
		fmt.Fprintf(&b, "\nExample:\n\n```json\n%s\n```\n",
			indent(fmt.Sprintf(`{"jsonrpc": "2.0", "method": %q, "params": %s}`, n.ID, n.ExampleArgs)))
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
	withLimits := false
	for _, f := range Fields(t) {
		withLimits = withLimits || f.LimitText() != ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | type | required |", strings.ToLower(kind))
	if withLimits {
		b.WriteString(" limit |\n| --- | --- | --- | --- |\n")
	} else {
		b.WriteString("\n| --- | --- | --- |\n")
	}
	for _, f := range Fields(t) {
		if f.Name == "" || f.Name == "-" {
			continue
		}
		required := "no"
		if f.Required {
			required = "yes"
		}
		typ := typeName(f.Type)
		if f.Type == reflect.TypeFor[json.RawMessage]() {
			typ = "any JSON"
			if f.Name == "workDoneToken" {
				typ = "string or integer"
			}
		}
		if f.TS != "" {
			typ = strings.ReplaceAll(f.TS, " | ", " or ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |", f.Name, typ, required)
		if withLimits {
			fmt.Fprintf(&b, " %s |", f.LimitText())
		}
		b.WriteString("\n")
	}
	return b.String()
}

// limitsText states the protocol's limits.
func limitsText() string {
	return fmt.Sprintf(`Limits of the connection:

- A message body over %d MiB (the Content-Length) is skipped without being read into memory: a request
  is answered -32600 (InvalidRequest) with its own id, a notification is dropped with a
  `+"`window/showMessage`"+` warning.
- At most %d requests are worked on or waiting for their answer to be written. At the limit the daemon
  stops reading until an answer has been written, so an editor that does not read its output makes
  the daemon wait, not grow; everything completes once it reads again. (While a request of the
  daemon's own, such as `+"`window/workDoneProgress/create`"+`, is unanswered, it reads on after 10 s.)
- Open documents are held up to %d MiB of text in all (URI, path and 512 bytes per document
  counted too). A `+"`didOpen`"+` or edit past that is refused: the document stays listed as open without
  text (the model reads the file from disk), `+"`ctxls.document.get`"+` says so, and a
  `+"`window/showMessage`"+` warning is shown once until documents are closed. A document URI is at most
  %d KiB.

`, MaxMessageBytes>>20, MaxPendingRequests, MaxOpenBytes>>20, buffer.MaxURIBytes>>10)
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

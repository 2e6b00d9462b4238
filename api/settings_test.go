package api

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseCompactAt(t *testing.T) {
	for raw, want := range map[string]int{``: 0, `null`: 0, `80`: 80, `1`: 1, `100`: 100, `"off"`: CompactOff, `"OFF"`: CompactOff, `"75%"`: 75, `"60"`: 60} {
		if got, err := ParseCompactAt(json.RawMessage(raw)); err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", raw, got, err, want)
		}
	}
	for _, raw := range []string{`0`, `101`, `-5`, `"never"`, `true`, `80.5`, `"80%%"`} {
		if _, err := ParseCompactAt(json.RawMessage(raw)); err == nil || !strings.Contains(err.Error(), "compactAt must be") {
			t.Errorf("%s accepted: %v", raw, err)
		}
	}
}

// vscodeOnly are the VS Code extension's settings the daemon never sees:
// the extension's own.
var vscodeOnly = map[string]string{
	"ctxls.path":           "which ctxls binary the extension starts",
	"ctxls.sendActiveFile": "whether the chat view sends the active editor's file with a question",
}

// notInVSCode are daemon settings the extension does not offer, and why.
var notInVSCode = map[string]string{
	"ctxls.provider.contextWindow":   "the provider's model list or the default; a CLI flag and an initialization option for servers that do not say",
	"ctxls.provider.maxOutputTokens": "as contextWindow",
	"ctxls.workspaceMcpServers":      "the extension sends ctxls.mcpServers' workspace value as it",
}

// TestVSCodeSettingsAgree: the VS Code extension's settings
// (package.json's contributes.configuration, written by hand) and the
// daemon's (Settings and Provider, of which the bindings are generated)
// agree: every daemon setting is a ctxls.* setting of the extension (or
// is listed in notInVSCode with the reason), every extension setting is
// a daemon setting (or is in vscodeOnly), and each has the JSON type of
// the Go field.
func TestVSCodeSettingsAgree(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "editors", "vscode", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Contributes struct {
			Configuration json.RawMessage `json:"configuration"`
		} `json:"contributes"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	type property struct {
		Type    any `json:"type"`
		Default any `json:"default"`
	}
	type section struct {
		Properties map[string]property `json:"properties"`
	}
	var sections []section
	if err := json.Unmarshal(pkg.Contributes.Configuration, &sections); err != nil {
		var one section
		if err := json.Unmarshal(pkg.Contributes.Configuration, &one); err != nil {
			t.Fatal(err)
		}
		sections = []section{one}
	}
	vscode := map[string]property{}
	for _, s := range sections {
		for k, p := range s.Properties {
			vscode[k] = p
		}
	}
	// The daemon's settings, by the name the extension gives them, with
	// the JSON type (from the Go type, or the ts tag's first type).
	daemon := map[string]string{}
	add := func(prefix string, typ reflect.Type) {
		for i := range typ.NumField() {
			f := typ.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "provider" {
				continue
			}
			kind := f.Type
			if kind.Kind() == reflect.Pointer {
				kind = kind.Elem()
			}
			var js string
			switch {
			case f.Tag.Get("ts") != "":
				js, _, _ = strings.Cut(f.Tag.Get("ts"), " ")
				if strings.HasPrefix(js, "Record<") {
					js = "object"
				}
			case kind.Kind() == reflect.Bool:
				js = "boolean"
			case kind.Kind() == reflect.Int:
				js = "number"
			case kind.Kind() == reflect.String:
				js = "string"
			default:
				t.Fatalf("%s: no JSON type for %s", f.Name, kind)
			}
			daemon[prefix+name] = js
		}
	}
	add("ctxls.", reflect.TypeOf(Settings{}))
	add("ctxls.provider.", reflect.TypeOf(Provider{}))
	for name, js := range daemon {
		p, ok := vscode[name]
		if !ok {
			if notInVSCode[name] == "" {
				t.Errorf("the daemon's setting %s is not a setting of the VS Code extension (package.json), nor in notInVSCode", name)
			}
			continue
		}
		types := fmt.Sprint(p.Type)
		if name == "ctxls.compactAt" && types == "string" {
			// "80%" or "off": the string is one of its forms.
		} else if !strings.Contains(types, js) && !(js == "number" && strings.Contains(types, "integer")) {
			t.Errorf("%s: the extension's type %v, the daemon's %s", name, p.Type, js)
		}
	}
	for name := range vscode {
		if _, ok := daemon[name]; !ok && vscodeOnly[name] == "" {
			t.Errorf("the VS Code extension's setting %s is not a daemon setting (Settings, Provider), nor in vscodeOnly", name)
		}
	}
	for name := range notInVSCode {
		if _, ok := daemon[name]; !ok {
			t.Errorf("notInVSCode names %s, which is no daemon setting", name)
		}
	}
	if d, ok := vscode["ctxls.toolPermissionTimeoutSeconds"].Default.(float64); !ok || int(d) != DefaultToolPermissionTimeout {
		t.Errorf("ctxls.toolPermissionTimeoutSeconds defaults to %v in the extension, %d in the daemon", vscode["ctxls.toolPermissionTimeoutSeconds"].Default, DefaultToolPermissionTimeout)
	}
}

package lsp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/ctxls/ctxls/api"
)

// commandFunc runs one command with its raw JSON argument ({} when none was
// given).
type commandFunc func(ctx context.Context, arg json.RawMessage) (any, error)

// typed adapts a handler with a typed argument to a commandFunc: the argument
// is decoded strictly (unknown fields and wrong types are errors a person can
// act on).
func typed[A any](id string, fn func(context.Context, *A) (any, error)) commandFunc {
	return func(ctx context.Context, raw json.RawMessage) (any, error) {
		var a A
		if err := decodeArg(raw, &a); err != nil {
			return nil, invalidParams("%s: %s", id, err)
		}
		return fn(ctx, &a)
	}
}

// commandTable maps every command ID to its handler. A test checks it covers
// api.Commands exactly.
func (s *Server) commandTable() map[string]commandFunc {
	return map[string]commandFunc{
		api.SessionNew:      typed(api.SessionNew, s.sessionNew),
		api.SessionResume:   typed(api.SessionResume, s.sessionResume),
		api.SessionList:     typed(api.SessionList, s.sessionList),
		api.SessionShow:     typed(api.SessionShow, s.sessionShow),
		api.SessionRename:   typed(api.SessionRename, s.sessionRename),
		api.SessionDelete:   typed(api.SessionDelete, s.sessionDelete),
		api.SessionSearch:   typed(api.SessionSearch, s.sessionSearch),
		api.SessionExport:   typed(api.SessionExport, s.sessionExport),
		api.SessionShare:    typed(api.SessionShare, s.sessionShare),
		api.ContextSet:      typed(api.ContextSet, s.contextSet),
		api.ContextGet:      typed(api.ContextGet, s.contextGet),
		api.ContextCandids:  typed(api.ContextCandids, s.contextCandidates),
		api.FilesAdd:        typed(api.FilesAdd, s.filesAdd),
		api.FilesList:       typed(api.FilesList, s.filesList),
		api.FilesRemove:     typed(api.FilesRemove, s.filesRemove),
		api.DocumentGet:     typed(api.DocumentGet, s.documentGet),
		api.Chat:            typed(api.Chat, s.chatCommand),
		api.RegenerateTitle: typed(api.RegenerateTitle, s.regenerateTitle),
		api.ChatPreview:     typed(api.ChatPreview, s.chatPreview),
		api.ClearTitle:      typed(api.ClearTitle, s.clearTitle),
		api.SetModel:        typed(api.SetModel, s.setModel),
		api.SessionCompact:  typed(api.SessionCompact, s.sessionCompact),
	}
}

// executeCommandParams is ExecuteCommandParams with the arguments kept raw.
type executeCommandParams struct {
	Command       string            `json:"command"`
	Arguments     []json.RawMessage `json:"arguments"`
	WorkDoneToken json.RawMessage   `json:"workDoneToken"`
}

func (s *Server) executeCommand(ctx context.Context, raw json.RawMessage) (any, error) {
	var p executeCommandParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, invalidParams("workspace/executeCommand: %s", argError(err))
	}
	fn, ok := s.commands[p.Command]
	if !ok {
		if p.Command == "" {
			return nil, invalidParams("workspace/executeCommand: missing command")
		}
		return nil, invalidParams("unknown command %q; known commands: %s", truncate(p.Command, 100), strings.Join(api.IDs(), ", "))
	}
	arg := json.RawMessage("{}")
	switch len(p.Arguments) {
	case 0:
	case 1:
		arg = p.Arguments[0]
	default:
		return nil, invalidParams("%s takes exactly one argument, a JSON object; got %d arguments", p.Command, len(p.Arguments))
	}
	if err := api.CheckToken(p.WorkDoneToken); err != nil {
		return nil, invalidParams("workspace/executeCommand: %s", err)
	}
	if len(p.WorkDoneToken) > 0 && string(p.WorkDoneToken) != "null" {
		ctx = context.WithValue(ctx, tokenKey{}, p.WorkDoneToken)
	}
	return fn(ctx, arg)
}

// decodeArg decodes a command's single argument strictly.
func decodeArg(raw json.RawMessage, v any) error {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		trimmed = []byte("{}")
	}
	if trimmed[0] != '{' {
		return fmt.Errorf("the argument must be a JSON object, got %s", jsonKind(trimmed))
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New(argError(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("unexpected data after the argument object")
	}
	return api.Check(trimmed, v) // required fields and limits
}

// argError rewrites encoding/json errors into messages about the argument.
func argError(err error) string {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		if typeErr.Field == "" {
			return fmt.Sprintf("expected %s, got %s", jsonType(typeErr.Type.Kind().String()), typeErr.Value)
		}
		goType := typeErr.Type.String()
		if k := typeErr.Type.Kind(); k >= reflect.Bool && k <= reflect.Float64 || k == reflect.String {
			goType = k.String() // a named string type such as session.Visibility is a string
		}
		return fmt.Sprintf("field %q must be %s, got %s", typeErr.Field, jsonType(goType), typeErr.Value)
	}
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return "unknown field " + rest
	}
	return strings.TrimPrefix(msg, "json: ")
}

// jsonType names a Go type the way a JSON user would.
func jsonType(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "[]"):
		return "an array of " + strings.TrimPrefix(jsonType(goType[2:]), "a ") + "s"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "map"), strings.HasPrefix(goType, "struct"), strings.Contains(goType, "."):
		return "an object"
	}
	return goType
}

func jsonKind(b []byte) string {
	switch b[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

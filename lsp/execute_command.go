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

	"github.com/ctxls/ctxls/service"

	"github.com/ctxls/ctxls/api"
)

// commandFunc runs one command with its raw JSON argument ({} when none was
// given).
type commandFunc func(ctx context.Context, arg json.RawMessage) (any, error)

// ops is the service as the LSP door offers it: every operation goes to
// the service as it is, but Chat, which streams here ($/progress).
type ops struct {
	*service.Service
	s *Server
}

// Chat runs ctxls.chat: the command's workDoneToken is the argument's, else
// ExecuteCommandParams'.
func (o ops) Chat(ctx context.Context, a *api.ChatArgs) (*api.ChatResult, error) {
	token := a.WorkDoneToken
	if len(token) == 0 {
		token = commandToken(ctx)
	}
	return o.s.runChat(ctx, a, token)
}

// commandTable maps every command ID to a function that decodes its
// argument strictly (unknown fields and wrong types are errors a person
// can act on) and calls its operation through api.Dispatch, generated from
// the same table; tests add commands of their own to it.
func (s *Server) commandTable() map[string]commandFunc {
	table := map[string]commandFunc{}
	for _, id := range api.IDs() {
		table[id] = func(ctx context.Context, raw json.RawMessage) (any, error) {
			svc, err := s.service()
			if err != nil {
				return nil, err
			}
			res, known, err := api.Dispatch(ctx, ops{svc, s}, id, raw, func(raw json.RawMessage, v any) error {
				if err := decodeArg(raw, v); err != nil {
					return api.Errorf(api.KindInvalidArgument, "%s: %s", id, err)
				}
				return nil
			})
			if !known {
				return nil, api.Errorf(api.KindInternal, "%s is declared but not dispatched", id)
			}
			return res, err
		}
	}
	return table
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
		return nil, invalidArg("workspace/executeCommand: %s", argError(err))
	}
	fn, ok := s.commands[p.Command]
	if !ok {
		if p.Command == "" {
			return nil, invalidArg("workspace/executeCommand: missing command")
		}
		return nil, invalidArg("unknown command %q; known commands: %s", truncate(p.Command, 100), strings.Join(api.IDs(), ", "))
	}
	arg := json.RawMessage("{}")
	switch len(p.Arguments) {
	case 0:
	case 1:
		arg = p.Arguments[0]
	default:
		return nil, invalidArg("%s takes exactly one argument, a JSON object; got %d arguments", p.Command, len(p.Arguments))
	}
	if err := api.CheckToken(p.WorkDoneToken); err != nil {
		return nil, invalidArg("workspace/executeCommand: %s", err)
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
			goType = k.String() // a named string type such as api.Visibility is a string
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

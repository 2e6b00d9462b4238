package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/ctxls/ctxls/buffer"
)

// Limits of the protocol. docs/protocol.md states them (generated from
// here); the server enforces them.
const (
	// MaxMessageBytes is the largest message body the daemon reads. A larger
	// request is answered -32600 with its own id and skipped without being
	// held in memory; a larger notification is dropped with a
	// window/showMessage warning.
	MaxMessageBytes = 64 << 20
	// MaxPendingRequests is how many requests the daemon works on or holds
	// answers for at once. At the limit it stops reading (the editor's writes
	// then block) until an answer has been written, so an editor that stops
	// reading its input cannot make the daemon grow without bound. While a
	// request of the daemon's own to the editor is unanswered, it reads on
	// after 10 s, since a handler may be waiting for that answer.
	MaxPendingRequests = 64
	// MaxOpenBytes is how much text of open documents the daemon holds.
	MaxOpenBytes = buffer.MaxOpenBytes
)

// Argument limits are declared on the argument types with struct tags and
// checked by Check before a handler runs:
//
//	max:"N"      a string: at most N bytes; a list: at most N items;
//	             a number: at most N; raw JSON: at most N bytes
//	itemMax:"N"  each string of a list: at most N bytes
//	limitDoc:"…" how docs/protocol.md states the limit, if not in max's terms
//
// A field without ",omitempty" in its json tag is required. Every string and
// list field must declare max (a test checks it).

// Check verifies the argument object raw, already decoded into v (a pointer
// to an argument struct): required fields are present and not null, and no
// value is over its limit. Its error names the field and the limit.
func Check(raw []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.Elem().Kind() != reflect.Struct {
		return nil
	}
	rv = rv.Elem()
	var present map[string]presence
	for i, f := range Fields(rv.Type()) {
		if f.Required {
			if present == nil {
				if err := json.Unmarshal(raw, &present); err != nil {
					return err
				}
			}
			if p := present[f.Name]; !p.present || p.null {
				return fmt.Errorf("%s is required", f.Name)
			}
		}
		if err := f.check(rv.Field(i)); err != nil {
			return err
		}
		if f.Name == "workDoneToken" {
			if err := CheckToken(rv.Field(i).Bytes()); err != nil {
				return err
			}
		}
	}
	return nil
}

// presence notes whether an object member was given and whether it was
// null, without copying its value.
type presence struct{ present, null bool }

func (p *presence) UnmarshalJSON(b []byte) error {
	*p = presence{true, string(b) == "null"}
	return nil
}

// Field describes one JSON field of an argument type.
type Field struct {
	Name     string
	Type     reflect.Type
	Required bool
	Max      int64 // 0: no limit
	ItemMax  int64 // 0: no limit
	LimitDoc string
	TS       string // the ts tag: the JSON type, where the Go type does not say it
}

// Fields lists the JSON fields of an argument type, in declaration order,
// one per struct field (the Nth field describes the Nth struct field).
func Fields(t reflect.Type) []Field {
	if t == nil {
		return nil
	}
	out := make([]Field, 0, t.NumField())
	for f := range t.Fields() {
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		fd := Field{Name: name, Type: f.Type, Required: name != "" && name != "-" && !strings.Contains(opts, "omitempty")}
		fd.Max, _ = strconv.ParseInt(f.Tag.Get("max"), 10, 64)
		fd.ItemMax, _ = strconv.ParseInt(f.Tag.Get("itemMax"), 10, 64)
		fd.LimitDoc = f.Tag.Get("limitDoc")
		fd.TS = f.Tag.Get("ts")
		out = append(out, fd)
	}
	return out
}

func (f Field) check(v reflect.Value) error {
	if f.Max == 0 && f.ItemMax == 0 {
		return nil
	}
	switch {
	case v.Kind() == reflect.String:
		if n := int64(v.Len()); f.Max > 0 && n > f.Max {
			return fmt.Errorf("%s is %d bytes long; the limit is %d bytes", f.Name, n, f.Max)
		}
	case f.Type == reflect.TypeFor[json.RawMessage]():
		if n := int64(v.Len()); f.Max > 0 && n > f.Max {
			return fmt.Errorf("%s is %d bytes long; the limit is %d bytes", f.Name, n, f.Max)
		}
	case v.Kind() == reflect.Slice:
		if n := int64(v.Len()); f.Max > 0 && n > f.Max {
			return fmt.Errorf("%s has %d items; the limit is %d", f.Name, n, f.Max)
		}
		if f.ItemMax > 0 && v.Type().Elem().Kind() == reflect.String {
			for i := range v.Len() {
				if n := int64(v.Index(i).Len()); n > f.ItemMax {
					return fmt.Errorf("%s item %d is %d bytes long; the limit is %d bytes", f.Name, i+1, n, f.ItemMax)
				}
			}
		}
	case v.CanInt():
		if n := v.Int(); f.Max > 0 && n > f.Max {
			return fmt.Errorf("%s must be at most %d, got %d", f.Name, f.Max, n)
		}
	}
	return nil
}

// LimitText describes a field's limit for docs/protocol.md ("" for none).
func (f Field) LimitText() string {
	if f.LimitDoc != "" {
		return f.LimitDoc
	}
	var parts []string
	switch {
	case f.Max == 0:
	case f.Type.Kind() == reflect.String || f.Type == reflect.TypeFor[json.RawMessage]():
		parts = append(parts, bytesText(f.Max))
	case f.Type.Kind() == reflect.Slice:
		parts = append(parts, fmt.Sprintf("%d items", f.Max))
	default:
		parts = append(parts, fmt.Sprintf("≤ %d", f.Max))
	}
	if f.ItemMax > 0 {
		parts = append(parts, "each "+bytesText(f.ItemMax))
	}
	return strings.Join(parts, ", ")
}

func bytesText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// CheckToken verifies a work-done token: LSP allows an integer or a string;
// ctxls allows strings of up to 256 bytes, since the token is repeated in
// every $/progress it sends.
func CheckToken(raw json.RawMessage) error {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > 258 {
		return fmt.Errorf("workDoneToken is %d bytes long; the limit is 256 bytes", len(raw))
	}
	var s string
	if raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return nil
	}
	if _, err := strconv.ParseInt(string(raw), 10, 32); err == nil {
		return nil
	}
	return errors.New("workDoneToken must be an integer or a string")
}

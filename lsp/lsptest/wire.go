package lsptest

import (
	"encoding/json"
	"slices"
)

// The fake editor moves hundreds of MB through encoding/json in some tests
// (documents of 60 MB, 3,000 answers of 100 KB, 10 MB arguments). Under
// -race every byte encoding/json looks at costs a race-detector call, which
// made those tests take minutes. Large messages therefore take the paths
// below: one pass over the bytes in a function the race detector does not
// instrument (the bytes belong to one goroutine), with encoding/json still
// doing all the decoding and encoding of the small parts. They give what
// encoding/json gives (wire_test.go compares them); anything unusual goes
// to encoding/json itself.

// largeJSON is the size from which a frame or a string takes the fast path.
var largeJSON = 64 << 10

// maxNesting is encoding/json's limit on nested arrays and objects.
const maxNesting = 10000

// decodeMessage is json.Unmarshal(body, m).
func decodeMessage(body []byte, m *Message) error {
	if len(body) < largeJSON || !decodeLargeMessage(body, m) {
		return json.Unmarshal(body, m)
	}
	return nil
}

// decodeLargeMessage decodes a valid JSON object whose members have plain
// ASCII names into m, leaving the large values as slices of body. It
// reports false, with m unchanged, for anything else.
func decodeLargeMessage(body []byte, m *Message) bool {
	i := skipSpace(body, 0)
	if i >= len(body) || body[i] != '{' {
		return false
	}
	end := scanValue(body, i, 0)
	if end < 0 || skipSpace(body, end) != len(body) {
		return false
	}
	var out Message
	out.At = m.At
	i = skipSpace(body, i+1)
	for body[i] != '}' {
		keyEnd := scanValue(body, i, 1)
		key := body[i+1 : keyEnd-1]
		i = skipSpace(body, skipSpace(body, keyEnd)+1) // past ':'
		valEnd := scanValue(body, i, 1)
		val := body[i:valEnd:valEnd]
		i = skipSpace(body, valEnd)
		if body[i] == ',' {
			i = skipSpace(body, i+1)
		}
		var err error
		switch k := string(key); k {
		case "id":
			err = rawValue(val, &out.ID)
		case "params":
			err = rawValue(val, &out.Params)
		case "result":
			err = rawValue(val, &out.Result)
		case "method":
			err = json.Unmarshal(val, &out.Method)
		case "error":
			err = json.Unmarshal(val, &out.Error)
		default:
			if !plainName(key) || foldsToField(k) {
				return false // encoding/json matches names without case
			}
		}
		if err != nil {
			return false
		}
	}
	*m = out
	return true
}

// rawValue stores val in dst as json.Unmarshal does.
func rawValue(val []byte, dst *json.RawMessage) error {
	if len(val) < largeJSON {
		return json.Unmarshal(val, dst)
	}
	*dst = val // valid JSON, and not null: what RawMessage would copy
	return nil
}

// foldsToField reports whether name is one of Message's fields in another
// case.
func foldsToField(name string) bool {
	for _, f := range []string{"id", "method", "params", "result", "error"} {
		if len(name) == len(f) && equalFoldASCII(name, f) {
			return true
		}
	}
	return false
}

func equalFoldASCII(a, lower string) bool {
	for i := range len(a) {
		c := a[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// plainName reports whether a member name (without its quotes) is printable
// ASCII without escapes.
//
//go:norace
func plainName(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

//go:norace
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanValue checks the JSON value starting at b[i] (no space before it),
// nested depth deep, and returns the index just past it, or -1 when it is
// not valid JSON.
//
//go:norace
func scanValue(b []byte, i, depth int) int {
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return scanString(b, i)
	case c == '{' || c == '[':
		if depth+1 > maxNesting {
			return -1
		}
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		i = skipSpace(b, i+1)
		if i < len(b) && b[i] == closing {
			return i + 1
		}
		for {
			if closing == '}' {
				if i >= len(b) || b[i] != '"' {
					return -1
				}
				if i = scanString(b, i); i < 0 {
					return -1
				}
				if i = skipSpace(b, i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i = skipSpace(b, i+1)
			}
			if i = scanValue(b, i, depth+1); i < 0 {
				return -1
			}
			if i = skipSpace(b, i); i >= len(b) {
				return -1
			}
			switch b[i] {
			case ',':
				i = skipSpace(b, i+1)
			case closing:
				return i + 1
			default:
				return -1
			}
		}
	case c == '-' || c >= '0' && c <= '9':
		return scanNumber(b, i)
	case c == 't':
		return scanLiteral(b, i, "true")
	case c == 'f':
		return scanLiteral(b, i, "false")
	case c == 'n':
		return scanLiteral(b, i, "null")
	}
	return -1
}

//go:norace
func scanString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

//go:norace
func scanNumber(b []byte, i int) int {
	digits := func(i int) int {
		j := i
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
	if b[i] == '-' {
		i++
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if i = digits(i); i < 0 {
		return -1
	}
	if i < len(b) && b[i] == '.' {
		if i = digits(i + 1); i < 0 {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i = digits(i); i < 0 {
			return -1
		}
	}
	return i
}

func scanLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// marshal is json.Marshal(v).
func marshal(v any) ([]byte, error) {
	return appendJSON(nil, v)
}

// appendJSON appends json.Marshal(v) to dst, writing large strings of
// plain ASCII itself.
func appendJSON(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		if len(v) >= largeJSON && plainString(v) {
			dst = slices.Grow(dst, len(v)+4<<10) // room for the rest: no second copy
			dst = append(dst, '"')
			dst = append(dst, v...)
			return append(dst, '"'), nil
		}
	case map[string]any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		dst = append(dst, '{')
		for n, k := range keys {
			if n > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSON(dst, k); err != nil {
				return nil, err
			}
			dst = append(dst, ':')
			if dst, err = appendJSON(dst, v[k]); err != nil {
				return nil, err
			}
		}
		return append(dst, '}'), nil
	case []any:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for n, x := range v {
			if n > 0 {
				dst = append(dst, ',')
			}
			var err error
			if dst, err = appendJSON(dst, x); err != nil {
				return nil, err
			}
		}
		return append(dst, ']'), nil
	case []string:
		if v == nil {
			return append(dst, "null"...), nil
		}
		dst = append(dst, '[')
		for n, x := range v {
			if n > 0 {
				dst = append(dst, ',')
			}
			dst, _ = appendJSON(dst, x)
		}
		return append(dst, ']'), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

// plainString reports whether s is printable ASCII that encoding/json
// writes as it is (no quote, backslash or HTML-escaped character).
//
//go:norace
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

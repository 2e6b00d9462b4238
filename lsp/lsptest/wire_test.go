package lsptest

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var wireBodies = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"a":[1,2.5e-3,-0,true,false,null,"x\"\\\/\b\f\n\r\t\u00e9"]}}`,
	`{"jsonrpc":"2.0","method":"window/showMessage","params":{"type":2,"message":"héllo"}}`,
	` { "id" : "abc" , "method" : "x" , "params" : [ ] } `,
	`{"id":null,"result":null,"error":null,"method":null,"params":null}`,
	`{"id":1,"error":{"code":-32602,"message":"bad","data":{"x":1}}}`,
	`{"id":1,"error":{"code":1},"error":{"message":"merged"}}`,
	`{"id":1,"id":2,"result":1,"result":{"b":2}}`,
	`{"ID":1,"Method":"m","RESULT":3}`,
	`{"\u0069d":1,"result":2}`,
	`{"ſd":1}`,
	`{"unknown":{"deep":[[[]]]},"id":3}`,
	`{"method":5}`,
	`{"error":"x","id":1}`,
	`{"id":1,"result":"\u12"}`,
	`{"id":1,"result":"a	b"}`,
	`{"id":01}`,
	`{"id":1.}`,
	`{"id":-}`,
	`{"id":1e}`,
	`{"id":1,}`,
	`{"id":1`,
	`{"id" 1}`,
	`{"id":1} x`,
	`{"id":tru}`,
	`[1,2]`,
	`null`,
	`"str"`,
	``,
	`{}`,
	`{"result":"` + strings.Repeat("\xff", 3) + `"}`,
	`{"result":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"result":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
}

// decodeBoth decodes body with encoding/json and with the large-message
// path and fails when they differ.
func decodeBoth(t *testing.T, body []byte) {
	t.Helper()
	defer func(n int) { largeJSON = n }(largeJSON)
	largeJSON = 0
	var want, got Message
	wantErr := json.Unmarshal(body, &want)
	gotErr := decodeMessage(body, &got)
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Fatalf("%.200q: error %v, encoding/json %v", body, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%.200q: %+v, encoding/json %+v", body, got, want)
	}
}

// TestDecodeMessageIsUnmarshal: the large-message path decodes every body
// as encoding/json does, and fails where it fails.
func TestDecodeMessageIsUnmarshal(t *testing.T) {
	for _, b := range wireBodies {
		decodeBoth(t, []byte(b))
	}
}

func FuzzDecodeMessage(f *testing.F) {
	for _, b := range wireBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, body []byte) { decodeBoth(t, body) })
}

// TestMessageFieldsDecoded: decodeLargeMessage knows every field of
// Message (a new one must be added there).
func TestMessageFieldsDecoded(t *testing.T) {
	var names []string
	typ := reflect.TypeFor[Message]()
	for i := range typ.NumField() {
		names = append(names, strings.Split(typ.Field(i).Tag.Get("json"), ",")[0])
	}
	slices.Sort(names)
	if want := []string{"-", "error", "id", "method", "params", "result"}; !slices.Equal(names, want) {
		t.Errorf("Message's JSON names are %q; decodeLargeMessage knows %q", names, want)
	}
}

// TestMarshalIsEncodingJSON: marshal writes what json.Marshal writes.
func TestMarshalIsEncodingJSON(t *testing.T) {
	defer func(n int) { largeJSON = n }(largeJSON)
	largeJSON = 0
	values := []any{
		nil, "", "plain", "quote\" back\\ <tag> & é \u2028 \x01 \x7f \xff",
		map[string]any{"b": 1, "a": []any{"x", 2.5, nil, true}, "c": map[string]any{}, "<k>": "v"},
		map[string]any(nil), []any(nil), []string(nil), []string{"a", "<b>"}, []any{},
		json.RawMessage(` { "x" : 1 } `), map[string]any{"id": json.RawMessage(`7`)},
		struct{ A int }{3}, map[string]int{"z": 1, "a": 2},
		map[string]any{"text": strings.Repeat("y", 1000), "items": []string{strings.Repeat("z", 100)}},
	}
	for _, v := range values {
		want, wantErr := json.Marshal(v)
		got, gotErr := marshal(v)
		if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) {
			t.Errorf("%#v: %s %v, encoding/json %s %v", v, got, gotErr, want, wantErr)
		}
	}
	if _, err := marshal(map[string]any{"c": make(chan int)}); err == nil {
		t.Error("a channel was marshalled")
	}
}

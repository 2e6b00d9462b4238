package api

import (
	"encoding/json"
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

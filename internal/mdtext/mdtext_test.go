package mdtext

import "testing"

func TestFence(t *testing.T) {
	for s, want := range map[string]string{"": "```", "a `b` c": "```", "```go": "````", "x `````` y ``": "```````"} {
		if got := Fence(s); got != want {
			t.Errorf("Fence(%q) = %q, want %q", s, got, want)
		}
	}
}

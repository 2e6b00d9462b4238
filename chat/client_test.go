package chat

import (
	"testing"

	"github.com/sashabaranov/go-openai"
)

// TestToolCallDeltaIndexBounds: a provider's tool-call index below 0 or
// absurdly large neither panics nor allocates a huge slice; the parts of
// the calls it names in range are put together.
func TestToolCallDeltaIndexBounds(t *testing.T) {
	idx := func(i int) *int { return &i }
	calls := addToolCallDeltas(nil, []openai.ToolCall{
		{Index: idx(0), ID: "a", Function: openai.FunctionCall{Name: "read_", Arguments: `{"pa`}},
		{Index: idx(-1), ID: "neg", Function: openai.FunctionCall{Name: "x"}},
		{Index: idx(1 << 40), ID: "huge", Function: openai.FunctionCall{Name: "y"}},
	})
	calls = addToolCallDeltas(calls, []openai.ToolCall{{Index: idx(0), Function: openai.FunctionCall{Name: "file", Arguments: `th":"x"}`}}})
	if len(calls) != 1 || calls[0].ID != "a" || calls[0].Function.Name != "read_file" || calls[0].Function.Arguments != `{"path":"x"}` {
		t.Errorf("calls: %+v", calls)
	}
}

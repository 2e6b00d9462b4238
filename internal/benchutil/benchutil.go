// Package benchutil holds what the daemon benchmarks of both doors (lsp,
// acp) share: percentiles and the direct provider call they are compared
// with.
package benchutil

import (
	"context"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/sashabaranov/go-openai"
)

// Percentile is the p-th percentile (0-100) of d, nearest rank.
func Percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// MS is d in milliseconds.
func MS(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// FirstChunkDirect is the time to the first content chunk of a streamed
// completion asked for directly with go-openai: the baseline a daemon's
// time to first delta is compared with.
func FirstChunkDirect(ctx context.Context, client *openai.Client) (time.Duration, error) {
	start := time.Now()
	stream, err := client.CreateChatCompletionStream(ctx, openai.ChatCompletionRequest{
		Model:    "test-model",
		Stream:   true,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello"}},
	})
	if err != nil {
		return 0, err
	}
	defer stream.Close()
	for {
		r, err := stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended with no content")
			}
			return 0, err
		}
		if len(r.Choices) > 0 && r.Choices[0].Delta.Content != "" {
			return time.Since(start), nil
		}
	}
}

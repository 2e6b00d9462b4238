// Package benchutil holds what the daemon benchmarks of both doors (lsp,
// acp) share: percentiles and the direct provider call they are compared
// with.
package benchutil

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
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
// completion of one short message asked for directly with go-openai.
func FirstChunkDirect(ctx context.Context, client *openai.Client) (time.Duration, error) {
	return FirstChunkOf(ctx, client, openai.ChatCompletionRequest{
		Model:    "test-model",
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "hello"}},
	})
}

// FirstChunkOf is the time to the first content chunk of req (streamed)
// asked for directly with go-openai: the baseline a daemon's time to first
// delta is compared with, given the daemon's own request, so that the
// difference is what the daemon adds (reading and storing the session,
// building the input), not what any client pays to send that input and
// the provider to read it.
func FirstChunkOf(ctx context.Context, client *openai.Client, req openai.ChatCompletionRequest) (time.Duration, error) {
	req.Stream = true
	start := time.Now()
	stream, err := client.CreateChatCompletionStream(ctx, req)
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

// LastAsked is the newest of reqs (a fake provider's requests, as parsed)
// whose last message ends with question: a turn's own request, not a
// title's or a summary's.
func LastAsked(reqs []openai.ChatCompletionRequest, question string) (openai.ChatCompletionRequest, error) {
	for i := len(reqs) - 1; i >= 0; i-- {
		if m := reqs[i].Messages; len(m) > 0 && strings.HasSuffix(m[len(m)-1].Content, question) {
			return reqs[i], nil
		}
	}
	return openai.ChatCompletionRequest{}, fmt.Errorf("no request asked %q", question)
}

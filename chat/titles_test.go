package chat

import (
	"context"
	"testing"
	"time"
)

func TestWaitBackground(t *testing.T) {
	t.Parallel()
	var e Engine
	release := make(chan struct{})
	e.bg.Add(1)
	go func() { <-release; e.bg.Done() }()
	start := time.Now()
	if e.WaitBackground(context.Background(), 50*time.Millisecond) || time.Since(start) < 50*time.Millisecond {
		t.Error("returned before the job ended or the timeout")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if e.WaitBackground(ctx, time.Hour) {
		t.Error("a cancelled wait reported the job done")
	}
	close(release)
	if !e.WaitBackground(context.Background(), 5*time.Second) {
		t.Error("the job ended but the wait timed out")
	}
	e.Close()
}

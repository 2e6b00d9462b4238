package chat

import (
	"context"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTitleInputIsCutOnRuneBoundaries(t *testing.T) {
	long := strings.Repeat("é", maxTitleInput) // 2 bytes each
	in := titleInput("a"+long, "answer")
	if !utf8.ValidString(in) || !strings.Contains(in, "é…\n\nThe assistant answered:\n\nanswer") || len(in) > 2*maxTitleInput+100 {
		t.Errorf("cut input (%d bytes) is wrong: %q…", len(in), in[:80])
	}
	if got := titleInput("short", ""); got != "The user wrote:\n\nshort" {
		t.Errorf("without an answer: %q", got)
	}
}

func TestWaitBackground(t *testing.T) {
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

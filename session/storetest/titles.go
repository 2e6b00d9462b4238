package storetest

import (
	"fmt"
	"sync"
	"testing"

	"github.com/ctxls/ctxls/session"
)

func testAutoTitleNeverOverridesUser(t *testing.T, s Store) {
	const trials = 50
	for i := range trials {
		ss, err := s.Create(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			if _, err := s.SetAutoTitle(ctx, ss.ID, "first line"); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			<-start
			if _, err := s.Rename(ctx, ss.ID, fmt.Sprintf("user title %d", i), session.TitleUser); err != nil {
				t.Error(err)
			}
		})
		close(start)
		wg.Wait()
		got, err := s.Get(ctx, ss.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.TitleSource != session.TitleUser || got.Title != fmt.Sprintf("user title %d", i) {
			t.Fatalf("trial %d: title %q (%s): the automatic title overrode the user's", i, got.Title, got.TitleSource)
		}
	}
}

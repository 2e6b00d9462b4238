// Package storetest is the store conformance suite: every store test that
// is not about one backend itself, run against each backend by that
// backend's own tests (session/sqlite, session/postgres), using only the
// session.Store interface and what Env gives. A backend calls Run with a
// function that opens a fresh store:
//
//	func TestConformance(t *testing.T) { storetest.Run(t, openEnv) }
//
// To run one test of the suite: go test -run 'Conformance/Share' ./session/sqlite
package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ctxls/ctxls/session"
)

var ctx = context.Background()

// Store is session.Store with the methods only tests call, which every
// backend has.
type Store interface {
	session.Store
	// AddedBy returns who added each item of a set.
	AddedBy(ctx context.Context, sessionID, setName string) (map[string]string, error)
	// FlushHistory writes every pending history.md now.
	FlushHistory() error
}

// Env is one backend under test, as its tests open it.
type Env struct {
	// S is open on a fresh data directory (Dir, which opening the store
	// creates) and, for a database server, a fresh database; it is closed
	// when the test ends (Close must be harmless after a test closed it
	// already).
	S Store
	// Dir is S's data directory.
	Dir string
	// Reopen opens another store on the same data directory and database,
	// closed when the test ends. It does not close S.
	Reopen func() Store
	// Local is true where the session folder is the store (SQLite), false
	// where it is a mirror of a database that other machines share.
	Local bool
	// Elsewhere opens a store on the same database from another machine
	// (a data directory of its own); nil for a local store.
	Elsewhere func(t *testing.T) Store
	// SetClock sets the clock of a store of this backend.
	SetClock func(s Store, now func() time.Time)
	// SetSessionID changes a session's id behind the store's back,
	// straight in its database (tests of id prefixes need ids that share
	// one). The session must have no messages, context or files yet.
	SetSessionID func(t *testing.T, from, to string)
	// HistoryCache is a store's kept Markdown of long sessions.
	HistoryCache func(s Store) *session.HistoryCache
}

// tests is the suite, in the order Run runs it.
var tests = []struct {
	name string
	fn   func(t *testing.T, e *Env)
}{
	{"AddedBy", withStore(testAddedBy)},
	{"SetEnvHintPatchesOneField", withStore(testSetEnvHintPatchesOneField)},
	{"HistoryWrittenLaterAndOnClose", testHistoryWrittenLaterAndOnClose},
	{"HistoryRenderedFromWhereItStopped", testHistoryRenderedFromWhereItStopped},
	{"ResolveID", testResolveID},
	{"MetaFieldsAreWrittenOneByOne", withStore(testMetaFieldsAreWrittenOneByOne)},
	{"Plan", testPlan},
	{"FirstExchangeAndMessageModel", withStore(testFirstExchangeAndMessageModel)},
	{"WorkspaceFilter", withStore(testWorkspaceFilter)},
	{"RemoveMode", withStore(testRemoveMode)},
	{"WriteOutput", withStore(testWriteOutput)},
	{"ListFiles", withStore(testListFiles)},
	{"AddFileFromPathTooLargeSaysExactSizes", withStore(testAddFileFromPathTooLargeSaysExactSizes)},
	{"EnforceSoftLimitFollowsNoLinks", withStore(testEnforceSoftLimitFollowsNoLinks)},
	{"PruneInactive", testPruneInactive},
	{"OutputTarget", withStore(testOutputTarget)},
	{"CreateGetReopen", testCreateGetReopen},
	{"ListOrderCursorQuery", testListOrderCursorQuery},
	{"RenameMovesFolder", withStore(testRenameMovesFolder)},
	{"MessagesHistoryExport", withStore(testMessagesHistoryExport)},
	{"ContextSets", withStore(testContextSets)},
	{"FilesSafety", withStore(testFilesSafety)},
	{"Search", withStore(testSearch)},
	{"Share", testShare},
	{"SummaryMessage", withStore(testSummaryMessage)},
	{"AutoTitleNeverOverridesUser", withStore(testAutoTitleNeverOverridesUser)},
	{"TurnState", testTurnState},
	{"TurnStateBegins", testTurnStateBegins},
	{"TurnStateSince", testTurnStateSince},
	{"CancelledKept", testCancelledKept},
	{"EmptySessions", testEmptySessions},
}

// Run runs every test of the suite as a parallel subtest of t, each on a
// store open returns (a new, empty one each time).
func Run(t *testing.T, open func(t *testing.T) *Env) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

// withStore adapts a test that needs only the store.
func withStore(fn func(t *testing.T, s Store)) func(t *testing.T, e *Env) {
	return func(t *testing.T, e *Env) { fn(t, e.S) }
}

// testShare: on PostgreSQL a session's owner shares it with the team and
// takes it back; the local store refuses to share, naming PostgreSQL.
func testShare(t *testing.T, e *Env) {
	s := e.S
	a, err := s.Create(ctx, "Shared")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Share(ctx, "nosuchsession", session.VisibilityTeam); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("unknown session: %v", err)
	}
	if e.Local {
		if a.Owner != "" || a.Visibility != "" {
			t.Errorf("a local session has owner %q, visibility %q", a.Owner, a.Visibility)
		}
		if _, err := s.Share(ctx, a.ID, session.VisibilityTeam); !errors.Is(err, session.ErrInvalid) || !strings.Contains(err.Error(), "PostgreSQL") {
			t.Errorf("Share on the local store: %v", err)
		}
		return
	}
	if a.Owner == "" || a.Visibility != session.VisibilityPrivate {
		t.Errorf("new session: owner %q, visibility %q", a.Owner, a.Visibility)
	}
	got, err := s.Share(ctx, a.ID, session.VisibilityTeam)
	if err != nil || got.ID != a.ID || got.Visibility != session.VisibilityTeam || got.Owner != a.Owner {
		t.Fatalf("Share team: %+v %v", got, err)
	}
	if got, err := s.Get(ctx, a.ID); err != nil || got.Visibility != session.VisibilityTeam {
		t.Errorf("Get after sharing: %+v %v", got, err)
	}
	if list, _, err := s.List(ctx, session.ListOptions{}); err != nil || len(list) != 1 || list[0].Visibility != session.VisibilityTeam {
		t.Errorf("List after sharing: %+v %v", list, err)
	}
	for _, bad := range []session.Visibility{"", "public"} {
		if _, err := s.Share(ctx, a.ID, bad); !errors.Is(err, session.ErrInvalid) {
			t.Errorf("Share(%q): %v", bad, err)
		}
	}
	if got, err := s.Share(ctx, a.ID, session.VisibilityPrivate); err != nil || got.Visibility != session.VisibilityPrivate {
		t.Errorf("Share private: %+v %v", got, err)
	}
}

package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/url"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ctxls/ctxls/session"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Live updates and the turn lock of the PostgreSQL store: what makes
// several machines on one database behave as one.

// watchDelay gathers the notifications of one burst (a streaming answer's
// checkpoint touches its message and its session) into one Change.
const watchDelay = 100 * time.Millisecond

// Watch calls fn with the changes other processes make, until ctx ends;
// the SQLite store has none to report and returns at once. Here it listens
// on its own connection, reconnecting by itself when PostgreSQL restarts
// or the network fails, and fn runs on Watch's goroutine, one Change at a
// time, within about watchDelay of the commit. Only sessions interested
// accepts (asked when a change arrives: the ones an editor shows) are
// read and reported, so a daemon does no work for the changes of every
// other session on the database; a deletion is reported whatever the
// session, as are reconnections.
func (s *Store) Watch(ctx context.Context, interested func(sessionID string) bool, fn func(session.Change)) error {
	cfg := s.pool.Config().ConnConfig.Copy()
	wait := 100 * time.Millisecond
	first := true
	for ctx.Err() == nil {
		err := s.listen(ctx, cfg, interested, fn, !first)
		first = false
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			select {
			case <-time.After(wait):
			case <-ctx.Done():
			}
			wait = min(wait*2, 2*time.Second)
			continue
		}
		wait = 100 * time.Millisecond
	}
	return nil
}

// listen holds one LISTEN connection until it fails or ctx ends.
func (s *Store) listen(ctx context.Context, cfg *pgx.ConnConfig, interested func(string) bool, fn func(session.Change), reconnected bool) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, "LISTEN ctxls_changes"); err != nil {
		return err
	}
	if reconnected {
		fn(session.Change{Reconnected: true})
	}
	type note struct {
		S, K, Op, By string
	}
	pending := map[string]*session.Change{}
	var order []string
	var deadline time.Time
	flush := func() {
		for _, id := range order {
			ch := pending[id]
			if ch.Deleted {
				s.removeMirror(ctx, id) // this machine's copy goes with it
			} else if !interested(id) {
				continue
			} else {
				s.complete(ctx, ch)
			}
			fn(*ch)
		}
		clear(pending)
		order = order[:0]
	}
	for {
		wctx := ctx
		var cancel context.CancelFunc = func() {}
		if len(order) > 0 {
			wctx, cancel = context.WithDeadline(ctx, deadline)
		}
		n, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			if len(order) > 0 && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
				flush()
				if !conn.IsClosed() {
					continue
				}
			}
			return err
		}
		var x note
		if json.Unmarshal([]byte(n.Payload), &x) != nil || x.S == "" || x.By == s.app {
			continue // ours, already told by the door that made it
		}
		ch := pending[x.S]
		if ch == nil {
			ch = &session.Change{SessionID: x.S}
			pending[x.S] = ch
			order = append(order, x.S)
			if len(order) == 1 {
				deadline = time.Now().Add(watchDelay)
			}
		}
		if !slices.Contains(ch.Kinds, x.K) {
			ch.Kinds = append(ch.Kinds, x.K)
		}
		if x.K == "sessions" && x.Op == "delete" {
			ch.Deleted = true
		}
	}
}

// complete reads what a Change needs through the role's policies: whether
// the session is still there for it, and for files, the mirror followed.
func (s *Store) complete(ctx context.Context, ch *session.Change) {
	ss, files, err := s.rowFiles(ctx, s.pool, ch.SessionID)
	if errors.Is(err, session.ErrNotFound) {
		// No longer shared with this role: nor is this machine's copy.
		ch.Deleted = true
		s.removeMirror(ctx, ch.SessionID)
		return
	}
	if err != nil {
		return
	}
	if changes, err := s.syncFiles(ctx, ss, files); err == nil {
		ch.Files = changes
	}
}

// IsUnavailable reports whether err, from a store call, says the
// store's database could not be reached: it could not connect, the server
// shut the connection down (SQLSTATE classes 08 and 57P), or the
// connection broke. The SQLite store's errors never say so.
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return false // an HTTP request's, never the store's
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return strings.HasPrefix(pe.Code, "08") || strings.HasPrefix(pe.Code, "57P")
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	for _, e := range []error{io.EOF, io.ErrUnexpectedEOF, net.ErrClosed, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EPIPE, syscall.ENOTCONN, session.ErrTurnLockLost} {
		if errors.Is(err, e) {
			return true
		}
	}
	// pgconn's own "conn closed" (a connection found dead) is unexported.
	return strings.Contains(err.Error(), "conn closed")
}

// LockTurn holds the session's turn lock, across every daemon on the
// database, until unlock is called: a PostgreSQL advisory lock on a
// connection of its own, so a daemon that dies lets go of it with its
// connection. Held elsewhere, it fails at once with ErrTurnElsewhere.
func (s *Store) LockTurn(ctx context.Context, sessionID string) (unlock func(), lost <-chan struct{}, err error) {
	conn, err := s.turnConns.Acquire(ctx)
	if err != nil {
		return nil, nil, err
	}
	var got bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtextextended('ctxls turn ' || $1, 0))", sessionID).Scan(&got); err != nil {
		conn.Release()
		return nil, nil, err
	}
	if !got {
		conn.Release()
		return nil, nil, session.ErrTurnElsewhere
	}
	h := &heldTurn{conn: conn, done: make(chan struct{}), lost: make(chan struct{})}
	s.turnMu.Lock()
	s.turns[conn] = h
	s.turnMu.Unlock()
	go h.check(context.WithoutCancel(ctx))
	var once sync.Once
	return func() {
		once.Do(func() {
			close(h.done)
			s.turnMu.Lock()
			defer s.turnMu.Unlock()
			if s.turns[conn] == nil {
				return // let go of by Close
			}
			delete(s.turns, conn)
			h.mu.Lock()
			defer h.mu.Unlock()
			h.released = true
			uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if _, err := conn.Exec(uctx, "SELECT pg_advisory_unlock(hashtextextended('ctxls turn ' || $1, 0))", sessionID); err != nil {
				conn.Conn().Close(uctx) // the lock goes with the connection
			}
			conn.Release()
		})
	}, h.lost, nil
}

// heldTurn is a turn lock and the connection that holds it.
type heldTurn struct {
	mu       sync.Mutex // the connection is used by one goroutine at a time
	released bool       // the connection went back (guarded by mu)
	conn     *pgxpool.Conn
	done     chan struct{} // closed by unlock
	lost     chan struct{} // closed when the connection broke
}

// turnCheckEvery is how often a held turn lock's connection is checked.
const turnCheckEvery = time.Second

// check pings the lock's connection until unlock, and closes lost when it
// broke (PostgreSQL restarted, the network failed): the lock went with it.
func (h *heldTurn) check(ctx context.Context) {
	t := time.NewTicker(turnCheckEvery)
	defer t.Stop()
	for {
		select {
		case <-h.done:
			return
		case <-t.C:
		}
		h.mu.Lock()
		if h.released {
			h.mu.Unlock()
			return
		}
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := h.conn.Ping(pctx)
		cancel()
		h.mu.Unlock()
		if err != nil {
			close(h.lost)
			return
		}
	}
}

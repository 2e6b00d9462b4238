package sqlite

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
)

// The SQLite store's connections keep the statements they run, by their
// text, and run them again without parsing them again. modernc's driver
// prepares every query database/sql hands it afresh (database/sql only
// reuses statements it was asked to prepare), and parsing took about a
// tenth of a turn's CPU: the same dozen statements, every turn.
//
// keptConnector wraps the driver's connections; database/sql still does
// the pooling and gives a connection to one goroutine at a time, so a
// connection's statements need no lock.

// keptConnector opens connections to dsn through drv.
type keptConnector struct {
	drv driver.Driver
	dsn string
}

func (c keptConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return &keptConn{Conn: conn, stmts: map[string]*keptStmt{}}, nil
}

func (c keptConnector) Driver() driver.Driver { return c.drv }

// keptMax bounds the statements a connection keeps; past it they are all
// closed and kept again as they come (the store's statements are a few
// dozen; a text built from options adds a handful).
const keptMax = 128

type keptStmt struct {
	stmt driver.Stmt
	busy bool // its rows are open
}

// keptConn is a driver connection that keeps its single-statement queries
// prepared. The driver's conn has every interface used below.
type keptConn struct {
	driver.Conn
	stmts map[string]*keptStmt
}

var (
	_ driver.ConnBeginTx        = (*keptConn)(nil)
	_ driver.ConnPrepareContext = (*keptConn)(nil)
	_ driver.ExecerContext      = (*keptConn)(nil)
	_ driver.QueryerContext     = (*keptConn)(nil)
	_ driver.Pinger             = (*keptConn)(nil)
	_ driver.SessionResetter    = (*keptConn)(nil)
	_ driver.Validator          = (*keptConn)(nil)
)

// stmt returns the kept statement for query, preparing it the first time;
// once is true when it is one to close after use (the kept one is busy
// with open rows). It returns nil for a script of several statements.
func (c *keptConn) stmt(ctx context.Context, query string) (k *keptStmt, once bool, err error) {
	if strings.Contains(strings.TrimRight(strings.TrimSpace(query), ";"), ";") {
		return nil, false, nil
	}
	if k := c.stmts[query]; k != nil && !k.busy {
		return k, false, nil
	}
	st, err := c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, false, err
	}
	k = &keptStmt{stmt: st}
	if _, ok := c.stmts[query]; ok {
		return k, true, nil
	}
	if len(c.stmts) >= keptMax {
		c.closeIdle()
	}
	c.stmts[query] = k
	return k, false, nil
}

// closeIdle closes the kept statements that have no open rows.
func (c *keptConn) closeIdle() {
	for q, k := range c.stmts {
		if !k.busy {
			k.stmt.Close()
			delete(c.stmts, q)
		}
	}
}

func (c *keptConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	k, once, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return c.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
	}
	if once {
		defer k.stmt.Close()
	}
	return k.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *keptConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	k, once, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if k == nil {
		return c.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
	}
	rows, err := k.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if once {
			k.stmt.Close()
		}
		return nil, err
	}
	k.busy = !once
	return &keptRows{Rows: rows, k: k, once: once}, nil
}

func (c *keptConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

func (c *keptConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return c.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

func (c *keptConn) Ping(ctx context.Context) error { return c.Conn.(driver.Pinger).Ping(ctx) }

func (c *keptConn) ResetSession(ctx context.Context) error {
	return c.Conn.(driver.SessionResetter).ResetSession(ctx)
}

func (c *keptConn) IsValid() bool { return c.Conn.(driver.Validator).IsValid() }

func (c *keptConn) Close() error {
	var errs []error
	for q, k := range c.stmts {
		errs = append(errs, k.stmt.Close())
		delete(c.stmts, q)
	}
	return errors.Join(append(errs, c.Conn.Close())...)
}

// keptRows are the rows of a kept statement: closing them frees it again
// (or closes it, when it was prepared for this once).
type keptRows struct {
	driver.Rows
	k    *keptStmt
	once bool
}

func (r *keptRows) Close() error {
	err := r.Rows.Close()
	if r.once {
		return errors.Join(err, r.k.stmt.Close())
	}
	r.k.busy = false
	return err
}

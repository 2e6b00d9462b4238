package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipe is statements sent together on one connection as one implicit
// transaction (a statement that fails makes the database skip the rest,
// as in a pgx.Batch), whose first results the server sends as soon as
// they are ready rather than with the last: pgx's Batch asks for all of
// them at its end (one Sync), so a turn's reads came back only once the
// user message queued after them was inserted and committed.
type pipe struct {
	conn *pgxpool.Conn
	p    *pgconn.Pipeline
	err  error // the first statement's error a read returned
}

// stmt is one statement of a pipe.
type stmt struct {
	sql  string
	args []any
}

// sendPipe sends stmts, asking the server to send the results of the
// first early of them once they are done. The statements are prepared on
// the connection the first time it runs them (a round trip each, once).
// The pipe is not cancelled with ctx: what was sent runs to its end, so
// a write that was sent is not left half known. Read each statement's
// result in order (rows, row), then close it.
func (s *Store) sendPipe(ctx context.Context, stmts []stmt, early int) (*pipe, error) {
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	c := conn.Conn()
	sds := make([]*pgconn.StatementDescription, len(stmts))
	for i, st := range stmts {
		if sds[i], err = c.Prepare(ctx, st.sql, st.sql); err != nil {
			conn.Release()
			return nil, err
		}
	}
	p := c.PgConn().StartPipeline(context.WithoutCancel(ctx))
	var eqb pgx.ExtendedQueryBuilder
	for i, st := range stmts {
		if err := eqb.Build(c.TypeMap(), sds[i], st.args); err != nil {
			p.Close() // nothing was flushed: nothing ran
			conn.Release()
			return nil, fmt.Errorf("encoding the arguments of %.40q: %w", st.sql, err)
		}
		// The pipeline keeps the result formats for reading the result.
		p.SendQueryStatement(sds[i], eqb.ParamValues, eqb.ParamFormats, append([]int16(nil), eqb.ResultFormats...))
		if i == early-1 && early < len(stmts) {
			p.SendFlushRequest()
		}
	}
	if err := p.Sync(); err != nil {
		p.Close()
		conn.Release()
		return nil, err
	}
	return &pipe{conn: conn, p: p}, nil
}

// rows is the next statement's result.
func (p *pipe) rows() (pgx.Rows, error) {
	res, err := p.p.GetResults()
	if err != nil {
		p.err = cmp.Or(p.err, err)
		return nil, err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return nil, fmt.Errorf("a pipelined statement's result is a %T", res)
	}
	return pgx.RowsFromResultReader(p.conn.Conn().TypeMap(), rr), nil
}

// row is the next statement's result, a single row.
func (p *pipe) row() pgx.Row {
	rows, err := p.rows()
	return firstRow{rows, err}
}

// close reads what is left of the pipe and gives its connection back. A
// statement's error is returned (a statement after it did not run); the
// connection is then closed rather than kept, with the statements it
// prepared (one whose plan a schema change invalidated would fail again).
func (p *pipe) close() error {
	err := p.p.Close()
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || errors.As(p.err, &pgErr) {
		p.conn.Conn().PgConn().Close(context.Background())
	}
	p.conn.Release()
	return err
}

// firstRow is a pgx.Row of rows' first row, as pgx's QueryRow.
type firstRow struct {
	rows pgx.Rows
	err  error
}

func (r firstRow) Scan(dest ...any) error {
	if r.err != nil {
		return r.err
	}
	defer r.rows.Close()
	if !r.rows.Next() {
		if err := r.rows.Err(); err != nil {
			return err
		}
		return pgx.ErrNoRows
	}
	if err := r.rows.Scan(dest...); err != nil {
		return err
	}
	r.rows.Close()
	return r.rows.Err()
}

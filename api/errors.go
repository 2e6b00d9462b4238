package api

import (
	"errors"
	"fmt"
)

// Kind says what sort of failure an error is. Every error the service
// returns carries one (an *Error); each door maps the kind to its codes from
// ErrorKinds, and LSP and ACP errors carry it in data as {"kind": ...}, so a
// client decides on the kind and never on the message, which is for people.
// Kinds are public API: add kinds, never rename them.
type Kind string

// The error kinds.
const (
	KindInvalidArgument  Kind = "invalidArgument"
	KindNotFound         Kind = "notFound"
	KindBusy             Kind = "busy"
	KindNoProvider       Kind = "noProvider"
	KindProviderFailed   Kind = "providerFailed"
	KindTooLarge         Kind = "tooLarge"
	KindStoreUnavailable Kind = "storeUnavailable"
	KindCancelled        Kind = "cancelled"
	KindPermissionDenied Kind = "permissionDenied"
	KindInternal         Kind = "internal"
)

// KindInfo is one row of the error-kind table: what the kind means and the
// code each door answers with.
type KindInfo struct {
	Kind Kind
	Doc  string
	// LSP and ACP are the JSON-RPC error codes; CLI is the exit status of
	// a ctxls subcommand that fails with the kind.
	LSP, ACP, CLI int
}

// JSON-RPC and LSP error codes the table uses.
const (
	CodeInvalidRequest       = -32600
	CodeInvalidParams        = -32602
	CodeInternalError        = -32603
	CodeServerNotInitialized = -32002
	CodeRequestFailed        = -32803
	CodeRequestCancelled     = -32800
	// CodeNoProvider: no usable model provider is configured (the
	// implementation-defined server error range).
	CodeNoProvider = -32001
	// CodeProviderFailed: the provider was reached and failed.
	CodeProviderFailed = -32004
	// CodeNotFound is ACP's "resource not found".
	CodeNotFound = -32002
)

// ErrorKinds is every kind with its codes, in the order docs/protocol.md
// shows them. The LSP door, the ACP door and the CLI each map through their
// column of this one table.
var ErrorKinds = []KindInfo{
	{KindInvalidArgument, "An argument is missing, malformed or out of range (a bad session id prefix, an unknown mode, a path outside the workspace).", CodeInvalidParams, CodeInvalidParams, 2},
	{KindNotFound, "The session, message, file or open document named does not exist (deleted, or never made).", CodeInvalidParams, CodeNotFound, 3},
	{KindBusy, "A turn is already running in the session, here or on another machine: wait for it or cancel it.", CodeRequestFailed, CodeRequestFailed, 4},
	{KindNoProvider, "No usable model provider is configured: set a model and a base URL or key (see `ctxls doctor`).", CodeNoProvider, CodeNoProvider, 5},
	{KindProviderFailed, "The model provider was asked and failed: refused the key, unknown model, rate limit, server error, unreachable, or an empty answer.", CodeProviderFailed, CodeProviderFailed, 6},
	{KindTooLarge, "An argument or file is over its limit (the message says the limit and the size).", CodeInvalidParams, CodeInvalidParams, 7},
	{KindStoreUnavailable, "The session store cannot be used now: not open yet, or its database cannot be reached.", CodeRequestFailed, CodeInternalError, 8},
	{KindCancelled, "The request was cancelled (a turn's partial answer is kept as cancelled).", CodeRequestCancelled, CodeRequestCancelled, 130},
	{KindPermissionDenied, "The store refused: only a session's owner may share or delete it (PostgreSQL).", CodeInvalidRequest, CodeInvalidRequest, 9},
	{KindInternal, "Anything else: a bug or an unexpected failure; the message says what happened.", CodeInternalError, CodeInternalError, 1},
}

// Info returns the row of kind k (KindInternal's for an unknown kind).
func (k Kind) Info() KindInfo {
	for _, ki := range ErrorKinds {
		if ki.Kind == k {
			return ki
		}
	}
	return ErrorKinds[len(ErrorKinds)-1]
}

// Error is an error with its kind. Its message is the wrapped error's.
type Error struct {
	Kind Kind
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error of kind k with a formatted message (%w wraps).
func Errorf(k Kind, format string, args ...any) error {
	return &Error{Kind: k, Err: fmt.Errorf(format, args...)}
}

// KindOf returns the kind of the first *Error in err's chain, KindInternal
// when there is none, and "" for nil.
func KindOf(err error) Kind {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) && e.Kind != "" {
		return e.Kind
	}
	return KindInternal
}

// ErrorData is the data of every LSP and ACP error ctxls answers with.
type ErrorData struct {
	Kind Kind `json:"kind"`
}

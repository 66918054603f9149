package socketrpc

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/geilt/tairseach-mcp/internal/quote"
)

// Sentinel errors that callers branch on with errors.Is. The errors Call
// returns wrap them with the method, the socket path and the cause.
var (
	// ErrUnavailable means no connection to the server could be made: the
	// socket is missing, refuses connections or is not a socket.
	ErrUnavailable = errors.New("tairseach server unavailable")

	// ErrClosed means the Client was closed.
	ErrClosed = errors.New("socketrpc client closed")

	// ErrProtocol means the server sent something that is not a valid
	// JSON-RPC 2.0 reply to the request in flight.
	ErrProtocol = errors.New("json-rpc protocol violation")

	// ErrTooLarge means a reply line exceeded Options.MaxResponseBytes.
	ErrTooLarge = errors.New("reply too large")
)

// Error is a JSON-RPC error object returned by the backend, kept exactly as sent.
type Error struct {
	Code    int64
	Message string
	Data    json.RawMessage // the "data" member as sent; nil if absent
	Raw     json.RawMessage // the whole error object as received
}

// Error returns the code and message of the error object.
func (e *Error) Error() string {
	return fmt.Sprintf("server error %d: %s", e.Code, e.Message)
}

// TooLargeError reports a reply line longer than the configured limit.
// errors.Is(err, ErrTooLarge) holds for it.
type TooLargeError struct {
	Limit int // Options.MaxResponseBytes in force
	Size  int // bytes of the line read before giving up, at least Limit+1
}

// Error describes the limit and how much was read.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("reply line too large: read %d bytes without end of line, limit is %d", e.Size, e.Limit)
}

// Is reports whether target is ErrTooLarge.
func (e *TooLargeError) Is(target error) bool { return target == ErrTooLarge }

// CallError is the error Call returns for a call that got no reply (a
// *Error is returned as it is). It names the method, the socket the call
// used, and the step that failed; errors.Is and errors.As see through it to
// the cause: an *UnavailableError, *ProtocolError, *ClosedError,
// *TooLargeError, an ErrUntrusted error, ErrClosed or the context's error.
type CallError struct {
	Method string
	Path   string // the socket path, as resolved for this call
	Op     string // the step that failed: "connecting", "writing request", "reading reply", …
	Err    error
}

func (e *CallError) Error() string {
	if e.Op == "" {
		return fmt.Sprintf("calling %s on %s: %v", quote.Line(e.Method, quote.Text), e.Path, e.Err)
	}
	return fmt.Sprintf("calling %s on %s: %s: %v", quote.Line(e.Method, quote.Text), e.Path, e.Op, e.Err)
}

func (e *CallError) Unwrap() error { return e.Err }

// UnavailableError reports that nothing answers at a socket path: it is
// missing, not a socket, or refuses connections. errors.Is(err,
// ErrUnavailable) holds for it.
type UnavailableError struct {
	Path string
	Err  error  // the cause: a *net.OpError, an *fs.PathError, or a description
	Hint string // a question that points at the fix
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("%v: %v (%s)", ErrUnavailable, e.Err, e.Hint)
}

func (e *UnavailableError) Unwrap() error { return e.Err }

// Is reports whether target is ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Reason is the cause in a few words: the system's error ("connection
// refused") when there is one, else the description.
func (e *UnavailableError) Reason() string {
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		return errno.Error()
	}
	return e.Err.Error()
}

// ProtocolError reports a line from the server that is not a valid JSON-RPC
// 2.0 reply to the request in flight. errors.Is(err, ErrProtocol) holds for
// it. The connection it came on is closed.
type ProtocolError struct {
	Detail   string // what is wrong, e.g. "reply id 9 does not match request id 1"
	Received string // the start of the line, quoted, and its length if cut
	Err      error  // the syntax error behind Detail, if any
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("%v: %s (received %s)", ErrProtocol, e.Detail, e.Received)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// Is reports whether target is ErrProtocol.
func (e *ProtocolError) Is(target error) bool { return target == ErrProtocol }

// Reason is the detail and what was received, for a message that already
// says it is a malformed reply.
func (e *ProtocolError) Reason() string { return e.Detail + " (received " + e.Received + ")" }

// ClosedError reports a connection the server closed, or reset, before a
// whole reply arrived. The request may or may not have run.
type ClosedError struct {
	// MidReply means part of a reply had arrived.
	MidReply bool
	// Fresh means the connection was new: no reply had been read on it. A
	// server that drops a new connection without a word may be refusing the
	// caller (the Tairseach server closes connections from other users so).
	Fresh bool
	Err   error // io.EOF, io.ErrUnexpectedEOF or the system error
}

func (e *ClosedError) Error() string {
	switch {
	case e.MidReply:
		return "server closed the connection mid-reply: " + e.Err.Error()
	case e.Err == io.EOF:
		return "server closed the connection without replying: " + e.Err.Error()
	}
	return e.Err.Error()
}

func (e *ClosedError) Unwrap() error { return e.Err }

// Reason is the cause in a few words: "closed mid-reply", "closed without
// replying", or the system's error ("connection reset by peer").
func (e *ClosedError) Reason() string {
	var errno syscall.Errno
	switch {
	case e.MidReply:
		return "closed mid-reply"
	case errors.As(e.Err, &errno):
		return errno.Error()
	}
	return "closed without replying"
}

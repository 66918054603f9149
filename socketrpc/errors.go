package socketrpc

import (
	"encoding/json"
	"errors"
	"fmt"
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

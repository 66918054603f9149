package socketrpc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/geilt/tairseach-mcp/internal/jsonscan"
)

// This file holds the wire format: building request lines and reading and
// checking reply lines. It does no I/O of its own beyond the bufio.Reader it
// is handed, so the fuzz test can drive it directly.

// appendRequest writes one newline-terminated request line into w, replacing
// its contents. Params are compacted, which also validates them and removes
// any newline that would break the framing; nil or empty params become {}.
func appendRequest(w *bytes.Buffer, id uint64, method string, params json.RawMessage) error {
	w.Reset()
	b := w.AvailableBuffer()
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = strconv.AppendUint(b, id, 10)
	b = append(b, `,"method":`...)
	b = jsonenc.AppendString(b, method, false)
	b = append(b, `,"params":`...)
	w.Write(b)
	if len(params) == 0 {
		w.WriteString("{}")
	} else if err := json.Compact(w, params); err != nil {
		return fmt.Errorf("encoding params: %w", err)
	}
	w.WriteString("}\n")
	return nil
}

// readLine reads one line and returns it without its '\n', together with the
// number of bytes consumed. A line longer than max bytes yields a
// *TooLargeError as soon as that is known. The returned slice is valid until
// the next read from br or use of *long, which holds lines longer than br's
// buffer.
func readLine(br *bufio.Reader, max int, long *[]byte) ([]byte, int, error) {
	frag, err := br.ReadSlice('\n')
	if err == nil {
		if len(frag)-1 > max {
			return nil, len(frag), &TooLargeError{Limit: max, Size: len(frag) - 1}
		}
		return frag[:len(frag)-1], len(frag), nil
	}
	if err != bufio.ErrBufferFull {
		return nil, len(frag), err
	}
	buf := append((*long)[:0], frag...)
	for {
		if len(buf) > max {
			*long = buf[:0]
			return nil, len(buf), &TooLargeError{Limit: max, Size: len(buf)}
		}
		frag, err = br.ReadSlice('\n')
		buf = append(buf, frag...)
		*long = buf[:0]
		switch err {
		case nil:
			if len(buf)-1 > max {
				return nil, len(buf), &TooLargeError{Limit: max, Size: len(buf) - 1}
			}
			return buf[:len(buf)-1], len(buf), nil
		case bufio.ErrBufferFull:
		default:
			return nil, len(buf), err
		}
	}
}

// wireReply is a reply line split into its members, each aliasing the
// line's buffer; parseReply copies what it hands out.
type wireReply struct {
	JSONRPC, ID, Result, Error []byte
}

// readReply reads lines until one that is not blank, and checks it as the
// reply to request id. A literal null line, which the server writes after
// running a notification, is a protocol error: the client sends none, so the
// server took the request for one and will not reply to it. It returns the result, or the server's error object as a *Error, and
// the number of bytes consumed, which the caller needs to decide whether a
// failed call may be retried.
func readReply(br *bufio.Reader, max int, long *[]byte, r *wireReply, id uint64) (json.RawMessage, int, error) {
	total := 0
	for {
		line, n, err := readLine(br, max, long)
		total += n
		if err != nil {
			if err == io.EOF && total > 0 {
				err = io.ErrUnexpectedEOF
			}
			return nil, total, err
		}
		line = trimSpace(line)
		if len(line) == 0 {
			if total > max {
				// Blank lines count too: an endless stream of them
				// must not keep the call reading.
				return nil, total, &TooLargeError{Limit: max, Size: total}
			}
			continue
		}
		if string(line) == "null" {
			return nil, total, protocolError(line, "a null line, as the server writes after a notification: it took the request for one, and will not reply")
		}
		res, err := parseReply(line, r, id)
		if err == nil {
			if n > br.Size() && cap(*long) > keepScratch {
				// The line spilled into a scratch buffer too big to keep:
				// hand it to the caller instead of copying the result out.
				*long = nil
			} else {
				res = bytes.Clone(res)
			}
		}
		return res, total, err
	}
}

// trimSpace removes leading and trailing JSON whitespace.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// parseReply checks line as the JSON-RPC 2.0 reply to request id. It returns
// the result bytes, or a *Error for an error object, or an error wrapping
// ErrProtocol.
//
// An "error": null member counts as absent, since some servers send it beside
// a result. A reply naming one of its members twice is refused. An error object with a null id is accepted as the reply: the
// server sends null when it could not read the request's id, and with one
// request in flight per connection it can only be ours.
func parseReply(line []byte, r *wireReply, id uint64) (json.RawMessage, error) {
	*r = wireReply{}
	var dup string // a member that appears twice
	err := jsonscan.Members(line, func(key, value []byte) bool {
		var m *[]byte
		switch string(key) {
		case "jsonrpc":
			m = &r.JSONRPC
		case "id":
			m = &r.ID
		case "result":
			m = &r.Result
		case "error":
			m = &r.Error
		default:
			return true
		}
		if *m != nil {
			dup = string(key)
			return false
		}
		*m = value
		return true
	})
	if err != nil {
		return nil, protocolError(line, "decoding reply: %w", err)
	}
	if dup != "" {
		// Parsers disagree on which of two members counts: refuse to guess.
		return nil, protocolError(line, "duplicate %q member", dup)
	}
	if string(r.JSONRPC) != `"2.0"` {
		if len(r.JSONRPC) == 0 {
			return nil, protocolError(line, "missing jsonrpc member")
		}
		return nil, protocolError(line, "jsonrpc version is %s, want \"2.0\"", excerpt(r.JSONRPC))
	}
	hasResult := len(r.Result) > 0
	hasError := len(r.Error) > 0 && string(r.Error) != "null"
	if !idMatches(r.ID, id) && !(string(r.ID) == "null" && hasError) {
		if len(r.ID) == 0 {
			return nil, protocolError(line, "missing id member, want %d", id)
		}
		return nil, protocolError(line, "reply id %s does not match request id %d", excerpt(r.ID), id)
	}
	switch {
	case hasResult && hasError:
		return nil, protocolError(line, "reply has both result and error")
	case hasResult:
		return r.Result, nil // aliases line: readReply decides whether to copy
	case hasError:
		return decodeError(line, r.Error)
	default:
		return nil, protocolError(line, "reply has neither result nor error")
	}
}

// decodeError turns an error member into a *Error that owns a copy of it.
func decodeError(line, raw []byte) (json.RawMessage, error) {
	var obj struct {
		Code    *int64          `json:"code"`
		Message *string         `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
	if raw[0] != '{' {
		return nil, protocolError(line, "error member is not an object")
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, protocolError(line, "decoding error object: %w", err)
	}
	if obj.Code == nil {
		return nil, protocolError(line, "error object has no code")
	}
	e := &Error{Code: *obj.Code, Data: obj.Data, Raw: bytes.Clone(raw)}
	if obj.Message != nil {
		e.Message = *obj.Message
	}
	return nil, e
}

// idMatches reports whether the raw id token of a reply is the number id.
// Integers are compared as text, which is exact because JSON has one
// spelling for each integer; forms such as 7.0 or 7e0 are compared as
// float64, exact for ids up to 2^53.
func idMatches(raw []byte, id uint64) bool {
	var tmp [20]byte
	if bytes.Equal(raw, strconv.AppendUint(tmp[:0], id, 10)) {
		return true
	}
	// raw is one valid JSON value, so anything starting with a digit or a
	// minus sign is a number that ParseFloat accepts.
	if len(raw) == 0 || (raw[0] != '-' && (raw[0] < '0' || raw[0] > '9')) || id > 1<<53 {
		return false
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	return err == nil && f == float64(id)
}

// protocolError returns a *ProtocolError with a description and an excerpt
// of the line received. A %w in format names the error it wraps.
func protocolError(line []byte, format string, args ...any) error {
	detail := fmt.Errorf(format, args...)
	return &ProtocolError{Detail: detail.Error(), Received: excerpt(line), Err: errors.Unwrap(detail)}
}

// excerpt quotes at most the first 96 bytes of b for an error message.
func excerpt(b []byte) string {
	const n = 96
	if len(b) <= n {
		return strconv.Quote(string(b))
	}
	return strconv.Quote(string(b[:n])) + fmt.Sprintf("... (%d bytes)", len(b))
}

package streamable

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/exact"
)

// ExactIDs keeps the request ids and progress tokens of HTTP clients byte
// for byte. The go-sdk decodes an id into a float64 kept as an int64 and a
// token into a float64 (exact.ID, exact.Token): 9007199254740993 came back
// as 9007199254740992 and 1.5 as 1, and two ids a float64 makes equal were
// one request to it, so a cancellation could reach the wrong one. Such an
// id or token in a POSTed message is handed to the go-sdk as a string of
// our own (a NUL, which a client's string cannot hold unescaped, then a
// counter), and the client's is put back in what the go-sdk writes to that
// POST's response: the id of the response, and the token of the request's
// progress notifications, member by member, never where a result merely
// holds the same text. A notifications/cancelled naming such an id, in the
// same batch (2025-03-26) or in another POST of the same session, names
// ours. A batch is rewritten message by message; a body over max is left
// to the go-sdk as it is.
func ExactIDs(next http.Handler, max int64) http.Handler {
	sw := &idSwaps{inFlight: map[string][]byte{}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body, err := PeekBody(r, max)
		if err != nil || int64(len(body)) > max {
			next.ServeHTTP(w, r)
			return
		}
		session := r.Header.Get(SessionIDHeader)
		rewritten, swaps := sw.rewrite(session, body)
		r.Body = io.NopCloser(bytes.NewReader(rewritten))
		r.ContentLength = int64(len(rewritten))
		if len(swaps) == 0 {
			next.ServeHTTP(w, r)
			return
		}
		defer sw.done(session, swaps)
		next.ServeHTTP(newSwapWriter(w, swaps), r)
	})
}

// swap is a client's id or token and the one the go-sdk was given.
type swap struct {
	ours, client []byte // as written in JSON
	key          string // a request id's key, for a cancellation; "" for a token
}

// idSwaps are the swaps of the requests in flight, by session and key of
// the client's id, for cancellations.
type idSwaps struct {
	next     atomic.Int64
	mu       sync.Mutex
	inFlight map[string][]byte
}

// rewrite returns body, one message or a batch of them, with the ids and
// tokens the go-sdk would change replaced by ours, and the swaps made.
func (sw *idSwaps) rewrite(session string, body []byte) ([]byte, []swap) {
	msgs := [][]byte{body}
	if i := jsonscan.SkipSpace(body, 0); i < len(body) && body[i] == '[' {
		msgs = nil
		for i = jsonscan.SkipSpace(body, i+1); i < len(body) && body[i] != ']'; {
			end, err := jsonscan.Skip(body, i)
			if err != nil {
				return body, nil // not JSON: the go-sdk's to judge
			}
			msgs = append(msgs, body[i:end])
			if i = jsonscan.SkipSpace(body, end); i < len(body) && body[i] == ',' {
				i = jsonscan.SkipSpace(body, i+1)
			}
		}
	}
	var edits []edit
	var swaps []swap
	var cancels [][]byte
	for _, m := range msgs {
		edits, swaps, cancels = sw.message(session, m, edits, swaps, cancels)
	}
	// A cancellation names a request of its own batch, whose swap was just
	// made, or one in flight in the session.
	for _, requestID := range cancels {
		key := inFlightKey(session, requestID)
		i := slices.IndexFunc(swaps, func(s swap) bool { return s.key == key })
		var o []byte
		if i >= 0 {
			o = swaps[i].ours
		} else if session != "" {
			sw.mu.Lock()
			o = sw.inFlight[key]
			sw.mu.Unlock()
		}
		if o != nil {
			edits = append(edits, edit{requestID, o})
		}
	}
	if len(edits) == 0 {
		return body, nil
	}
	out := apply(body, edits)
	if session != "" {
		sw.mu.Lock()
		for _, s := range swaps {
			if s.key != "" {
				sw.inFlight[s.key] = s.ours
			}
		}
		sw.mu.Unlock()
	}
	return out, swaps
}

// edit replaces at, bytes within a body, with with.
type edit struct{ at, with []byte }

// apply returns body with edits made. Each edit's bytes are within body:
// where, from how much is left of the array. The edits do not overlap;
// they are made in order.
func apply(body []byte, edits []edit) []byte {
	at := func(e edit) int { return cap(body) - cap(e.at) }
	slices.SortFunc(edits, func(a, b edit) int { return at(a) - at(b) })
	out := make([]byte, 0, len(body)+64)
	last := 0
	for _, e := range edits {
		i := at(e)
		out = append(append(out, body[last:i]...), e.with...)
		last = i + len(e.at)
	}
	return append(out, body[last:]...)
}

// message adds the edits and swaps of one message, msg, to those given,
// and the request id it cancels, if it is a notifications/cancelled.
func (sw *idSwaps) message(session string, msg []byte, edits []edit, swaps []swap, cancels [][]byte) ([]edit, []swap, [][]byte) {
	var id, method, params []byte
	if jsonscan.Members(msg, func(key, value []byte) bool {
		switch {
		case jsonscan.KeyIs(key, "id"):
			id = value
		case jsonscan.KeyIs(key, "method"):
			method = value
		case jsonscan.KeyIs(key, "params"):
			params = value
		}
		return true
	}) != nil {
		return edits, swaps, cancels // not a message: the go-sdk's to judge
	}
	ours := func(kind string) []byte {
		return append(strconv.AppendInt([]byte(`"\u0000`+kind+`:`), sw.next.Add(1), 10), '"')
	}
	if len(id) > 0 && (!exact.ID(id) || bytes.HasPrefix(id, []byte(`"\u0000`))) {
		o := ours("id")
		edits = append(edits, edit{id, o})
		swaps = append(swaps, swap{o, bytes.Clone(id), inFlightKey(session, id)})
	}
	if len(params) > 0 && params[0] == '{' {
		var meta, requestID []byte
		_ = jsonscan.Members(params, func(key, value []byte) bool {
			switch {
			case jsonscan.KeyIs(key, "_meta"):
				meta = value
			case jsonscan.KeyIs(key, "requestId"):
				requestID = value
			}
			return true
		})
		if len(meta) > 0 && meta[0] == '{' && bytes.Contains(meta, []byte("progressToken")) {
			var tok []byte
			_ = jsonscan.Members(meta, func(key, value []byte) bool {
				if jsonscan.KeyIs(key, "progressToken") {
					tok = value
				}
				return true
			})
			if len(tok) > 0 && (!exact.Token(tok) || bytes.HasPrefix(tok, []byte(`"\u0000`))) {
				o := ours("progress")
				edits = append(edits, edit{tok, o})
				swaps = append(swaps, swap{o, bytes.Clone(tok), ""})
			}
		}
		if string(method) == `"notifications/cancelled"` && len(requestID) > 0 {
			cancels = append(cancels, requestID)
		}
	}
	return edits, swaps, cancels
}

// done forgets the swaps of a POST that was answered.
func (sw *idSwaps) done(session string, swaps []swap) {
	if session == "" {
		return
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	for _, s := range swaps {
		if s.key != "" && bytes.Equal(sw.inFlight[s.key], s.ours) {
			delete(sw.inFlight, s.key)
		}
	}
}

// inFlightKey is a request id's key within its session: a number by its bytes,
// a string by its text.
func inFlightKey(session string, id []byte) string {
	if len(id) > 0 && id[0] == '"' {
		if s, err := jsonscan.Key(id[1 : len(id)-1]); err == nil {
			return session + "\x00s" + s
		}
	}
	return session + "\x00n" + string(id)
}

// swapWriter puts the client's ids and tokens back in what the go-sdk
// writes: each Write is a whole message or an array of them
// (application/json), or a whole event of a stream (text/event-stream).
// Only the members that name a request are put back: the top-level id of
// each message, the progressToken of a notifications/progress and the
// requestId of a notifications/cancelled. A result, an error message or a
// notification whose text happens to read as one of our ids (a backend
// echoing it, or arguments the model chose) is the client's as it is.
type swapWriter struct {
	http.ResponseWriter
	// ids and tokens map our ids and tokens, decoded, to the client's, as
	// written.
	ids, tokens map[string][]byte
}

func newSwapWriter(w http.ResponseWriter, swaps []swap) *swapWriter {
	sw := &swapWriter{ResponseWriter: w, ids: map[string][]byte{}, tokens: map[string][]byte{}}
	for _, s := range swaps {
		k, _ := jsonscan.Key(s.ours[1 : len(s.ours)-1])
		if s.key != "" {
			sw.ids[k] = s.client
		} else {
			sw.tokens[k] = s.client
		}
	}
	return sw
}

func (w *swapWriter) Write(p []byte) (int, error) {
	out := p
	// Ours are strings of a NUL, which JSON writes escaped: a message
	// without one names none of ours.
	if bytes.Contains(p, []byte(`\u0000`)) {
		var edits []edit
		if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
			// Line by line, without bytes.Lines, whose lines' capacity
			// ends with them: apply places an edit by its capacity.
			for rest := p; len(rest) > 0; {
				line := rest
				if i := bytes.IndexByte(rest, '\n'); i >= 0 {
					line, rest = rest[:i], rest[i+1:]
				} else {
					rest = nil
				}
				if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
					edits = w.messages(data, edits)
				}
			}
		} else {
			edits = w.messages(p, edits)
		}
		if len(edits) > 0 {
			out = apply(p, edits)
		}
	}
	if _, err := w.ResponseWriter.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// messages adds the edits of b, one JSON-RPC message or an array of them,
// to those given.
func (w *swapWriter) messages(b []byte, edits []edit) []edit {
	i := jsonscan.SkipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return w.message(b, edits)
	}
	for i = jsonscan.SkipSpace(b, i+1); i < len(b) && b[i] != ']'; {
		end, err := jsonscan.Skip(b, i)
		if err != nil {
			return edits
		}
		edits = w.message(b[i:end], edits)
		if i = jsonscan.SkipSpace(b, end); i < len(b) && b[i] == ',' {
			i = jsonscan.SkipSpace(b, i+1)
		}
	}
	return edits
}

// message adds the edits of one message to those given.
func (w *swapWriter) message(msg []byte, edits []edit) []edit {
	var id, method, params []byte
	if jsonscan.Members(bytes.TrimRight(msg, " \t\r\n"), func(key, value []byte) bool {
		switch {
		case jsonscan.KeyIs(key, "id"):
			id = value
		case jsonscan.KeyIs(key, "method"):
			method = value
		case jsonscan.KeyIs(key, "params"):
			params = value
		}
		return true
	}) != nil {
		return edits
	}
	edits = put(w.ids, id, edits)
	var member string
	var from map[string][]byte
	switch string(method) {
	case `"notifications/progress"`:
		member, from = "progressToken", w.tokens
	case `"notifications/cancelled"`:
		member, from = "requestId", w.ids
	default:
		return edits
	}
	_ = jsonscan.Members(params, func(key, value []byte) bool {
		if jsonscan.KeyIs(key, member) {
			edits = put(from, value, edits)
		}
		return true
	})
	return edits
}

// put adds the edit that puts the client's value back in place of v, when
// v is one of ours in from.
func put(from map[string][]byte, v []byte, edits []edit) []edit {
	if len(v) < 2 || v[0] != '"' {
		return edits
	}
	k, err := jsonscan.Key(v[1 : len(v)-1])
	if client, ok := from[k]; ok && err == nil {
		edits = append(edits, edit{v, client})
	}
	return edits
}

// Flush implements http.Flusher, which the go-sdk's event streams need.
func (w *swapWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the connection's writer.
func (w *swapWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// SessionIDHeader carries the session of a stateful HTTP request.
const SessionIDHeader = "Mcp-Session-Id"

// PeekBody reads the start of r's body, at most max bytes and one more,
// and leaves the body as it found it: what was read, then the read's error
// if any, then the rest. A handler after it reads the body whole, and
// refuses one over its limit as it would have.
func PeekBody(r *http.Request, max int64) ([]byte, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), errReader{err}, r.Body), r.Body}
	return body, err
}

// errReader returns err, or io.EOF when err is nil.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	return 0, io.EOF
}

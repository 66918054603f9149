package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// result turns a backend result into an MCP result: its JSON as text and,
// when the tool's outputSchema is advertised (--output-schemas=strict), as
// structuredContent, which must then match the schema.
func (s *Server) result(r *route, out json.RawMessage) *mcp.CallToolResult {
	if !utf8.Valid(out) {
		// Text content is repaired as it is encoded, but structuredContent is
		// copied as it is, and a strict UTF-8 reader refuses the whole stream.
		out = validUTF8(out)
	}
	text := jsonscan.Compact(out)
	// out is ours and never written again, so the text can share its bytes
	// rather than copy a result that may be megabytes.
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: unsafe.String(unsafe.SliceData(text), len(text))}}}
	if r.check != nil {
		s.checkQuietly(r, text)
	}
	if r.output == nil {
		return s.withMedia(r, text, res)
	}
	if problem := r.mismatch(r.output, text, false); problem != "" {
		return errorResult(problem + "; fix the manifest, or run with --output-schemas=warn (the default), which does not advertise outputSchemas")
	}
	if problem := undecodable(text); problem != "" {
		return errorResult(fmt.Sprintf("%s returned a result that clients cannot decode as structuredContent: %s; run with --output-schemas=warn (the default), which sends results as text only",
			r.tool.Method, problem))
	}
	res.StructuredContent = json.RawMessage(text)
	return s.withMedia(r, text, res)
}

// mismatch says how text, a compact result, does not match the outputSchema
// o, or returns "". With redact it quotes nothing of the result.
func (r *route) mismatch(o *outputSchema, text []byte, redact bool) string {
	if len(text) == 0 || text[0] != '{' {
		if redact {
			return fmt.Sprintf("%s returned %s, not a JSON object, but its manifest declares an outputSchema (%s)", r.tool.Method, jsonType(text), r.tool.File)
		}
		return fmt.Sprintf("%s returned a result that is not a JSON object, but its manifest declares an outputSchema (%s); result: %s", r.tool.Method, r.tool.File, excerpt(text))
	}
	check, err := o.outputCheck()
	if err != nil {
		return fmt.Sprintf("the outputSchema of %s in %s is not valid JSON Schema (%v)", r.tool.Name, r.tool.File, err)
	}
	if problem := check.checkShowing(text, redact); problem != "" {
		if redact {
			return fmt.Sprintf("%s returned a result that does not match the outputSchema in %s: %s", r.tool.Method, r.tool.File, problem)
		}
		return fmt.Sprintf("%s returned a result that does not match the outputSchema in %s: %s; result: %s",
			r.tool.Method, r.tool.File, problem, excerpt(text))
	}
	return ""
}

// checkQuietly has a result checked, in the background, against an
// outputSchema that is not advertised, and the first mismatch of each tool
// logged. The result is sent either way: the real server's replies do not
// always match its manifests, and a success must not reach the model as a
// failure.
func (s *Server) checkQuietly(r *route, text []byte) {
	if _, done := s.warned.Load(r.tool.Name); done {
		return
	}
	s.checks.submit(checkJob{r, text}, s.checkNow)
}

// checkNow checks a result and logs its tool's first mismatch.
func (s *Server) checkNow(j checkJob) {
	if _, done := s.warned.Load(j.r.tool.Name); done {
		return
	}
	// The log quotes nothing of the result: it may hold secrets
	// (op.items.get), and logs are kept where results are not.
	problem := j.r.mismatch(j.r.check, j.text, true)
	if problem == "" {
		return
	}
	if _, done := s.warned.LoadOrStore(j.r.tool.Name, struct{}{}); done {
		return
	}
	s.log.Warn().Str("tool", j.r.tool.Name).Str("file", j.r.tool.File).Str("mismatch", problem).
		Msg("a result does not match the tool's outputSchema; it was sent as it is (the schema is not advertised); further mismatches of this tool are not logged")
}

// checkJob is a result to check; text is never written again (it is the
// text content sent to the client).
type checkJob struct {
	r    *route
	text []byte
}

// checker runs result checks on one goroutine, off the calls' path: a check
// may decode the result (jsonschema-go), which would cost a call several
// times its round trip. The goroutine starts with the first check and is
// stopped by stop; when checks come faster than it runs them, the surplus
// is skipped, as they only warn.
type checker struct {
	once     sync.Once
	stopOnce sync.Once
	jobs     chan checkJob
	quit     chan struct{}
	done     chan struct{} // closed when the goroutine has returned
	queued   atomic.Int64  // bytes of the results in jobs
}

// checkQueue bounds the checks waiting, and checkQueueBytes the results
// they keep from being freed: a backend answering megabytes faster than
// they are checked must not hold 64 of them in memory.
const (
	checkQueue      = 64
	checkQueueBytes = 16 << 20
)

func (c *checker) submit(j checkJob, run func(checkJob)) {
	c.once.Do(func() {
		c.jobs = make(chan checkJob, checkQueue)
		c.quit = make(chan struct{})
		c.done = make(chan struct{})
		go c.loop(run)
	})
	n := int64(len(j.text))
	if total := c.queued.Add(n); total > checkQueueBytes && total != n {
		c.queued.Add(-n) // busy: this one goes unchecked
		return
	}
	select {
	case c.jobs <- j:
	default: // busy: this one goes unchecked
		c.queued.Add(-n)
	}
}

// ran accounts for a job taken from the queue.
func (c *checker) ran(j checkJob, run func(checkJob)) {
	c.queued.Add(-int64(len(j.text)))
	run(j)
}

// loop owns nothing but the jobs it takes; on quit it runs those already
// queued, so that a stopping server still logs what it saw.
func (c *checker) loop(run func(checkJob)) {
	defer close(c.done)
	for {
		select {
		case j := <-c.jobs:
			c.ran(j, run)
		case <-c.quit:
			for {
				select {
				case j := <-c.jobs:
					c.ran(j, run)
				default:
					return
				}
			}
		}
	}
}

// stop stops the goroutine, if it started, and waits for it.
func (c *checker) stop() {
	c.once.Do(func() {}) // no goroutine may start after this
	c.stopOnce.Do(func() {
		if c.quit != nil {
			close(c.quit)
			<-c.done
		}
	})
}

// validUTF8 returns the JSON b with each byte that is not UTF-8 replaced by
// U+FFFD, as encoding/json does. In valid JSON such bytes can only be in
// strings, where U+FFFD is as valid.
func validUTF8(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/8)
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
		} else {
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

// maxStructuredDepth is the deepest nesting of structuredContent that the
// go-sdk's decoder accepts (it refuses messages nested over 1000 deep, and
// closes the session): the message and its result are two levels.
const maxStructuredDepth = 1000 - 2

// undecodable says why a client could not decode the valid JSON b as
// structuredContent, or returns "": nesting deeper than the go-sdk client
// reads, or a number out of range of a double, which Go's encoding/json
// refuses to decode into a value of type any.
func undecodable(b []byte) string {
	depth := 0
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			end, err := jsonscan.Skip(b, i)
			if err != nil {
				return err.Error()
			}
			i = end
			continue
		case c == '{' || c == '[':
			if depth++; depth > maxStructuredDepth {
				return fmt.Sprintf("nested more than %d deep", maxStructuredDepth)
			}
		case c == '}' || c == ']':
			depth--
		case c == '-' || c >= '0' && c <= '9':
			j := i + 1
			for j < len(b) && (b[j] >= '0' && b[j] <= '9' || b[j] == '.' || b[j] == 'e' || b[j] == 'E' || b[j] == '+' || b[j] == '-') {
				j++
			}
			// Up to 15 digits without an exponent always fit.
			if j-i > 15 || bytes.ContainsAny(b[i:j], "eE") {
				if _, err := strconv.ParseFloat(string(b[i:j]), 64); err != nil {
					return fmt.Sprintf("the number %s is out of range of a double", excerpt(b[i:j]))
				}
			}
			i = j
			continue
		}
		i++
	}
	return ""
}

// envelopeReserve is the part of Config.MaxResultBytes kept for the JSON-RPC
// envelope around a result: "jsonrpc", the request's id, and the _meta and
// resultType of a 2026-07-28 result.
const envelopeReserve = 1 << 10

// bounded returns res, or an isError result when the message carrying res
// would be over the limit.
func (s *Server) bounded(r *route, res *mcp.CallToolResult) *mcp.CallToolResult {
	limit := s.cfg.MaxResultBytes - envelopeReserve
	size, ok := resultSize(res, limit)
	if ok {
		return res
	}
	if size > s.cfg.MaxResultBytes/2 {
		s.log.Warn().Str("tool", r.tool.Name).Int("bytes", size).Int("limit", s.cfg.MaxResultBytes).Msg("result too large for one message")
	}
	if res.IsError {
		var start []byte
		if t, ok := res.Content[0].(*mcp.TextContent); ok && len(res.Content) == 1 {
			start = []byte(t.Text[:min(len(t.Text), 1000)])
		}
		return errorResult(fmt.Sprintf("the error %s returned is too large to send: it would make a message of %d bytes, over the limit of %d (--max-result-bytes); its start: %s",
			r.tool.Method, size+envelopeReserve, s.cfg.MaxResultBytes, excerpt(start)))
	}
	return errorResult(fmt.Sprintf("result too large: %s returned a result that would make a message of %d bytes, over the limit of %d (--max-result-bytes); narrow the request (a smaller limit, a filter, a page)",
		r.tool.Method, size+envelopeReserve, s.cfg.MaxResultBytes))
}

// Lengths of the JSON encodeResult writes around a text and structured
// content.
const (
	resultFrame      = len(`{"content":[{"type":"text","text":}]}`)
	structuredFrame  = len(`,"structuredContent":`)
	isErrorFrame     = len(`,"isError":true`)
	maxEscapedLength = len(`\u0000`) // the longest a byte of text becomes
)

// resultSize returns the size of res encoded, as the go-sdk and
// encodeResult encode it, and whether it is at most limit. It counts only
// when the size could be over the limit.
func resultSize(res *mcp.CallToolResult, limit int) (int, bool) {
	t, ok := res.Content[0].(*mcp.TextContent)
	raw, rawOK := res.StructuredContent.(json.RawMessage)
	if len(res.Content) != 1 || !ok || (res.StructuredContent != nil && !rawOK) {
		n := len(marshalResult(res))
		return n, n <= limit
	}
	n := resultFrame
	if res.IsError {
		n += isErrorFrame
	}
	if raw != nil {
		n += structuredFrame
	}
	if n+maxEscapedLength*(len(t.Text)+len(raw)) <= limit {
		return n + len(t.Text) + len(raw), true // a bound: the usual case
	}
	n += escapedLen(t.Text) + len(raw)
	if raw != nil {
		// structuredContent is written with '<', '>' and '&' escaped (6
		// bytes) and U+2028 and U+2029 (3 bytes as UTF-8, 6 escaped).
		n += 5*(bytes.Count(raw, []byte("<"))+bytes.Count(raw, []byte(">"))+bytes.Count(raw, []byte("&"))) +
			3*(bytes.Count(raw, []byte("\u2028"))+bytes.Count(raw, []byte("\u2029")))
	}
	return n, n <= limit
}

// escapedLen returns the length of s encoded as a JSON string with HTML
// escaping, as jsonenc.AppendString and encoding/json write it.
func escapedLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r == '\u2028', r == '\u2029':
			n += 6
		default:
			n += size
		}
		i += size
	}
	return n
}

// excerpt shortens text for an error message.
func excerpt(b []byte) string {
	const max = 2000
	if len(b) <= max {
		return string(b)
	}
	cut := max
	for cut > max-utf8.UTFMax && !utf8.RuneStart(b[cut]) {
		cut-- // not in the middle of a character
	}
	return string(b[:cut]) + fmt.Sprintf("… (%d bytes in all)", len(b))
}

func errorResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// callError turns a failed socket call into a result the model (and the
// person reading over its shoulder) can act on.
func (s *Server) callError(r *route, err error) *mcp.CallToolResult {
	var (
		rpcErr    *socketrpc.Error
		callErr   *socketrpc.CallError
		unavail   *socketrpc.UnavailableError
		protoErr  *socketrpc.ProtocolError
		closedErr *socketrpc.ClosedError
	)
	if errors.As(err, &rpcErr) {
		return errorResult(`{"error":` + string(rpcErr.Raw) + `}`)
	}
	path := r.client.Path()
	if errors.As(err, &callErr) {
		path = callErr.Path // the path this call resolved
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		raise := "--call-timeout (or set timeoutMs on the tool in " + r.tool.File + ")"
		if r.tool.TimeoutMs > 0 {
			raise = "timeoutMs on the tool in " + r.tool.File
		}
		return errorResult(fmt.Sprintf("no reply from the tairseach server at %s within %s (method %s); it may be busy or hung: try again, or raise %s",
			path, r.timeout, r.tool.Method, raise))
	case errors.Is(err, socketrpc.ErrTooLarge):
		return errorResult(fmt.Sprintf("result too large: over %d bytes, limit %d; narrow the request (a smaller limit, a filter, a page)", s.cfg.MaxResultBytes, s.cfg.MaxResultBytes))
	case errors.Is(err, socketrpc.ErrUntrusted):
		return errorResult(fmt.Sprintf("tairseach-mcp refused to use the socket: %v", err))
	case errors.As(err, &unavail):
		return errorResult(fmt.Sprintf("the tairseach server is not reachable at %s: %s; is the Tairseach app running? start it, or point --socket / TAIRSEACH_SOCKET at its socket",
			unavail.Path, unavail.Reason()))
	case errors.As(err, &protoErr):
		return errorResult(fmt.Sprintf("the tairseach server at %s sent a malformed reply to %s: %s; the connection was reset, try again",
			path, r.tool.Method, protoErr.Reason()))
	case errors.As(err, &closedErr):
		hint := ""
		if closedErr.Fresh && !closedErr.MidReply && s.cfg.InsecureSocket {
			// The owner checks were skipped, and the real server drops
			// connections from other users without a word.
			hint = "; is the socket served by another user? the Tairseach server closes connections from other users without replying"
		}
		return errorResult(fmt.Sprintf("the tairseach server at %s closed the connection during %s (it may have crashed or restarted): %s%s; the request may or may not have run, so check before retrying anything that changes data",
			path, r.tool.Method, closedErr.Reason(), hint))
	default:
		return errorResult(fmt.Sprintf("the call failed: %v", err))
	}
}

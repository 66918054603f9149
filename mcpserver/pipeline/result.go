package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/media"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// result turns a backend result into an MCP result: its JSON as text and,
// when the tool's outputSchema is advertised (--output-schemas=strict), as
// structuredContent, which must then match the schema.
func (p *Pipeline) result(r *routes.Route, out json.RawMessage) (*mcp.CallToolResult, []byte) {
	if !utf8.Valid(out) {
		// Text content is repaired as it is encoded, but structuredContent is
		// copied as it is, and a strict UTF-8 reader refuses the whole stream.
		out = check.ValidUTF8(out)
	}
	text := jsonscan.Compact(out)
	// out is ours and never written again, so the text can share its bytes
	// rather than copy a result that may be megabytes.
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: unsafe.String(unsafe.SliceData(text), len(text))}}}
	if r.Check != nil {
		p.checkQuietly(r, text)
	}
	if r.Output == nil {
		return res, text
	}
	if problem := mismatch(r, r.Output, text, false); problem != "" {
		return check.ErrorResult(problem + "; fix the manifest, or run with --output-schemas=warn (the default), which does not advertise outputSchemas"), nil
	}
	if problem := check.Undecodable(text); problem != "" {
		return check.ErrorResult(fmt.Sprintf("%s returned a result that clients cannot decode as structuredContent: %s; run with --output-schemas=warn (the default), which sends results as text only",
			r.Tool.Method, problem)), nil
	}
	res.StructuredContent = json.RawMessage(text)
	return res, text
}

// mismatch says how text, a compact result, does not match the outputSchema
// o, or returns "". With redact it quotes nothing of the result.
func mismatch(r *routes.Route, o *check.Output, text []byte, redact bool) string {
	if len(text) == 0 || text[0] != '{' {
		if redact {
			return fmt.Sprintf("%s returned %s, not a JSON object, but its manifest declares an outputSchema (%s)", r.Tool.Method, check.JSONType(text), r.Tool.File)
		}
		return fmt.Sprintf("%s returned a result that is not a JSON object, but its manifest declares an outputSchema (%s); result: %s", r.Tool.Method, r.Tool.File, check.Excerpt(text))
	}
	problem, err := o.Check(text, redact)
	if err != nil {
		return fmt.Sprintf("the outputSchema of %s in %s is not valid JSON Schema (%v)", r.Tool.Name, r.Tool.File, err)
	}
	if problem != "" {
		if redact {
			return fmt.Sprintf("%s returned a result that does not match the outputSchema in %s: %s", r.Tool.Method, r.Tool.File, problem)
		}
		return fmt.Sprintf("%s returned a result that does not match the outputSchema in %s: %s; result: %s",
			r.Tool.Method, r.Tool.File, problem, check.Excerpt(text))
	}
	return ""
}

// checkQuietly has a result checked, in the background, against an
// outputSchema that is not advertised, and the first mismatch of each tool
// logged. The result is sent either way: the real server's replies do not
// always match its manifests, and a success must not reach the model as a
// failure.
func (p *Pipeline) checkQuietly(r *routes.Route, text []byte) {
	if _, done := p.warned.Load(r.Tool.Name); done {
		return
	}
	p.checks.submit(checkJob{r, text}, p.checkNow)
}

// checkNow checks a result and logs its tool's first mismatch.
func (p *Pipeline) checkNow(j checkJob) {
	if _, done := p.warned.Load(j.r.Tool.Name); done {
		return
	}
	// The log quotes nothing of the result: it may hold secrets
	// (op.items.get), and logs are kept where results are not.
	problem := mismatch(j.r, j.r.Check, j.text, true)
	if problem == "" {
		return
	}
	if _, done := p.warned.LoadOrStore(j.r.Tool.Name, struct{}{}); done {
		return
	}
	p.log.Warn().Str("tool", j.r.Tool.Name).Str("file", j.r.Tool.File).Str("mismatch", problem).
		Msg("a result does not match the tool's outputSchema; it was sent as it is (the schema is not advertised); further mismatches of this tool are not logged")
}

// EnvelopeReserve is the part of Options.MaxResultBytes kept for the JSON-RPC
// envelope around a result: "jsonrpc", the request's id, and the _meta and
// resultType of a 2026-07-28 result.
const EnvelopeReserve = 1 << 10

// Bound returns res, or an isError result that fits when the message
// carrying res would be over maxBytes (--max-result-bytes): for a result
// made without a reply (discovery, a refusal that quotes the client), or
// one an entry point measures again as it is written.
func Bound(res *mcp.CallToolResult, maxBytes int) *mcp.CallToolResult {
	limit := maxBytes - EnvelopeReserve
	size, ok := check.Size(res, limit)
	if ok {
		return res
	}
	what := "result"
	if res.IsError {
		what = "error"
	}
	return check.ErrorResult(fmt.Sprintf("result too large: the %s would make a message of %d bytes, over the limit of %d (--max-result-bytes); narrow the request (a smaller limit, a filter, a page)",
		what, size+EnvelopeReserve, maxBytes))
}

// bounded returns res, or an isError result when the message carrying res
// would be over the limit.
func (p *Pipeline) bounded(r *routes.Route, res *mcp.CallToolResult) *mcp.CallToolResult {
	limit := p.cfg.MaxResultBytes - EnvelopeReserve
	size, ok := check.Size(res, limit)
	if ok {
		return res
	}
	if size > p.cfg.MaxResultBytes/2 {
		p.log.Warn().Str("tool", r.Tool.Name).Int("bytes", size).Int("limit", p.cfg.MaxResultBytes).Msg("result too large for one message")
	}
	if res.IsError {
		var start []byte
		if t, ok := res.Content[0].(*mcp.TextContent); ok && len(res.Content) == 1 {
			start = []byte(t.Text[:min(len(t.Text), 1000)])
		}
		return check.ErrorResult(fmt.Sprintf("the error %s returned is too large to send: it would make a message of %d bytes, over the limit of %d (--max-result-bytes); its start: %s",
			r.Tool.Method, size+EnvelopeReserve, p.cfg.MaxResultBytes, check.Excerpt(start)))
	}
	return check.ErrorResult(fmt.Sprintf("result too large: %s returned a result that would make a message of %d bytes, over the limit of %d (--max-result-bytes); narrow the request (a smaller limit, a filter, a page)",
		r.Tool.Method, size+EnvelopeReserve, p.cfg.MaxResultBytes))
}

// callError turns a failed socket call into a result the model (and the
// person reading over its shoulder) can act on.
func (p *Pipeline) callError(r *routes.Route, err error) *mcp.CallToolResult {
	var (
		rpcErr    *socketrpc.Error
		callErr   *socketrpc.CallError
		unavail   *socketrpc.UnavailableError
		protoErr  *socketrpc.ProtocolError
		closedErr *socketrpc.ClosedError
	)
	if errors.As(err, &rpcErr) {
		return check.ErrorResult(`{"error":` + string(rpcErr.Raw) + `}`)
	}
	path := r.Client.Path()
	if errors.As(err, &callErr) {
		path = callErr.Path // the path this call resolved
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		raise := "--call-timeout (or set timeoutMs on the tool in " + r.Tool.File + ")"
		if r.Tool.TimeoutMs > 0 {
			raise = "timeoutMs on the tool in " + r.Tool.File
		}
		return check.ErrorResult(fmt.Sprintf("no reply from the tairseach server at %s within %s (method %s); it may be busy or hung: try again, or raise %s",
			path, r.Timeout, r.Tool.Method, raise))
	case errors.Is(err, socketrpc.ErrTooLarge):
		return check.ErrorResult(fmt.Sprintf("result too large: over %d bytes, limit %d; narrow the request (a smaller limit, a filter, a page)", p.cfg.MaxResultBytes, p.cfg.MaxResultBytes))
	case errors.Is(err, socketrpc.ErrUntrusted):
		return check.ErrorResult(fmt.Sprintf("tairseach-mcp refused to use the socket: %v", err))
	case errors.As(err, &unavail):
		return check.ErrorResult(fmt.Sprintf("the tairseach server is not reachable at %s: %s; is the Tairseach app running? start it, or point --socket / TAIRSEACH_SOCKET at its socket",
			unavail.Path, unavail.Reason()))
	case errors.As(err, &protoErr):
		return check.ErrorResult(fmt.Sprintf("the tairseach server at %s sent a malformed reply to %s: %s; the connection was reset, try again",
			path, r.Tool.Method, protoErr.Reason()))
	case errors.As(err, &closedErr):
		hint := ""
		if closedErr.Fresh && !closedErr.MidReply && p.cfg.InsecureSocket {
			// The owner checks were skipped, and the real server drops
			// connections from other users without a word.
			hint = "; is the socket served by another user? the Tairseach server closes connections from other users without replying"
		}
		return check.ErrorResult(fmt.Sprintf("the tairseach server at %s closed the connection during %s (it may have crashed or restarted): %s%s; the request may or may not have run, so check before retrying anything that changes data",
			path, r.Tool.Method, closedErr.Reason(), hint))
	default:
		return check.ErrorResult(fmt.Sprintf("the call failed: %v", err))
	}
}

// imageFrame is what an image block adds to a message besides its data,
// with room for a long MIME type: {"type":"image","mimeType":"…","data":""}.
const imageFrame = 128

// withMedia appends the picture Media gives for a successful result that
// is within the limit, if the message has room for it; else the sentence
// saying why there is none, if that fits. The text result is kept either
// way.
func (p *Pipeline) withMedia(r *routes.Route, args json.RawMessage, text []byte, sent time.Time, res *mcp.CallToolResult) *mcp.CallToolResult {
	if p.cfg.Media == nil || res.IsError {
		return res
	}
	limit := p.cfg.MaxResultBytes - EnvelopeReserve
	// Measured only for a call that may have a picture: the exact size
	// walks the whole text.
	size := -1
	measure := func() int {
		if size < 0 {
			size, _ = check.Size(res, 0) // exact: a limit of 0 is never met
		}
		return size
	}
	room := func() int64 { return int64((limit - measure() - imageFrame) / 4 * 3) } // base64
	block, why := p.cfg.Media(media.Call{Method: r.Tool.Method, Args: args, Result: text, Sent: sent, Room: room})
	switch {
	case block != nil:
		res.Content = append(res.Content, block)
	case why != "" && measure()+len(why)*maxEscaped+textFrame <= limit:
		res.Content = append(res.Content, &mcp.TextContent{Text: why})
	}
	return res
}

// textFrame is what a text block adds besides its text, and maxEscaped
// the most bytes a byte of text can take once escaped (\u00XX).
const (
	textFrame  = 32
	maxEscaped = 6
)

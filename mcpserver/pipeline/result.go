package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/media"
	"github.com/geilt/tairseach-mcp/mcpserver/parts"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
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

// A result larger than its client's agent takes whole goes out in parts.

// noteReserve is the part of a budget kept for the note after a part.
const noteReserve = 700

// budget is the most text of one result that c's client hands its model
// whole, and the client's agent by name ("" unknown); 0 when results are
// not sent in parts: they are off, or nobody's model reads this one (the
// CLI).
func (p *Pipeline) budget(c *Request) (int, string) {
	if p.cfg.Parts == nil || c.Peer == nil {
		return 0, ""
	}
	name := ""
	if c.Info.Client != nil {
		name = c.Info.Client.Name
	}
	b, agent := parts.BudgetFor(name)
	if p.cfg.ResultBudget > 0 {
		b = p.cfg.ResultBudget
	}
	return max(b, 2*noteReserve), agent
}

// owner is who may read the results c has held: its session; where there
// is none (HTTP with the 2026-07-28 protocol, which has no sessions, or
// --http-stateless), the policy it was served under, and the id, 128
// random bits given only in the result, is what the reader must hold. nil
// when nobody's model reads the result (the CLI).
func (c *Request) owner() any {
	switch {
	case c.Peer == nil:
		return nil
	case c.Info.Transport == "http" && c.Info.Session == "":
		return sessionless{c.Routes}
	}
	return c.Peer
}

// sessionless is the owner of results made by requests without a session:
// the route table of their policy, a header selection's or the server's.
type sessionless struct{ routes *atomic.Pointer[routes.Table] }

// inParts answers a result larger than the client's agent takes: its
// first part, whole entries, then a note saying how much was left out and
// the call that returns the next part; the parts are held for c's session.
func (p *Pipeline) inParts(c *Request, r *routes.Route, table *routes.Table, text []byte, budget int, agent string) *mcp.CallToolResult {
	ps := parts.Split(text, budget-noteReserve)
	if len(ps) < 2 {
		return nil
	}
	who := "this client"
	if agent != "" {
		who = agent
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[tairseach-mcp] This result of %s is %s bytes, more than %s hands its model at once (%s). Above is part 1 of %d: %s. Left out: %s bytes.",
		c.Name, parts.Count(len(text)), who, parts.Count(budget), len(ps), ps[0].What(), parts.Count(len(text)-len(ps[0].Text)))
	id, held := "", false
	if owner := c.owner(); owner != nil && table.Parts != "" {
		id, held = p.cfg.Parts.Hold(owner, c.Name, ps)
	}
	if held {
		fmt.Fprintf(&b, " Next: call %s with %s. The parts are held for this session only, for %s after each read.", table.Parts, partArgs(id, 2), minutes(p.cfg.Parts.TTL()))
	} else {
		b.WriteString(" The rest could not be held: call the tool again with narrower arguments.")
	}
	if args := pagingArgs(r); len(args) > 0 {
		fmt.Fprintf(&b, " %s also pages itself: it takes %s.", c.Name, strings.Join(args, ", "))
	}
	return partResult(r, ps[0], b.String())
}

// readPart answers a call of the tool that reads a part of a held result.
func (p *Pipeline) readPart(c *Request, table *routes.Table) *mcp.CallToolResult {
	var a struct {
		ID   string `json:"id"`
		Part int    `json:"part"`
	}
	if err := decodeDiscoveryArgs(c.Args, &a); err != "" || a.ID == "" || a.Part < 1 {
		if err == "" {
			err = "id and part (a number from 1) are required"
		}
		return c.refuse(backend.RuleInvalidArguments, fmt.Sprintf("invalid arguments for %s: %s; pass {\"id\": \"<the id the result's note gives>\", \"part\": 2}", c.Name, err))
	}
	var h *parts.Held
	var err error = parts.ErrUnknown
	if p.cfg.Parts != nil {
		h, err = p.cfg.Parts.Get(c.owner(), a.ID)
	}
	var gone *parts.GoneError
	switch {
	case errors.As(err, &gone):
		return c.refuse(backend.RuleOther, fmt.Sprintf("the result %s of %s is no longer held: it %s (a result is held for %s after its last read); call %s again for a new one",
			a.ID, gone.Tool, gone.Why, minutes(p.cfg.Parts.TTL()), gone.Tool))
	case err != nil:
		return c.refuse(backend.RuleOther, fmt.Sprintf("no result %q is held for this session: the id is from another session, mistyped, or let go long ago; call the tool again for a new one", a.ID))
	case a.Part > len(h.Parts):
		return c.refuse(backend.RuleInvalidArguments, fmt.Sprintf("the result %s of %s has %d parts; ask for part 1 to %d", a.ID, h.Tool, len(h.Parts), len(h.Parts)))
	}
	part := h.Parts[a.Part-1]
	note := fmt.Sprintf("[tairseach-mcp] Above is part %d of %d of the result %s of %s: %s.", a.Part, len(h.Parts), a.ID, h.Tool, part.What())
	if a.Part < len(h.Parts) {
		left := 0
		for _, q := range h.Parts[a.Part:] {
			left += len(q.Text)
		}
		note += fmt.Sprintf(" Still to read: parts %d–%d, %s bytes. Next: call %s with %s.", a.Part+1, len(h.Parts), parts.Count(left), c.Name, partArgs(a.ID, a.Part+1))
	} else {
		note += " This is the last part."
	}
	var r *routes.Route
	if t := table.ByName[h.Tool]; t != nil {
		r = t
	}
	return partResult(r, part, note)
}

// partResult is a part followed by its note; as structuredContent too when
// the tool's outputSchema is advertised and the part is an object.
func partResult(r *routes.Route, part parts.Part, note string) *mcp.CallToolResult {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(part.Text)}, &mcp.TextContent{Text: note}}}
	if r != nil && r.Output != nil && !part.Cut && len(part.Text) > 0 && part.Text[0] == '{' {
		res.StructuredContent = json.RawMessage(part.Text)
	}
	return res
}

func partArgs(id string, part int) string {
	return fmt.Sprintf(`{"id": %q, "part": %d}`, id, part)
}

func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// pagingNames are the argument names by which a tool pages itself.
var pagingNames = []string{"offset", "cursor", "page", "pageToken", "page_token", "skip", "start", "startIndex", "after", "limit", "maxResults", "max_results", "pageSize", "page_size", "count"}

// pagingArgs are the arguments of r's tool that page or bound its result,
// when it has a way on (not only a limit).
func pagingArgs(r *routes.Route) []string {
	var props struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(r.Tool.InputSchema, &props) != nil {
		return nil
	}
	var found []string
	on := false
	for _, n := range pagingNames {
		if _, ok := props.Properties[n]; ok {
			found = append(found, n)
			on = on || !slices.Contains([]string{"limit", "maxResults", "max_results", "pageSize", "page_size", "count"}, n)
		}
	}
	if !on {
		return nil
	}
	return found
}

// HeldBytes is the bytes of results held in parts now.
func (p *Pipeline) HeldBytes() int {
	if p.cfg.Parts == nil {
		return 0
	}
	return p.cfg.Parts.Used()
}

package pipeline

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/parts"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
)

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

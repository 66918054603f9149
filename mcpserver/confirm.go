package mcpserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
)

// ParseConfirm checks the values of --confirm: "none", "destructive" (the
// tools annotated destructiveHint: true), or globs matched against a tool's
// MCP name and its manifest (dotted) name, such as "contacts.*" or
// "tairseach_mail_send". Values may be comma lists. It returns the rules
// for Config.Confirm: empty when nothing is confirmed.
func ParseConfirm(values []string) ([]string, error) {
	var rules []string
	none := false
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			r = strings.TrimSpace(r)
			switch r {
			case "":
				continue
			case "none":
				none = true
				continue
			case "destructive":
			default:
				if _, err := path.Match(r, ""); err != nil {
					return nil, fmt.Errorf("--confirm %q: not a valid glob: %v", r, err)
				}
			}
			rules = append(rules, r)
		}
	}
	if none && len(rules) > 0 {
		return nil, fmt.Errorf("--confirm none cannot be combined with %q", strings.Join(rules, ","))
	}
	return rules, nil
}

// confirms reports whether calls of t need the user's confirmation.
func (s *Server) confirms(t manifest.Tool) bool {
	for _, r := range s.cfg.Confirm {
		if r == "destructive" {
			if t.Annotations.DestructiveHint != nil && *t.Annotations.DestructiveHint {
				return true
			}
			continue
		}
		for _, name := range []string{t.Name, t.ToolName, t.Method} {
			if ok, _ := path.Match(r, name); ok && name != "" {
				return true
			}
		}
	}
	return false
}

// confirmID names the one input request of a confirmation.
const confirmID = "confirm"

// confirmRefusedPrefix starts the result of a call that could not be
// confirmed because the client cannot ask the user.
const confirmRefusedPrefix = "confirmation required:"

// maxConfirmArgs bounds the arguments shown in a confirmation.
const maxConfirmArgs = 2000

// confirmCall asks the user before a call of a tool that needs it. It
// returns nil when the call may go ahead; otherwise the result to send: an
// input request (answered by the client, or by the go-sdk for clients of
// protocols before 2026-07-28, by elicitation) or a refusal. outcome names
// a refusal for the audit log.
func (s *Server) confirmCall(req *mcp.CallToolRequest, r *route) (res *mcp.CallToolResult, outcome string) {
	p := req.Params
	args := p.Arguments
	if len(args) == 0 || string(args) == "null" {
		args = json.RawMessage("{}")
	}
	if s.checkArgs(r, args) != "" {
		return nil, "" // Call reports the arguments; nobody is asked about them
	}
	state := s.confirmState(p.Name, args)
	if resp, ok := p.InputResponses[confirmID]; ok {
		er, _ := resp.(*mcp.ElicitResult)
		switch {
		case p.RequestState != state || er == nil:
			// Not the answer to our question about these arguments: ask.
		case er.Action == "accept" && er.Content["confirm"] == true:
			return nil, ""
		case er.Action == "cancel":
			return errorResult(fmt.Sprintf("declined by the user: %s was not called (the confirmation was cancelled)", p.Name)), "cancelled"
		default:
			return errorResult(fmt.Sprintf("declined by the user: %s was not called", p.Name)), "declined"
		}
	}
	caps := req.ClientCapabilities()
	if caps == nil || caps.Elicitation == nil || caps.Elicitation.Form == nil && caps.Elicitation.URL != nil {
		return errorResult(fmt.Sprintf("%s %s needs the user's confirmation (--confirm %s), but this client cannot ask the user (it does not support form elicitation); "+
			"the call was not made: use a client that supports elicitation, or start tairseach-mcp with --confirm none (or a --confirm that does not cover this tool)",
			confirmRefusedPrefix, p.Name, strings.Join(s.cfg.Confirm, ","))), "refused"
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{confirmID: &mcp.ElicitParams{
			Mode:    "form",
			Message: confirmMessage(r, args),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{
					"confirm": map[string]any{
						"type":        "boolean",
						"title":       "Run " + r.tool.ToolName,
						"description": "Allow this call to go ahead",
						"default":     false,
					},
				},
				"required": []string{"confirm"},
			},
		}},
		RequestState: state,
	}, ""
}

// confirmMessage shows the user the tool, what it does and the arguments.
func confirmMessage(r *route, args json.RawMessage) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Allow the assistant to call %s (%s)?", r.tool.ToolName, r.tool.Name)
	if d := strings.TrimSpace(r.tool.Description); d != "" {
		b.WriteString("\n\n")
		b.WriteString(truncate(d, 500))
	}
	b.WriteString("\n\nArguments:\n")
	var pretty strings.Builder
	if v, err := json.MarshalIndent(json.RawMessage(args), "", "  "); err == nil {
		pretty.Write(v)
	} else {
		pretty.Write(args)
	}
	b.WriteString(truncate(pretty.String(), maxConfirmArgs))
	return b.String()
}

// truncate cuts s to at most n bytes, between characters, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… (%d more bytes)", len(s)-cut)
}

// confirmState binds a confirmation to the tool and the exact arguments it
// showed: an answer given for other arguments is not taken as consent.
func (s *Server) confirmState(name string, args json.RawMessage) string {
	m := hmac.New(sha256.New, s.confirmKey[:])
	m.Write([]byte(name))
	m.Write([]byte{0})
	m.Write(canonicalJSON(args))
	return hex.EncodeToString(m.Sum(nil))
}

func newConfirmKey() (k [32]byte) {
	if _, err := rand.Read(k[:]); err != nil {
		panic(errors.New("crypto/rand failed: " + err.Error()))
	}
	return k
}

// handleConfirm is the part of handle for tools that need confirmation:
// it returns the result to send instead of calling, or nil to call.
func (s *Server) handleConfirm(ctx context.Context, req *mcp.CallToolRequest) *mcp.CallToolResult {
	r, ok := s.routes.Load().byName[req.Params.Name]
	if !ok || !r.confirm {
		return nil
	}
	res, outcome := s.confirmCall(req, r)
	if res != nil && outcome != "" {
		s.log.Info().Str("tool", req.Params.Name).Str("outcome", outcome).Msg("call not confirmed; not sent")
		if s.observing() {
			_, o := s.startObs(ctx, req.Params.Name, req.Params.Arguments)
			o.outcome = outcome
			s.endObs(o, res)
		}
	}
	return res
}

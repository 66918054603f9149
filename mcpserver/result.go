package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// result turns a backend result into an MCP result.
func (s *Server) result(r *route, out json.RawMessage) *mcp.CallToolResult {
	if len(out) > s.cfg.MaxResultBytes {
		return errorResult(fmt.Sprintf("result too large: %d bytes, limit %d; narrow the request (a smaller limit, a filter, a page)", len(out), s.cfg.MaxResultBytes))
	}
	text := jsonscan.Compact(out)
	// out is ours and never written again, so the text can share its bytes
	// rather than copy a result that may be megabytes.
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: unsafe.String(unsafe.SliceData(text), len(text))}}}
	if r.output == nil {
		return res
	}
	if len(text) == 0 || text[0] != '{' {
		return errorResult(fmt.Sprintf("%s returned a result that is not a JSON object, but its manifest declares an outputSchema; result: %s", r.tool.Method, excerpt(text)))
	}
	check, err := r.output.outputCheck()
	if err != nil {
		return errorResult(fmt.Sprintf("the outputSchema of %s in %s is not valid JSON Schema (%v); fix the manifest, or run with --output-schemas=off", r.tool.Name, r.tool.File, err))
	}
	if problem := check.check(text); problem != "" {
		return errorResult(fmt.Sprintf("%s returned a result that does not match the outputSchema in %s: %s (fix the manifest, or run with --output-schemas=off); result: %s",
			r.tool.Method, r.tool.File, problem, excerpt(text)))
	}
	res.StructuredContent = json.RawMessage(text)
	return res
}

// excerpt shortens text for an error message.
func excerpt(b []byte) string {
	const max = 2000
	if len(b) <= max {
		return string(b)
	}
	return string(b[:max]) + fmt.Sprintf("… (%d bytes in all)", len(b))
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

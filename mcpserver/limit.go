package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/internal/jsonenc"
	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
)

// boundMessages is the go-sdk's outermost receiving middleware: whatever
// method a request is of, the result or error the go-sdk is about to write
// is measured as it will be written, and one that would make a message
// over maxBytes (Config.MaxResultBytes) is replaced by an error that fits and says
// so. A feature's answer is not its backend's reply: a resource's text and
// a prompt are written as JSON strings with '<', '>' and '&' escaped to
// six bytes each (completion values are written without that), so
// counting the reply let through messages several times the limit. Tool
// results are bounded in the pipeline already; this also holds for those
// it makes without a reply (discovery, refusals that quote the client).
func boundMessages(maxBytes int, log zerolog.Logger) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			limit := maxBytes - pipeline.EnvelopeReserve
			if err != nil {
				return res, boundError(method, shownError(err), limit, maxBytes)
			}
			switch r := res.(type) {
			case *mcp.CallToolResult:
				if r != nil {
					return pipeline.Bound(r, maxBytes), nil
				}
			case check.Typed:
				if r.CallToolResult != nil {
					return check.Typed{CallToolResult: pipeline.Bound(r.CallToolResult, maxBytes)}, nil
				}
			case *mcp.ReadResourceResult, *mcp.GetPromptResult, *mcp.CompleteResult:
				b, merr := jsonenc.Marshal(res)
				if merr == nil && len(b) > limit {
					log.Warn().Str("method", method).Int("bytes", len(b)+pipeline.EnvelopeReserve).Int("limit", maxBytes).Msg("result too large for one message")
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
						"result too large: the answer to %s would make a message of over %d bytes, over the limit of %d (--max-result-bytes); %s",
						method, len(b)+pipeline.EnvelopeReserve, maxBytes, narrower[method])}
				}
			}
			return res, err
		}
	}
}

// narrower says how to ask for less, by method.
var narrower = map[string]string{
	"resources/read":      "read a narrower resource (a template's variables), or call the tool of its method with a smaller request",
	"prompts/get":         "get the prompt with shorter arguments",
	"completion/complete": "type more of the value",
}

// shownError is err with what could hide in its message escaped where it
// is (quote.Escape): the go-sdk's own errors quote what the client sent
// with %q ("unknown tool %q", "unknown prompt %q"), which prints a Hangul
// filler or a variation selector as it is, and a name with one would read
// as the name without.
func shownError(err error) error {
	msg := err.Error()
	shown := quote.Escape(msg)
	if shown == msg {
		return err
	}
	if we, ok := err.(*jsonrpc.Error); ok {
		c := *we
		c.Message = shown
		return &c
	}
	// As the go-sdk writes an error that is not a wire error: its message,
	// and the code of a wire error it wraps.
	we := &jsonrpc.Error{Message: shown}
	if wrapped := (*jsonrpc.Error)(nil); errors.As(err, &wrapped) {
		we.Code = wrapped.Code
	}
	return we
}

// boundError returns err, or a short error with its code when err, as the
// go-sdk writes it, would make a message over the limit: a backend's
// error data, or a message quoting what the client sent.
func boundError(method string, err error, limit, max int) error {
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		we = &jsonrpc.Error{Code: 0, Message: err.Error()}
	}
	if 6*(len(we.Message)+len(we.Data))+64 <= limit {
		return err // a bound: the usual case
	}
	// The stdio transport writes an error with encoding/json ('<' as six
	// bytes), the go-sdk's HTTP without escaping: the larger counts.
	b, merr := json.Marshal(we)
	if merr == nil && len(b) <= limit {
		return err
	}
	start := []byte(we.Message[:min(len(we.Message), 256)])
	return &jsonrpc.Error{Code: we.Code, Message: fmt.Sprintf("the error of %s is too large to send: it would make a message of over %d bytes, over the limit of %d (--max-result-bytes); its start: %s",
		method, len(b)+pipeline.EnvelopeReserve, max, check.Excerpt(start))}
}

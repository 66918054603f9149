package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// ServeStdio serves one MCP session over t until its input ends and the
// requests already received are answered, or t.End cuts the session off.
// When ctx is cancelled the session ends as at a stop signal, even if the
// input stays open: no more reading, calls in flight get the drain timeout
// or the grace. Once t.End has stopped, answers a client no longer reads are
// given up: ServeStdio returns, with an error, as soon as every call cut off
// has ended.
func (s *Server) ServeStdio(ctx context.Context, t *stdio.Transport) error {
	if t.Calls == nil {
		t.Calls = s
	}
	// The session ends through t.End, never by the go-sdk seeing ctx done.
	ss, err := s.base.mcp.Connect(context.WithoutCancel(ctx), t, nil)
	if err != nil {
		return fmt.Errorf("starting the stdio session: %w", err)
	}
	t.Bind(ss)
	end := t.End // set by Connect
	defer context.AfterFunc(ctx, func() { end.Drain(shutdown.StopSignal) })()
	done := make(chan error, 1)
	go func() { done <- ss.Wait() }()
	select {
	case err = <-done:
	case <-end.Stopped():
		// The answers a client does not read are given up, not the
		// records: every call cut off ends first (t.End abandons one that
		// does not).
		select {
		case err = <-done:
		case <-t.Settled():
		case <-end.Abandoned():
		}
		select {
		case err = <-done:
		default:
			// A writer blocked for good keeps the go-sdk's session open.
			if end.Status().Abandoned {
				return fmt.Errorf("stdio session cut off at the %s: calls still running %s later; their audit lines are missing",
					end.Reason(), time.Since(end.Status().HurriedAt).Round(time.Millisecond))
			}
		}
	}
	if t.Unwritten() {
		return fmt.Errorf("stdio session cut off at the %s: answers given up unwritten (is the client still reading stdout?)", end.Reason())
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, mcp.ErrConnectionClosed) && ctx.Err() == nil {
		return fmt.Errorf("stdio session: %w", err)
	}
	return nil
}

// CallDirect implements CallHandler: it fills in the Request from the
// stdio session and the request, runs the pipeline and encodes the result.
func (s *Server) CallDirect(ctx context.Context, d stdio.DirectCall) []byte {
	c := &pipeline.Request{Kind: backend.Tool, Name: d.Name, Args: d.Args, Info: observe.CallInfo{Transport: "stdio", Kind: "tool", RequestID: string(d.ID)}, Routes: &s.base.routes}
	if ss := d.Session; ss != nil {
		c.Peer = ss
		if p := ss.InitializeParams(); p != nil {
			c.Info.Client, c.Info.Protocol, c.Caps = p.ClientInfo, p.ProtocolVersion, p.Capabilities
		}
	}
	if len(d.Meta) > 0 && d.Meta[0] == '{' && (d.NewProtocol || s.cfg.Audit != nil || s.cfg.Telemetry != nil || s.cfg.ProgressInterval > 0 || len(s.cfg.Policy.Confirm) > 0) {
		if m := s.meta.decode(d.Meta); m.ok {
			if len(m.Progress) > 0 && string(m.Progress) != "null" {
				c.ProgressToken = m.Progress
			}
			if d.NewProtocol {
				// A 2026-07-28 request carries its client in its own _meta.
				c.Info.Protocol, c.Caps = stdio.NewProtocol, m.Caps
				if m.Client != nil {
					c.Info.Client = m.Client
				}
			}
		}
		if s.cfg.Telemetry != nil {
			c.Info.Meta = s.meta.decode(d.Meta).all() // its traceparent and tracestate
		}
	}
	res := s.pipe.Run(ctx, c)
	if res == nil {
		return nil
	}
	b := check.Encode(res)
	if len(b) > s.cfg.MaxResultBytes-pipeline.EnvelopeReserve {
		// A result made without a reply (discovery, a refusal quoting
		// the client) has not been bounded yet.
		b = check.Encode(pipeline.Bound(res, s.cfg.MaxResultBytes))
	}
	if d.NewProtocol {
		b = newProtocolResult(s.info, b, res.InputRequests != nil)
	}
	return b
}

// newProtocolResult turns a CallToolResult encoded by encodeResult into the
// one the go-sdk sends to a 2026-07-28 request: _meta with the server's
// Implementation first (Result's Meta is the first field), "resultType"
// after the result's own fields, before inputRequests (the go-sdk's
// CallToolResult.MarshalJSON writes them in that order). Call never sets a
// result _meta.
func newProtocolResult(info, result []byte, inputRequired bool) []byte {
	out := make([]byte, 0, len(info)+len(result)+80)
	out = append(out, `{"_meta":{"io.modelcontextprotocol/serverInfo":`...)
	out = append(out, info...)
	out = append(out, "},"...)
	body := result[1 : len(result)-1]
	if !inputRequired {
		out = append(out, body...)
		return append(out, `,"resultType":"complete"}`...)
	}
	out = append(out, body...)
	return check.MarkInputRequired(append(out, '}'))
}

// NewHTTPHandler returns the handler of the HTTP transport
// (streamable.NewHandler): MCP streamable HTTP at /mcp and /healthz, every
// session served by the policy server its X-MCP-* headers select, the
// base one by default, so that every session of a policy server sees the
// same tools and is told when they change.
func (s *Server) NewHTTPHandler(cfg streamable.Config) http.Handler {
	return s.httpHandler(cfg)
}

// ServeHTTPListener serves the HTTP transport on ln until cfg.End drains
// or ctx is cancelled, then shuts down gracefully (streamable.Handler.Serve).
// At the hurry it closes s's backend connections. It closes ln.
func (s *Server) ServeHTTPListener(ctx context.Context, ln net.Listener, cfg streamable.Config) error {
	return s.httpHandler(cfg).Serve(ctx, ln)
}

// httpHandler registers every tool with the base policy server's go-sdk server
// first, so that the go-sdk answers tool requests and tells every session
// of each reload, and makes the transport's handler.
func (s *Server) httpHandler(cfg streamable.Config) *streamable.Handler {
	s.MCP()
	return streamable.NewHandler(httpView{s}, cfg, s.log)
}

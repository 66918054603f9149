package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
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
	ss, err := s.own.mcp.Connect(context.WithoutCancel(ctx), t, nil)
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
	c := &pipeline.Request{Kind: backend.Tool, Name: d.Name, Args: d.Args, Info: observe.CallInfo{Transport: "stdio", Kind: "tool", RequestID: string(d.ID)}, Routes: &s.own.routes}
	if ss := d.Session; ss != nil {
		c.Peer = ss
		if p := ss.InitializeParams(); p != nil {
			c.Info.Client, c.Info.Protocol, c.Caps = p.ClientInfo, p.ProtocolVersion, p.Capabilities
		}
	}
	if len(d.Meta) > 0 && d.Meta[0] == '{' && (d.NewProtocol || s.cfg.Audit != nil || s.cfg.Telemetry != nil || s.cfg.ProgressInterval > 0 || len(s.cfg.Confirm) > 0) {
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

// NewHTTPHandler returns the handler of the HTTP transport: MCP streamable
// HTTP at /mcp, served by the one shared go-sdk server so that every session
// sees the same tools and is told when they change, and /healthz. Requests
// with a cross-origin Origin or Sec-Fetch-Site are refused with 403 whatever
// their method, and so are requests that reached a loopback address under a
// Host that is not (DNS rebinding). With cfg.Token, every request needs
// "Authorization: Bearer <token>" (401 otherwise).
//
// Clients of the 2025 revisions get sessions (Mcp-Session-Id); a request
// without a session that names revision 2026-07-28 or later, in its
// MCP-Protocol-Version header or its _meta, is served on its own, as that
// revision wants, by the same go-sdk server.
func (s *Server) NewHTTPHandler(cfg HTTPConfig) http.Handler {
	return s.newHTTPHandler(cfg)
}

func (s *Server) newHTTPHandler(cfg HTTPConfig) *httpHandler {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultBodyTimeout
	}
	h := &httpHandler{s: s, cfg: cfg}
	// MCP registers every tool with the go-sdk server first, so that the
	// go-sdk answers tool requests and tells every session of each reload.
	// A request's server is the shared one, or one narrowed to the tools its
	// X-MCP-* headers select.
	s.MCP()
	getServer := s.sel.serverFor
	logger := slog.New(newSlogHandler(s.log))
	// DisableLocalhostProtection stays false in both: the go-sdk refuses a
	// request that reached a loopback address with a Host that is not
	// loopback.
	h.stateless = mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		MaxRequestBodyBytes: cfg.MaxRequestBytes,
		Logger:              logger,
		// A 2026 request is its POST: when the client goes away, nobody
		// can get the answer, so the call to the backend is cancelled.
		PropagateRequestCancellation: true,
	})
	if cfg.Stateless {
		h.stateful = h.stateless
	} else {
		// The tracker expires idle sessions, not the go-sdk: the go-sdk
		// counts only POSTs as activity, so it would close under a client
		// the session whose event stream (GET) is open and waiting for
		// list_changed. A client that died with its stream open is found
		// out by TCP keep-alive, which ends the stream.
		h.sessions = streamable.NewSessions(s.allSessions, s.log, cfg.MaxSessions, cfg.SessionTimeout)
		h.stateful = h.sessions.Wrap(mcp.NewStreamableHTTPHandler(getServer, &mcp.StreamableHTTPOptions{
			MaxRequestBodyBytes: cfg.MaxRequestBytes,
			Logger:              logger,
		}))
	}
	mux := http.NewServeMux()
	mux.Handle(MCPPath, h.counting(streamable.SlowBodyGuard(cfg.ReadTimeout, s.sel.handler(streamable.ExactIDs(http.HandlerFunc(h.serveMCP), cfg.MaxRequestBytes)))))
	mux.Handle(HealthPath, streamable.LocalhostOnly(s.log, http.HandlerFunc(h.serveHealth)))

	var handler http.Handler = mux
	if cfg.Token != "" {
		handler = streamable.RequireToken(cfg.Token, cfg.TokenHint, s.log, handler)
	}
	h.handler = streamable.SameOriginOnly(s.log, handler)
	return h
}

// ServeHTTPListener serves the HTTP transport on ln until cfg.End drains
// (a stop signal) or ctx is cancelled, then shuts down gracefully: it stops
// accepting connections, waits for the requests in flight and closes every
// session once its requests are answered. When cfg.End hurries first, it
// cuts off what is still running by closing the backend connections, which
// leaves s closed, and waits until each handler cut off has returned (each
// call recorded) or cfg.End abandons them. It closes ln.
func (s *Server) ServeHTTPListener(ctx context.Context, ln net.Listener, cfg HTTPConfig) error {
	h := s.newHTTPHandler(cfg)
	end := cfg.End
	if end == nil {
		end = shutdown.New(shutdown.Config{})
		defer end.Close()
	}
	srv := &http.Server{
		Handler: h,
		// No ReadTimeout or WriteTimeout: event streams stay open as long
		// as their session.
		ReadHeaderTimeout: min(ReadHeaderTimeout, h.cfg.ReadTimeout),
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(newSlogHandler(s.log), slog.LevelDebug),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer context.AfterFunc(ctx, func() { end.Drain(shutdown.StopSignal) })()
	select {
	case err := <-served:
		return fmt.Errorf("serving HTTP: %w", err)
	case <-end.Draining():
	}

	start := time.Now()
	s.log.Info().Int64("in_flight", h.inFlight.Load()).Str("why", string(end.Reason())).
		Msg("shutting down: finishing the requests in flight")
	hurry := end.HurryContext()
	// Shutdown closes the listener and idle connections at once, then
	// waits for the active ones: requests in flight, and event streams,
	// which end when their sessions are closed below.
	shut := make(chan error, 1)
	go func() { shut <- srv.Shutdown(hurry) }()
	h.waitIdle(hurry.Done())
	closed := s.closeSessions()
	select {
	case <-closed:
	case <-hurry.Done():
	}
	cutOff := hurry.Err() != nil
	if cutOff {
		st := end.Status()
		s.log.Warn().Int64("in_flight", h.inFlight.Load()).Dur("limit", st.Limit.Round(time.Millisecond)).
			Msg("requests still running at the " + string(st.Hurry) + "; cutting them off")
		// Closing the backend connections fails the calls still running,
		// so that their handlers return, each call recorded, and their
		// sessions can close.
		_ = srv.Close()
		_ = s.Close()
		h.waitIdle(end.Abandoned())
		select {
		case <-closed:
		case <-end.Abandoned():
			s.log.Warn().Msg("sessions still closing at shutdown; not waiting for them")
		}
	}
	if err := <-shut; err != nil && !cutOff {
		_ = srv.Close()
	}
	<-served
	s.log.Info().Dur("took", time.Since(start)).Msg("HTTP server stopped")
	return nil
}

// closeSessions closes every session at once: their event streams end and
// their subscriptions are cancelled. A session closes once its requests are
// answered; the channel returned is closed when all have. The goroutine
// closing them is left to the process's exit if one never does.
func (s *Server) closeSessions() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for ss := range s.allSessions() {
			wg.Go(func() { _ = ss.Close() })
		}
		wg.Wait()
	}()
	return done
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
	"github.com/geilt/tairseach-mcp/mcpserver/stdio"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
)

// serve runs the MCP server on stdio until stdin ends, or on HTTP, until
// o.end, the owner of the process's end, says so (a stop signal), reloading
// the manifests when they change on disk or on SIGHUP.
func serve(ctx context.Context, o *options, stdin io.Reader, stdout io.Writer) error {
	log := o.log
	if o.cpuProfile != "" {
		stop, err := startCPUProfile(strings.ReplaceAll(o.cpuProfile, "%p", strconv.Itoa(os.Getpid())))
		if err != nil {
			return err
		}
		defer stop()
	}

	if len(o.policy.Toolsets) > 0 {
		// An unknown toolset is a mistake in the command line: say so
		// before serving, not with a list of tools that is silently short.
		reg, err := manifest.Load(o.manifests, o.loadOptions(zerolog.Nop()))
		if err == nil {
			if err := o.checkToolsets(reg); err != nil {
				return err
			}
		}
	}
	// stdout (stdio) and stderr belong to a client that may close them:
	// that ends the session, not the process.
	o.end.SurviveClosedOutput()
	if o.insecureSocket {
		log.Warn().Msg("--insecure-socket: NOT checking that sockets and the processes behind them belong to you; any local user who can reach the socket could receive your calls")
	}
	obs, stopObs, err := o.obs.start(ctx, log)
	if err != nil {
		return err
	}
	// The audit log is synced and the exporters flushed last, once the
	// transport has returned: by then every call it cut off has ended.
	defer stopObs()
	// The server answers initialize while the manifests load; tool
	// requests wait for them.
	srv, feats := o.newServer(nil, log, obs)
	defer srv.Close()
	log.Info().Str("version", version).Str("manifests", o.manifests).
		Str("socket", o.socket).Str("transport", o.transport).Msg("serving")

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	// The watcher and the SIGHUP loop live as long as the session.
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer stop()
	feats.watch(runCtx, &wg, log)
	wg.Go(func() { srv.TrackPermissions(runCtx) })
	wg.Go(func() {
		w, err := manifest.NewWatcher(o.manifests, manifest.WatchOptions{Options: o.loadOptions(log)},
			func(r manifest.Reload) {
				applyReload(log, srv, r)
				o.warnEmptyToolsets(log, r.Registry)
			})
		if err != nil {
			log.Error().Err(err).Msg("serving no tools")
			srv.Apply(&manifest.Registry{})
			return
		}
		srv.Apply(w.Registry())
		logManifestNotes(log, o.manifests, w.Registry())
		wg.Go(func() {
			for {
				select {
				case <-hup:
					log.Info().Msg("SIGHUP: reloading manifests")
					w.Reload()
				case <-runCtx.Done():
					return
				}
			}
		})
		if err := w.Run(runCtx); err != nil {
			log.Error().Err(err).Msg("manifest watcher stopped; manifests no longer reload")
		}
	})

	if o.transport == "http" {
		err = serveHTTP(ctx, o, srv, log)
	} else {
		err = srv.ServeStdio(ctx, &stdio.Transport{
			In:       stdin,
			Out:      stdout,
			End:      o.end,
			Linger:   o.linger,
			NoDirect: o.direct == "off",
			Logger:   log,
		})
	}
	if err == nil && o.end.Status().Hurry == shutdown.SecondSignal {
		// What was in flight was cut off, as asked: each call is
		// recorded, but the session did not end well.
		return errReported
	}
	return err
}

// logManifestNotes sums up in one line what the manifests' loading found:
// at info level, for the manifests are the app's and a stdio client shows
// every stderr line as an error; as a warning only when nothing loaded.
// validate and doctor list each finding, the status resource too.
func logManifestNotes(log zerolog.Logger, dir string, reg *manifest.Registry) {
	errs, notes := manifestErrors(reg), len(reg.Problems)+len(reg.FileErrors)
	for _, sk := range reg.Skipped {
		if sk.Reason == manifest.Duplicate { // validate's warnings, counted alike
			notes++
		}
	}
	switch {
	case notes == 0:
	case len(reg.Tools) == 0 && errs > 0:
		log.Warn().Str("dir", dir).Int("errors", errs).Msg("serving no tools: the manifests have errors; tairseach-mcp validate lists them")
	default:
		log.Info().Str("dir", dir).Int("errors", errs).Msgf("%s; tairseach-mcp doctor or validate lists them", plural(notes, "manifest note"))
	}
}

// applyReload hands a reloaded registry to the server and logs the outcome
// as one line.
func applyReload(log zerolog.Logger, srv *mcpserver.Server, r manifest.Reload) {
	ch := srv.Apply(r.Registry)
	ev := log.Info()
	if len(r.Failed) > 0 {
		// A file that failed in this reload, most likely being edited: it
		// keeps its last good tools meanwhile.
		ev = log.Warn()
		failing := make([]string, 0, len(r.Failed))
		for _, fe := range r.Failed {
			failing = append(failing, fe.Path)
		}
		ev = ev.Str("failing", strings.Join(failing, ",")).Str("fix", "tairseach-mcp validate says why")
	}
	ev.Int("tools", len(r.Registry.Tools)).Strs("added", ch.Added).Strs("removed", ch.Removed).
		Strs("changed", ch.Changed).Int("rerouted", ch.Rerouted).Int("files_changed", len(r.Changed)+len(r.Removed)).
		Msg("manifests reloaded")
}

// startCPUProfile profiles the process until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// serveHTTP serves srv over streamable HTTP until o.end drains it (a stop
// signal).
func serveHTTP(ctx context.Context, o *options, srv *mcpserver.Server, log zerolog.Logger) error {
	h := &o.http
	host, _, _ := net.SplitHostPort(h.listen) // checked by httpOptions.resolve
	switch {
	case h.noAuth:
		log.Warn().Msg("--no-auth: every user and process on this machine can call the tools")
	case h.tokenMade:
		log.Info().Str("token_file", h.tokenPath).Msg("made a new bearer token; clients send it as Authorization: Bearer <token>")
	}
	ln, err := net.Listen("tcp", h.listen)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", h.listen, err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	if h.token == "" && !addr.IP.IsLoopback() {
		// A name such as "localhost" resolved to something else.
		ln.Close()
		return fmt.Errorf("--no-auth --listen %s bound %s, which is not loopback; drop --no-auth, or listen on 127.0.0.1", h.listen, addr)
	}
	ev := log.Info().Bool("stateless", h.stateless).Bool("auth", h.token != "")
	if h.token != "" {
		ev = ev.Str("token_from", h.tokenSource)
	}
	if !h.stateless {
		ev = ev.Stringer("session_timeout", h.sessionTimeout).Int("max_sessions", h.maxSessions)
	}
	// Log the host asked for (0.0.0.0 rather than Go's [::]) with the port bound.
	shown := net.JoinHostPort(host, fmt.Sprint(addr.Port))
	if host == "" {
		shown = addr.String()
	}
	ev.Msgf("listening on http://%s%s", shown, streamable.MCPPath)
	err = srv.ServeHTTPListener(ctx, ln, streamable.Config{
		Stateless:       h.stateless,
		Token:           h.token,
		MaxRequestBytes: h.maxRequestBytes,
		SessionTimeout:  h.sessionTimeout,
		MaxSessions:     h.maxSessions,
		ReadTimeout:     h.readTimeout,
		End:             o.end,
		Manifests:       o.manifests,
		TokenHint:       streamable.TokenHint(h.tokenPath),
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	return nil
}

// Package sdklog sends the go-sdk's slog records to the zerolog logger
// of the server, at the levels they mean here.
package sdklog

import (
	"context"
	"log/slog"
	"strings"

	"github.com/rs/zerolog"
)

// slogHandler sends the go-sdk's slog records to our zerolog logger.
type slogHandler struct {
	log   zerolog.Logger
	attrs []slog.Attr
	group string
}

// New returns the slog handler that sends the go-sdk's records to log,
// marked component=go-sdk.
func New(log zerolog.Logger) slog.Handler {
	return &slogHandler{log: log.With().Str("component", "go-sdk").Logger()}
}

func (h *slogHandler) Enabled(_ context.Context, l slog.Level) bool {
	return h.log.GetLevel() <= zerologLevel(l)
}

func (h *slogHandler) Handle(_ context.Context, r slog.Record) error {
	level := zerologLevel(r.Level)
	if level == zerolog.WarnLevel && strings.HasPrefix(r.Message, "calling notifications/") {
		// A notification the go-sdk could not send: the client has gone
		// (stdin closed while the SDK was told of the tools), nothing for
		// the user to do, and a stdio client shows every stderr line as an
		// error.
		level = zerolog.DebugLevel
	}
	ev := h.log.WithLevel(level)
	if ev == nil {
		return nil
	}
	add := func(a slog.Attr) bool {
		key := a.Key
		if h.group != "" {
			key = h.group + "." + key
		}
		ev = ev.Interface(key, a.Value.Any())
		return true
	}
	for _, a := range h.attrs {
		add(a)
	}
	r.Attrs(add)
	ev.Msg(r.Message)
	return nil
}

func (h *slogHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = append(append([]slog.Attr(nil), h.attrs...), attrs...)
	return &h2
}

func (h *slogHandler) WithGroup(name string) slog.Handler {
	h2 := *h
	if h2.group != "" {
		name = h2.group + "." + name
	}
	h2.group = name
	return &h2
}

func zerologLevel(l slog.Level) zerolog.Level {
	switch {
	case l >= slog.LevelError:
		return zerolog.ErrorLevel
	case l >= slog.LevelWarn:
		return zerolog.WarnLevel
	case l >= slog.LevelInfo:
		// The SDK's info lines are about its own plumbing.
		return zerolog.DebugLevel
	default:
		return zerolog.TraceLevel
	}
}

package main

import (
	"context"
	"errors"
	"io"
	"io/fs"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
)

// serve runs the MCP server on stdio until stdin ends or ctx is cancelled.
func serve(ctx context.Context, o *options, stdin io.Reader, stdout, stderr io.Writer) error {
	log := o.newLogger(stderr)
	reg := loadRegistry(o, log)
	srv := mcpserver.New(o.serverConfig(log), reg)
	defer srv.Close()
	log.Info().Str("version", version).Int("tools", len(reg.Tools)).Str("manifests", o.manifests).
		Str("socket", o.socket).Str("transport", o.transport).Msg("serving")
	return srv.ServeStdio(ctx, &mcpserver.StdioTransport{
		In:           stdin,
		Out:          stdout,
		DrainTimeout: o.drainTimeout,
		Linger:       o.linger,
		Logger:       log,
	})
}

// loadRegistry loads the manifests; nothing about them is fatal.
func loadRegistry(o *options, log zerolog.Logger) *manifest.Registry {
	reg, err := manifest.Load(o.manifests, o.loadOptions(log))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		log.Warn().Str("manifests", o.manifests).Msg("manifests directory does not exist; serving no tools (create it, or set --manifests / TAIRSEACH_MANIFESTS)")
	case err != nil:
		log.Error().Err(err).Msg("reading manifests; serving no tools")
	}
	if reg == nil {
		reg = &manifest.Registry{}
	}
	for _, fe := range reg.FileErrors {
		log.Error().Str("file", fe.Path).Err(fe.Err).Msg("manifest skipped: " + fe.Error())
	}
	for _, p := range reg.Problems {
		ev := log.Warn()
		if p.Severity == manifest.Error {
			ev = log.Error()
		}
		ev.Str("file", p.File).Str("tool", p.Tool).Msg(p.Message)
	}
	return reg
}

func (o *options) serverConfig(log zerolog.Logger) mcpserver.Config {
	return mcpserver.Config{
		Version:        version,
		DefaultSocket:  o.socket,
		CallTimeout:    o.callTimeout,
		MaxResultBytes: o.maxResultBytes,
		OutputSchemas:  o.outputSchemas == "on",
		PoolSize:       o.poolSize,
		MaxInFlight:    o.maxInFlight,
		Logger:         log,
	}
}

package main

// The server the options describe, serve's and every command's alike
// (newServer), and the one a command opens on the manifests as they are
// now (openServer).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
	"github.com/geilt/tairseach-mcp/mcpserver/resources"
)

// errNoManifests is returned when the manifests directory does not exist.
var errNoManifests = errors.New("manifests directory does not exist")

// loadManifests loads the --manifests directory as serve does. A missing
// directory is an error here: the commands that inspect it have nothing
// to show.
func (o *options) loadManifests(log zerolog.Logger) (*manifest.Registry, error) {
	reg, err := manifest.Load(o.manifests, o.loadOptions(log))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s (create it, or pass --manifests / set TAIRSEACH_MANIFESTS)", errNoManifests, o.manifests)
	case err != nil:
		return nil, fmt.Errorf("%v (check --manifests / TAIRSEACH_MANIFESTS)", err)
	}
	return reg, nil
}

// openServer opens the server serve would run on reg, without a
// transport, as a client finds it: the --toolsets names checked, and the
// macOS permissions read once where the flags leave out what is not
// granted. What the commands (call, tools, doctor, prompts, resources)
// list, call and check through it is what a client would be offered. Its
// calls are recorded as serve records them (--audit-log, OpenTelemetry),
// with transport "cli". The caller calls done when it is through: it
// closes the server, then the audit log and the exporters.
func (o *options) openServer(ctx context.Context, reg *manifest.Registry, log zerolog.Logger) (srv *mcpserver.Server, done func(), err error) {
	// An unknown toolset is a mistake in the command line, as serve says.
	if err := o.checkToolsets(reg); err != nil {
		return nil, nil, err
	}
	obs, stopObs, err := o.obs.start(ctx, log)
	if err != nil {
		return nil, nil, err
	}
	obs.serve = false // no session to confirm a call, or to tell of its progress
	srv, _ = o.newServer(reg, log, obs)
	done = func() {
		_ = srv.Close()
		stopObs()
	}
	if o.hideUngranted {
		// An app that does not answer leaves them unknown: nothing is left
		// out, as a client is offered everything until they are read.
		rctx, cancel := context.WithTimeout(ctx, grantsTimeout)
		defer cancel()
		_, _ = srv.ReadPermissions(rctx)
	}
	return srv, done, nil
}

// grantsTimeout bounds the commands' read of the macOS permissions: as
// long as a client's first list waits for them.
const grantsTimeout = 3 * time.Second

// newServer makes the server the options describe, serve's and every
// command's alike: its config is made here alone, with the resources and
// prompts. With reg nil the manifests come later, by Apply. obs is what
// serve's sessions have besides (observe.go); the commands pass none.
func (o *options) newServer(reg *manifest.Registry, log zerolog.Logger, obs observers) (*mcpserver.Server, *featureSets) {
	if o.outputSchemasOn {
		log.Warn().Msg("--output-schemas=on is deprecated: it means strict now; the default, warn, does not fail successful calls whose replies do not match their outputSchema")
	}
	// The resources' status asks the server, made after them. The
	// features reach the backend through the pipeline of the server they are
	// attached to, which gives them each registry (Apply).
	var srv *mcpserver.Server
	feats := &featureSets{
		res: resources.New(resources.Config{
			LogsDir: o.features.logsDir, MaxBytes: o.features.resourceMaxBytes, ManifestsDir: o.manifests,
			Version: versionString(),
			Ping:    func(ctx context.Context) error { return srv.PingDefault(ctx) },
			Socket:  func() string { return srv.SocketPath() },
			Logger:  log.With().Str("feature", "resources").Logger(),
		}),
		prompts: prompts.New(prompts.Config{Dir: o.features.promptsDir, MaxBytes: o.maxResultBytes,
			Logger: log.With().Str("feature", "prompts").Logger()}),
	}
	// The serving rules travel as the one value the flags built; a person
	// who types a command is not asked to confirm it.
	pol := o.policy
	if !obs.serve {
		pol.Confirm = nil
	} else if len(pol.Confirm) > 0 {
		log.Info().Strs("confirm", pol.Confirm).Msg("calls of these tools are confirmed by the user first")
	}
	srv = mcpserver.New(mcpserver.Config{
		Version:             version,
		DefaultSocket:       o.socket,
		ResolveSocket:       o.resolveSocket,
		CallTimeout:         o.callTimeout,
		MaxResultBytes:      o.maxResultBytes,
		ResultBudget:        o.budget,
		OutputSchemas:       o.outputSchemas == "strict",
		CheckOutputs:        o.outputSchemas == "warn",
		PoolSize:            o.poolSize,
		MaxInFlight:         o.maxInFlight,
		InsecureSocket:      o.insecureSocket,
		Logger:              log,
		Policy:              pol,
		ToolMode:            o.toolMode,
		Prefix:              o.prefix,
		Media:               o.features.images(),
		HideUngranted:       o.hideUngranted,
		PermissionsInterval: o.permissionsInterval,
		Features:            []mcpserver.Feature{feats.res, feats.prompts},
		ProgressInterval:    obs.progressInterval,
		Audit:               obs.audit,
		Telemetry:           obs.telemetry,
	}, reg)
	return srv, feats
}

// featureSets are the resources and prompts of one server.
type featureSets struct {
	res     *resources.Set
	prompts *prompts.Set
}

// watch follows the logs and prompts directories until ctx ends.
func (fs *featureSets) watch(ctx context.Context, wg *sync.WaitGroup, log zerolog.Logger) {
	wg.Go(func() { _ = fs.res.Run(ctx) })
	wg.Go(func() {
		if err := fs.prompts.Run(ctx); err != nil {
			log.Warn().Err(err).Msg("prompt files no longer reload")
		}
	})
}

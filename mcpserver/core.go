package mcpserver

import (
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/gate"
	"github.com/geilt/tairseach-mcp/mcpserver/permissions"
	"github.com/geilt/tairseach-mcp/mcpserver/pipeline"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/mcpserver/routes"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// core is what every policy server of the server shares (policyserver.go):
// the flags, the one pipeline, the backend connections, the grants and the
// registry applied last. The Server holds the base policy server and owns
// those of its header selections; a policy server reads the core and
// never the Server.
type core struct {
	cfg  Config
	log  zerolog.Logger
	impl *mcp.Implementation
	// grants owns the macOS permissions as last read; every policy server reads
	// them from it.
	grants *permissions.Tracker
	ready  *gate.Gate         // "the manifests are ready": opened by the first Apply
	pipe   *pipeline.Pipeline // the one pipeline of every request that reaches the backend

	mu      sync.Mutex // serialises Apply; guards the fields below, the policy servers' sdkSynced and the selections
	clients map[string]*socketrpc.Client
	reg     *manifest.Registry // the registry applied last
}

// routeOptions are what a policy server's route table is built under besides the
// registry: its policy p, the grants as last read, the server's sockets'
// clients and its flags; what the build logs goes to log, the policy server's.
// s.mu must be held.
func (s *core) routeOptions(p policy.Policy, log zerolog.Logger) routes.Options {
	return routes.Options{
		Policy:        p,
		HideUngranted: s.cfg.HideUngranted,
		Grants:        s.grants.Grants(),
		Client:        s.client,
		GrantsClient:  s.grantsClient,
		CallTimeout:   s.cfg.CallTimeout,
		OutputSchemas: s.cfg.OutputSchemas,
		CheckOutputs:  s.cfg.CheckOutputs,
		Discover:      s.cfg.ToolMode == ToolModeDiscover,
		Prefix:        s.cfg.Prefix,
		Parts:         s.cfg.ResultBudget >= 0,
		Log:           log,
	}
}

// client returns the pooled client of a backend socket. s.mu must be held.
func (s *core) client(path string) *socketrpc.Client { return s.pooled("", path, s.cfg.PoolSize) }

// pooled returns the client of a backend socket for use, with a pool of
// size connections of its own. s.mu must be held.
func (s *core) pooled(use, path string, size int) *socketrpc.Client {
	key, resolve := use+path, (func() string)(nil)
	if path == "" {
		path, resolve = s.cfg.DefaultSocket, s.cfg.ResolveSocket
	}
	c, ok := s.clients[key] // use+"" is the default socket's, however it resolves
	if !ok {
		c = socketrpc.New(path, socketrpc.Options{
			Resolve:  resolve,
			PoolSize: size,
			// A reply's result or error cannot make a message smaller than
			// itself, so a reply over the message limit is refused as it is
			// read; the margin is the reply's own envelope.
			MaxResponseBytes: s.cfg.MaxResultBytes + pipeline.ReplyMargin,
			Insecure:         s.cfg.InsecureSocket,
			Logger:           s.log,
		})
		s.clients[key] = c
	}
	return c
}

// grantsClient is the client of the server's own reads of the grants on a
// backend socket: one connection of its own, apart from the pool of the
// calls. s.mu must be held.
func (s *core) grantsClient(path string) *socketrpc.Client { return s.pooled("grants:", path, 1) }

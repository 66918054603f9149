// Package resources serves MCP resources onto go-sdk servers: the files of
// the log directory (with subscriptions that follow appends), each loaded
// manifest, the bridge's status and the backend's permissions, and the
// resources and templates manifests declare, whose content is the reply of
// a socket method.
//
// A Set is made once; Attach adds it to each *mcp.Server (the base one
// and one per HTTP header selection, each with its caller and tool policy),
// Update follows manifest reloads, and Run watches the log directory. It
// reaches the backend only through the pipeline of the server a request came
// to, which applies that server's rules; subscriptions belong to the
// session that made them.
package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/attached"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/served"
)

// Defaults for Config fields left zero.
const (
	DefaultMaxBytes = 256 << 10
	DefaultPoll     = 250 * time.Millisecond
	DefaultTimeout  = 30 * time.Second
)

// Fixed URIs.
const (
	StatusURI      = "tairseach://status"
	PermissionsURI = "tairseach://permissions"
	ManifestPrefix = "tairseach://manifests/"
)

// The backend method the status resource shows, where a manifest maps it
// (the permissions resource shows permissions.MethodList).
const statusMethod = "server.status"

// Config is what a Set needs; every field may be zero.
type Config struct {
	// LogsDir is the directory whose regular files are resources; "" or a
	// missing directory gives none (until it appears).
	LogsDir string
	// MaxBytes is the most of a log a read returns, from its end.
	MaxBytes int64
	// ManifestsDir is where Registry.Files are, for the manifest resources.
	ManifestsDir string
	// Ping reports whether the default socket answers, for the status.
	Ping func(ctx context.Context) error
	// Socket is the default socket's path now, for the status.
	Socket  func() string
	Version string
	// Poll is how long after a change of the log directory it is looked
	// at (changes meanwhile are taken in the same look), and how often one
	// that cannot be watched is.
	Poll    time.Duration
	Timeout time.Duration // of one backend call
	Logger  zerolog.Logger
}

// Set is the resources of one bridge, served onto any number of servers.
type Set struct {
	cfg Config
	log zerolog.Logger

	mu       sync.Mutex // guards the fields below
	servers  attached.Servers[*attachment]
	reg      *manifest.Registry
	reloads  int
	lastErr  string
	logFiles map[string]logState // absolute path → what was seen; owned by Run, read under mu

	scans atomic.Int64 // looks through the log directory, for the tests
}

// attachment is one go-sdk server the Set registered onto.
type attachment struct {
	m      *mcp.Server
	caller backend.Caller
	hides  func(manifest.Tool) string
	// subs are the sessions subscribed to each URI, so that an append
	// nobody follows costs no notification work. A session's subscription
	// is its own: another's unsubscribe does not end it.
	subs map[string]map[*mcp.ServerSession]struct{}
	// nsubs counts them; at pruneAt those of ended sessions are let go.
	nsubs, pruneAt int
	fixed          map[string]string // URI → the resource's JSON and what it calls, as registered
	tmpls          map[string]string // URI template → the same
	decl           map[string]manifest.Resource
}

// New makes a Set; it serves nothing until Attach.
func New(cfg Config) *Set {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	s := &Set{cfg: cfg, log: cfg.Logger, reg: &manifest.Registry{}}
	s.servers = attached.New(&s.mu, s.sync)
	s.logFiles = s.scanLogs()
	return s
}

// entry is one fixed resource to register.
type entry struct {
	res *mcp.Resource
	h   mcp.ResourceHandler
	via string // what the handler calls, when it depends on the registry
}

// tools is the registry's tools as a's policy sees them; the policy is
// asked once per tool, not once per tool and resource.
type tools struct {
	served     map[string][]manifest.Tool // the tools a serves, by method
	hidden     map[string]string          // name → why a hides it
	hiddenFile map[string]bool            // a manifest with a tool a hides
}

// toolsOf sorts reg's tools by a's policy.
func toolsOf(reg *manifest.Registry, a *attachment) tools {
	ts := tools{served: map[string][]manifest.Tool{}, hidden: map[string]string{}, hiddenFile: map[string]bool{}}
	for _, t := range reg.Tools {
		if why := a.hides(t); why != "" {
			ts.hidden[t.Name] = why
			ts.hiddenFile[t.File] = true
		} else {
			ts.served[t.Method] = append(ts.served[t.Method], t)
		}
	}
	return ts
}

// serves reports whether a request of method, of the manifest file ("" for
// any), has a tool served to answer it. A resource of method is as visible
// as the tools of its method: it is listed when serves says so, and the
// pipeline that reads it takes the same tools (served.By).
func (ts tools) serves(method, file string) bool {
	return served.Any(ts.served[method], method, file)
}

// call asks a's caller for r, within timeout.
func call(ctx context.Context, a *attachment, timeout time.Duration, r *backend.Request) (json.RawMessage, error) {
	if a.caller == nil {
		return nil, fmt.Errorf("no backend")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return a.caller.Do(ctx, r)
}

// mimeFor guesses a log file's type from its name, ignoring a rotation
// suffix (proxy.log.1).
func mimeFor(name string) string {
	for {
		i := strings.LastIndexByte(name, '.')
		if i < 0 {
			return "text/plain"
		}
		ext := name[i+1:]
		if strings.Trim(ext, "0123456789") == "" {
			name = name[:i]
			continue
		}
		switch strings.ToLower(ext) {
		case "jsonl", "ndjson":
			return "application/x-ndjson"
		case "json":
			return "application/json"
		default:
			return "text/plain"
		}
	}
}

// logState is what was last seen of one log file.
type logState struct {
	size  int64
	mtime time.Time
	ino   uint64
}

// FileURI is the file:// URI of an absolute path.
func FileURI(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// errRefused is a log file that is not a regular file of this user.
var errRefused = errors.New("not a regular file of this user")

// Status is the content of tairseach://status.
type Status struct {
	Version string            `json:"version"`
	Socket  string            `json:"socket"`
	Answers bool              `json:"answers"`
	Problem string            `json:"problem,omitempty"`
	Served  []string          `json:"toolsServed"`
	Hidden  map[string]string `json:"toolsHidden"`
	Reloads int               `json:"manifestReloads"`
	LastErr string            `json:"lastReloadError,omitempty"`
	// Notes are what loading the manifests found, a file rejected or a
	// problem each, "file: severity: message" (the server logs them at
	// debug level only).
	Notes     []string        `json:"manifestNotes,omitempty"`
	LogsDir   string          `json:"logsDir,omitempty"`
	Server    json.RawMessage `json:"server,omitempty"`
	ServerErr string          `json:"serverStatusError,omitempty"`
}

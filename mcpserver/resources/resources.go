// Package resources serves MCP resources onto go-sdk servers: the files of
// the log directory (with subscriptions that follow appends), each loaded
// manifest, the bridge's status and the backend's permissions, and the
// resources and templates manifests declare, whose content is the reply of
// a socket method.
//
// A Set is made once; Attach registers it onto each *mcp.Server (the
// server's own and one per HTTP header selection, each with its tool
// policy), Update follows manifest reloads, and Run watches the log
// directory. It reaches the backend only through Config.Call.
package resources

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/completion"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/listed"
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

// Backend methods the status and permissions resources show, where a
// manifest maps them.
const (
	statusMethod      = "server.status"
	permissionsMethod = "permissions.list"
)

// Config is what a Set needs; every field may be zero.
type Config struct {
	// LogsDir is the directory whose regular files are resources; "" or a
	// missing directory gives none (until it appears).
	LogsDir string
	// MaxBytes is the most of a log a read returns, from its end.
	MaxBytes int64
	// ManifestsDir is where Registry.Files are, for the manifest resources.
	ManifestsDir string
	// Call reaches the backend.
	Call completion.CallFunc
	// Ping reports whether the default socket answers, for the status.
	Ping func(ctx context.Context) error
	// Socket is the default socket's path now, for the status.
	Socket  func() string
	Version string
	// Poll is how often the log directory is looked at.
	Poll    time.Duration
	Timeout time.Duration // of one backend call
	Logger  zerolog.Logger
}

// Set is the resources of one bridge, served onto any number of servers.
type Set struct {
	cfg Config
	log zerolog.Logger

	mu       sync.Mutex // guards the fields below
	servers  []*attachment
	reg      *manifest.Registry
	reloads  int
	lastErr  string
	logFiles map[string]logState // absolute path → what was seen; owned by Run, read under mu
	// subs counts subscriptions by URI, so that an append nobody follows
	// costs no notification work; a session that goes away without
	// unsubscribing leaves its count, which only costs that work.
	subs map[string]int
}

// attachment is one go-sdk server the Set registered onto.
type attachment struct {
	m     *mcp.Server
	hides func(manifest.Tool) string
	fixed map[string]string // URI → the resource's JSON and what it calls, as registered
	tmpls map[string]string // URI template → the same
	decl  map[string]manifest.Resource
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
	s := &Set{cfg: cfg, log: cfg.Logger, reg: &manifest.Registry{}, subs: map[string]int{}}
	s.logFiles = s.scanLogs()
	return s
}

// ServerOptions advertises resources with subscriptions and completes the
// variables of declared templates.
func (s *Set) ServerOptions(o *mcp.ServerOptions) {
	if o.Capabilities != nil {
		o.Capabilities.Resources = &mcp.ResourceCapabilities{ListChanged: true, Subscribe: true}
	}
	o.SubscribeHandler = s.subscribe
	o.UnsubscribeHandler = s.unsubscribe
	completion.Chain(o, s.complete)
}

// Attach registers the resources onto m; hides is m's tool policy: a
// resource that would show what it hides is left out.
func (s *Set) Attach(m *mcp.Server, hides func(manifest.Tool) string) {
	if hides == nil {
		hides = func(manifest.Tool) string { return "" }
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := &attachment{m: m, hides: hides, fixed: map[string]string{}, tmpls: map[string]string{}}
	(&listed.Gate{Lists: []string{"resources/list", "resources/templates/list"}, Notify: "notifications/resources/list_changed"}).Install(m)
	s.servers = append(s.servers, a)
	s.sync(a)
}

// Update follows a manifest reload: declared resources are registered anew
// (clients are told the list changed only if it did), and subscribers of
// the status and manifests are told they changed.
func (s *Set) Update(reg *manifest.Registry) {
	s.mu.Lock()
	s.reg = reg
	s.reloads++
	s.lastErr = ""
	if n := len(reg.FileErrors); n > 0 {
		s.lastErr = reg.FileErrors[n-1].Error()
	}
	servers := slices.Clone(s.servers)
	for _, a := range servers {
		s.sync(a)
	}
	s.mu.Unlock()
	uris := []string{StatusURI}
	for id := range reg.IDs {
		uris = append(uris, ManifestPrefix+id)
	}
	s.updated(servers, uris...)
}

// updated tells the subscribers of uris on every server.
func (s *Set) updated(servers []*attachment, uris ...string) {
	s.mu.Lock()
	uris = slices.DeleteFunc(slices.Clone(uris), func(u string) bool { return s.subs[u] == 0 })
	s.mu.Unlock()
	for _, a := range servers {
		for _, u := range uris {
			_ = a.m.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: u})
		}
	}
}

// entry is one fixed resource to register.
type entry struct {
	res *mcp.Resource
	h   mcp.ResourceHandler
	via string // what the handler calls, when it depends on the registry
}

// sync makes a's registered resources what they should be now. s.mu held.
func (s *Set) sync(a *attachment) {
	fixed := map[string]entry{}
	for path, st := range s.logFiles {
		r := s.logResource(path, st)
		fixed[r.URI] = entry{r, s.readLog, ""}
	}
	fixed[StatusURI] = entry{&mcp.Resource{URI: StatusURI, Name: "status", Title: "Tairseach bridge status",
		Description: "version, socket and whether it answers, tools served and hidden, manifest reloads, and the server's own status",
		MIMEType:    "application/json"}, s.readStatus(a), ""}
	if _, ok := s.methodTool(a, permissionsMethod); ok {
		fixed[PermissionsURI] = entry{&mcp.Resource{URI: PermissionsURI, Name: "permissions", Title: "macOS permissions",
			Description: "the Tairseach server's permissions.list reply: which macOS permissions it holds",
			MIMEType:    "application/json"}, s.readMethod(a, permissionsMethod), ""}
	}
	for id, file := range s.reg.IDs {
		if s.manifestHidden(a, file) {
			continue
		}
		u := ManifestPrefix + id
		fixed[u] = entry{&mcp.Resource{URI: u, Name: "manifest " + id, Description: "the manifest " + file,
			MIMEType: "application/json"}, s.readManifest(file), file}
	}
	tmpls := map[string]*mcp.ResourceTemplate{}
	decl := map[string]manifest.Resource{}
	for _, d := range s.reg.Resources {
		if !s.methodServed(a, d.File, d.Method) {
			continue
		}
		mime := d.MIMEType
		if mime == "" {
			mime = "application/json"
		}
		if d.URI != "" {
			fixed[d.URI] = entry{&mcp.Resource{URI: d.URI, Name: d.Name, Title: d.Title, Description: d.Description, MIMEType: mime}, s.readDeclared(d), d.Socket + " " + d.Method}
			continue
		}
		tmpls[d.URITemplate] = &mcp.ResourceTemplate{URITemplate: d.URITemplate, Name: d.Name, Title: d.Title, Description: d.Description, MIMEType: mime}
		decl[d.URITemplate] = d
	}
	a.decl = decl

	var gone []string
	for u := range a.fixed {
		if _, ok := fixed[u]; !ok {
			gone = append(gone, u)
			delete(a.fixed, u)
		}
	}
	if len(gone) > 0 {
		a.m.RemoveResources(gone...)
	}
	for u, e := range fixed {
		b, _ := json.Marshal(e.res)
		key := string(b) + "\x00" + e.via
		if a.fixed[u] == key {
			continue
		}
		if err := addResource(a.m, e); err != nil {
			s.log.Warn().Str("uri", u).Err(err).Msg("skipping resource")
			continue
		}
		a.fixed[u] = key
	}
	gone = gone[:0]
	for u := range a.tmpls {
		if _, ok := tmpls[u]; !ok {
			gone = append(gone, u)
			delete(a.tmpls, u)
		}
	}
	if len(gone) > 0 {
		a.m.RemoveResourceTemplates(gone...)
	}
	for u, t := range tmpls {
		b, _ := json.Marshal(t)
		d := decl[u]
		vars, _ := json.Marshal([]any{d.Socket, d.Method, d.Complete, d.Enum})
		key := string(b) + "\x00" + string(vars)
		if a.tmpls[u] == key {
			continue
		}
		if err := addTemplate(a.m, t, s.readTemplate(decl[u])); err != nil {
			s.log.Warn().Str("uriTemplate", u).Err(err).Msg("skipping resource template")
			continue
		}
		a.tmpls[u] = key
	}
}

// addResource registers e; the go-sdk panics on a URI it cannot parse.
func addResource(m *mcp.Server, e entry) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("go-sdk refused it: %v", p)
		}
	}()
	m.AddResource(e.res, e.h)
	return nil
}

func addTemplate(m *mcp.Server, t *mcp.ResourceTemplate, h mcp.ResourceHandler) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("go-sdk refused it: %v", p)
		}
	}()
	m.AddResourceTemplate(t, h)
	return nil
}

// methodTool returns a tool a's policy serves that calls method.
func (s *Set) methodTool(a *attachment, method string) (manifest.Tool, bool) {
	for _, t := range s.reg.Tools {
		if t.Method == method && a.hides(t) == "" {
			return t, true
		}
	}
	return manifest.Tool{}, false
}

// methodServed reports whether a's policy serves a tool of file that calls
// method: a declared resource is as visible as the tools of its method.
func (s *Set) methodServed(a *attachment, file, method string) bool {
	for _, t := range s.reg.Tools {
		if t.File == file && t.Method == method && a.hides(t) == "" {
			return true
		}
	}
	return false
}

// manifestHidden reports whether a's policy hides a tool of file, whose
// definition the manifest's text would show.
func (s *Set) manifestHidden(a *attachment, file string) bool {
	for _, t := range s.reg.Tools {
		if t.File == file && a.hides(t) != "" {
			return true
		}
	}
	return false
}

// known reports whether uri is a fixed resource of some server.
func (s *Set) known(uri string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.servers {
		if _, ok := a.fixed[uri]; ok {
			return true
		}
	}
	return false
}

// subscribe accepts subscriptions to the fixed resources; only logs,
// manifests and the status ever report an update.
func (s *Set) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	if !s.known(req.Params.URI) {
		return mcp.ResourceNotFoundError(req.Params.URI)
	}
	s.mu.Lock()
	s.subs[req.Params.URI]++
	s.mu.Unlock()
	return nil
}

func (s *Set) unsubscribe(_ context.Context, req *mcp.UnsubscribeRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs[req.Params.URI] > 1 {
		s.subs[req.Params.URI]--
	} else {
		delete(s.subs, req.Params.URI)
	}
	return nil
}

// call calls method with the Set's timeout.
func (s *Set) call(ctx context.Context, socket, method string, params json.RawMessage) (json.RawMessage, error) {
	if s.cfg.Call == nil {
		return nil, fmt.Errorf("no backend")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	return s.cfg.Call(ctx, socket, method, params)
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

// Package prompts serves MCP prompts onto go-sdk servers: one per Markdown
// file of a prompts directory (YAML front matter for the description and
// arguments, a body with {{argument}} placeholders) and the prompts
// manifests declare. It renders prompts/get, completes arguments, and
// watches the directory, so that clients are told when the list changes.
package prompts

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/completion"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/attached"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/dirwatch"
	"github.com/geilt/tairseach-mcp/mcpserver/internal/listed"
)

// DefaultDebounce is how long the directory must be quiet before a reload.
const DefaultDebounce = 150 * time.Millisecond

// Config is what a Set needs; every field may be zero.
type Config struct {
	Dir      string
	Debounce time.Duration
	// MaxBytes bounds the text of a prompt rendered; zero is no bound.
	// Its message is measured again as it is written (--max-result-bytes).
	MaxBytes int
	Logger   zerolog.Logger
}

// Set is the prompts of one bridge, served onto any number of servers.
type Set struct {
	cfg Config
	log zerolog.Logger

	mu      sync.Mutex // guards the fields below
	files   []*Prompt  // from Dir, as last loaded
	reg     *manifest.Registry
	servers attached.Servers[*attachment]

	loads atomic.Int64 // reads of the directory, for the tests
}

type attachment struct {
	m      *mcp.Server
	caller backend.Caller
	hides  func(manifest.Tool) string
	served map[string]*Prompt // name → what is registered
	defs   map[string]string  // name → its JSON
}

// New makes a Set and loads the prompts directory once.
func New(cfg Config) *Set {
	if cfg.Debounce <= 0 {
		cfg.Debounce = DefaultDebounce
	}
	s := &Set{cfg: cfg, log: cfg.Logger, reg: &manifest.Registry{}}
	s.servers = attached.New(&s.mu, s.sync)
	s.files = s.load()
	return s
}

// load reads the directory, warning of each broken file.
func (s *Set) load() []*Prompt {
	s.loads.Add(1)
	if s.cfg.Dir == "" {
		return nil
	}
	ps, errs := LoadDir(s.cfg.Dir)
	for _, err := range errs {
		s.log.Warn().Err(err).Msg("skipping prompt file")
	}
	return ps
}

// Attach adds the prompts to a go-sdk server being made: o advertises
// prompts that can change and completes their arguments; the function
// returned registers them onto the server. v is the server's caller and its
// sessions' tool policy: a manifest's prompts are left out when the policy
// hides every tool of that manifest.
func (s *Set) Attach(o *mcp.ServerOptions, v backend.View) func(*mcp.Server) {
	hides := v.Hides
	if hides == nil {
		hides = func(manifest.Tool) string { return "" }
	}
	a := &attachment{caller: v.Caller, hides: hides, served: map[string]*Prompt{}, defs: map[string]string{}}
	if o.Capabilities != nil {
		o.Capabilities.Prompts = &mcp.PromptCapabilities{ListChanged: true}
	}
	completion.Chain(o, func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool) {
		return s.complete(ctx, a, req)
	})
	return func(m *mcp.Server) {
		a.m = m // before any other goroutine can see a
		s.servers.Attach(m, a, &listed.Gate{Lists: []string{"prompts/list"}, Notify: "notifications/prompts/list_changed"})
	}
}

// Resync brings every server's prompts in step with its policy, which
// changed without a reload.
func (s *Set) Resync() { s.servers.Resync() }

// Detach forgets m, a server no longer served: its prompts are no
// longer kept in step with reloads.
func (s *Set) Detach(m *mcp.Server) { s.servers.Detach(m) }

// Update follows a manifest reload.
func (s *Set) Update(reg *manifest.Registry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reg = reg
	s.servers.SyncLocked()
}

// Reload reads the prompts directory again.
func (s *Set) Reload() {
	files := s.load()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = files
	s.servers.SyncLocked()
}

// wanted are the prompts to serve under hides. s.mu held.
func (s *Set) wanted(hides func(manifest.Tool) string) map[string]*Prompt {
	want := map[string]*Prompt{}
	served := map[string]bool{} // a tool of the manifest file is served; hides asked once per tool
	for _, t := range s.reg.Tools {
		if !served[t.File] && hides(t) == "" {
			served[t.File] = true
		}
	}
	for _, d := range s.reg.Prompts {
		if !served[d.File] {
			continue
		}
		want[d.Name] = &Prompt{Name: d.Name, Title: d.Title, Description: d.Description, Arguments: d.Arguments,
			Template: d.Template, Source: d.File, Manifest: d.File, Socket: d.Socket}
	}
	for _, p := range s.files {
		if prev, ok := want[p.Name]; ok {
			s.log.Debug().Str("prompt", p.Name).Str("file", p.Source).Str("manifest", prev.Source).Msg("a prompt file replaces a manifest's prompt of the same name")
		}
		want[p.Name] = p
	}
	return want
}

// sync registers what a should serve now; the go-sdk tells clients the
// list changed when it did. s.mu held.
func (s *Set) sync(a *attachment) {
	want := s.wanted(a.hides)
	attached.Register(a.defs, want, func(p *Prompt) string {
		b, _ := json.Marshal(struct {
			D *mcp.Prompt
			T string
		}{p.def(), p.Template})
		return string(b)
	}, a.m.RemovePrompts, func(_ string, p *Prompt) error {
		a.m.AddPrompt(p.def(), s.get(p))
		return nil
	})
	a.served = want
}

// def is p's definition as prompts/list shows it.
func (p *Prompt) def() *mcp.Prompt {
	d := &mcp.Prompt{Name: p.Name, Title: p.Title, Description: p.Description}
	for _, a := range p.Arguments {
		d.Arguments = append(d.Arguments, &mcp.PromptArgument{Name: a.Name, Description: a.Description, Required: a.Required})
	}
	return d
}

// get renders p; a bad argument is invalid params naming it.
func (s *Set) get(p *Prompt) mcp.PromptHandler {
	return func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if n := p.Size(req.Params.Arguments); s.cfg.MaxBytes > 0 && n > s.cfg.MaxBytes {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(
				"prompt %s with these arguments would be %d bytes, over the limit of %d (--max-result-bytes); get it with shorter arguments", p.Name, n, s.cfg.MaxBytes)}
		}
		text, err := p.Render(req.Params.Arguments)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
		return &mcp.GetPromptResult{Description: p.Description, Messages: []*mcp.PromptMessage{
			{Role: "user", Content: &mcp.TextContent{Text: text}},
		}}, nil
	}
}

// complete answers completion/complete for the arguments of the prompts a
// serves: from their enum, else the method they name, asked through a's
// caller (a manifest's prompt as that manifest's tools call it, a file's as
// any tool served calls it).
func (s *Set) complete(ctx context.Context, a *attachment, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool) {
	ref := req.Params.Ref
	if ref == nil || ref.Type != "ref/prompt" {
		return nil, false
	}
	arg := req.Params.Argument
	s.mu.Lock()
	var found *manifest.PromptArgument
	p, has := a.served[ref.Name]
	if has {
		for i := range p.Arguments {
			if p.Arguments[i].Name == arg.Name {
				found = &p.Arguments[i]
			}
		}
	}
	s.mu.Unlock()
	if found == nil {
		return completion.Result(nil), true
	}
	if len(found.Enum) > 0 {
		return completion.Result(completion.Enum(found.Enum, arg.Value)), true
	}
	return completion.Result(completion.FromMethod(ctx, a.caller, backend.Request{Target: "ref/prompt " + ref.Name + " " + arg.Name,
		Method: found.Complete, Manifest: p.Manifest, From: req}, arg.Value)), true
}

// Run watches the prompts directory until ctx ends, reloading once it has
// been quiet for Config.Debounce. Events are drained at once and the
// debounce is in this one goroutine (fsnotify#502). A directory that does
// not exist yet is looked for every second; one watched is not looked at
// until it changes. One too large to watch here (watchable.TooLarge) is
// looked at every second, and read again when its modification time
// changed.
func (s *Set) Run(ctx context.Context) error {
	if s.cfg.Dir == "" {
		return nil
	}
	w, err := dirwatch.New(dirwatch.Config{Dir: s.cfg.Dir, Delay: s.cfg.Debounce, Quiet: true, ByModTime: true,
		Errors: func(err error) { s.log.Debug().Err(err).Msg("prompts watcher") }})
	if err != nil {
		return fmt.Errorf("watching prompts: %w", err)
	}
	defer w.Close()
	for {
		if _, ok := w.Next(ctx); !ok {
			return nil
		}
		s.Reload()
	}
}

package prompts_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
)

const findContact = `---
description: Find a contact
arguments:
  - name: who
    description: a name
    required: true
  - name: channel
    enum: [email, phone]
---
Find {{who}} and reach them by {{ channel }}.
`

func TestParseAndRender(t *testing.T) {
	p, err := prompts.ParseFile("find-contact", []byte(findContact))
	if err != nil {
		t.Fatal(err)
	}
	if p.Description != "Find a contact" || len(p.Arguments) != 2 || !p.Arguments[0].Required {
		t.Fatalf("parsed %+v", p)
	}
	tests := []struct {
		args map[string]string
		want string // text, or the error's text
	}{
		{map[string]string{"who": "Ada", "channel": "email"}, "Find Ada and reach them by email.\n"},
		{map[string]string{"who": "Ada"}, "Find Ada and reach them by .\n"},
		{map[string]string{}, `missing required argument "who"`},
		{map[string]string{"who": "Ada", "colour": "red"}, `unknown argument "colour"`},
		{map[string]string{"who": "Ada", "channel": "fax"}, `argument "channel" of prompt find-contact must be one of email, phone`},
	}
	for _, tt := range tests {
		got, err := p.Render(tt.args)
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("Render(%v) = %q, want %q", tt.args, got, tt.want)
		}
	}
}

func TestParseBroken(t *testing.T) {
	for name, data := range map[string]string{
		"unclosed":        "---\ndescription: x\nbody {{a}}\n",
		"bad yaml":        "---\ndescription: [x\n---\nbody\n",
		"unknown key":     "---\ndescriptoin: x\n---\nbody\n",
		"undeclared":      "---\ndescription: x\n---\nhello {{who}}\n",
		"empty body":      "---\ndescription: x\n---\n\n",
		"twice":           "---\narguments: [{name: a}, {name: a}]\n---\n{{a}}\n",
		"nameless":        "---\narguments: [{description: a}]\n---\nx\n",
		"arguments typed": "---\narguments: {a: 1}\n---\nx\n",
	} {
		if _, err := prompts.ParseFile("p", []byte(data)); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
	if _, err := prompts.ParseFile("bad/name", []byte("x")); err == nil {
		t.Error("a name with a slash parsed")
	}
	if p, err := prompts.ParseFile("plain", []byte("no front matter\n")); err != nil || p.Template != "no front matter\n" {
		t.Errorf("no front matter: %+v %v", p, err)
	}
}

type harness struct {
	set     *prompts.Set
	cs      *mcp.ClientSession
	changed chan struct{}
}

func start(t *testing.T, dir string, reg *manifest.Registry) *harness {
	t.Helper()
	h := &harness{changed: make(chan struct{}, 64)}
	h.set = prompts.New(prompts.Config{Dir: dir, Debounce: 20 * time.Millisecond})
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}}
	register := h.set.Attach(opts, backend.View{})
	srv := mcp.NewServer(&mcp.Implementation{Name: "t"}, opts)
	register(srv)
	if reg != nil {
		h.set.Update(reg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); h.set.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	h.cs, err = mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { h.changed <- struct{}{} },
	}).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.cs.Close() })
	return h
}

func names(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	l, err := cs.ListPrompts(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, p := range l.Prompts {
		n = append(n, p.Name)
	}
	return strings.Join(n, ",")
}

func code(err error) int64 {
	var je *jsonrpc.Error
	if errors.As(err, &je) {
		return je.Code
	}
	return 0
}

func TestServeAndWatch(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "find-contact.md"), []byte(findContact), 0o600)
	os.WriteFile(filepath.Join(dir, "broken.md"), []byte("---\nnope: [\n"), 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a prompt"), 0o600)
	f, err := manifest.ParseFile("m.json", []byte(`{"id":"m","tools":[{"name":"a.b","inputSchema":{"type":"object"}}],
		"implementation":{"methods":{"a.b":"a.b"}},
		"prompts":[{"name":"inline","description":"from a manifest","arguments":[{"name":"x","required":true}],"template":"x is {{x}}"}]}`), manifest.Options{})
	if err != nil || len(f.Prompts) != 1 {
		t.Fatalf("manifest prompts: %v %+v", err, f)
	}
	h := start(t, dir, manifest.Build([]*manifest.File{f}))
	ctx := context.Background()
	if got := names(t, h.cs); got != "find-contact,inline" {
		t.Fatalf("prompts: %s", got)
	}
	res, err := h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "inline", Arguments: map[string]string{"x": "1"}})
	if err != nil || res.Messages[0].Content.(*mcp.TextContent).Text != "x is 1" {
		t.Fatalf("inline: %v", err)
	}
	_, err = h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "find-contact"})
	if code(err) != jsonrpc.CodeInvalidParams || !strings.Contains(err.Error(), `"who"`) {
		t.Fatalf("missing argument: %v", err)
	}
	_, err = h.cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "nope"})
	if code(err) != jsonrpc.CodeInvalidParams {
		t.Fatalf("unknown prompt: %v", err)
	}
	cr, err := h.cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "find-contact"},
		Argument: mcp.CompleteParamsArgument{Name: "channel", Value: "e"}})
	if err != nil || strings.Join(cr.Completion.Values, ",") != "email" {
		t.Fatalf("completion: %+v %v", cr, err)
	}

	wait := func(what string) {
		t.Helper()
		select {
		case <-h.changed:
		case <-time.After(2 * time.Second):
			t.Fatalf("no list_changed after %s", what)
		}
	}
	os.WriteFile(filepath.Join(dir, "new.md"), []byte("hello\n"), 0o600)
	wait("a new file")
	if got := names(t, h.cs); got != "find-contact,inline,new" {
		t.Fatalf("after adding: %s", got)
	}
	os.WriteFile(filepath.Join(dir, "new.md"), []byte("---\nbroken\n"), 0o600)
	wait("breaking a file")
	if got := names(t, h.cs); got != "find-contact,inline" {
		t.Fatalf("a broken file is served: %s", got)
	}
	os.Remove(filepath.Join(dir, "find-contact.md"))
	wait("a removal")
	if got := names(t, h.cs); got != "inline" {
		t.Fatalf("after removing: %s", got)
	}
}

func TestCompleteFromMethod(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "card.md"), []byte("---\narguments:\n  - name: id\n    complete: contacts.search\n  - name: other\n    complete: contacts.delete\n---\nshow {{id}} {{other}}\n"), 0o600)
	f, err := manifest.ParseFile("c.json", []byte(`{"id":"c","tools":[
		{"name":"contacts.search","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}},
		{"name":"contacts.delete","inputSchema":{"type":"object"}}],
		"implementation":{"methods":{"contacts.search":"contacts.search","contacts.delete":"contacts.delete"}}}`), manifest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var called []string
	set := prompts.New(prompts.Config{Dir: dir})
	caller := callerFunc(func(_ context.Context, r *backend.Request) (json.RawMessage, error) {
		called = append(called, fmt.Sprintf("%s %s %s manifest=%q", r.Kind, r.Method, r.Params, r.Manifest))
		if r.Method == "contacts.delete" {
			// The pipeline takes a completion only as a read-only tool calls it.
			return nil, &backend.Refused{Rule: backend.RuleHidden, Message: "refused"}
		}
		return json.RawMessage(`{"contacts":[{"id":"c-001"},{"id":"c-002"}]}`), nil
	})
	opts := &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{}}
	register := set.Attach(opts, backend.View{Caller: caller})
	srv := mcp.NewServer(&mcp.Implementation{Name: "t"}, opts)
	register(srv)
	set.Update(manifest.Build([]*manifest.File{f}))
	ct, st := mcp.NewInMemoryTransports()
	ss, _ := srv.Connect(context.Background(), st, nil)
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	complete := func(arg string) []string {
		res, err := cs.Complete(context.Background(), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "card"},
			Argument: mcp.CompleteParamsArgument{Name: arg, Value: "ad"}})
		if err != nil {
			t.Fatal(err)
		}
		return res.Completion.Values
	}
	if got := complete("id"); strings.Join(got, ",") != "c-001,c-002" || strings.Join(called, ";") != `completion contacts.search {"query":"ad"} manifest=""` {
		t.Fatalf("completion from contacts.search: %v, calls %v", got, called)
	}
	// A refused completion offers nothing.
	if got := complete("other"); len(got) != 0 || len(called) != 2 {
		t.Fatalf("completion the pipeline refused: %v, calls %v", got, called)
	}
}

// callerFunc stands in for the server's pipeline.
type callerFunc func(context.Context, *backend.Request) (json.RawMessage, error)

func (f callerFunc) Do(ctx context.Context, r *backend.Request) (json.RawMessage, error) {
	return f(ctx, r)
}

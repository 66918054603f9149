package listed_test

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/mcpserver/internal/listed"
)

func TestGate(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "t"}, &mcp.ServerOptions{Capabilities: &mcp.ServerCapabilities{Prompts: &mcp.PromptCapabilities{ListChanged: true}}})
	(&listed.Gate{Lists: []string{"prompts/list"}, Notify: "notifications/prompts/list_changed"}).Install(srv)
	changed := make(chan struct{}, 8)
	ct, st := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "c"}, &mcp.ClientOptions{
		PromptListChangedHandler: func(context.Context, *mcp.PromptListChangedRequest) { changed <- struct{}{} },
	}).Connect(context.Background(), ct, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	handler := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}

	srv.AddPrompt(&mcp.Prompt{Name: "a"}, handler)
	select {
	case <-changed:
		t.Fatal("list_changed to a session that never listed")
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := cs.ListPrompts(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	srv.AddPrompt(&mcp.Prompt{Name: "b"}, handler)
	select {
	case <-changed:
	case <-time.After(2 * time.Second):
		t.Fatal("no list_changed after listing")
	}
}

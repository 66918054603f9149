// Command democlient is the MCP client of `make demo`: it starts the bridge
// as a subprocess (the way Claude Desktop does), lists its tools, and makes a
// call that succeeds and one that fails, printing what a person would want
// to see.
//
// Usage: democlient BRIDGE [BRIDGE-ARGS...]
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: democlient BRIDGE [BRIDGE-ARGS...]")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2:]); err != nil {
		fmt.Fprintf(os.Stderr, "democlient: %v\n", err)
		os.Exit(1)
	}
}

func run(bridge string, args []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(bridge, args...)
	cmd.Stderr = os.Stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "tairseach-demo-client", Version: "0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return fmt.Errorf("starting %s: %w", bridge, err)
	}
	defer cs.Close()
	info := cs.InitializeResult().ServerInfo
	heading("initialize → %s %s", info.Name, info.Version)

	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	heading("tools/list → %d tools", len(list.Tools))
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	for _, t := range list.Tools {
		fmt.Fprintf(tw, "  %s\t%s\n", t.Name, t.Description)
	}
	tw.Flush()

	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"tairseach_server_status", nil},
		{"tairseach_contacts_search", map[string]any{"query": "ni", "limit": 2}},
		{"tairseach_demo_fail", nil},
		{"tairseach_no_such_tool", nil},
	} {
		a, _ := json.Marshal(c.args)
		if c.args == nil {
			a = []byte("{}")
		}
		heading("tools/call %s %s", c.name, a)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil {
			fmt.Printf("  JSON-RPC error: %v\n", err)
			continue
		}
		fmt.Printf("  isError: %v\n", res.IsError)
		for _, content := range res.Content {
			if t, ok := content.(*mcp.TextContent); ok {
				fmt.Println(indent(t.Text))
			}
		}
	}
	return demoPrompt(ctx, cs)
}

// demoPrompt lists the prompts (make demo passes --prompts-dir
// manifests.example/prompts) and renders one, then reads a resource a
// manifest declares.
func demoPrompt(ctx context.Context, cs *mcp.ClientSession) error {
	prompts, err := cs.ListPrompts(ctx, nil)
	if err != nil {
		return err
	}
	heading("prompts/list → %d prompts", len(prompts.Prompts))
	for _, p := range prompts.Prompts {
		fmt.Printf("  %s\t%s\n", p.Name, p.Description)
	}
	if !slices.ContainsFunc(prompts.Prompts, func(p *mcp.Prompt) bool { return p.Name == "find-contact" }) {
		fmt.Println("  (find-contact is in manifests.example/prompts: pass --prompts-dir manifests.example/prompts)")
		return nil
	}
	heading(`prompts/get find-contact {"who":"Anna","channel":"email"}`)
	got, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "find-contact", Arguments: map[string]string{"who": "Anna", "channel": "email"}})
	if err != nil {
		fmt.Printf("  JSON-RPC error: %v\n", err)
	} else {
		for _, m := range got.Messages {
			if t, ok := m.Content.(*mcp.TextContent); ok {
				fmt.Printf("  %s: %s\n", m.Role, strings.ReplaceAll(strings.TrimSpace(t.Text), "\n", "\n  "))
			}
		}
	}
	heading("resources/read tairseach://contacts/c-001")
	r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "tairseach://contacts/c-001"})
	if err != nil {
		fmt.Printf("  JSON-RPC error: %v\n", err)
		return nil
	}
	for _, c := range r.Contents {
		fmt.Println(indent(c.Text))
	}
	return nil
}

func heading(format string, args ...any) {
	fmt.Printf("\n== "+format+"\n", args...)
}

// indent pretty-prints JSON text, or indents it as it is.
func indent(s string) string {
	var buf bytes.Buffer
	if json.Indent(&buf, []byte(s), "  ", "  ") == nil {
		return "  " + buf.String()
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

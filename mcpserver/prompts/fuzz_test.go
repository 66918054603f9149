package prompts_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
)

// FuzzParseFile: no prompt file makes the parser or Render panic, and a
// parsed prompt renders with its required arguments.
func FuzzParseFile(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "manifests.example", "prompts", "*.md"))
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(findContact))
	f.Add([]byte("---\n---\n{{}}"))
	f.Add([]byte("---\narguments: [{name: a, enum: [x]}]\n---\n{{a}}{{ a }}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := prompts.ParseFile("p", data)
		if err != nil {
			return
		}
		args := map[string]string{}
		for _, a := range p.Arguments {
			if a.Required {
				args[a.Name] = "v"
				if len(a.Enum) > 0 {
					args[a.Name] = a.Enum[0]
				}
			}
		}
		text, err := p.Render(args)
		if err != nil {
			t.Fatalf("a parsed prompt does not render with its required arguments: %v", err)
		}
		if strings.TrimSpace(p.Template) != "" && text == "" && !strings.Contains(p.Template, "{{") {
			t.Fatal("rendered nothing")
		}
	})
}

package mcpserver

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
)

// TestRefusalsShowInvisibleCharactersEscaped: what a model is told of the
// words it chose, or a backend or a manifest wrote, is what they are. An
// unknown tool, an argument the inputSchema refuses or its value, an
// argument sent twice, a prompt's argument, a tool to describe, each with U+3164
// (a Hangul filler, which renders as nothing and which fmt's %q prints as
// it is), is shown with it escaped, so that it cannot pass for the name
// without it.
func TestRefusalsShowInvisibleCharactersEscaped(t *testing.T) {
	const filler = "\u3164"
	for _, tt := range []struct {
		name     string
		discover bool
		request  string
		want     string // in the answer, as JSON writes it
	}{
		{"unknown tool", false, `"tools/call","params":{"name":"tairseach_contacts_list` + filler + `","arguments":{}}`, `unknown tool \"tairseach_contacts_list\\u3164\"`},
		{"unexpected argument", false, `"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms` + filler + `":1}}`, `unexpected argument \"ms\\u3164\"`},
		{"argument's value", false, `"tools/call","params":{"name":"tairseach_demo_slow","arguments":{"ms":"1` + filler + `"}}`, `got \"1\\u3164\"`},
		{"argument sent twice", false, `"tools/call","params":{"name":"tairseach_demo_echo","arguments":{"a` + filler + `":1,"a` + filler + `":2}}`, `member \"a\\u3164\" appears more than once`},
		{"prompt argument", false, `"prompts/get","params":{"name":"contact-card","arguments":{"id":"c-001","id` + filler + `":"c-002"}}`, `unknown argument \"id\\u3164\"`},
		{"tool to describe", true, `"tools/call","params":{"name":"tairseach_describe_tool","arguments":{"name":"tairseach_contacts_list` + filler + `"}}`, `unknown tool \"tairseach_contacts_list\\u3164\"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			reg := loadExample(t)
			ps := prompts.New(prompts.Config{Logger: zerolog.Nop()})
			ps.Update(reg)
			cfg := Config{DefaultSocket: startDemo(t), Logger: zerolog.Nop(), Prefix: "tairseach_", Features: []Feature{ps}}
			if tt.discover {
				cfg.ToolMode = ToolModeDiscover
			}
			srv := New(cfg, reg)
			t.Cleanup(func() { srv.Close() })
			s := startRawSession(t, srv)
			s.send(`{"jsonrpc":"2.0","id":1,"method":` + tt.request + `}`)
			got := s.next()
			if strings.Contains(got, filler) || !strings.Contains(got, tt.want) {
				t.Errorf("want %s, and no U+3164 as it is:\n%s", tt.want, strings.ReplaceAll(got, filler, "<U+3164>"))
			}
		})
	}
}

package mcpserver

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
)

// orderFeature records, at each registry it is given, whether the server
// had taken it already.
type orderFeature struct {
	srv  *Server
	late []bool // per Update: the server served the registry's tool before its features had it
}

func (f *orderFeature) Attach(*mcp.ServerOptions, backend.View) func(*mcp.Server) {
	return func(*mcp.Server) {}
}
func (f *orderFeature) Detach(*mcp.Server) {}
func (f *orderFeature) Resync()            {}
func (f *orderFeature) Update(reg *manifest.Registry) {
	select {
	case <-f.srv.Ready():
		f.late = append(f.late, f.srv.HasTool(reg.Tools[0].Name))
	default: // the first registry: nothing was let through yet
		f.late = append(f.late, false)
	}
}

// TestApplyGivesFeaturesTheRegistryFirst: the features have each registry
// before the server serves it, so that the requests for what they declare,
// let through by the server's first registry, find it.
func TestApplyGivesFeaturesTheRegistryFirst(t *testing.T) {
	f := &orderFeature{}
	srv := New(Config{DefaultSocket: "/x", Logger: zerolog.Nop(), Prefix: "t_", Features: []Feature{f}}, nil)
	defer srv.Close()
	f.srv = srv
	for _, name := range []string{"a", "b"} {
		srv.Apply(registryOf(t, `{"id":"t","tools":[{"name":"`+name+`","inputSchema":{"type":"object"}}],
			"implementation":{"methods":{"`+name+`":"`+name+`"}}}`))
	}
	if len(f.late) != 2 || f.late[0] || f.late[1] {
		t.Errorf("updates %v: want two, each before the server took its registry", f.late)
	}
	select {
	case <-srv.Ready():
	default:
		t.Error("the server is not ready after Apply")
	}
}

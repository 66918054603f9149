package resources

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Status is the content of tairseach://status.
type Status struct {
	Version   string            `json:"version"`
	Socket    string            `json:"socket"`
	Answers   bool              `json:"answers"`
	Problem   string            `json:"problem,omitempty"`
	Served    []string          `json:"toolsServed"`
	Hidden    map[string]string `json:"toolsHidden"`
	Reloads   int               `json:"manifestReloads"`
	LastErr   string            `json:"lastReloadError,omitempty"`
	LogsDir   string            `json:"logsDir,omitempty"`
	Server    json.RawMessage   `json:"server,omitempty"`
	ServerErr string            `json:"serverStatusError,omitempty"`
}

// readStatus reports the bridge's state as a's policy sees it, with the
// backend's server.status reply where a manifest maps it.
func (s *Set) readStatus(a *attachment) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		st := Status{Version: s.cfg.Version, Hidden: map[string]string{}, Served: []string{}, LogsDir: s.logsDir()}
		if s.cfg.Socket != nil {
			st.Socket = s.cfg.Socket()
		}
		s.mu.Lock()
		for _, t := range s.reg.Tools {
			if why := a.hides(t); why != "" {
				st.Hidden[t.Name] = why
			} else {
				st.Served = append(st.Served, t.Name)
			}
		}
		for _, sk := range s.reg.Skipped {
			if _, ok := st.Hidden[sk.Name]; !ok {
				st.Hidden[sk.Name] = sk.Detail
			}
		}
		st.Reloads, st.LastErr = max(0, s.reloads-1), s.lastErr
		t, mapped := s.methodTool(a, statusMethod)
		s.mu.Unlock()
		slices.Sort(st.Served)
		if s.cfg.Ping != nil {
			pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := s.cfg.Ping(pctx)
			cancel()
			st.Answers = err == nil
			if err != nil {
				st.Problem = err.Error()
			}
		}
		if mapped && st.Answers {
			out, err := s.call(ctx, t.Socket, statusMethod, json.RawMessage("{}"))
			if err != nil {
				st.ServerErr = err.Error()
			} else if json.Valid(out) {
				st.Server = out
			}
		}
		b, err := json.Marshal(st)
		if err != nil {
			return nil, err
		}
		return jsonContents(req.Params.URI, "application/json", b), nil
	}
}

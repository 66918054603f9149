package resources

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/jsonscan"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/completion"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// jsonContents is a read result of one JSON text.
func jsonContents(uri, mime string, b []byte) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(b)}}}
}

// backendError turns a failed call into the read's JSON-RPC error.
func backendError(uri, method string, err error) error {
	var re *socketrpc.Error
	if errors.As(err, &re) {
		if re.Code == -32002 {
			return mcp.ResourceNotFoundError(uri)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s failed: %s (%d)", method, re.Message, re.Code), Data: re.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s failed: %v", method, err)}
}

// readMethod reads a resource whose content is method's reply, called on
// the socket of a tool a serves that calls it.
func (s *Set) readMethod(a *attachment, method string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		s.mu.Lock()
		t, ok := s.methodTool(a, method)
		s.mu.Unlock()
		if !ok {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		out, err := s.call(ctx, t.Socket, method, json.RawMessage("{}"))
		if err != nil {
			return nil, backendError(req.Params.URI, method, err)
		}
		return jsonContents(req.Params.URI, "application/json", jsonscan.Compact(out)), nil
	}
}

// readManifest reads a manifest file as it is on disk.
func (s *Set) readManifest(file string) mcp.ResourceHandler {
	return func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		if s.cfg.ManifestsDir == "" {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		b, err := manifest.ReadFile(filepath.Join(s.cfg.ManifestsDir, filepath.FromSlash(file)), manifest.Options{})
		if errors.Is(err, os.ErrNotExist) {
			return nil, mcp.ResourceNotFoundError(req.Params.URI)
		}
		if err != nil {
			return nil, fmt.Errorf("reading manifest %s: %w", file, err)
		}
		return jsonContents(req.Params.URI, "application/json", b), nil
	}
}

// readDeclared reads a fixed resource a manifest declares.
func (s *Set) readDeclared(d manifest.Resource) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		out, err := s.call(ctx, d.Socket, d.Method, json.RawMessage("{}"))
		if err != nil {
			return nil, backendError(req.Params.URI, d.Method, err)
		}
		return jsonContents(req.Params.URI, "", jsonscan.Compact(out)), nil
	}
}

// readTemplate reads a resource of a declared template: its variables are
// the call's params.
func (s *Set) readTemplate(d manifest.Resource) mcp.ResourceHandler {
	vars, _ := manifest.TemplateVars(d.URITemplate)
	re := templateRegexp(d.URITemplate)
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		params, err := MatchTemplate(re, vars, req.Params.URI)
		if err != nil {
			return nil, err
		}
		out, err := s.call(ctx, d.Socket, d.Method, params)
		if err != nil {
			return nil, backendError(req.Params.URI, d.Method, err)
		}
		return jsonContents(req.Params.URI, "", jsonscan.Compact(out)), nil
	}
}

var templateExpr = regexp.MustCompile(`\{[^{}]*\}`)

// templateRegexp matches the URIs of a level-1 template, capturing each
// variable's raw text.
func templateRegexp(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, loc := range templateExpr.FindAllStringIndex(tmpl, -1) {
		b.WriteString(regexp.QuoteMeta(tmpl[last:loc[0]]))
		b.WriteString("(.*?)")
		last = loc[1]
	}
	b.WriteString(regexp.QuoteMeta(tmpl[last:]))
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

// MatchTemplate returns the params object of uri's variables, or a
// JSON-RPC error: resource not found when uri does not match, invalid
// params when a variable would escape its place ('/', "..", '?', '#' or a
// control character, percent-encoded or not) or is empty.
func MatchTemplate(re *regexp.Regexp, vars []string, uri string) (json.RawMessage, error) {
	m := re.FindStringSubmatch(uri)
	if m == nil || len(m) != len(vars)+1 {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	params := make(map[string]string, len(vars))
	for i, name := range vars {
		v, err := url.PathUnescape(m[i+1])
		if err != nil {
			return nil, invalidVar(name, "is not valid percent-encoding")
		}
		if why := escapes(v); why != "" {
			return nil, invalidVar(name, why)
		}
		params[name] = v
	}
	b, _ := json.Marshal(params)
	return b, nil
}

func invalidVar(name, why string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("template variable %q %s; it must stay within its place in the URI", name, why)}
}

// escapes says why a variable's value is refused, or "".
func escapes(v string) string {
	switch {
	case v == "":
		return "is empty"
	case strings.ContainsAny(v, "/\\"):
		return "contains a slash"
	case strings.Contains(v, ".."):
		return `contains ".."`
	case strings.ContainsAny(v, "?#"):
		return "contains '?' or '#'"
	case strings.ContainsFunc(v, unicode.IsControl):
		return "contains a control character"
	}
	return ""
}

// complete answers completion/complete for the variables of declared
// templates: from the declaration's enum, else its complete method.
func (s *Set) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool) {
	ref := req.Params.Ref
	if ref == nil || ref.Type != "ref/resource" {
		return nil, false
	}
	s.mu.Lock()
	var d manifest.Resource
	found := false
	for _, a := range s.servers {
		if x, ok := a.decl[ref.URI]; ok {
			d, found = x, true
			break
		}
	}
	s.mu.Unlock()
	if !found {
		return completion.Result(nil), true
	}
	arg := req.Params.Argument
	if enum, ok := d.Enum[arg.Name]; ok {
		return completion.Result(completion.Enum(enum, arg.Value)), true
	}
	vals := completion.FromMethod(ctx, s.cfg.Call, d.Socket, d.Complete[arg.Name], arg.Value)
	vals = slices.DeleteFunc(vals, func(v string) bool { return escapes(v) != "" })
	return completion.Result(vals), true
}

package resources

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/check"
	"github.com/geilt/tairseach-mcp/mcpserver/completion"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// jsonContents is a read result of one JSON text.
func jsonContents(uri, mime string, b []byte) *mcp.ReadResourceResult {
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(b)}}}
}

// backendError turns a failed request into the read's JSON-RPC error: a
// rule's refusal says which, the backend's own error keeps its code in the
// message and its data.
func backendError(uri, method string, err error) error {
	if r, ok := backend.IsRefused(err); ok {
		code := int64(jsonrpc.CodeInternalError)
		if r.Rule.Input != backend.NotInput { // the client's fault
			code = jsonrpc.CodeInvalidParams
		}
		return &jsonrpc.Error{Code: code, Message: r.Message}
	}
	var re *socketrpc.Error
	if errors.As(err, &re) {
		if re.Code == -32002 {
			return mcp.ResourceNotFoundError(uri)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s failed: %s (%d)", method, quote.Bare(re.Message, quote.Text), re.Code), Data: re.Data}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s failed: %v", method, err)}
}

// readMethod reads a resource whose content is method's reply, as a tool
// a serves calls it.
func (s *Set) readMethod(a *attachment, method string) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		out, err := call(ctx, a, s.cfg.Timeout, &backend.Request{Kind: backend.Resource, Target: req.Params.URI, Method: method,
			Params: json.RawMessage("{}"), From: req})
		if err != nil {
			return nil, backendError(req.Params.URI, method, err)
		}
		return jsonContents(req.Params.URI, "application/json", out), nil
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
func (s *Set) readDeclared(a *attachment, d manifest.Resource) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		out, err := call(ctx, a, s.cfg.Timeout, &backend.Request{Kind: backend.Resource, Target: req.Params.URI, Method: d.Method,
			Params: json.RawMessage("{}"), Manifest: d.File, From: req})
		if err != nil {
			return nil, backendError(req.Params.URI, d.Method, err)
		}
		return jsonContents(req.Params.URI, "", out), nil
	}
}

// readTemplate reads a resource of a declared template: its variables are
// the call's params, checked by the pipeline against the method's inputSchema
// as a tool call's arguments are.
func (s *Set) readTemplate(a *attachment, d manifest.Resource) mcp.ResourceHandler {
	vars, _ := manifest.TemplateVars(d.URITemplate)
	re := templateRegexp(d.URITemplate)
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		params, err := MatchTemplate(re, vars, req.Params.URI)
		if err != nil {
			return nil, err
		}
		out, err := call(ctx, a, s.cfg.Timeout, &backend.Request{Kind: backend.Template, Target: req.Params.URI, Method: d.Method,
			Params: params, Manifest: d.File, From: req})
		if err != nil {
			return nil, backendError(req.Params.URI, d.Method, err)
		}
		return jsonContents(req.Params.URI, "", out), nil
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
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("template variable %s %s; it must stay within its place in the URI", quote.IdentLine(name, quote.Name), why)}
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

// complete answers completion/complete for the variables of the templates
// a serves: from the declaration's enum, else its complete method, asked
// through a's caller.
func (s *Set) complete(ctx context.Context, a *attachment, req *mcp.CompleteRequest) (*mcp.CompleteResult, bool) {
	ref := req.Params.Ref
	if ref == nil || ref.Type != "ref/resource" {
		return nil, false
	}
	s.mu.Lock()
	d, found := a.decl[ref.URI]
	s.mu.Unlock()
	if !found {
		return completion.Result(nil), true
	}
	arg := req.Params.Argument
	if enum, ok := d.Enum[arg.Name]; ok {
		return completion.Result(completion.Enum(enum, arg.Value)), true
	}
	vals := completion.FromMethod(ctx, a.caller, backend.Request{Target: ref.URI + " " + arg.Name, Method: d.Complete[arg.Name],
		Manifest: d.File, From: req}, arg.Value)
	vals = slices.DeleteFunc(vals, func(v string) bool { return escapes(v) != "" })
	return completion.Result(vals), true
}

// logsDir is the absolute log directory, or "".
func (s *Set) logsDir() string {
	if s.cfg.LogsDir == "" {
		return ""
	}
	d, err := filepath.Abs(s.cfg.LogsDir)
	if err != nil {
		return ""
	}
	return d
}

// scanLogs lists the regular files of this user directly in the log
// directory; symlinks, directories, special files and other users' files
// are not resources. Of a directory of many files, the MaxLogFiles most
// recently written are served (resources/list is one message, and a
// directory of many files is no log directory): it is read in chunks, and
// no more than twice that many are held at a time.
func (s *Set) scanLogs() map[string]logState {
	s.scans.Add(1)
	out := map[string]logState{}
	dir := s.logsDir()
	if dir == "" {
		return out
	}
	f, err := os.Open(dir)
	if err != nil {
		return out
	}
	defer f.Close()
	type seen struct {
		name string
		st   logState
	}
	var kept []seen
	newestFirst := func(a, b seen) int { return b.st.mtime.Compare(a.st.mtime) }
	uid := uint32(os.Getuid())
	for {
		entries, err := f.ReadDir(MaxLogFiles)
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			fi, err := e.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			st, ok := fi.Sys().(*syscall.Stat_t)
			if !ok || st.Uid != uid {
				continue
			}
			kept = append(kept, seen{e.Name(), logState{size: fi.Size(), mtime: fi.ModTime(), ino: uint64(st.Ino)}})
		}
		if len(kept) >= 2*MaxLogFiles {
			slices.SortFunc(kept, newestFirst)
			kept = kept[:MaxLogFiles]
		}
		if err != nil {
			break
		}
	}
	if len(kept) > MaxLogFiles {
		slices.SortFunc(kept, newestFirst)
		kept = kept[:MaxLogFiles]
	}
	for _, k := range kept {
		out[filepath.Join(dir, k.name)] = k.st
	}
	return out
}

// MaxLogFiles is the most files of the log directory served as resources.
const MaxLogFiles = 256

func (s *Set) logResource(path string, st logState) *mcp.Resource {
	return &mcp.Resource{URI: FileURI(path), Name: filepath.Base(path), Title: "log " + filepath.Base(path),
		Description: fmt.Sprintf("the end of the Tairseach log %s (at most %d bytes)", path, s.cfg.MaxBytes),
		MIMEType:    mimeFor(filepath.Base(path))}
}

// readLog reads the end of a log file, from a line boundary.
func (s *Set) readLog(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "file" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	path := filepath.FromSlash(u.Path)
	if dir := s.logsDir(); dir == "" || filepath.Dir(path) != dir {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	data, skipped, size, err := ReadTail(path, s.cfg.MaxBytes)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, mcp.ResourceNotFoundError(uri)
	case errors.Is(err, errRefused):
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s is refused: %v", path, err)}
	case err != nil:
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	c := &mcp.ResourceContents{URI: uri, MIMEType: mimeFor(filepath.Base(path))}
	if skipped > 0 {
		c.Meta = mcp.Meta{"truncated": true, "omittedBytes": skipped, "size": size}
	}
	if !utf8.Valid(data) || bytes.IndexByte(data, 0) >= 0 {
		// Written in base64: four bytes for every three.
		if cut := len(data) - int((s.cfg.MaxBytes-2)/4*3); cut > 0 { // and its quotes
			data, skipped = data[cut:], skipped+int64(cut)
			c.Meta = mcp.Meta{"truncated": true, "omittedBytes": skipped, "size": size}
		}
		c.MIMEType = "application/octet-stream"
		c.Blob = data
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
	}
	// The limit is of the text as it is written, escaped: a log of '<'
	// takes six times its size.
	if cut := check.QuotedTail(data, int(s.cfg.MaxBytes)); cut > 0 {
		if i := bytes.IndexByte(data[cut:], '\n'); i >= 0 {
			cut += i + 1
		}
		data, skipped = data[cut:], skipped+int64(cut)
		c.Meta = mcp.Meta{"truncated": true, "omittedBytes": skipped, "size": size}
	}
	text := string(data)
	if skipped > 0 {
		text = fmt.Sprintf("[the first %d of %d bytes are left out; this is the last %d, from a line boundary]\n", skipped, size, len(data)) + text
	}
	c.Text = text
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{c}}, nil
}

// ReadTail reads at most limit bytes from the end of the regular file path,
// starting after a newline when it does not start at the beginning. It
// refuses (errRefused) symlinks, special files and files of other users,
// checked on the open file: a FIFO is opened without blocking.
func ReadTail(path string, limit int64) (data []byte, skipped, size int64, err error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, 0, 0, fmt.Errorf("a symlink: %w", errRefused)
		}
		return nil, 0, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, 0, err
	}
	if !fi.Mode().IsRegular() {
		return nil, 0, 0, fmt.Errorf("a %s: %w", fi.Mode().Type(), errRefused)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || st.Uid != uint32(os.Getuid()) {
		return nil, 0, 0, fmt.Errorf("another user's file: %w", errRefused)
	}
	size = fi.Size()
	off := max(0, size-limit)
	data, err = io.ReadAll(io.NewSectionReader(f, off, size-off))
	if err != nil {
		return nil, 0, 0, err
	}
	if off > 0 {
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
			off += int64(i + 1)
		}
	}
	return data, off, size, nil
}

// readStatus reports the bridge's state as a's policy sees it, with the
// backend's server.status reply where a manifest maps it.
func (s *Set) readStatus(a *attachment) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		st := Status{Version: s.cfg.Version, Served: []string{}, LogsDir: s.logsDir()}
		if s.cfg.Socket != nil {
			st.Socket = s.cfg.Socket()
		}
		s.mu.Lock()
		ts := toolsOf(s.reg, a)
		st.Hidden = ts.hidden
		for _, of := range ts.served {
			for _, t := range of {
				st.Served = append(st.Served, t.Name)
			}
		}
		for _, sk := range s.reg.Skipped {
			if _, ok := st.Hidden[sk.Name]; !ok {
				st.Hidden[sk.Name] = sk.Detail
			}
		}
		for _, fe := range s.reg.FileErrors {
			st.Notes = append(st.Notes, fe.Error())
		}
		for _, p := range s.reg.Problems {
			st.Notes = append(st.Notes, p.String())
		}
		st.Reloads, st.LastErr = max(0, s.reloads-1), s.lastErr
		mapped := ts.serves(statusMethod, "")
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
			out, err := call(ctx, a, s.cfg.Timeout, &backend.Request{Kind: backend.Resource, Target: StatusURI, Method: statusMethod,
				Params: json.RawMessage("{}"), From: req})
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

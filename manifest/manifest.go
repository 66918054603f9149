// Package manifest loads Tairseach capability manifests from a directory,
// normalises their tools and validates them into a Registry.
//
// A manifest is a JSON file describing a set of tools (name, description,
// input and output JSON Schemas, annotations) and an implementation block
// mapping each tool name to the socket method that serves it. The package
// turns a directory of such files into a sorted list of uniquely named
// tools, recording every tool it had to leave out and why. It knows nothing
// of MCP or of sockets; mcpserver turns a Registry into MCP tools and
// socketrpc calls the methods.
//
// A manifest's requires.permissions, and a tool's own, name the macOS
// privacy permissions the server checks before it runs the tool; they end
// up in Tool.Permissions.
//
// Loading is forgiving: a broken file is reported as a *FileError and never
// stops the other files from loading, and a broken tool is skipped with a
// Skipped entry and, where someone should act, a Problem. Each carries where
// in its file it is, as a compiler's diagnostics do.
//
// Load reads a directory once; a Watcher keeps a Registry up to date as the
// files in it change.
package manifest

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
)

// DefaultMaxFileSize is the file size limit used when Options.MaxFileSize is 0.
const DefaultMaxFileSize int64 = 4 << 20

// MaxNameLen is the maximum length of an MCP tool name produced by the package.
const MaxNameLen = 64

// ErrTooLarge is wrapped by the FileError of a file over the size limit.
var ErrTooLarge = errors.New("file too large")

// Options controls loading.
type Options struct {
	// Prefix is prepended to every MCP tool name, e.g. "tairseach_".
	// Characters outside [A-Za-z0-9_-] are replaced by '_' like in tool names.
	Prefix string
	// MaxFileSize is the largest manifest accepted, in bytes; 0 or less means
	// DefaultMaxFileSize. Larger files are a FileError wrapping ErrTooLarge.
	MaxFileSize int64
	// Logger receives diagnostics from Load and Scan. The zero value is silent;
	// ParseFile and Build never log.
	Logger zerolog.Logger
}

func (o Options) maxFileSize() int64 {
	if o.MaxFileSize <= 0 {
		return DefaultMaxFileSize
	}
	return o.MaxFileSize
}

// Tool is one exposed tool after normalisation.
type Tool struct {
	// Name is the MCP name: Prefix + sanitised tool name, at most MaxNameLen characters.
	Name string
	// ToolName is the name as written in the manifest, e.g. "contacts.list".
	ToolName string
	// Method is the socket method: from implementation.methods, or for a
	// tool of a script or proxy manifest bound in implementation.toolBindings,
	// the tool name, under which the server serves it.
	Method string
	// Socket is implementation.socket; "" means the default socket.
	Socket      string
	Description string
	// Title is annotations.title, or the tool's "title" when that is absent.
	Title string
	// InputSchema is compact JSON: always an object whose "type" is "object".
	// It and OutputSchema are JSON Schema that jsonschema-go resolves, without
	// $ref cycles and within MaxSchemaDepth and MaxSchemaSize, so that
	// validating any instance against them terminates.
	InputSchema json.RawMessage
	// OutputSchema is compact JSON or nil; when set, an object whose "type" is "object".
	OutputSchema json.RawMessage
	Annotations  Annotations
	// TimeoutMs is the tool's "timeoutMs"; 0 means none.
	TimeoutMs int
	// File is the slash-separated path of the manifest, relative to the manifests directory.
	File string
	// ManifestID is the manifest's top-level "id".
	ManifestID string
	// Renamed reports whether sanitising or truncation changed the name (prefix aside).
	Renamed bool
	// Permissions are the macOS privacy permissions the server checks
	// before it runs the tool (see PermissionNames): those of the manifest's
	// requires.permissions and of the tool's own, sorted, without
	// duplicates; nil when none.
	Permissions []string
}

// Annotations are a tool's behaviour hints; a nil hint was absent from the manifest.
type Annotations struct {
	Title           string
	ReadOnlyHint    *bool
	DestructiveHint *bool
	IdempotentHint  *bool
	OpenWorldHint   *bool
}

// File is the parse result of one manifest file, before tools are merged across files.
type File struct {
	// Path is the slash-separated path relative to the manifests directory.
	Path     string
	ID       string
	Tools    []Tool
	Skipped  []Skipped
	Problems []Problem
	// Resources and Prompts are the manifest's optional declared ones.
	Resources []Resource
	Prompts   []Prompt

	toolAt []Position // where each of Tools is named
	idAt   Position   // where ID is
}

// Resource is a resource a manifest declares in its top-level "resources"
// array: reading it calls Method, and the reply is the content. It is plain
// data; mcpserver/resources serves it.
type Resource struct {
	// URI is a fixed URI, or "" when URITemplate is set.
	URI string
	// URITemplate is an RFC 6570 level-1 template such as
	// tairseach://contacts/{id}; its variables become the call's params.
	URITemplate string
	Name        string
	Title       string
	Description string
	MIMEType    string
	// Method is the socket method, one of the manifest's own.
	Method string
	// Complete maps a template variable to the read-only method of the
	// manifest whose reply completes it.
	Complete map[string]string
	// Enum maps a template variable to its allowed values, for completion.
	Enum map[string][]string
	// Socket is the manifest's implementation.socket.
	Socket     string
	File       string
	ManifestID string
}

// Prompt is a prompt a manifest declares in its top-level "prompts" array.
type Prompt struct {
	Name        string
	Title       string
	Description string
	Arguments   []PromptArgument
	// Template is the message text, with {{argument}} placeholders.
	Template   string
	Socket     string
	File       string
	ManifestID string
}

// PromptArgument is one argument of a Prompt.
type PromptArgument struct {
	Name        string   `json:"name" yaml:"name"`
	Description string   `json:"description,omitempty" yaml:"description"`
	Required    bool     `json:"required,omitempty" yaml:"required"`
	Enum        []string `json:"enum,omitempty" yaml:"enum"`
	// Complete names a read-only method of the manifest whose reply
	// completes the argument.
	Complete string `json:"complete,omitempty" yaml:"complete"`
}

// SkipReason says why a tool is not exposed.
type SkipReason int

// Reasons for skipping a tool.
const (
	// Hidden: the tool has "mcp_expose" or "mcpExpose" set to false.
	Hidden SkipReason = iota + 1
	// NoMethod: implementation.methods has no entry for the tool, nor, in a
	// script or proxy manifest, implementation.toolBindings.
	NoMethod
	// Duplicate: an earlier tool has the same MCP name, method and socket.
	Duplicate
	// Conflict: an earlier tool has the same MCP name but another method or socket.
	Conflict
	// BadSchema: the input schema is not an object schema, or cannot be
	// validated with (see Tool.InputSchema).
	BadSchema
	// BadOutputSchema: the output schema cannot be validated with.
	BadOutputSchema
	// BadName: the tool's name or method is not a word (see PlainWord).
	BadName
)

// String returns a short human phrase for r.
func (r SkipReason) String() string {
	switch r {
	case Hidden:
		return "hidden by mcp_expose"
	case NoMethod:
		return "no method mapping"
	case Duplicate:
		return "duplicate name"
	case Conflict:
		return "conflicting name"
	case BadSchema:
		return "invalid input schema"
	case BadOutputSchema:
		return "invalid output schema"
	case BadName:
		return "name or method not a word"
	}
	return fmt.Sprintf("unknown reason %d", int(r))
}

// MarshalText encodes r as its String form.
func (r SkipReason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Skipped records a tool that is not exposed.
type Skipped struct {
	// Name is the MCP name the tool would have had.
	Name string
	// ToolName is the name as written in the manifest.
	ToolName string
	// File is the manifest's relative slash path.
	File   string
	Reason SkipReason
	// Detail explains the reason, e.g. "duplicate of tairseach_x (x) in core/a.json".
	Detail string
	// Position is where the tool's name is written in File.
	Position
}

// Severity grades a Problem.
type Severity int

// Problem severities.
const (
	// Warning: something looks wrong but loading went on as documented.
	Warning Severity = iota
	// Error: something was left out that the author most likely wanted.
	Error
)

// String returns "warning" or "error".
func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Error:
		return "error"
	}
	return fmt.Sprintf("severity(%d)", int(s))
}

// MarshalText encodes s as its String form.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Problem is a diagnostic about a file or one of its tools.
type Problem struct {
	// File is the relative slash path of the file or directory concerned.
	File string
	// Tool is the tool name as written in the manifest; "" for the whole file.
	Tool     string
	Severity Severity
	Message  string
	// Position is where in File the problem is: the part of the tool at
	// fault (its schema, down to the subschema; its timeoutMs; else its
	// name), a mapping without a tool, the manifest's id. It is zero for
	// the rest, and for directories.
	Position
}

// String formats p as "file: tool: severity: message".
func (p Problem) String() string {
	if p.Tool == "" {
		return fmt.Sprintf("%s: %s: %s", p.File, p.Severity, p.Message)
	}
	return fmt.Sprintf("%s: %s: %s: %s", p.File, p.Tool, p.Severity, p.Message)
}

// FileError reports a manifest file that was rejected as a whole.
type FileError struct {
	// Path is the relative slash path of the file.
	Path string
	// Line and Column locate the error (1-based, column in bytes); 0 when unknown.
	Line, Column int
	Err          error
}

// Error formats e as "path:line:column: message", or "path: message" without a position.
func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d:%d: %v", e.Path, e.Line, e.Column, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

// Unwrap returns the underlying error.
func (e *FileError) Unwrap() error { return e.Err }

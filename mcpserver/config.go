package mcpserver

import (
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver/backend"
	"github.com/geilt/tairseach-mcp/mcpserver/media"
	"github.com/geilt/tairseach-mcp/mcpserver/observe"
	"github.com/geilt/tairseach-mcp/mcpserver/policy"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

// Defaults for Config fields left zero.
const (
	// DefaultCallTimeout covers the real server's slowest methods: its
	// script runner allows a script 60 s, and location.get waits for a
	// timeout the user sets.
	DefaultCallTimeout    = 90 * time.Second
	DefaultMaxResultBytes = 8 << 20
	// MinResultBudget is the least ResultBudget: a part needs room for
	// whole items and the note after it.
	MinResultBudget = 2 << 10
	// DefaultHeldBytes and DefaultHeldFor bound the results held in parts:
	// room for eight of the largest results a reply may carry.
	DefaultHeldBytes = 64 << 20
	DefaultHeldFor   = 10 * time.Minute
	// MinMaxResultBytes is the least MaxResultBytes that leaves room for a
	// result besides the envelope.
	MinMaxResultBytes  = 4 << 10
	DefaultPoolSize    = socketrpc.DefaultPoolSize
	DefaultMaxInFlight = 64
)

// instructions tell the model how to read what the tools return.
const instructions = `These tools reach the user's own machine through the local Tairseach server (contacts, calendar, mail, files, credentials and more). ` +
	`A successful call returns the server's JSON result. A failed call returns isError with the server's JSON-RPC error as {"error":{"code","message","data"}}: ` +
	`-32001 means the user must grant a permission (follow data.remediation), -32002 not found, -32602 bad arguments (fix them and retry). ` +
	`If the server is unreachable or times out, tell the user; retrying at once rarely helps. ` +
	`A result too large for your client comes in parts: whole items first, then a note saying how much was left out and the call that returns the next part. ` +
	`Ask for less where a tool lets you (a limit, an offset, a filter), and read further parts only when the task needs them.`

// Config is what the server needs to know; every field has a usable zero
// value except DefaultSocket.
type Config struct {
	Name          string // serverInfo.name; "tairseach-mcp" when empty
	Version       string // serverInfo.version
	DefaultSocket string // socket of tools whose manifest names none
	// ResolveSocket, if set, chooses the default socket's path anew for
	// each new connection (DefaultSocket is then where it pointed at
	// start): a server that creates its socket later, or elsewhere, is
	// found without a restart.
	ResolveSocket func() string
	CallTimeout   time.Duration
	// MaxResultBytes caps the JSON-RPC message that carries one tool
	// result or backend error to the client, envelope included: a larger
	// one becomes an isError result naming its size, instead of a message
	// the client would reject (the TypeScript SDK drops the whole stdio
	// session over 10 MiB).
	MaxResultBytes int
	// OutputSchemas publishes each tool's outputSchema and returns the
	// result as structuredContent, validated against it: a result that does
	// not match becomes isError (--output-schemas=strict).
	OutputSchemas bool
	// CheckOutputs, when OutputSchemas is false, checks each result against
	// its manifest's outputSchema anyway, without changing the result, and
	// logs one warning per tool on its first mismatch
	// (--output-schemas=warn).
	CheckOutputs bool
	PoolSize     int // socket connections per backend
	// InsecureSocket skips the checks that a socket and the process behind
	// it belong to this user.
	InsecureSocket bool
	// MaxInFlight caps concurrent tool calls; a call over it waits for a
	// slot until its timeout, then fails as busy.
	MaxInFlight int
	Logger      zerolog.Logger
	// Policy chooses the tools served; the zero value serves all.
	Policy policy.Policy
	// ToolMode is "all" (or empty): every tool served is listed; or
	// "discover": tools/list lists three tools that search, describe and
	// call the tools served (see discover.go).
	ToolMode string
	// Prefix names the discovery tools, like the manifests' tools.
	Prefix string

	// ProgressInterval is how often a call whose request carries a
	// progressToken sends notifications/progress; 0 sends none.
	ProgressInterval time.Duration
	// Audit, if set, records every call.
	Audit *observe.Audit
	// Telemetry, if set, traces and measures every call.
	Telemetry *observe.Telemetry

	// ResultBudget is the most text of one tool result sent whole: a
	// larger result is sent in parts (mcpserver/parts), its first part
	// with a note saying how to read the next. 0 is each client's own
	// budget (parts.BudgetFor, by clientInfo); over 0 is every client's;
	// below 0 sends every result whole (--result-budget).
	ResultBudget int
	// HeldBytes bounds the parts held for sessions to read, and HeldFor how
	// long a result is held after its last read; 0 is DefaultHeldBytes and
	// DefaultHeldFor.
	HeldBytes int
	HeldFor   time.Duration

	// Features add resources, prompts and completion (see Feature).
	Features []Feature
	// Media, if set, adds the picture a picture capability produced.
	Media Media

	// HideUngranted leaves out the tools whose macOS permission the app
	// does not hold (denied, restricted, not determined), once the grants
	// are read (grants.go): what cannot work is not offered.
	HideUngranted bool
	// PermissionsInterval is the longest time between two reads of the
	// grants while they are tracked (TrackPermissions); 0 is a minute.
	PermissionsInterval time.Duration
	// PermissionsSettle is the shortest time between two reads of the
	// grants, however many refusals and reloads ask for one, and so
	// between two list_changed that grants cause; 0 is
	// permissions.DefaultMinInterval (2 s).
	PermissionsSettle time.Duration
}

func (c *Config) setDefaults() {
	if c.Name == "" {
		c.Name = "tairseach-mcp"
	}
	if c.CallTimeout <= 0 {
		c.CallTimeout = DefaultCallTimeout
	}
	if c.MaxResultBytes <= 0 {
		c.MaxResultBytes = DefaultMaxResultBytes
	}
	c.MaxResultBytes = max(c.MaxResultBytes, MinMaxResultBytes)
	if c.HeldBytes <= 0 {
		c.HeldBytes = DefaultHeldBytes
	}
	if c.HeldFor <= 0 {
		c.HeldFor = DefaultHeldFor
	}
	if c.PoolSize <= 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = DefaultMaxInFlight
	}
}

// A Feature adds what is not a tool (resources, prompts, completion) to
// each go-sdk server New makes: the base one, and one per HTTP header
// selection. The packages mcpserver/resources and mcpserver/prompts
// provide them. A feature says how to resolve and render its kind; it
// reaches the backend only through the caller it is given, which applies
// that server's policy and every rule of a tool call.
type Feature interface {
	// Attach adjusts the go-sdk options before the server is made
	// (capabilities, subscribe and completion handlers) and returns the
	// function that registers onto the server once it exists. v is the
	// server's pipeline and its sessions' tool policy.
	Attach(o *mcp.ServerOptions, v backend.View) (register func(*mcp.Server))
	// Detach forgets a server registered onto, which is no longer served.
	Detach(*mcp.Server)
	// Resync brings every server registered onto in step with its policy,
	// which changed without a reload (the macOS permissions did).
	Resync()
	// Update follows a new registry. Apply gives it to the features before
	// the server takes it: the requests for what they declare wait for the
	// server's first registry (waitsForManifests), and find it when they
	// are let through.
	Update(*manifest.Registry)
}

// Media, if set in Config, may add a picture after the text of a
// successful tool result (media.Images): it is given the call and the room
// the message has left, and returns the block, or nil and a sentence for
// the model saying why there is none ("" when there is nothing to say).
type Media func(media.Call) (mcp.Content, string)

// Tool modes (Config.ToolMode).
const (
	ToolModeAll      = "all"
	ToolModeDiscover = "discover"
)

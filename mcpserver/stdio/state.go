// Package stdio is the MCP transport over newline-delimited JSON on a pair
// of streams, stdin and stdout in serve mode: framing, request ids as the
// client sent them, and what the end of a session asks of a transport:
// reading no more, answering what is in flight or cutting it off, and
// ending the requests that could never end on their own. When the session
// ends is the shutdown.Owner's to say; the transport tells it when the
// input ends. It decides nothing about a call: a tools/call the go-sdk
// would only have passed on is handed to a CallHandler, everything else
// to the go-sdk.
package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"

	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
)

// ImplicitProtocolVersion is the protocol version a session is initialised
// with when its first request is not "initialize" (a lone request piped from a
// shell). 2026-07-28 needs per-request _meta that a hand-written line will not
// carry, so it is the revision before it.
const ImplicitProtocolVersion = "2025-11-25"

// DefaultMaxLineBytes caps one incoming stdio message.
const DefaultMaxLineBytes = 16 << 20

// Transport is an MCP transport over newline-delimited JSON on a pair of
// streams (stdin and stdout in serve mode). Unlike the go-sdk's own stdio
// transport it
//   - answers a line that is not JSON-RPC with a -32700/-32600 error and keeps
//     the session going;
//   - echoes every request id exactly as received, and refuses ids a request
//     may not have (null, objects, arrays, booleans) and ids already in use;
//   - at end of input, or when End drains, waits until every request already
//     received has been answered; when End hurries, answers the rest with an
//     error and cancels them; then, once each has ended, reports EOF, so
//     `printf '…' | tairseach-mcp` prints one response per request;
//   - initialises the session implicitly when the first request is not
//     "initialize", so a single piped request works;
//   - sends no response for a request the client cancelled.
//
// With Calls set (and Direct not off) tools/list and tools/call are served
// without the go-sdk when that gives the same bytes; see dispatcher.
type Transport struct {
	In  io.Reader
	Out io.Writer
	// End owns the end of the session: it says when to drain, hurry and
	// stop, and why; the transport tells it when the input ends. Nil: an
	// Owner of the transport's own, without deadlines (Connect sets it).
	End *shutdown.Owner
	// Linger keeps the session open after end of input until End drains
	// (a stop signal), for clients that close stdin but keep reading
	// stdout.
	Linger bool
	// MaxLineBytes caps one incoming message; zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// Calls, when set, serves tool requests without the SDK where the
	// dispatcher allows, and tells the session when the tools change.
	Calls CallHandler
	// NoDirect sends every request through the go-sdk (--direct=off).
	NoDirect bool
	Logger   zerolog.Logger

	connMu sync.Mutex
	conn   *conn
}

// request is a request read from the client and not yet answered. The go-sdk
// knows it by a private int64 id; the client's id is kept as its bytes.
type request struct {
	raw       []byte // the client's id, as received
	key       string // the client's id, for finding duplicates and cancellations
	token     []byte // the client's progress token, when the go-sdk was given one of ours (tokens.go)
	method    string
	implicit  bool // the made-up initialize: its response is not sent
	newProto  bool // carries a valid 2026-07-28 _meta
	cancelled bool
	// cut off by the hurry: its answer is the transport's error, written
	// once it has ended.
	cut    bool
	cancel context.CancelFunc // a call served directly
	// A subscriptions/listen: acknowledged by the go-sdk, and to be ended
	// once it is (the go-sdk answers a listen cancelled before its
	// acknowledgement with an error, not its result).
	acked, endOnAck bool
}

// conn is one stdio session.
//
// One goroutine at a time (readLoop) reads and decodes the input and
// dispatches each message: answered at once (malformed), served directly
// (on that goroutine when nothing else is in flight, see serveInline, else
// on its own), or handed to the go-sdk through toSDK, which Read returns. Write is called from any
// goroutine; wlock serialises the output. mu guards the request bookkeeping.
// The end of the session (ending, finish) runs on the goroutine that calls
// Read, the go-sdk's reader.
type conn struct {
	calls     CallHandler
	direct    bool
	callCtx   context.Context // parent of the calls served directly; done at the cut-off and on Close
	cancelAll context.CancelFunc
	// running counts the calls served directly until they have ended (and
	// so been recorded); callWG, their goroutines until the answers are
	// written, and the one answering what was cut off.
	running, callWG sync.WaitGroup
	detach          func() // stops the server's notifications to this session

	in      *bufio.Reader
	rawIn   io.Reader
	out     io.Writer
	end     *shutdown.Owner
	linger  bool
	maxLine int
	log     zerolog.Logger

	// Owned by the goroutine that reads, readLoop's: a call served inline
	// can hand reading (and these) to the inline watch's goroutine.
	line       []byte
	meta       metaMemo
	initRead   bool // initialize was read (or made up), or the client speaks 2026-07-28
	registered bool // the go-sdk was given the tools (RegisterWithSDK)

	// watch hands reading on from a call served inline on the reading
	// goroutine that lasts.
	watch *inlineWatch

	toSDK    chan jsonrpc.Message
	inputEnd chan struct{} // closed by readLoop at end of input

	// initWritten is set once the go-sdk has written a successful response
	// to initialize: only then are legacy tool requests served directly,
	// and notifications sent. newWritten is the same for a 2026-07-28
	// request.
	initWritten atomic.Bool
	newWritten  atomic.Bool
	changed     atomic.Bool // the tools changed since the go-sdk last told a subscription
	session     atomic.Pointer[mcp.ServerSession]

	// wlock is the output's lock, a channel so that a writer waiting for it
	// can give up when End stops: a client that no longer reads stdout
	// blocks the writer holding it for good. It guards wbuf.
	wlock chan struct{}
	wbuf  []byte
	// The writes given up, and whether one is under way (blocked, once
	// End has stopped).
	givenUp atomic.Int64
	blocked atomic.Bool
	// outClosed is set at the first write that failed: the client closed
	// stdout, and nothing more is written.
	outClosed atomic.Bool

	lingerOnce sync.Once
	// Owned by the goroutine that calls Read: the drain has begun, what was
	// left has been cut off.
	finishing bool
	cutDone   bool

	mu          sync.Mutex
	outgoing    map[jsonrpc.ID]struct{} // ids of the go-sdk's requests to the client, unanswered
	endingBuilt bool
	endingMsgs  []jsonrpc.Message
	more        chan struct{}      // a message was added to endingMsgs after they were built
	reqs        map[int64]*request // by the id the go-sdk knows
	keys        map[string]int64   // the same, by the client's id
	nextID      int64
	initID      int64 // the go-sdk's id of the initialize that counts
	eof         bool  // reading has ended: the drain has begun
	// drained is closed once eof is set and reqs is empty: every request
	// read has been answered, or cut off and ended.
	drained chan struct{}

	closeOnce sync.Once
	closed    chan struct{}
}

var errLineTooLong = errors.New("line too long")

// incoming is one decoded line.
type incoming struct {
	id     json.RawMessage // absent: a notification
	method string
	params json.RawMessage
}

// protocolVersionKey is the _meta key of a 2026-07-28 request.
const protocolVersionKey = "io.modelcontextprotocol/protocolVersion"

// NewProtocol is the revision that has no initialize: every request carries
// its protocol version, client info and capabilities in params._meta.
const NewProtocol = "2026-07-28"

// CallHandler serves the tool calls a stdio session hands over without the
// go-sdk's per-request decoding and result encoding: on the hot path of
// every call these cost more than the socket round trip itself.
type CallHandler interface {
	// Ready is closed once the handler has its tools; HasTool and
	// CallDirect may be used only after it is.
	Ready() <-chan struct{}
	// HasTool reports whether name is a tool the handler serves; other
	// calls go through the SDK (which answers unknown tools).
	HasTool(name string) bool
	// CallDirect calls a tool and returns the result as the go-sdk would
	// encode it for the request, or nil when ctx was cancelled.
	CallDirect(ctx context.Context, c DirectCall) []byte
	// RegisterWithSDK makes the SDK's server know every tool, for a session
	// whose tool requests the SDK must answer itself.
	RegisterWithSDK()
	// Attach sends tools/list_changed to n when the tools change, until
	// detach is called.
	Attach(n Notifier) (detach func())
}

// DirectCall is a tools/call as the stdio transport read it.
type DirectCall struct {
	ID          json.RawMessage // the client's id, as received
	Name        string
	Args        json.RawMessage
	Meta        json.RawMessage // params._meta, if any
	NewProtocol bool            // a request of 2026-07-28, its _meta valid
	// Session is the go-sdk's session of the stdio connection: progress is
	// reported and the user asked through it.
	Session *mcp.ServerSession
}

// Notifier is a session the server can tell about changes.
type Notifier interface {
	Notify(method string)
}

// metaMemo remembers how the last _meta read was classified. A 2026-07-28
// client sends the same _meta (its protocol version, capabilities and name)
// with every request, so a call costs a compare of those bytes instead of
// four decodes; a _meta that differs in any byte is classified afresh.
type metaMemo struct {
	raw             []byte
	newProto, valid bool
}

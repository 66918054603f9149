package main

// The one config every command starts from: the flags bound to options,
// then resolve, which applies defaults, environment and flags in that
// order and checks the result. The flags of each group (HTTP, policy,
// observing, features) are beside what they configure.

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/geilt/tairseach-mcp/internal/quote"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/shutdown"
)

// options are the flags shared by every command.
type options struct {
	transport       string
	manifests       string
	socket          string
	prefix          string
	callTimeout     time.Duration
	drainTimeout    time.Duration
	shutdownGrace   time.Duration
	maxResultBytes  int
	resultBudget    string // auto, off or bytes
	budget          int    // resultBudget as mcpserver.Config.ResultBudget
	poolSize        int
	maxInFlight     int
	outputSchemas   string // warn, strict or off
	outputSchemasOn bool   // given as the deprecated "on"
	direct          string // hidden: "off" sends every stdio request through the go-sdk
	linger          bool
	insecureSocket  bool
	logLevel        string
	logFormat       string
	http            httpOptions // --transport http
	policyOptions               // which tools are served
	obs             observeOptions
	features        featureOptions // resources, prompts, images (features.go)

	maxManifestBytes int64  // manifest.Options.MaxFileSize
	cpuProfile       string // hidden: write a CPU profile of serve here ("%p": the pid)

	// end owns the end of the process: the one receiver of SIGINT and
	// SIGTERM. Made by startEnd, closed by run.
	end *shutdown.Owner
	// log is serve's logger, made once by startEnd: newLogger sets
	// zerolog's time format, which end's goroutine reads.
	log zerolog.Logger

	// Filled in by resolve.
	socketSource  string        // which rule chose the socket: flag, env, default, fallback
	resolveSocket func() string // nil when set by flag or env; else the rules, applied again on each new connection
}

// addFlags binds the flags every command shares to o: its own, then those
// of its groups.
func (o *options) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.transport, "transport", "stdio", "how MCP clients reach the server: stdio or http")
	f.StringVar(&o.manifests, "manifests", "", "`DIR` holding the manifests (default ~/.tairseach/manifests)")
	f.StringVar(&o.socket, "socket", "", "`PATH` of the Tairseach socket (default ~/.tairseach/tairseach.sock, else /tmp/tairseach-<uid>.sock if that exists, chosen again at each connection)")
	f.StringVar(&o.prefix, "prefix", "tairseach_", "prefix of every MCP tool name")
	f.DurationVar(&o.callTimeout, "call-timeout", mcpserver.DefaultCallTimeout, "time limit of one tool call; the default covers the server's 60s script limit (a tool's timeoutMs overrides it)")
	f.DurationVar(&o.drainTimeout, "drain-timeout", 0, "once the session takes no more requests (stdin closed, or a stop signal), how long calls in flight may still run (default: the call timeout)")
	f.DurationVar(&o.shutdownGrace, "shutdown-grace", defaultShutdownGrace, "after SIGTERM or SIGINT, how long calls in flight may still finish, when sooner than the drain timeout; then each is answered with an error and the process exits once it has ended (a second signal cuts them off at once)")
	f.IntVar(&o.maxResultBytes, "max-result-bytes", mcpserver.DefaultMaxResultBytes, "largest message carrying a tool result or error to the client, in bytes; a larger one becomes an isError result")
	f.StringVar(&o.resultBudget, "result-budget", "auto", "most text of one tool result sent whole, in bytes: a larger result comes as whole items and a note saying how to read the next part (tairseach_result_part); auto: what the client's agent hands its model whole (Claude Code 40000, Gemini CLI 36000, OpenClaw 12000, Codex and any other client 10000); off: every result whole")
	f.IntVar(&o.poolSize, "pool-size", mcpserver.DefaultPoolSize, "socket connections per backend")
	f.IntVar(&o.maxInFlight, "max-in-flight", mcpserver.DefaultMaxInFlight, "most tool calls at once; more wait for a slot until their timeout")
	f.Int64Var(&o.maxManifestBytes, "max-manifest-bytes", manifest.DefaultMaxFileSize, "largest manifest file read; larger ones are skipped with an error")
	f.StringVar(&o.outputSchemas, "output-schemas", "warn", "warn: do not advertise outputSchemas, log results that do not match them; strict: advertise them, send structuredContent and fail results that do not match; off: ignore them")
	f.BoolVar(&o.linger, "linger", false, "keep running after stdin closes, until interrupted")
	f.BoolVar(&o.insecureSocket, "insecure-socket", false, "use sockets owned by another user, writable by others, or served by another user's process (dangerous)")
	f.StringVar(&o.logLevel, "log-level", "", "trace, debug, info, warn, error or disabled (default warn over stdio, where a client shows every stderr line as an error; info over http)")
	f.StringVar(&o.logFormat, "log-format", "console", "console or json (logs always go to stderr)")
	o.http.addFlags(f)
	f.StringVar(&o.direct, "direct", "on", "serve tools/list and tools/call on stdio without the go-sdk where that gives the same bytes: on or off")
	_ = f.MarkHidden("direct")
	o.policyOptions.addFlags(f)
	o.obs.addFlags(f)
	o.features.addFlags(f)
	f.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the server to `FILE` (%p: the process id)")
	_ = f.MarkHidden("cpuprofile")
}

// envName is the environment variable that backs flag name.
func envName(name string) string {
	switch name {
	case "manifests":
		return "TAIRSEACH_MANIFESTS"
	case "socket":
		return "TAIRSEACH_SOCKET"
	case "logs-dir":
		return "TAIRSEACH_LOGS"
	case "prompts-dir":
		return "TAIRSEACH_PROMPTS"
	}
	return "TAIRSEACH_MCP_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// narrows are the flags that narrow what is served or ask first: their
// variable, set but empty, is an error rather than "unset", which would
// leave that switch off.
var narrows = map[string]bool{"read-only": true, "toolsets": true, "tools": true, "exclude-tools": true, "confirm": true}

// resolve applies defaults → env → flags, then validates.
func (o *options) resolve(cmd *cobra.Command) error {
	var errs []error
	global := cmd.Root().PersistentFlags()
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		// Only the global flags have environment variables; a subcommand's
		// own flags (tools --json) are for its command line.
		if f.Changed || global.Lookup(f.Name) == nil {
			return
		}
		v, ok := os.LookupEnv(envName(f.Name))
		if ok && v == "" && narrows[f.Name] {
			// An empty value elsewhere means unset; here it would widen
			// what is served with no sign (a ${VAR} a host left empty).
			errs = append(errs, usageError{fmt.Errorf("%s is set but empty: give it a value (--%s), or unset it", envName(f.Name), f.Name)})
			return
		}
		if ok && v != "" {
			if err := placeholder(v); err != nil {
				errs = append(errs, usageError{fmt.Errorf("%s=%s: %w", envName(f.Name), quote.Line(v, quote.Text), err)})
			} else if err := f.Value.Set(v); err != nil {
				errs = append(errs, usageError{fmt.Errorf("%s=%s: %v", envName(f.Name), quote.Line(v, quote.Text), valueError(f, err))})
			}
		}
	})
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if global.Lookup(f.Name) == nil {
			return
		}
		v := f.Value.String()
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			v = strings.Join(sv.GetSlice(), ",")
		}
		if err := placeholder(v); err != nil {
			errs = append(errs, usageError{fmt.Errorf("--%s %s: %w", f.Name, quote.Line(v, quote.Text), err)})
		}
	})
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	home, _ := os.UserHomeDir()
	if o.manifests == "" {
		o.manifests = filepath.Join(home, ".tairseach", "manifests")
	}
	o.manifests = expandHome(o.manifests, home)
	o.socketSource = "--socket"
	if !cmd.Flags().Changed("socket") && os.Getenv("TAIRSEACH_SOCKET") != "" {
		o.socketSource = "TAIRSEACH_SOCKET"
	}
	if o.socket == "" {
		// The server creates its socket when it starts, possibly after us,
		// and re-creates it when it restarts: look again at each connection.
		o.socket, o.socketSource = defaultSocket(home)
		o.resolveSocket = func() string { p, _ := defaultSocket(home); return p }
	}
	o.socket = expandHome(o.socket, home)
	if err := o.features.resolve(home); err != nil {
		return err
	}

	switch o.transport {
	case "stdio":
	case "http":
		// Only serving listens; the other commands ignore the HTTP flags.
		if cmd == cmd.Root() {
			if err := o.http.resolve(); err != nil {
				return err
			}
		}
	default:
		return usageError{fmt.Errorf("--transport %s: want stdio or http", quote.Line(o.transport, quote.Text))}
	}
	switch o.outputSchemas {
	case "warn", "strict":
	case "on", "true":
		// The old default, deprecated: it failed successful calls whose
		// replies the manifests describe wrongly.
		o.outputSchemas, o.outputSchemasOn = "strict", true
	case "off", "false":
		o.outputSchemas = "off"
	default:
		return usageError{fmt.Errorf("--output-schemas %s: want warn, strict or off", quote.Line(o.outputSchemas, quote.Text))}
	}
	direct, err := onOff("direct", o.direct)
	if err != nil {
		return err
	}
	o.direct = direct
	if o.callTimeout <= 0 {
		return usageError{fmt.Errorf("--call-timeout %s: must be positive", o.callTimeout)}
	}
	if o.drainTimeout <= 0 {
		o.drainTimeout = o.callTimeout
	}
	if o.shutdownGrace <= 0 {
		return usageError{fmt.Errorf("--shutdown-grace %s: must be positive", o.shutdownGrace)}
	}
	if o.poolSize <= 0 || o.maxInFlight <= 0 {
		return usageError{errors.New("--pool-size and --max-in-flight must be positive")}
	}
	if o.maxResultBytes < mcpserver.MinMaxResultBytes {
		// 1 KiB of the limit is kept for the message's envelope.
		return usageError{fmt.Errorf("--max-result-bytes %d: must be at least %d", o.maxResultBytes, mcpserver.MinMaxResultBytes)}
	}
	switch o.resultBudget {
	case "auto", "":
		o.budget = 0
	case "off":
		o.budget = -1
	default:
		n, err := strconv.Atoi(o.resultBudget)
		if err != nil || n < mcpserver.MinResultBudget {
			return usageError{fmt.Errorf("--result-budget %s: want auto, off, or a number of bytes of at least %d", quote.Line(o.resultBudget, quote.Text), mcpserver.MinResultBudget)}
		}
		o.budget = n
	}
	if o.maxManifestBytes <= 0 {
		return usageError{fmt.Errorf("--max-manifest-bytes %d: must be positive", o.maxManifestBytes)}
	}
	if o.logLevel == "" {
		// A stdio server says nothing at start unless something is wrong:
		// clients file every stderr line under errors. Serving over HTTP,
		// started by hand, the start-up lines (address, token file) help.
		o.logLevel = "warn"
		if o.transport == "http" {
			o.logLevel = "info"
		}
	}
	if _, err := zerolog.ParseLevel(o.logLevel); err != nil {
		return usageError{fmt.Errorf("--log-level %s: want trace, debug, info, warn, error or disabled", quote.Line(o.logLevel, quote.Text))}
	}
	if o.logFormat != "console" && o.logFormat != "json" {
		return usageError{fmt.Errorf("--log-format %s: want console or json", quote.Line(o.logFormat, quote.Text))}
	}
	if err := o.obs.resolve(); err != nil {
		return err
	}
	if !validPrefix(o.prefix) {
		return usageError{fmt.Errorf("--prefix %s: use at most 32 of the characters A-Z a-z 0-9 _ -", quote.Line(o.prefix, quote.Text))}
	}
	return o.policyOptions.resolve()
}

// placeholder refuses a value that holds a ${…} placeholder its host left
// as it was: an MCP Bundle's "${user_config.read_only}" whose setting has
// no value. Read as a value it would turn a safety setting (--read-only,
// --exclude-tools, --confirm) off without a word.
func placeholder(v string) error {
	i := strings.Index(v, "${")
	if i < 0 || !strings.Contains(v[i:], "}") {
		return nil
	}
	return errors.New("a placeholder its host did not fill in, not a value; give the setting a value (in an MCP Bundle, a default in user_config)")
}

// valueError says what a flag wants instead of pflag's parser error.
func valueError(f *pflag.Flag, err error) error {
	if f.Value.Type() == "bool" {
		return errors.New("want true or false")
	}
	return err
}

// defaultSocket is ~/.tairseach/tairseach.sock, or /tmp/tairseach-<uid>.sock
// when the first does not exist and the second does, and says which rule
// chose it. It costs one or two stats, and runs for every new connection.
func defaultSocket(home string) (path, source string) {
	primary := filepath.Join(home, ".tairseach", "tairseach.sock")
	if _, err := os.Stat(primary); err == nil {
		return primary, "default"
	}
	fallback := fmt.Sprintf("/tmp/tairseach-%d.sock", os.Getuid())
	if _, err := os.Stat(fallback); err == nil {
		return fallback, "fallback: " + primary + " does not exist"
	}
	return primary, "default, does not exist yet"
}

// newLogger builds the stderr logger the flags ask for.
func (o *options) newLogger(stderr io.Writer) zerolog.Logger {
	level, _ := zerolog.ParseLevel(o.logLevel)
	var w io.Writer = stderr
	if o.logFormat == "console" {
		noColor := true
		if f, ok := stderr.(*os.File); ok && isatty.IsTerminal(f.Fd()) && os.Getenv("NO_COLOR") == "" {
			noColor = false
		}
		w = zerolog.ConsoleWriter{Out: stderr, NoColor: noColor, TimeFormat: "15:04:05.000"}
	}
	zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00" // milliseconds matter when reading a session
	return zerolog.New(w).Level(level).With().Timestamp().Logger()
}

// cliLogger is the logger of the inspection commands. They report what
// matters themselves, so the loader's logs are shown only when the log level
// was asked for by flag or environment.
func (o *options) cliLogger(cmd *cobra.Command, stderr io.Writer) zerolog.Logger {
	if cmd.Flags().Changed("log-level") || os.Getenv(envName("log-level")) != "" {
		return o.newLogger(stderr)
	}
	return zerolog.Nop()
}

// startEnd starts the owner of the process's end from the flags, and makes
// its context, ended by the first stop signal, the command's. Serving, it
// tells the transport when to drain, cut off and stop.
func (o *options) startEnd(cmd *cobra.Command, stderr io.Writer) {
	o.log = zerolog.Nop()
	if cmd == cmd.Root() {
		o.log = o.newLogger(stderr)
	}
	o.end = shutdown.New(shutdown.Config{Drain: o.drainTimeout, Grace: o.shutdownGrace, Logger: o.log})
	o.end.Start(cmd.Context())
	cmd.SetContext(o.end.Context())
}

func (o *options) loadOptions(log zerolog.Logger) manifest.Options {
	return manifest.Options{Prefix: o.prefix, MaxFileSize: o.maxManifestBytes, Logger: log}
}

// validPrefix reports whether p keeps tool names within the characters
// clients accept, leaving room for the tool's own name.
func validPrefix(p string) bool {
	if len(p) > 32 {
		return false
	}
	for _, r := range p {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// defaultShutdownGrace is --shutdown-grace: a client that stops a server
// (close stdin, SIGTERM, then SIGKILL) usually waits a few seconds between
// the signals.
const defaultShutdownGrace = 2 * time.Second

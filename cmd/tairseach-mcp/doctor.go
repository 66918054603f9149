package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/cmd/tairseach-mcp/internal/install"
	"github.com/geilt/tairseach-mcp/manifest"
	"github.com/geilt/tairseach-mcp/mcpserver"
	"github.com/geilt/tairseach-mcp/mcpserver/prompts"
	"github.com/geilt/tairseach-mcp/mcpserver/streamable"
	"github.com/geilt/tairseach-mcp/socketrpc"
)

func newDoctorCmd(o *options, stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the manifests, the socket and the server, and say how to fix what is wrong",
		Long: `Check everything the server needs, one line per check: OK, WARN or FAIL, what was
checked and, when it is not OK, how to fix it.

The checks: the manifests directory is there and readable; the manifests are valid; which
rule chose the socket path; the socket exists, is a socket, is yours and not writable by
group or others; it accepts connections; the server process on it runs as you; a call of
server.status goes through (when a manifest maps it); and the same for every other backend
socket a manifest names. Exit status 1 when a check fails, else 0.`,
		Example: `  tairseach-mcp doctor
  tairseach-mcp --socket /tmp/tairseach-501.sock doctor`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			d := &doctor{o: o, log: o.cliLogger(cmd, stderr), out: stdout, colour: useColour(stdout)}
			d.run(cmd.Context())
			if d.failed {
				return errReported
			}
			return nil
		},
	}
}

func (d *doctor) run(ctx context.Context) {
	reg := d.checkManifests()
	if srv, done := d.openServer(ctx, reg); srv != nil {
		d.srv = srv
		defer done()
	}
	d.checkOutputSchemas(reg)
	d.checkBudget()
	d.checkSocketPath()
	connect, trusted := d.checkSocket(d.o.socket)
	if connect && d.checkConnect(ctx, d.o.socket, reg) {
		d.checkPeer(ctx, d.o.socket)
		if trusted {
			// An untrusted socket is refused before any call: already reported.
			d.checkRoundTrip(ctx, reg)
			d.checkPermissions(ctx, reg) // permissions.go
		}
	}
	d.checkBackends(ctx, reg)
	d.checkFeatureDirs()
	d.checkOpenClaw()
	if d.o.transport == "http" {
		d.checkToken()
	}
}

// checkToken reports where the HTTP transport's bearer token is, without
// making it.
func (d *doctor) checkToken() {
	if d.o.http.noAuth {
		d.report(statusWarn, "HTTP bearer token: none (--no-auth): every local user can call the tools", "drop --no-auth")
		return
	}
	path, _, _, source, err := d.o.http.loadToken(false)
	switch {
	case errors.Is(err, fs.ErrNotExist) && d.o.http.authTokenFile == "":
		d.report(statusWarn, fmt.Sprintf("HTTP bearer token file %s does not exist yet", streamable.DefaultTokenPath()),
			"start tairseach-mcp --transport http once, which makes it")
	case err != nil:
		d.report(statusFail, "HTTP bearer token: "+err.Error(), "")
	case path == "":
		d.report(statusOK, "HTTP bearer token from "+source, "")
	default:
		d.report(statusOK, "HTTP bearer token file "+path, "")
	}
}

// checkManifests checks the directory and validates what is in it; it
// returns the registry, nil when there is none.
func (d *doctor) checkManifests() *manifest.Registry {
	dir := d.o.manifests
	fix := "create it and put the Tairseach manifests in it, or pass --manifests / set TAIRSEACH_MANIFESTS"
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		d.report(statusFail, fmt.Sprintf("manifests directory %s does not exist", dir), fix)
		return nil
	case err != nil:
		d.report(statusFail, fmt.Sprintf("manifests directory %s: %s", dir, describeOSError(err)), "check its permissions, or pass --manifests")
		return nil
	case !fi.IsDir():
		d.report(statusFail, fmt.Sprintf("manifests directory %s is not a directory", dir), "pass --manifests the directory that holds the manifests")
		return nil
	}
	if _, err := os.ReadDir(dir); err != nil {
		d.report(statusFail, fmt.Sprintf("manifests directory %s cannot be read: %s", dir, describeOSError(err)), "chmod u+rx "+dir)
		return nil
	}
	d.report(statusOK, fmt.Sprintf("manifests directory %s", dir), "")

	rep := validateManifests(d.o, nil, d.log)
	counts := fmt.Sprintf("manifests: %s, %s, %s, %s", plural(rep.Files, "file"), plural(rep.Tools, "tool"),
		plural(rep.Errors, "error"), plural(rep.Warnings, "warning"))
	switch {
	case rep.Errors > 0:
		d.report(statusFail, counts, "fix the errors; tairseach-mcp validate shows every finding")
		const most = 5
		n := 0
		for _, f := range rep.Findings {
			if f.Severity != sevError {
				continue
			}
			if n++; n > most {
				d.detail(fmt.Sprintf("… and %d more", rep.Errors-most))
				break
			}
			d.detail(f.String())
		}
	case rep.Warnings > 0:
		// What serve no longer logs at its default level, here in full but
		// for the duplicates, which are many and alike.
		d.report(statusWarn, counts, "tairseach-mcp validate lists the warnings")
		const most = 20
		dups, n := 0, 0
		for _, f := range rep.Findings {
			switch {
			case f.Severity != sevWarning:
			case f.duplicate:
				dups++
			default:
				if n++; n <= most {
					d.detail(f.String())
				}
			}
		}
		if n > most {
			d.detail(fmt.Sprintf("… and %d more", n-most))
		}
		if dups > 0 {
			d.detail(fmt.Sprintf("and %s not exposed: each calls the same method as a tool another manifest names (tools --all lists them)", plural(dups, "tool")))
		}
	case rep.Tools == 0:
		d.report(statusWarn, counts, "no tools to serve: put the Tairseach manifests in "+dir)
	default:
		d.report(statusOK, counts, "")
	}
	reg, err := d.o.loadManifests(d.log)
	if err != nil {
		return nil
	}
	return reg
}

// checkOutputSchemas says what --output-schemas does with the manifests'
// outputSchemas, and names those not to be trusted: under strict, a result
// that does not match its schema turns a successful call into a failure.
func (d *doctor) checkOutputSchemas(reg *manifest.Registry) {
	if d.srv == nil {
		return
	}
	n := 0
	var untrusted []string
	for _, t := range reg.Tools {
		u := d.srv.OutputSchemaUse(t.Name)
		if u.Use == "" {
			continue
		}
		n++
		if u.Problem != "" {
			untrusted = append(untrusted, t.Name+": "+u.Problem)
		}
	}
	if n == 0 {
		return
	}
	what := map[string]string{
		"warn":   "checked, not advertised (mismatches are logged)",
		"strict": "advertised and enforced",
		"off":    "ignored",
	}[d.o.outputSchemas]
	schemas := fmt.Sprintf("%d tools' outputSchemas", n)
	if n == 1 {
		schemas = "1 tool's outputSchema"
	}
	line := fmt.Sprintf("outputSchemas (--output-schemas=%s): %s %s", d.o.outputSchemas, schemas, what)
	if len(untrusted) > 0 {
		line += fmt.Sprintf("; %d untrusted", len(untrusted))
	}
	switch {
	case len(untrusted) > 0 && d.o.outputSchemas == "strict":
		d.report(statusWarn, line+": successful calls of these tools will reach the model as failures",
			"run with --output-schemas=warn (the default), or fix the manifests")
	default:
		d.report(statusOK, line, "")
	}
	for _, u := range untrusted {
		d.detail(u)
	}
}

func (d *doctor) checkSocketPath() {
	src := d.o.socketSource
	switch src {
	case "--socket", "TAIRSEACH_SOCKET":
		src = "set by " + src
	default:
		src += "; looked up again at each connection, so serve follows the app when it starts or restarts"
	}
	d.report(statusOK, fmt.Sprintf("socket path %s (%s)", d.o.socket, src), "")
}

// checkSocket checks the socket file as the server does before it
// connects (socketrpc.CheckSocketFile): that it is a socket, then that it
// is the user's own and others cannot write to it. It reports whether
// connecting is worth trying, and whether the server would trust the
// socket.
func (d *doctor) checkSocket(path string) (connect, trusted bool) {
	err := socketrpc.CheckSocketFile(path)
	var missing *socketrpc.UnavailableError
	if errors.As(err, &missing) {
		pe, lstat := missing.Err.(*fs.PathError) // else a description
		switch {
		case lstat && errors.Is(pe, fs.ErrNotExist):
			d.report(statusFail, fmt.Sprintf("socket %s does not exist", path),
				"start the Tairseach app, or point --socket / TAIRSEACH_SOCKET at its socket; to try the bridge without the app, run make demo in a checkout of tairseach-mcp")
		case lstat:
			d.report(statusFail, fmt.Sprintf("socket %s: %s", path, describeOSError(pe)), "check the permissions of its directory")
		default:
			d.report(statusFail, "socket "+missing.Err.Error(), "point --socket / TAIRSEACH_SOCKET at the Tairseach server's socket")
		}
		return false, false
	}
	if target, err := os.Readlink(path); err == nil {
		d.report(statusWarn, fmt.Sprintf("socket %s is a symbolic link to %s", path, target), "point --socket at the socket itself")
	} else {
		d.report(statusOK, fmt.Sprintf("socket %s exists and is a socket", path), "")
	}
	if err != nil {
		d.report(statusFail, err.Error(), "")
		// Connecting to an untrusted socket still tells whether a server is there.
		return errors.Is(err, socketrpc.ErrUntrusted), false
	}
	var mode fs.FileMode
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	d.report(statusOK, fmt.Sprintf("socket %s is yours and not writable by group or others (mode %04o)", path, mode), "")
	return true, true
}

// checkConnect reports whether something accepts connections on path. It
// does not repeat the ownership checks, so that their failure and a dead
// socket are told apart.
func (d *doctor) checkConnect(ctx context.Context, path string, reg *manifest.Registry) bool {
	c := socketrpc.New(path, socketrpc.Options{Insecure: true, DialTimeout: 5 * time.Second, Logger: d.log})
	defer c.Close()
	if err := c.Ping(ctx); err != nil {
		d.report(statusFail, fmt.Sprintf("connect: %v", err),
			"the socket is stale or its server hung: restart the Tairseach app")
		return false
	}
	what := fmt.Sprintf("connect: the server at %s accepts connections", path)
	if _, ok := statusTool(reg); !ok {
		what += " (no manifest maps server.status, so no call was tried)"
	}
	d.report(statusOK, what, "")
	return true
}

// checkPeer checks that the process that listens on path runs as the user,
// as the server does on each connection (socketrpc.CheckPeer).
func (d *doctor) checkPeer(ctx context.Context, path string) {
	var dialer net.Dialer
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	nc, err := dialer.DialContext(dctx, "unix", path)
	if err != nil {
		d.report(statusFail, fmt.Sprintf("peer: connecting to %s: %v", path, err), "restart the Tairseach app")
		return
	}
	defer nc.Close()
	if err := socketrpc.CheckPeer(nc, path); err != nil {
		d.report(statusFail, "peer: "+err.Error(), "")
		return
	}
	d.report(statusOK, fmt.Sprintf("peer: the server process runs as you (uid %d)", os.Getuid()), "")
}

// statusTool is the exposed tool that calls server.status on the default socket.
func statusTool(reg *manifest.Registry) (manifest.Tool, bool) {
	if reg == nil {
		return manifest.Tool{}, false
	}
	for _, t := range reg.Tools {
		if t.Method == "server.status" && t.Socket == "" {
			return t, true
		}
	}
	return manifest.Tool{}, false
}

// checkRoundTrip calls server.status the way tools/call does.
func (d *doctor) checkRoundTrip(ctx context.Context, reg *manifest.Registry) {
	t, ok := statusTool(reg)
	if !ok || d.srv == nil {
		return
	}
	res := d.srv.Call(ctx, t.Name, nil)
	switch {
	case res == nil:
		d.report(statusFail, "round trip: interrupted", "")
	case res.IsError:
		d.report(statusFail, "round trip: server.status failed: "+errorSummary(res), "tairseach-mcp call "+t.Name+" shows the whole answer")
	default:
		d.report(statusOK, fmt.Sprintf("round trip: server.status answered through %s", t.Name), "")
	}
}

// checkBackends checks every other socket a manifest names, one line each.
func (d *doctor) checkBackends(ctx context.Context, reg *manifest.Registry) {
	if reg == nil {
		return
	}
	files := map[string][]string{} // socket → manifests that name it
	for _, t := range reg.Tools {
		if t.Socket != "" && t.Socket != d.o.socket && !slices.Contains(files[t.Socket], t.File) {
			files[t.Socket] = append(files[t.Socket], t.File)
		}
	}
	sockets := make([]string, 0, len(files))
	for s := range files {
		sockets = append(sockets, s)
	}
	slices.Sort(sockets)
	for _, s := range sockets {
		what := fmt.Sprintf("backend %s (named by %s)", s, strings.Join(files[s], ", "))
		if err := socketrpc.CheckSocketFile(s); err != nil {
			fix := "start that backend, or fix implementation.socket in the manifest"
			if errors.Is(err, socketrpc.ErrUntrusted) {
				fix = ""
			}
			d.report(statusFail, what+": "+err.Error(), fix)
			continue
		}
		c := socketrpc.New(s, socketrpc.Options{DialTimeout: 5 * time.Second, Logger: d.log})
		err := c.Ping(ctx)
		c.Close()
		if err != nil {
			d.report(statusFail, what+": "+err.Error(), "restart that backend")
			continue
		}
		d.report(statusOK, what+": accepts connections and runs as you", "")
	}
}

// openServer opens the server the checks look through, as a client finds
// it (the size of its tools/list leaves out what is not granted); nil
// without a registry, or when --toolsets names a toolset it lacks, which
// fails.
func (d *doctor) openServer(ctx context.Context, reg *manifest.Registry) (*mcpserver.Server, func()) {
	if reg == nil {
		return nil, nil
	}
	srv, done, err := d.o.openServer(ctx, reg, d.log)
	if err != nil {
		d.report(statusFail, err.Error(), "fix --toolsets (TAIRSEACH_MCP_TOOLSETS) or --audit-log")
		return nil, nil
	}
	return srv, done
}

// checkBudget reports the size of tools/list for the flags and the macOS
// permissions, as tools --budget does, and warns when it lists more tools than a client sends to
// its model.
func (d *doctor) checkBudget() {
	if d.srv == nil {
		return
	}
	line, over := budgetLine(d.o, d.srv)
	if over {
		d.report(statusWarn, line, fewerTools)
		return
	}
	d.report(statusOK, line, "")
}

// checkFeatureDirs reports the logs and prompts directories: how many
// resources and prompts they give, and the prompt files that are broken.
func (d *doctor) checkFeatureDirs() {
	logs, dir := d.o.features.logsDir, d.o.features.promptsDir
	switch entries, err := os.ReadDir(logs); {
	case errors.Is(err, fs.ErrNotExist):
		d.report(statusOK, fmt.Sprintf("logs directory %s does not exist yet: no log resources until the Tairseach server writes its logs there", logs), "")
	case err != nil:
		d.report(statusWarn, fmt.Sprintf("logs directory %s: %v", logs, err), "make it readable, or pass --logs-dir / set TAIRSEACH_LOGS")
	default:
		n := 0
		for _, e := range entries {
			if e.Type().IsRegular() {
				n++
			}
		}
		d.report(statusOK, fmt.Sprintf("logs directory %s: %d files served as resources", logs, n), "")
	}
	ps, errs := prompts.LoadDir(dir)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		d.report(statusOK, fmt.Sprintf("prompts directory %s does not exist: no prompt files (create it and add NAME.md files)", dir), "")
		return
	}
	if len(errs) > 0 {
		d.report(statusWarn, fmt.Sprintf("prompts directory %s: %d prompts, %d files left out", dir, len(ps), len(errs)), "fix the files below")
		for _, err := range errs {
			d.detail(err.Error())
		}
		return
	}
	d.report(statusOK, fmt.Sprintf("prompts directory %s: %d prompts", dir, len(ps)), "")
}

// checkOpenClaw reports the app's misplaced entry in OpenClaw's file
// (install.CheckOpenClaw).
func (d *doctor) checkOpenClaw() {
	if f, ok := install.CheckOpenClaw(); ok {
		st := statusWarn
		if f.Fail {
			st = statusFail
		}
		d.report(st, f.Message, f.Hint)
	}
}

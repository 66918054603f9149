// Command tairseach-demo stands in for the Tairseach server: it serves
// in-memory contacts and a few test methods as JSON-RPC 2.0 on a Unix socket,
// for `make demo`, end-to-end tests and benchmarks of tairseach-mcp. It
// answers the server's permissions.* methods, and refuses a method whose
// macOS permission is not granted, from statuses set by --grants,
// --grants-file and the demo.setPermission method.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/geilt/tairseach-mcp/internal/demo"
)

// version is stamped at build time with -ldflags "-X main.version=…".
var version = "dev"

type options struct {
	socket     string
	logLevel   string
	delay      time.Duration
	grants     string
	grantsFile string
	contacts   int
}

const long = `Serve demo data on a Unix socket as the Tairseach server would.

Permissions: like the real server, the demo answers permissions.list,
permissions.check and permissions.request, and refuses a method whose macOS
privacy permission is not granted (contacts.* needs contacts, screen.capture
needs screen_recording, …) with error -32001 and data {permission, status,
remediation}. Every permission is granted unless told otherwise:

  --grants contacts=denied,screen_recording=not_determined
      statuses at start; "*=denied" sets every permission not named
  --grants-file PATH
      the same entries, one a line or comma-separated, # for comments,
      applied over --grants and read again whenever the file changes (checked
      at each call), so that a running demo can lose or gain a permission:
        echo 'screen_recording=denied' > PATH
      a missing file counts as empty; one that cannot be parsed is logged and
      not applied
  the method demo.setPermission {"permission": P, "status": S}
      sets one status until the grants file next changes; from a shell:
        echo '{"jsonrpc":"2.0","id":1,"method":"demo.setPermission","params":{"permission":"contacts","status":"denied"}}' | nc -U PATH

Statuses: granted, denied, not_determined, restricted, unknown.
permissions.request on a not_determined permission grants it, as a user who
says yes to the macOS prompt would; other statuses stay as they are.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := newRootCmd(os.Stderr).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "tairseach-demo: %v\n", err)
		os.Exit(1)
	}
}

func newRootCmd(stderr io.Writer) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:           "tairseach-demo --socket PATH",
		Short:         "Serve demo data on a Unix socket as the Tairseach server would",
		Long:          long,
		Args:          cobra.NoArgs,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return serve(cmd.Context(), o, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.socket, "socket", "", "path of the Unix socket to listen on (required)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: trace, debug, info, warn, error")
	f.DurationVar(&o.delay, "delay", 0, "extra delay before every call, e.g. 200ms")
	f.StringVar(&o.grants, "grants", "", "permission statuses at start, e.g. contacts=denied,screen_recording=not_determined (default: all granted)")
	f.StringVar(&o.grantsFile, "grants-file", "", "file of permission statuses, applied over --grants and read again when it changes")
	f.IntVar(&o.contacts, "address-book", 0, "serve an address book of this many contacts, answered whole by contacts.list without a limit as the real server answers (2,000 make about 350 KB)")
	_ = cmd.MarkFlagRequired("socket")
	return cmd
}

// serve listens on o.socket and serves until ctx is cancelled, then removes
// the socket file.
func serve(ctx context.Context, o options, stderr io.Writer) error {
	level, err := zerolog.ParseLevel(o.logLevel)
	if err != nil || level == zerolog.NoLevel {
		return fmt.Errorf("unknown log level %q (want trace, debug, info, warn or error)", o.logLevel)
	}
	logger := newLogger(stderr, level)

	grants, err := demo.ParseGrants(o.grants)
	if err != nil {
		return fmt.Errorf("--grants: %w", err)
	}
	if o.grantsFile != "" {
		// A broken file is an error now; later, only a warning in the log.
		if _, err := demo.ReadGrantsFile(o.grantsFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("--grants-file: %w", err)
		}
	}

	ln, err := demo.Listen(o.socket)
	if err != nil {
		return err
	}
	defer func() {
		// Closing the listener normally unlinks the socket already.
		if err := os.Remove(o.socket); err != nil && !errors.Is(err, fs.ErrNotExist) {
			logger.Warn().Err(err).Msg("removing socket")
		}
	}()

	fmt.Fprintf(stderr, "listening on %s\n", o.socket)
	err = demo.New(logger, demo.Options{Version: version, Delay: o.delay,
		Grants: grants, GrantsFile: o.grantsFile, AddressBook: o.contacts}).Serve(ctx, ln)
	logger.Info().Msg("stopped")
	return err
}

func newLogger(w io.Writer, level zerolog.Level) zerolog.Logger {
	noColor := true
	if f, ok := w.(*os.File); ok {
		noColor = !isatty.IsTerminal(f.Fd())
	}
	cw := zerolog.ConsoleWriter{Out: w, NoColor: noColor, TimeFormat: time.TimeOnly}
	return zerolog.New(cw).Level(level).With().Timestamp().Logger()
}

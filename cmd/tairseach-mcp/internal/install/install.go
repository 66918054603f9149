// Package install adds one "tairseach" entry to an MCP client's
// configuration file, or sets the members of it that install owns, or takes
// it out, leaving every other byte of the file as it was (the editing is
// internal/clientconfig's). The clients are rows of one table (clients.go);
// the entry is built in entry.go, the client's file read and written in
// file.go, and what is OpenClaw's own is in openclaw.go. The install and
// uninstall commands (cmd/tairseach-mcp) parse the flags and call Install
// or Uninstall.
package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// Config is what Install and Uninstall are given, from the command line
// and the environment.
type Config struct {
	File  string // --config: the client's configuration file; "" for its usual place
	Print bool   // --print: show the resulting file, write nothing

	// Install's.
	Args  []string // the server's flags that change what is served, as --name=value
	Left  []string // the flags given that a stdio entry cannot carry, as given
	Notes []string // for the user, about Args
	HTTP  bool     // --transport http
	// Listen is the HTTP server's --listen; AuthTokenFile its
	// --auth-token-file, made absolute; NoAuth its --no-auth.
	Listen        string
	AuthTokenFile string
	NoAuth        bool
	// Token is the HTTP server's bearer token and the file it is in (""
	// for the environment variable; both "" with --no-auth), asked only
	// for an HTTP entry, once the client's file has been read.
	Token func() (from, token string, err error)
	// Setup is what the server needs (its manifests directory, its
	// socket): Install warns of those missing.
	Setup []string

	Stdout, Stderr io.Writer
}

// ErrUsage marks errors in how install was called: an unknown client, an
// address that is not host:port.
var ErrUsage = errors.New("install: usage")

type usageError struct{ error }

func (e usageError) Unwrap() []error { return []error{e.error, ErrUsage} }

// Install adds the tairseach entry to c's file, or sets its members that
// install owns, and says what it did on cfg.Stdout, notes on cfg.Stderr.
func Install(c Client, cfg Config) error {
	stdout, stderr := cfg.Stdout, cfg.Stderr
	cf, err := cfg.open(c)
	fe := (*fileSyntaxError)(nil)
	if err != nil && !(c.Format.json5 && errors.As(err, &fe)) {
		return err
	}
	entry, notes, err := buildEntry(c, cfg)
	if err != nil {
		return err
	}
	if fe != nil {
		return installJSON5(c, cfg, fe, entry, notes)
	}
	found, err := cf.doc.Has()
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	fields, moved, err := c.moveMisplaced(cf, c.Entry(entry))
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if moved != "" {
		notes = append(notes, moved)
	}
	if err := cf.doc.Set(fields); err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if cf.data != nil && bytes.Equal(cf.doc.Bytes(), cf.data) && !cfg.Print {
		for _, n := range notes {
			fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
		}
		fmt.Fprintf(stdout, "%s already has this tairseach entry in %s; nothing changed\n", c.Title, cf.shown)
		return nil
	}
	verb := "added"
	if found {
		verb = "updated"
	}
	if entry.Token != "" && c.TokenRef == "" && cf.data != nil && cf.mode&0o077 != 0 {
		if cfg.Print {
			notes = append(notes, fmt.Sprintf("%s is readable by others (%04o); install makes it 0600, as it will hold the token", cf.shown, cf.mode))
		} else {
			notes = append(notes, fmt.Sprintf("%s was readable by others (%04o); now 0600, as it holds the token", cf.shown, cf.mode))
		}
		cf.mode = 0o600
	}
	for _, n := range notes {
		fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
	}
	if cfg.Print {
		return printConfig(cf, stdout, stderr)
	}
	backup, err := cf.write()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s the tairseach entry in %s%s\n%s\n", verb, cf.shown, backup, c.afterAdd)
	if missing := missingSetup(cfg.Setup); len(missing) > 0 {
		verb := "does not exist yet, so " + c.Title + " will see no tools until it does"
		if len(missing) > 1 {
			verb = "do not exist yet, so " + c.Title + " will see no tools until they do"
		}
		fmt.Fprintf(stderr, "tairseach-mcp: %s %s; tairseach-mcp doctor checks the setup\n", strings.Join(missing, " and "), verb)
	}
	return nil
}

// missingSetup names the paths of setup that do not exist.
func missingSetup(setup []string) []string {
	var missing []string
	for _, p := range setup {
		if _, err := os.Stat(p); err != nil {
			missing = append(missing, p)
		}
	}
	return missing
}

// Uninstall takes the tairseach entry out of c's file.
func Uninstall(c Client, cfg Config) error {
	stdout, stderr := cfg.Stdout, cfg.Stderr
	cf, err := cfg.open(c)
	if fe := (*fileSyntaxError)(nil); c.Format.json5 && errors.As(err, &fe) {
		return fmt.Errorf("%s:%d:%d: %s: uninstall edits %s's JSON5 in place only as JSON with comments and trailing commas; run OpenClaw's own command, which rewrites the file as plain JSON:\n  openclaw mcp unset %s",
			fe.path, fe.err.Line, fe.err.Col, fe.err.Cause, c.Title, EntryName)
	}
	if err != nil {
		return err
	}
	found, err := cf.doc.Has()
	if err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if !found {
		if cf.data == nil {
			fmt.Fprintf(stdout, "%s does not exist; no tairseach entry to remove\n", cf.shown)
		} else {
			fmt.Fprintf(stdout, "no tairseach entry in %s; nothing changed\n", cf.shown)
		}
		return nil
	}
	if err := cf.doc.Remove(); err != nil {
		return fmt.Errorf("%s: %w", cf.shown, err)
	}
	if cfg.Print {
		return printConfig(cf, stdout, stderr)
	}
	backup, err := cf.write()
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "removed the tairseach entry from %s%s\n", cf.shown, backup)
	return nil
}

func printConfig(cf *configFile, stdout, stderr io.Writer) error {
	fmt.Fprintf(stderr, "tairseach-mcp: --print: %s not written; it would read:\n", cf.shown)
	_, err := stdout.Write(cf.doc.Bytes())
	return err
}

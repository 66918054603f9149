package install

// What is OpenClaw's own in install and doctor. Its file is JSON5, which
// install edits in place, byte for byte, as far as hujson reads it (JSON
// with comments and trailing commas); a file in the rest of JSON5
// (unquoted keys, single quotes…) goes through OpenClaw's own
// `openclaw config patch`, or install names that command (docs/architecture.md
// says why no JSON5 parser). The Tairseach app once wrote its entry under
// a top-level mcpServers, a key for which OpenClaw rejects the whole file:
// install moves that entry to mcp.servers, and doctor finds it (CheckOpenClaw).

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/geilt/tairseach-mcp/internal/clientconfig"
	"github.com/geilt/tairseach-mcp/internal/quote"
)

// moveMisplaced takes the entry out of c.misplaced, where the app wrote it
// and c does not read it, and returns fields with the members of that entry
// that c reads too (c.keeps), and a note for the user; an entry already
// where c reads it wins, and the misplaced one just goes.
func (c Client) moveMisplaced(cf *configFile, fields []clientconfig.Field) ([]clientconfig.Field, string, error) {
	jf, ok := cf.doc.(*clientconfig.JSONFile)
	if c.misplaced == "" || !ok {
		return fields, "", nil
	}
	has, err := jf.Has()
	if err != nil {
		return nil, "", err
	}
	members, found, left, err := jf.Take(c.misplaced)
	if err != nil || !found {
		return fields, "", err
	}
	why := fmt.Sprintf("%s does not read it there, and rejects the whole file over that key", c.Title)
	rest := ""
	if left > 0 {
		rest = fmt.Sprintf("; %s still holds %d other servers, and %s rejects the file until they go (openclaw doctor --fix removes them)", c.misplaced, left, c.Title)
	}
	if has {
		return fields, fmt.Sprintf("took the tairseach entry out of %s (%s); the one in %s stays%s", c.misplaced, why, c.Key, rest), nil
	}
	var kept, dropped []string
	for _, m := range members {
		switch {
		case slices.ContainsFunc(fields, func(f clientconfig.Field) bool { return f.Key == m.Key }):
			// install's own: set anew
		case slices.Contains(c.keeps, m.Key):
			fields = append(fields, clientconfig.Field{Key: m.Key, Value: m.Value})
			kept = append(kept, m.Key)
		default:
			dropped = append(dropped, quote.Word(m.Key, quote.Name)) // the user's words
		}
	}
	note := fmt.Sprintf("moved the tairseach entry from %s to %s (%s)", c.misplaced, c.Key, why)
	if len(kept) > 0 {
		note += "; kept its " + strings.Join(kept, ", ")
	}
	if len(dropped) > 0 {
		note += fmt.Sprintf("; left out its %s, which %s does not read", strings.Join(dropped, ", "), c.Title)
	}
	return fields, note + rest, nil
}

// installJSON5 installs into a file that hujson cannot read: through
// OpenClaw's own openclaw config patch when it is on PATH, which rewrites
// the file as plain JSON; else it names that command. The patch holds the
// members install owns, and nothing of the user's: OpenClaw merges it into
// the entry, keeping the rest. It goes on the command's stdin, never on
// its command line, which other local users can read (ps).
func installJSON5(c Client, cfg Config, fe *fileSyntaxError, entry Server, notes []string) error {
	stdout, stderr := cfg.Stdout, cfg.Stderr
	for _, n := range notes {
		fmt.Fprintf(stderr, "tairseach-mcp: %s\n", n)
	}
	// OpenClaw writes its file by rename: a link the user made is kept by
	// pointing it at the link's target.
	file := fe.path
	if t, err := clientconfig.Target(fe.path); err == nil {
		file = t
	}
	env := ""
	if def, err := c.DefaultPath(); err != nil || def != file {
		env = "OPENCLAW_CONFIG_PATH=" + shellQuote(file) + " "
	}
	why := fmt.Sprintf("%s:%d:%d: %s: install edits %s in place, byte for byte, only as JSON with comments and trailing commas, "+
		"not the rest of JSON5 (unquoted keys, single quotes…)", fe.path, fe.err.Line, fe.err.Col, fe.err.Cause, c.Title+"'s file")
	patch := clientconfig.Patch(append(strings.Split(c.Key, "."), EntryName), c.Entry(entry))
	bin, lookErr := exec.LookPath("openclaw")
	if lookErr != nil || cfg.Print {
		cmd := "printf '%s\\n' " + shellQuote(string(patch)) + " | " + env + "openclaw config patch --stdin"
		if cfg.Print {
			fmt.Fprintf(stderr, "tairseach-mcp: --print: %s; install would run OpenClaw's own command, which sets install's members of the entry, keeps yours, and rewrites the file as plain JSON:\n", why)
			fmt.Fprintln(stdout, cmd)
			return nil
		}
		return fmt.Errorf("%s; run OpenClaw's own command, which sets install's members of the entry, keeps yours, and rewrites the file as plain JSON, without its comments:\n  %s", why, cmd)
	}
	data, err := os.ReadFile(fe.path)
	if err != nil {
		return fmt.Errorf("reading %s: %w", fe.path, err)
	}
	backup, err := clientconfig.Backup(fe.path, data)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), openClawTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "config", "patch", "--stdin")
	cmd.WaitDelay = time.Second
	if env != "" {
		cmd.Env = append(os.Environ(), "OPENCLAW_CONFIG_PATH="+file)
	}
	cmd.Stdin = bytes.NewReader(append(patch, '\n'))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if _, err := cmd.Output(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer within %s", openClawTimeout)
		}
		err = fmt.Errorf("%s config patch: %w: %s", bin, err, strings.TrimSpace(errb.String()))
		if now, rerr := os.ReadFile(fe.path); rerr == nil && bytes.Equal(now, data) {
			os.Remove(backup) // nothing changed: no backup of it, and the older ones stay
			return fmt.Errorf("%w; %s was left as it was", err, fe.path)
		}
		return fmt.Errorf("%w; %s changed all the same: the old file is in %s", err, fe.path, backup)
	}
	clientconfig.Prune(fe.path)
	fmt.Fprintf(stdout, "set the tairseach entry in %s with openclaw config patch, as install cannot keep its JSON5 byte for byte: OpenClaw rewrote it as plain JSON, without its comments (the old file is in %s)\n%s\n",
		fe.path, backup, c.afterAdd)
	return nil
}

// shellQuote quotes s for a POSIX shell, when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:@,+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Finding is something doctor reports of a client's file.
type Finding struct {
	Fail          bool // else a warning
	Message, Hint string
}

// CheckOpenClaw finds the app's misplaced entry in OpenClaw's file: a
// top-level mcpServers, for which OpenClaw rejects the whole file and runs
// none of its commands. There is no finding when there is none, or no file.
func CheckOpenClaw() (Finding, bool) {
	c, _ := Find("openclaw")
	path, err := c.DefaultPath()
	if err != nil {
		return Finding{}, false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Finding{}, false
	}
	jf, err := clientconfig.ParseJSON(data, c.misplaced, EntryName)
	if se := (*clientconfig.SyntaxError)(nil); errors.As(err, &se) {
		if bytes.Contains(data, []byte(c.misplaced)) {
			return Finding{
				Message: fmt.Sprintf("OpenClaw: %s names %s, a key for which OpenClaw rejects the whole file, in JSON5 that doctor does not read", path, c.misplaced),
				Hint:    "openclaw config validate checks it; openclaw doctor --fix removes the key",
			}, true
		}
		return Finding{}, false
	}
	if err != nil {
		return Finding{}, false
	}
	if has, _ := jf.Has(); has {
		return Finding{
			Fail:    true,
			Message: fmt.Sprintf("OpenClaw: %s has the tairseach entry under %s, a key for which OpenClaw rejects the whole file and runs none of its commands", path, c.misplaced),
			Hint:    "tairseach-mcp install openclaw moves it to mcp.servers.tairseach, keeping your settings there",
		}, true
	}
	return Finding{}, false
}

// openClawTimeout bounds each openclaw command install runs: a first start
// may wait on OpenClaw's own lock.
const openClawTimeout = 2 * time.Minute

package main

// The differential wire suite: transcripts in testdata/wire replayed against
// the real binary and the demo backend, with direct serving on and off. Both
// must give exactly the golden bytes, so serving a request without the
// go-sdk is checked to change nothing a client can see, and a go-sdk upgrade
// that changes its bytes fails here. `go test -run TestWire -update`
// rewrites the golden sections from the run with direct serving off.
//
// A transcript is a txtar archive whose files are steps, run in order:
//
//	-- args --     extra flags, one per line
//	-- send --     lines written to stdin
//	-- recv --     the lines expected next on stdout, in this order
//	-- recv-any -- the same, in any order (answers to concurrent requests)
//	-- close --    stdin is closed
//	-- signal --   the process gets TERM or INT
//
// After the last step stdin is closed; stdout must then end with no further
// line and the process exit 0.

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// txtarFile is one file of a txtar archive.
type txtarFile struct {
	name string
	data string
}

// parseTxtar splits a txtar archive into its comment and files.
func parseTxtar(data string) (comment string, files []txtarFile) {
	lines := strings.SplitAfter(data, "\n")
	var cur *txtarFile
	var b strings.Builder
	flush := func() {
		if cur == nil {
			comment = b.String()
		} else {
			cur.data = b.String()
			files = append(files, *cur)
		}
		b.Reset()
	}
	for _, l := range lines {
		t := strings.TrimRight(l, "\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			flush()
			cur = &txtarFile{name: strings.TrimSpace(t[3 : len(t)-3])}
			continue
		}
		b.WriteString(l)
	}
	flush()
	return comment, files
}

// formatTxtar is the inverse of parseTxtar.
func formatTxtar(comment string, files []txtarFile) string {
	var b strings.Builder
	b.WriteString(comment)
	for _, f := range files {
		fmt.Fprintf(&b, "-- %s --\n%s", f.name, f.data)
	}
	return b.String()
}

func splitLines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// wireRun is one replay of a transcript against the binary.
type wireRun struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *syncBuffer
	closed bool
}

func startWire(t *testing.T, args []string) *wireRun {
	t.Helper()
	r := &wireRun{t: t, cmd: exec.Command(bridgeBin, args...), lines: make(chan string, 1000), stderr: &syncBuffer{}}
	r.cmd.Stderr = r.stderr
	var err error
	if r.stdin, err = r.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := r.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	t.Cleanup(func() {
		_ = r.stdin.Close()
		_ = r.cmd.Process.Kill()
		for range r.lines {
		}
		_ = r.cmd.Wait()
		if t.Failed() {
			t.Logf("bridge stderr:\n%s", r.stderr.String())
		}
	})
	return r
}

// read returns the next n lines, or with n < 0 the lines until stdout has
// been quiet for a while (or ends): how -update finds what to record.
func (r *wireRun) read(n int) []string {
	r.t.Helper()
	var got []string
	if n < 0 {
		quiet := 700 * time.Millisecond
		if r.closed {
			quiet = 20 * time.Second // until EOF
		}
		for {
			select {
			case l, ok := <-r.lines:
				if !ok {
					return got
				}
				got = append(got, l)
			case <-time.After(quiet):
				return got
			}
		}
	}
	for len(got) < n {
		select {
		case l, ok := <-r.lines:
			if !ok {
				r.t.Fatalf("stdout ended after %d of %d lines: %q", len(got), n, got)
			}
			got = append(got, l)
		case <-time.After(20 * time.Second):
			r.t.Fatalf("only %d of %d lines within 20s: %q", len(got), n, got)
		}
	}
	return got
}

// end closes stdin and checks that stdout ends with no other line and the
// process exits 0.
func (r *wireRun) end() {
	r.t.Helper()
	if !r.closed {
		_ = r.stdin.Close()
	}
	select {
	case l, ok := <-r.lines:
		if ok {
			r.t.Fatalf("unexpected line at the end: %s", l)
		}
	case <-time.After(20 * time.Second):
		r.t.Fatal("stdout did not end within 20s of the end of the transcript")
	}
	done := make(chan error, 1)
	go func() { done <- r.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			r.t.Fatalf("exit: %v", err)
		}
	case <-time.After(20 * time.Second):
		r.t.Fatal("the process did not exit within 20s")
	}
}

// replay runs a transcript's steps. With record it returns the steps with
// the recv sections rewritten from what the binary wrote.
func replay(t *testing.T, e env, files []txtarFile, direct string, record bool) []txtarFile {
	t.Helper()
	args := e.args("--direct=" + direct)
	for _, f := range files {
		if f.name == "args" {
			args = append(args, splitLines(f.data)...)
		}
	}
	r := startWire(t, args)
	out := slices.Clone(files)
	for i, f := range files {
		switch f.name {
		case "args":
		case "send":
			if _, err := io.WriteString(r.stdin, f.data); err != nil {
				t.Fatalf("step %d: writing stdin: %v", i, err)
			}
		case "close":
			_ = r.stdin.Close()
			r.closed = true
		case "signal":
			sig := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "INT": syscall.SIGINT}[strings.TrimSpace(f.data)]
			if sig == 0 {
				t.Fatalf("step %d: signal %q: want TERM or INT", i, f.data)
			}
			if err := r.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			r.closed = true // the process ends: recv reads to the end
		case "recv", "recv-any":
			want := splitLines(f.data)
			if record {
				n := -1 // until stdout is quiet
				if len(want) > 0 {
					n = len(want) // a recv followed by another
				}
				got := r.read(n)
				if f.name == "recv-any" {
					slices.Sort(got)
				}
				out[i].data = strings.Join(got, "\n") + "\n"
				continue
			}
			got := r.read(len(want))
			if f.name == "recv-any" {
				got = slices.Sorted(slices.Values(got))
				want = slices.Sorted(slices.Values(want))
			}
			if !slices.Equal(got, want) {
				t.Fatalf("step %d (%s) with --direct=%s:\ngot:\n%s\nwant:\n%s", i, f.name, direct,
					strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		default:
			t.Fatalf("step %d: unknown section %q", i, f.name)
		}
	}
	r.end()
	return out
}

func TestWire(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "wire", "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no transcripts in testdata/wire: %v", err)
	}
	for _, path := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			comment, files := parseTxtar(string(data))
			e := newEnv(t)
			startBackend(t, e.socket)
			if *update {
				files = replay(t, e, files, "off", true)
				if err := os.WriteFile(path, []byte(formatTxtar(comment, files)), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				replay(t, e, files, "off", false)
			}
			replay(t, e, files, "on", false)
		})
	}
}

func TestParseTxtar(t *testing.T) {
	in := "a comment\n-- send --\nx\ny\n-- recv --\n-- close --\n"
	comment, files := parseTxtar(in)
	if comment != "a comment\n" || len(files) != 3 || files[0].data != "x\ny\n" || files[1].data != "" {
		t.Fatalf("parsed %q %+v", comment, files)
	}
	if got := formatTxtar(comment, files); got != in {
		t.Fatalf("formatted %q, want %q", got, in)
	}
	if !bytes.Equal([]byte(formatTxtar("", nil)), nil) {
		t.Fatal("empty archive")
	}
}

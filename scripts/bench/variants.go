package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// spansPerCall is what bridge+otel exports of one tools/call: the server
// span of the call, which carries its socket call's attributes.
const spansPerCall = 1

// variantTally adds up what the variants' checks found over the run.
type variantTally struct {
	auditFiles, auditLines int
	otelServers, otelCalls int
	otel                   otlpStats // received over the run
	otelAtExit             int       // export requests sent as a server exited
	otelOutside            int       // export requests that came while no bridge+otel ran
}

// bridgeEnv is env without the settings that would make a bridge observe:
// the OTEL_* variables and TAIRSEACH_MCP_AUDIT_*.
func bridgeEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if strings.HasPrefix(kv, "OTEL_") || strings.HasPrefix(kv, "TAIRSEACH_MCP_AUDIT_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// timing tells the collector while calls of bridge+otel are timed; call
// the function it returns when they end.
func (b *bench) timing(who string) func() {
	if who != bridgeOTel {
		return func() {}
	}
	b.e.collector.setTiming(true)
	return func() { b.e.collector.setTiming(false) }
}

// settle runs after each slice of a contender, untimed: for bridge+otel it
// waits until the spans of its calls so far have reached the collector,
// so that the export does not fall into another contender's turn.
func (b *bench) settle(ctx context.Context, s *session) error {
	if s == nil || s.who != bridgeOTel {
		return nil
	}
	_, err := b.e.collector.drain(ctx, s.otelID, otlpStats{}, spansPerCall*int(s.calls.Load()))
	return err
}

// finishVariants, after the last round, stops the variants' servers and checks what they
// recorded: one audit line per call, and exports that reached the
// collector while the calls ran. Either missing fails the run: the
// variant's figures would mean nothing.
func (b *bench) finishVariants(sessions map[string]*session) error {
	for _, who := range variants {
		s := sessions[who]
		if s == nil {
			continue
		}
		delete(sessions, who)
		var err error
		switch who {
		case bridgeAudit:
			err = b.finishAudit(s)
		case bridgeOTel:
			err = b.finishOTel(s)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// finishAudit stops bridge+audit and counts the lines of its audit log:
// of the file and, once it has passed the default 64 MiB (a run of more
// than 5 rounds), of the one it was rotated to (FILE.1). A second rotation
// would have dropped lines, and fails the count.
func (b *bench) finishAudit(s *session) error {
	s.close() // the bridge closes its audit log as it exits
	calls := int(s.calls.Load())
	lines, ok := 0, 0
	for _, path := range []string{s.audit + ".1", s.audit} {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) && path != s.audit {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: the audit log: %w\n%s", s.who, err, b.e.logTail(s.who))
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lines++
			var l struct{ Tool, Outcome string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Tool == echoTool && l.Outcome == "ok" {
				ok++
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: reading %s: %w", s.who, path, err)
		}
	}
	if lines != calls || ok != calls {
		return fmt.Errorf("%s: %s (and %s.1, rotated to) has %d lines, %d of them an ok call of %s, for the %d calls made; want one line per call\n%s",
			s.who, s.audit, filepath.Base(s.audit), lines, ok, echoTool, calls, b.e.logTail(s.who))
	}
	b.tally.auditFiles++
	b.tally.auditLines += lines
	return errors.Join(os.Remove(s.audit), ignoreNotExist(os.Remove(s.audit+".1")))
}

// ignoreNotExist is err, but nil for a file that does not exist.
func ignoreNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// finishOTel stops bridge+otel and checks what the collector received.
func (b *bench) finishOTel(s *session) error {
	calls := int(s.calls.Load())
	// What arrived while the calls ran (settle has waited for the spans).
	running, err := b.e.collector.snapshot(s.otelID)
	if err != nil {
		s.close()
		return fmt.Errorf("%s: %w", s.who, err)
	}
	s.close() // the bridge flushes its exporters as it exits
	got, err := b.e.collector.snapshot(s.otelID)
	if err != nil {
		return fmt.Errorf("%s: %w", s.who, err)
	}
	outside, err := b.e.collector.snapshot(0)
	if err != nil {
		return fmt.Errorf("%s: %w", s.who, err)
	}
	b.tally.otelOutside = outside.traceReqs + outside.metricReqs
	if got.traceReqs == 0 || got.spans == 0 || got.metricReqs == 0 || running.traceReqs == 0 {
		return fmt.Errorf("%s: the collector on %s received %d trace exports (%d spans, %d while the server ran) and %d metric exports for %d calls: "+
			"the variant did not export as it ran, so its figures would mean nothing\n%s",
			s.who, b.e.collector.addr, got.traceReqs, got.spans, running.spans, got.metricReqs, calls, b.e.logTail(s.who))
	}
	b.tally.otelServers++
	b.tally.otelCalls += calls
	b.tally.otel = b.tally.otel.add(got)
	b.tally.otelAtExit += got.traceReqs + got.metricReqs - running.traceReqs - running.metricReqs
	return nil
}

// variantNotes describe the variants and what their checks found.
func (b *bench) variantNotes() []string {
	c := b.cfg
	notes := []string{
		fmt.Sprintf("bridge+audit and bridge+otel: the bridge as above with its audit log, or its OpenTelemetry export, on. "+
			"Each is started, checked and warmed with the others and runs only the sequential and 8-caller cases, with the bridge's calls (%d sequential, %d at 8 callers, per round and revision), "+
			"in the same slices, turn by turn with the others. Between its own turns its process is stopped (SIGSTOP), as every call server's is, so nothing it does in the background, such as a metric export, falls into another contender's turn; its timers that came due while stopped fire as its next turn starts. "+
			"Their table sets each beside the plain bridge of the same run; the target is at most 10 %% more time per call: p50 ≤ 1.1× bridge, calls/s ≥ bridge ÷ 1.1.",
			c.seqCalls, c.rate8Calls),
	}
	t := b.tally
	audit := "bridge+audit: `--audit-log FILE`, a new file in the run's temp dir for each server (arguments recorded as their SHA-256, the default). " +
		"When the server has exited its file, with the one it was rotated to past the default 64 MiB (FILE.1), must hold one line per call made, each an ok call of " + echoTool + ", or the run fails"
	if t.auditFiles > 0 {
		audit += fmt.Sprintf(". This run: %s lines in the logs of %s, one per call", thousands(int64(t.auditLines)), plural(t.auditFiles, "server"))
	}
	notes = append(notes, audit+".")
	otel := fmt.Sprintf("bridge+otel: OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT, OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf, "+
		"OTEL_BSP_SCHEDULE_DELAY=%d, OTEL_METRIC_EXPORT_INTERVAL=%d: traces and metrics to a collector in this driver "+
		"(net/http on loopback; it reads each body whole and answers 200 with an empty body; the spans are decoded and counted between the timed calls). "+
		"The batch delay is %d ms, not the default 5 s, so that a slice's spans are not exported in another contender's turn; "+
		"under this load a batch of 512 spans fills every 30–70 ms anyway. "+
		"After each slice the driver waits, untimed, until the spans of every call so far have arrived (or none has for two batch delays): "+
		"that export is in its CPU per call, not in its times; its metric exports, one a second, fall where they fall. "+
		"The run fails if a server's collector received no trace export while it ran, or no metric export",
		bspDelay.Milliseconds(), metricInterval.Milliseconds(), bspDelay.Milliseconds())
	if t.otelServers > 0 && t.otelCalls > 0 {
		o := t.otel
		otel += fmt.Sprintf(". This run: the collector received %s trace exports (%s spans for %s calls, %.2f a call; %.0f %% of them while the calls were timed) "+
			"and %s metric exports, %s KiB in all, from %s; %d of these requests came as a server exited",
			thousands(int64(o.traceReqs)), thousands(int64(o.spans)), thousands(int64(t.otelCalls)), float64(o.spans)/float64(t.otelCalls),
			100*float64(o.timedSpans)/float64(max(o.spans, 1)), thousands(int64(o.metricReqs)), thousands(o.bytes>>10),
			plural(t.otelServers, "server"), t.otelAtExit)
		otel += fmt.Sprintf("; %d came while no bridge+otel server was running", t.otelOutside)
		if want := spansPerCall * t.otelCalls; o.spans < want {
			otel += fmt.Sprintf(" (%s spans short of %d a call: dropped by the export queue, which holds 2,048 spans)", thousands(int64(want-o.spans)), spansPerCall)
		}
	}
	return append(notes, otel+".")
}

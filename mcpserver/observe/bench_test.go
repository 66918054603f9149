package observe

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/rs/zerolog"
)

// cpuTime is the CPU time of this process so far, every thread's.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	benchArgs   = json.RawMessage(`{"query":"anna","limit":5,"fields":["name","email"]}`)
	benchReply  = json.RawMessage(`{"query":"anna"}`)
	benchClient = &mcp.Implementation{Name: "bench", Version: "1.0"}
)

// observeCall makes one call as the call pipeline does: Start, Forward,
// End.
func observeCall(ob Observer, id int64) {
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(benchReply)}}}
	info := CallInfo{Transport: "stdio", Kind: "tool", Client: benchClient, Protocol: "2025-11-25", RequestID: strconv.FormatInt(id, 10)}
	ctx, c := ob.Start(context.Background(), info, "tairseach_demo_echo", benchArgs)
	c.Resolved("tairseach_demo_echo", benchArgs)
	_, _ = c.Forward(ctx, "demo.echo", "/tmp/d.sock", func(context.Context) (json.RawMessage, error) { return benchReply, nil })
	ob.End(c, res, 1<<20)
}

// BenchmarkObserve records calls one after the other, as a sequential
// client makes them, and reports the CPU a call costs this process: the
// export of the spans and the writes in the background included.
// `go test -run '^$' -bench Observe -benchtime 100000x ./mcpserver/observe/`
func BenchmarkObserve(b *testing.B) {
	for _, c := range observers(b) {
		b.Run(c.name, func(b *testing.B) {
			ob, done := c.start(b)
			b.ReportAllocs()
			cpu := cpuTime()
			b.ResetTimer()
			for i := range b.N {
				observeCall(ob, int64(i))
			}
			done()
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N)/1000, "cpu-µs/call")
		})
	}
}

// BenchmarkObserveParallel is BenchmarkObserve with 8 callers at once.
func BenchmarkObserveParallel(b *testing.B) {
	for _, c := range observers(b) {
		b.Run(c.name, func(b *testing.B) {
			ob, done := c.start(b)
			var id atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(4) // 8 callers on 2 cores
			cpu := cpuTime()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					observeCall(ob, id.Add(1))
				}
			})
			done()
			b.StopTimer()
			b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N)/1000, "cpu-µs/call")
		})
	}
}

type benchObserver struct {
	name  string
	start func(b *testing.B) (Observer, func())
}

func observers(b *testing.B) []benchObserver {
	return []benchObserver{
		{"none", func(*testing.B) (Observer, func()) { return Observer{}, func() {} }},
		{"audit", func(b *testing.B) (Observer, func()) { return benchAudit(b, DefaultAuditDelay) }},
		{"audit-undelayed", func(b *testing.B) (Observer, func()) { return benchAudit(b, 0) }},
		{"telemetry", func(b *testing.B) (Observer, func()) {
			srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				_, _ = io.Copy(io.Discard, r.Body)
			}))
			b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
			b.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
			b.Setenv("OTEL_BSP_MAX_QUEUE_SIZE", "1000000") // none dropped: each is exported, and counted
			b.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "1000")
			t, err := StartTelemetry(context.Background(), "bench")
			if err != nil {
				b.Fatal(err)
			}
			return Observer{Telemetry: t}, func() { _ = t.Shutdown(context.Background()); srv.Close() }
		}},
	}
}

// benchAudit is an audit log as serve opens it, with the given Delay.
func benchAudit(b *testing.B, delay time.Duration) (Observer, func()) {
	a, err := OpenAudit(filepath.Join(b.TempDir(), "audit.jsonl"), AuditOptions{Delay: delay, Logger: zerolog.Nop()})
	if err != nil {
		b.Fatal(err)
	}
	return Observer{Audit: a}, func() { _ = a.Close() }
}

// BenchmarkAuditLine encodes one call's audit line.
func BenchmarkAuditLine(b *testing.B) {
	a := &Audit{log: zerolog.Nop()}
	now := time.Now()
	o := &Call{start: now, end: now.Add(1500 * time.Microsecond), info: CallInfo{Transport: "stdio", Kind: "tool", Client: benchClient, Protocol: "2025-11-25", RequestID: "12345"},
		tool: "tairseach_demo_echo", args: benchArgs, method: "demo.echo", socket: "/tmp/d.sock", outcome: "ok", resultBytes: 160, forwarded: true}
	b.ReportAllocs()
	var buf [1024]byte
	for range b.N {
		_, _ = a.line(buf[:0], o)
	}
}

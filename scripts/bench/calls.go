package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// caller makes one call on behalf of worker w.
type caller func(ctx context.Context, w int) error

// callSet is the servers of the call cases at one protocol, started,
// checked and warmed once and kept across rounds, with their lean calls.
type callSet struct {
	proto    string
	sessions map[string]*session
	echo     map[string]*leanCall
	blob     map[string][]*leanCall // by resultSizes' index; nil where n/a
	raws     []*rawConn
}

func (cs *callSet) close() {
	for _, s := range cs.sessions {
		s.close()
	}
	for _, rc := range cs.raws {
		rc.close()
	}
}

// caller returns who's caller of the echo (blob < 0) or of a result size.
func (cs *callSet) caller(who string, blob int) caller {
	if who == raw {
		method, args := echoMethod, echoArgs
		if blob >= 0 {
			method, args = blobMethod, blobArgs(resultSizes[blob])
		}
		return func(_ context.Context, w int) error {
			_, err := cs.raws[w%len(cs.raws)].call(method, args)
			return err
		}
	}
	lc := cs.echo[who]
	if blob >= 0 {
		lc = cs.blob[who][blob]
	}
	return lc.do
}

func blobArgs(size int) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"bytes":%d}`, size-len(`{"data":""}`)))
}

// isVariant says whether who is a variant of the bridge, which runs only
// in its own turns and is paused between them.
func isVariant(who string) bool { return slices.Contains(variants, who) }

// startCalls spawns the call cases' servers at proto, checks what each
// returns, learns the lean calls and warms every contender until its cost
// per call is steady. The variants are left paused.
func (b *bench) startCalls(ctx context.Context, proto string) (*callSet, error) {
	e := b.e
	label := protoLabel(proto)
	cs := &callSet{proto: proto, sessions: map[string]*session{}, echo: map[string]*leanCall{}, blob: map[string][]*leanCall{}}
	ok := false
	defer func() {
		if !ok {
			cs.close()
		}
	}()
	t := time.Now()
	for range rawPool {
		rc, err := dialRaw(ctx, e.socket)
		if err != nil {
			return nil, err
		}
		cs.raws = append(cs.raws, rc)
	}
	if err := checkRaw(cs.raws[0]); err != nil {
		return nil, err
	}
	for _, who := range append([]string{floor, bridge, peer}, variants...) {
		s, err := e.spawn(ctx, who, e.example, proto, nil)
		var na errNA
		if errors.As(err, &na) {
			b.res.setNA(who, string(na), b.callIDs(proto)...)
			continue
		}
		if err != nil {
			return nil, err
		}
		cs.sessions[who] = s
		b.res.mu.Lock()
		if b.res.negotiated[label] == nil {
			b.res.negotiated[label] = map[string]string{}
		}
		b.res.negotiated[label][who] = s.proto
		b.res.mu.Unlock()
		if cs.echo[who], err = s.learnCall(ctx, echoTool, echoArgs, echoCheck); err != nil {
			return nil, err
		}
		if proto == proto2025 && !isVariant(who) {
			for _, size := range resultSizes {
				if who == peer && size > 60_000 {
					b.res.setNA(peer, "mcp-host-rpc loses socket replies over ~64 KiB", caseID("size"+strconv.Itoa(size), proto))
					cs.blob[who] = append(cs.blob[who], nil)
					continue
				}
				lc, err := s.learnCall(ctx, blobTool, blobArgs(size), blobCheck(size))
				if err != nil {
					return nil, err
				}
				cs.blob[who] = append(cs.blob[who], lc)
			}
		}
		s.pause() // until its own turn
	}
	for _, who := range append([]string{raw, floor, bridge, peer}, variants...) {
		if who != raw && cs.sessions[who] == nil {
			continue
		}
		s := cs.sessions[who]
		s.resume()
		w, err := b.warm(ctx, cs, who)
		if err == nil {
			err = b.settle(ctx, s)
		}
		if err != nil {
			return nil, err
		}
		if b.warmups[label] == nil {
			b.warmups[label] = map[string]warmup{}
		}
		b.warmups[label][who] = w
		s.pause()
	}
	b.cfg.logf("call servers at %s started, checked and warm in %s", label, since(t))
	ok = true
	return cs, nil
}

// echoCheck: the echo returns its arguments.
func echoCheck(res *mcp.CallToolResult) error {
	if txt := resultText(res); !jsonEqual([]byte(txt), echoArgs) {
		return fmt.Errorf("returned %q, want the arguments %s", txt, echoArgs)
	}
	return nil
}

// blobCheck: the blob is a result of size bytes.
func blobCheck(size int) func(*mcp.CallToolResult) error {
	return func(res *mcp.CallToolResult) error {
		if n := len(resultText(res)); n != size {
			return fmt.Errorf("returned %d bytes, want %d", n, size)
		}
		return nil
	}
}

// checkRaw makes sure the demo backend's echo and blob return what the
// MCP contenders are checked to return.
func checkRaw(rc *rawConn) error {
	got, err := rc.call(echoMethod, echoArgs)
	if err != nil {
		return err
	}
	if !jsonEqual(got, echoArgs) {
		return fmt.Errorf("raw: demo.echo returned %s", got)
	}
	for _, size := range resultSizes {
		got, err := rc.call(blobMethod, blobArgs(size))
		if err != nil {
			return err
		}
		if len(got) != size {
			return fmt.Errorf("raw: demo.blob returned %d bytes, want %d", len(got), size)
		}
	}
	return nil
}

// warmup is how a contender was warmed: calls made until its cost per
// call was steady, and its first and last blocks.
type warmup struct {
	calls       int
	first, last block
	steady      bool
}

// block is one block of warm-up calls: the server's CPU time per call
// (raw: the demo backend's) and the block's p50.
type block struct{ cpu, p50 float64 } // µs

// warm makes sequential echo calls in blocks until the server's CPU per
// call stops falling: the median of the last three blocks is at least 0.9×
// the median of the three before. A JIT (the peer's Node) or a runtime's
// first collections make a cold server's first thousands of calls cost
// more than later ones; the table is of servers past that.
func (b *bench) warm(ctx context.Context, cs *callSet, who string) (warmup, error) {
	size, minBlocks, maxBlocks := b.cfg.warmBlock, b.cfg.warmMin, b.cfg.warmMax
	call := cs.caller(who, -1)
	pids := b.serverPIDs(cs, who)
	var blocks []block
	steady := func() bool {
		n := len(blocks)
		if n < max(minBlocks, 6) {
			return false
		}
		med := func(bs []block) float64 {
			xs := []float64{bs[0].cpu, bs[1].cpu, bs[2].cpu}
			slices.Sort(xs)
			return xs[1]
		}
		return med(blocks[n-3:]) >= 0.9*med(blocks[n-6:n-3])
	}
	for len(blocks) < maxBlocks && !steady() {
		before := cpuTime(pids)
		lat, err := sequential(ctx, size, call)
		if err != nil {
			return warmup{}, err
		}
		blocks = append(blocks, block{cpu: micros(cpuTime(pids)-before) / float64(size), p50: micros(percentile(lat, 0.5))})
	}
	w := warmup{calls: size * len(blocks), first: blocks[0], last: blocks[len(blocks)-1], steady: steady()}
	if !w.steady {
		b.res.note(fmt.Sprintf("%s was not steady after %s warm-up calls at %s: its CPU per call was still falling.", who, thousands(int64(w.calls)), protoLabel(cs.proto)))
	}
	return w, nil
}

// serverPIDs are the processes whose CPU time is who's server's: for raw,
// the demo backend.
func (b *bench) serverPIDs(cs *callSet, who string) []int {
	if who == raw {
		return []int{b.e.demo.Process.Pid}
	}
	return []int{cs.sessions[who].cmd.Process.Pid}
}

// cpuMeter adds up, per contender and over its turns, the CPU time of its
// server, of the demo backend and of this driver: the client.
type cpuMeter struct {
	server, backend, client map[string]time.Duration
	s0, b0, c0              time.Duration
}

func newCPUMeter() *cpuMeter {
	return &cpuMeter{server: map[string]time.Duration{}, backend: map[string]time.Duration{}, client: map[string]time.Duration{}}
}

var self = []int{os.Getpid()}

func (m *cpuMeter) begin(server []int, backend int) {
	m.s0, m.b0, m.c0 = cpuTime(server), cpuTime([]int{backend}), cpuTime(self)
}

// endTimed ends the client's share, when the timed calls end.
func (m *cpuMeter) endTimed(who string) { m.client[who] += cpuTime(self) - m.c0 }

// end ends the servers' share, after the untimed settle, so that what
// bridge+otel exports of its calls is counted as its.
func (m *cpuMeter) end(who string, server []int, backend int) (serverCPU time.Duration) {
	serverCPU = cpuTime(server) - m.s0
	m.server[who] += serverCPU
	m.backend[who] += cpuTime([]int{backend}) - m.b0
	return serverCPU
}

// callIDs are the ids of the call cases at proto.
func (b *bench) callIDs(proto string) []string {
	ids := []string{}
	for _, name := range []string{"seq-p50", "seq-p99", "rate1", "cpu", "cpu+backend", "client-cpu", "rate8", "cpu8", "client-cpu8", "rate64"} {
		ids = append(ids, caseID(name, proto))
	}
	if proto == proto2025 {
		for _, size := range resultSizes {
			ids = append(ids, caseID("size"+strconv.Itoa(size), proto))
		}
	}
	return ids
}

// callCases runs one round of the per-call cases at one protocol version:
// sequential latency and CPU, throughput and CPU at 8 callers, throughput
// at 64 and, at 2025-11-25, result sizes. The variants run in the
// sequential and 8-caller cases, turn by turn with the others. Every
// server is paused outside its turns (session.pause).
func (b *bench) callCases(ctx context.Context, round int, cs *callSet) error {
	e, cfg, proto := b.e, b.cfg, cs.proto
	t := time.Now()
	backendPID := e.demo.Process.Pid
	running := func(whos ...string) []string { // in the order given: interleave orders each slice
		var out []string
		for _, who := range whos {
			if who == raw || cs.sessions[who] != nil {
				out = append(out, who)
			}
		}
		return out
	}
	present := running(raw, floor, bridge, peer)
	all := running(append([]string{raw, floor, bridge, peer}, variants...)...)

	// measured runs body as who's turn: the variant resumed, the CPU
	// metered, and, after the untimed settle, the variant paused again.
	// Each slice's values are kept too, for the per-slice ratios: time
	// (a sequential slice's p50; else its calls/s) under timeID, and the
	// server's CPU per call under cpuID ("" for none).
	measured := func(m *cpuMeter, timeID, cpuID string, body func(who string, n int) ([]time.Duration, error)) (
		func(ctx context.Context, who string, n int) ([]time.Duration, error), func(who string) error,
	) {
		calls := map[string]int{}
		turn := func(ctx context.Context, who string, n int) ([]time.Duration, error) {
			s := cs.sessions[who]
			s.resume()
			m.begin(b.serverPIDs(cs, who), backendPID)
			stopTiming := b.timing(who)
			start := time.Now()
			lat, err := body(who, n)
			took := time.Since(start)
			m.endTimed(who)
			stopTiming()
			calls[who] = n
			if lat != nil {
				b.res.addSlice(timeID, who, micros(percentile(lat, 0.5)))
			} else {
				b.res.addSlice(timeID, who, float64(n)/took.Seconds())
			}
			return lat, err
		}
		settle := func(who string) error {
			s := cs.sessions[who]
			err := b.settle(ctx, s)
			cpu := m.end(who, b.serverPIDs(cs, who), backendPID)
			if cpuID != "" {
				b.res.addSlice(cpuID, who, micros(cpu)/float64(calls[who]))
			}
			s.pause()
			return err
		}
		return turn, settle
	}

	seq := newCPUMeter()
	turn, settle := measured(seq, caseID("seq-p50", proto), caseID("cpu", proto), func(who string, n int) ([]time.Duration, error) {
		return sequential(ctx, n, cs.caller(who, -1))
	})
	lat, elapsed, err := interleave(ctx, round, all, cfg.seqCalls, numSlices, turn, settle)
	if err != nil {
		return err
	}
	for _, who := range all {
		n := float64(len(lat[who]))
		b.res.add(caseID("seq-p50", proto), who, micros(percentile(lat[who], 0.50)))
		b.res.add(caseID("seq-p99", proto), who, micros(percentile(lat[who], 0.99)))
		b.res.add(caseID("rate1", proto), who, n/elapsed[who].Seconds())
		b.res.add(caseID("cpu", proto), who, micros(seq.server[who])/n)
		b.res.add(caseID("client-cpu", proto), who, micros(seq.client[who])/n)
		if who != raw && who != floor {
			b.res.add(caseID("cpu+backend", proto), who, micros(seq.server[who]+seq.backend[who])/n)
		} else {
			b.res.setNA(who, "", caseID("cpu+backend", proto))
		}
	}
	for _, callers := range []int{8, 64} {
		whos, m := present, newCPUMeter()
		if callers == 8 {
			whos = all
		}
		cpuID := ""
		if callers == 8 {
			cpuID = caseID("cpu8", proto)
		}
		turn, settle := measured(m, caseID("rate"+strconv.Itoa(callers), proto), cpuID, func(who string, n int) ([]time.Duration, error) {
			workers := callers
			if who == raw {
				workers = min(callers, rawPool) // one connection per worker
			}
			return nil, concurrent(ctx, n, workers, cs.caller(who, -1))
		})
		n, parts := cfg.rate64Calls, numSlices
		if callers == 8 {
			n, parts = cfg.rate8Calls, cfg.rate8Slices
		}
		_, elapsed, err := interleave(ctx, round, whos, n, parts, turn, settle)
		if err != nil {
			return err
		}
		for _, who := range whos {
			b.res.add(caseID("rate"+strconv.Itoa(callers), proto), who, float64(n)/elapsed[who].Seconds())
			if callers == 8 {
				b.res.add(caseID("cpu8", proto), who, micros(m.server[who])/float64(n))
				b.res.add(caseID("client-cpu8", proto), who, micros(m.client[who])/float64(n))
			}
		}
	}
	if proto == proto2025 {
		for i, size := range resultSizes {
			var whos []string
			for _, who := range present {
				if who == raw || cs.blob[who][i] != nil {
					whos = append(whos, who)
				}
			}
			id := caseID("size"+strconv.Itoa(size), proto)
			lat, _, err := interleave(ctx, round, whos, cfg.sizeCalls[i], numSlices, func(ctx context.Context, who string, n int) ([]time.Duration, error) {
				s := cs.sessions[who]
				s.resume()
				defer s.pause()
				lat, err := sequential(ctx, n, cs.caller(who, i))
				if err == nil {
					b.res.addSlice(id, who, micros(percentile(lat, 0.5)))
				}
				return lat, err
			}, nil)
			if err != nil {
				return err
			}
			for _, who := range whos {
				b.res.add(id, who, micros(percentile(lat[who], 0.50)))
			}
		}
	}
	b.cfg.logf("round %d: call cases at %s in %s", round+1, protoLabel(proto), since(t))
	return nil
}

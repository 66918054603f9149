package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Units of a row's values.
const (
	unitMicros = iota // lower is better
	unitRate          // calls/s, higher is better
	unitMiB           // lower is better
)

// row is one line of the table.
type row struct {
	id     string
	label  string
	unit   int
	checks []check
}

// check is one target: text says it, eval judges it from the row's values.
type check struct {
	text string
	eval func(v rowValues) verdict
}

// verdict is a target's: met or missed, or within noise when the
// confidence interval of a ratio holds the target's line.
type verdict struct {
	state  int // one of the below
	lo, hi float64
}

const (
	unknown = iota
	isMet
	isMissed
	isNoise
)

// judge gives the verdict of a ratio's interval [lo, hi] against ok.
func judge(lo, hi float64, ok func(float64) bool) verdict {
	switch {
	case ok(lo) && ok(hi):
		return verdict{state: isMet, lo: lo, hi: hi}
	case !ok(lo) && !ok(hi):
		return verdict{state: isMissed, lo: lo, hi: hi}
	}
	return verdict{state: isNoise, lo: lo, hi: hi}
}

// ratioVerdict judges bridge ÷ other against ok by its per-slice
// interval where the case has one, else by the ratio alone.
func ratioVerdict(v rowValues, other string, ok func(float64) bool) verdict {
	if _, lo, hi, found := v.res.sliceRatio(v.id, bridge, other); found {
		return judge(lo, hi, ok)
	}
	r, found := v.ratio(bridge, other)
	if !found {
		return verdict{}
	}
	return judge(r, r, ok)
}

func (vd verdict) String() string {
	switch vd.state {
	case isMet:
		return "met"
	case isMissed:
		return "**missed**"
	case isNoise:
		return fmt.Sprintf("within noise (%.2f–%.2f)", vd.lo, vd.hi)
	}
	return "n/a"
}

// rowValues are one case's values.
type rowValues struct {
	res *results
	id  string
}

// of returns who's median.
func (v rowValues) of(who string) (float64, bool) { return v.res.median(v.id, who) }

// ratio returns who ÷ other as the ratio its per-slice ratios scatter
// around (see shift), or the median of the per-round ratios where the
// case keeps no slices (the contenders share each slice and round, and so
// its conditions), or the ratio of the medians when their rounds differ.
func (v rowValues) ratio(who, other string) (float64, bool) {
	if r, _, _, ok := v.res.sliceRatio(v.id, who, other); ok {
		return r, true
	}
	if r, ok := v.res.ratioMedian(v.id, who, other); ok {
		return r, true
	}
	a, ok1 := v.of(who)
	b, ok2 := v.of(other)
	if !ok1 || !ok2 || b <= 0 {
		return 0, false
	}
	return a / b, true
}

// Targets from the issue.
const (
	debounceMs = 100
)

func ratioAtMost(other string, x float64) check {
	return check{"≤ " + times(x) + " " + other, func(v rowValues) verdict {
		return ratioVerdict(v, other, func(r float64) bool { return r <= x })
	}}
}

func ratioAtLeast(other string, x float64) check {
	text := "≥ " + times(x) + " " + other
	if x == 1 && other == peer {
		text = "≥ peer"
	}
	return check{text, func(v rowValues) verdict {
		return ratioVerdict(v, other, func(r float64) bool { return r >= x })
	}}
}

// times formats a factor of a target: 1.15×, 1.0×, 4×.
func times(x float64) string {
	if x == 1 {
		return "1.0×"
	}
	return strconv.FormatFloat(x, 'f', -1, 64) + "×"
}

// floorPlusRaw: the bridge's value is at most sdk-floor's plus k times
// raw's (a call may add k socket round trips to the floor).
func floorPlusRaw(k float64) check {
	return check{"≤ sdk-floor + " + strconv.FormatFloat(k, 'f', -1, 64) + " raw", func(v rowValues) verdict {
		ok := func(q float64) bool { return q <= 1 }
		// Per slice: bridge ÷ (sdk-floor + k raw) of the same slice.
		bs, fs, rs := v.res.slices[v.id][bridge], v.res.slices[v.id][floor], v.res.slices[v.id][raw]
		if n := len(bs); n > 0 && len(fs) == n && len(rs) == n {
			line := make([]float64, n)
			for i := range bs {
				line[i] = fs[i] + k*rs[i]
			}
			if _, lo, hi, found := paired(bs, line, false); found {
				return judge(lo, hi, ok)
			}
		}
		b, ok1 := v.of(bridge)
		f, ok2 := v.of(floor)
		r, ok3 := v.of(raw)
		if !ok1 || !ok2 || !ok3 {
			return verdict{}
		}
		q := b / (f + k*r)
		return judge(q, q, ok)
	}}
}

func atMost(text string, limit float64) check {
	return check{text, func(v rowValues) verdict {
		b, ok := v.of(bridge)
		if !ok {
			return verdict{}
		}
		return judge(b, b, func(x float64) bool { return x <= limit })
	}}
}

// rows returns the table's rows, in order.
func (b *bench) rows() []row {
	var rs []row
	for _, proto := range []string{proto2025, proto2026} {
		l := protoLabel(proto)
		rs = append(rs,
			row{caseID("seq-p50", proto), "call p50, sequential · " + l, unitMicros, []check{floorPlusRaw(1.5), ratioAtMost(peer, 0.9)}},
			row{caseID("seq-p99", proto), "call p99, sequential · " + l, unitMicros, nil},
			row{caseID("rate1", proto), "calls/s, 1 caller · " + l, unitRate, nil},
			row{caseID("cpu", proto), "server CPU per call, sequential · " + l, unitMicros, []check{ratioAtMost(floor, 1), ratioAtMost(peer, 1)}},
			row{caseID("cpu+backend", proto), "server + backend CPU per call, sequential · " + l, unitMicros, nil},
			row{caseID("client-cpu", proto), "client CPU per call, sequential · " + l, unitMicros, nil},
			row{caseID("rate8", proto), "calls/s, 8 callers · " + l, unitRate, []check{ratioAtLeast(floor, 1), ratioAtLeast(peer, 1.3)}},
			row{caseID("cpu8", proto), "server CPU per call, 8 callers · " + l, unitMicros, []check{ratioAtMost(peer, 0.5)}},
			row{caseID("client-cpu8", proto), "client CPU per call, 8 callers · " + l, unitMicros, nil},
			row{caseID("rate64", proto), "calls/s, 64 callers · " + l, unitRate, []check{ratioAtLeast(floor, 1), ratioAtLeast(peer, 1.2)}},
		)
	}
	rs = append(rs,
		row{caseID("size100", proto2025), "result 100 B, p50", unitMicros, nil},
		row{caseID("size10000", proto2025), "result 10 KB, p50", unitMicros, nil},
		row{caseID("size1000000", proto2025), "result 1 MB, p50", unitMicros, []check{ratioAtMost(floor, 1.3), ratioAtMost(raw, 4)}},
		row{"list@corpus", fmt.Sprintf("tools/list p50, corpus (%d tools)", b.e.corpus.tools), unitMicros, nil},
		row{"list@1,000 tools", "tools/list p50, 1,000 tools", unitMicros, []check{ratioAtMost(floor, 1.1)}},
		row{"startup@corpus", "spawn → initialize, corpus", unitMicros, []check{atMost("≤ 15 ms", 15_000)}},
		row{"startup@1,000 tools", "spawn → initialize, 1,000 tools", unitMicros, []check{atMost("≤ 20 ms", 20_000)}},
		row{"firstlist@corpus", "spawn → first tools/list result, corpus", unitMicros, nil},
		row{"firstlist@1,000 tools", "spawn → first tools/list result, 1,000 tools", unitMicros, nil},
		row{"rss@corpus", "idle RSS, corpus", unitMiB, []check{atMost("≤ 15 MiB", 15)}},
		row{"rss@1,000 tools", "idle RSS, 1,000 tools", unitMiB, nil},
		row{"anon@corpus", "idle private memory (RssAnon), corpus", unitMiB, nil},
		row{"reload", "reload: write → list_changed, p50", unitMicros, []check{atMost(fmt.Sprintf("≤ %d ms (debounce + 25 ms)", debounceMs+25), (debounceMs+25)*1000)}},
	)
	return rs
}

// variantTargetFactor bounds a variant's time per call, as a factor of
// the plain bridge's.
const variantTargetFactor = 1.1

// variantTable renders the variants' rows: each case of the bridge with
// every variant beside it, their ratios to it and the targets.
func (b *bench) variantTable(cell func(id, who string, unit int) string) (header []string, lines [][]string, met, missed, noisy int) {
	header = append([]string{"case", bridge}, variants...)
	for _, who := range variants {
		header = append(header, strings.TrimPrefix(who, bridge+"+")+"/bridge")
	}
	header = append(header, "target", "met? ("+strings.ReplaceAll(strings.Join(variants, "; "), bridge+"+", "")+")")
	for _, proto := range []string{proto2025, proto2026} {
		l := protoLabel(proto)
		for _, r := range []struct {
			id, label string
			unit      int
			target    bool
		}{
			{caseID("seq-p50", proto), "call p50, sequential · " + l, unitMicros, true},
			{caseID("cpu", proto), "server CPU per call, sequential · " + l, unitMicros, false},
			{caseID("rate8", proto), "calls/s, 8 callers · " + l, unitRate, true},
			{caseID("cpu8", proto), "server CPU per call, 8 callers · " + l, unitMicros, false},
		} {
			line := []string{r.label, cell(r.id, bridge, r.unit)}
			for _, who := range variants {
				line = append(line, cell(r.id, who, r.unit))
			}
			var verdicts []string
			for _, who := range variants {
				// A target row's ratio is the per-slice ratios' (see
				// shift), with its confidence interval: the verdict is
				// "met" or "missed" only when the whole interval is.
				ratio, lo, hi, ok := b.res.sliceRatio(r.id, who, bridge)
				interval := ok && r.target
				if !interval {
					// The median of the per-round ratios: a variant and
					// the bridge share each round's slices.
					ratio, ok = b.res.ratioMedian(r.id, who, bridge)
					lo, hi = ratio, ratio
				}
				if !ok {
					line = append(line, "–")
					verdicts = append(verdicts, "n/a")
					continue
				}
				if interval {
					line = append(line, fmt.Sprintf("%.2f× (%.2f–%.2f)", ratio, lo, hi))
				} else {
					line = append(line, fmt.Sprintf("%.2f×", ratio))
				}
				if !r.target {
					continue
				}
				vd := judge(lo, hi, func(x float64) bool {
					if r.unit == unitRate {
						return x >= 1/variantTargetFactor
					}
					return x <= variantTargetFactor
				})
				verdicts = append(verdicts, vd.String())
				switch vd.state {
				case isMet:
					met++
				case isMissed:
					missed++
				case isNoise:
					noisy++
				}
			}
			switch {
			case !r.target:
				line = append(line, "", "")
			case r.unit == unitRate:
				line = append(line, "≥ bridge ÷ "+strconv.FormatFloat(variantTargetFactor, 'f', -1, 64), strings.Join(verdicts, "; "))
			default:
				line = append(line, "≤ "+times(variantTargetFactor)+" bridge", strings.Join(verdicts, "; "))
			}
			lines = append(lines, line)
		}
	}
	return header, lines, met, missed, noisy
}

// info describes the machine and the run.
type info struct {
	date, cpu, goVersion, node, bridgeVersion, loadStart string
	peer                                                 string // what the peer loads
	cpus                                                 int
	took                                                 time.Duration
}

func machineInfo(e *env) info {
	in := info{
		date:      time.Now().UTC().Format("2006-01-02 15:04 UTC"),
		cpus:      runtime.NumCPU(),
		goVersion: runtime.Version(),
		loadStart: loadavg(),
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if rest, ok := strings.CutPrefix(line, "model name"); ok {
				in.cpu = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), ":"))
				break
			}
		}
	}
	if out, err := exec.Command("node", "--version").Output(); err == nil {
		in.node = strings.TrimSpace(string(out))
	}
	if e.cfg.peer != "" {
		v, err := peerVersions(e.cfg.peer)
		if err != nil {
			v = "unknown (" + err.Error() + ")"
		}
		in.peer = v
	}
	if out, err := exec.Command(e.cfg.bridge, "--version").Output(); err == nil {
		in.bridgeVersion = strings.TrimSpace(string(out))
	}
	return in
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// report renders the results file: the machine, the table, the notes.
func (b *bench) report(in info) string {
	cols := []string{raw, floor, bridge, peer}
	header := []string{"case", raw, floor, bridge, peer, "bridge/sdk-floor", "bridge/raw", "bridge/peer", "target", "met?"}
	var lines [][]string
	var notes []string
	addNote := func(s string) {
		for _, n := range notes {
			if n == s {
				return
			}
		}
		notes = append(notes, s)
	}
	// cell renders who's value of a case, or why there is none.
	cell := func(id, who string, unit int) string {
		if x, ok := b.res.median(id, who); ok {
			return format(x, unit)
		}
		reason, ok := b.res.na[id][who]
		switch {
		case ok && reason == "":
			return "–"
		case strings.HasPrefix(reason, "n/a"):
			return reason
		case ok:
			addNote(fmt.Sprintf("%s n/a: %s.", who, reason))
			return "n/a"
		}
		return "?"
	}
	var counts [4]int // by verdict state
	for _, r := range b.rows() {
		v := rowValues{b.res, r.id}
		line := []string{r.label}
		for _, who := range cols {
			line = append(line, cell(r.id, who, r.unit))
		}
		for _, other := range []string{floor, raw, peer} {
			if x, ok := v.ratio(bridge, other); ok {
				line = append(line, fmt.Sprintf("%.2f×", x))
			} else {
				line = append(line, "–")
			}
		}
		var targets, verdicts []string
		for _, c := range r.checks {
			targets = append(targets, c.text)
			vd := c.eval(v)
			verdicts = append(verdicts, vd.String())
			counts[vd.state]++
		}
		line = append(line, strings.Join(targets, "; "), strings.Join(verdicts, "; "))
		lines = append(lines, line)
	}

	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# tairseach-mcp benchmark results\n\n")
	mode := plural(b.roundsDone, "round") + ", medians"
	if b.cfg.quick {
		mode = "-quick: 1 round, few calls; a smoke test, not a measurement"
	}
	fmt.Fprintf(&buf, "`make bench` (`go run ./scripts/bench`), %s, on %s. Machine: %s/%s, %d CPUs (nproc), %s; %s",
		mode, in.date, runtime.GOOS, runtime.GOARCH, in.cpus, orUnknown(in.cpu), in.goVersion)
	if in.node != "" {
		fmt.Fprintf(&buf, ", node %s", in.node)
	}
	if in.peer != "" {
		fmt.Fprintf(&buf, ". Peer: %s", in.peer)
	}
	fmt.Fprintf(&buf, ". Bridge: `%s`. Load average at start %s, at end %s; the run took %s. "+
		"Client, servers and backend share the machine: compare the ratios, measured side by side, more than the absolute times.\n\n",
		orUnknown(in.bridgeVersion), in.loadStart, loadavg(), in.took.Round(time.Second))
	buf.WriteString(markdownTable(header, lines))
	fmt.Fprintf(&buf, "\nTargets: %d met, %d missed, %d within noise (the confidence interval of the ratio holds the target's line: this machine cannot tell).\n\n",
		counts[isMet], counts[isMissed], counts[isNoise])
	buf.WriteString("Every contender warm: the call cases' servers are started once per protocol and kept across the rounds; before the first round, " +
		"each makes sequential echo calls in blocks until its server's CPU per call stops falling (see the notes). Its first and last block:\n\n")
	buf.WriteString(b.warmTable())
	vheader, vlines, vmet, vmissed, vnoisy := b.variantTable(cell)
	buf.WriteString("The bridge with its audit log or its OpenTelemetry export on, in the same rounds and slices as the plain bridge above (see the notes):\n\n")
	buf.WriteString(markdownTable(vheader, vlines))
	fmt.Fprintf(&buf, "\nTargets of the variants: %d met, %d missed, %d within noise (the interval of the ratio holds the target's line: this machine cannot tell).\n\n", vmet, vmissed, vnoisy)

	buf.WriteString("Notes:\n\n")
	for _, n := range append(b.staticNotes(), b.variantNotes()...) {
		fmt.Fprintf(&buf, "- %s\n", n)
	}
	for _, n := range append(b.res.notes, notes...) {
		fmt.Fprintf(&buf, "- %s\n", n)
	}
	return buf.String()
}

func (b *bench) staticNotes() []string {
	notes := []string{
		"Ratios are as their column says, bridge ÷ other here and variant ÷ bridge in the variants' table: in the call cases, the ratio the per-slice ratios scatter around (the two contenders shared each slice's conditions; its Hodges–Lehmann estimate: over their logarithms, the median of the means of every pair); elsewhere, and in the variants' CPU rows, the median of the per-round ratios. So a ratio can differ from the ratio of the medians beside it. Below 1× is better for times and memory, above 1× is better for calls/s. \"–\": does not apply.",
		fmt.Sprintf("A ratio target is judged on the confidence interval of that estimate: the Wilcoxon signed-rank test's, at least 95 %% (of the N = n(n+1)/2 pairwise means of n slices, ranks C and N − C + 1, C one more than the test's exact two-sided 5 %% critical value; none below %d slices), widened where need be to hold the ratio of the totals, all of one contender's time over the other's, so that a cost that comes in a few slices counts in full. Met, or missed, when the whole interval is; within noise, with the interval, when it holds the target's line, which this machine cannot tell the ratio from. The interval assumes that the logarithms of the ratios scatter symmetrically and independently, as they do for two contenders run alike in the same slice.", minSlices),
		fmt.Sprintf("Each contender runs each case in turn, in slices (%d a round, %d at 8 callers), in an order that rotates every round and slice; every call server is stopped (SIGSTOP) outside its own turns. Every value is the median of the per-round values (a per-round value is itself a p50/p99 over that round's calls).", numSlices, b.cfg.rate8Slices),
		fmt.Sprintf("Warm: the call cases' servers (one per contender and protocol) are started once and kept across the rounds. Before the first round each makes sequential echo calls in blocks of %d until its server's CPU per call has stopped falling: the median of its last 3 blocks is at least 0.9× the median of the 3 before (at least %d blocks, at most %d). The warm-up table gives its first and last block.",
			b.cfg.warmBlock, max(b.cfg.warmMin, 6), b.cfg.warmMax),
		fmt.Sprintf("Calls: tools/call of tairseach_demo_echo with %s (demo.echo returns it); %d sequential calls per round (calls/s at 1 caller comes from that run), %d calls at 8 callers and %d at 64. Result cases call tairseach_demo_blob (raw: demo.blob) for a result of exactly 100, 10,000 and 1,000,000 bytes of JSON.",
			echoArgs, b.cfg.seqCalls, b.cfg.rate8Calls, b.cfg.rate64Calls),
		"The client: the go-sdk client makes each server's handshake (initialize, or server/discover at 2026-07-28), and one call of each kind, checking its result. The timed calls are the bytes of that call as the go-sdk client wrote them, with a new id, written to the server's stdin by a lean caller in this driver; one goroutine reads the server's stdout and matches each reply to its call by id and, byte for byte but for the id, to a reply decoded and checked in full. So every server receives what a go-sdk client sends, every result is checked, and the client costs a write, a read and a compare per call, not the go-sdk client's decoding.",
		fmt.Sprintf("raw: this driver on the demo backend's socket, min(callers, %d) persistent connections (the bridge's pool size; the backend answers one request at a time per connection), each reply decoded with encoding/json.", rawPool),
		"sdk-floor: a go-sdk stdio server registering the same tool definitions (loaded with the manifest package) whose handlers return at once from memory the same text and structuredContent the bridge returns. bridge: tairseach-mcp --log-level warn --output-schemas=strict --result-budget off on the demo backend (text plus structuredContent, results validated against the outputSchema, every result whole). peer: mcp-host-rpc (TypeScript SDK) on the same backend, installed in scripts/bench/peer from its own lock file as npx installs it for a user, the versions it loads named above; it returns text only and publishes zod-derived input schemas without outputSchemas, so its tools/list is smaller.",
		"CPU per call: CPU time (from /proc/PID/task/*/schedstat, summed over threads) over a contender's turns, divided by its calls. Server: the server process, from the start of its turn to after its untimed settle (so bridge+otel's export of its spans is its own); for raw, the demo backend. Server + backend adds the demo backend's over the same turns, for the contenders that call it. Client: this driver's process over the timed calls only: the lean caller and its reading goroutine (for raw: its socket calls). Sequential and at 8 callers.",
		"Spawn → initialize: from exec to the initialize result, as the go-sdk client sees it (protocol 2025-11-25); spawn → first tools/list: from exec to the complete list, just after. Idle RSS: VmRSS of the server process " + idleWait.String() + " after initialize and one tools/list; its private memory: RssAnon, the part of VmRSS that is neither the executable's pages nor other files' (the kernel maps a file's pages around each one touched, 64–128 KiB at a time here, so the executable's share grows with its size).",
		fmt.Sprintf("Reload: os.WriteFile of demo.json with a changed description into the bridge's --manifests, to the client's ToolListChangedHandler; includes the bridge's %d ms debounce and the go-sdk's 10 ms one.", debounceMs),
	}
	if neg := b.res.negotiated["2026-07-28"]; len(neg) > 0 {
		var parts []string
		for _, who := range []string{floor, bridge, peer} {
			if v, ok := neg[who]; ok {
				parts = append(parts, who+" "+v)
			}
		}
		notes = append(notes, "Rows marked 2026-07-28 leave the client's protocol version at its default (2026-07-28); negotiated: "+strings.Join(parts, ", ")+".")
	}
	return notes
}

// warmTable renders each contender's warm-up: its first and last block.
func (b *bench) warmTable() string {
	header := []string{"protocol", "contender", "warm-up calls", "CPU per call, first block", "last block", "p50, first block", "last block", "steady?"}
	var lines [][]string
	for _, proto := range []string{proto2025, proto2026} {
		l := protoLabel(proto)
		for _, who := range append([]string{raw, floor, bridge, peer}, variants...) {
			w, ok := b.warmups[l][who]
			if !ok {
				continue
			}
			steady := "yes"
			if !w.steady {
				steady = "**no**"
			}
			lines = append(lines, []string{l, who, thousands(int64(w.calls)),
				format(w.first.cpu, unitMicros), format(w.last.cpu, unitMicros),
				format(w.first.p50, unitMicros), format(w.last.p50, unitMicros), steady})
		}
	}
	return markdownTable(header, lines) + "\n"
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// format renders a value in its unit.
func format(x float64, unit int) string {
	switch unit {
	case unitRate:
		return thousands(int64(x+0.5)) + "/s"
	case unitMiB:
		return fmt.Sprintf("%.1f MiB", x)
	}
	switch {
	case x < 1000:
		return fmt.Sprintf("%.0f µs", x)
	case x < 10_000:
		return fmt.Sprintf("%.2f ms", x/1000)
	default:
		return fmt.Sprintf("%.1f ms", x/1000)
	}
}

func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// markdownTable aligns a Markdown table so it reads well as plain text too.
func markdownTable(header []string, rows [][]string) string {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = runeLen(h)
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], runeLen(c))
		}
	}
	var buf bytes.Buffer
	line := func(cells []string) {
		buf.WriteString("|")
		for i, c := range cells {
			pad := width[i] - runeLen(c)
			if i == 0 || i >= len(cells)-2 {
				fmt.Fprintf(&buf, " %s%s |", c, strings.Repeat(" ", pad))
			} else {
				fmt.Fprintf(&buf, " %s%s |", strings.Repeat(" ", pad), c)
			}
		}
		buf.WriteString("\n")
	}
	line(header)
	buf.WriteString("|")
	for i, w := range width {
		if i == 0 || i >= len(width)-2 {
			buf.WriteString(" " + strings.Repeat("-", w) + " |")
		} else {
			buf.WriteString(" " + strings.Repeat("-", w-1) + ": |")
		}
	}
	buf.WriteString("\n")
	for _, r := range rows {
		line(r)
	}
	return buf.String()
}

func runeLen(s string) int { return len([]rune(s)) }

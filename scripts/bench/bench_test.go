package main

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/geilt/tairseach-mcp/manifest"
)

// TestBenchQuick runs the whole benchmark once with few calls (about 15 s
// and a go build). It is a smoke test of the harness, not part of make test:
//
//	TAIRSEACH_BENCH_SMOKE=1 go test -run TestBenchQuick -v ./scripts/bench
func TestBenchQuick(t *testing.T) {
	if os.Getenv("TAIRSEACH_BENCH_SMOKE") != "1" {
		t.Skip("set TAIRSEACH_BENCH_SMOKE=1 to run the benchmark smoke test")
	}
	c := config{
		quick:  true,
		rounds: 1,
		peer:   "scripts/bench/peer/node_modules/.bin/mcp-host-rpc",
		corpus: "manifest/testdata/tairseach-manifests",
	}
	if err := setup(&c); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var out bytes.Buffer
	if err := run(ctx, c, &out); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + out.String())
	got := out.String()
	for _, want := range []string{"| call p50, sequential · 2025-11-25", "| result 1 MB, p50", "| reload: write → list_changed", "Targets: ",
		"| bridge+audit |", "| calls/s, 8 callers · 2026-07-28", "Targets of the variants: ", "one per call", "trace exports ("} {
		if !strings.Contains(got, want) {
			t.Errorf("results lack %q", want)
		}
	}
	if strings.Contains(got, " ? |") {
		t.Errorf("a case has no value and no reason")
	}
}

func TestGenerate(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir, 100, 10); err != nil {
		t.Fatal(err)
	}
	reg, err := manifest.Load(dir, manifest.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Tools) != 1000 || len(reg.Skipped) != 0 || len(reg.Problems) != 0 || len(reg.FileErrors) != 0 {
		t.Fatalf("got %d tools, %d skipped, %d problems, %d file errors; want 1000 clean tools",
			len(reg.Tools), len(reg.Skipped), len(reg.Problems), len(reg.FileErrors))
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 100; i >= 1; i-- {
		d = append(d, time.Duration(i))
	}
	for _, tc := range []struct {
		p    float64
		want time.Duration
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0.001, 1}} {
		if got := percentile(d, tc.p); got != tc.want {
			t.Errorf("percentile(1..100, %v) = %v, want %v", tc.p, got, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		x    float64
		unit int
		want string
	}{
		{45.4, unitMicros, "45 µs"},
		{8712, unitMicros, "8.71 ms"},
		{78_000, unitMicros, "78.0 ms"},
		{109_000.4, unitRate, "109,000/s"},
		{999, unitRate, "999/s"},
		{14.04, unitMiB, "14.0 MiB"},
	} {
		if got := format(tc.x, tc.unit); got != tc.want {
			t.Errorf("format(%v, %d) = %q, want %q", tc.x, tc.unit, got, tc.want)
		}
	}
}

func TestEditDescription(t *testing.T) {
	b, err := os.ReadFile("../../manifests.example/demo.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := editDescription(b, 7)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out, []byte("(revision 7)")) {
		t.Errorf("no revision in the edited manifest")
	}
	if _, err := manifest.ParseFile("demo.json", out, manifest.Options{Prefix: prefix}); err != nil {
		t.Errorf("edited manifest does not parse: %v", err)
	}
}

func TestBridgeEnv(t *testing.T) {
	got := bridgeEnv([]string{"PATH=/bin", "OTEL_EXPORTER_OTLP_ENDPOINT=http://x", "OTEL_SDK_DISABLED=true",
		"TAIRSEACH_MCP_AUDIT_LOG=/tmp/a", "TAIRSEACH_MCP_CALL_TIMEOUT=1m", "HOME=/root"})
	want := []string{"PATH=/bin", "TAIRSEACH_MCP_CALL_TIMEOUT=1m", "HOME=/root"}
	if !slices.Equal(got, want) {
		t.Errorf("bridgeEnv = %q, want %q", got, want)
	}
}

// TestCollector exports through the exporters the bridge uses, configured
// by the environment bridge+otel gets, and checks that they take the
// collector's empty 200 for a success and that it counts what they sent.
func TestCollector(t *testing.T) {
	c, err := startCollector()
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	for _, kv := range c.env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	ctx := context.Background()
	c.setOwner(1)
	base, err := c.snapshot(1)
	if err != nil {
		t.Fatal(err)
	}

	texp, err := otlptracehttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp))
	c.setTiming(true)
	for range 700 { // more than one batch of 512
		_, span := tp.Tracer("test").Start(ctx, "tools/call")
		span.End()
	}
	c.setTiming(false)
	st, err := c.drain(ctx, 1, base, 700)
	if err != nil {
		t.Fatal(err)
	}
	if got := st.sub(base); got.spans != 700 || got.traceReqs < 2 {
		t.Errorf("after the drain: %d spans in %d requests, want 700 in at least 2", got.spans, got.traceReqs)
	}
	if err := tp.Shutdown(ctx); err != nil {
		t.Errorf("trace export: %v", err)
	}

	mexp, err := otlpmetrichttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewPeriodicReader(mexp)))
	h, err := mp.Meter("test").Float64Histogram("d")
	if err != nil {
		t.Fatal(err)
	}
	h.Record(ctx, 0.1)
	if err := mp.Shutdown(ctx); err != nil {
		t.Errorf("metric export: %v", err)
	}

	st, err = c.snapshot(1)
	if err != nil {
		t.Fatal(err)
	}
	got := st.sub(base)
	if got.spans != 700 || got.metricReqs < 1 || got.bytes == 0 {
		t.Errorf("got %+v, want 700 spans, a metric export and some bytes", got)
	}

	// What arrives while another server runs is not this one's.
	c.setOwner(2)
	tp2 := sdktrace.NewTracerProvider(sdktrace.WithBatcher(texp2(t, ctx)))
	_, span := tp2.Tracer("test").Start(ctx, "tools/call")
	span.End()
	if err := tp2.Shutdown(ctx); err != nil {
		t.Errorf("trace export: %v", err)
	}
	if st, err = c.snapshot(1); err != nil || st.sub(base).spans != 700 {
		t.Errorf("owner 1 after owner 2 exported: %+v, %v; want its 700 spans", st.sub(base), err)
	}
	if st, err = c.snapshot(2); err != nil || st.spans != 1 {
		t.Errorf("owner 2: %+v, %v; want 1 span", st, err)
	}
}

func texp2(t *testing.T, ctx context.Context) sdktrace.SpanExporter {
	t.Helper()
	e, err := otlptracehttp.New(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestVariantTable(t *testing.T) {
	b := &bench{res: &results{vals: map[string]map[string][]float64{}, na: map[string]map[string]string{}}}
	for _, proto := range []string{proto2025, proto2026} {
		b.res.add(caseID("seq-p50", proto), bridge, 100)
		b.res.add(caseID("seq-p50", proto), bridgeAudit, 105)
		b.res.add(caseID("seq-p50", proto), bridgeOTel, 120)
		b.res.add(caseID("cpu", proto), bridge, 80)
		b.res.add(caseID("cpu", proto), bridgeAudit, 92)
		b.res.add(caseID("cpu", proto), bridgeOTel, 200)
		b.res.add(caseID("rate8", proto), bridge, 1000)
		b.res.add(caseID("rate8", proto), bridgeAudit, 950)
		b.res.add(caseID("rate8", proto), bridgeOTel, 900)
	}
	cell := func(id, who string, unit int) string {
		x, _ := b.res.median(id, who)
		return format(x, unit)
	}
	header, lines, met, missed, noisy := b.variantTable(cell)
	if want := []string{"case", "bridge", "bridge+audit", "bridge+otel", "audit/bridge", "otel/bridge", "target", "met? (audit; otel)"}; !slices.Equal(header, want) {
		t.Errorf("header %q, want %q", header, want)
	}
	if met != 4 || missed != 4 || noisy != 0 {
		t.Errorf("%d met, %d missed, %d within noise; want 4, 4 and 0 (the CPU rows have no target)", met, missed, noisy)
	}
	want := [][]string{
		{"call p50, sequential · 2025-11-25", "100 µs", "105 µs", "120 µs", "1.05×", "1.20×", "≤ 1.1× bridge", "met; **missed**"},
		{"server CPU per call, sequential · 2025-11-25", "80 µs", "92 µs", "200 µs", "1.15×", "2.50×", "", ""},
		{"calls/s, 8 callers · 2025-11-25", "1,000/s", "950/s", "900/s", "0.95×", "0.90×", "≥ bridge ÷ 1.1", "met; **missed**"},
	}
	for i, w := range want {
		if !slices.Equal(lines[i], w) {
			t.Errorf("line %d: %q, want %q", i, lines[i], w)
		}
	}
}

// shift's estimate is the median of the pairwise means of the logarithms;
// its interval holds the true ratio at least 95 % of the time when the
// slices scatter as two alike noises do, an outlier barely moves it, and
// it is narrower than the interval of the median of the ratios.
func TestShift(t *testing.T) {
	// logs 0, 1, 2, 3, 4, 10: of the 21 pairwise means the median (the
	// 11th) is 2.5; C = 1, so the interval is from the least, 0, to the
	// greatest, 10.
	qs := []float64{1, math.E, math.Exp(2), math.Exp(3), math.Exp(4), math.Exp(10)}
	est, lo, hi := shift(qs)
	if math.Abs(est-math.Exp(2.5)) > 1e-9 || lo != 1 || math.Abs(hi-math.Exp(10)) > 1e-6 {
		t.Errorf("shift(1, e, e², e³, e⁴, e¹⁰) = %v (%v–%v), want e^2.5 (1–e¹⁰)", est, lo, hi)
	}
	// Below minSlices no interval holds the ratio 95 % of the time: none.
	if _, _, _, ok := paired(qs[:minSlices-1], []float64{1, 1, 1, 1, 1}, false); ok {
		t.Errorf("paired made an interval of %d slices", minSlices-1)
	}

	rng := rand.New(rand.NewPCG(1, 2))
	const trials, n, truth = 2000, 56, 0.95
	covered, narrower := 0, 0
	for range trials {
		qs := make([]float64, n)
		for i := range qs {
			// a variant's and the bridge's turn, each ±10 % (the spread
			// per 150 ms turn that make bench sees at 8 callers).
			x, y := truth*math.Exp(0.1*rng.NormFloat64()), math.Exp(0.1*rng.NormFloat64())
			qs[i] = x / y
		}
		_, lo, hi := shift(slices.Clone(qs))
		if lo <= truth && truth <= hi {
			covered++
		}
		// the sign test's interval of the median: ranks ⌊n/2 − 0.98√n⌋, ⌈1 + n/2 + 0.98√n⌉
		slices.Sort(qs)
		h := 0.98 * math.Sqrt(n)
		slo, shi := qs[int(math.Floor(n/2-h))-1], qs[int(math.Ceil(1+n/2+h))-1]
		if hi-lo < shi-slo {
			narrower++
		}
	}
	if float64(covered) < 0.94*trials {
		t.Errorf("the interval held the true ratio in %d of %d runs, want at least 94 %%", covered, trials)
	}
	if float64(narrower) < 0.8*trials {
		t.Errorf("narrower than the median's interval in %d of %d runs, want most", narrower, trials)
	}

	qs = make([]float64, 20)
	for i := range qs {
		qs[i] = 0.9 + float64(i)/200 // 0.900…0.995
	}
	before, _, _ := shift(slices.Clone(qs))
	qs[0] = 10 // a slice the machine stalled in
	after, _, _ := shift(qs)
	if math.Abs(after-before) > 0.01 {
		t.Errorf("one outlier moved the estimate from %.3f to %.3f", before, after)
	}
}

// signedRankPoint is one more than the signed-rank test's two-sided 5 %
// critical value: as published for small n, and as counted here from
// every sign of every rank for the n a quick run has (8 and 16 slices).
func TestSignedRankPoint(t *testing.T) {
	// Two-sided α = 0.05 critical values of T (Wilcoxon 1947, as in the
	// usual tables; none below n = 6).
	published := map[int]int{6: 0, 7: 2, 8: 3, 9: 5, 10: 8, 11: 10, 12: 13, 13: 17, 14: 21, 15: 25,
		16: 29, 17: 34, 18: 40, 19: 46, 20: 52, 21: 58, 22: 65, 23: 73, 24: 81, 25: 89, 30: 137}
	for n, crit := range published {
		if got := signedRankPoint(n); got != crit+1 {
			t.Errorf("n = %d: C = %d, want %d", n, got, crit+1)
		}
	}
	for _, n := range []int{1, 5} {
		if got := signedRankPoint(n); got != 1 {
			t.Errorf("n = %d: C = %d, want 1 (no critical value)", n, got)
		}
	}
	for _, n := range []int{8, 16} {
		// T⁺ of every one of the 2ⁿ signs
		count := map[int]int{}
		for signs := range 1 << n {
			sum := 0
			for r := 1; r <= n; r++ {
				if signs&(1<<(r-1)) != 0 {
					sum += r
				}
			}
			count[sum]++
		}
		below := func(c int) (k int) {
			for s := 0; s < c; s++ {
				k += count[s]
			}
			return k
		}
		c := signedRankPoint(n)
		if float64(below(c))/float64(int(1)<<n) > 0.025 || float64(below(c+1))/float64(int(1)<<n) <= 0.025 {
			t.Errorf("n = %d: C = %d is not the exact point", n, c)
		}
	}
	// Beyond the tables, near the normal approximation, N/2 − 1.96σ.
	for _, n := range []int{40, 56, 112} {
		sigma := math.Sqrt(float64(n*(n+1)*(2*n+1)) / 24)
		approx := float64(n*(n+1)/2)/2 - 1.96*sigma
		if c := float64(signedRankPoint(n)); c < approx-1 || c > approx+2 {
			t.Errorf("n = %d: C = %v, far from the normal approximation's %.1f", n, c, approx)
		}
	}
}

// A cost of the variant's that comes in a few slices moves the estimate
// little and the totals much: the interval is widened to the ratio of the
// totals, and the verdict is within noise, not met.
func TestPairedHoldsTheTotals(t *testing.T) {
	var bs, xs []float64
	time := 0.0 // the variant's, per call, with the bridge's at 1/1000
	for i := range 40 {
		bs = append(bs, 1000) // calls a second
		x := 960 + float64(i%5)
		if i%13 == 6 {
			x = 400 // 3 slices with a lump
		}
		xs = append(xs, x)
		time += 1 / x
	}
	total := 40.0 / 1000 / time
	ratio, lo, hi, ok := paired(xs, bs, true)
	if !ok || ratio < 0.95 || math.Abs(lo-total) > 1e-9 || hi < ratio {
		t.Fatalf("paired = %.3f (%.3f–%.3f), %v; want the estimate above 0.95 and the interval down to the totals' %.3f", ratio, lo, hi, ok, total)
	}
	if got := judge(lo, hi, func(q float64) bool { return q >= 1/1.1 }).String(); !strings.HasPrefix(got, "within noise") {
		t.Errorf("≥ bridge ÷ 1.1: %s, want within noise", got)
	}
	// Times: the totals are sums, 49 ÷ 20 here; the ratios' interval
	// alone would end at 1, as only 20 of the 210 pairwise means hold the
	// 30.
	xs = append(slices.Repeat([]float64{1}, 19), 30)
	if _, _, hi, _ := paired(xs, slices.Repeat([]float64{1}, 20), false); math.Abs(hi-2.45) > 1e-9 {
		t.Errorf("times 1 ×19, 30 ÷ 1 ×20: interval to %v, want to the totals' 2.45", hi)
	}
}

// A value that is not positive and finite makes no ratio.
func TestRatiosRefuse(t *testing.T) {
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
		if _, ok := ratios([]float64{1, bad}, []float64{1, 1}); ok {
			t.Errorf("ratios took %v", bad)
		}
		if _, ok := ratios([]float64{1, 1}, []float64{bad, 1}); ok {
			t.Errorf("ratios took %v as a base", bad)
		}
	}
}

// A ratio is the median of the per-round ratios: a round that is slow for
// every contender moves both sides of its ratio, not one.
func TestRatioMedian(t *testing.T) {
	r := &results{vals: map[string]map[string][]float64{}, na: map[string]map[string]string{}}
	for _, v := range [][2]float64{{100, 200}, {300, 600}, {110, 100}} { // bridge, peer per round
		r.add("x", bridge, v[0])
		r.add("x", peer, v[1])
	}
	got, ok := r.ratioMedian("x", bridge, peer)
	if !ok || got != 0.5 {
		t.Errorf("ratioMedian = %v, %v; want 0.5 (rounds 0.5, 0.5, 1.1)", got, ok)
	}
	// The medians (110 and 200) would give 0.55.
	v := rowValues{r, "x"}
	if x, _ := v.ratio(bridge, peer); x != 0.5 {
		t.Errorf("rowValues.ratio = %v, want 0.5", x)
	}
	if vd := ratioAtMost(peer, 0.5).eval(v); vd.state != isMet {
		t.Errorf("≤ 0.5× peer: %v; want met", vd)
	}
	r.add("x", bridge, 1) // a round the peer lacks: the ratio of the medians
	if x, ok := v.ratio(bridge, peer); !ok || x != 105.0/200 {
		t.Errorf("with rounds that differ, ratio = %v, want %v", x, 105.0/200)
	}
}

// With per-slice values, a variant's target row gives the ratio (see shift)
// and its interval, and a verdict only when the whole interval is on one
// side.
func TestVariantVerdictByInterval(t *testing.T) {
	b := &bench{res: &results{vals: map[string]map[string][]float64{}, na: map[string]map[string]string{}}}
	id := caseID("seq-p50", proto2025)
	for i := range 20 {
		b.res.add(id, bridge, 100)
		b.res.addSlice(id, bridge, 100)
		// audit: clearly within 1.1×; otel: straddling it.
		b.res.addSlice(id, bridgeAudit, 100+float64(i%3))
		b.res.addSlice(id, bridgeOTel, 100+float64(i))
		if i < 5 {
			b.res.add(id, bridgeAudit, 101)
			b.res.add(id, bridgeOTel, 110)
		}
	}
	cell := func(id, who string, unit int) string { x, _ := b.res.median(id, who); return format(x, unit) }
	_, lines, met, missed, noisy := b.variantTable(cell)
	if met != 1 || missed != 0 || noisy != 1 {
		t.Fatalf("%d met, %d missed, %d within noise; want 1, 0, 1 (first row)", met, missed, noisy)
	}
	if got := lines[0][len(lines[0])-1]; got != "met; within noise (1.06–1.12)" {
		t.Errorf("verdicts %q, want \"met; within noise (1.06–1.12)\"", got)
	}
	if got := lines[0][5]; got != "1.09× (1.06–1.12)" {
		t.Errorf("otel's ratio %q, want the estimate from 1.00…1.19 with its interval, 1.09× (1.06–1.12)", got)
	}
}

// A target of the main table is judged by the interval of its per-slice
// ratios: met or missed only when the whole interval is.
func TestTargetVerdictByInterval(t *testing.T) {
	r := &results{vals: map[string]map[string][]float64{}, na: map[string]map[string]string{}}
	for i := range 20 {
		r.addSlice("clear", bridge, 40)
		r.addSlice("clear", peer, 100+float64(i)) // 0.34–0.40×
		r.addSlice("edge", bridge, 45+float64(i%10))
		r.addSlice("edge", peer, 100) // 0.45–0.54×
		r.addSlice("over", bridge, 60)
		r.addSlice("over", peer, 100)
	}
	for id, want := range map[string]string{"clear": "met", "edge": "within noise (0.48–0.51)", "over": "**missed**"} {
		if got := ratioAtMost(peer, 0.5).eval(rowValues{r, id}).String(); got != want {
			t.Errorf("%s: ≤ 0.5× peer: %s, want %s", id, got, want)
		}
	}
	// sequential p50 ≤ sdk-floor + 1.5 raw, per slice.
	for i := range 20 {
		r.addSlice("seq", raw, 40)
		r.addSlice("seq", floor, 100)
		r.addSlice("seq", bridge, 150+float64(i%3)) // ≤ 160 in every slice
	}
	if got := floorPlusRaw(1.5).eval(rowValues{r, "seq"}).String(); got != "met" {
		t.Errorf("≤ sdk-floor + 1.5 raw: %s, want met", got)
	}
}

// Over a run of make bench's rounds, as interleave takes the contenders
// callCases gives it, every slice runs every contender once; the bridge
// and its variants run one after another in every slice; and each of them
// goes first among them, and follows each of the others, about equally
// often (within 2 in a run of 7 rounds of 8 slices, or of 16: 56 and 112
// are not multiples of their 6 orders).
func TestOrderKeepsTheBridgeFamilyTogether(t *testing.T) {
	for _, parts := range []int{numSlices, defaultRate8Slices} {
		t.Run(strconv.Itoa(parts), func(t *testing.T) { familyTogether(t, parts) })
	}
	if got := order(1, floor, bridge, peer); !slices.Equal(got, []string{bridge, peer, floor}) {
		t.Errorf("without variants order(1) = %q, want a plain rotation", got)
	}
}

// familyTogether runs interleave over a 7-round run of parts slices a
// round and checks the family's balance.
func familyTogether(t *testing.T, parts int) {
	who := []string{raw, floor, bridge, peer, bridgeAudit, bridgeOTel}
	family := []string{bridge, bridgeAudit, bridgeOTel}
	first := map[string]int{}
	follows := map[[2]string]int{}
	const rounds = 7
	for round := range rounds {
		var ran []string
		run := func(_ context.Context, w string, _ int) ([]time.Duration, error) {
			ran = append(ran, w)
			return nil, nil
		}
		if _, _, err := interleave(context.Background(), round, who, parts, parts, run, nil); err != nil {
			t.Fatal(err)
		}
		for k := range parts {
			got := ran[k*len(who) : (k+1)*len(who)]
			if !slices.Equal(slices.Sorted(slices.Values(got)), slices.Sorted(slices.Values(who))) {
				t.Fatalf("round %d slice %d: %q, not each contender once", round, k, got)
			}
			i := slices.IndexFunc(got, func(w string) bool { return slices.Contains(family, w) })
			if i < 0 || i > len(got)-len(family) {
				t.Fatalf("round %d slice %d: %q: the family does not run together", round, k, got)
			}
			run := got[i : i+len(family)]
			for _, w := range run {
				if !slices.Contains(family, w) {
					t.Fatalf("round %d slice %d: %q: %s runs among the bridge's family", round, k, got, w)
				}
			}
			first[run[0]]++
			for j := 1; j < len(run); j++ {
				follows[[2]string{run[j-1], run[j]}]++
			}
		}
	}
	spread := func(m map[string]int) int {
		lo, hi := rounds*parts, 0
		for _, w := range family {
			lo, hi = min(lo, m[w]), max(hi, m[w])
		}
		return hi - lo
	}
	if spread(first) > 2 {
		t.Errorf("went first in the family %v times in %d slices; want about equally often", first, rounds*parts)
	}
	pairs := map[string]int{}
	for _, w := range family {
		for _, v := range family {
			if v != w {
				pairs[v+" → "+w] = follows[[2]string{v, w}]
			}
		}
	}
	lo, hi := rounds*parts, 0
	for _, n := range pairs {
		lo, hi = min(lo, n), max(hi, n)
	}
	if hi-lo > 2 {
		t.Errorf("one after the other %v times in %d slices; want about equally often", pairs, rounds*parts)
	}
}

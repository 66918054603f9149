package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The tools and arguments of the call cases.
const (
	echoTool   = prefix + "demo_echo"
	blobTool   = prefix + "demo_blob"
	echoMethod = "demo.echo"
	blobMethod = "demo.blob"
	rawPool    = 8 // the bridge's default --pool-size
)

var echoArgs = json.RawMessage(`{"query":"anna","limit":5,"fields":["name","email"]}`)

// resultSizes are the sizes of the JSON result of the result cases.
var resultSizes = [3]int{100, 10_000, 1_000_000}

// idleWait is how long a server sits idle before its RSS is read.
const idleWait = 500 * time.Millisecond

// bench runs the rounds and collects per-round values.
type bench struct {
	cfg config
	e   *env
	res *results

	roundsDone int
	warmups    map[string]map[string]warmup // protocol label → contender → its warm-up
	reload     reloadCase
	tally      variantTally
}

// results holds one value per case, contender and round, and why a
// contender could not run a case.
type results struct {
	mu         sync.Mutex
	vals       map[string]map[string][]float64
	na         map[string]map[string]string
	notes      []string
	negotiated map[string]map[string]string // requested protocol label → contender → version
	// slices holds the call cases' values per slice, in order: the k-th
	// value of each contender is from the same round and slice.
	slices map[string]map[string][]float64
}

func (r *results) addSlice(id, who string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slices == nil {
		r.slices = map[string]map[string][]float64{}
	}
	if r.slices[id] == nil {
		r.slices[id] = map[string][]float64{}
	}
	r.slices[id][who] = append(r.slices[id][who], v)
}

// sliceRatio returns the ratio of who ÷ base over the slices both ran,
// with its interval (see paired).
func (r *results) sliceRatio(id, who, base string) (ratio, lo, hi float64, ok bool) {
	return paired(r.slices[id][who], r.slices[id][base], strings.HasPrefix(id, "rate"))
}

// minSlices is the fewest slices a ratio's interval is made from: with
// fewer, the widest interval shift can give, from the least to the
// greatest of the ratios, holds the ratio less than 95 % of the time
// (1 − 2^(1−n): 94 % at n = 5).
const minSlices = 6

// paired returns the ratio of xs ÷ bs, slice by slice, with a confidence
// interval of at least 95 % (see shift); rate says the values are rates
// (calls a second), else times. It is not ok with fewer than minSlices
// slices, or a value not positive and finite.
//
// The interval is widened, where need be, to hold the ratio of the totals
// too: of all of xs's time to all of bs's over the same calls (for rates,
// equal calls a slice, to one: Σ 1/b ÷ Σ 1/x). shift's estimate is robust
// as a median is: a cost of xs's that comes in lumps, in a few slices (an
// export once a second, a log's rotation), moves it less than it moves the
// totals. So a verdict is met or missed only when the totals agree.
func paired(xs, bs []float64, rate bool) (ratio, lo, hi float64, ok bool) {
	qs, ok := ratios(xs, bs)
	if !ok || len(qs) < minSlices {
		return 0, 0, 0, false
	}
	var sx, sb float64
	for i := range xs {
		if rate {
			sx, sb = sx+1/bs[i], sb+1/xs[i] // time per call, bs's over xs's
		} else {
			sx, sb = sx+xs[i], sb+bs[i]
		}
	}
	total := sx / sb
	ratio, lo, hi = shift(qs)
	return ratio, min(lo, total), max(hi, total), true
}

// shift returns the Hodges–Lehmann estimate of the ratio the per-slice
// ratios qs scatter around, with a confidence interval of at least 95 %:
// over the logarithms of qs, the median of the n(n+1)/2 pairwise means
// (i ≤ j), and the means of ranks C and N − C + 1 of them (see
// signedRankPoint).
//
// It assumes that the logarithms scatter symmetrically and independently
// of one another. They do here, near enough: in a slice two contenders
// run alike under the same machine, so log(x ÷ y) is a difference of two
// alike noises; and from one slice to the next the logarithms correlate
// by −0.15 to 0.20 (lag 1, the variants' cases of two runs at 16 slices a
// round; −0.30 to 0.25 in two at 8; docs/performance.md). Where a
// variant's costs come in lumps they are not symmetric, which paired
// guards against. For that scatter it is nearly as efficient as a mean
// (95 % for normal noise) and as robust as a median.
// The interval of the median of the ratios that it replaced (ranks
// ⌊n/2 − 0.98√n⌋ and ⌈1 + n/2 + 0.98√n⌉, the sign test's, 64 % as
// efficient: it counts the ratios above and below, not their sizes) was
// 1.2–1.4 times as wide on the same slices of two runs.
func shift(qs []float64) (est, lo, hi float64) {
	n := len(qs)
	logs := make([]float64, n)
	for i, q := range qs {
		logs[i] = math.Log(q)
	}
	walsh := make([]float64, 0, n*(n+1)/2)
	for i, x := range logs {
		for _, y := range logs[i:] {
			walsh = append(walsh, (x+y)/2)
		}
	}
	mid := medianOf(walsh) // sorts walsh
	m, c := len(walsh), signedRankPoint(n)
	return math.Exp(mid), math.Exp(walsh[c-1]), math.Exp(walsh[m-c])
}

// signedRankPoint returns C, the rank of the lower bound among the
// n(n+1)/2 pairwise means (n ≥ 1): one more than the Wilcoxon
// signed-rank test's two-sided 5 % critical value, the greatest T with
// P(T⁺ ≤ T) ≤ 2.5 %, from the exact distribution of T⁺ (the sum of the
// ranks with a plus sign, each sign a coin's toss); 1 where there is no
// such T (n < 6).
func signedRankPoint(n int) int {
	p := []float64{1} // p[s]: the chance that T⁺ = s, over the ranks so far
	for r := 1; r <= n; r++ {
		next := make([]float64, len(p)+r)
		for s, x := range p {
			next[s] += x / 2
			next[s+r] += x / 2
		}
		p = next
	}
	c, cdf := 1, 0.0
	for s, x := range p {
		if cdf += x; cdf > 0.025 {
			break
		}
		c = s + 1
	}
	return c
}

func (r *results) add(id, who string, v float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.vals[id] == nil {
		r.vals[id] = map[string][]float64{}
	}
	r.vals[id][who] = append(r.vals[id][who], v)
}

func (r *results) setNA(who, reason string, ids ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if r.na[id] == nil {
			r.na[id] = map[string]string{}
		}
		r.na[id][who] = reason
	}
}

func (r *results) note(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !slices.Contains(r.notes, s) {
		r.notes = append(r.notes, s)
	}
}

// median returns the median of the per-round values of a case.
func (r *results) median(id, who string) (float64, bool) {
	xs := r.vals[id][who]
	if len(xs) == 0 {
		return 0, false
	}
	return medianOf(slices.Clone(xs)), true
}

// ratioMedian returns the median over the rounds of who's value ÷ base's
// in the same round.
func (r *results) ratioMedian(id, who, base string) (float64, bool) {
	qs, ok := ratios(r.vals[id][who], r.vals[id][base])
	if !ok {
		return 0, false
	}
	return medianOf(qs), true
}

// medianOf returns the median of xs, at least one value, sorting xs.
func medianOf(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n/2]
}

// ratios returns xs[i] ÷ bs[i], or false unless both have the same number
// of values, at least one, and every value is positive and finite (a CPU
// time read as 0 makes no ratio).
func ratios(xs, bs []float64) ([]float64, bool) {
	if len(xs) == 0 || len(xs) != len(bs) {
		return nil, false
	}
	qs := make([]float64, len(xs))
	for i, x := range xs {
		if !positive(x) || !positive(bs[i]) {
			return nil, false
		}
		qs[i] = x / bs[i]
	}
	return qs, true
}

func positive(x float64) bool { return x > 0 && !math.IsInf(x, 1) }

// run sets up, runs every round and reports.
func run(ctx context.Context, c config, stdout io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute) // bounded, whatever happens
	defer cancel()
	started := time.Now()
	e, err := newEnv(ctx, c)
	if err != nil {
		return err
	}
	defer e.close()
	b := &bench{cfg: c, e: e, warmups: map[string]map[string]warmup{}, res: &results{
		vals: map[string]map[string][]float64{}, na: map[string]map[string]string{},
		negotiated: map[string]map[string]string{},
	}}
	info := machineInfo(e)
	// The call cases' servers live across the rounds: started, checked and
	// warmed once, so that every round times warm servers.
	var sets []*callSet
	defer func() {
		for _, cs := range sets {
			cs.close()
		}
	}()
	for _, proto := range []string{proto2025, proto2026} {
		cs, err := b.startCalls(ctx, proto)
		if err != nil {
			return err
		}
		sets = append(sets, cs)
	}
	var slowest time.Duration
	for round := range c.rounds {
		if c.budget > 0 && round > 0 && time.Since(started)+slowest > c.budget {
			c.logf("stopping after %s: another could end past the %s budget", plural(round, "round"), c.budget)
			b.res.note(fmt.Sprintf("The run stopped after %d of %d rounds to keep within its %s budget (-budget).", round, c.rounds, c.budget))
			break
		}
		b.roundsDone = round + 1
		t := time.Now()
		for _, cs := range sets {
			if err := b.callCases(ctx, round, cs); err != nil {
				return err
			}
		}
		for _, ts := range []toolSet{e.corpus, e.gen} {
			if err := serverCases(ctx, e, b.res, round, ts); err != nil {
				return err
			}
		}
		if err := b.reload.run(ctx, e, b.res); err != nil {
			return err
		}
		slowest = max(slowest, time.Since(t))
		c.logf("round %d/%d done in %s", round+1, c.rounds, since(t))
	}
	// Every reply on a wire answered a call that waited for it.
	for _, cs := range sets {
		for who, s := range cs.sessions {
			if n := s.wire.stray.Load(); n > 0 {
				return fmt.Errorf("%s: %d replies to calls that were not waiting for one (answered twice, or after they gave up)", who, n)
			}
		}
	}
	// Done with the variants: check what they recorded and exported.
	for _, cs := range sets {
		if err := b.finishVariants(cs.sessions); err != nil {
			return err
		}
	}
	info.took = time.Since(started)
	table := b.report(info)
	fmt.Fprint(stdout, table)
	if c.out != "" {
		if err := os.WriteFile(c.out, []byte(table), 0o644); err != nil {
			return err
		}
		c.logf("wrote %s", c.out)
	}
	if c.slices != "" {
		per := map[string]int{} // slices a round, by case
		for id, byWho := range b.res.slices {
			for _, vs := range byWho {
				per[id] = len(vs) / max(1, b.roundsDone)
			}
		}
		js, err := json.MarshalIndent(map[string]any{"rounds": b.roundsDone, "slicesPerRound": per, "values": b.res.slices}, "", "\t")
		if err == nil {
			err = os.WriteFile(c.slices, append(js, '\n'), 0o644)
		}
		if err != nil {
			return err
		}
		c.logf("wrote %s", c.slices)
	}
	return nil
}

// order returns the contenders of one round or slice, rotated by n so
// that none always goes first. The bridge and its variants run one after
// another, as one place in the rotation, each variant's slice moments from
// the bridge's it is compared with; among themselves they take each of
// their orders in turn (the n-th permutation), so that over the slices each
// goes first, and follows each of the others, equally often. Work a
// contender leaves behind falls on whoever runs next: the peer's Node
// collects its garbage after its calls, and this driver decodes
// bridge+otel's spans after its turn. With the peer between the bridge and
// its variants, every slice of bridge+audit followed the peer's; with the
// family only rotated, the bridge followed bridge+otel two times in three.
func order(n int, who ...string) []string {
	var family []string
	units := [][]string{}
	at := -1 // the family's place among units
	for _, w := range who {
		if w == bridge || isVariant(w) {
			if at < 0 {
				at = len(units)
				units = append(units, nil)
			}
			family = append(family, w)
			continue
		}
		units = append(units, []string{w})
	}
	if at >= 0 {
		perms := permutations(family)
		units[at] = perms[n%len(perms)]
	}
	return slices.Concat(rotate(units, n)...)
}

// permutations returns every order of xs.
func permutations(xs []string) [][]string {
	if len(xs) <= 1 {
		return [][]string{slices.Clone(xs)}
	}
	var out [][]string
	for i, x := range xs {
		rest := slices.Concat(xs[:i], xs[i+1:])
		for _, p := range permutations(rest) {
			out = append(out, append([]string{x}, p...))
		}
	}
	return out
}

// rotate returns xs rotated left by n.
func rotate[T any](xs []T, n int) []T {
	if len(xs) == 0 {
		return nil
	}
	k := n % len(xs)
	return append(slices.Clone(xs[k:]), xs[:k]...)
}

func protoLabel(proto string) string {
	if proto == proto2026 {
		return "2026-07-28"
	}
	return proto
}

// caseID names a case's values; the protocol is part of the call cases'.
func caseID(name, proto string) string {
	if proto == "" {
		return name + "@2026-07-28"
	}
	return name + "@" + proto
}

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

// numSlices is how many parts interleave splits a case's calls into,
// but for the 8-caller case's (config.rate8Slices).
const numSlices = 8

// interleave runs a case for each contender in whos: n calls each, in
// parts slices, every slice taking the contenders in turn, so that a burst
// of load elsewhere on the machine hits them alike. A slice's order is
// order's of its number in the run (round × parts + slice), so that
// the run's slices, one after another, take the orders in turn. whos is
// taken as given, not already ordered: two orders composed are not
// balanced. A non-nil settle runs after each slice of a contender,
// untimed. It returns each contender's latencies and time spent.
func interleave(ctx context.Context, round int, whos []string, n, parts int,
	run func(ctx context.Context, who string, n int) ([]time.Duration, error),
	settle func(who string) error,
) (map[string][]time.Duration, map[string]time.Duration, error) {
	lat := map[string][]time.Duration{}
	took := map[string]time.Duration{}
	parts = min(parts, n)
	seq := round * parts
	for k := range parts {
		m := n/parts + btoi(k < n%parts)
		for _, who := range order(seq+k, whos...) {
			start := time.Now()
			l, err := run(ctx, who, m)
			if err != nil {
				return nil, nil, err
			}
			took[who] += time.Since(start)
			lat[who] = append(lat[who], l...)
			if settle != nil {
				if err := settle(who); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return lat, took, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// sequential makes n calls one after another and returns each one's latency.
func sequential(ctx context.Context, n int, call caller) ([]time.Duration, error) {
	lat := make([]time.Duration, n)
	for i := range n {
		t := time.Now()
		if err := call(ctx, 0); err != nil {
			return nil, err
		}
		lat[i] = time.Since(t)
	}
	return lat, nil
}

// concurrent makes n calls from workers goroutines.
func concurrent(ctx context.Context, n, workers int, call caller) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	for w := range workers {
		wg.Go(func() {
			for next.Add(1) <= int64(n) {
				if err := call(ctx, w); err != nil {
					errOnce.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return firstErr
}

// percentile returns the p-th quantile (0 < p ≤ 1) of d, nearest rank.
func percentile(d []time.Duration, p float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

// cpuTime returns the CPU time the processes have used, summed over their
// threads from /proc/PID/task/*/schedstat (nanoseconds, unlike the clock
// ticks of /proc/PID/stat).
func cpuTime(pids []int) time.Duration {
	var sum time.Duration
	for _, pid := range pids {
		tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		for _, t := range tasks {
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/schedstat", pid, t.Name()))
			if err != nil {
				continue
			}
			var ns int64
			if _, err := fmt.Sscan(string(b), &ns); err == nil {
				sum += time.Duration(ns)
			}
		}
	}
	return sum
}

// plural says n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return strconv.Itoa(n) + " " + thing + "s"
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

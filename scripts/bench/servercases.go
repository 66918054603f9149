package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// serverCases measures, for one tool set: spawn → initialize, spawn → the
// first tools/list result, idle RSS after initialize and one tools/list,
// and tools/list latency, into res.
func serverCases(ctx context.Context, e *env, res *results, round int, ts toolSet) error {
	cfg := e.cfg
	t := time.Now()
	startID, firstID, rssID, anonID, listID := "startup@"+ts.name, "firstlist@"+ts.name, "rss@"+ts.name, "anon@"+ts.name, "list@"+ts.name
	nList := cfg.listCalls[0]
	if ts.tools >= 1000 {
		nList = cfg.listCalls[1]
	}
	kept := map[string]*session{}
	defer func() {
		for _, s := range kept {
			s.close()
		}
	}()
	// Spawns go round the contenders in turn; the last one of each stays up.
	starts, firsts := map[string][]time.Duration{}, map[string][]time.Duration{}
	skip := map[string]bool{}
	for k := range cfg.spawns {
		for _, who := range order(round+k, floor, bridge, peer) {
			if skip[who] {
				continue
			}
			s, err := e.spawn(ctx, who, ts, proto2025, nil)
			var na errNA
			if errors.As(err, &na) {
				res.setNA(who, string(na), startID, firstID, rssID, anonID, listID)
				skip[who] = true
				continue
			}
			if err != nil {
				return err
			}
			starts[who] = append(starts[who], s.startup)
			n, err := s.listAll(ctx)
			if err != nil {
				s.close()
				return err
			}
			firsts[who] = append(firsts[who], time.Since(s.started))
			if k < cfg.spawns-1 {
				s.close()
				continue
			}
			kept[who] = s
			if n != ts.tools {
				res.note(fmt.Sprintf("%s lists %d tools of the %s set, the manifest package counts %d", who, n, ts.name, ts.tools))
			}
		}
	}
	for who, d := range starts {
		res.add(startID, who, micros(percentile(d, 0.5)))
		res.add(firstID, who, micros(percentile(firsts[who], 0.5)))
	}
	select {
	case <-time.After(idleWait):
	case <-ctx.Done():
		return ctx.Err()
	}
	for who, s := range kept {
		rss, anon, err := s.rssMiB()
		if err != nil {
			return fmt.Errorf("%s: %w", who, err)
		}
		res.add(rssID, who, rss)
		res.add(anonID, who, anon)
	}
	var up []string
	for _, who := range []string{floor, bridge, peer} {
		if kept[who] != nil {
			up = append(up, who)
		}
	}
	lat, _, err := interleave(ctx, round, up, nList, numSlices, func(ctx context.Context, who string, n int) ([]time.Duration, error) {
		return sequential(ctx, n, func(ctx context.Context, _ int) error {
			_, err := kept[who].listAll(ctx)
			return err
		})
	}, nil)
	if err != nil {
		return err
	}
	for _, who := range up {
		res.add(listID, who, micros(percentile(lat[who], 0.5)))
	}
	for _, id := range []string{startID, firstID, rssID, anonID, listID} {
		res.setNA(raw, "", id)
	}
	cfg.logf("round %d: startup, RSS and tools/list with %s in %s", round+1, ts.name, since(t))
	return nil
}

// reloadCase is the state the reload case keeps across rounds.
type reloadCase struct {
	off      bool // the bridge sent no list_changed once: skip the case
	revision int  // of the manifest edits
}

// run measures manifest file write → notifications/tools/list_changed at
// the client, on the bridge, into res.
func (r *reloadCase) run(ctx context.Context, e *env, res *results) error {
	const id = "reload"
	for _, who := range []string{raw, floor, peer} {
		res.setNA(who, "", id)
	}
	if r.off {
		return nil
	}
	t := time.Now()
	changed := make(chan time.Time, 16)
	s, err := e.spawn(ctx, bridge, toolSet{name: "reload", dir: e.reload}, proto2025, func() {
		select {
		case changed <- time.Now():
		default:
		}
	})
	if err != nil {
		return err
	}
	defer s.close()
	path := filepath.Join(e.reload, "demo.json")
	orig, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var lat []time.Duration
	for range e.cfg.reloads {
		r.revision++
		data, err := editDescription(orig, r.revision)
		if err != nil {
			return err
		}
		// Let the previous reload settle, then forget its notifications.
		time.Sleep(250 * time.Millisecond)
		for len(changed) > 0 {
			<-changed
		}
		start := time.Now()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return err
		}
		select {
		case at := <-changed:
			lat = append(lat, at.Sub(start))
		case <-time.After(3 * time.Second):
			r.off = true
			res.setNA(bridge, "n/a (no reload)", id)
			e.cfg.logf("reload: no notifications/tools/list_changed within 3s of a manifest write: n/a (no reload)")
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	res.add(id, bridge, micros(percentile(lat, 0.5)))
	e.cfg.logf("reload case in %s", since(t))
	return nil
}

// editDescription returns the manifest with its first tool's description
// changed to carry rev.
func editDescription(manifestJSON []byte, rev int) ([]byte, error) {
	var m map[string]any
	if err := json.Unmarshal(manifestJSON, &m); err != nil {
		return nil, err
	}
	tools, _ := m["tools"].([]any)
	if len(tools) == 0 {
		return nil, errors.New("reload: demo.json has no tools")
	}
	t0, _ := tools[0].(map[string]any)
	if t0 == nil {
		return nil, errors.New("reload: demo.json's first tool is not an object")
	}
	d, _ := t0["description"].(string)
	t0["description"] = fmt.Sprintf("%s (revision %d)", d, rev)
	return json.MarshalIndent(m, "", "  ")
}

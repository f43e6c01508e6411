// SPDX-License-Identifier: GPL-2.0

package main

// The history checker, in the style of Jepsen's: it replays etcd's own
// history of a cluster semaphore (every revision, from a watch from
// revision 1, each event with the CLOCK_MONOTONIC time it was received:
// `clustertest recorder`) and the agents' histories (fairsem-cluster
// agent -history), and verifies, as the contract's "The history and its
// checker" has it:
//
//  1. at every revision the granted requests fit every limit, except
//     after a limit was lowered below them and until they fit again;
//  2. every "add" names a request granted at its revision;
//  3. at every line of every machine, what it can hold is at most what
//     its requests granted at the later of the line's revision and the
//     newest revision received before the line's time;
//  4. at the end no request is left and every machine can hold nothing;
//  5. share mode's slack: at every "share" line (a machine asks for share
//     mode's surplus), the machine's free permits (CAP less taken), plus
//     its share requests in etcd at the line's revision that it has not
//     ADDed (the new one among them), are at most the share S (-share,
//     zero in exact mode: then any share line is a violation);
//  6. FIFO across machines: at every line of a machine whose snapshot
//     (snap=S) shows a request of another machine made for a waiter
//     waiting, its local limit (limit=L) is 0, so that no permit released
//     there can be granted to its local queue ahead of that request; at
//     an "add" line, L is at most base=B (what its programs could hold
//     before the ADD) plus the counts of the requests the line names,
//     granted at its revision.  A line without limit= or snap= fails.
//
// The grant rule is computed here on its own, not taken from the agent:
// requests in create-revision (then key) order, request k granted when
// the counts up to and including it fit every limit; a grant stays until
// its request shrinks to nothing or leaves.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"go.etcd.io/etcd/clientv3"
)

type cvec []uint64

func parseCvec(s string) (cvec, bool) {
	f := strings.Split(s, ",")
	v := make(cvec, len(f))
	for i, x := range f {
		n, err := strconv.ParseUint(x, 10, 64)
		if err != nil {
			return nil, false
		}
		v[i] = n
	}
	return v, true
}

func (v cvec) String() string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatUint(n, 10)
	}
	return strings.Join(s, ",")
}

func (v cvec) le(w cvec) bool {
	if len(v) != len(w) {
		return false
	}
	for i := range v {
		if v[i] > w[i] {
			return false
		}
	}
	return true
}

func (v cvec) plus(w cvec) cvec {
	out := make(cvec, len(v))
	for i := range v {
		out[i] = v[i] + w[i]
	}
	return out
}

func (v cvec) zero() bool {
	for _, n := range v {
		if n != 0 {
			return false
		}
	}
	return true
}

// parseLimitValue: "L" or "LABEL=N,...", the numbers only.
func parseLimitValue(s string) (cvec, bool) {
	var nums []string
	for _, item := range strings.Split(strings.TrimSpace(s), ",") {
		if i := strings.IndexByte(item, '='); i >= 0 {
			item = item[i+1:]
		}
		nums = append(nums, item)
	}
	return parseCvec(strings.Join(nums, ","))
}

// An etcd event as the recorder wrote it:
// MONO REV PUT|DELETE KEY CREATEREV VALUE...
type event struct {
	mono   int64
	rev    int64
	put    bool
	key    string
	create int64
	value  string
}

func parseEvents(r io.Reader) ([]event, error) {
	var out []event
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	seen := map[string]bool{}
	for s.Scan() {
		f := strings.SplitN(s.Text(), " ", 6)
		if len(f) < 5 {
			return nil, fmt.Errorf("event line %q", s.Text())
		}
		var e event
		e.mono, _ = strconv.ParseInt(f[0], 10, 64)
		e.rev, _ = strconv.ParseInt(f[1], 10, 64)
		e.put = f[2] == "PUT"
		e.key = f[3]
		e.create, _ = strconv.ParseInt(f[4], 10, 64)
		if len(f) == 6 {
			e.value = f[5]
		}
		// A watch that resumed may send an event again.
		id := f[1] + " " + f[3]
		if seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, e)
	}
	return out, s.Err()
}

// An agent's line: MONO REV CAP EVENT [KEY[,KEY...]] [NAME=VALUE...]
type record struct {
	mono  int64
	rev   int64
	cap   cvec
	event string
	key   string   // the first key
	keys  []string // an ADD's keys
	taken cvec     // share lines: what local programs held when it decided
	base  cvec     // an ADD while yielding: max(limit, taken) before it
	limit cvec     // the local limit, read with cap
	snap  int64    // the snapshot of the yield decision
	judge bool     // limit= and snap= given
	line  int
}

func parseRecords(r io.Reader) ([]record, error) {
	var out []record
	s := bufio.NewScanner(r)
	n := 0
	for s.Scan() {
		n++
		f := strings.Fields(s.Text())
		if len(f) < 4 {
			return nil, fmt.Errorf("history line %d: %q", n, s.Text())
		}
		var rc record
		rc.mono, _ = strconv.ParseInt(f[0], 10, 64)
		rc.rev, _ = strconv.ParseInt(f[1], 10, 64)
		var ok bool
		if rc.cap, ok = parseCvec(f[2]); !ok {
			return nil, fmt.Errorf("history line %d: cap %q", n, f[2])
		}
		rc.event = f[3]
		var hasLimit, hasSnap bool
		for _, x := range f[4:] {
			kv := strings.SplitN(x, "=", 2)
			if len(kv) == 1 {
				rc.keys = strings.Split(x, ",")
				rc.key = rc.keys[0]
				continue
			}
			var dst *cvec
			switch kv[0] {
			case "taken":
				dst = &rc.taken
			case "base":
				dst = &rc.base
			case "limit":
				dst, hasLimit = &rc.limit, true
			case "snap":
				var err error
				if rc.snap, err = strconv.ParseInt(kv[1], 10, 64); err != nil {
					return nil, fmt.Errorf("history line %d: %q", n, x)
				}
				hasSnap = true
				continue
			default:
				continue
			}
			if *dst, ok = parseCvec(kv[1]); !ok {
				return nil, fmt.Errorf("history line %d: %q", n, x)
			}
		}
		rc.judge = hasLimit && hasSnap
		rc.line = n
		out = append(out, rc)
	}
	return out, s.Err()
}

type creq struct {
	create  int64
	key     string
	machine string
	w       cvec
	share   bool // its word is "share": share mode's surplus
	granted bool
}

// A state after one revision: what each machine's granted requests add
// up to, and which requests are granted.
type state struct {
	rev     int64
	mono    int64 // when the recorder received it
	byM     map[string]cvec
	granted map[string]cvec            // the granted requests, with their counts
	shares  map[string]map[string]cvec // machine: its share requests present
	waitW   map[string]bool            // machines with a request made for a waiter waiting
}

type verdict struct {
	revisions, grants, records int
	violations                 []string
}

func (v *verdict) fail(format string, a ...interface{}) {
	v.violations = append(v.violations, fmt.Sprintf(format, a...))
}

// replay: the states of the cluster semaphore at every revision of prefix.
func replay(evs []event, prefix string, v *verdict) []state {
	reqs := map[string]*creq{}
	var limit cvec
	over := false
	var out []state
	for i := 0; i < len(evs); {
		rev := evs[i].rev
		var mono int64
		lowered := false
		for ; i < len(evs) && evs[i].rev == rev; i++ {
			e := evs[i]
			if e.mono > mono {
				mono = e.mono
			}
			switch {
			case e.key == prefix+"limit" && e.put:
				l, ok := parseLimitValue(e.value)
				if !ok {
					v.fail("revision %d: limit %q", rev, e.value)
					continue
				}
				if limit != nil && !limit.le(l) {
					lowered = true
				}
				limit = l
			case strings.HasPrefix(e.key, prefix+"q/"):
				if !e.put {
					delete(reqs, e.key)
					continue
				}
				m := strings.SplitN(strings.TrimPrefix(e.key, prefix+"q/"), "/", 2)[0]
				w, ok := parseCvec(strings.Fields(e.value + " ")[0])
				if !ok || len(w) != len(limit) {
					v.fail("revision %d: %s: weight %q", rev, e.key, e.value)
					continue
				}
				r := reqs[e.key]
				if r == nil {
					r = &creq{create: e.create, key: e.key, machine: m}
					reqs[e.key] = r
				}
				r.w = w
				f := strings.Fields(e.value)
				r.share = len(f) > 1 && f[1] == "share"
			}
		}
		if limit == nil {
			continue
		}
		v.revisions++
		order := make([]*creq, 0, len(reqs))
		for _, r := range reqs {
			order = append(order, r)
		}
		sort.Slice(order, func(a, b int) bool {
			if order[a].create != order[b].create {
				return order[a].create < order[b].create
			}
			return order[a].key < order[b].key
		})
		st := state{rev: rev, mono: mono, byM: map[string]cvec{}, granted: map[string]cvec{},
			shares: map[string]map[string]cvec{}, waitW: map[string]bool{}}
		sum := make(cvec, len(limit))
		held := make(cvec, len(limit))
		for _, r := range order {
			if r.share {
				if st.shares[r.machine] == nil {
					st.shares[r.machine] = map[string]cvec{}
				}
				st.shares[r.machine][r.key] = r.w
			}
			sum = sum.plus(r.w)
			if !r.granted && sum.le(limit) {
				r.granted = true
				v.grants++
			}
			if r.granted {
				held = held.plus(r.w)
				if st.byM[r.machine] == nil {
					st.byM[r.machine] = make(cvec, len(limit))
				}
				st.byM[r.machine] = st.byM[r.machine].plus(r.w)
				st.granted[r.key] = r.w
			} else if !r.share {
				st.waitW[r.machine] = true
			}
		}
		if lowered && !held.le(limit) {
			over = true
		}
		if held.le(limit) {
			over = false
		} else if !over {
			v.fail("revision %d: granted %s over the limit %s", rev, held, limit)
		}
		out = append(out, st)
	}
	if len(reqs) > 0 {
		keys := make([]string, 0, len(reqs))
		for k := range reqs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		v.fail("at the end, %d requests left: %s", len(reqs), strings.Join(keys, " "))
	}
	return out
}

// at: the state after the newest revision at most rev (nil before any).
func at(states []state, rev int64) *state {
	i := sort.Search(len(states), func(i int) bool { return states[i].rev > rev })
	if i == 0 {
		return nil
	}
	return &states[i-1]
}

// receivedBy: the newest revision received before mono.
func receivedBy(states []state, mono int64) int64 {
	var rev int64
	for i := range states {
		if states[i].mono < mono && states[i].rev > rev {
			rev = states[i].rev
		}
	}
	return rev
}

func (v cvec) minus(w cvec) cvec {
	out := make(cvec, len(v))
	for i := range v {
		if i < len(w) && v[i] > w[i] {
			out[i] = v[i] - w[i]
		} else if i >= len(w) {
			out[i] = v[i]
		}
	}
	return out
}

// checkShare: rule 5 at a share line rc of machine m; added holds the
// keys m ADDed (or adopted) before it.
func checkShare(states []state, m string, rc record, share cvec, added map[string]bool, v *verdict) {
	if share == nil || share.zero() {
		v.fail("%s line %d: share %s in exact mode (no share)", m, rc.line, rc.key)
		return
	}
	if rc.taken == nil || len(rc.taken) != len(rc.cap) {
		v.fail("%s line %d: share %s without taken=", m, rc.line, rc.key)
		return
	}
	st := at(states, rc.rev)
	if st == nil || st.shares[m][rc.key] == nil {
		v.fail("%s line %d: share %s, not in etcd at revision %d", m, rc.line, rc.key, rc.rev)
		return
	}
	sum := rc.cap.minus(rc.taken)
	for k, w := range st.shares[m] {
		if !added[k] {
			sum = sum.plus(w)
		}
	}
	if !sum.le(share) {
		v.fail("%s line %d: free and asked-for share %s over the share %s at revision %d",
			m, rc.line, sum, share, rc.rev)
	}
}

// yieldsTo: a request of a machine other than m, made for a waiter, waits
// at st ("" when none).
func yieldsTo(st *state, m string) string {
	if st == nil {
		return ""
	}
	var ms []string
	for o := range st.waitW {
		if o != m {
			ms = append(ms, o)
		}
	}
	sort.Strings(ms)
	if len(ms) == 0 {
		return ""
	}
	return ms[0]
}

// checkYield: rule 6 at line rc of machine m.
func checkYield(states []state, m string, rc record, v *verdict) {
	if !rc.judge {
		v.fail("%s line %d: %s without limit= and snap=: its order cannot be judged", m, rc.line, rc.event)
		return
	}
	o := yieldsTo(at(states, rc.snap), m)
	if o == "" || rc.limit.zero() {
		return
	}
	if rc.event == "add" && rc.base != nil {
		room := rc.base
		if st := at(states, rc.rev); st != nil {
			for _, k := range rc.keys {
				if w := st.granted[k]; w != nil {
					room = room.plus(w)
				}
			}
		}
		if rc.limit.le(room) {
			return
		}
		v.fail("%s line %d: local limit %s over base %s and its grants %s, while %s's request waits at revision %d",
			m, rc.line, rc.limit, rc.base, room, o, rc.snap)
		return
	}
	v.fail("%s line %d: local limit %s while %s's request waits at revision %d (%s): a release there goes to its own queue first",
		m, rc.line, rc.limit, o, rc.snap, rc.event)
}

func checkMachine(states []state, m string, recs []record, share cvec, v *verdict) {
	added := map[string]bool{}
	// receivedBy over increasing mono: walk once (lines are in time order).
	byMono := make([]state, len(states))
	copy(byMono, states)
	sort.SliceStable(byMono, func(a, b int) bool { return byMono[a].mono < byMono[b].mono })
	var j int
	var recv int64
	for _, rc := range recs {
		v.records++
		for j < len(byMono) && byMono[j].mono < rc.mono {
			if byMono[j].rev > recv {
				recv = byMono[j].rev
			}
			j++
		}
		rev := rc.rev
		if recv > rev {
			rev = recv
		}
		st := at(states, rev)
		granted := make(cvec, len(rc.cap))
		if st != nil && st.byM[m] != nil {
			granted = st.byM[m]
		}
		if rc.event == "add" {
			if len(rc.keys) == 0 {
				v.fail("%s line %d: add of no request", m, rc.line)
			}
			for _, k := range rc.keys {
				if st == nil || st.granted[k] == nil {
					v.fail("%s line %d: add %s, not granted at revision %d", m, rc.line, k, rc.rev)
				}
			}
		}
		checkYield(states, m, rc, v)
		switch rc.event {
		case "add":
			for _, k := range rc.keys {
				added[k] = true
			}
		case "adopt":
			// An adopting agent counts every request of its lease
			// it keeps as ADDed.
			if s := at(states, rc.rev); s != nil {
				for k := range s.shares[m] {
					added[k] = true
				}
			}
		case "share":
			checkShare(states, m, rc, share, added, v)
		}
		if !rc.cap.le(granted) {
			v.fail("%s line %d: can hold %s, its granted requests %s at revision %d (%s)",
				m, rc.line, rc.cap, granted, rev, rc.event)
		}
	}
	if n := len(recs); n > 0 && !recs[n-1].cap.zero() {
		v.fail("%s: at the end it can still hold %s", m, recs[n-1].cap)
	}
}

func check(evs []event, prefix string, agents map[string][]record, share cvec) *verdict {
	v := &verdict{}
	states := replay(evs, prefix, v)
	ms := make([]string, 0, len(agents))
	for m := range agents {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	for _, m := range ms {
		checkMachine(states, m, agents[m], share, v)
	}
	return v
}

func clockMono() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

// runRecorder: every event of the prefix, from revision 1, with the time
// it was received, until killed.
func runRecorder(args []string) {
	fs := newFlags("recorder")
	endpoints := fs.String("endpoints", "", "etcd client URLs")
	name := fs.String("cluster", "", "cluster semaphore")
	outp := fs.String("out", "", "events file")
	fs.Parse(args)
	cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*endpoints, ","), DialTimeout: 2 * time.Second})
	if err != nil {
		die("etcd: %v", err)
	}
	out, err := os.Create(*outp)
	if err != nil {
		die("%v", err)
	}
	prefix := "/fairsem-cluster/" + *name + "/"
	next := int64(1)
	for {
		wch := cli.Watch(context.Background(), prefix, clientv3.WithPrefix(), clientv3.WithRev(next))
		for r := range wch {
			if err := r.Err(); err != nil {
				fmt.Fprintf(os.Stderr, "recorder: %v\n", err)
				break
			}
			t := clockMono()
			for _, e := range r.Events {
				typ := "PUT"
				if e.Type == clientv3.EventTypeDelete {
					typ = "DELETE"
				}
				fmt.Fprintf(out, "%d %d %s %s %d %s\n", t, e.Kv.ModRevision, typ, e.Kv.Key,
					e.Kv.CreateRevision, strings.ReplaceAll(string(e.Kv.Value), "\n", " "))
				next = e.Kv.ModRevision + 1
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// runHistory: put the end mark, wait for the recorder to have it, check.
func runHistory(args []string) {
	fs := newFlags("history")
	endpoints := fs.String("endpoints", "", "etcd client URLs (to put the end mark)")
	name := fs.String("cluster", "", "cluster semaphore")
	evp := fs.String("events", "", "the recorder's file")
	shareS := fs.String("share", "0", "the agents' share (-share of fairsem-cluster agent): S or N,N,... (0: exact)")
	fs.Parse(args)
	share, ok := parseLimitValue(*shareS)
	if !ok {
		die("history: -share %q", *shareS)
	}
	prefix := "/fairsem-cluster/" + *name + "/"
	if *endpoints != "" {
		cli, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*endpoints, ","), DialTimeout: 2 * time.Second})
		if err != nil {
			die("etcd: %v", err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p, err := cli.Put(ctx, prefix+"history-end", "")
		cancel()
		if err != nil {
			die("end mark: %v", err)
		}
		mark := fmt.Sprintf(" %d PUT %shistory-end ", p.Header.Revision, prefix)
		for i := 0; ; i++ {
			b, _ := os.ReadFile(*evp)
			if strings.Contains(string(b), mark) {
				break
			}
			if i == 300 {
				die("the recorder never wrote revision %d", p.Header.Revision)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	f, err := os.Open(*evp)
	if err != nil {
		die("%v", err)
	}
	evs, err := parseEvents(f)
	if err != nil {
		die("%v", err)
	}
	agents := map[string][]record{}
	for _, a := range fs.Args() {
		kv := strings.SplitN(a, "=", 2)
		if len(kv) != 2 {
			die("history: MACHINE=FILE, not %q", a)
		}
		f, err := os.Open(kv[1])
		if err != nil {
			die("%v", err)
		}
		recs, err := parseRecords(f)
		f.Close()
		if err != nil {
			die("%s: %v", kv[1], err)
		}
		agents[kv[0]] = recs
	}
	v := check(evs, prefix, agents, share)
	for i, s := range v.violations {
		if i == 50 {
			fmt.Printf("... %d more\n", len(v.violations)-50)
			break
		}
		fmt.Println("VIOLATION " + s)
	}
	fmt.Printf("history %s: %d revisions, %d grants, %d agent lines from %d machines, share %s, %d violations\n",
		*name, v.revisions, v.grants, v.records, len(agents), share, len(v.violations))
	if len(v.violations) > 0 {
		os.Exit(1)
	}
}

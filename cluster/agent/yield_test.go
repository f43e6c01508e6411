// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.etcd.io/etcd/mvcc/mvccpb"
)

// fakeSem: the kernel's local semaphore as the agent sees it: a limit
// that may fall below what is taken, and one FIFO queue whose head, when
// it fits, is granted by every ADD and every release, at once.
type fakeSem struct {
	limit, taken vec
	queue        []vec
	maxCap       vec // the most max(limit, taken) ever was
}

func newFake(limit, taken uint64) *fakeSem {
	return &fakeSem{limit: vec{limit}, taken: vec{taken}, maxCap: vec{0}}
}

func (f *fakeSem) info() (localInfo, error) {
	return localInfo{limit: f.limit, taken: f.taken, available: f.limit.minus(f.taken),
		waiters: uint64(len(f.queue))}, nil
}

func (f *fakeSem) grant() {
	for len(f.queue) > 0 && f.taken.plus(f.queue[0]).le(f.limit) {
		f.taken = f.taken.plus(f.queue[0])
		f.queue = f.queue[1:]
	}
	f.maxCap = f.maxCap.max(f.limit.max(f.taken))
}

func (f *fakeSem) add(v vec) error { f.limit = f.limit.plus(v); f.grant(); return nil }

func (f *fakeSem) remove(v vec) error {
	if !v.le(f.limit) {
		return syscall.EINVAL
	}
	f.limit = f.limit.minus(v)
	return nil
}

func (f *fakeSem) acquire(n uint64) { f.queue = append(f.queue, vec{n}); f.grant() }

func (f *fakeSem) release(n uint64) { f.taken = f.taken.minus(vec{n}); f.grant() }

const tp = "/fairsem-cluster/db/"

func testAgent(f *fakeSem) *agent {
	return &agent{loc: f, n: 1, prefix: tp, machine: "m1",
		mine: map[string]*request{}, byWaiter: map[string]*request{}}
}

// snapOf: a snapshot of requests "MACHINE/ID W WORD", in cluster order,
// at limit 5.
func snapOf(reqs ...string) *snap {
	s := &snap{present: map[string]*mvccpb.KeyValue{}}
	var kvs []*mvccpb.KeyValue
	for i, r := range reqs {
		f := strings.SplitN(r, " ", 2)
		kv := &mvccpb.KeyValue{Key: []byte(tp + "q/" + f[0]), Value: []byte(f[1]), CreateRevision: int64(10 + i)}
		kvs = append(kvs, kv)
		s.present[string(kv.Key)] = kv
	}
	s.granted = grants(kvs, vec{5})
	return s
}

// A machine yields to a request of another machine made for a waiter
// that waits; not to its own, nor to a share request, nor to a granted
// one.
func TestOthersWait(t *testing.T) {
	a := testAgent(newFake(0, 0))
	for _, c := range []struct {
		s    *snap
		want bool
	}{
		{snapOf("m1/a 3 1/1/3/x/3", "m2/b 3 2/2/3/x/3"), true},
		{snapOf("m2/a 3 1/1/3/x/3", "m1/b 3 2/2/3/x/3"), false},
		{snapOf("m1/a 3 1/1/3/x/3", "m2/b 3 share"), false},
		{snapOf("m1/a 3 1/1/3/x/3", "m1/b 3 2/2/3/x/3"), false},
		{snapOf("m1/a 3 1/1/3/x/3", "m2/b 3 share", "m3/c 1 s/9/4/1/1"), true},
		{snapOf("m2/a 2 -", "m3/c 3 "), false},
		{snapOf("m2/a 4 -", "m3/c 3 "), true},
	} {
		if got := a.othersWait(c.s); got != c.want {
			t.Errorf("othersWait(%v) = %v, want %v", c.s.granted, got, c.want)
		}
	}
}

// The old order's gap: m1's program holds 3, another waits for 1 on m1,
// and a request of m2 waits in etcd.  Yielding, a release on m1 is not
// granted to m1's waiter: the permit is free for the cluster (max(limit,
// taken) fell by it, so giveBack returns it).
func TestYieldReleaseNotGrantedLocally(t *testing.T) {
	f := newFake(3, 3)
	a := testAgent(f)
	f.acquire(1)
	if lost := a.setYield(true, 10); lost {
		t.Fatal("setYield: no permit was free, none lost")
	}
	if !f.limit.zero() {
		t.Fatalf("yielding: local limit %s, want 0", f.limit)
	}
	f.release(1)
	if len(f.queue) != 1 || f.taken[0] != 2 {
		t.Fatalf("a release while yielding was granted locally: taken %s, %d waiting", f.taken, len(f.queue))
	}
	if i, _ := f.info(); i.limit.max(i.taken)[0] != 2 {
		t.Fatalf("what m1 can hold is %s, want 2: the released permit goes back", i.limit.max(i.taken))
	}
}

// Yielding, m1's own request granted in etcd is ADDed over what is
// taken: its waiter is granted at once, then the limit is 0 again, and
// the next release is not granted locally.  At no time could m1's
// programs hold more than they held plus the grant.
func TestYieldAddGrantsItsWaiter(t *testing.T) {
	f := newFake(3, 3)
	a := testAgent(f)
	a.setYield(true, 10)
	f.release(1) // taken 2, given back
	f.acquire(1)
	f.acquire(1)
	r := &request{key: tp + "q/m1/x", w: vec{1}, rev: 12}
	ok, lost := a.addGranted([]*request{r})
	if !ok || lost {
		t.Fatalf("addGranted: ok %v lost %v, want true false", ok, lost)
	}
	if f.taken[0] != 3 || len(f.queue) != 1 || !f.limit.zero() {
		t.Fatalf("after the ADD: taken %s, %d waiting, limit %s; want 3, 1, 0", f.taken, len(f.queue), f.limit)
	}
	if f.maxCap[0] != 3 {
		t.Fatalf("m1 could hold %s, more than the 2 held and the grant of 1", f.maxCap)
	}
	f.release(2)
	if len(f.queue) != 1 {
		t.Fatal("a release after the ADD was granted locally")
	}
}

// Yielding, an ADD whose permits the local head does not fit (it asks
// for 3; the grant was of 1, for a waiter behind it) goes back at once,
// and the agent says so: its waiters ask again.
func TestYieldAddHeadDoesNotFit(t *testing.T) {
	f := newFake(2, 2)
	a := testAgent(f)
	a.setYield(true, 10)
	f.acquire(3)
	f.acquire(1)
	ok, lost := a.addGranted([]*request{{key: tp + "q/m1/x", w: vec{1}, rev: 12}})
	if !ok || !lost {
		t.Fatalf("addGranted: ok %v lost %v, want true true", ok, lost)
	}
	if !f.limit.zero() || f.taken[0] != 2 || len(f.queue) != 2 {
		t.Fatalf("limit %s taken %s, %d waiting; want 0, 2, 2", f.limit, f.taken, len(f.queue))
	}
}

// No longer yielding, the limit is raised to what is taken: a release
// goes to the local queue at once, as no other machine waits.  Entering
// a yield with permits free while a waiter waits loses them.
func TestYieldThenOpen(t *testing.T) {
	f := newFake(3, 3)
	a := testAgent(f)
	a.setYield(true, 10)
	f.acquire(1)
	a.setYield(false, 11)
	if f.limit[0] != 3 || f.taken[0] != 3 {
		t.Fatalf("open: limit %s taken %s, want 3 3", f.limit, f.taken)
	}
	f.release(1)
	if len(f.queue) != 0 || f.taken[0] != 3 {
		t.Fatal("open: a release was not granted to the local waiter")
	}
	f.acquire(3)
	f.release(1) // 1 free: the head (3) does not fit
	if lost := a.setYield(true, 12); !lost || !f.limit.zero() {
		t.Fatalf("yield with 1 free and a waiter: lost %v limit %s, want true 0", lost, f.limit)
	}
}

// Fenced, the agent neither raises the limit when it stops yielding nor
// ADDs.
func TestYieldFenced(t *testing.T) {
	f := newFake(0, 3)
	a := testAgent(f)
	a.fenced = true
	a.setYield(false, 10)
	if ok, _ := a.addGranted([]*request{{key: tp + "q/m1/x", w: vec{1}}}); ok || !f.limit.zero() {
		t.Fatalf("fenced: limit %s", f.limit)
	}
}

// The history's lines say the local limit and the snapshot; an ADD while
// yielding names its requests and its base.
func TestYieldHistory(t *testing.T) {
	f := newFake(3, 3)
	a := testAgent(f)
	p := filepath.Join(t.TempDir(), "h")
	var err error
	if a.hist, err = openHistory(p); err != nil {
		t.Fatal(err)
	}
	a.hist.seen(9)
	a.setYield(true, 9)
	f.acquire(2)
	f.release(1)
	a.addGranted([]*request{{key: tp + "q/m1/x", w: vec{1}}, {key: tp + "q/m1/y", w: vec{1}}})
	b, _ := os.ReadFile(p)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	want := []string{" 9 3 yield limit=0 snap=9",
		" 9 4 add " + tp + "q/m1/x," + tp + "q/m1/y base=2 limit=4 snap=9",
		" 9 4 remove limit=0 snap=9"}
	if len(lines) != len(want) {
		t.Fatalf("history\n%s\nwant %d lines", b, len(want))
	}
	for i := range want {
		if !strings.HasSuffix(lines[i], want[i]) {
			t.Fatalf("line %d: %q, want ...%q", i+1, lines[i], want[i])
		}
	}
}

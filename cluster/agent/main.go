// SPDX-License-Identifier: GPL-2.0
//
// fairsem-cluster: one semaphore across machines, on etcd.  Each machine
// runs this agent; it exposes the cluster semaphore as a local named
// fairsem semaphore, so that local programs use it as any other
// (fairsem run --name NAME -n W -- CMD).  See cluster/README.md and the
// "Cluster semaphores" section of Documentation/userspace-api/fairsem.rst.
//
//	fairsem-cluster agent  -endpoints URLS -cluster NAME -machine ID [-local NAME]
//	                       [-limit L|LABEL=N,...] [-ttl S] [-fence S] [-history FILE]
//	                       [-share S|LABEL=N,...] [-state DIR]
//	fairsem-cluster status -endpoints URLS -cluster NAME
//	fairsem-cluster limit  -endpoints URLS -cluster NAME L|LABEL=N,...
//
// etcd layout, under /fairsem-cluster/NAME/:
//
//	limit                 "L", or "LABEL=N,..." for kinds
//	q/MACHINE/LEASE-SEQ   one request: "W[,W...] WAITER", attached to the
//	                      agent's lease.  Requests are served in the order
//	                      of their create revision (then key): request k is
//	                      granted when, in every kind, the counts of every
//	                      request up to and including k add up to at most
//	                      that kind's limit.  The word "share" names
//	                      share mode's surplus (-share): a request made
//	                      for no waiter, ADDed when granted, so that local
//	                      acquires that fit are granted without a round
//	                      trip.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/etcdserver/api/v3rpc/rpctypes"
	"go.etcd.io/etcd/mvcc/mvccpb"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type request struct {
	key    string
	rev    int64 // create revision; 0 until seen in a snapshot
	w      vec
	waiter string // the local waiter it was made for; "" once detached
	added  bool   // its permits were ADDed to the local semaphore
	missed int    // scans in a row without its waiter
}

type agent struct {
	cli     *clientv3.Client
	prefix  string
	machine string
	ttl     int64
	fence   time.Duration
	tick    time.Duration
	idle    time.Duration
	mutant  string
	share   vec // share mode's surplus; nil: exact

	loc   localSem
	locID uint64    // the local semaphore's id
	n     int       // kinds
	spec  limitSpec // the kinds, and the limit at the start
	hist  *history
	state *statePub
	subs  *subTracker

	mu       sync.Mutex // local RESIZEs against the fence
	fenced   bool
	yielding bool         // another machine's request waits: the local limit stays 0
	snap     atomic.Int64 // the revision of the snapshot yielding was decided on
	lastAck  atomic.Int64 // monotonic ns: when the last acknowledged keepalive was sent
	cur      atomic.Int64 // the lease being kept alive
	lease    clientv3.LeaseID
	lost     chan struct{}

	lastLimit vec // the limit of the last snapshot

	mine     map[string]*request
	byWaiter map[string]*request
	seq      int
	idleFrom time.Time
}

var start = time.Now()

func mono() int64 { return int64(time.Since(start)) }

func logf(format string, a ...interface{}) {
	fmt.Fprintf(os.Stderr, "fairsem-cluster: "+format+"\n", a...)
}

func op(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

// rec writes a history line: what local programs can hold now, the
// local limit, and the snapshot the agent's yield decision is from.
func (a *agent) rec(event, key string) { a.recExtra(event, key, "") }

func (a *agent) recExtra(event, key, extra string) {
	if a.hist == nil {
		return
	}
	t := monotonic()
	i, err := a.loc.info()
	if err != nil {
		return
	}
	a.recInfo(t, i, event, key, extra)
}

// recInfo: rec with MONO t and the local semaphore's i, read after t.
func (a *agent) recInfo(t int64, i localInfo, event, key, extra string) {
	if a.hist == nil {
		return
	}
	x := fmt.Sprintf("limit=%s snap=%d", i.limit, a.snap.Load())
	if extra != "" {
		x = extra + " " + x
	}
	a.hist.record(t, i.limit.max(i.taken), event, key, x)
}

// othersWait: in snapshot s, a request of another machine made for a
// waiter (not a share request) waits: this machine yields to it.
func (a *agent) othersWait(s *snap) bool {
	mp := a.prefix + "q/" + a.machine + "/"
	for k, kv := range s.present {
		if s.granted[k] || strings.HasPrefix(k, mp) {
			continue
		}
		if f := strings.Fields(string(kv.Value)); len(f) > 1 && f[1] == shareWord {
			continue
		}
		return true
	}
	return false
}

// setYield applies the decision taken on the snapshot of revision rev.
// Yielding (y: a request of another machine made for a waiter waits), the
// local limit falls to 0, below what local programs hold: a permit
// released here is granted to no local waiter (the kernel grants nothing
// while the limit is below what is taken), and goes back to the cluster
// (giveBack), in whose order the older request comes first.  Local
// waiters are granted only by the ADD of a request granted in etcd
// (addGranted).  Not yielding, the limit is at least what is taken again,
// so that a permit released here goes to the local queue at once.  The
// free permits the fall took are returned by giveBack; true when local
// waiters lost permits ADDed for them (their waiters must ask again).
func (a *agent) setYield(y bool, rev int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.yielding = y
	a.snap.Store(rev)
	if a.fenced && a.mutant != "no-fence" {
		return false
	}
	i, err := a.loc.info()
	if err != nil {
		return false
	}
	if y && !i.limit.zero() {
		if err := a.loc.remove(i.limit); err != nil {
			logf("yield: remove %s: %v", i.limit, err)
		}
		a.rec("yield", "")
		return i.waiters > 0 && !i.available.zero()
	}
	if !y && !i.taken.le(i.limit) {
		if err := a.loc.add(i.taken.minus(i.limit)); err != nil {
			logf("open: add %s: %v", i.taken.minus(i.limit), err)
		}
		a.rec("open", "")
	}
	return false
}

// addGranted ADDs the requests rs, granted in etcd, in one RESIZE, unless
// fenced.  Yielding, the limit is below what is taken: the agent raises
// it to max(limit, taken) plus their counts, so that the kernel grants
// its queue's head what they are for within the ADD, then takes the
// limit back to 0 at once; what no local waiter took goes back to the
// cluster (giveBack), and the second result says so: the waiters it was
// for ask again.  The history line of the ADD carries base=B, the
// max(limit, taken) read before it.
func (a *agent) addGranted(rs []*request) (ok, lost bool) {
	if len(rs) == 0 {
		return false, false
	}
	n := make(vec, a.n)
	keys := make([]string, len(rs))
	for x, r := range rs {
		n = n.plus(r.w)
		keys[x] = r.key
	}
	key := strings.Join(keys, ",")
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fenced && a.mutant != "no-fence" {
		return false, false
	}
	if !a.yielding {
		if err := a.loc.add(n); err != nil {
			logf("add %s: %v", n, err)
			return false, false
		}
		a.rec("add", key)
		return true, false
	}
	i, err := a.loc.info()
	if err != nil {
		return false, false
	}
	base := i.limit.max(i.taken)
	if err := a.loc.add(base.minus(i.limit).plus(n)); err != nil {
		logf("add %s: %v", n, err)
		return false, false
	}
	// The kernel granted what fits within the ADD.
	t := monotonic()
	j, err := a.loc.info()
	if err != nil {
		// The limit is base + n, unless a holder FORGOT permits.
		if err := a.loc.remove(base.plus(n)); err != nil {
			logf("yield: remove %s: %v", base.plus(n), err)
		}
		return true, true
	}
	a.recInfo(t, j, "add", key, "base="+base.String())
	if !j.limit.zero() {
		if err := a.loc.remove(j.limit); err != nil {
			logf("yield: remove %s: %v", j.limit, err)
		}
		a.rec("remove", "")
	}
	return true, !j.available.zero()
}

func (a *agent) remove(n vec, event string) {
	if n.zero() {
		return
	}
	if err := a.loc.remove(n); err != nil {
		logf("remove %s: %v", n, err)
	}
	a.rec(event, "")
}

// setFence: from now on no local grant (the local limit drops to 0, so a
// release grants no one), until unfenced.
func (a *agent) setFence(why string) {
	if a.mutant == "no-fence" {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.fenced {
		return
	}
	a.fenced = true
	if i, err := a.loc.info(); err == nil && !i.limit.zero() {
		if err := a.loc.remove(i.limit); err != nil {
			logf("remove %s: %v", i.limit, err)
		}
	}
	a.rec("fence", "")
	logf("fenced: %s", why)
}

func (a *agent) unfence() {
	a.mu.Lock()
	if a.fenced {
		logf("unfenced")
	}
	a.fenced = false
	a.mu.Unlock()
}

// watchFence fences once no keepalive was acknowledged for a.fence: the
// lease may expire a.ttl after the last acknowledged one, not before.
func (a *agent) watchFence(ctx context.Context) {
	t := time.NewTicker(a.tick / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Duration(mono()-a.lastAck.Load()) > a.fence {
			a.setFence("no keepalive acknowledged for " + a.fence.String())
		}
	}
}

// keepAlive renews the lease every a.fence/4 with KeepAliveOnce.  The
// moment a renewal was *sent* is what counts: etcd renewed it after that,
// so the lease lives at least a.ttl past it (the client's KeepAlive stream
// reports only when an answer arrives, which may be much later).  lost is
// closed when etcd says the lease is gone.
func (a *agent) keepAlive(id clientv3.LeaseID) {
	lost := make(chan struct{})
	var once sync.Once
	a.lost = lost
	a.cur.Store(int64(id))
	renew := func(t0 int64) {
		ctx, cancel := op(a.fence)
		r, err := a.cli.KeepAliveOnce(ctx, id)
		cancel()
		if a.cur.Load() != int64(id) {
			return
		}
		if err == nil && r.TTL > 0 {
			for {
				old := a.lastAck.Load()
				if t0 <= old || a.lastAck.CompareAndSwap(old, t0) {
					break
				}
			}
		} else if err == rpctypes.ErrLeaseNotFound || (err == nil && r.TTL <= 0) {
			once.Do(func() { close(lost) })
		}
	}
	// One renewal every a.fence/4, each on its own: a slow answer does
	// not hold back the next renewal.
	go func() {
		t := time.NewTicker(a.fence / 4)
		defer t.Stop()
		for a.cur.Load() == int64(id) {
			go renew(mono())
			<-t.C
		}
	}()
}

// newLease: a fresh lease, once nothing local is held without one.
func (a *agent) newLease() {
	for {
		if a.mutant != "no-fence" {
			if i, err := a.loc.info(); err == nil && !i.taken.zero() {
				time.Sleep(a.tick)
				continue
			}
		}
		ctx, cancel := op(2 * time.Second)
		t0 := mono()
		g, err := a.cli.Grant(ctx, a.ttl)
		cancel()
		if err == nil {
			a.lastAck.Store(t0)
			a.lease = g.ID
			a.keepAlive(g.ID)
			a.unfence()
			a.rec("lease", "")
			logf("lease %x", int64(g.ID))
			return
		}
		logf("lease: %v", err)
		time.Sleep(a.tick)
	}
}

type snap struct {
	rev     int64
	limit   vec
	granted map[string]bool
	present map[string]*mvccpb.KeyValue
	resp    *clientv3.GetResponse
}

// queue: every request in cluster order, and the limit ("" if none).
func queue(cli *clientv3.Client, prefix string, d time.Duration) (*clientv3.GetResponse, string, error) {
	ctx, cancel := op(d)
	defer cancel()
	txn, err := cli.Txn(ctx).Then(
		clientv3.OpGet(prefix+"limit"),
		clientv3.OpGet(prefix+"q/", clientv3.WithPrefix())).Commit()
	if err != nil {
		return nil, "", err
	}
	var limit string
	if kvs := txn.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
		limit = string(kvs[0].Value)
	}
	r := (*clientv3.GetResponse)(txn.Responses[1].GetResponseRange())
	r.Header = txn.Header
	order(r.Kvs)
	return r, limit, nil
}

// order sorts requests into cluster order: create revision, then key.
func order(kvs []*mvccpb.KeyValue) {
	sort.SliceStable(kvs, func(i, j int) bool {
		if kvs[i].CreateRevision != kvs[j].CreateRevision {
			return kvs[i].CreateRevision < kvs[j].CreateRevision
		}
		return string(kvs[i].Key) < string(kvs[j].Key)
	})
}

// grants applies the grant rule to requests in cluster order: a request
// is granted when, in every kind, the counts up to and including it add
// up to at most the limit.  Once one does not fit, none behind it does
// (the sums only grow).
func grants(kvs []*mvccpb.KeyValue, limit vec) map[string]bool {
	g := map[string]bool{}
	sum := make(vec, len(limit))
	for _, kv := range kvs {
		sum = sum.plus(parseW(kv.Value, len(limit)))
		g[string(kv.Key)] = sum.le(limit)
	}
	return g
}

// limitVec: the limit in etcd as a vector of the agent's kinds; zeros
// (nothing granted) when it is missing or names other kinds.
func (a *agent) limitVec(s string) vec {
	l, err := parseLimit(s)
	if err != nil || !l.sameKinds(a.spec) {
		if s != "" {
			logf("limit %q: not a limit of kinds %s", s, a.spec)
		}
		return make(vec, a.n)
	}
	return l.limit
}

func (a *agent) snapshot() (*snap, error) {
	r, ls, err := queue(a.cli, a.prefix, 2*time.Second)
	if err != nil {
		return nil, err
	}
	limit := a.limitVec(ls)
	a.lastLimit = limit
	s := &snap{rev: r.Header.Revision, limit: limit, resp: r,
		granted: grants(r.Kvs, limit), present: map[string]*mvccpb.KeyValue{}}
	for _, kv := range r.Kvs {
		s.present[string(kv.Key)] = kv
	}
	return s, nil
}

// del and shrink touch a request only while it is the one we made: a
// request whose lease expired is gone, and a Put would make a new one.
func (a *agent) del(r *request) {
	ctx, cancel := op(2 * time.Second)
	defer cancel()
	t, err := a.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(r.key), "=", r.rev)).
		Then(clientv3.OpDelete(r.key)).Commit()
	if err != nil {
		logf("delete %s: %v", r.key, err)
		return
	}
	a.hist.seen(t.Header.Revision)
	a.rec("delete", r.key)
	delete(a.mine, r.key)
	if r.waiter != "" && a.byWaiter[r.waiter] == r {
		delete(a.byWaiter, r.waiter)
	}
}

func (a *agent) shrink(r *request, w vec) bool {
	ctx, cancel := op(2 * time.Second)
	defer cancel()
	t, err := a.cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(r.key), "=", r.rev)).
		Then(clientv3.OpPut(r.key, fmt.Sprintf("%s %s", w, r.waiter), clientv3.WithLease(a.lease))).Commit()
	if err != nil {
		logf("shrink %s: %v", r.key, err)
		return false
	}
	r.w = w
	a.hist.seen(t.Header.Revision)
	a.rec("shrink", r.key)
	return true
}

func (a *agent) held() vec {
	c := make(vec, a.n)
	for _, r := range a.mine {
		if r.added {
			c = c.plus(r.w)
		}
	}
	return c
}

// giveBack returns what the agent holds beyond what local programs can
// hold: max(limit, taken) after the RESIZE_REMOVE.  Share requests first,
// then the newest.
func (a *agent) giveBack() {
	i, err := a.loc.info()
	if err != nil {
		return
	}
	need := i.limit.max(i.taken)
	c := a.held()
	if c.le(need) {
		return
	}
	excess := c.minus(need)
	var added []*request
	for _, r := range a.mine {
		if r.added && r.rev > 0 {
			added = append(added, r)
		}
	}
	// Share requests first, then the newest.
	sort.Slice(added, func(x, y int) bool {
		if sx, sy := added[x].waiter == shareWord, added[y].waiter == shareWord; sx != sy {
			return sx
		}
		return added[x].rev > added[y].rev
	})
	for _, r := range added {
		if excess.zero() {
			break
		}
		take := r.w.min(excess)
		if take.zero() {
			continue
		}
		if left := r.w.minus(take); left.zero() {
			a.del(r)
		} else if !a.shrink(r, left) {
			continue
		}
		excess = excess.minus(take)
	}
}

func (a *agent) step() {
	s, err := a.snapshot()
	if err != nil {
		a.publish(nil)
		time.Sleep(a.tick)
		return
	}
	a.publish(s.resp)
	// Before anything else is recorded at this snapshot: a line of
	// snapshot s.rev shows the limit its decision set.
	lost := a.setYield(a.othersWait(s), s.rev)
	if a.hist.seen(s.rev) {
		a.rec("seen", "")
	}
	for k, r := range a.mine {
		kv, ok := s.present[k]
		if !ok {
			// Gone: deleted by us, or its lease expired.
			delete(a.mine, k)
			if r.waiter != "" && a.byWaiter[r.waiter] == r {
				delete(a.byWaiter, r.waiter)
			}
			continue
		}
		r.rev = kv.CreateRevision
		r.w = parseW(kv.Value, a.n)
	}
	orphans := a.orphans(s)
	// Grants first, in cluster order, in one ADD.
	var granted []*request
	for _, r := range a.mine {
		if !r.added && r.rev > 0 && s.granted[r.key] {
			granted = append(granted, r)
		}
	}
	sort.Slice(granted, func(x, y int) bool { return granted[x].key < granted[y].key })
	if ok, l := a.addGranted(granted); ok {
		for _, r := range granted {
			r.added = true
		}
		lost = lost || l
	}
	if lost {
		// Permits ADDed for local waiters went back while yielding:
		// the waiters they were for ask again.
		a.detachAdded()
	}
	// The local waiters: one request each.
	ws := discover(a.locID, a.n)
	if a.subs != nil {
		ws = sortWaiters(append(ws, a.subs.scan()...))
	}
	adopt, drop := adoptable(orphans, ws, a.byWaiter)
	for _, r := range drop {
		a.del(r)
	}
	for _, r := range adopt {
		a.mine[r.key] = r
		a.byWaiter[r.waiter] = r
		a.rec("enqueue", r.key)
	}
	seen := map[string]bool{}
	var fresh []waiter
	for _, w := range ws {
		seen[w.id] = true
		if _, ok := a.byWaiter[w.id]; !ok {
			fresh = append(fresh, w)
		}
	}
	for id, r := range a.byWaiter {
		if seen[id] {
			r.missed = 0
			continue
		}
		r.missed++
		if r.added {
			delete(a.byWaiter, id)
			r.waiter = ""
		} else if r.missed >= 3 && r.rev > 0 {
			a.del(r)
		}
	}
	if len(fresh) > 0 {
		a.enqueue(fresh)
	}
	// Permits free on this machine go back, and so do permits that sat
	// idle behind a local head that does not fit for a.idle; in share
	// mode, up to the share stays while no other request waits.
	keep := a.keepShare(s)
	i, err := a.loc.info()
	if err == nil && !i.available.zero() {
		now := time.Now()
		if i.waiters == 0 {
			a.idleFrom = time.Time{}
			a.returnFree(false, keep)
		} else if keep == nil && a.holdsShare() {
			// The share yields at once, not after a.idle.
			a.idleFrom = time.Time{}
			a.returnFree(true, nil)
		} else if a.idleFrom.IsZero() {
			a.idleFrom = now
		} else if now.Sub(a.idleFrom) > a.idle {
			a.idleFrom = time.Time{}
			a.returnFree(true, keep)
		}
	} else {
		a.idleFrom = time.Time{}
	}
	if keep != nil {
		a.refillShare(keep)
	} else {
		a.dropShare()
	}
	a.giveBack()
}

// orphans: the requests of this agent's lease in snapshot s that it does
// not know: a Put whose answer timed out after etcd made it.
func (a *agent) orphans(s *snap) []*request {
	var rs []*request
	mp := a.prefix + "q/" + a.machine + "/"
	for k, kv := range s.present {
		if _, ok := a.mine[k]; ok || !strings.HasPrefix(k, mp) ||
			clientv3.LeaseID(kv.Lease) != a.lease {
			continue
		}
		r := &request{key: k, rev: kv.CreateRevision, w: parseW(kv.Value, a.n)}
		if f := strings.Fields(string(kv.Value)); len(f) > 1 {
			r.waiter = f[1]
		}
		rs = append(rs, r)
	}
	return rs
}

// adoptable splits orphans into those to keep and those to delete.  A
// waiter that still waits for the same weight, with no request known, keeps
// its orphan, and so its place in the cluster's order: a slow answer from
// etcd must not send it behind requests made after its own.  The rest go
// (a share request, a waiter gone or already served, a second orphan).
func adoptable(orphans []*request, ws []waiter, byWaiter map[string]*request) (keep, drop []*request) {
	want := map[string]vec{}
	for _, w := range ws {
		if _, ok := byWaiter[w.id]; !ok {
			want[w.id] = w.count
		}
	}
	sort.Slice(orphans, func(x, y int) bool { return orphans[x].rev < orphans[y].rev })
	for _, r := range orphans {
		if c, ok := want[r.waiter]; ok && r.waiter != shareWord && c.le(r.w) && r.w.le(c) {
			delete(want, r.waiter)
			keep = append(keep, r)
		} else {
			drop = append(drop, r)
		}
	}
	return keep, drop
}

// stop: an agent told to stop gives back what no local program holds:
// its requests not ADDed (no one will ADD them now), the free local
// permits (its share too) and the requests beyond what is held.  The
// holders keep theirs; the lease keeps their requests until it expires.
func (a *agent) stop() {
	for _, r := range a.mine {
		if !r.added && r.rev > 0 {
			a.del(r)
		}
	}
	a.returnFree(false, nil)
	a.giveBack()
}

// shareWord: the waiter word of share mode's requests.
const shareWord = "share"

// keepShare: the surplus to keep now, nil for none: share mode, and no
// request waits in etcd but share requests.  A share yields to every
// waiting request made for a waiter, of any machine, this one's too:
// while one waits, the free permits go back as in exact mode, and no
// share is asked for.  Waiting shares do not make each other yield.
func (a *agent) keepShare(s *snap) vec {
	if a.share == nil {
		return nil
	}
	for k, kv := range s.present {
		if s.granted[k] {
			continue
		}
		if f := strings.Fields(string(kv.Value)); len(f) < 2 || f[1] != shareWord {
			return nil
		}
	}
	return a.share
}

// holdsShare: a share request of this machine is ADDed.
func (a *agent) holdsShare() bool {
	for _, r := range a.mine {
		if r.waiter == shareWord && r.added {
			return true
		}
	}
	return false
}

// pendingShare: this machine's share requests not ADDed yet.
func (a *agent) pendingShare() (vec, []*request) {
	p := make(vec, a.n)
	var rs []*request
	for _, r := range a.mine {
		if r.waiter == shareWord && !r.added {
			p = p.plus(r.w)
			rs = append(rs, r)
		}
	}
	return p, rs
}

// refillShare asks for what the share misses: keep, less the free local
// permits and the share requests not granted yet.  Its history line
// ("share KEY taken=T") carries the CAP and taken it decided on.
func (a *agent) refillShare(keep vec) {
	a.mu.Lock()
	fenced := a.fenced
	a.mu.Unlock()
	if fenced && a.mutant != "no-fence" {
		return
	}
	t := monotonic()
	i, err := a.loc.info()
	if err != nil {
		return
	}
	pending, _ := a.pendingShare()
	need := keep.minus(i.available).minus(pending)
	if a.mutant == "share-greedy" {
		need = keep
	}
	if need.zero() {
		return
	}
	// Counts of zero in some kinds are fine: a request asks for at least
	// one permit of some kind.
	if r := a.enqueueShare(need); r != nil {
		a.recInfo(t, i, "share", r.key, "taken="+i.taken.String())
	}
}

// dropShare deletes the share requests that wait: another request waits
// too, and the share yields to it.
func (a *agent) dropShare() {
	_, rs := a.pendingShare()
	for _, r := range rs {
		if r.rev > 0 {
			a.del(r)
		}
	}
}

func (a *agent) publish(r *clientv3.GetResponse) {
	if a.state == nil {
		return
	}
	a.mu.Lock()
	fenced := a.fenced && a.mutant != "no-fence"
	a.mu.Unlock()
	a.state.publish(monotonic(), r, a.prefix, a.limitSpecNow(), fenced, a.share)
}

// limitSpecNow: the kinds, with the limit of the last snapshot.
func (a *agent) limitSpecNow() limitSpec {
	l := limitSpec{labels: a.spec.labels, limit: a.lastLimit}
	if l.limit == nil {
		l.limit = a.spec.limit
	}
	return l
}

// returnFree removes the free local permits but keep (share mode's
// surplus; nil: all); with detach, the waiters they were added for ask
// again (behind the others).
func (a *agent) returnFree(detach bool, keep vec) {
	a.mu.Lock()
	if i, err := a.loc.info(); err == nil {
		n := i.available
		if keep != nil {
			n = n.minus(keep)
		}
		a.remove(n, "remove")
	}
	a.mu.Unlock()
	if detach {
		a.detachAdded()
	}
}

// detachAdded: the waiters whose requests were ADDed and that still wait
// ask again (behind the others); those that hold are detached anyway.
func (a *agent) detachAdded() {
	for id, r := range a.byWaiter {
		if r.added {
			delete(a.byWaiter, id)
			r.waiter = ""
		}
	}
}

// enqueueShare makes one share request of w; nil if etcd refused.
func (a *agent) enqueueShare(w vec) *request {
	a.seq++
	r := &request{key: fmt.Sprintf("%sq/%s/%016x-%08d", a.prefix, a.machine, int64(a.lease), a.seq),
		w: w, waiter: shareWord}
	ctx, cancel := op(2 * time.Second)
	defer cancel()
	t, err := a.cli.Txn(ctx).Then(clientv3.OpPut(r.key, fmt.Sprintf("%s %s", r.w, r.waiter),
		clientv3.WithLease(a.lease))).Commit()
	if err != nil {
		logf("share: %v", err)
		return nil
	}
	r.rev = t.Header.Revision
	a.mine[r.key] = r
	a.hist.seen(t.Header.Revision)
	return r
}

func (a *agent) enqueue(ws []waiter) {
	var ops []clientv3.Op
	var rs []*request
	for _, w := range ws {
		a.seq++
		r := &request{key: fmt.Sprintf("%sq/%s/%016x-%08d", a.prefix, a.machine, int64(a.lease), a.seq),
			w: w.count, waiter: w.id}
		ops = append(ops, clientv3.OpPut(r.key, fmt.Sprintf("%s %s", r.w, r.waiter), clientv3.WithLease(a.lease)))
		rs = append(rs, r)
	}
	ctx, cancel := op(2 * time.Second)
	defer cancel()
	t, err := a.cli.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		logf("enqueue: %v", err)
		return
	}
	for _, r := range rs {
		r.rev = t.Header.Revision
		a.mine[r.key] = r
		a.byWaiter[r.waiter] = r
	}
	a.hist.seen(t.Header.Revision)
	a.rec("enqueue", rs[0].key)
}

// adopt takes over the requests of a previous agent of this machine whose
// lease is still alive (an agent killed and restarted): the permits its
// programs hold stay counted.  Waiting requests are dropped: the waiters
// are found again.
func (a *agent) adopt() bool {
	s, err := a.snapshot()
	if err != nil {
		return false
	}
	var lease clientv3.LeaseID
	mp := a.prefix + "q/" + a.machine + "/"
	for k, kv := range s.present {
		if strings.HasPrefix(k, mp) && kv.Lease != 0 {
			lease = clientv3.LeaseID(kv.Lease)
		}
	}
	if lease == 0 {
		return false
	}
	ctx, cancel := op(2 * time.Second)
	t0 := mono()
	r, err := a.cli.KeepAliveOnce(ctx, lease)
	cancel()
	if err != nil || r.TTL <= 0 {
		return false
	}
	a.lastAck.Store(t0)
	a.lease = lease
	a.keepAlive(lease)
	a.hist.seen(s.rev)
	for k, kv := range s.present {
		if !strings.HasPrefix(k, mp) || clientv3.LeaseID(kv.Lease) != lease {
			continue
		}
		r := &request{key: k, rev: kv.CreateRevision, w: parseW(kv.Value, a.n), added: true}
		if f := strings.Fields(string(kv.Value)); len(f) > 1 && f[1] == shareWord {
			r.waiter = shareWord
		}
		a.mine[k] = r
		if !s.granted[k] {
			a.del(r)
		}
		if n, err := strconv.ParseInt(k[strings.LastIndex(k, "-")+1:], 10, 64); err == nil && int(n) > a.seq {
			a.seq = int(n)
		}
	}
	a.rec("adopt", "")
	logf("adopted lease %x: %s permits", int64(lease), a.held())
	return true
}

// dial connects within two seconds; the client blocks for that long and
// then fails with the context's own deadline, named here as ETIMEDOUT.
func dial(endpoints string) (*clientv3.Client, error) {
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:            strings.Split(endpoints, ","),
		DialTimeout:          2 * time.Second,
		DialKeepAliveTime:    time.Second,
		DialKeepAliveTimeout: time.Second,
	})
	if err != nil {
		return nil, etcdErr("connect to "+endpoints, err)
	}
	return cli, nil
}

// etcdErr names a timeout as the contract does.
func etcdErr(what string, err error) error {
	// Our own deadline passed (the client turns a gRPC DeadlineExceeded
	// into it), or etcd's server gave up on its own.
	st, _ := status.FromError(err)
	if errors.Is(err, context.DeadlineExceeded) || st.Code() == codes.DeadlineExceeded ||
		rpctypes.ErrorDesc(err) == context.DeadlineExceeded.Error() {
		return errnoErr(what+": etcd did not answer", syscall.ETIMEDOUT)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// unavailable says that etcd could not serve a request for now: the
// member went away, or the cluster has no leader while it elects one, as
// while the fleet starts or under a load that misses heartbeats.  Another
// try may well succeed.
func unavailable(err error) bool {
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable
	}
	for e := err; e != nil; e = errors.Unwrap(e) {
		if st, ok := status.FromError(e); ok && st.Code() == codes.Unavailable {
			return true
		}
	}
	return false
}

// retry runs f until it succeeds or fails for good, trying again while
// etcd is slow or unavailable, for at most d in all; etcd still
// unavailable at the end is ETIMEDOUT, as a slow one is.
func retry(what string, d time.Duration, f func() error) error {
	for t0 := time.Now(); ; {
		err := f()
		if err == nil || !(errors.Is(err, syscall.ETIMEDOUT) || unavailable(err)) {
			return err
		}
		if time.Since(t0) >= d {
			if unavailable(err) {
				err = errnoErr(fmt.Sprintf("%s: etcd did not answer (%v)", what, err), syscall.ETIMEDOUT)
			}
			return err
		}
		logf("%v; trying again", err)
		time.Sleep(200 * time.Millisecond)
	}
}

// setLimit writes limit l, refusing kinds other than those already there
// (EINVAL); with onlyNew, only if there is no limit yet.
func setLimit(cli *clientv3.Client, prefix string, l limitSpec, onlyNew bool) error {
	key := prefix + "limit"
	for {
		ctx, cancel := op(5 * time.Second)
		g, err := cli.Get(ctx, key)
		cancel()
		if err != nil {
			return etcdErr("limit", err)
		}
		var cmp clientv3.Cmp
		if len(g.Kvs) == 0 {
			cmp = clientv3.Compare(clientv3.CreateRevision(key), "=", 0)
		} else {
			if onlyNew {
				return nil
			}
			old, err := parseLimit(string(g.Kvs[0].Value))
			if err == nil && !old.sameKinds(l) {
				return errnoErr(fmt.Sprintf("limit %s: the semaphore's kinds are those of %s", l, old), syscall.EINVAL)
			}
			cmp = clientv3.Compare(clientv3.ModRevision(key), "=", g.Kvs[0].ModRevision)
		}
		ctx, cancel = op(5 * time.Second)
		t, err := cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(key, l.String())).Commit()
		cancel()
		if err != nil {
			return etcdErr("limit", err)
		}
		if t.Succeeded {
			return nil
		}
	}
}

// begin connects, sets the limit if there is none and asked for, and
// reads it. etcd may be slow to answer, or without a leader, while the
// fleet starts: the agent tries for wait before it gives up with
// ETIMEDOUT (or the last unavailable member's error).
func (a *agent) begin(endpoints, limit string, want limitSpec, wait time.Duration) (string, error) {
	var ls string
	err := retry("start", wait, func() error {
		err := a.connect(endpoints)
		if err == nil && limit != "" {
			err = setLimit(a.cli, a.prefix, want, true)
		}
		if err == nil {
			_, ls, err = queue(a.cli, a.prefix, 5*time.Second)
			if err != nil {
				err = etcdErr("read the limit", err)
			}
		}
		return err
	})
	return ls, err
}

func (a *agent) connect(endpoints string) error {
	if a.cli != nil {
		return nil
	}
	cli, err := dial(endpoints)
	if err == nil {
		a.cli = cli
	}
	return err
}

func runAgent(args []string) error {
	fs := flag.NewFlagSet("agent", flag.ExitOnError)
	endpoints := fs.String("endpoints", "http://127.0.0.1:2379", "etcd client URLs, comma-separated")
	name := fs.String("cluster", "", "the cluster semaphore's name")
	machine := fs.String("machine", "", "this machine's name (default: the host name)")
	local := fs.String("local", "", "the local named semaphore (default: the cluster name, in $FAIRSEM_DIR)")
	limit := fs.String("limit", "", "set the limit (L or LABEL=N,...) if the cluster semaphore has none yet")
	ttl := fs.Int64("ttl", 10, "the lease's TTL, seconds")
	fence := fs.Float64("fence", 0, "seconds without an acknowledged keepalive before local grants stop (default TTL/2)")
	tick := fs.Duration("tick", 100*time.Millisecond, "how often local waiters are looked for")
	idle := fs.Duration("idle", 2*time.Second, "how long free permits may wait behind a local head that does not fit")
	startWait := fs.Duration("start-wait", time.Minute, "how long to try etcd at the start before giving up")
	histPath := fs.String("history", "", "append the history of what this machine can hold to FILE")
	share := fs.String("share", "", "share mode: keep up to S (or LABEL=N,...) permits to grant locally without a round trip")
	stateDir := fs.String("state", "/run/fairsem-cluster", "publish the queue for fairsem status --cluster in DIR/NAME (- for none)")
	mutant := fs.String("mutant", "", "testing only: no-fence (grant through a partition, forget on lease loss), "+
		"share-greedy (ask for the whole share every tick)")
	fs.Parse(args)
	if *name == "" {
		return errnoErr("-cluster NAME is needed", syscall.EINVAL)
	}
	if *machine == "" {
		*machine, _ = os.Hostname()
	}
	if *local == "" {
		*local = *name
	}
	f := time.Duration(*fence * float64(time.Second))
	if f == 0 {
		f = time.Duration(*ttl) * time.Second / 2
	}
	if f >= time.Duration(*ttl)*time.Second {
		return errnoErr("-fence must be below -ttl", syscall.EINVAL)
	}
	var want limitSpec
	if *limit != "" {
		var err error
		if want, err = parseLimit(*limit); err != nil {
			return err
		}
	}
	a := &agent{prefix: "/fairsem-cluster/" + *name + "/", machine: *machine,
		ttl: *ttl, fence: f, tick: *tick, idle: *idle, mutant: *mutant,
		mine: map[string]*request{}, byWaiter: map[string]*request{}}
	ls, err := a.begin(*endpoints, *limit, want, *startWait)
	if err != nil {
		return err
	}
	if ls == "" {
		return errnoErr("cluster semaphore "+*name+" has no limit (give -limit)", syscall.ENOENT)
	}
	if a.spec, err = parseLimit(ls); err != nil {
		return err
	}
	a.n = a.spec.nkinds()
	if *share != "" {
		if a.share, err = parseShare(*share, a.spec); err != nil {
			return err
		}
	}
	loc, err := openLocal(*local, a.spec)
	if err != nil {
		return err
	}
	a.loc, a.locID = loc, loc.id
	if a.hist, err = openHistory(*histPath); err != nil {
		return err
	}
	if a.state, err = openState(*stateDir, *name, a.machine, *local); err != nil {
		return err
	}
	defer a.state.remove()
	// Whatever a previous agent added is no longer granted by anyone we
	// know of: the limit drops to 0, the holders keep what they hold.
	a.mu.Lock()
	a.fenced = true
	if i, err := a.loc.info(); err == nil {
		a.remove(i.limit, "remove")
	}
	a.mu.Unlock()
	if a.n == 1 {
		if a.subs, err = startSubmitted(a.locID); err != nil {
			logf("submitted requests not carried: %v", err)
		} else {
			logf("submitted requests carried: tracefs instance fairsem-cluster-%d", a.locID)
		}
	}
	if a.adopt() {
		a.unfence()
	} else {
		a.newLease()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.watchFence(ctx)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	wch := a.cli.Watch(clientv3.WithRequireLeader(ctx), a.prefix, clientv3.WithPrefix())
	mode := "exact"
	if a.share != nil {
		mode = "share " + a.spec.labelled(a.share)
	}
	logf("machine %s serves %s (%s) as %s (ttl %ds, fence %s, %s)", a.machine, *name, a.spec, *local,
		a.ttl, a.fence, mode)
	t := time.NewTicker(a.tick)
	defer t.Stop()
	for {
		select {
		case <-sig:
			logf("stopping")
			a.stop()
			return nil
		case <-a.lost:
			logf("lease %x lost", int64(a.lease))
			a.setFence("lease lost")
			a.mine = map[string]*request{}
			a.byWaiter = map[string]*request{}
			a.newLease()
			continue
		case _, ok := <-wch:
			if !ok {
				wch = a.cli.Watch(clientv3.WithRequireLeader(ctx), a.prefix, clientv3.WithPrefix())
			}
		case <-t.C:
		}
		a.mu.Lock()
		fenced := a.fenced && a.mutant != "no-fence"
		a.mu.Unlock()
		if fenced && time.Duration(mono()-a.lastAck.Load()) <= a.fence {
			a.unfence()
		}
		a.rec("tick", "")
		a.step()
	}
}

// cmdWait bounds how long status and limit try etcd: an answer takes
// milliseconds, but a member may be away or an election under way for a
// few seconds, and a loaded machine's etcd may not answer within one
// request's 5 s.
const cmdWait = 30 * time.Second

// withEtcd connects and runs f, both tried again for at most cmdWait.
func withEtcd(what, endpoints string, f func(*clientv3.Client) error) error {
	var cli *clientv3.Client
	defer func() {
		if cli != nil {
			cli.Close()
		}
	}()
	return retry(what, cmdWait, func() error {
		var err error
		if cli == nil {
			if cli, err = dial(endpoints); err != nil {
				return err
			}
		}
		return f(cli)
	})
}

func runStatus(args []string) error {
	fs := flag.NewFlagSet("status", flag.ExitOnError)
	endpoints := fs.String("endpoints", "http://127.0.0.1:2379", "etcd client URLs, comma-separated")
	name := fs.String("cluster", "", "the cluster semaphore's name")
	fs.Parse(args)
	prefix := "/fairsem-cluster/" + *name + "/"
	var r *clientv3.GetResponse
	var ls string
	err := withEtcd("status", *endpoints, func(cli *clientv3.Client) error {
		var err error
		r, ls, err = queue(cli, prefix, 5*time.Second)
		if err != nil {
			return etcdErr("status", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if ls == "" {
		return errnoErr("cluster semaphore "+*name+" has no limit", syscall.ENOENT)
	}
	spec, err := parseLimit(ls)
	if err != nil {
		return err
	}
	var waiting int
	held := make(vec, spec.nkinds())
	var lines []string
	g := grants(r.Kvs, spec.limit)
	for _, kv := range r.Kvs {
		w := parseW(kv.Value, spec.nkinds())
		state := "waiting"
		if g[string(kv.Key)] {
			state = "granted"
			held = held.plus(w)
		} else {
			waiting++
		}
		k := strings.TrimPrefix(string(kv.Key), prefix+"q/")
		lines = append(lines, fmt.Sprintf("  %-8s rev=%-8d weight=%-4s %s", state, kv.CreateRevision, w, k))
	}
	fmt.Printf("cluster %s: limit %s, granted %s, requests %d, waiting %d\n", *name, spec, held, len(r.Kvs), waiting)
	for _, l := range lines {
		fmt.Println(l)
	}
	return nil
}

func runLimit(args []string) error {
	fs := flag.NewFlagSet("limit", flag.ExitOnError)
	endpoints := fs.String("endpoints", "http://127.0.0.1:2379", "etcd client URLs, comma-separated")
	name := fs.String("cluster", "", "the cluster semaphore's name")
	fs.Parse(args)
	if fs.NArg() != 1 || *name == "" {
		return errnoErr("usage: fairsem-cluster limit -cluster NAME L|LABEL=N,...", syscall.EINVAL)
	}
	l, err := parseLimit(fs.Arg(0))
	if err != nil {
		return err
	}
	return withEtcd("limit", *endpoints, func(cli *clientv3.Client) error {
		return setLimit(cli, "/fairsem-cluster/"+*name+"/", l, false)
	})
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: fairsem-cluster agent|status|limit [FLAGS]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "agent":
		err = runAgent(os.Args[2:])
	case "status":
		err = runStatus(os.Args[2:])
	case "limit":
		err = runLimit(os.Args[2:])
	default:
		err = errnoErr(fmt.Sprintf("unknown command %q", os.Args[1]), syscall.EINVAL)
	}
	if err != nil {
		logf("%v", err)
		os.Exit(1)
	}
}

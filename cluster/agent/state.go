// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.etcd.io/etcd/clientv3"
	"go.etcd.io/etcd/mvcc/mvccpb"
)

// The agent's view, for `fairsem status --cluster NAME`: every request of
// every machine in cluster order, as the agent's last snapshot of etcd had
// it, in a file of /run (-state DIR, default /run/fairsem-cluster, file
// NAME), replaced whole (rename) whenever it changes and at least every
// second.  Ordinary users read the file; only the agent speaks to etcd,
// and nothing a user does reaches etcd.  One "KEY VALUE..." a line:
//
//	fairsem-cluster-status 1
//	cluster NAME
//	machine MACHINE             this agent's machine
//	local PATH                  the local semaphore it serves
//	pid PID                     the agent's process
//	mono NS                     CLOCK_MONOTONIC when the file was written
//	seen NS REV                 ... when the snapshot was taken, its revision
//	state serving|fenced        fenced: it grants nothing locally
//	share VEC|-                 share mode's surplus, - when exact
//	limit SPEC                  "L" or "LABEL=N,..."
//	totals GRANTED WAITING NREQ NWAITING
//	mach MACHINE GRANTED WAITING NREQ NWAITING   one a machine, by name
//	req N STATE MACHINE WEIGHT REV WAITER        in cluster order
//
// Counts are vectors as the limit's ("3", or "cpu=1,gpu=0"); STATE is
// granted or waiting (by the rule at the current limit, as `fairsem-cluster
// status` has it); WAITER says what the request was made for: pid=P (a task
// blocked in an acquire), pid=P,submitted (a submitted request), share
// (share mode's surplus) or - (its waiter has gone, or holds).
type statePub struct {
	path   string
	header string // cluster, machine, local, pid
	last   string // the body last written
	lastAt int64  // mono of the last write
	queue  string // the queue part of the last good snapshot
	seenAt int64
	rev    int64
}

func openState(dir, name, machine, local string) (*statePub, error) {
	if dir == "" || dir == "-" {
		return nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &statePub{path: filepath.Join(dir, name),
		header: fmt.Sprintf("fairsem-cluster-status 1\ncluster %s\nmachine %s\nlocal %s\npid %d\n",
			name, machine, local, os.Getpid())}, nil
}

// waiterWord: what a request's waiter word says, for people.
func waiterWord(w string) string {
	switch {
	case w == "":
		return "-"
	case w == shareWord:
		return shareWord
	case strings.HasPrefix(w, "s/"):
		return "pid=" + strings.SplitN(w[2:], "/", 2)[0] + ",submitted"
	}
	return "pid=" + strings.SplitN(w, "/", 2)[0]
}

// stateQueue: the queue part of the file for requests kvs (in cluster
// order) at limit l.
func stateQueue(prefix string, kvs []*mvccpb.KeyValue, l limitSpec) string {
	n := l.nkinds()
	g := grants(kvs, l.limit)
	type tot struct {
		granted, waiting vec
		nreq, nwait      int
	}
	all := tot{granted: make(vec, n), waiting: make(vec, n)}
	byM := map[string]*tot{}
	var reqs bytes.Buffer
	for i, kv := range kvs {
		k := strings.TrimPrefix(string(kv.Key), prefix+"q/")
		m := strings.SplitN(k, "/", 2)[0]
		t := byM[m]
		if t == nil {
			t = &tot{granted: make(vec, n), waiting: make(vec, n)}
			byM[m] = t
		}
		w := parseW(kv.Value, n)
		state := "waiting"
		if g[string(kv.Key)] {
			state = "granted"
			t.granted = t.granted.plus(w)
			all.granted = all.granted.plus(w)
		} else {
			t.waiting = t.waiting.plus(w)
			all.waiting = all.waiting.plus(w)
			t.nwait++
			all.nwait++
		}
		t.nreq++
		all.nreq++
		word := ""
		if f := strings.Fields(string(kv.Value)); len(f) > 1 {
			word = f[1]
		}
		fmt.Fprintf(&reqs, "req %d %s %s %s %d %s\n", i+1, state, m, l.labelled(w),
			kv.CreateRevision, waiterWord(word))
	}
	ms := make([]string, 0, len(byM))
	for m := range byM {
		ms = append(ms, m)
	}
	sort.Strings(ms)
	var b bytes.Buffer
	fmt.Fprintf(&b, "limit %s\ntotals %s %s %d %d\n", l, l.labelled(all.granted),
		l.labelled(all.waiting), all.nreq, all.nwait)
	for _, m := range ms {
		t := byM[m]
		fmt.Fprintf(&b, "mach %s %s %s %d %d\n", m, l.labelled(t.granted), l.labelled(t.waiting),
			t.nreq, t.nwait)
	}
	b.Write(reqs.Bytes())
	return b.String()
}

// publish writes the file if what it says changed, or a second passed;
// r is a new snapshot's requests (nil: keep the last one's).
func (p *statePub) publish(now int64, r *clientv3.GetResponse, prefix string, l limitSpec,
	fenced bool, share vec) {
	if p == nil {
		return
	}
	if r != nil {
		p.queue = stateQueue(prefix, r.Kvs, l)
		p.seenAt = now
		p.rev = r.Header.Revision
	}
	if p.queue == "" {
		return
	}
	state := "serving"
	if fenced {
		state = "fenced"
	}
	sh := "-"
	if share != nil {
		sh = l.labelled(share)
	}
	body := fmt.Sprintf("seen %d %d\nstate %s\nshare %s\n%s", p.seenAt, p.rev, state, sh, p.queue)
	if body == p.last && now-p.lastAt < 1e9 {
		return
	}
	tmp := p.path + ".tmp"
	data := p.header + fmt.Sprintf("mono %d\n", now) + body
	if err := os.WriteFile(tmp, []byte(data), 0o644); err != nil {
		logf("state: %v", err)
		return
	}
	if err := os.Rename(tmp, p.path); err != nil {
		logf("state: %v", err)
		return
	}
	p.last, p.lastAt = body, now
}

func (p *statePub) remove() {
	if p != nil {
		os.Remove(p.path)
	}
}

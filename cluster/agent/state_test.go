// SPDX-License-Identifier: GPL-2.0

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/etcd/clientv3"
	pb "go.etcd.io/etcd/etcdserver/etcdserverpb"
	"go.etcd.io/etcd/mvcc/mvccpb"
)

func kvs(prefix string, reqs ...string) []*mvccpb.KeyValue {
	var out []*mvccpb.KeyValue
	for i, r := range reqs {
		f := strings.SplitN(r, " ", 2)
		out = append(out, &mvccpb.KeyValue{Key: []byte(prefix + "q/" + f[0]), Value: []byte(f[1]),
			CreateRevision: int64(10 + i)})
	}
	return out
}

// The queue as fairsem status --cluster reads it: machines by name, the
// requests in cluster order with what each was made for.
func TestStateQueue(t *testing.T) {
	p := "/fairsem-cluster/db/"
	l, _ := parseLimit("5")
	got := stateQueue(p, kvs(p, "m2/a-1 3 123/123/3/7ffd/3", "m1/b-1 4 s/456/5/7/4",
		"m3/c-1 1 share", "m2/a-2 1 "), l)
	want := `limit 5
totals 3 6 4 3
mach m1 0 4 1 1
mach m2 3 1 2 1
mach m3 0 1 1 1
req 1 granted m2 3 10 pid=123
req 2 waiting m1 4 11 pid=456,submitted
req 3 waiting m3 1 12 share
req 4 waiting m2 1 13 -
`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// A semaphore of kinds writes its counts labelled.
func TestStateQueueKinds(t *testing.T) {
	p := "/fairsem-cluster/gpu/"
	l, _ := parseLimit("cpu=4,gpu=2")
	got := stateQueue(p, kvs(p, "m1/a-1 1,2 9/9/3/7ffd/1,2"), l)
	if !strings.Contains(got, "req 1 granted m1 cpu=1,gpu=2 10 pid=9\n") ||
		!strings.Contains(got, "totals cpu=1,gpu=2 cpu=0,gpu=0 1 0\n") {
		t.Fatalf("got\n%s", got)
	}
}

// The file is replaced whole, says when it was written, and goes when
// the agent stops.
func TestStatePublish(t *testing.T) {
	dir := t.TempDir()
	p, err := openState(dir, "db", "m1", "/run/fairsem/db")
	if err != nil {
		t.Fatal(err)
	}
	l, _ := parseLimit("5")
	r := &clientv3.GetResponse{Header: &pb.ResponseHeader{Revision: 42},
		Kvs: kvs("/fairsem-cluster/db/", "m1/a-1 2 1/1/3/7ffd/2")}
	p.publish(7e9, r, "/fairsem-cluster/db/", l, false, vec{1})
	b, err := os.ReadFile(filepath.Join(dir, "db"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{"fairsem-cluster-status 1\n", "\nmachine m1\n", "\nmono 7000000000\n",
		"\nseen 7000000000 42\n", "\nstate serving\n", "\nshare 1\n", "\nreq 1 granted m1 2 10 pid=1\n"} {
		if !strings.Contains(string(b), line) {
			t.Fatalf("no %q in\n%s", line, b)
		}
	}
	p.publish(8e9, nil, "/fairsem-cluster/db/", l, true, nil)
	b, _ = os.ReadFile(filepath.Join(dir, "db"))
	if !strings.Contains(string(b), "\nstate fenced\n") || !strings.Contains(string(b), "\nseen 7000000000 42\n") {
		t.Fatalf("fenced, the last snapshot kept: got\n%s", b)
	}
	p.remove()
	if _, err := os.Stat(filepath.Join(dir, "db")); !os.IsNotExist(err) {
		t.Fatalf("the file stays after remove: %v", err)
	}
}

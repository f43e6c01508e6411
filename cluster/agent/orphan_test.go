// SPDX-License-Identifier: GPL-2.0

package main

import "testing"

func keys(rs []*request) string {
	s := ""
	for _, r := range rs {
		s += r.key + ";"
	}
	return s
}

// A Put whose answer timed out after etcd made it: the waiter it was for
// keeps it, and so its place ahead of requests made after it.
func TestOrphanKeepsItsWaitersPlace(t *testing.T) {
	orphans := []*request{{key: "b", rev: 11, w: vec{4}, waiter: "w-b"}}
	keep, drop := adoptable(orphans, []waiter{{id: "w-b", count: vec{4}}}, map[string]*request{})
	if keys(keep) != "b;" || len(drop) != 0 {
		t.Fatalf("keep %s drop %s, want keep b;", keys(keep), keys(drop))
	}
}

func TestOrphanOfAServedWaiterGoes(t *testing.T) {
	orphans := []*request{{key: "b", rev: 11, w: vec{4}, waiter: "w-b"}}
	mine := map[string]*request{"w-b": {key: "b2", rev: 14, w: vec{4}, waiter: "w-b"}}
	if keep, drop := adoptable(orphans, []waiter{{id: "w-b", count: vec{4}}}, mine); len(keep) != 0 || keys(drop) != "b;" {
		t.Fatalf("keep %s drop %s, want drop b;", keys(keep), keys(drop))
	}
	if keep, drop := adoptable(orphans, nil, map[string]*request{}); len(keep) != 0 || keys(drop) != "b;" {
		t.Fatalf("waiter gone: keep %s drop %s, want drop b;", keys(keep), keys(drop))
	}
}

func TestOrphanOfAnotherWeightGoes(t *testing.T) {
	orphans := []*request{{key: "b", rev: 11, w: vec{4, 1}, waiter: "w-b"}}
	keep, drop := adoptable(orphans, []waiter{{id: "w-b", count: vec{4, 0}}}, map[string]*request{})
	if len(keep) != 0 || keys(drop) != "b;" {
		t.Fatalf("keep %s drop %s, want drop b;", keys(keep), keys(drop))
	}
}

func TestOrphanShareGoes(t *testing.T) {
	orphans := []*request{{key: "s", rev: 9, w: vec{1}, waiter: shareWord}}
	keep, drop := adoptable(orphans, []waiter{{id: shareWord, count: vec{1}}}, map[string]*request{})
	if len(keep) != 0 || keys(drop) != "s;" {
		t.Fatalf("keep %s drop %s, want drop s;", keys(keep), keys(drop))
	}
}

// Two timed-out Puts for one waiter: it keeps the older, the earlier place.
func TestOrphanTwiceKeepsTheOlder(t *testing.T) {
	orphans := []*request{{key: "b2", rev: 15, w: vec{4}, waiter: "w-b"},
		{key: "b1", rev: 11, w: vec{4}, waiter: "w-b"}}
	keep, drop := adoptable(orphans, []waiter{{id: "w-b", count: vec{4}}}, map[string]*request{})
	if keys(keep) != "b1;" || keys(drop) != "b2;" {
		t.Fatalf("keep %s drop %s, want keep b1; drop b2;", keys(keep), keys(drop))
	}
}

// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"go.etcd.io/etcd/mvcc/mvccpb"
)

func kv(key string, rev int64, w uint64) *mvccpb.KeyValue {
	return &mvccpb.KeyValue{Key: []byte(key), CreateRevision: rev, Value: []byte(fmt.Sprintf("%d w", w))}
}

func TestHeadHoldsBack(t *testing.T) {
	// A 3 granted; B 4 does not fit; C 1 would fit but waits behind B.
	kvs := []*mvccpb.KeyValue{kv("c", 12, 1), kv("a", 10, 3), kv("b", 11, 4)}
	order(kvs)
	if got := string(kvs[0].Key) + string(kvs[1].Key) + string(kvs[2].Key); got != "abc" {
		t.Fatalf("order %s, want abc", got)
	}
	g := grants(kvs, vec{5})
	if !g["a"] || g["b"] || g["c"] {
		t.Fatalf("grants %v, want only a", g)
	}
	// a leaves: b and c fit together.
	g = grants(kvs[1:], vec{5})
	if !g["b"] || !g["c"] {
		t.Fatalf("grants %v, want b and c", g)
	}
}

func TestSameRevisionByKey(t *testing.T) {
	kvs := []*mvccpb.KeyValue{kv("q/m1/x-2", 7, 2), kv("q/m1/x-1", 7, 3)}
	order(kvs)
	g := grants(kvs, vec{3})
	if !g["q/m1/x-1"] || g["q/m1/x-2"] {
		t.Fatalf("grants %v: one transaction's requests go in key order", g)
	}
}

// Random queues: the granted requests are a prefix of the order, add up
// to at most the limit, and stay granted when requests ahead of them
// leave or shrink or new ones join the end.
func TestGrantedPrefix(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 2000; round++ {
		limit := uint64(1 + rng.Intn(10))
		var kvs []*mvccpb.KeyValue
		for i := 0; i < rng.Intn(12); i++ {
			kvs = append(kvs, kv(fmt.Sprintf("k%02d", i), int64(i+1), uint64(1+rng.Intn(5))))
		}
		g := grants(kvs, vec{limit})
		var sum uint64
		open := true
		for _, k := range kvs {
			if g[string(k.Key)] {
				if !open {
					t.Fatalf("round %d: %s granted behind a waiting request", round, k.Key)
				}
				sum += parseW(k.Value, 1)[0]
			} else {
				open = false
			}
		}
		if sum > limit {
			t.Fatalf("round %d: %d granted over limit %d", round, sum, limit)
		}
		// Requests leave or shrink, one joins the end.
		var next []*mvccpb.KeyValue
		for _, k := range kvs {
			switch rng.Intn(3) {
			case 0: // leaves
			case 1:
				w := parseW(k.Value, 1)[0]
				next = append(next, kv(string(k.Key), k.CreateRevision, 1+uint64(rng.Intn(int(w)))))
			default:
				next = append(next, k)
			}
		}
		next = append(next, kv("k99", 100, uint64(1+rng.Intn(5))))
		g2 := grants(next, vec{limit})
		for _, k := range next {
			if g[string(k.Key)] && !g2[string(k.Key)] {
				t.Fatalf("round %d: %s lost its grant", round, k.Key)
			}
		}
	}
}

func kvv(key string, rev int64, w string) *mvccpb.KeyValue {
	return &mvccpb.KeyValue{Key: []byte(key), CreateRevision: rev, Value: []byte(w + " w")}
}

// Kinds: a head that does not fit in one kind holds back a request that
// fits in every kind, behind it.
func TestKindsHeadHoldsBack(t *testing.T) {
	kvs := []*mvccpb.KeyValue{kvv("a", 1, "1,2"), kvv("b", 2, "2,1"), kvv("c", 3, "1,0")}
	g := grants(kvs, vec{4, 2})
	if !g["a"] || g["b"] || g["c"] {
		t.Fatalf("grants %v, want only a (b needs a third gpu)", g)
	}
	g = grants(kvs[1:], vec{4, 2})
	if !g["b"] || !g["c"] {
		t.Fatalf("grants %v, want b and c once a left", g)
	}
}

func TestLimitSpec(t *testing.T) {
	for _, ok := range []string{"5", "cpu=4,gpu=2", "a.b-c_d=0"} {
		l, err := parseLimit(ok)
		if err != nil || l.String() != ok {
			t.Errorf("parseLimit(%q) = %v, %v", ok, l, err)
		}
	}
	for _, bad := range []string{"", "x", "-1", "cpu=1,cpu=2", "cpu=", "=3", "5,6",
		"a=1,b=1,c=1,d=1,e=1,f=1,g=1,h=1,i=1", "sixteen-bytes-xx=1", "n=4611686018427387905"} {
		if _, err := parseLimit(bad); err == nil || !strings.Contains(err.Error(), "EINVAL") {
			t.Errorf("parseLimit(%q): %v, want EINVAL", bad, err)
		}
	}
	a, _ := parseLimit("cpu=4,gpu=2")
	b, _ := parseLimit("cpu=1,gpu=9")
	c, _ := parseLimit("gpu=2,cpu=4")
	d, _ := parseLimit("6")
	if !a.sameKinds(b) || a.sameKinds(c) || a.sameKinds(d) {
		t.Fatal("sameKinds: the labels, in order, count")
	}
}

// A request whose weight is not of the semaphore's kinds holds back
// everything behind it rather than letting anything past.
func TestForeignWeightHoldsBack(t *testing.T) {
	kvs := []*mvccpb.KeyValue{kvv("a", 1, "1,1"), kvv("b", 2, "1")}
	if g := grants(kvs, vec{5}); g["a"] || g["b"] {
		t.Fatalf("grants %v, want none", g)
	}
}

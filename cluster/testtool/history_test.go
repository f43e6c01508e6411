// SPDX-License-Identifier: GPL-2.0

package main

import (
	"strings"
	"testing"
)

const pfx = "/fairsem-cluster/db/"

// A history of two machines on a limit of 5: m1's request a (3) granted,
// m2's b (4) waits behind it, a leaves, b is granted.  Lines are
// "MONO REV CAP EVENT [KEY] limit=L snap=S"; events "MONO REV PUT|DELETE
// KEY CREATE VALUE".  From its snapshot of revision 4 on, m1 yields to b:
// its local limit is 0, below the 3 its program holds.
const goodEvents = `10 2 PUT /fairsem-cluster/db/limit 2 5
20 3 PUT /fairsem-cluster/db/q/m1/x-1 3 3 w
30 4 PUT /fairsem-cluster/db/q/m2/y-1 4 4 w
60 5 DELETE /fairsem-cluster/db/q/m1/x-1 0 
70 6 PUT /fairsem-cluster/db/q/m2/y-1 4 4 w
90 7 DELETE /fairsem-cluster/db/q/m2/y-1 0 
`

const goodM1 = `15 2 0 remove limit=0 snap=2
21 3 0 enqueue /fairsem-cluster/db/q/m1/x-1 limit=0 snap=2
25 3 3 add /fairsem-cluster/db/q/m1/x-1 limit=3 snap=3
40 4 3 yield limit=0 snap=4
50 4 0 tick limit=0 snap=4
55 5 0 delete /fairsem-cluster/db/q/m1/x-1 limit=0 snap=4
`

const goodM2 = `31 4 0 enqueue /fairsem-cluster/db/q/m2/y-1 limit=0 snap=3
62 5 4 add /fairsem-cluster/db/q/m2/y-1 limit=4 snap=5
80 6 4 tick limit=4 snap=6
85 6 0 remove limit=0 snap=6
91 7 0 delete /fairsem-cluster/db/q/m2/y-1 limit=0 snap=6
`

// judged: every line given limit=CAP snap=REV, for histories of one
// machine, where no other machine's request waits.
func judged(h string) string {
	var out []string
	for _, l := range strings.Split(strings.TrimSuffix(h, "\n"), "\n") {
		f := strings.Fields(l)
		out = append(out, l+" limit="+f[2]+" snap="+f[1])
	}
	return strings.Join(out, "\n") + "\n"
}

func run(t *testing.T, events string, agents map[string]string) *verdict {
	t.Helper()
	evs, err := parseEvents(strings.NewReader(events))
	if err != nil {
		t.Fatal(err)
	}
	recs := map[string][]record{}
	for m, h := range agents {
		r, err := parseRecords(strings.NewReader(h))
		if err != nil {
			t.Fatal(err)
		}
		recs[m] = r
	}
	return runShare(t, evs, recs, nil)
}

func runShare(t *testing.T, evs []event, recs map[string][]record, share cvec) *verdict {
	t.Helper()
	return check(evs, pfx, recs, share)
}

func TestHistoryGood(t *testing.T) {
	v := run(t, goodEvents, map[string]string{"m1": goodM1, "m2": goodM2})
	if len(v.violations) != 0 {
		t.Fatalf("violations in a good history: %q", v.violations)
	}
	if v.grants != 2 || v.records != 11 {
		t.Fatalf("%d grants, %d lines; want 2, 11", v.grants, v.records)
	}
}

// The mutant that grants what etcd did not: m2 adds b while a holds.
func TestHistoryAddNotGranted(t *testing.T) {
	m2 := strings.Replace(goodM2, "62 5 4 add", "33 4 4 add", 1)
	v := run(t, goodEvents, map[string]string{"m1": goodM1, "m2": m2})
	if len(v.violations) == 0 || !strings.Contains(v.violations[0], "not granted") {
		t.Fatalf("violations %q, want an add not granted", v.violations)
	}
}

// The mutant that keeps granting through a partition: m1's lease expires
// (etcd deletes a at revision 5, received at 60) while m1 can still hold
// 3, and m1 says so at 65: after the expiry, by the recorder's clock.
func TestHistoryHeldPastExpiry(t *testing.T) {
	m1 := strings.Replace(goodM1, "50 4 0 tick limit=0 snap=4\n55 5 0 delete /fairsem-cluster/db/q/m1/x-1 limit=0 snap=4\n",
		"65 4 3 tick limit=0 snap=4\n95 7 0 remove limit=0 snap=4\n", 1)
	v := run(t, goodEvents, map[string]string{"m1": m1, "m2": goodM2})
	if len(v.violations) == 0 || !strings.Contains(v.violations[0], "m1 line 5: can hold 3") {
		t.Fatalf("violations %q, want m1 holding past its lease", v.violations)
	}
}

// The same line before the expiry was received is no violation: the
// checker orders a line after an event only when it surely came after.
func TestHistoryHeldBeforeExpiryReceived(t *testing.T) {
	m1 := strings.Replace(goodM1, "50 4 0 tick limit=0 snap=4\n55 5 0 delete /fairsem-cluster/db/q/m1/x-1 limit=0 snap=4\n",
		"58 4 3 tick limit=0 snap=4\n59 4 0 fence limit=0 snap=4\n", 1)
	v := run(t, goodEvents, map[string]string{"m1": m1, "m2": goodM2})
	if len(v.violations) != 0 {
		t.Fatalf("violations %q, want none", v.violations)
	}
}

// The mutant that forgets to give back: a request left in etcd, and a
// machine that can still hold permits at the end.
func TestHistoryNotGivenBack(t *testing.T) {
	ev := strings.Replace(goodEvents, "90 7 DELETE /fairsem-cluster/db/q/m2/y-1 0 \n", "", 1)
	m2 := strings.Replace(goodM2, "85 6 0 remove limit=0 snap=6\n91 7 0 delete /fairsem-cluster/db/q/m2/y-1 limit=0 snap=6\n",
		"85 6 4 tick limit=4 snap=6\n", 1)
	v := run(t, ev, map[string]string{"m1": goodM1, "m2": m2})
	if len(v.violations) != 2 || !strings.Contains(v.violations[0], "requests left") ||
		!strings.Contains(v.violations[1], "m2: at the end") {
		t.Fatalf("violations %q, want a key left and m2 still holding", v.violations)
	}
}

// A lowered limit revokes nothing (exception b), and grants nothing new
// until what is granted fits: c (1) waits while a (3) and b (2) hold 5
// over a limit of 4, and is granted once b leaves.
func TestHistoryLoweredLimit(t *testing.T) {
	ev := `1 2 PUT /fairsem-cluster/db/limit 2 5
2 3 PUT /fairsem-cluster/db/q/m1/a-1 3 3 w
3 4 PUT /fairsem-cluster/db/q/m2/b-1 4 2 w
4 5 PUT /fairsem-cluster/db/limit 2 4
5 6 PUT /fairsem-cluster/db/q/m1/c-1 6 1 w
6 7 DELETE /fairsem-cluster/db/q/m2/b-1 0 
7 8 DELETE /fairsem-cluster/db/q/m1/a-1 0 
8 9 DELETE /fairsem-cluster/db/q/m1/c-1 0 
`
	m1 := "2 6 3 tick limit=3 snap=6\n3 6 4 add /fairsem-cluster/db/q/m1/c-1 limit=4 snap=6\n9 9 0 remove limit=0 snap=8\n"
	v := run(t, ev, map[string]string{"m1": m1})
	if len(v.violations) == 0 || !strings.Contains(v.violations[0], "c-1, not granted at revision 6") {
		t.Fatalf("violations %q, want c's add at 6 refused", v.violations)
	}
	m1 = "2 6 3 tick limit=3 snap=6\n7 7 4 add /fairsem-cluster/db/q/m1/c-1 limit=4 snap=7\n9 9 0 remove limit=0 snap=8\n"
	if v = run(t, ev, map[string]string{"m1": m1}); len(v.violations) != 0 {
		t.Fatalf("violations %q, want none", v.violations)
	}
}

// Kinds: b (cpu 2, gpu 1) waits for gpu behind a (1, 2) though c (1, 0)
// behind it would fit; an add of c before a leaves is refused.
func TestHistoryKinds(t *testing.T) {
	ev := `1 2 PUT /fairsem-cluster/db/limit 2 cpu=4,gpu=2
2 3 PUT /fairsem-cluster/db/q/m1/a-1 3 1,2 w
3 4 PUT /fairsem-cluster/db/q/m2/b-1 4 2,1 w
4 5 PUT /fairsem-cluster/db/q/m1/c-1 5 1,0 w
5 6 DELETE /fairsem-cluster/db/q/m1/a-1 0 
6 7 DELETE /fairsem-cluster/db/q/m2/b-1 0 
7 8 DELETE /fairsem-cluster/db/q/m1/c-1 0 
`
	m1 := "2 5 2,2 add /fairsem-cluster/db/q/m1/c-1 limit=2,2 snap=3\n9 8 0,0 remove limit=0,0 snap=8\n"
	v := run(t, ev, map[string]string{"m1": m1})
	if len(v.violations) != 2 || !strings.Contains(v.violations[0], "not granted") {
		t.Fatalf("violations %q, want c's add refused", v.violations)
	}
}

// Share mode (-share 1) on a limit of 2: m1 asks for a share of 1 (s-1),
// ADDs it once granted, a local program takes it without a round trip,
// and m1 asks for the share again (s-2); then it gives both back.
const shareEvents = `10 2 PUT /fairsem-cluster/db/limit 2 2
20 3 PUT /fairsem-cluster/db/q/m1/s-1 3 1 share
60 4 PUT /fairsem-cluster/db/q/m1/s-2 4 1 share
90 5 DELETE /fairsem-cluster/db/q/m1/s-2 0 
95 6 DELETE /fairsem-cluster/db/q/m1/s-1 0 
`

const shareM1 = `15 2 0 remove
21 3 0 share /fairsem-cluster/db/q/m1/s-1 taken=0
25 3 1 add /fairsem-cluster/db/q/m1/s-1
40 3 1 tick
61 4 1 share /fairsem-cluster/db/q/m1/s-2 taken=1
65 4 2 add /fairsem-cluster/db/q/m1/s-2
85 4 0 remove
91 5 0 delete /fairsem-cluster/db/q/m1/s-2
96 6 0 delete /fairsem-cluster/db/q/m1/s-1
`

func runShareText(t *testing.T, events, m1 string, share cvec) *verdict {
	t.Helper()
	evs, err := parseEvents(strings.NewReader(events))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := parseRecords(strings.NewReader(judged(m1)))
	if err != nil {
		t.Fatal(err)
	}
	return runShare(t, evs, map[string][]record{"m1": recs}, share)
}

func TestHistoryShareGood(t *testing.T) {
	if v := runShareText(t, shareEvents, shareM1, cvec{1}); len(v.violations) != 0 {
		t.Fatalf("violations in a good share history: %q", v.violations)
	}
}

// The same history judged as exact mode's: a share is a violation.
func TestHistoryShareInExactMode(t *testing.T) {
	v := runShareText(t, shareEvents, shareM1, nil)
	if len(v.violations) != 2 || !strings.Contains(v.violations[0], "in exact mode") {
		t.Fatalf("violations %q, want both shares refused", v.violations)
	}
}

// The mutant that asks for the whole share again while its first share
// is still free (share-greedy): free 1 + asked 1 over the share 1.
func TestHistoryShareGreedy(t *testing.T) {
	m1 := strings.Replace(shareM1, "40 3 1 tick\n61 4 1 share /fairsem-cluster/db/q/m1/s-2 taken=1",
		"40 3 1 tick\n61 4 1 share /fairsem-cluster/db/q/m1/s-2 taken=0", 1)
	v := runShareText(t, shareEvents, m1, cvec{1})
	if len(v.violations) != 1 || !strings.Contains(v.violations[0], "m1 line 5: free and asked-for share 2 over the share 1") {
		t.Fatalf("violations %q, want the second share refused", v.violations)
	}
}

// A share asked for twice before either is granted: both wait, 2 over 1.
func TestHistoryShareAskedTwice(t *testing.T) {
	ev := strings.Replace(shareEvents, "60 4 PUT", "22 4 PUT", 1)
	m1 := "15 2 0 remove\n21 3 0 share /fairsem-cluster/db/q/m1/s-1 taken=0\n" +
		"23 4 0 share /fairsem-cluster/db/q/m1/s-2 taken=0\n91 5 0 delete /fairsem-cluster/db/q/m1/s-2\n"
	v := runShareText(t, ev, m1, cvec{1})
	if len(v.violations) == 0 || !strings.Contains(v.violations[0], "m1 line 3: free and asked-for share 2") {
		t.Fatalf("violations %q, want the second share refused", v.violations)
	}
}

// Share mode does not hide the no-fence mutant: m1's lease expires (both
// shares deleted at 5 and 6) while m1 can still hold 2.
func TestHistoryShareHeldPastExpiry(t *testing.T) {
	m1 := strings.Replace(shareM1, "85 4 0 remove\n91 5 0 delete /fairsem-cluster/db/q/m1/s-2\n"+
		"96 6 0 delete /fairsem-cluster/db/q/m1/s-1\n", "97 4 2 tick\n", 1)
	v := runShareText(t, shareEvents, m1, cvec{1})
	if len(v.violations) != 2 || !strings.Contains(v.violations[0], "m1 line 7: can hold 2") {
		t.Fatalf("violations %q, want m1 holding past its lease", v.violations)
	}
}

// The old order's gap (rule 6): m1 keeps its local limit at the 3 its
// program holds while m2's b waits, so that a release on m1 would go to
// m1's own next waiter ahead of b.
func TestHistoryLocalFirst(t *testing.T) {
	m1 := strings.Replace(goodM1, "40 4 3 yield limit=0 snap=4\n", "40 4 3 tick limit=3 snap=4\n", 1)
	v := run(t, goodEvents, map[string]string{"m1": m1, "m2": goodM2})
	if len(v.violations) != 1 || !strings.Contains(v.violations[0],
		"m1 line 4: local limit 3 while m2's request waits at revision 4") {
		t.Fatalf("violations %q, want m1's limit while b waits", v.violations)
	}
}

// The checker judges a line by the agent's snapshot (snap=), not by its
// own writes' revisions: m1's line at revision 5 (its own delete) comes
// from a snapshot of revision 3, before b was made.
func TestHistoryYieldBySnapshot(t *testing.T) {
	m1 := strings.Replace(goodM1, "40 4 3 yield limit=0 snap=4\n", "40 4 3 tick limit=3 snap=3\n", 1)
	if v := run(t, goodEvents, map[string]string{"m1": m1, "m2": goodM2}); len(v.violations) != 0 {
		t.Fatalf("violations %q, want none", v.violations)
	}
}

// A line that does not say its local limit and snapshot cannot be judged.
func TestHistoryUnjudged(t *testing.T) {
	m1 := strings.Replace(goodM1, "50 4 0 tick limit=0 snap=4\n", "50 4 0 tick\n", 1)
	v := run(t, goodEvents, map[string]string{"m1": m1, "m2": goodM2})
	if len(v.violations) != 1 || !strings.Contains(v.violations[0], "m1 line 5: tick without limit=") {
		t.Fatalf("violations %q, want line 5 unjudged", v.violations)
	}
}

// Limit 5: m1's a (3) granted, m1's c (3) waits, then m2's b (3) behind
// it.  m1 yields to b, so a's release goes back; when c is granted (a
// left), m1 ADDs it over what its programs hold (base) and takes the
// limit back to 0 at once; b waits for c to leave.  m2 yields to c.
const yieldEvents = `10 2 PUT /fairsem-cluster/db/limit 2 5
20 3 PUT /fairsem-cluster/db/q/m1/a-1 3 3 w
30 4 PUT /fairsem-cluster/db/q/m1/c-1 4 3 w
40 5 PUT /fairsem-cluster/db/q/m2/b-1 5 3 w
60 6 DELETE /fairsem-cluster/db/q/m1/a-1 0 
70 7 DELETE /fairsem-cluster/db/q/m1/c-1 0 
90 8 DELETE /fairsem-cluster/db/q/m2/b-1 0 
`

const yieldM1 = `15 2 0 remove limit=0 snap=2
21 3 0 enqueue /fairsem-cluster/db/q/m1/a-1 limit=0 snap=2
25 3 3 add /fairsem-cluster/db/q/m1/a-1 limit=3 snap=3
31 4 3 enqueue /fairsem-cluster/db/q/m1/c-1 limit=3 snap=3
45 5 3 yield limit=0 snap=5
55 5 0 tick limit=0 snap=5
61 6 0 delete /fairsem-cluster/db/q/m1/a-1 limit=0 snap=5
62 6 3 add /fairsem-cluster/db/q/m1/c-1 base=0 limit=3 snap=6
63 6 3 remove limit=0 snap=6
69 6 0 tick limit=0 snap=6
71 7 0 delete /fairsem-cluster/db/q/m1/c-1 limit=0 snap=6
`

const yieldM2 = `41 5 0 enqueue /fairsem-cluster/db/q/m2/b-1 limit=0 snap=4
75 7 3 add /fairsem-cluster/db/q/m2/b-1 limit=3 snap=7
85 7 0 remove limit=0 snap=7
91 8 0 delete /fairsem-cluster/db/q/m2/b-1 limit=0 snap=7
`

func TestHistoryYieldGood(t *testing.T) {
	v := run(t, yieldEvents, map[string]string{"m1": yieldM1, "m2": yieldM2})
	if len(v.violations) != 0 {
		t.Fatalf("violations in a good history: %q", v.violations)
	}
}

// An ADD while yielding that leaves more room than the grant: its own
// queue could take a release.  And one that does not say its base.
func TestHistoryYieldAddOverBase(t *testing.T) {
	m1 := strings.Replace(yieldM1, "base=0 limit=3 snap=6", "base=0 limit=5 snap=6", 1)
	v := run(t, yieldEvents, map[string]string{"m1": m1, "m2": yieldM2})
	if len(v.violations) == 0 || !strings.Contains(v.violations[0], "m1 line 8: local limit 5 over base 0 and its grants 3") {
		t.Fatalf("violations %q, want m1's ADD over its grant", v.violations)
	}
	m1 = strings.Replace(yieldM1, "base=0 limit=3 snap=6", "limit=3 snap=6", 1)
	v = run(t, yieldEvents, map[string]string{"m1": m1, "m2": yieldM2})
	if len(v.violations) != 1 || !strings.Contains(v.violations[0], "m1 line 8: local limit 3 while m2's request waits") {
		t.Fatalf("violations %q, want m1's ADD without base refused", v.violations)
	}
}

// One ADD for two requests: both are named, both must be granted.
func TestHistoryAddOfTwo(t *testing.T) {
	ev := `10 2 PUT /fairsem-cluster/db/limit 2 5
20 3 PUT /fairsem-cluster/db/q/m1/a-1 3 2 w
20 3 PUT /fairsem-cluster/db/q/m1/a-2 3 2 w
30 4 PUT /fairsem-cluster/db/q/m1/a-3 3 2 w
60 5 DELETE /fairsem-cluster/db/q/m1/a-1 0 
60 6 DELETE /fairsem-cluster/db/q/m1/a-2 0 
60 7 DELETE /fairsem-cluster/db/q/m1/a-3 0 
`
	m1 := "25 4 4 add /fairsem-cluster/db/q/m1/a-1,/fairsem-cluster/db/q/m1/a-2\n61 7 0 remove\n"
	if v := run(t, ev, map[string]string{"m1": judged(m1)}); len(v.violations) != 0 {
		t.Fatalf("violations %q, want none", v.violations)
	}
	m1 = "25 4 6 add /fairsem-cluster/db/q/m1/a-1,/fairsem-cluster/db/q/m1/a-3\n61 7 0 remove\n"
	v := run(t, ev, map[string]string{"m1": judged(m1)})
	if len(v.violations) == 0 || !strings.Contains(v.violations[0], "add /fairsem-cluster/db/q/m1/a-3, not granted") {
		t.Fatalf("violations %q, want a-3's add refused", v.violations)
	}
}

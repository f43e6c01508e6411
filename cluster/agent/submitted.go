// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// Submitted requests: FAIRSEM_IOC_SUBMIT queues a request on a handle and
// returns its id, so no task is blocked in it, and a handle may have any
// number queued.  The handle's fdinfo says how many
// ("fairsem-submitted:\tqueued=N granted=M") but not their counts: those
// come from the fairsem_acquire tracepoint, which reports the semaphore,
// the first kind's count and, for a SUBMIT that queued, the request's id
// (ret > 0) as the call returns, in the task that made it.  The agent
// reads it from a tracefs instance of its own.
//
// A handle's queued requests are kept oldest first: grants go in queue
// order, so when fdinfo counts fewer, the oldest went.  A request
// withdrawn (FAIRSEM_IOC_WITHDRAW) is not named anywhere: when it is not
// its handle's oldest, the agent takes the oldest for it, and carries the
// withdrawn one's count for the one that still waits (the contract's
// "What is not carried").
type subTracker struct {
	semID uint64
	mu    sync.Mutex
	// requests reported for a process, not matched to a handle yet;
	// each with how many scans it went unmatched
	pending map[int][]pendingSub
	known   map[string][]waiter // "pid/fd": its queued requests, oldest first
}

type pendingSub struct {
	id, count uint64
	missed    int
}

const traceDir = "/sys/kernel/tracing"

// startSubmitted sets up the tracefs instance; nil (and the reason) when
// there is no tracefs to use.
func startSubmitted(semID uint64) (*subTracker, error) {
	if _, err := os.Stat(traceDir + "/instances"); err != nil {
		if err := syscall.Mount("tracefs", traceDir, "tracefs", 0, ""); err != nil {
			return nil, fmt.Errorf("tracefs: %v", err)
		}
	}
	inst := fmt.Sprintf("%s/instances/fairsem-cluster-%d", traceDir, semID)
	if err := os.Mkdir(inst, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, err
	}
	ev := inst + "/events/fairsem/fairsem_acquire/"
	// Only a SUBMIT that queued returns more than 0.
	filter := fmt.Sprintf("id == %d && ret > 0", semID)
	if err := os.WriteFile(ev+"filter", []byte(filter), 0); err != nil {
		return nil, fmt.Errorf("%sfilter: %v", ev, err)
	}
	if err := os.WriteFile(ev+"enable", []byte("1"), 0); err != nil {
		return nil, fmt.Errorf("%senable: %v", ev, err)
	}
	f, err := os.Open(inst + "/trace_pipe")
	if err != nil {
		return nil, err
	}
	t := &subTracker{semID: semID, pending: map[int][]pendingSub{}, known: map[string][]waiter{}}
	go t.read(f)
	return t, nil
}

// "          prog-1234    [001] .....  12.345: fairsem_acquire: sem=5 count=2 flags=0 ret=7"
var traceLine = regexp.MustCompile(`-(\d+)\s+\[\d+\].*fairsem_acquire: sem=(\d+) count=(\d+) \S+ ret=(\d+)`)

// tgid: the process of task tid (0 when it is gone).
func tgid(tid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", tid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "Tgid:") {
			n, _ := strconv.Atoi(strings.TrimSpace(line[5:]))
			return n
		}
	}
	return 0
}

func (t *subTracker) read(f *os.File) {
	s := bufio.NewScanner(f)
	for s.Scan() {
		m := traceLine.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		tid, _ := strconv.Atoi(m[1])
		sem, _ := strconv.ParseUint(m[2], 10, 64)
		c, _ := strconv.ParseUint(m[3], 10, 64)
		id, _ := strconv.ParseUint(m[4], 10, 64)
		if sem != t.semID || c == 0 || id == 0 {
			continue
		}
		pid := tgid(tid)
		if pid == 0 {
			continue
		}
		t.mu.Lock()
		t.pending[pid] = append(t.pending[pid], pendingSub{id: id, count: c})
		t.mu.Unlock()
	}
	logf("trace_pipe: %v", s.Err())
}

// submittedFDs: the fds of process pid on semID, each with how many
// submitted requests it has queued.
func submittedFDs(pid int, semID uint64) map[int]int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fdinfo", pid))
	if err != nil {
		return nil
	}
	out := map[int]int{}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
		if err != nil {
			continue
		}
		i := bytes.Index(b, []byte("fairsem-submitted:\tqueued="))
		if i < 0 {
			continue
		}
		var q int
		if _, err := fmt.Sscanf(string(b[i+len("fairsem-submitted:\tqueued="):]), "%d", &q); err != nil {
			continue
		}
		if id, ok := fdinfoID(pid, uint64(fd)); ok && id == semID {
			out[fd] = q
		}
	}
	return out
}

// scan: the submitted requests queued now, one waiter each.  A handle
// that counts more queued requests than known takes the oldest requests
// reported for its process; one that counts fewer lost its oldest.  A
// report that no handle took in 3 scans was a request granted or
// withdrawn before it was seen.
func (t *subTracker) scan() []waiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	pids := map[int]bool{}
	for pid := range t.pending {
		pids[pid] = true
	}
	for key := range t.known {
		pid, _ := strconv.Atoi(strings.SplitN(key, "/", 2)[0])
		pids[pid] = true
	}
	var out []waiter
	for pid := range pids {
		fds := submittedFDs(pid, t.semID)
		order := make([]int, 0, len(fds))
		for fd := range fds {
			order = append(order, fd)
		}
		sort.Ints(order)
		for _, fd := range order {
			n := fds[fd]
			key := fmt.Sprintf("%d/%d", pid, fd)
			have := t.known[key]
			if len(have) > n {
				have = have[len(have)-n:]
			}
			for p := t.pending[pid]; len(have) < n && len(p) > 0; p = t.pending[pid] {
				have = append(have, waiter{id: fmt.Sprintf("s/%d/%d/%d/%d", pid, fd, p[0].id, p[0].count),
					pid: pid, tid: pid, count: vec{p[0].count}})
				t.pending[pid] = p[1:]
			}
			if len(have) == 0 {
				delete(t.known, key)
				continue
			}
			t.known[key] = have
			out = append(out, have...)
		}
		for key := range t.known {
			var kpid, kfd int
			fmt.Sscanf(key, "%d/%d", &kpid, &kfd)
			if _, ok := fds[kfd]; kpid == pid && !ok {
				delete(t.known, key)
			}
		}
		var keep []pendingSub
		for _, p := range t.pending[pid] {
			if p.missed++; p.missed < 3 {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			delete(t.pending, pid)
		} else {
			t.pending[pid] = keep
		}
	}
	return out
}

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
	"sync"
	"syscall"
)

// Asynchronous waiters: a FAIRSEM_IOC_ACQUIRE with FAIRSEM_ACQ_ASYNC that
// queued its request has returned, so no task is blocked in it.  Its
// handle says so in fdinfo ("fairsem-async: queued") but not its count:
// that comes from the fairsem_acquire tracepoint, which reports the
// semaphore, the count and EINPROGRESS as the call returns, in the task
// that made it.  The agent reads it from a tracefs instance of its own.
type asyncTracker struct {
	semID uint64
	mu    sync.Mutex
	// counts reported for a task, not matched to a handle yet; each with
	// how many scans it went unmatched
	pending map[int][]pendingCount
	known   map[string]waiter // "tid/fd": a queued handle and its count
	seq     int
}

type pendingCount struct {
	count  uint64
	missed int
}

const traceDir = "/sys/kernel/tracing"

// startAsync sets up the tracefs instance; nil (and the reason) when there
// is no tracefs to use.
func startAsync(semID uint64) (*asyncTracker, error) {
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
	filter := fmt.Sprintf("id == %d && ret == %d", semID, -int(syscall.EINPROGRESS))
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
	t := &asyncTracker{semID: semID, pending: map[int][]pendingCount{}, known: map[string]waiter{}}
	go t.read(f)
	return t, nil
}

// "          prog-1234    [001] .....  12.345: fairsem_acquire: sem=5 count=2 flags=0x2 ret=-115"
var traceLine = regexp.MustCompile(`-(\d+)\s+\[\d+\].*fairsem_acquire: sem=(\d+) count=(\d+) .*ret=-115`)

func (t *asyncTracker) read(f *os.File) {
	s := bufio.NewScanner(f)
	for s.Scan() {
		m := traceLine.FindStringSubmatch(s.Text())
		if m == nil {
			continue
		}
		tid, _ := strconv.Atoi(m[1])
		sem, _ := strconv.ParseUint(m[2], 10, 64)
		c, _ := strconv.ParseUint(m[3], 10, 64)
		if sem != t.semID || c == 0 {
			continue
		}
		t.mu.Lock()
		t.pending[tid] = append(t.pending[tid], pendingCount{count: c})
		t.mu.Unlock()
	}
	logf("trace_pipe: %v", s.Err())
}

// queuedFDs: the fds of task tid's process whose handle on semID has its
// asynchronous request queued, in fd order.
func queuedFDs(tid int, semID uint64) []int {
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fdinfo", tid))
	if err != nil {
		return nil
	}
	var fds []int
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", tid, fd))
		if err != nil || !bytes.Contains(b, []byte("fairsem-async:\tqueued")) {
			continue
		}
		if id, ok := fdinfoID(tid, uint64(fd)); ok && id == semID {
			fds = append(fds, fd)
		}
	}
	sort.Ints(fds)
	return fds
}

// scan: the asynchronous waiters now.  A handle newly queued takes the
// oldest count reported for its task; a count that no handle took in 3
// scans was a request cancelled (or granted) before it was seen.
func (t *asyncTracker) scan() []waiter {
	t.mu.Lock()
	defer t.mu.Unlock()
	tids := map[int]bool{}
	for tid := range t.pending {
		tids[tid] = true
	}
	for _, w := range t.known {
		tids[w.tid] = true
	}
	var out []waiter
	for tid := range tids {
		queued := map[int]bool{}
		for _, fd := range queuedFDs(tid, t.semID) {
			queued[fd] = true
			key := fmt.Sprintf("%d/%d", tid, fd)
			if w, ok := t.known[key]; ok {
				out = append(out, w)
				continue
			}
			p := t.pending[tid]
			if len(p) == 0 {
				continue
			}
			t.seq++
			w := waiter{id: fmt.Sprintf("a/%d/%d/%d/%d", tid, fd, p[0].count, t.seq),
				pid: tid, tid: tid, count: vec{p[0].count}}
			t.pending[tid] = p[1:]
			t.known[key] = w
			out = append(out, w)
		}
		for key, w := range t.known {
			var fd int
			fmt.Sscanf(key[len(strconv.Itoa(w.tid))+1:], "%d", &fd)
			if w.tid == tid && !queued[fd] {
				delete(t.known, key)
			}
		}
		var keep []pendingCount
		for _, p := range t.pending[tid] {
			if p.missed++; p.missed < 3 {
				keep = append(keep, p)
			}
		}
		if len(keep) == 0 {
			delete(t.pending, tid)
		} else {
			t.pending[tid] = keep
		}
	}
	return out
}

// SPDX-License-Identifier: GPL-2.0

package main

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"
)

// The agent's history (-history FILE), for the checker: one line
//
//	MONO REV CAP EVENT [KEY[,KEY...]] [taken=T] [base=B] limit=L snap=S
//
// whenever what local programs can hold changes, whenever the agent
// writes to etcd, and at every tick while they can hold anything.  MONO
// is CLOCK_MONOTONIC, read before CAP: a line is then ordered after every
// etcd event received before MONO, never after one that came later.  L is
// the local limit, read with CAP; S the revision of the snapshot the
// agent decided on whether to yield (a request of another machine made
// for a waiter waits: the limit stays 0).  An ADD names every request it
// is for; B, on an ADD while yielding, is max(limit, taken) before it.
type history struct {
	mu   sync.Mutex
	f    *os.File
	rev  int64 // the newest etcd revision the agent knows
	last string
}

func monotonic() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 1 /* CLOCK_MONOTONIC */, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func openHistory(path string) (*history, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	return &history{f: f}, nil
}

// seen: the agent knows revision rev.
func (h *history) seen(rev int64) bool {
	if h == nil {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if rev <= h.rev {
		return false
	}
	h.rev = rev
	return true
}

// record writes one line; t is MONO, taken before cap was read; extra,
// if any, follows the key ("taken=T" on share lines).  A tick whose line
// would say what the previous line said is left out unless local
// programs can hold something.
func (h *history) record(t int64, cap vec, event, key, extra string) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	state := fmt.Sprintf("%d %s", h.rev, cap)
	if event == "tick" && state == h.last && cap.zero() {
		return
	}
	h.last = state
	line := fmt.Sprintf("%d %d %s %s", t, h.rev, cap, event)
	for _, f := range []string{key, extra} {
		if f != "" {
			line += " " + f
		}
	}
	fmt.Fprintln(h.f, line)
}

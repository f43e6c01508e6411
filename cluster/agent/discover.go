// SPDX-License-Identifier: GPL-2.0

package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// FAIRSEM_IOC_ACQUIRE: _IOW(0xFA, 1, struct fairsem_acquire), 80 bytes:
// deadline_ns at 0, flags at 8, nkinds at 12, count[8] at 16.  Every
// acquire is a vector, of one count on a semaphore of one kind.
const (
	iocAcquire     = 0x4050fa01
	acquireSize    = 80
	acquireNkinds  = 12 // how many counts are used
	acquireCount   = 16 // the counts, FAIRSEM_MAX_KINDS of them
	acquireMaxKind = 8  // FAIRSEM_MAX_KINDS
)

// A local waiter: a task blocked in FAIRSEM_IOC_ACQUIRE on a handle of the
// local semaphore.  The kernel does not list its queue, so the agent finds
// the waiters as a debugger would: /proc/PID/task/TID/syscall names the
// ioctl, its fd and its argument, /proc/PID/fdinfo/FD the semaphore, and
// the vector at the argument (struct fairsem_acquire's counts) the weight,
// read from /proc/PID/mem.
type waiter struct {
	id    string // pid/tid/fd/arg/counts: the same while it waits
	pid   int
	tid   int
	count vec
}

func readInt(s string, base int) (uint64, bool) {
	s = strings.TrimPrefix(s, "0x")
	v, err := strconv.ParseUint(s, base, 64)
	return v, err == nil
}

func fdinfoID(pid int, fd uint64) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/fdinfo/%d", pid, fd))
	if err != nil {
		return 0, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if p := []byte("fairsem-id:"); bytes.HasPrefix(line, p) {
			return readInt(string(bytes.TrimSpace(line[len(p):])), 10)
		}
	}
	return 0, false
}

// readCount: the counts of the request at addr, n kinds; ok false when
// it cannot be read, is not a vector of n (the kernel refuses it at once:
// it never waits) or asks for nothing.
func readCount(pid int, addr uint64, n int) (vec, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	if n < 1 || n > acquireMaxKind {
		return nil, false
	}
	// What the kernel reads, no more: the counts past nkinds may not be
	// there at all.
	var b [acquireSize]byte
	if _, err := f.ReadAt(b[:acquireCount+8*n], int64(addr)); err != nil {
		return nil, false
	}
	if nk := binary.LittleEndian.Uint32(b[acquireNkinds:]); int(nk) != n {
		return nil, false
	}
	v := make(vec, n)
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[acquireCount+8*i:])
	}
	return v, !v.zero()
}

// discover lists the tasks blocked in an acquire on semaphore semID, in
// the order of their (pid, tid): the kernel's own arrival order is not
// visible, so waiters first seen in one scan are ordered by pid, which
// grows with time until it wraps.
func discover(semID uint64, n int) []waiter {
	var out []waiter
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/syscall", pid, tid))
			if err != nil {
				continue
			}
			f := strings.Fields(string(b))
			if len(f) < 4 || f[0] != strconv.Itoa(syscall.SYS_IOCTL) {
				continue
			}
			cmd, ok1 := readInt(f[2], 16)
			fd, ok2 := readInt(f[1], 16)
			arg, ok3 := readInt(f[3], 16)
			if !ok1 || !ok2 || !ok3 || cmd != iocAcquire {
				continue
			}
			if id, ok := fdinfoID(pid, fd); !ok || id != semID {
				continue
			}
			c, ok := readCount(pid, arg, n)
			if !ok {
				continue
			}
			out = append(out, waiter{
				id:  fmt.Sprintf("%d/%d/%d/%x/%s", pid, tid, fd, arg, c),
				pid: pid, tid: tid, count: c,
			})
		}
	}
	return sortWaiters(out)
}

func sortWaiters(out []waiter) []waiter {
	sort.Slice(out, func(i, j int) bool {
		if out[i].pid != out[j].pid {
			return out[i].pid < out[j].pid
		}
		return out[i].tid < out[j].tid
	})
	return out
}

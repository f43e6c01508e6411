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

// FAIRSEM_IOC_ACQUIRE: _IOW(0xFA, 1, struct fairsem_acquire), 24 bytes;
// FAIRSEM_IOC_ACQUIRE_KINDS: _IOW(0xFA, 12, struct fairsem_acquire_kinds),
// 88 bytes: count[8], deadline_ns, flags, nkinds, reserved.
const (
	iocAcquire      = 0x4018fa01
	iocAcquireKinds = 0x4058fa0c
)

// A local waiter: a task blocked in FAIRSEM_IOC_ACQUIRE on a handle of the
// local semaphore.  The kernel does not list its queue, so the agent finds
// the waiters as a debugger would: /proc/PID/task/TID/syscall names the
// ioctl, its fd and its argument, /proc/PID/fdinfo/FD the semaphore, and
// the counts at the argument (struct fairsem_acquire's count, or struct
// fairsem_acquire_kinds's vector) the weight, read from /proc/PID/mem.
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
// it cannot be read or asks for nothing.
func readCount(pid int, addr uint64, kinds bool, n int) (vec, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	var b [80]byte
	size := 8
	if kinds {
		size = 80
	}
	if _, err := f.ReadAt(b[:size], int64(addr)); err != nil {
		return nil, false
	}
	v := make(vec, n)
	if !kinds {
		// A scalar acquire on a semaphore of several kinds fails at
		// once (EINVAL): it never waits.
		if n != 1 {
			return nil, false
		}
		v[0] = binary.LittleEndian.Uint64(b[:8])
		return v, v[0] != 0
	}
	if nk := binary.LittleEndian.Uint32(b[76:80]); int(nk) != n {
		return nil, false
	}
	for i := range v {
		v[i] = binary.LittleEndian.Uint64(b[8*i:])
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
			if !ok1 || !ok2 || !ok3 || (cmd != iocAcquire && cmd != iocAcquireKinds) {
				continue
			}
			if id, ok := fdinfoID(pid, fd); !ok || id != semID {
				continue
			}
			c, ok := readCount(pid, arg, cmd == iocAcquireKinds, n)
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

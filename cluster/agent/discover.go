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

// FAIRSEM_IOC_ACQUIRE: _IOW(0xFA, 1, struct fairsem_acquire), 24 bytes.
const iocAcquire = 0x4018fa01

// A local waiter: a task blocked in FAIRSEM_IOC_ACQUIRE on a handle of the
// local semaphore.  The kernel does not list its queue, so the agent finds
// the waiters as a debugger would: /proc/PID/task/TID/syscall names the
// ioctl, its fd and its argument, /proc/PID/fdinfo/FD the semaphore, and
// the first 8 bytes at the argument (struct fairsem_acquire's count) the
// weight, read from /proc/PID/mem.
type waiter struct {
	id    string // pid/tid/fd/arg/count: the same while it waits
	pid   int
	tid   int
	count uint64
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

func readCount(pid int, addr uint64) (uint64, bool) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/mem", pid))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var b [8]byte
	if _, err := f.ReadAt(b[:], int64(addr)); err != nil {
		return 0, false
	}
	return binary.LittleEndian.Uint64(b[:]), true
}

// discover lists the tasks blocked in an acquire on semaphore semID, in
// the order of their (pid, tid): the kernel's own arrival order is not
// visible, so waiters first seen in one scan are ordered by pid, which
// grows with time until it wraps.
func discover(semID uint64) []waiter {
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
			n, ok := readCount(pid, arg)
			if !ok || n == 0 {
				continue
			}
			out = append(out, waiter{
				id:  fmt.Sprintf("%d/%d/%d/%x/%d", pid, tid, fd, arg, n),
				pid: pid, tid: tid, count: n,
			})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].pid != out[j].pid {
			return out[i].pid < out[j].pid
		}
		return out[i].tid < out[j].tid
	})
	return out
}

// SPDX-License-Identifier: LGPL-2.1-or-later

package fairsem

import (
	"os"
	"runtime"
	"sync"
	"syscall"
	"unsafe"
)

// What Semaphore and Kinds share: their handles, and the pool of handles
// their asynchronous requests wait on.  Only what each counts differs (a
// number, a vector), so the pool is generic over the handle that counts.

// pooled is a handle a pool keeps: *handle (Semaphore) or *kindsHandle
// (Kinds), each with its own holds.
type pooled interface{ base() *handle }

func (h *handle) base() *handle { return h }

// pool is the handles of one Semaphore or Kinds: main, its own, and the
// waiting handle of its submitted requests (wq).  Every handle that may
// hold permits is in all (main first).  mu guards all and every handle's
// holds.
type pool[H pooled] struct {
	main H
	mu   sync.Mutex
	all  []H
	wq   waitq[H]
}

func newPool[H pooled](main H) pool[H] { return pool[H]{main: main, all: []H{main}} }

// CloseHandle's work: whatever the handles hold goes back, and the
// requests still queued fail.
func (p *pool[H]) closeAll() error {
	// The files close without p.mu held: closing the waiting handle waits
	// for the reaper's Read, whose callback may be waiting for p.mu.
	p.mu.Lock()
	all := p.all
	p.all = nil
	p.mu.Unlock()
	var first error
	for _, h := range all {
		if err := h.base().f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// openDevice makes a new semaphore: /dev/fairsem, then FAIRSEM_IOC_INIT
// of arg, a sysInit.
func openDevice(arg unsafe.Pointer) (*handle, error) {
	fd, err := syscall.Open("/dev/fairsem", syscall.O_RDWR|syscall.O_CLOEXEC|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: "/dev/fairsem", Err: err}
	}
	if _, err := ioctl(fd, iocInit, arg); err != nil {
		syscall.Close(fd)
		return nil, errno("fairsem init", err)
	}
	return newHandle(fd, "fairsem")
}

// fileHandle is a handle on f, which stays the caller's.
func fileHandle(f *os.File) (*handle, error) {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	if err := rc.Control(func(v uintptr) { fd = int(v) }); err != nil {
		return nil, err
	}
	h := &handle{f: f, fd: fd}
	if nb, _ := isNonblock(fd); nb {
		h.rc = rc
	}
	return h, nil
}

// open opens another handle on h's semaphore (FAIRSEM_IOC_NEW_HANDLE).
func (h *handle) open(nonblock bool) (*handle, error) {
	arg := sysHandle{flags: syscall.O_CLOEXEC, fd: -1}
	if nonblock {
		arg.flags |= syscall.O_NONBLOCK
	}
	fd, err := ioctl(h.fd, iocNewHandle, unsafe.Pointer(&arg))
	runtime.KeepAlive(h.f)
	if err != nil {
		return nil, errno("fairsem new handle", err)
	}
	return newHandle(fd, "fairsem")
}

// closeSem closes the semaphore for every handle (FAIRSEM_IOC_CLOSE).
func (h *handle) closeSem() error {
	_, err := ioctl(h.fd, iocClose, nil)
	runtime.KeepAlive(h.f)
	return errno("fairsem close", err)
}
